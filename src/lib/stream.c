/*
 * Merging per-CPU record streams by time (include/kmemtrace/stream.h).
 * Each CPU keeps a cursor on its current page and record; a small binary
 * heap of CPU indices ordered by the head record's timestamp picks the
 * next one. Memory: one page (or chunk) per CPU.
 */
#include <errno.h>
#include <stdlib.h>

#include <kmemtrace/stream.h>
#include "kmt-local.h"

struct cpu_cur {
	struct kmt_cpu_reader *r;
	struct kmt_page pg;
	struct kmt_page_iter it;
	struct kmt_rec head;		/* valid if has_head */
	bool has_head;
	bool done;
	int64_t pending_lost;		/* loss to report before head */
	bool has_lost;
	bool truncated;			/* the recording of this CPU stopped early */
	bool end_marked;		/* its end marker was handed out */
	uint64_t last_ts;		/* of the record handed out last */
	int cpu;
	int buffer;
};

struct kmt_stream {
	int n;
	struct cpu_cur *c;
	int *heap;
	int heap_n;
	bool advance;			/* heap[0] was handed out: move it on */
};

/* Advance CPU @i to its next record; 1 ok, 0 end, < 0 error. */
static int cur_advance_slow(struct cpu_cur *c, struct kmt_diag *d)
{
	int ret;

	for (;;) {
		if (c->pg.base) {
			ret = kmt_page_next(&c->it, &c->head, d);
			if (ret > 0) {
				c->has_head = true;
				return 1;
			}
			if (ret < 0)
				return kmt_cpu_reader_fail(c->r, d);
		}
		ret = kmt_cpu_reader_next(c->r, &c->pg, d);
		if (ret == 0 && c->truncated && !c->end_marked) {
			/* Where a truncated CPU stops, its events go missing. */
			c->pg.base = NULL;
			c->end_marked = true;
			c->has_lost = true;
			c->pending_lost = -1;
			c->head.ts = c->last_ts;
			c->head.data = NULL;
			c->head.len = 0;
			c->has_head = true;
			return 1;
		}
		if (ret <= 0) {
			c->pg.base = NULL;
			c->has_head = false;
			c->done = true;
			return ret;
		}
		kmt_page_iter_init(&c->it, &c->pg);
		if (c->pg.missed) {
			c->has_lost = true;
			c->pending_lost = c->pg.lost;
			c->head.ts = c->pg.ts;
			c->head.data = NULL;
			c->head.len = 0;
			c->has_head = true;
			return 1;
		}
	}
}

static inline int cur_advance(struct cpu_cur *c, struct kmt_diag *d)
{
	if (c->pg.base && kmt_page_next(&c->it, &c->head, d) > 0) {
		c->has_head = true;
		return 1;
	}
	return cur_advance_slow(c, d);
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

static bool cpu_truncated(const struct kmt_buffer *b, int cpu)
{
	int i;

	for (i = 0; i < b->nr_stats; i++)
		if (b->stats[i].cpu == cpu)
			return b->stats[i].truncated;
	return false;
}

struct kmt_stream *kmt_stream_open_buffers(struct kmt_file *f, const int *buffers, int nr,
					   struct kmt_diag *d)
{
	struct kmt_stream *s;
	int i, j, ret;

	for (j = 0, i = 0; j < nr; j++) {
		const struct kmt_buffer *b = kmt_file_buffer(f, buffers[j]);

		if (!b) {
			kmt_diag_set(d, -EINVAL, "no buffer #%d", buffers[j]);
			return NULL;
		}
		i += b->nr_cpus;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto nomem;
	s->c = calloc((size_t)i + 1, sizeof(*s->c));
	s->heap = calloc((size_t)i + 1, sizeof(*s->heap));
	if (!s->c || !s->heap)
		goto nomem;
	for (j = 0; j < nr; j++) {
		const struct kmt_buffer *b = kmt_file_buffer(f, buffers[j]);

		for (i = 0; i < b->nr_cpus; i++) {
			struct cpu_cur *c = &s->c[s->n++];

			c->cpu = b->cpus[i].cpu;
			c->buffer = buffers[j];
			c->truncated = cpu_truncated(b, c->cpu);
			ret = kmt_cpu_reader_open(&c->r, f, buffers[j], i, d);
			if (ret)
				goto fail;
			ret = cur_advance(c, d);
			if (ret < 0)
				goto fail;
			if (ret > 0)
				s->heap[s->heap_n++] = s->n - 1;
		}
	}
	for (i = s->heap_n / 2 - 1; i >= 0; i--)
		sift_down(s, i);
	return s;
nomem:
	kmt_diag_set(d, -ENOMEM, "out of memory");
fail:
	kmt_stream_close(s);
	return NULL;
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
		ret = cur_advance(&s->c[s->heap[0]], d);
		if (ret < 0)
			return ret;
		if (ret == 0)
			s->heap[0] = s->heap[--s->heap_n];
		sift_down(s, 0);
	}
	if (!s->heap_n)
		return 0;
	c = &s->c[s->heap[0]];
	out->cpu = c->cpu;
	out->buffer = c->buffer;
	out->idx = s->heap[0];
	out->rec = c->head;
	out->lost_marker = c->has_lost;
	out->lost = c->has_lost ? c->pending_lost : 0;
	out->truncated = c->has_lost && c->end_marked;
	if (c->has_lost) {
		/* The page's first record is still to come: no advance. */
		c->has_lost = false;
		c->has_head = false;
		ret = cur_advance(c, d);
		if (ret < 0)
			return ret;
		if (ret == 0)
			s->heap[0] = s->heap[--s->heap_n];
		sift_down(s, 0);
		return 1;
	}
	c->last_ts = c->head.ts;
	s->advance = true;
	return 1;
}

struct kmt_stream *kmt_stream_open(struct kmt_file *f, int buffer, struct kmt_diag *d)
{
	return kmt_stream_open_buffers(f, &buffer, 1, d);
}

uint64_t kmt_stream_offset(const struct kmt_stream *s, int idx)
{
	return kmt_cpu_reader_offset(s->c[idx].r);
}

void kmt_stream_close(struct kmt_stream *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; s->c && i < s->n; i++)
		kmt_cpu_reader_close(s->c[i].r);
	free(s->c);
	free(s->heap);
	free(s);
}
