/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The producer's side of kmt_analyse()'s ring (analyse-local.h), for the
 * one stream's producer (analyse.c) and the merge of the parts
 * (analyse-parts.c) alike: the batch being filled and its arena, handing
 * it over, and what each thing of the stream becomes in it — the trace's
 * start and window, markers (losses, cut ends, parts passed over), the
 * record count and the window's end.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analyse-local.h"

/* Hand the batch being filled over; false if the consumer wants no more. */
bool hand(struct job *j)
{
	struct batch *b = filling(j);
	bool go;

	if (!b->n)
		return !j->stop;
	if (!j->threaded) {
		consume(j, j->m, b);
		go = !j->mret;
	} else {
		/* Full: it waits for room for several, not one (fewer wake-ups). */
		kmt_handoff_give(j->h);
		j->prod = kmt_handoff_room(j->h);
		if (kmt_handoff_stopped(j->h))
			return false;	/* (the ring may be full: touch none of it) */
		go = true;
	}
	/* The next to fill: this one again on one thread, else one the consumer is done with. */
	batch_reset(filling(j));
	return go;
}

bool arena_grow(struct arena *a, size_t need, size_t min)
{
	/* Empty: nothing points into the old one. */
	size_t cap = MAX(need, min);
	char *p = realloc(a->p, cap);

	if (!p)
		return false;
	a->p = p;
	a->cap = cap;
	return true;
}

const void *arena_keep(struct arena *a, const void *p, size_t len)
{
	char *to;

	if (!len)
		return p;	/* (the arena may not exist yet) */
	to = a->p + a->used;
	memcpy(to, p, len);
	a->used += len;
	return to;
}

void arena_keep_event(struct arena *a, struct kmt_event *ev)
{
	ev->name = arena_keep(a, ev->name, ev->name_len);
	ev->str2 = arena_keep(a, ev->str2, ev->str2_len);
	ev->stack = arena_keep(a, ev->stack, (size_t)ev->nr_stack * ev->stack_word);
}

/* Room for @need arena bytes in a batch with a free slot; NULL: stop. */
struct batch *room(struct job *j, size_t need)
{
	struct batch *b = filling(j);

	if ((b->n == BATCH || b->ar.used + need > b->ar.cap) && !hand(j))
		return NULL;
	b = filling(j);
	if (need > b->ar.cap && !arena_grow(&b->ar, need, (size_t)64 << 10)) {
		j->ret = kmt_diag_set(&j->d, -ENOMEM, "out of memory");
		return NULL;
	}
	return b;
}

/* Queue @ev (and copies of what it points to) as @what. */
bool put_event(struct job *j, const struct kmt_event *ev, enum item what)
{
	struct batch *b = room(j, ev_bytes(ev));

	if (!b)
		return false;
	b->ev[b->n] = *ev;
	arena_keep_event(&b->ar, &b->ev[b->n]);
	b->evp[b->n] = &b->ev[b->n];
	b->what[b->n++] = (uint8_t)what;
	return true;
}

/* @mk (and @skip, may be NULL) as the batch's next item (batch_marker() reads it back). */
static bool put_marker(struct job *j, const struct kmt_marker *mk, const struct kmt_skip *skip)
{
	struct batch *b = room(j, skip ? sizeof(*skip) + 7 : 0);

	if (!b)
		return false;
	batch_put_marker(b, mk, skip);
	return true;
}

void batch_put_marker(struct batch *b, const struct kmt_marker *mk, const struct kmt_skip *skip)
{
	b->ev[b->n] = (struct kmt_event){ .cpu = mk->cpu, .ts = mk->ts, .bytes_req = (uint64_t)mk->lost,
					  .bytes_alloc = mk->to };
	if (skip) {
		/* A struct: on its alignment, after strings of any length. */
		b->ar.used = ALIGN_UP(b->ar.used, 8);
		b->ev[b->n].str2 = arena_keep(&b->ar, skip, sizeof(*skip));
	}
	b->evp[b->n] = &b->ev[b->n];
	b->what[b->n++] = (uint8_t)(IT_MARK + mk->kind);
}

/* A part of a damaged file passed over, kept for the caller. */
static bool keep_skip(struct job *j, const struct kmt_skip *g)
{
	struct kmt_skip *v = realloc(j->res.skipped, sizeof(*v) * (j->res.nr_skipped + 1));

	if (!v) {
		j->ret = kmt_diag_set(&j->d, -ENOMEM, "out of memory");
		return false;
	}
	j->res.skipped = v;
	v[j->res.nr_skipped++] = *g;
	return true;
}

int analyse_misfit(const struct job *j, struct kmt_diag *d, int ret, const struct kmt_stream *s,
		   const struct kmt_srec *sr)
{
	const struct kmt_file_info *fi = kmt_file_info(j->f);

	return kmt_diag_set(d, ret, "%s: CPU %d, page at offset %" PRIu64
			    ": a record (id %u, %u bytes) does not fit its format", fi->path, sr->cpu,
			    kmt_stream_offset(s, sr->idx), sr->rec.len >= 2 ? ld16(sr->rec.data, fi->big_endian) : 0,
			    sr->rec.len);
}

struct kmt_stream *analyse_stream(const struct job *j, int k, int n, struct kmt_diag *d)
{
	int bufs[2] = { j->buffer, kmt_file_access_buffer(j->f) };

	return kmt_stream_open_buffers(j->f, bufs, bufs[1] >= 0 && bufs[1] != j->buffer ? 2 : 1, k, n, d);
}

/* The first thing of the stream, at @ts: the trace's start, and the window from it. */
static void start_at(struct job *j, uint64_t ts)
{
	const struct kmt_analyse_opts *o = j->o;

	j->started = true;
	j->res.t0 = ts;
	if (o && o->t0)
		*o->t0 = j->res.t0;
	if (o && o->t_start > 0)
		j->lo = kmt_window_at(j->res.t0, o->t_start);
	if (o && o->t_end >= 0)
		j->hi = kmt_window_at(j->res.t0, o->t_end);
}

/* A marker, to the model where it meets the window (kmt_marker_in()). */
int take_marker(struct job *j, const struct kmt_srec *sr)
{
	struct kmt_marker mk;

	if (!j->started)
		start_at(j, sr->rec.ts);
	if (sr->skip && !keep_skip(j, sr->skip))
		return T_FAIL;
	kmt_marker_of(sr, j->buffer, &mk);
	if (!kmt_marker_in(&mk, j->lo, j->hi))
		return T_GO;
	return put_marker(j, &mk, sr->skip) ? T_GO : T_FAIL;
}

/* A record at @ts: counted, and the end of the window found. */
int take_record(struct job *j, uint64_t ts)
{
	if (!j->started)
		start_at(j, ts);
	j->res.records++;
	if (ts > j->hi) {
		j->past_hi = true;
		return T_STOP;
	}
	j->seen = ts;
	return T_GO;
}
