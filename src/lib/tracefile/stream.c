/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Merging per-CPU record streams by time (include/kmemtrace/tracefile.h),
 * the one read path of a file and of kmemtrace top's live pages: each
 * input's pages come from a page source (a file's per-CPU readers here,
 * or the live queue), each CPU keeps a cursor on its current page and
 * record, and a small binary heap of CPU indices ordered by the head
 * record's timestamp picks the next one. Memory: one page (or chunk) per
 * CPU. What a CPU's source passes over (a damaged chunk or page, a cut
 * end) becomes one marker at the CPU's last record before it, so that it
 * comes out before anything the gap may hide. A live input with no page
 * yet waits; then only records up to the safe time go out.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmemtrace/tracefile.h>
#include "tf-local.h"

struct cpu_cur {
	struct kmt_stream *s;
	int i;				/* its input of the source */
	struct kmt_page pg;
	struct kmt_page_iter it;
	struct kmt_rec head;		/* valid if has_head */
	bool has_head;
	bool done;
	bool waiting;			/* live: no page yet */
	int64_t pending_lost;		/* loss to report before head */
	bool has_lost;
	bool truncated;			/* the recording of this CPU stopped early */
	bool end_marked;		/* its end marker was handed out */
	struct kmt_skip gap;		/* what the reader passed over since the last record */
	bool in_gap;
	bool has_gap;			/* the marker before head is that gap */
	struct kmt_skip gap_out;	/* the gap handed out last */
	uint64_t last_ts;		/* of the record handed out last */
	bool odd;			/* watched: the page is to be walked again at its end */
	uint64_t page_prev;		/* ... and the last record's time before it */
	int cpu;
	int buffer;
};

struct kmt_stream {
	struct kmt_page_source src;
	struct kmt_cpu_reader **r;	/* a file's readers (the file source) */
	int n;
	struct cpu_cur *c;
	int *heap;
	int heap_n;
	int nwaiting;			/* live inputs with no page yet */
	uint64_t safe;			/* live: hand out nothing after this */
	bool advance;			/* heap[0] was handed out: move it on */
	int part, nparts;		/* a file's inputs i % nparts == part (kmt_stream_open_buffers()) */
	/* The file's observer: with ob.walked, the records are walked for it (check). */
	struct kmt_page_observer ob;
	const struct kmt_formats *fmts;
	bool be;
};

/* The file source: input i is the stream's reader i. */
static int file_next(void *arg, int i, struct kmt_page *pg, struct kmt_diag *d)
{
	return kmt_cpu_reader_next(((struct kmt_stream *)arg)->r[i], pg, d);
}

static const struct kmt_skip *file_skipped(void *arg, int i)
{
	return kmt_cpu_reader_skipped(((struct kmt_stream *)arg)->r[i]);
}

static const char *file_where(void *arg, int i)
{
	return kmt_cpu_reader_where(((struct kmt_stream *)arg)->r[i]);
}

static uint64_t file_offset(void *arg, int i)
{
	return kmt_cpu_reader_offset(((struct kmt_stream *)arg)->r[i]);
}

static uint64_t file_in_chunk(void *arg, int i)
{
	return kmt_cpu_reader_in_chunk(((struct kmt_stream *)arg)->r[i]);
}

/* Hand out a marker before the next record: a loss, a cut end, a gap. */
static int marker(struct cpu_cur *c, int64_t lost, uint64_t ts)
{
	c->has_lost = true;
	c->pending_lost = lost;
	c->head.ts = ts;
	c->head.data = NULL;
	c->head.len = 0;
	c->has_head = true;
	return 1;
}

/* One more thing passed over; consecutive ones make one gap. */
static void add_skip(struct cpu_cur *c, const struct kmt_skip *s)
{
	struct kmt_skip *g = &c->gap;

	if (!c->in_gap) {
		*g = *s;
		g->buffer = c->buffer;
		g->cpu = c->cpu;
		g->ts_from = c->last_ts;
		c->in_gap = true;
		return;
	}
	g->to = MAX(g->to, s->to);
	g->chunks += s->chunks;
	g->pages += s->pages;
	g->to_end |= s->to_end;
	g->cut |= s->cut;
}

/* The gap is over at @ts (UINT64_MAX: the data ends with it): its marker. */
static int gap_marker(struct cpu_cur *c, uint64_t ts)
{
	c->in_gap = false;
	c->has_gap = true;
	c->gap.ts_to = ts;
	c->gap_out = c->gap;
	return marker(c, -1, c->gap.ts_from);
}

/* What the walk of a watched CPU's page saw (@r: the record), to its observer. */
static void walk_note(struct cpu_cur *c, enum kmt_walk_what what, uint64_t ts, uint64_t back,
		      const struct kmt_rec *r, const char *msg)
{
	struct kmt_stream *s = c->s;
	struct kmt_walk_note n = { .what = what, .ts = ts, .back = back, .msg = msg };

	if (r) {
		n.offset = r->offset;
		n.id = r->len >= 2 ? ld16(r->data, s->be) : 0;
	}
	s->ob.walked(s->ob.arg, s->r[c->i], &n);
}

static bool id_unknown(const struct kmt_stream *s, const struct kmt_rec *r)
{
	uint32_t id;

	return r->len >= 2 && ((id = ld16(r->data, s->be)) > s->fmts->max_id || !s->fmts->by_id[id]);
}

/* Could the page's times pass 2^64? Each 4 bytes of it add less than 2^27 ns. */
static bool near_wrap(const struct kmt_page *pg)
{
	return pg->ts > UINT64_MAX - ((uint64_t)pg->data_len << 25);
}

/*
 * A watched CPU's page is done. Its records' times only go back when the
 * page starts back, after an absolute time stamp, or past 2^64 (after
 * time extends, or from a page time near it); an id no format describes
 * showed when the record was not decoded (kmt_stream_undecoded()); a walk
 * that fails showed where it stopped. Only such a page is walked again,
 * here, for its observer, in the order of its records: nothing is done
 * for the others' records.
 */
static void page_done(struct cpu_cur *c)
{
	struct kmt_page_iter it;
	struct kmt_diag d = { 0 };
	struct kmt_rec rec;
	uint64_t last = c->page_prev;
	int ret;

	if (!c->odd && !c->it.nr_abs && !c->it.nr_ext)
		return;
	kmt_page_iter_init(&it, &c->pg);
	while ((ret = kmt_page_next(&it, &rec, &d)) > 0) {
		if (rec.ts < last)
			walk_note(c, KMT_WALK_BACK, rec.ts, last - rec.ts, &rec, NULL);
		last = rec.ts;
		if (id_unknown(c->s, &rec))
			walk_note(c, KMT_WALK_UNKNOWN_ID, rec.ts, 0, &rec, NULL);
	}
	if (ret < 0)
		walk_note(c, KMT_WALK_BROKEN, it.ts, 0, NULL, d.msg);
}

/* The rest of the current page cannot be walked: passed over. */
static void page_broken(struct cpu_cur *c, struct kmt_diag *d)
{
	const struct kmt_page_source *src = &c->s->src;
	struct kmt_skip s = { .pages = 1, .err = d ? d->err : KMT_EFORMAT };

	c->odd = true;		/* watched: said by page_done() */
	s.from = s.to = src->offset(src->arg, c->i);
	/* As tf_fail() says where: a compressed page's place in its chunk is in where(). */
	snprintf(s.why, sizeof(s.why), "%s at offset %" PRIu64 ": %.120s; the rest of the page is skipped",
		 src->where(src->arg, c->i), s.from, d ? d->msg : "");
	add_skip(c, &s);
}

/*
 * CPU @c's next record or marker after its page ran out; 1 ok, 0 end,
 * -EAGAIN no page yet (live: c->waiting), < 0 error.
 */
static int cur_advance_slow(struct cpu_cur *c, int walked, struct kmt_diag *d)
{
	const struct kmt_page_source *src = &c->s->src;
	int ret;

	if (walked < 0)
		page_broken(c, d);
	if (c->s->ob.walked && c->pg.base)
		page_done(c);
	for (;;) {
		c->pg.base = NULL;
		ret = src->next(src->arg, c->i, &c->pg, d);
		if (ret == -ENOMEM)
			return ret;
		if (ret == -EAGAIN) {
			c->has_head = false;
			c->waiting = true;
			return ret;
		}
		if (ret < 0) {
			add_skip(c, src->skipped(src->arg, c->i));
			continue;
		}
		if (ret == 0 && !c->end_marked && (c->in_gap || c->truncated)) {
			/* Where a CPU's data stops early, its events go missing. */
			c->end_marked = true;
			return c->in_gap ? gap_marker(c, UINT64_MAX) : marker(c, -1, c->last_ts);
		}
		if (ret == 0) {
			c->has_head = false;
			c->done = true;
			return 0;
		}
		kmt_page_iter_init(&c->it, &c->pg);
		if (c->s->ob.walked) {
			/* The last record handed out is the last walked: the stream hands out all. */
			c->page_prev = c->last_ts;
			c->odd = near_wrap(&c->pg);
			if (c->pg.ts < c->last_ts) {
				walk_note(c, KMT_WALK_PAGE_BACK, c->pg.ts, c->last_ts - c->pg.ts, NULL, NULL);
				c->odd = true;	/* its first records may be before that too */
			}
		}
		if (c->in_gap)
			return gap_marker(c, c->pg.ts);
		if (c->pg.missed)
			return marker(c, c->pg.lost, c->pg.ts);
		ret = kmt_page_next(&c->it, &c->head, d);
		if (ret > 0) {
			c->has_head = true;
			return 1;
		}
		if (ret < 0)
			page_broken(c, d);
		if (c->s->ob.walked)
			page_done(c);
	}
}

/*
 * The head's bytes after its header's line, and the next header, asked
 * for now: whoever reads them (a copy, a decoder) comes when the other
 * CPUs' heads have gone, and with many CPUs the hardware's prefetcher
 * loses track of that many streams (48 CPUs of stacks: the copy of the
 * records was half the producer's time, waiting for memory, in one
 * hour's runs).
 */
static inline void prefetch_head(const struct kmt_rec *h)
{
	const char *p = (const char *)h->data, *end = p + h->len + 4;

	for (p += 64; p < end + 64; p += 64)
		__builtin_prefetch(p);
}

static inline int cur_advance(struct cpu_cur *c, struct kmt_diag *d)
{
	int ret = 0;

	if (c->pg.base) {
		ret = kmt_page_next(&c->it, &c->head, d);
		if (ret > 0) {
			c->has_head = true;
			prefetch_head(&c->head);
			return 1;
		}
	}
	return cur_advance_slow(c, ret, d);
}

static inline bool before(const struct kmt_stream *s, int a, int b)
{
	uint64_t ta = s->c[a].head.ts, tb = s->c[b].head.ts;

	return ta < tb || (ta == tb && a < b);
}

static inline void sift_down(struct kmt_stream *s, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i, t;

		if (l < s->heap_n && before(s, s->heap[l], s->heap[m]))
			m = l;
		if (r < s->heap_n && before(s, s->heap[r], s->heap[m]))
			m = r;
		if (m == i)
			return;
		t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

static inline void sift_up(struct kmt_stream *s, int i)
{
	while (i > 0) {
		int p = (i - 1) / 2, t;

		if (!before(s, s->heap[i], s->heap[p]))
			return;
		t = s->heap[i];
		s->heap[i] = s->heap[p];
		s->heap[p] = t;
		i = p;
	}
}

static bool cpu_truncated(const struct kmt_buffer *b, int cpu)
{
	int i;

	for (i = 0; i < b->nr_stats; i++)
		if (b->stats[i].cpu == cpu)
			return b->stats[i].truncated;
	return false;
}

/*
 * A marker before a CPU's first record (a gap or a cut at the start of its
 * data) comes at the trace's first record, not at time 0: that of all
 * the stream's inputs, or of all parts' (kmt_stream_set_start()).
 */
uint64_t kmt_stream_start_ts(const struct kmt_stream *s)
{
	uint64_t start = UINT64_MAX;
	int i;

	for (i = 0; i < s->heap_n; i++) {
		const struct cpu_cur *c = &s->c[s->heap[i]];

		if (!c->has_lost)
			start = MIN(start, c->head.ts);
		else if (c->has_gap && c->gap_out.ts_to != UINT64_MAX)
			start = MIN(start, c->gap_out.ts_to);
		else if (c->head.ts)
			start = MIN(start, c->head.ts);
	}
	return start;
}

static void start_markers(struct kmt_stream *s, uint64_t start)
{
	int i;

	for (i = 0; start != UINT64_MAX && i < s->heap_n; i++) {
		struct cpu_cur *c = &s->c[s->heap[i]];

		if (c->has_lost && !c->head.ts) {
			c->head.ts = start;
			if (c->has_gap)
				c->gap_out.ts_from = start;
		}
	}
}

/* @n cursors and the heap, each input's first record read (a part: kmt_stream_set_start() heaps them). */
static int stream_start(struct kmt_stream *s, const int *cpus, const int *buffers,
			const bool *truncated, int n, struct kmt_diag *d)
{
	int i, ret;

	s->safe = UINT64_MAX;
	s->c = calloc((size_t)n + 1, sizeof(*s->c));
	s->heap = calloc((size_t)n + 1, sizeof(*s->heap));
	if (!s->c || !s->heap)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		struct cpu_cur *c = &s->c[s->n++];

		c->s = s;
		c->i = i;
		c->cpu = cpus[i];
		c->buffer = buffers ? buffers[i] : 0;
		c->truncated = truncated && truncated[i];
		ret = cur_advance(c, d);
		if (ret == -EAGAIN) {
			s->nwaiting++;
			continue;
		}
		if (ret < 0)
			return ret;
		if (ret > 0)
			s->heap[s->heap_n++] = s->n - 1;
	}
	if (s->nparts == 1)
		kmt_stream_set_start(s, kmt_stream_start_ts(s));
	return 0;
}

void kmt_stream_set_start(struct kmt_stream *s, uint64_t start)
{
	int i;

	start_markers(s, start);
	for (i = s->heap_n / 2 - 1; i >= 0; i--)
		sift_down(s, i);
}

int kmt_stream_input(const struct kmt_stream *s, int idx)
{
	return idx * s->nparts + s->part;
}

struct kmt_stream *kmt_stream_open_buffers(struct kmt_file *f, const int *buffers, int nr, int part,
					   int nparts, struct kmt_diag *d)
{
	struct kmt_stream *s;
	int *cpus = NULL, *bufs = NULL;
	bool *trunc = NULL;
	int i, j, n = 0, g = 0, ret;

	for (j = 0; j < nr; j++) {
		const struct kmt_buffer *b = kmt_file_buffer(f, buffers[j]);

		if (!b) {
			kmt_diag_set(d, -EINVAL, "no buffer #%d", buffers[j]);
			return NULL;
		}
		n += b->nr_cpus;
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->r = calloc((size_t)n + 1, sizeof(*s->r))) || !(cpus = calloc((size_t)n + 1, sizeof(*cpus))) ||
	    !(bufs = calloc((size_t)n + 1, sizeof(*bufs))) || !(trunc = calloc((size_t)n + 1, sizeof(*trunc)))) {
		kmt_diag_set(d, -ENOMEM, "out of memory");
		goto fail;
	}
	s->src = (struct kmt_page_source){ file_next, file_skipped, file_where, file_offset, file_in_chunk, s };
	s->ob = f->observer;
	s->fmts = &f->formats;
	s->be = f->info.big_endian;
	s->part = part;
	s->nparts = nparts;
	for (n = 0, j = 0; j < nr; j++) {
		const struct kmt_buffer *b = kmt_file_buffer(f, buffers[j]);

		for (i = 0; i < b->nr_cpus; i++, g++) {
			if (g % nparts != part)
				continue;
			cpus[n] = b->cpus[i].cpu;
			bufs[n] = buffers[j];
			trunc[n] = cpu_truncated(b, cpus[n]);
			ret = kmt_cpu_reader_open(&s->r[n++], f, buffers[j], i, d);
			if (ret)
				goto fail;
		}
	}
	if (stream_start(s, cpus, bufs, trunc, n, d))
		goto fail;
	free(cpus);
	free(bufs);
	free(trunc);
	return s;
fail:
	free(cpus);
	free(bufs);
	free(trunc);
	kmt_stream_close(s);
	return NULL;
}

struct kmt_stream *kmt_stream_open_source(const struct kmt_page_source *src, const int *cpus, int n,
					  struct kmt_diag *d)
{
	struct kmt_stream *s = calloc(1, sizeof(*s));

	if (!s) {
		kmt_diag_set(d, -ENOMEM, "out of memory");
		return NULL;
	}
	s->src = *src;
	s->nparts = 1;
	if (stream_start(s, cpus, NULL, NULL, n, d)) {
		kmt_stream_close(s);
		return NULL;
	}
	return s;
}

void kmt_stream_set_safe(struct kmt_stream *s, uint64_t ts)
{
	s->safe = ts;
}

/* Live inputs that had no page: those that have one now join the heap. */
static int wake(struct kmt_stream *s, struct kmt_diag *d)
{
	int i, ret;

	for (i = 0; i < s->n && s->nwaiting; i++) {
		struct cpu_cur *c = &s->c[i];

		if (!c->waiting)
			continue;
		ret = cur_advance(c, d);
		if (ret == -EAGAIN)
			continue;
		c->waiting = false;
		s->nwaiting--;
		if (ret < 0)
			return ret;
		if (ret > 0) {
			s->heap[s->heap_n++] = i;
			sift_up(s, s->heap_n - 1);
		}
	}
	return 0;
}

/* The heap's top CPU moves on: it stays, waits (live) or is done. 0, or < 0 error. */
static inline __attribute__((always_inline)) int advance_top(struct kmt_stream *s, struct kmt_diag *d)
{
	int ret = cur_advance(&s->c[s->heap[0]], d);

	if (ret == -EAGAIN)
		s->nwaiting++;
	else if (ret < 0)
		return ret;
	if (ret <= 0)
		s->heap[0] = s->heap[--s->heap_n];
	sift_down(s, 0);
	return 0;
}

int kmt_stream_next(struct kmt_stream *s, struct kmt_srec *out, struct kmt_diag *d)
{
	struct cpu_cur *c;
	int ret;

	/*
	 * Advance the CPU handed out last time only now: its record points into
	 * a page (or chunk buffer) that moving on may overwrite.
	 */
	if (s->advance && s->heap_n) {
		s->advance = false;
		if ((ret = advance_top(s, d)) < 0)
			return ret;
	}
	if (s->nwaiting && (ret = wake(s, d)))
		return ret;
	if (!s->heap_n)
		return s->nwaiting ? -EAGAIN : 0;
	c = &s->c[s->heap[0]];
	if (c->head.ts > s->safe)
		return -EAGAIN;
	out->cpu = c->cpu;
	out->buffer = c->buffer;
	out->idx = s->heap[0];
	/*
	 * Field by field: the head was just written that way, and a wider
	 * load across those stores (a struct copy) cannot be forwarded from
	 * them and stalls.
	 */
	out->rec.ts = c->head.ts;
	__asm__ volatile("" ::: "memory");
	out->rec.data = c->head.data;
	out->rec.len = c->head.len;
	out->rec.offset = c->head.offset;
	out->lost_marker = c->has_lost;
	out->lost = c->has_lost ? c->pending_lost : 0;
	out->truncated = c->has_lost && c->end_marked;
	out->skip = c->has_lost && c->has_gap ? &c->gap_out : NULL;
	if (c->has_lost) {
		/* The page's first record is still to come: no advance. */
		c->has_lost = false;
		c->has_gap = false;
		c->has_head = false;
		return (ret = advance_top(s, d)) < 0 ? ret : 1;
	}
	c->last_ts = c->head.ts;
	s->advance = true;
	return 1;
}

struct kmt_stream *kmt_stream_open(struct kmt_file *f, int buffer, struct kmt_diag *d)
{
	return kmt_stream_open_buffers(f, &buffer, 1, 0, 1, d);
}

void kmt_stream_undecoded(struct kmt_stream *s, const struct kmt_srec *sr)
{
	if (s->ob.walked && id_unknown(s, &sr->rec))
		s->c[sr->idx].odd = true;	/* said by page_done() */
}

uint64_t kmt_stream_offset(const struct kmt_stream *s, int idx)
{
	return s->src.offset(s->src.arg, s->c[idx].i);
}

void kmt_stream_close(struct kmt_stream *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; s->r && s->r[i]; i++)
		kmt_cpu_reader_close(s->r[i]);
	free(s->r);
	free(s->c);
	free(s->heap);
	free(s);
}
