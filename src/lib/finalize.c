/*
 * Spool -> trace.dat (include/kmemtrace/record.h). One read-only pass over
 * each CPU's pages counts events and losses and collects process names
 * from fork/exec/rename/exit events; then the writer builds the file under
 * a temporary name, which is synced and renamed into place.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/comm.h>
#include <kmemtrace/event.h>
#include <kmemtrace/record.h>
#include <kmemtrace/tracefile.h>
#include <kmemtrace/writer.h>
#include "kmt-local.h"

#define SCAN_WINDOW (16u << 20)	/* bytes of a spool file mapped at once */

#define MAX_CPUS 256

struct spool {
	const char *dir;
	struct sbuf meta, header_page, header_event, kallsyms, printk, clock, cmdlines,
		formats_text, truncated;
	struct kmt_formats fs;
	struct kmt_wformat *wf;
	int nwf;
	struct kmt_page_layout layout;
	uint32_t page_size, subbuf_size;
	int long_size;
	int nr_cpus, cpus[MAX_CPUS];
	char uname[256], version[64];
	struct sbuffer {
		const char *name;	/* "" for the main buffer */
		const char *sub;	/* its files: DIR/SUBcpuN, DIR/SUBstatsN */
		struct sbuf stats[MAX_CPUS];
		int fd[MAX_CPUS];
		uint64_t size[MAX_CPUS];
	} buf[2];			/* main, and kmemtrace watch's samples */
	int nbuf;
};

static int slurp(struct spool *s, const char *name, struct sbuf *sb, bool required,
		 struct kmt_diag *d)
{
	char path[4096];
	int ret;

	snprintf(path, sizeof(path), "%s/%s", s->dir, name);
	ret = read_file(path, sb);
	if (ret == -ENOENT && !required) {
		sbuf_add(sb, "", 0);
		return 0;
	}
	if (ret)
		return kmt_diag_set(d, ret, "cannot read '%s': %s", path, strerror(-ret));
	return 0;
}

static const char *meta_get(const struct spool *s, const char *key)
{
	size_t klen = strlen(key);
	const char *p = s->meta.buf;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == ' ')
			return p + klen + 1;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

static void meta_str(const struct spool *s, const char *key, char *out, size_t len)
{
	const char *v = meta_get(s, key);
	size_t n = 0;

	while (v && v[n] && v[n] != '\n' && n < len - 1)
		n++;
	if (v)
		memcpy(out, v, n);
	out[n] = '\0';
}

static int parse_formats(struct spool *s, struct kmt_diag *d)
{
	const char *p = s->formats_text.buf, *end = p + s->formats_text.len;

	s->wf = calloc(4096, sizeof(*s->wf));
	if (!s->wf)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	while (p < end && s->nwf < 4096) {
		char sys[128], name[128];
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		struct kmt_format fmt;
		size_t len;

		if (!nl || sscanf(p, "FORMAT %127s %127s %zu", sys, name, &len) != 3 ||
		    len > (size_t)(end - nl - 1))
			return kmt_diag_set(d, KMT_EFORMAT, "%s/formats: bad entry at byte %zu", s->dir,
					    (size_t)(p - s->formats_text.buf));
		if (kmt_format_parse(&fmt, sys, nl + 1, len, d))
			return kmt_diag_set(d, KMT_EFORMAT, "%s/formats: %s:%s: %s", s->dir, sys, name,
					    d->msg);
		s->wf[s->nwf].system = strdup(sys);
		s->wf[s->nwf].text = nl + 1;
		s->wf[s->nwf].len = len;
		s->nwf++;
		kmt_formats_add(&s->fs, &fmt);
		kmt_format_release(&fmt);
		p = nl + 1 + len;
	}
	return 0;
}

static int spool_load(struct spool *s, struct kmt_diag *d)
{
	char buf[1024], *tok, *save = NULL;
	int ret;

	ret = slurp(s, "meta", &s->meta, true, d);
	ret = ret ?: slurp(s, "header_page", &s->header_page, true, d);
	ret = ret ?: slurp(s, "header_event", &s->header_event, true, d);
	ret = ret ?: slurp(s, "formats", &s->formats_text, true, d);
	ret = ret ?: slurp(s, "kallsyms", &s->kallsyms, false, d);
	ret = ret ?: slurp(s, "printk", &s->printk, false, d);
	ret = ret ?: slurp(s, "trace_clock", &s->clock, false, d);
	ret = ret ?: slurp(s, "cmdlines", &s->cmdlines, false, d);
	ret = ret ?: slurp(s, "truncated", &s->truncated, false, d);
	if (ret)
		return ret;
	meta_str(s, "page_size", buf, sizeof(buf));
	s->page_size = (uint32_t)strtoul(buf, NULL, 10);
	meta_str(s, "subbuf_size", buf, sizeof(buf));
	s->subbuf_size = (uint32_t)strtoul(buf, NULL, 10);
	meta_str(s, "long_size", buf, sizeof(buf));
	s->long_size = atoi(buf);
	meta_str(s, "uname", s->uname, sizeof(s->uname));
	meta_str(s, "kmemtrace", s->version, sizeof(s->version));
	meta_str(s, "cpus", buf, sizeof(buf));
	for (tok = strtok_r(buf, " ", &save); tok && s->nr_cpus < MAX_CPUS;
	     tok = strtok_r(NULL, " ", &save))
		s->cpus[s->nr_cpus++] = atoi(tok);
	if (!s->page_size || !s->subbuf_size || (s->long_size != 4 && s->long_size != 8) ||
	    !s->nr_cpus)
		return kmt_diag_set(d, KMT_EFORMAT, "%s/meta lacks page_size, subbuf_size, long_size or cpus",
				    s->dir);
	ret = kmt_page_layout_parse(&s->layout, s->header_page.buf, s->header_page.len, d);
	if (ret)
		return kmt_diag_set(d, ret, "%s/header_page: %s", s->dir, d->msg);
	return parse_formats(s, d);
}

static void note_comm(struct kmt_comms *comms, const struct kmt_event *ev)
{
	char buf[KMT_COMM_LEN];
	size_t len = ev->str2_len;
	const char *name = ev->kind == KMT_EV_EXIT ? ev->str2 : kmt_event_task_name(ev, buf, &len);

	if (name)
		kmt_comms_set(comms, ev->pid2, name, len);
}

/*
 * Walk CPU @i's pages: count, collect names, and find where the valid
 * data ends (a recorder killed mid-write may leave a torn last page).
 */
static int scan_cpu(struct spool *s, struct sbuffer *b, int i, const struct kmt_decoder *dec,
		    struct kmt_comms *comms, struct kmt_finalize_cpu *fc, struct kmt_diag *d)
{
	char path[4096];
	struct stat st;
	uint8_t *map;
	uint64_t off, size;

	snprintf(path, sizeof(path), "%s/%scpu%d", s->dir, b->sub, s->cpus[i]);
	b->fd[i] = open(path, O_RDWR | O_CLOEXEC);
	if (b->fd[i] < 0) {
		if (errno == ENOENT)
			return 0;	/* a recorder killed before it opened this CPU */
		return kmt_diag_set(d, -errno, "cannot open '%s': %s", path, strerror(errno));
	}
	if (fstat(b->fd[i], &st))
		return kmt_diag_set(d, -errno, "cannot stat '%s': %s", path, strerror(errno));
	size = (uint64_t)st.st_size / s->subbuf_size * s->subbuf_size;
	if (!size)
		return 0;
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, b->fd[i], 0);
	if (map == MAP_FAILED)
		return kmt_diag_set(d, -errno, "cannot map '%s': %s", path, strerror(errno));
	madvise(map, size, MADV_SEQUENTIAL);
	for (off = 0; off < size; off += s->subbuf_size) {
		struct kmt_page pg;
		struct kmt_page_iter it;
		struct kmt_rec rec;
		struct kmt_event ev;
		int ret;

		if (kmt_page_load(&pg, map + off, s->subbuf_size, &s->layout, false, NULL))
			break;
		kmt_page_iter_init(&it, &pg);
		while ((ret = kmt_page_next(&it, &rec, NULL)) > 0) {
			enum kmt_kind k = kmt_decoder_kind(dec, ld16(rec.data, false));

			fc->events++;
			if (k >= KMT_EV_FORK && k <= KMT_EV_NEWTASK &&
			    kmt_decode(dec, &rec, s->cpus[i], &ev) > 0)
				note_comm(comms, &ev);
		}
		if (ret < 0)
			break;
		fc->pages++;
		/* Keep the scan's resident set small on long recordings. */
		if (off && !(off & (SCAN_WINDOW - 1)))
			madvise(map + off - SCAN_WINDOW, SCAN_WINDOW, MADV_DONTNEED);
		if (pg.missed) {
			if (pg.lost > 0)
				fc->lost += (uint64_t)pg.lost;
			else
				fc->lost_unknown++;
		}
	}
	munmap(map, size);
	b->size[i] = off;
	fc->bytes = off;
	return 0;
}

static void parse_stats(const char *text, struct kmt_finalize_cpu *fc)
{
	const char *p;

	if ((p = strstr(text, "\noverrun: ")))
		fc->overrun = strtoull(p + 10, NULL, 10);
	if ((p = strstr(text, "\ndropped events: ")))
		fc->dropped = strtoull(p + 17, NULL, 10);
	fc->has_stats = true;
}

/* kmemtrace watch's samples, if the spool has them: a second buffer. */
static int load_access(struct spool *s, const struct kmt_decoder *dec, struct kmt_comms *comms,
		       struct kmt_finalize_result *res, struct kmt_diag *d)
{
	struct sbuffer *b = &s->buf[1];
	char path[4096];
	struct stat st;
	int i, ret;

	snprintf(path, sizeof(path), "%s/access", s->dir);
	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return 0;
	s->nbuf = 2;
	for (i = 0; i < s->nr_cpus; i++) {
		struct kmt_finalize_cpu fc = { 0 };
		char name[32];

		ret = scan_cpu(s, b, i, dec, comms, &fc, d);
		if (ret)
			return ret;
		snprintf(name, sizeof(name), "access/stats%d", s->cpus[i]);
		slurp(s, name, &b->stats[i], false, d);
		if (!b->stats[i].len)
			sbuf_printf(&b->stats[i], "CPU: %d\n", s->cpus[i]);
		res->access_events += fc.events;
		res->access_lost += fc.lost;
		res->raw_bytes += fc.bytes;
	}
	return 0;
}

static void spool_release(struct spool *s)
{
	int i;

	int j;

	for (j = 0; j < 2; j++)
		for (i = 0; i < s->nr_cpus; i++) {
			if (s->buf[j].fd[i] >= 0)
				close(s->buf[j].fd[i]);
			sbuf_release(&s->buf[j].stats[i]);
		}
	for (i = 0; i < s->nwf; i++)
		free((char *)s->wf[i].system);
	free(s->wf);
	kmt_formats_release(&s->fs);
	sbuf_release(&s->meta);
	sbuf_release(&s->header_page);
	sbuf_release(&s->header_event);
	sbuf_release(&s->kallsyms);
	sbuf_release(&s->printk);
	sbuf_release(&s->clock);
	sbuf_release(&s->cmdlines);
	sbuf_release(&s->formats_text);
	sbuf_release(&s->truncated);
}

static int write_output(struct spool *s, const char *output, const struct kmt_finalize_opts *o,
			const char *cmdlines, size_t cmdlines_len, struct kmt_finalize_result *res,
			struct kmt_diag *d)
{
	struct kmt_writer_opts wo = {
		.version = 7, .zalg = o->zalg, .level = o->level,
		.chunk_pages = o->chunk_pages ? o->chunk_pages : 64, .page_size = s->page_size,
		.long_size = s->long_size, .punch = o->punch, .progress = o->progress,
		.progress_arg = o->progress_arg,
	};
	struct kmt_wcpu wc[2][MAX_CPUS];
	struct kmt_wbuffer b[2];
	struct kmt_trace_meta m = {
		.header_page = { s->header_page.buf, s->header_page.len },
		.header_event = { s->header_event.buf, s->header_event.len },
		.formats = s->wf, .nr_formats = s->nwf,
		.kallsyms = { s->kallsyms.buf, s->kallsyms.len },
		.printk = { s->printk.buf, s->printk.len },
		.cmdlines = { cmdlines, cmdlines_len },
		.uname = *s->uname ? s->uname : NULL,
		.trace_clock = s->clock.len ? s->clock.buf : NULL,
		.cpu_count = (int)sysconf(_SC_NPROCESSORS_CONF),
	};
	char tmp[4200], clock[32] = "local", version[160], partial[64];
	struct stat st;
	int fd, i, j, ret;

	meta_str(s, "clock", clock, sizeof(clock));
	meta_str(s, "partial", partial, sizeof(partial));
	/* The recorder's name, and what a reader must know of its filters. */
	snprintf(version, sizeof(version), "kmemtrace %s%s%s%s", *s->version ? s->version : KMT_VERSION,
		 *partial ? " (partial: " : "", partial, *partial ? ")" : "");
	m.version = version;
	m.trace_id = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)s;
	if (m.cpu_count < s->nr_cpus)
		m.cpu_count = s->nr_cpus;
	for (j = 0; j < s->nbuf; j++) {
		b[j] = (struct kmt_wbuffer){ .name = s->buf[j].name, .clock = clock,
					     .subbuf_size = s->subbuf_size, .nr_cpus = s->nr_cpus,
					     .cpus = wc[j] };
		for (i = 0; i < s->nr_cpus; i++) {
			wc[j][i].cpu = s->cpus[i];
			wc[j][i].fd = s->buf[j].fd[i];
			wc[j][i].mem = NULL;
			wc[j][i].size = s->buf[j].size[i];
			wc[j][i].stats = s->buf[j].stats[i].buf;
		}
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp-%d", output, (int)getpid());
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return kmt_diag_set(d, -errno, "cannot create '%s': %s", tmp, strerror(errno));
	ret = kmt_write_trace(fd, &wo, &m, b, s->nbuf, d);
	if (!ret && fsync(fd))
		ret = kmt_diag_set(d, -errno, "cannot sync '%s': %s", tmp, strerror(errno));
	if (!ret && !fstat(fd, &st))
		res->file_bytes = (uint64_t)st.st_size;
	close(fd);
	if (!ret && rename(tmp, output))
		ret = kmt_diag_set(d, -errno, "cannot rename '%s' to '%s': %s", tmp, output,
				   strerror(errno));
	if (ret) {
		unlink(tmp);
		if (!strstr(d->msg, output))
			kmt_diag_set(d, ret, "%s: %s", output, d->msg);
	}
	return ret;
}

int kmt_spool_finalize(const char *dir, const char *output,
		       const struct kmt_finalize_opts *o, struct kmt_finalize_result *res,
		       struct kmt_diag *d)
{
	struct spool s = { .dir = dir };
	struct kmt_decoder *dec = NULL;
	struct kmt_comms *comms = NULL;
	char *cmdlines = NULL;
	size_t cmdlines_len = 0;
	int i, ret;

	memset(res, 0, sizeof(*res));
	for (i = 0; i < MAX_CPUS; i++)
		s.buf[0].fd[i] = s.buf[1].fd[i] = -1;
	s.buf[0].name = s.buf[0].sub = "";
	s.buf[1].name = KMT_ACCESS_BUFFER;
	s.buf[1].sub = "access/";
	s.nbuf = 1;
	{
		/* The room set aside for writing the metadata is needed now. */
		char path[4096];

		snprintf(path, sizeof(path), "%s/reserve", dir);
		unlink(path);
	}
	kmt_formats_init(&s.fs);
	ret = spool_load(&s, d);
	if (ret)
		goto out;
	dec = kmt_decoder_new(&s.fs, false, s.long_size);
	comms = kmt_comms_new();
	if (!dec || !comms) {
		ret = kmt_diag_set(d, -ENOMEM, "out of memory");
		goto out;
	}
	kmt_comms_parse(comms, s.cmdlines.buf, s.cmdlines.len);
	if (s.truncated.len) {
		res->truncated = true;
		snprintf(res->truncated_why, sizeof(res->truncated_why), "%.*s",
			 (int)strcspn(s.truncated.buf, "\n"), s.truncated.buf);
	} else if (o->recovered) {
		res->truncated = true;
		snprintf(res->truncated_why, sizeof(res->truncated_why),
			 "recovered from a recording whose recorder died");
	}
	res->nr_cpus = s.nr_cpus;
	for (i = 0; i < s.nr_cpus; i++) {
		struct kmt_finalize_cpu *fc = &res->cpus[i];
		char name[32];

		fc->cpu = s.cpus[i];
		ret = scan_cpu(&s, &s.buf[0], i, dec, comms, fc, d);
		if (ret)
			goto out;
		snprintf(name, sizeof(name), "stats%d", s.cpus[i]);
		slurp(&s, name, &s.buf[0].stats[i], false, d);
		if (s.buf[0].stats[i].len)
			parse_stats(s.buf[0].stats[i].buf, fc);
		else
			sbuf_printf(&s.buf[0].stats[i], "CPU: %d\n", s.cpus[i]);
		if (res->truncated)
			sbuf_printf(&s.buf[0].stats[i], "kmemtrace truncated: %s\n", res->truncated_why);
		res->events += fc->events;
		/* Page headers and stats count the same losses; trust the larger. */
		res->lost += MAX(fc->lost, fc->overrun + fc->dropped);
		res->raw_bytes += fc->bytes;
	}
	ret = load_access(&s, dec, comms, res, d);
	if (ret)
		goto out;
	cmdlines = kmt_comms_format(comms, &cmdlines_len);
	if (!cmdlines) {
		ret = kmt_diag_set(d, -ENOMEM, "out of memory");
		goto out;
	}
	ret = write_output(&s, output, o, cmdlines, cmdlines_len, res, d);
out:
	free(cmdlines);
	kmt_comms_free(comms);
	kmt_decoder_free(dec);
	spool_release(&s);
	return ret;
}
