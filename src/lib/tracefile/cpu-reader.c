/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-CPU flyrecord data, one sub-buffer at a time. Uncompressed data is
 * used in place (the file is mapped). Compressed data is a count of chunks,
 * each "u32 csize, u32 usize, bytes": they are inflated in order into a
 * small ring of buffers, either on demand or, with threads on
 * (kmt_file_set_threads()), by the file's pool of inflating threads, which
 * keeps every reader's ring a few chunks ahead, the emptiest first, so
 * decompression runs on other cores while the caller walks pages. The pool
 * has as many threads as asked, not one per CPU: a file of 128 CPUs read
 * with -j 4 inflates on 4. Memory: a few chunks per CPU.
 *
 * What cannot be read is passed over, and said (struct kmt_skip): a chunk
 * that does not inflate, a page whose header is bad, a chunk header that
 * makes no sense (the next chunk is then looked for, byte by byte, by the
 * sizes and the compression's magic), the end of a file cut in the data.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tf-local.h"

#define RING 4
#define RELEASE_EVERY (1u << 20)	/* give back mapped data this often */

struct zslot {
	uint8_t *buf;
	size_t alloc, len;
	uint64_t off;			/* file offset of the chunk */
	uint64_t end;			/* and of its end */
	uint32_t idx;
	int err;
	struct kmt_skip gap;		/* with err: what was passed over */
	struct kmt_diag diag;
};

struct kmt_cpu_reader {
	struct kmt_file *f;
	const struct kmt_buffer *b;
	const struct kmt_cpu_data *cd;
	uint32_t psize;
	uint64_t pos;			/* raw: offset into the CPU's data */
	uint64_t page_off;		/* file offset (raw) or offset in chunk */
	uint64_t released;		/* file data up to here was given back */
	char where[128];
	struct kmt_skip gap;		/* what the last error passed over */
	bool gap_pending;		/* raw, or no chunk count: a gap to hand out first */
	bool end_said;			/* raw: the cut at the end was handed out */
	/* compressed */
	bool z;
	struct kmt_zctx *zc;
	struct cur chunks;		/* the producer's cursor over chunk headers */
	uint32_t nr_chunks, produced;
	bool resync;			/* the count is not to be trusted: go to the end */
	bool chain_end;			/* no further chunk can be found */
	struct zslot ring[RING];
	uint32_t head, tail;		/* consumer at head, producer fills tail */
	struct zslot *cur;		/* the chunk pages come from */
	size_t buf_pos;
	/* inflated by the pool (f->pool), under its lock: */
	bool threaded;
	bool done;			/* the pool has no more to give */
	bool busy;			/* a pool thread is inflating into the ring */
	pthread_cond_t more;		/* a chunk is ready, or done, or no longer busy */
};

/*
 * The file's inflating threads, shared by its readers. One lock for all:
 * it is taken once per chunk (64 pages), not per page.
 */
#define MAX_INFLATERS 64
struct tf_pool {
	pthread_mutex_t mu;
	pthread_cond_t work;		/* idle threads wait for a ring with room */
	struct kmt_cpu_reader **r;	/* the readers served */
	int n, alloc;
	int threads, started, idle;
	bool quit;
	pthread_t th[MAX_INFLATERS];
	struct kmt_file *f;
};

/*
 * The file is mapped: data read once would stay resident and make memory
 * grow with the trace. Give back what is consumed, every few megabytes.
 */
static void release_upto(struct kmt_cpu_reader *r, uint64_t off)
{
	struct kmt_file *f = r->f;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), from, to;

	if (!f->mapped || off < r->released + RELEASE_EVERY)
		return;
	from = ALIGN_UP(r->released, page);
	to = off / page * page;
	if (to > from)
		madvise((void *)(f->map + from), (size_t)(to - from), MADV_DONTNEED);
	r->released = to;
}

/* The next place at or after @p where a chunk could start, or NULL. */
static const uint8_t *find_chunk(const struct kmt_cpu_reader *r, const uint8_t *p)
{
	const uint8_t *end = r->chunks.end;
	bool be = r->chunks.be;

	for (; end - p >= 12; p++) {
		uint32_t cs = ld32(p, be);

		if (cs <= (uint64_t)(end - p) - 8 &&
		    tf_chunk_plausible(r->f, r->psize, cs, ld32(p + 4, be), p + 8))
			return p;
	}
	return NULL;
}

static bool more_chunks(const struct kmt_cpu_reader *r)
{
	if (r->chain_end)
		return false;
	return r->resync ? cur_left(&r->chunks) >= 8 : r->produced < r->nr_chunks;
}

/* "CPU 1 data" for messages. */
static const char *data_name(const struct kmt_cpu_reader *r, char *buf, size_t len)
{
	if (r->cd->cpu < 0)
		snprintf(buf, len, "flyrecord");
	else
		snprintf(buf, len, "CPU %d data", r->cd->cpu);
	return buf;
}

/* Fill @g and @d for what was passed over from @from to @to; returns @err. */
static int passed_over(struct kmt_cpu_reader *r, struct kmt_skip *g, struct kmt_diag *d, int err,
		       uint64_t from, uint64_t to, uint32_t chunks, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));

static int passed_over(struct kmt_cpu_reader *r, struct kmt_skip *g, struct kmt_diag *d, int err,
		       uint64_t from, uint64_t to, uint32_t chunks, const char *fmt, ...)
{
	char name[32];
	va_list ap;

	memset(g, 0, sizeof(*g));
	g->cpu = r->cd->cpu;
	g->from = from;
	g->to = MAX(from, to);
	g->chunks = chunks;
	g->err = err;
	va_start(ap, fmt);
	vsnprintf(g->why, sizeof(g->why), fmt, ap);
	va_end(ap);
	if (err == KMT_ETRUNC && r->cd->cut && to >= r->f->size) {
		g->cut = g->to_end = true;
		return kmt_diag_set(d, err, "%s: %s", r->f->path, g->why);
	}
	if (!d)
		return err;
	kmt_diag_set(d, err, "%s", g->why);
	return tf_fail(r->f, d, data_name(r, name, sizeof(name)), from);
}

/* The cut end of the data: from @from to where it should end, as a gap. */
static int cut_end(struct kmt_cpu_reader *r, struct kmt_skip *g, struct kmt_diag *d, uint64_t from,
		   uint32_t chunks)
{
	const struct kmt_cpu_data *cd = r->cd;
	uint64_t want = cd->offset + (r->z ? 4 : 0) + cd->want;
	char cut[160], more[64] = "";

	tf_cpu_cut(r->f, r->b, cd, cut, sizeof(cut));
	if (chunks)
		snprintf(more, sizeof(more), ": %u of %u chunks are missing", chunks, r->nr_chunks);
	passed_over(r, g, d, KMT_ETRUNC, from, MAX(want, r->f->size), chunks, "%s%s", cut, more);
	g->pages = r->z ? 0 : (uint32_t)((g->to - g->from + r->psize - 1) / r->psize);
	return g->err;
}

/*
 * A chunk whose header makes no sense, or which runs past the data: look
 * for the next one. Returns the error; the chain goes on there, or ends.
 */
static int bad_header(struct kmt_cpu_reader *r, struct zslot *s, const uint8_t *at, uint32_t csize,
		      uint32_t usize)
{
	const uint8_t *next = find_chunk(r, at + 1);
	struct kmt_file *f = r->f;
	/* The chunks left, if the count can be trusted. */
	uint32_t left = r->resync ? 0 : r->nr_chunks > s->idx ? r->nr_chunks - s->idx : 1;
	uint64_t have = (uint64_t)(r->chunks.end - at);
	char why[96];

	if (!next && r->cd->cut) {
		r->chain_end = true;
		return s->err = cut_end(r, &s->gap, &s->diag, s->off, left);
	}
	if (have < 8 || 8 + (uint64_t)csize > have)
		snprintf(why, sizeof(why), "chunk %u of %u runs past the CPU's data", s->idx + 1,
			 r->nr_chunks);
	else
		snprintf(why, sizeof(why), "chunk %u of %u: implausible size %u (from %u bytes, pages of %u)",
			 s->idx + 1, r->nr_chunks, usize, csize, r->psize);
	r->resync = true;
	if (!next) {
		r->chain_end = true;
		passed_over(r, &s->gap, &s->diag, KMT_ECOMPRESS, s->off, (uint64_t)(r->chunks.end - f->map),
			    MAX(left, 1), "%s; no chunk starts after it", why);
		s->gap.to_end = true;
		return s->err = s->gap.err;
	}
	r->chunks.p = next;
	return s->err = passed_over(r, &s->gap, &s->diag, KMT_ECOMPRESS, s->off, (uint64_t)(next - f->map),
				    1, "%s; the next chunk found starts at byte %" PRIu64, why,
				    (uint64_t)(next - f->map));
}

/* Inflate the next chunk into @s. Returns 0 or an error (in s->diag and s->gap). */
static int inflate_next(struct kmt_cpu_reader *r, struct zslot *s)
{
	struct kmt_file *f = r->f;
	const uint8_t *at = r->chunks.p, *src = NULL;
	uint32_t csize, usize;
	uint64_t c0 = kmt_thread_cpu_ns();
	int ret;

	s->idx = r->produced++;
	s->off = (uint64_t)(at - f->map);
	s->len = 0;
	csize = (uint32_t)cur_num(&r->chunks, 4);
	usize = (uint32_t)cur_num(&r->chunks, 4);
	if (!r->chunks.bad)
		src = cur_bytes(&r->chunks, csize);
	if (!src || !tf_usize_ok(r->psize, csize, usize)) {
		r->chunks.bad = false;
		r->chunks.p = at;
		return bad_header(r, s, at, csize, usize);
	}
	s->end = (uint64_t)(src + csize - f->map);
	if (usize > s->alloc) {
		uint8_t *nb = realloc(s->buf, usize);

		if (!nb) {
			r->chain_end = true;
			return s->err = kmt_diag_set(&s->diag, -ENOMEM, "out of memory");
		}
		s->buf = nb;
		s->alloc = usize;
	}
	ret = kmt_zdecompress(r->zc, s->buf, usize, src, csize);
	release_upto(r, s->end);
	__atomic_fetch_add(&f->inflate_ns[!r->threaded], kmt_thread_cpu_ns() - c0, __ATOMIC_RELAXED);
	__atomic_fetch_add(&f->data_read, s->end - s->off, __ATOMIC_RELAXED);
	if (ret)
		return s->err = passed_over(r, &s->gap, &s->diag, ret, s->off, s->end, 1,
					    "chunk %u of %u does not inflate to %u bytes", s->idx + 1,
					    r->nr_chunks, usize);
	s->len = usize;
	s->err = 0;
	return 0;
}

/* The reader that will need a chunk soonest: the emptiest ring with room. */
static struct kmt_cpu_reader *pool_pick(const struct tf_pool *p)
{
	struct kmt_cpu_reader *best = NULL;
	int i;

	for (i = 0; i < p->n; i++) {
		struct kmt_cpu_reader *r = p->r[i];

		if (r->busy || r->done || r->tail - r->head >= RING)
			continue;
		if (!best || r->tail - r->head < best->tail - best->head)
			best = r;
	}
	return best;
}

/*
 * A pool thread: inflate the next chunk of the neediest reader while any
 * has room, then sleep until a consumer has emptied half its ring. A
 * reader's chain of chunks is one thread's at a time (busy).
 */
static void *pool_main(void *arg)
{
	struct tf_pool *p = arg;

	pthread_setname_np(pthread_self(), "kmt-inflate");
	pthread_mutex_lock(&p->mu);
	while (!p->quit) {
		struct kmt_cpu_reader *r = pool_pick(p);
		struct zslot *s;

		if (!r) {
			/* Its CPU asleep, for --stats (two clock reads against a sleep and a wake-up). */
			uint64_t c0 = kmt_thread_cpu_ns();

			p->idle++;
			pthread_cond_wait(&p->work, &p->mu);
			p->idle--;
			__atomic_fetch_add(&p->f->wait_ns, kmt_thread_cpu_ns() - c0, __ATOMIC_RELAXED);
			continue;
		}
		r->busy = true;
		s = &r->ring[r->tail % RING];
		pthread_mutex_unlock(&p->mu);
		inflate_next(r, s);
		pthread_mutex_lock(&p->mu);
		r->tail++;
		r->busy = false;
		if (!more_chunks(r))
			r->done = true;
		pthread_cond_signal(&r->more);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Serve @r from the file's pool, made on first use. False: read it inline. */
static bool pool_join(struct kmt_file *f, struct kmt_cpu_reader *r)
{
	struct tf_pool *p = f->pool;

	if (!p) {
		if (!(p = calloc(1, sizeof(*p))))
			return false;
		p->f = f;
		pthread_mutex_init(&p->mu, NULL);
		pthread_cond_init(&p->work, NULL);
		p->threads = MIN(f->inflaters, MAX_INFLATERS);
		f->pool = p;
	}
	pthread_mutex_lock(&p->mu);
	if (ALLOC_GROW(p->r, (size_t)p->n + 1, p->alloc, 16)) {
		pthread_mutex_unlock(&p->mu);
		return false;
	}
	/* A thread per reader up to the pool's size: no more threads than rings. */
	if (p->started < p->threads && p->started < p->n + 1 &&
	    !pthread_create(&p->th[p->started], NULL, pool_main, p))
		p->started++;
	if (!p->started) {
		pthread_mutex_unlock(&p->mu);
		return false;
	}
	pthread_cond_init(&r->more, NULL);
	r->threaded = true;
	p->r[p->n++] = r;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->mu);
	return true;
}

/* @r is closed: no thread may touch it once this returns. */
static void pool_leave(struct tf_pool *p, struct kmt_cpu_reader *r)
{
	int i;

	pthread_mutex_lock(&p->mu);
	r->done = true;
	while (r->busy)
		kmt_cond_wait(&r->more, &p->mu);
	for (i = 0; i < p->n; i++)
		if (p->r[i] == r) {
			p->r[i] = p->r[--p->n];
			break;
		}
	pthread_mutex_unlock(&p->mu);
	pthread_cond_destroy(&r->more);
}

void tf_pool_free(struct tf_pool *p)
{
	int i;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->quit = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	for (i = 0; i < p->started; i++)
		pthread_join(p->th[i], NULL);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->mu);
	free(p->r);
	free(p);
}

int tf_pool_threads(const struct tf_pool *p)
{
	return p ? p->started : 0;
}

/* Compressed data: the chunk count, then the chunks (unless cut before). */
static void open_chunks(struct kmt_cpu_reader *r)
{
	struct kmt_file *f = r->f;
	const struct kmt_cpu_data *cd = r->cd;
	uint64_t avail = f->size - MIN(cd->offset, f->size);

	/* The recorded size counts the chunks, not the u32 count before them. */
	r->chunks.p = f->map + MIN(cd->offset, f->size);
	r->chunks.end = r->chunks.p + MIN(cd->size + 4, avail);
	r->chunks.be = f->info.big_endian;
	r->nr_chunks = (uint32_t)cur_num(&r->chunks, 4);
	if (r->chunks.bad) {
		/* Cut before the count: nothing of it can be read. */
		r->chain_end = true;
		r->gap_pending = true;
		cut_end(r, &r->gap, NULL, cd->offset, 0);
	} else if (r->nr_chunks > cd->want / 8) {
		/* A count that cannot be: find the chunks by their headers. */
		r->resync = true;
	}
}

int kmt_cpu_reader_open(struct kmt_cpu_reader **rp, struct kmt_file *f,
			int buffer, int idx, struct kmt_diag *d)
{
	const struct kmt_buffer *b = kmt_file_buffer(f, buffer);
	struct kmt_cpu_reader *r;

	*rp = NULL;
	if (!b || idx < 0 || idx >= b->nr_cpus)
		return kmt_diag_set(d, -EINVAL, "%s: no CPU #%d in buffer #%d", f->path, idx, buffer);
	r = calloc(1, sizeof(*r));
	if (!r)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	r->f = f;
	r->b = b;
	r->cd = &b->cpus[idx];
	r->psize = b->page_size;
	r->released = r->cd->offset;
	r->z = b->compressed && r->cd->want && r->cd->cpu >= 0;
	if (!r->z) {
		*rp = r;
		return 0;
	}
	open_chunks(r);
	r->zc = kmt_zctx_new(f->zalg, 0);
	if (!r->zc) {
		free(r);
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	}
	if (f->inflaters > 0 && more_chunks(r) && (r->resync || r->nr_chunks > 1))
		pool_join(f, r);
	*rp = r;
	return 0;
}

/* The next chunk, or NULL at the end; errors come through the slot. */
static struct zslot *next_chunk(struct kmt_cpu_reader *r)
{
	struct zslot *s;

	if (!r->threaded) {
		if (!more_chunks(r))
			return NULL;
		s = &r->ring[0];
		inflate_next(r, s);
		return s;
	}
	pthread_mutex_lock(&r->f->pool->mu);
	if (r->cur) {
		r->head++;		/* the previous chunk is done with */
		/* Half the ring free: wake a thread (half the wake-ups of one a chunk). */
		if (r->f->pool->idle && r->tail - r->head <= RING / 2)
			pthread_cond_signal(&r->f->pool->work);
	}
	while (r->head == r->tail && !r->done)
		kmt_cond_wait(&r->more, &r->f->pool->mu);
	s = r->head < r->tail ? &r->ring[r->head % RING] : NULL;
	pthread_mutex_unlock(&r->f->pool->mu);
	return s;
}

/* Raw data: the next whole page, or what is passed over instead. */
static int next_raw(struct kmt_cpu_reader *r, const uint8_t **page, struct kmt_diag *d)
{
	const struct kmt_cpu_data *cd = r->cd;
	uint64_t left = cd->size - MIN(r->pos, cd->size);

	r->page_off = cd->offset + r->pos;
	if (left >= r->psize) {
		*page = r->f->map + r->page_off;
		r->pos += r->psize;
		__atomic_fetch_add(&r->f->data_read, r->psize, __ATOMIC_RELAXED);
		/* Pages before the current one are done with. */
		release_upto(r, r->page_off);
		return 1;
	}
	if (r->end_said || (!left && !cd->cut))
		return 0;
	r->end_said = true;
	r->pos = cd->size;
	if (cd->cut)
		return cut_end(r, &r->gap, d, r->page_off, 0);
	passed_over(r, &r->gap, d, KMT_ETRUNC, r->page_off, r->page_off + left, 0,
		    "the last page has %" PRIu64 " of %u bytes", left, r->psize);
	r->gap.to_end = true;
	r->gap.pages = 1;
	return r->gap.err;
}

/* Compressed data: the next page of the current chunk, or the next chunk's. */
static int next_zpage(struct kmt_cpu_reader *r, const uint8_t **page, struct kmt_diag *d)
{
	if (!r->cur || r->buf_pos >= r->cur->len) {
		struct zslot *s = next_chunk(r);

		if (!s)
			return 0;
		r->cur = s;
		r->buf_pos = 0;
		if (s->err) {
			r->gap = s->gap;
			if (d)
				*d = s->diag;
			return s->err;
		}
	}
	*page = r->cur->buf + r->buf_pos;
	r->page_off = r->buf_pos;
	r->buf_pos += r->psize;
	return 1;
}

static int reader_next(struct kmt_cpu_reader *r, struct kmt_page *pg, struct kmt_diag *d)
{
	struct kmt_file *f = r->f;
	const uint8_t *page = NULL;
	int ret;

	if (r->gap_pending) {
		r->gap_pending = false;
		if (d)
			kmt_diag_set(d, r->gap.err, "%s: %s", f->path, r->gap.why);
		return r->gap.err;
	}
	ret = r->z ? next_zpage(r, &page, d) : next_raw(r, &page, d);
	if (ret <= 0)
		return ret;
	ret = kmt_page_load(pg, page, r->psize, &f->layout, f->info.big_endian, d);
	if (ret) {
		char why[160];

		/* This page only: the next goes on. */
		snprintf(why, sizeof(why), "%.150s", d ? d->msg : "bad page header");
		if (r->z)
			passed_over(r, &r->gap, NULL, ret, r->cur->off, r->cur->end, 0,
				    "chunk %u, page at +0x%" PRIx64 ": %s", r->cur->idx + 1, r->page_off, why);
		else
			passed_over(r, &r->gap, NULL, ret, r->page_off, r->page_off + r->psize, 0,
				    "page: %s", why);
		r->gap.pages = 1;
		return kmt_cpu_reader_fail(r, d);
	}
	return 1;
}

int kmt_cpu_reader_next(struct kmt_cpu_reader *r, struct kmt_page *pg, struct kmt_diag *d)
{
	int ret = reader_next(r, pg, d);

	if (r->f->observer.page)
		r->f->observer.page(r->f->observer.arg, r, ret, pg, d);
	return ret;
}

void kmt_cpu_reader_index(const struct kmt_cpu_reader *r, int *buffer, int *idx)
{
	*buffer = (int)(r->b - r->f->buffers);
	*idx = (int)(r->cd - r->b->cpus);
}

const struct kmt_skip *kmt_cpu_reader_skipped(const struct kmt_cpu_reader *r)
{
	return &r->gap;
}

const char *kmt_cpu_reader_where(struct kmt_cpu_reader *r)
{
	if (r->z)
		snprintf(r->where, sizeof(r->where), "CPU %d chunk %u, page at +%" PRIu64,
			 r->cd->cpu, r->cur ? r->cur->idx : 0, r->page_off);
	else
		snprintf(r->where, sizeof(r->where), "CPU %d page", r->cd->cpu);
	return r->where;
}

uint64_t kmt_cpu_reader_offset(const struct kmt_cpu_reader *r)
{
	return r->z ? (r->cur ? r->cur->off : r->cd->offset) : r->page_off;
}

uint64_t kmt_cpu_reader_in_chunk(const struct kmt_cpu_reader *r)
{
	return r->z ? r->page_off : 0;
}

int kmt_cpu_reader_cpu(const struct kmt_cpu_reader *r)
{
	return r->cd->cpu;
}

void kmt_cpu_reader_close(struct kmt_cpu_reader *r)
{
	int i;

	if (!r)
		return;
	if (r->threaded)
		pool_leave(r->f->pool, r);
	for (i = 0; i < RING; i++)
		free(r->ring[i].buf);
	kmt_zctx_free(r->zc);
	free(r);
}

int kmt_cpu_reader_fail(struct kmt_cpu_reader *r, struct kmt_diag *d)
{
	return tf_fail(r->f, d, kmt_cpu_reader_where(r), kmt_cpu_reader_offset(r));
}
