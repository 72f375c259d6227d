/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Spool -> trace.dat (include/kmemtrace/capture.h). One read-only pass over
 * each CPU's pages counts events and losses, collects process names from
 * fork/exec/rename/exit events and the code addresses the events name (to
 * keep only their symbols of kallsyms); then the writer builds the file
 * under a temporary name, which is synced and renamed into place. What the
 * spool holds is read through spool-local.h, never by file name.
 *
 * A page that is not right (damage, a torn write) is a gap of unknown size,
 * the pages after it kept (kmt_page_run's rule, recover.c's too): mended
 * on its way into the file, the spool left as it was, so that the file
 * holds what the result counts and every reader sees the gap there.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/event.h>
#include <kmemtrace/tracefile.h>
#include <kmemtrace/capture.h>
#include "base/kmt-local.h"
#include "tracefile/page-local.h"	/* kmt_page_run */
#include "spool-local.h"

#define SCAN_WINDOW (16u << 20)	/* bytes of a spool file mapped at once */

/*
 * A spool file with pages that are not right, read for the writer with
 * them mended; it frees what it copied (opts.punch) only of files it
 * reads itself: mend_seen() does.
 */
struct mend_src {
	uint64_t bad;			/* pages not right, found by the scan */
	int fd;
	uint64_t start;
	bool punch;
	struct kmt_page_run run;
};

/* What finalising works on: the spool's contents, loaded. */
struct fin {
	struct kmt_spool *spool;
	const struct kmt_spool_meta *meta;
	struct sbuf blob[KMT_SPOOL_NR_BLOBS], formats_text, truncated;
	struct kmt_formats fs;
	struct kmt_wformat *wf;
	int nwf;
	struct kmt_page_layout layout;
	struct fbuffer {
		const char *name;	/* in the trace file: "" for the main buffer */
		struct sbuf *stats;	/* per CPU index */
		int *fd;
		uint64_t *start;	/* past the holes of a spool partly written */
		uint64_t *size;
		struct mend_src *mend;	/* per CPU */
	} buf[KMT_SPOOL_NR_BUFFERS];
	int nbuf;
};

static int parse_formats(struct fin *s, struct kmt_diag *d)
{
	struct spool_format f;
	size_t pos = 0;
	int ret;

	s->wf = calloc(4096, sizeof(*s->wf));
	if (!s->wf)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	while (s->nwf < 4096 && (ret = spool_next_format(s->spool, &s->formats_text, &pos, &f, d)) > 0) {
		struct kmt_format fmt;

		if (kmt_format_parse(&fmt, f.system, f.text, f.len, d))
			return kmt_diag_set(d, KMT_EFORMAT, "%s: format of %s:%s: %s",
					    kmt_spool_dir(s->spool), f.system, f.name, d->msg);
		s->wf[s->nwf].system = strdup(f.system);
		s->wf[s->nwf].text = f.text;
		s->wf[s->nwf].len = f.len;
		s->nwf++;
		kmt_formats_add(&s->fs, &fmt);
		kmt_format_release(&fmt);
	}
	return ret < 0 ? ret : 0;
}

static int fin_load(struct fin *s, struct kmt_diag *d)
{
	const struct kmt_spool_meta *m = s->meta;
	const struct sbuf *hp = &s->blob[KMT_SPOOL_HEADER_PAGE];
	int ret = 0, b, i;

	for (b = 0; !ret && b < KMT_SPOOL_NR_BLOBS; b++)
		ret = spool_get(s->spool, (enum kmt_spool_blob)b, &s->blob[b], d);
	ret = ret ?: spool_get_formats(s->spool, &s->formats_text, d);
	if (!ret && spool_get_truncated(s->spool, &s->truncated))
		ret = kmt_diag_set(d, -EIO, "cannot read why %s was truncated", kmt_spool_dir(s->spool));
	if (ret)
		return ret;
	if (!m->page_size || !m->subbuf_size || (m->long_size != 4 && m->long_size != 8) ||
	    !m->nr_cpus)
		return kmt_diag_set(d, KMT_EFORMAT, "%s: its metadata lacks the page size, sub-buffer "
				    "size, long size or CPUs", kmt_spool_dir(s->spool));
	for (b = 0; b < KMT_SPOOL_NR_BUFFERS; b++) {
		struct fbuffer *fb = &s->buf[b];

		fb->stats = calloc((size_t)m->nr_cpus, sizeof(*fb->stats));
		fb->fd = malloc((size_t)m->nr_cpus * sizeof(*fb->fd));
		fb->start = calloc((size_t)m->nr_cpus, sizeof(*fb->start));
		fb->size = calloc((size_t)m->nr_cpus, sizeof(*fb->size));
		fb->mend = calloc((size_t)m->nr_cpus, sizeof(*fb->mend));
		if (!fb->stats || !fb->fd || !fb->start || !fb->size || !fb->mend)
			return kmt_diag_set(d, -ENOMEM, "out of memory");
		for (i = 0; i < m->nr_cpus; i++)
			fb->fd[i] = -1;
	}
	ret = kmt_page_layout_parse(&s->layout, hp->buf, hp->len, d);
	if (ret)
		return kmt_diag_set(d, ret, "%s: header page: %s", kmt_spool_dir(s->spool), d->msg);
	return parse_formats(s, d);
}

static void note_comm(struct kmt_comms *comms, const struct kmt_event *ev)
{
	char buf[KMT_COMM_LEN];
	size_t len = ev->str2_len;
	const char *name = ev->kind == KMT_EV_EXIT ? ev->str2 : kmt_event_task_name(ev, buf, &len);

	/* Collected CPU by CPU: the latest in time must win, not the last seen. */
	if (name)
		kmt_comms_set_at(comms, ev->pid2, name, len, ev->ts);
}

/* Where a scan puts what it collects: names, and code addresses (NULL: not wanted). */
struct scan_to {
	struct kmt_comms *comms;
	struct kmt_symkeep *keep;
};

/* One CPU's scan: its pages counted (kmt_page_run), its records' names and addresses taken. */
struct scan {
	const struct kmt_decoder *dec;
	const struct scan_to *to;
	struct kmt_finalize_cpu *fc;
	int cpu;
	struct kmt_page_run run;
};

static void scan_rec(void *arg, const struct kmt_rec *rec)
{
	struct scan *sc = arg;
	enum kmt_kind k = kmt_decoder_kind(sc->dec, ld16(rec->data, false));
	struct kmt_event ev;

	sc->fc->stacks += k == KMT_EV_STACK;
	if (k == KMT_EV_NONE || (!sc->to->keep && (k < KMT_EV_FORK || k > KMT_EV_NEWTASK)) ||
	    kmt_decode(sc->dec, rec, sc->cpu, &ev) <= 0)
		return;
	if (k >= KMT_EV_FORK && k <= KMT_EV_NEWTASK)
		note_comm(sc->to->comms, &ev);
	else if (sc->to->keep)
		kmt_symkeep_event(sc->to->keep, &ev);
}

/* @sc, for CPU @cpu's pages, counted into @fc by scan_done() (@sc stays where it is). */
static void scan_init(struct scan *sc, const struct fin *s, const struct kmt_decoder *dec,
		      const struct scan_to *to, struct kmt_finalize_cpu *fc, int cpu)
{
	*sc = (struct scan){ .dec = dec, .to = to, .fc = fc, .cpu = cpu };
	kmt_page_run_init(&sc->run, &s->layout, s->meta->subbuf_size);
	sc->run.each = scan_rec;
	sc->run.arg = sc;
}

static void scan_done(const struct scan *sc)
{
	struct kmt_finalize_cpu *fc = sc->fc;

	fc->events = sc->run.events;
	fc->pages = sc->run.pages;
	fc->lost = sc->run.lost;
	fc->lost_unknown = sc->run.lost_unknown;
	fc->lost_pages = sc->run.lost_pages;
	fc->first_ts = sc->run.first_ts;
	fc->last_ts = sc->run.last_ts;
}

/*
 * Open CPU @i's spool file into the buffer's fd; @size: its whole
 * sub-buffers (0 if a recorder killed early never made it). 0 or -errno.
 */
static int cpu_file(struct fin *s, enum kmt_spool_buffer which, int i, uint64_t *size,
		    struct kmt_diag *d)
{
	struct fbuffer *b = &s->buf[which];
	int cpu = s->meta->cpus[i];
	char path[4200];
	struct stat st;

	*size = 0;
	b->fd[i] = spool_cpu_open(s->spool, which, cpu, d);
	if (b->fd[i] == -ENOENT)
		return 0;
	if (b->fd[i] < 0)
		return b->fd[i];
	if (fstat(b->fd[i], &st)) {
		int err = -errno;

		spool_cpu_name(s->spool, which, cpu, path, sizeof(path));
		return kmt_diag_set(d, err, "cannot stat '%s': %s", path, strerror(-err));
	}
	*size = (uint64_t)st.st_size / s->meta->subbuf_size * s->meta->subbuf_size;
	return 0;
}

/*
 * Walk CPU @i's spool file: count, collect names, and find the pages that
 * are not right (to mend on their way into the file).
 */
static int scan_cpu(struct fin *s, enum kmt_spool_buffer which, int i,
		    const struct kmt_decoder *dec, const struct scan_to *to,
		    struct kmt_finalize_cpu *fc, struct kmt_diag *d)
{
	struct fbuffer *b = &s->buf[which];
	uint32_t subbuf = s->meta->subbuf_size;
	int cpu = s->meta->cpus[i];
	char path[4200];
	uint8_t *map;
	uint64_t off, size, start = 0;
	struct scan sc;
	off_t data;
	int ret = cpu_file(s, which, i, &size, d);

	if (ret || !size)
		return ret;
	/*
	 * A write that failed after freeing what it had written (record's
	 * finalising from held pages) leaves a hole where the data began.
	 */
	data = lseek(b->fd[i], 0, SEEK_DATA);
	if (data > 0)
		start = MIN((uint64_t)data / subbuf * subbuf, size);
	else if (data < 0 && errno == ENXIO)
		start = size;	/* all hole */
	b->start[i] = start;
	size -= start;
	if (!size)
		return 0;
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, b->fd[i], (off_t)start);
	if (map == MAP_FAILED) {
		ret = -errno;
		spool_cpu_name(s->spool, which, cpu, path, sizeof(path));
		return kmt_diag_set(d, ret, "cannot map '%s': %s", path, strerror(-ret));
	}
	madvise(map, size, MADV_SEQUENTIAL);
	scan_init(&sc, s, dec, to, fc, cpu);
	/* A window at a time, to keep the resident set small on long recordings. */
	for (off = 0; off < size; off += SCAN_WINDOW) {
		kmt_page_run_count(&sc.run, map + off, (size_t)MIN(SCAN_WINDOW, size - off));
		if (off)
			madvise(map + off - SCAN_WINDOW, SCAN_WINDOW, MADV_DONTNEED);
	}
	munmap(map, size);
	scan_done(&sc);
	b->mend[i].bad = sc.run.bad;
	b->size[i] = size;
	fc->bytes = size;
	return 0;
}

static int mend_read(void *arg, void *buf, size_t len, uint64_t off)
{
	struct mend_src *m = arg;
	int ret = pread_all(m->fd, buf, len, (off_t)(m->start + off));

	if (!ret)
		kmt_page_run_mend(&m->run, buf, len);
	return ret;
}

static void mend_seen(void *arg, const void *buf, size_t len, uint64_t off)
{
	struct mend_src *m = arg;

	if (m->punch)
		fallocate(m->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			  (off_t)(m->start + off), (off_t)len);
}

uint64_t kmt_finalize_cpu_lost(const struct kmt_finalize_cpu *fc)
{
	struct kmt_cpustat st = { .valid = fc->has_stats, .overrun = fc->overrun, .dropped = fc->dropped };

	return kmt_cpustat_lost(&st, fc->lost);
}

/* Those that died with a recorder count as dropped (kmt_cpustat_lost() counts them too). */
static void parse_stats(const char *text, struct kmt_finalize_cpu *fc)
{
	struct kmt_cpustat st;

	kmt_cpustat_parse(&st, text, strlen(text));
	fc->overrun = st.overrun;
	fc->dropped = st.dropped + st.died;
	fc->has_stats = true;
}

/* kmemtrace watch's samples, if the spool has them: a second buffer. */
static int load_access(struct fin *s, const struct kmt_decoder *dec, const struct scan_to *to,
		       struct kmt_finalize_result *res, struct kmt_diag *d)
{
	struct fbuffer *b = &s->buf[KMT_SPOOL_ACCESS];
	int i, ret;

	if (!kmt_spool_has_buffer(s->spool, KMT_SPOOL_ACCESS))
		return 0;
	s->nbuf = 2;
	for (i = 0; i < s->meta->nr_cpus; i++) {
		struct kmt_finalize_cpu fc = { 0 };

		ret = scan_cpu(s, KMT_SPOOL_ACCESS, i, dec, to, &fc, d);
		if (ret)
			return ret;
		spool_get_stats(s->spool, KMT_SPOOL_ACCESS, s->meta->cpus[i], &b->stats[i]);
		if (!b->stats[i].len)
			sbuf_printf(&b->stats[i], "CPU: %d\n", s->meta->cpus[i]);
		res->access_events += fc.events;
		res->access_lost += fc.lost;
		res->raw_bytes += fc.bytes;
	}
	return 0;
}

static void fin_release(struct fin *s)
{
	int i, j;

	for (j = 0; j < KMT_SPOOL_NR_BUFFERS; j++) {
		for (i = 0; s->buf[j].fd && i < s->meta->nr_cpus; i++)
			if (s->buf[j].fd[i] >= 0)
				close(s->buf[j].fd[i]);
		for (i = 0; s->buf[j].stats && i < s->meta->nr_cpus; i++)
			sbuf_release(&s->buf[j].stats[i]);
		free(s->buf[j].fd);
		free(s->buf[j].stats);
		free(s->buf[j].start);
		free(s->buf[j].size);
		free(s->buf[j].mend);
	}
	for (i = 0; i < s->nwf; i++)
		free((char *)s->wf[i].system);
	free(s->wf);
	kmt_formats_release(&s->fs);
	for (i = 0; i < KMT_SPOOL_NR_BLOBS; i++)
		sbuf_release(&s->blob[i]);
	sbuf_release(&s->formats_text);
	sbuf_release(&s->truncated);
}

/*
 * Finalising straight from memory: CPU @i's data is its spool file, then
 * the pages the recorder still holds, read in order while the writer
 * compresses them; each chunk is scanned (counted, names taken) in order
 * once written, so the names are known only after the data: CMDLINES goes
 * after the buffers.
 */
struct stream {
	struct fin *s;
	const struct kmt_finalize_opts *o;
	const struct kmt_decoder *dec;
	const struct scan_to *to;
	struct kmt_finalize_result *res;
	char *cmdlines;
	char *kallsyms;			/* cut down, once the data is read */
	bool released;
	struct stream_cpu {
		struct stream *st;
		int i;
		uint64_t fsize;		/* from the spool file; the rest is held */
		uint64_t held_read;	/* by the reading worker of the moment */
		uint64_t freed;		/* of the spool file, by the writer's thread */
		struct kmt_page_run mend;	/* by the reading worker: bad pages mended */
		struct scan scan;	/* by the writer's thread, once written */
	} *cpu;
	int err;
	struct kmt_diag d;		/* why a read failed */
};

static int stream_read(void *arg, void *buf, size_t len, uint64_t off)
{
	struct stream_cpu *c = arg;
	struct stream *st = c->st;
	int fd = st->s->buf[KMT_SPOOL_MAIN].fd[c->i], ret = 0;
	size_t all = len;
	char *p = buf;

	if (off < c->fsize) {
		size_t n = (size_t)MIN((uint64_t)len, c->fsize - off);

		ret = pread_all(fd, p, n, (off_t)off);
		if (ret)
			kmt_diag_set(&st->d, ret, "reading %s: %s", kmt_spool_dir(st->s->spool),
				     strerror(-ret));
		p += n;
		len -= n;
	}
	if (!ret && len) {
		ret = kmt_recorder_read_held(st->o->held, c->i, p, len, &st->d);
		if (!ret)
			c->held_read += len;
	}
	if (!ret)
		kmt_page_run_mend(&c->mend, buf, all);	/* @off and @len are whole pages */
	if (ret && !st->err)
		st->err = ret;
	return ret;
}

static void stream_seen(void *arg, const void *buf, size_t len, uint64_t off)
{
	struct stream_cpu *c = arg;
	struct stream *st = c->st;

	kmt_page_run_count(&c->scan.run, buf, len);
	/*
	 * The spool's part is in the file now: its room goes to the file
	 * (the held pages read are gone already; the spool is no longer whole).
	 */
	if (off < c->fsize) {
		uint64_t n = MIN((uint64_t)len, c->fsize - off);

		if (!fallocate(st->s->buf[KMT_SPOOL_MAIN].fd[c->i],
			       FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)n))
			c->freed += n;
	}
}

/* Every buffer is written: the held pages are read, the recorder may go. */
static void stream_released(struct stream *st)
{
	if (st->o->released && !st->released)
		st->o->released(st->o->released_arg);
	st->released = true;
}

/*
 * The kallsyms to write, in *@b: the spool's whole, or cut down to the
 * symbols the events name (@keep; the cut text in *@cut, to free). What
 * cannot be cut (out of memory) is written whole: bigger, never wrong.
 */
static void kallsyms_for(const struct fin *s, const struct kmt_symkeep *keep, char **cut,
			 struct kmt_blob *b)
{
	const struct sbuf *whole = &s->blob[KMT_SPOOL_KALLSYMS];
	size_t len;

	b->data = whole->buf;
	b->len = whole->len;
	if (keep && whole->len && !kmt_symkeep_cut(keep, whole->buf, whole->len, cut, &len)) {
		b->data = *cut;
		b->len = len;
	}
}

static int stream_kallsyms(void *arg, struct kmt_blob *kallsyms)
{
	struct stream *st = arg;

	stream_released(st);
	kallsyms_for(st->s, st->to->keep, &st->kallsyms, kallsyms);
	return 0;
}

static int stream_cmdlines(void *arg, struct kmt_blob *cmdlines)
{
	struct stream *st = arg;
	size_t len = 0;

	stream_released(st);
	st->cmdlines = kmt_comms_format(st->to->comms, &len);
	if (!st->cmdlines)
		return -ENOMEM;
	cmdlines->data = st->cmdlines;
	cmdlines->len = len;
	return 0;
}

/* CPU @i's data from its spool file and the held pages; 0 or -errno. */
static int stream_cpu(struct stream *st, int i, struct kmt_diag *d)
{
	struct fin *s = st->s;
	struct fbuffer *b = &s->buf[KMT_SPOOL_MAIN];
	uint32_t subbuf = s->meta->subbuf_size;
	int cpu = s->meta->cpus[i];
	uint64_t held = kmt_recorder_held_bytes(st->o->held, i);
	int ret;

	st->cpu[i] = (struct stream_cpu){ .st = st, .i = i };
	kmt_page_run_init(&st->cpu[i].mend, &s->layout, subbuf);
	scan_init(&st->cpu[i].scan, s, st->dec, st->to, &st->res->cpus[i], cpu);
	ret = cpu_file(s, KMT_SPOOL_MAIN, i, &st->cpu[i].fsize, d);
	if (ret)
		return ret;
	if (held % subbuf)
		return kmt_diag_set(d, -EIO, "CPU %d: %" PRIu64 " bytes held, not whole pages",
				    cpu, held);
	b->size[i] = st->cpu[i].fsize + held;
	st->res->cpus[i].bytes = b->size[i];
	return 0;
}

/*
 * What finalising does once per CPU before the file is written, each CPU
 * on a worker (kmt_parallel: the CPUs it may run on, at most 16): from memory,
 * open its spool file and size its data (stream_cpu); from the spool,
 * scan it (count, collect names and the code addresses the events name:
 * the recorded pages are in the page cache, this is CPU work); then its
 * ring buffer's stats. Names and addresses are collected per CPU and
 * merged afterwards in CPU order, each pid's latest name in time winning.
 */
struct load_job {
	struct fin *s;
	struct stream *st;		/* from memory, or NULL */
	const struct kmt_decoder *dec;
	const struct scan_to *to;	/* what all CPUs' scans add up to */
	struct kmt_finalize_result *res;
	struct scan_to *cpu_to;		/* per CPU, from the spool */
	struct kmt_diag *d;		/* per CPU */
};

static int load_cpu(void *arg, int i)
{
	struct load_job *j = arg;
	struct fin *s = j->s;
	struct kmt_finalize_cpu *fc = &j->res->cpus[i];
	struct sbuf *stats = &s->buf[KMT_SPOOL_MAIN].stats[i];
	struct scan_to *to = &j->cpu_to[i];
	int ret;

	fc->cpu = s->meta->cpus[i];
	if (j->st) {
		ret = stream_cpu(j->st, i, &j->d[i]);
	} else {
		to->comms = kmt_comms_new();
		to->keep = j->to->keep ? kmt_symkeep_new() : NULL;
		ret = to->comms && (!j->to->keep || to->keep) ?
		      scan_cpu(s, KMT_SPOOL_MAIN, i, j->dec, to, fc, &j->d[i]) :
		      kmt_diag_set(&j->d[i], -ENOMEM, "out of memory");
	}
	if (ret)
		return ret;
	spool_get_stats(s->spool, KMT_SPOOL_MAIN, fc->cpu, stats);	/* none: "CPU: N" alone */
	if (stats->len)
		parse_stats(stats->buf, fc);
	else
		ret = sbuf_printf(stats, "CPU: %d\n", fc->cpu);
	if (!ret && j->res->truncated)
		ret = sbuf_printf(stats, "kmemtrace truncated: %s\n", j->res->truncated_why);
	return ret ? kmt_diag_set(&j->d[i], -ENOMEM, "out of memory") : 0;
}

static int load_all(struct fin *s, struct stream *st, const struct kmt_decoder *dec,
		    const struct scan_to *to, struct kmt_finalize_result *res, struct kmt_diag *d)
{
	int n = s->meta->nr_cpus, i, ret;
	struct load_job j = { .s = s, .st = st, .dec = dec, .to = to, .res = res };

	j.cpu_to = calloc((size_t)n, sizeof(*j.cpu_to));
	j.d = calloc((size_t)n, sizeof(*j.d));
	if (!j.cpu_to || !j.d) {
		free(j.cpu_to);
		free(j.d);
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	}
	ret = kmt_parallel(n, load_cpu, &j);
	/* The lowest index's error is the one returned. */
	for (i = 0; ret && i < n && !j.d[i].err; i++)
		;
	if (ret)
		kmt_diag_set(d, ret, "%s", i < n ? j.d[i].msg : strerror(-ret));
	for (i = 0; i < n; i++) {
		if (!ret && j.cpu_to[i].comms && kmt_comms_merge(to->comms, j.cpu_to[i].comms))
			ret = kmt_diag_set(d, -ENOMEM, "out of memory");
		if (j.cpu_to[i].keep)
			kmt_symkeep_merge(to->keep, j.cpu_to[i].keep);
		kmt_comms_free(j.cpu_to[i].comms);
		kmt_symkeep_free(j.cpu_to[i].keep);
		res->raw_bytes += res->cpus[i].bytes;
	}
	free(j.cpu_to);
	free(j.d);
	return ret;
}

/*
 * Streamed, the CPU whose spool file is largest goes first: the room its
 * spool frees as it is written is there for the held pages of the others,
 * which take room and free none. (A disk the idle flusher filled with one
 * CPU's pages had no room left for another CPU's held ones written first.)
 * Readers take each CPU's data by its number and offset, not by its place.
 */
static int spool_first(const void *a, const void *b)
{
	const struct kmt_wcpu *x = a, *y = b;
	const struct stream_cpu *sx = x->arg, *sy = y->arg;

	if (sx->fsize != sy->fsize)
		return sx->fsize > sy->fsize ? -1 : 1;
	return x->cpu - y->cpu;
}

static int write_output(struct fin *s, const char *output, const struct kmt_finalize_opts *o,
			const char *cmdlines, size_t cmdlines_len, const struct kmt_symkeep *keep,
			struct stream *st, struct kmt_finalize_result *res, struct kmt_diag *d)
{
	const struct kmt_spool_meta *sm = s->meta;
	struct kmt_writer_opts wo = {
		.version = 7, .zalg = o->zalg, .level = o->level,
		.chunk_pages = o->chunk_pages ? o->chunk_pages : 64, .page_size = sm->page_size,
		.long_size = sm->long_size, .punch = o->punch, .progress = o->progress,
		.progress_arg = o->progress_arg,
	};
	const struct sbuf *blob = s->blob;
	struct kmt_wcpu *wc = calloc((size_t)sm->nr_cpus * KMT_SPOOL_NR_BUFFERS, sizeof(*wc));
	struct kmt_wbuffer b[KMT_SPOOL_NR_BUFFERS];
	struct kmt_recinfo ri = { .ours = true, .partial = sm->partial, .created = sm->created };
	struct kmt_trace_meta m = {
		.header_page = { blob[KMT_SPOOL_HEADER_PAGE].buf, blob[KMT_SPOOL_HEADER_PAGE].len },
		.header_event = { blob[KMT_SPOOL_HEADER_EVENT].buf, blob[KMT_SPOOL_HEADER_EVENT].len },
		.formats = s->wf, .nr_formats = s->nwf,
		.kallsyms = { blob[KMT_SPOOL_KALLSYMS].buf, blob[KMT_SPOOL_KALLSYMS].len },
		.printk = { blob[KMT_SPOOL_PRINTK].buf, blob[KMT_SPOOL_PRINTK].len },
		.cmdlines = { cmdlines, cmdlines_len },
		.uname = *sm->uname ? sm->uname : NULL,
		.trace_clock = blob[KMT_SPOOL_TRACE_CLOCK].len ? blob[KMT_SPOOL_TRACE_CLOCK].buf : NULL,
		.slab_aliases = blob[KMT_SPOOL_SLAB_ALIASES].len ? blob[KMT_SPOOL_SLAB_ALIASES].buf : NULL,
		.slab_caches = blob[KMT_SPOOL_SLAB_CACHES].len ? blob[KMT_SPOOL_SLAB_CACHES].buf : NULL,
		.cgroups = blob[KMT_SPOOL_CGROUPS].len ? blob[KMT_SPOOL_CGROUPS].buf : NULL,
		.cpu_count = (int)sysconf(_SC_NPROCESSORS_CONF),
	};
	char version[2048], *kallsyms = NULL;
	int i, j, ret;

	if (!wc)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	/* Streamed, the addresses are known once the data is written: KALLSYMS follows it. */
	if (!st || !keep)
		kallsyms_for(s, keep, &kallsyms, &m.kallsyms);
	/* The recorder's name, and what a reader must know of its filters. */
	snprintf(ri.recorder, sizeof(ri.recorder), "kmemtrace %s", *sm->version ? sm->version : KMT_VERSION);
	snprintf(ri.command, sizeof(ri.command), "%s", sm->command);
	snprintf(ri.settings, sizeof(ri.settings), "%s", sm->settings);
	m.version = kmt_recinfo_format(&ri, version, sizeof(version));
	m.trace_id = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)s;
	if (m.cpu_count < sm->nr_cpus)
		m.cpu_count = sm->nr_cpus;
	for (j = 0; j < s->nbuf; j++) {
		struct kmt_wcpu *c = wc + (size_t)j * (size_t)sm->nr_cpus;

		b[j] = (struct kmt_wbuffer){ .name = s->buf[j].name, .clock = *sm->clock ? sm->clock : "local",
					     .subbuf_size = sm->subbuf_size, .nr_cpus = sm->nr_cpus,
					     .cpus = c };
		for (i = 0; i < sm->nr_cpus; i++) {
			c[i].cpu = sm->cpus[i];
			c[i].fd = s->buf[j].fd[i];
			c[i].mem = NULL;
			c[i].start = s->buf[j].start[i];
			c[i].size = s->buf[j].size[i];
			c[i].stats = s->buf[j].stats[i].buf;
			if (st && j == KMT_SPOOL_MAIN) {
				c[i].read = stream_read;
				c[i].seen = stream_seen;
				c[i].arg = &st->cpu[i];
			} else if (s->buf[j].mend[i].bad) {
				struct mend_src *mc = &s->buf[j].mend[i];

				*mc = (struct mend_src){ .bad = mc->bad, .fd = c[i].fd,
							 .start = c[i].start, .punch = o->punch };
				kmt_page_run_init(&mc->run, &s->layout, sm->subbuf_size);
				c[i].read = mend_read;
				c[i].seen = mend_seen;
				c[i].arg = mc;
			}
		}
	}
	if (st) {
		m.late_cmdlines = stream_cmdlines;
		m.late_kallsyms = keep ? stream_kallsyms : NULL;
		m.late_arg = st;
		qsort(wc + (size_t)KMT_SPOOL_MAIN * (size_t)sm->nr_cpus, (size_t)sm->nr_cpus, sizeof(*wc), spool_first);
	}
	ret = kmt_write_trace_file(output, &wo, &m, b, s->nbuf, &res->file_bytes, d);
	for (i = 0; st && i < sm->nr_cpus; i++)
		res->consumed += st->cpu[i].held_read + st->cpu[i].freed;
	if (ret && st && st->err)	/* the data's source failed: say so, not the writer's errno */
		ret = kmt_diag_set(d, st->err, "%s: %s", output, st->d.msg);
	free(kallsyms);
	free(wc);
	return ret;
}

int kmt_spool_finalize(struct kmt_spool *spool, const char *output,
		       const struct kmt_finalize_opts *o, struct kmt_finalize_result *res,
		       struct kmt_diag *d)
{
	struct fin s = { .spool = spool, .meta = kmt_spool_meta(spool), .nbuf = 1 };
	struct kmt_decoder *dec = NULL;
	struct kmt_comms *comms = NULL;
	struct kmt_symkeep *keep = NULL;
	struct scan_to to;
	struct stream st = { 0 };
	char *cmdlines = NULL;
	size_t cmdlines_len = 0;
	int i, ret;

	memset(res, 0, sizeof(*res));
	s.buf[KMT_SPOOL_MAIN].name = "";
	s.buf[KMT_SPOOL_ACCESS].name = KMT_ACCESS_BUFFER;
	/* The room set aside for writing the metadata is needed now. */
	kmt_spool_unreserve(spool);
	kmt_formats_init(&s.fs);
	ret = fin_load(&s, d);
	if (ret)
		goto out;
	dec = kmt_decoder_new(&s.fs, false, s.meta->long_size);
	comms = kmt_comms_new();
	keep = o->full_kallsyms ? NULL : kmt_symkeep_new();
	to = (struct scan_to){ .comms = comms, .keep = keep };
	if (!dec || !comms || (!o->full_kallsyms && !keep)) {
		ret = kmt_diag_set(d, -ENOMEM, "out of memory");
		goto out;
	}
	kmt_comms_parse(comms, s.blob[KMT_SPOOL_CMDLINES].buf, s.blob[KMT_SPOOL_CMDLINES].len);
	if (s.truncated.len) {
		res->truncated = true;
		snprintf(res->truncated_why, sizeof(res->truncated_why), "%.*s",
			 (int)strcspn(s.truncated.buf, "\n"), s.truncated.buf);
	} else if (o->recovered && !s.meta->drained) {
		/* Drained, the data ends where tracing stopped, as a recording's does. */
		res->truncated = true;
		snprintf(res->truncated_why, sizeof(res->truncated_why),
			 "recovered from a recording whose recorder died");
	}
	res->nr_cpus = s.meta->nr_cpus;
	if (o->held) {
		st = (struct stream){ .s = &s, .o = o, .dec = dec, .to = &to, .res = res };
		st.cpu = calloc((size_t)s.meta->nr_cpus, sizeof(*st.cpu));
		if (!st.cpu)
			ret = kmt_diag_set(d, -ENOMEM, "out of memory");
	}
	ret = ret ?: load_all(&s, o->held ? &st : NULL, dec, &to, res, d);
	ret = ret ?: load_access(&s, dec, &to, res, d);
	if (ret)
		goto out;
	if (!o->held) {
		cmdlines = kmt_comms_format(comms, &cmdlines_len);
		if (!cmdlines) {
			ret = kmt_diag_set(d, -ENOMEM, "out of memory");
			goto out;
		}
	}
	ret = write_output(&s, output, o, cmdlines, cmdlines_len, keep, o->held ? &st : NULL, res, d);
	/* From memory the events are counted as they are written: the totals come now. */
	for (i = 0; i < s.meta->nr_cpus; i++) {
		struct kmt_finalize_cpu *fc = &res->cpus[i];

		if (o->held)
			scan_done(&st.cpu[i].scan);
		res->events += fc->events;
		res->stacks += fc->stacks;
		if (fc->first_ts && (!res->first_ts || fc->first_ts < res->first_ts))
			res->first_ts = fc->first_ts;
		res->last_ts = MAX(res->last_ts, fc->last_ts);
		res->lost += kmt_finalize_cpu_lost(fc);
	}
out:
	free(st.cpu);
	free(st.cmdlines);
	free(st.kallsyms);
	free(cmdlines);
	kmt_comms_free(comms);
	kmt_symkeep_free(keep);
	kmt_decoder_free(dec);
	fin_release(&s);
	return ret;
}
