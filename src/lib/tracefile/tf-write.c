/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trace.dat writer (see include/kmemtrace/tracefile.h). Output is buffered
 * and written sequentially; the few forward references (section sizes,
 * chunk counts, the options offset) are patched with pwrite() afterwards.
 *
 * v7 layout we produce, every section contiguous with the next so that a
 * reader scanning section headers by size (trace-cmd does, for STRINGS)
 * walks the whole file:
 *
 *	header | HEADER_INFO | FTRACE_EVENTS | EVENT_FORMATS | KALLSYMS |
 *	PRINTK | CMDLINES | BUFFER (flyrecord) ... | OPTIONS | STRINGS
 *
 * With late_cmdlines (names known only once the data has been read),
 * CMDLINES follows the buffers instead, and with late_kallsyms (the
 * symbols the data names) KALLSYMS too; readers find them by their options.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kmemtrace/base.h>
#include <kmemtrace/tracefile.h>
#include "base/kmt-local.h"
#include "base/zparallel.h"
#include "tf-local.h"

#define FLUSH_AT (1u << 20)

struct wout {
	int fd;
	uint64_t off;			/* logical offset of the next byte */
	struct sbuf pend;		/* bytes not yet written */
	int err;
	const struct kmt_writer_opts *o;
	struct kmt_zctx *z;
	struct kmt_zparallel *zpar;	/* CPU data's compressing threads */
	size_t zpar_chunk;
	struct sbuf strings;		/* v7 string table */
	uint64_t sec_off[KMT_OPT_CMDLINES + 1];
	uint64_t done, total;		/* CPU data progress */
};

static void w_flush(struct wout *w)
{
	if (!w->err && w->pend.len)
		w->err = write_all(w->fd, w->pend.buf, w->pend.len);
	w->pend.len = 0;
}

static void w_add(struct wout *w, const void *p, size_t n)
{
	if (w->err)
		return;
	if (n >= FLUSH_AT) {
		w_flush(w);
		if (!w->err)
			w->err = write_all(w->fd, p, n);
	} else {
		w->err = sbuf_add(&w->pend, p, n);
		if (w->pend.len >= FLUSH_AT)
			w_flush(w);
	}
	w->off += n;
}

static void w_u16(struct wout *w, uint16_t v) { w_add(w, &v, 2); }
static void w_u32(struct wout *w, uint32_t v) { w_add(w, &v, 4); }
static void w_u64(struct wout *w, uint64_t v) { w_add(w, &v, 8); }
static void w_str(struct wout *w, const char *s) { w_add(w, s, strlen(s) + 1); }

static void w_zeros(struct wout *w, uint64_t n)
{
	static const char zero[4096];

	while (n) {
		size_t k = n > sizeof(zero) ? sizeof(zero) : (size_t)n;

		w_add(w, zero, k);
		n -= k;
	}
}

static void w_align(struct wout *w, uint32_t a)
{
	w_zeros(w, ALIGN_UP(w->off, a) - w->off);
}

/* Overwrite @n bytes at @off, which may still be pending or on disk. */
static void w_patch(struct wout *w, uint64_t off, const void *p, size_t n)
{
	uint64_t pend_start = w->off - w->pend.len;

	if (w->err)
		return;
	if (off >= pend_start)
		memcpy(w->pend.buf + (off - pend_start), p, n);
	else
		w->err = pwrite_all(w->fd, p, n, (off_t)off);
}

static uint32_t w_string(struct wout *w, const char *s)
{
	uint32_t id = (uint32_t)w->strings.len;

	if (!w->err)
		w->err = sbuf_addstr(&w->strings, s);
	return id;
}

/* v7 section header with a size to patch; returns the size field's offset. */
static uint64_t sec_begin(struct wout *w, uint16_t id, uint16_t flags, const char *desc)
{
	uint64_t size_at;

	w_u16(w, id);
	w_u16(w, flags);
	w_u32(w, w_string(w, desc));
	size_at = w->off;
	w_u64(w, 0);
	return size_at;
}

static void sec_end(struct wout *w, uint64_t size_at)
{
	uint64_t size = w->off - (size_at + 8);

	w_patch(w, size_at, &size, 8);
}

/* A metadata section, compressed as a whole when the file is. */
static void write_section(struct wout *w, uint16_t id, const char *desc,
			  const struct sbuf *payload)
{
	uint64_t size_at;

	w->sec_off[id] = w->off;
	if (w->o->zalg == KMT_Z_NONE) {
		size_at = sec_begin(w, id, 0, desc);
		w_add(w, payload->buf, payload->len);
	} else {
		size_t cap = kmt_zbound(w->o->zalg, payload->len);
		char *zbuf = malloc(cap ? cap : 1);
		long n;

		if (!zbuf) {
			w->err = -ENOMEM;
			return;
		}
		n = kmt_zcompress(w->z, zbuf, cap, payload->buf, payload->len);
		if (n < 0) {
			free(zbuf);
			w->err = (int)n;
			return;
		}
		size_at = sec_begin(w, id, KMT_SEC_COMPRESSED, desc);
		w_u32(w, (uint32_t)n);
		w_u32(w, (uint32_t)payload->len);
		w_add(w, zbuf, (size_t)n);
		free(zbuf);
	}
	sec_end(w, size_at);
}

static int build_headers(struct sbuf *p, const struct kmt_trace_meta *m)
{
	int ret = sbuf_addstr(p, "header_page");

	ret = ret ?: sbuf_add64(p, m->header_page.len);
	ret = ret ?: sbuf_add(p, m->header_page.data, m->header_page.len);
	ret = ret ?: sbuf_addstr(p, "header_event");
	ret = ret ?: sbuf_add64(p, m->header_event.len);
	ret = ret ?: sbuf_add(p, m->header_event.data, m->header_event.len);
	return ret;
}

static bool is_ftrace(const struct kmt_wformat *f)
{
	return !f->system || !strcmp(f->system, "ftrace");
}

static int build_ftrace(struct sbuf *p, const struct kmt_trace_meta *m)
{
	uint32_t n = 0;
	int i, ret = 0;

	for (i = 0; i < m->nr_formats; i++)
		n += is_ftrace(&m->formats[i]);
	ret = sbuf_add32(p, n);
	for (i = 0; i < m->nr_formats && !ret; i++) {
		if (!is_ftrace(&m->formats[i]))
			continue;
		ret = sbuf_add64(p, m->formats[i].len);
		ret = ret ?: sbuf_add(p, m->formats[i].text, m->formats[i].len);
	}
	return ret;
}

/* Systems in order of first appearance; each with all of its formats. */
static int build_events(struct sbuf *p, const struct kmt_trace_meta *m)
{
	uint32_t nsys = 0;
	int i, j, ret;

	for (i = 0; i < m->nr_formats; i++) {
		bool seen = is_ftrace(&m->formats[i]);

		for (j = 0; j < i && !seen; j++)
			seen = !is_ftrace(&m->formats[j]) &&
			       !strcmp(m->formats[j].system, m->formats[i].system);
		nsys += !seen;
	}
	ret = sbuf_add32(p, nsys);
	for (i = 0; i < m->nr_formats && !ret; i++) {
		const char *sys = m->formats[i].system;
		bool seen = is_ftrace(&m->formats[i]);
		uint32_t n = 0;

		for (j = 0; j < i && !seen; j++)
			seen = !is_ftrace(&m->formats[j]) && !strcmp(m->formats[j].system, sys);
		if (seen)
			continue;
		for (j = i; j < m->nr_formats; j++)
			n += !is_ftrace(&m->formats[j]) && !strcmp(m->formats[j].system, sys);
		ret = sbuf_addstr(p, sys);
		ret = ret ?: sbuf_add32(p, n);
		for (j = i; j < m->nr_formats && !ret; j++) {
			if (is_ftrace(&m->formats[j]) || strcmp(m->formats[j].system, sys))
				continue;
			ret = sbuf_add64(p, m->formats[j].len);
			ret = ret ?: sbuf_add(p, m->formats[j].text, m->formats[j].len);
		}
	}
	return ret;
}

static int build_blob(struct sbuf *p, const struct kmt_blob *b, unsigned int lensize)
{
	int ret = lensize == 4 ? sbuf_add32(p, (uint32_t)b->len) : sbuf_add64(p, b->len);

	return ret ?: sbuf_add(p, b->data, b->len);
}

static void report_progress(struct wout *w, uint64_t n)
{
	w->done += n;
	if (w->o->progress)
		w->o->progress(w->o->progress_arg, w->done, w->total);
}

/* Read @len bytes of a CPU's source at @off into @buf. */
static int src_read(const struct kmt_wcpu *c, void *buf, size_t len, uint64_t off)
{
	if (c->read)
		return c->read(c->arg, buf, len, off);
	if (c->mem) {
		memcpy(buf, (const char *)c->mem + c->start + off, len);
		return 0;
	}
	return pread_all(c->fd, buf, len, (off_t)(c->start + off));
}

static void src_done(const struct wout *w, const struct kmt_wcpu *c, const void *buf,
		     uint64_t off, uint64_t len)
{
	if (c->seen)
		c->seen(c->arg, buf, (size_t)len, off);
	if (w->o->punch && !c->mem && !c->read)
		fallocate(c->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(c->start + off),
			  (off_t)len);
}

struct cpu_place {
	uint64_t off, size;
};

/*
 * A buffer's CPUs compressed in one run of kmt_zparallel_run(), one segment each
 * (zparallel.h), so that the workers go on into the next CPU while one's last
 * chunks are written: the writer's thread lays out each CPU's section
 * (aligned, its chunk count patched after its chunks) as its first chunk
 * comes.
 */
struct zsink {
	struct wout *w;
	const struct kmt_wcpu *cpus;
	struct cpu_place *place;
	int cur;			/* the CPU being written, -1 before the first */
	uint64_t count_at;
	uint32_t nchunks;
	/* A stream source is read by one worker at a time, in order. */
	pthread_mutex_t mu;
	pthread_cond_t turn;
	uint64_t *next;			/* per CPU */
};

static int z_read(void *arg, int seg, void *buf, size_t len, uint64_t off)
{
	struct zsink *zs = arg;
	const struct kmt_wcpu *c = &zs->cpus[seg];
	int ret;

	if (!c->read)
		return src_read(c, buf, len, off);
	pthread_mutex_lock(&zs->mu);
	while (zs->next[seg] != off)
		pthread_cond_wait(&zs->turn, &zs->mu);
	pthread_mutex_unlock(&zs->mu);
	ret = src_read(c, buf, len, off);
	pthread_mutex_lock(&zs->mu);
	zs->next[seg] = off + len;
	pthread_cond_broadcast(&zs->turn);
	pthread_mutex_unlock(&zs->mu);
	return ret;
}

/* Close the current CPU's section and place the empty ones before CPU @to. */
static void z_place_to(struct zsink *zs, int to)
{
	struct wout *w = zs->w;

	if (zs->cur >= 0) {
		w_patch(w, zs->count_at, &zs->nchunks, 4);
		zs->place[zs->cur].size = w->off - zs->place[zs->cur].off - 4;
	}
	for (zs->cur++; zs->cur < to; zs->cur++) {
		w_align(w, w->o->page_size);
		zs->place[zs->cur] = (struct cpu_place){ w->off, 0 };
	}
}

static int z_out(void *arg, int seg, const void *raw, const void *z, size_t n, size_t len,
		 uint64_t off)
{
	struct zsink *zs = arg;
	struct wout *w = zs->w;

	if (seg != zs->cur) {
		z_place_to(zs, seg);	/* now zs->cur == seg */
		w_align(w, w->o->page_size);
		zs->place[seg].off = w->off;
		zs->count_at = w->off;
		zs->nchunks = 0;
		w_u32(w, 0);
	}
	w_u32(w, (uint32_t)n);
	w_u32(w, (uint32_t)len);
	w_add(w, z, n);
	zs->nchunks++;
	/* Punch only what is safely out of our hands. */
	w_flush(w);
	if (!w->err)
		src_done(w, &zs->cpus[seg], raw, off, len);
	report_progress(w, len);
	return w->err;
}

/* The compressing threads for @chunk-byte chunks, made on first use. */
static struct kmt_zparallel *w_zparallel(struct wout *w, size_t chunk)
{
	if (w->zpar && w->zpar_chunk != chunk) {
		kmt_zparallel_free(w->zpar);
		w->zpar = NULL;
	}
	if (!w->zpar) {
		w->zpar = kmt_zparallel_new(w->o->zalg, w->o->level, chunk, w->o->threads > 0 ?
					    w->o->threads : kmt_zparallel_threads());
		w->zpar_chunk = chunk;
	}
	return w->zpar;
}

/* Every CPU of @b, compressed in one run. */
static void write_cpus_compressed(struct wout *w, const struct kmt_wbuffer *b,
				  struct cpu_place *place)
{
	size_t chunk = (size_t)b->subbuf_size * (w->o->chunk_pages ? w->o->chunk_pages : 64);
	struct zsink zs = { .w = w, .cpus = b->cpus, .place = place, .cur = -1 };
	uint64_t *sizes = calloc((size_t)b->nr_cpus + 1, sizeof(*sizes));
	struct kmt_zparallel *zpar = w_zparallel(w, chunk);
	int i, ret;

	zs.next = calloc((size_t)b->nr_cpus + 1, sizeof(*zs.next));
	if (!zpar || !sizes || !zs.next) {
		w->err = -ENOMEM;
		free(sizes);
		free(zs.next);
		return;
	}
	for (i = 0; i < b->nr_cpus; i++)
		sizes[i] = b->cpus[i].size;
	pthread_mutex_init(&zs.mu, NULL);
	pthread_cond_init(&zs.turn, NULL);
	ret = kmt_zparallel_run(zpar, b->nr_cpus, sizes, z_read, z_out, &zs);
	pthread_cond_destroy(&zs.turn);
	pthread_mutex_destroy(&zs.mu);
	if (ret && !w->err)
		w->err = ret;
	z_place_to(&zs, b->nr_cpus);
	free(sizes);
	free(zs.next);
}

/* Copy one CPU's data uncompressed; returns its size as recorded in the BUFFER option. */
static uint64_t write_cpu_data(struct wout *w, const struct kmt_wcpu *c, uint32_t psize)
{
	size_t chunk = (size_t)psize * (w->o->chunk_pages ? w->o->chunk_pages : 64);
	uint64_t start = w->off, off;
	char *buf = malloc(chunk);
	int ret;

	if (!buf) {
		w->err = -ENOMEM;
		return 0;
	}
	for (off = 0; off < c->size && !w->err; off += chunk) {
		size_t len = (size_t)MIN((uint64_t)chunk, c->size - off);

		ret = src_read(c, buf, len, off);
		if (ret) {
			w->err = ret;
			break;
		}
		w_add(w, buf, len);
		/* Punch only what is safely out of our hands. */
		w_flush(w);
		if (!w->err)
			src_done(w, c, buf, off, len);
		report_progress(w, len);
	}
	free(buf);
	return w->off - start;
}

static void write_flyrecord(struct wout *w, const struct kmt_wbuffer *b, uint64_t *sec_at,
			    struct cpu_place *place)
{
	bool compress = w->o->zalg != KMT_Z_NONE;
	char desc[300];
	uint64_t size_at;
	int i;

	snprintf(desc, sizeof(desc), "buffer flyrecord %s", b->name);
	*sec_at = w->off;
	size_at = sec_begin(w, KMT_OPT_BUFFER, compress ? KMT_SEC_COMPRESSED : 0, desc);
	if (compress)
		write_cpus_compressed(w, b, place);
	for (i = 0; !compress && i < b->nr_cpus; i++) {
		w_align(w, w->o->page_size);
		place[i].off = w->off;
		place[i].size = b->cpus[i].size ? write_cpu_data(w, &b->cpus[i], b->subbuf_size) : 0;
	}
	sec_end(w, size_at);
}

static void opt(struct sbuf *p, uint16_t id, const void *data, uint32_t len, int *ret)
{
	if (*ret)
		return;
	*ret = sbuf_add16(p, id);
	*ret = *ret ?: sbuf_add32(p, len);
	*ret = *ret ?: sbuf_add(p, data, len);
}

static void opt_str(struct sbuf *p, uint16_t id, const char *s, int *ret)
{
	if (s)
		opt(p, id, s, (uint32_t)strlen(s) + 1, ret);
}

/* Options common to v6 and v7: clock, uname, version, id, stats, CPUs. */
static int common_options(struct sbuf *p, const struct kmt_trace_meta *m,
			  const struct kmt_wbuffer *bufs, int nr_bufs)
{
	uint32_t cpus = (uint32_t)m->cpu_count;
	int i, j, ret = 0;

	opt_str(p, KMT_OPT_TRACECLOCK, m->trace_clock, &ret);
	opt_str(p, KMT_OPT_UNAME, m->uname, &ret);
	opt_str(p, KMT_OPT_VERSION, m->version, &ret);
	opt_str(p, KMT_OPT_SLAB_ALIASES, m->slab_aliases, &ret);
	opt_str(p, KMT_OPT_SLAB_CACHES, m->slab_caches, &ret);
	opt_str(p, KMT_OPT_CGROUPS, m->cgroups, &ret);
	if (m->trace_id)
		opt(p, KMT_OPT_TRACEID, &m->trace_id, 8, &ret);
	for (i = 0; i < nr_bufs; i++) {
		if (*bufs[i].name) {
			char mark[300];

			snprintf(mark, sizeof(mark), "\nBuffer: %s\n\n", bufs[i].name);
			opt_str(p, KMT_OPT_CPUSTAT, mark, &ret);
		}
		for (j = 0; j < bufs[i].nr_cpus; j++)
			opt_str(p, KMT_OPT_CPUSTAT, bufs[i].cpus[j].stats, &ret);
	}
	opt(p, KMT_OPT_CPUCOUNT, &cpus, 4, &ret);
	return ret;
}

static int build_v7_options(struct wout *w, struct sbuf *p, const struct kmt_trace_meta *m,
			    const struct kmt_wbuffer *bufs, int nr_bufs,
			    const uint64_t *buf_sec, struct cpu_place *const *place)
{
	int i, j, ret = 0;
	uint16_t id;

	for (id = KMT_OPT_HEADER_INFO; id <= KMT_OPT_CMDLINES; id++)
		if (w->sec_off[id])
			opt(p, id, &w->sec_off[id], 8, &ret);
	ret = ret ?: common_options(p, m, bufs, nr_bufs);
	for (i = 0; i < nr_bufs && !ret; i++) {
		struct sbuf b = { 0 };

		ret = sbuf_add64(&b, buf_sec[i]);
		ret = ret ?: sbuf_addstr(&b, bufs[i].name);
		ret = ret ?: sbuf_addstr(&b, bufs[i].clock ? bufs[i].clock : "local");
		ret = ret ?: sbuf_add32(&b, bufs[i].subbuf_size);
		ret = ret ?: sbuf_add32(&b, (uint32_t)bufs[i].nr_cpus);
		for (j = 0; j < bufs[i].nr_cpus && !ret; j++) {
			ret = sbuf_add32(&b, (uint32_t)bufs[i].cpus[j].cpu);
			ret = ret ?: sbuf_add64(&b, place[i][j].off);
			ret = ret ?: sbuf_add64(&b, place[i][j].size);
		}
		opt(p, KMT_OPT_BUFFER, b.buf, (uint32_t)b.len, &ret);
		sbuf_release(&b);
	}
	if (!ret) {
		uint64_t zero = 0;

		opt(p, KMT_OPT_DONE, &zero, 8, &ret);
	}
	return ret;
}

static void write_initial(struct wout *w, int version)
{
	static const uint8_t magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	uint8_t el[2] = { 0, (uint8_t)w->o->long_size };

	w_add(w, magic, sizeof(magic));
	w_str(w, version >= 7 ? "7" : "6");
	w_add(w, el, 2);
	w_u32(w, w->o->page_size);
	if (version >= 7) {
		w_str(w, kmt_zalg_name(w->o->zalg));
		w_str(w, kmt_zalg_version(w->o->zalg));
	}
}

static int write_v7(struct wout *w, const struct kmt_trace_meta *m,
		    const struct kmt_wbuffer *bufs, int nr_bufs)
{
	static const struct {
		uint16_t id;
		const char *desc;
	} secs[] = {
		{ KMT_OPT_HEADER_INFO, "headers" },
		{ KMT_OPT_FTRACE_EVENTS, "ftrace events" },
		{ KMT_OPT_EVENT_FORMATS, "events format" },
		{ KMT_OPT_KALLSYMS, "kallsyms" },
		{ KMT_OPT_PRINTK, "printk" },
		{ KMT_OPT_CMDLINES, "command lines" },
	};
	struct cpu_place **place = calloc((size_t)nr_bufs + 1, sizeof(*place));
	uint64_t *buf_sec = calloc((size_t)nr_bufs + 1, sizeof(*buf_sec));
	uint64_t opt_at, options_off, size_at;
	struct sbuf p = { 0 };
	size_t i;
	int b, ret = 0;

	if (!place || !buf_sec) {
		ret = -ENOMEM;
		goto out;
	}
	write_initial(w, 7);
	opt_at = w->off;
	w_u64(w, 0);
	for (i = 0; i < ARRAY_SIZE(secs) && !ret && !w->err; i++) {
		if ((secs[i].id == KMT_OPT_CMDLINES && m->late_cmdlines) ||
		    (secs[i].id == KMT_OPT_KALLSYMS && m->late_kallsyms))
			continue;	/* after the buffers */
		p.len = 0;
		switch (secs[i].id) {
		case KMT_OPT_HEADER_INFO: ret = build_headers(&p, m); break;
		case KMT_OPT_FTRACE_EVENTS: ret = build_ftrace(&p, m); break;
		case KMT_OPT_EVENT_FORMATS: ret = build_events(&p, m); break;
		case KMT_OPT_KALLSYMS: ret = build_blob(&p, &m->kallsyms, 4); break;
		case KMT_OPT_PRINTK: ret = build_blob(&p, &m->printk, 4); break;
		default: ret = build_blob(&p, &m->cmdlines, 8); break;
		}
		if (!ret)
			write_section(w, secs[i].id, secs[i].desc, &p);
	}
	for (b = 0; b < nr_bufs && !ret && !w->err; b++) {
		place[b] = calloc((size_t)bufs[b].nr_cpus + 1, sizeof(**place));
		if (!place[b]) {
			ret = -ENOMEM;
			break;
		}
		write_flyrecord(w, &bufs[b], &buf_sec[b], place[b]);
	}
	if (!ret && !w->err && m->late_kallsyms) {
		struct kmt_blob kallsyms = { 0 };

		ret = m->late_kallsyms(m->late_arg, &kallsyms);
		p.len = 0;
		ret = ret ?: build_blob(&p, &kallsyms, 4);
		if (!ret)
			write_section(w, KMT_OPT_KALLSYMS, "kallsyms", &p);
	}
	if (!ret && !w->err && m->late_cmdlines) {
		struct kmt_blob cmdlines = { 0 };

		ret = m->late_cmdlines(m->late_arg, &cmdlines);
		p.len = 0;
		ret = ret ?: build_blob(&p, &cmdlines, 8);
		if (!ret)
			write_section(w, KMT_OPT_CMDLINES, "command lines", &p);
	}
	if (ret || w->err)
		goto out;
	p.len = 0;
	ret = build_v7_options(w, &p, m, bufs, nr_bufs, buf_sec, place);
	if (ret)
		goto out;
	options_off = w->off;
	size_at = sec_begin(w, KMT_OPT_DONE, 0, "options");
	w_add(w, p.buf, p.len);
	sec_end(w, size_at);
	/* The strings section names itself, so add its name first. */
	{
		uint32_t sid = w_string(w, "strings");
		struct sbuf s = w->strings;

		w_u16(w, KMT_OPT_STRINGS);
		w_u16(w, 0);
		w_u32(w, sid);
		w_u64(w, s.len);
		w_add(w, s.buf, s.len);
	}
	w_patch(w, opt_at, &options_off, 8);
out:
	for (b = 0; place && b < nr_bufs; b++)
		free(place[b]);
	free(place);
	free(buf_sec);
	sbuf_release(&p);
	return ret;
}

static int write_v6(struct wout *w, const struct kmt_trace_meta *m,
		    const struct kmt_wbuffer *bufs, int nr_bufs)
{
	const struct kmt_wbuffer *b = &bufs[0];
	struct sbuf p = { 0 };
	uint64_t table_at, data_off;
	int i, ret;

	if (nr_bufs != 1 || *b->name || w->o->zalg != KMT_Z_NONE || m->late_cmdlines || m->late_kallsyms)
		return -EINVAL;	/* v6: one top-level, uncompressed buffer, metadata first */
	write_initial(w, 6);
	ret = build_headers(&p, m);
	ret = ret ?: build_ftrace(&p, m);
	ret = ret ?: build_events(&p, m);
	ret = ret ?: build_blob(&p, &m->kallsyms, 4);
	ret = ret ?: build_blob(&p, &m->printk, 4);
	ret = ret ?: build_blob(&p, &m->cmdlines, 8);
	ret = ret ?: sbuf_add32(&p, (uint32_t)b->nr_cpus);
	ret = ret ?: sbuf_add(&p, "options  ", 10);
	ret = ret ?: common_options(&p, m, bufs, nr_bufs);
	ret = ret ?: sbuf_add16(&p, 0);
	ret = ret ?: sbuf_add(&p, "flyrecord", 10);
	if (ret)
		goto out;
	w_add(w, p.buf, p.len);
	table_at = w->off;
	w_zeros(w, (uint64_t)b->nr_cpus * 16);
	for (i = 0; i < b->nr_cpus && !w->err; i++) {
		uint64_t size;

		w_align(w, w->o->page_size);
		data_off = w->off;
		size = b->cpus[i].size ? write_cpu_data(w, &b->cpus[i], b->subbuf_size) : 0;
		w_patch(w, table_at + (uint64_t)i * 16, &data_off, 8);
		w_patch(w, table_at + (uint64_t)i * 16 + 8, &size, 8);
	}
out:
	sbuf_release(&p);
	return ret;
}

int kmt_write_trace(int fd, const struct kmt_writer_opts *o,
		    const struct kmt_trace_meta *m, const struct kmt_wbuffer *bufs,
		    int nr_bufs, struct kmt_diag *d)
{
	struct wout w = { .fd = fd, .o = o };
	int i, j, ret;

	if (o->page_size < 64 || (o->page_size & (o->page_size - 1)) ||
	    (o->long_size != 4 && o->long_size != 8))
		return kmt_diag_set(d, -EINVAL, "bad page size %u or long size %d",
				    o->page_size, o->long_size);
	for (i = 0; i < nr_bufs; i++)
		for (j = 0; j < bufs[i].nr_cpus; j++) {
			if (bufs[i].cpus[j].size % bufs[i].subbuf_size)
				return kmt_diag_set(d, -EINVAL, "CPU %d data is not whole sub-buffers",
						    bufs[i].cpus[j].cpu);
			w.total += bufs[i].cpus[j].size;
		}
	if (o->zalg != KMT_Z_NONE) {
		w.z = kmt_zctx_new(o->zalg, o->level);
		if (!w.z)
			return kmt_diag_set(d, -ENOMEM, "out of memory");
	}
	ret = o->version >= 7 ? write_v7(&w, m, bufs, nr_bufs) : write_v6(&w, m, bufs, nr_bufs);
	w_flush(&w);
	if (!ret)
		ret = w.err;
	kmt_zctx_free(w.z);
	kmt_zparallel_free(w.zpar);
	sbuf_release(&w.pend);
	sbuf_release(&w.strings);
	if (ret)
		return kmt_diag_set(d, ret, "cannot write trace: %s", kmt_strerror(ret));
	return 0;
}

int kmt_write_trace_file(const char *path, const struct kmt_writer_opts *o,
			 const struct kmt_trace_meta *m, const struct kmt_wbuffer *bufs,
			 int nr_bufs, uint64_t *bytes, struct kmt_diag *d)
{
	struct kmt_outfile of;
	struct stat st;
	int ret = kmt_outfile_open(&of, path, 0600, d);

	if (ret)
		return ret;
	ret = kmt_write_trace(of.fd, o, m, bufs, nr_bufs, d);
	if (!ret && bytes && !fstat(of.fd, &st))
		*bytes = (uint64_t)st.st_size;
	if (ret) {
		kmt_outfile_abort(&of);
		return kmt_diag_set(d, ret, "%s: %s", path, d->msg);
	}
	return kmt_outfile_commit(&of, d);
}
