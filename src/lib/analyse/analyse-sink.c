/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An object hook in shards (analyse-local.h; kmt_model_hooks.clone in
 * include/kmemtrace/analyse.h): kmemtrace kmap writes its records on every
 * shard's thread, and they come out in the one model's order.
 *
 * Shard k's model calls sink_object() with shard k's struct sink, which
 * calls the consumer's hook with shard k's clone; the clone writes to a
 * stream of the shard's (fopencookie(): a stdio buffer, whose bytes go to
 * the slot of the batch being taken, one slot per batch of the ring).
 * After a call that wrote something, the sink notes the stream position
 * of the event being taken (model_pos(): every shard counts the same
 * positions) and where the writing ends in the slot; when the shard is
 * done with the batch, the stream is flushed into the slot. Once every
 * shard is done with a batch, the thread that finds it so writes the
 * batch's slots out, merged by position: an event's objects are all its
 * one shard's, in that shard's order. The producer fills a batch again
 * only once it is written (the hand-over's last taker: ring_start()). A consumer with no output (it
 * adds up: export to pprof) writes nothing, and is only folded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "analyse-local.h"

/* The clone's stream buffer: a batch's writings in a few copies. */
#define SINK_BUF (64 << 10)

/* One call's writing: its event's stream position, and where it ends in the slot. */
struct writing {
	uint64_t pos;
	size_t end;
};

/* What a shard wrote for one batch of the ring. */
struct slot {
	char *p;
	size_t len, cap;
	struct writing *w;
	size_t n, alloc;
};

/* A shard's (a cache line of its own: each shard writes its own). */
struct sink {
	struct job *j;
	struct kmt_model *m;
	void *clone;
	FILE *fp;			/* the clone's stream: its bytes go to cur */
	struct slot *cur;		/* the batch being taken */
	bool failed;			/* no memory, or a writing outside a batch */
	struct slot slot[NB];
} LINE;

/* The stream's buffer full, or flushed: its bytes to the batch's slot. */
static ssize_t sink_bytes(void *arg, const char *buf, size_t size)
{
	struct sink *s = arg;
	struct slot *sl = s->cur;

	if (!sl) {
		s->failed = true;
		return (ssize_t)size;
	}
	if (sl->len + size > sl->cap) {
		size_t nc = MAX(2 * sl->cap, sl->len + size);
		char *np = realloc(sl->p, nc);

		if (!np) {
			s->failed = true;
			return (ssize_t)size;
		}
		sl->p = np;
		sl->cap = nc;
	}
	memcpy(sl->p + sl->len, buf, size);
	sl->len += size;
	return (ssize_t)size;
}

/* Where the clone has got to in the batch's bytes: those in the slot, and those still buffered. */
static size_t sink_at(const struct sink *s)
{
	return s->cur->len + __fpending(s->fp);
}

static void sink_object(void *arg, const struct kmt_object *o)
{
	struct sink *s = arg;
	struct slot *sl = s->cur;
	size_t start, end;

	if (!sl) {
		s->failed = true;
		return;
	}
	start = sink_at(s);
	s->j->hooks.object(s->clone, o);
	end = sink_at(s);
	if (end == start)
		return;		/* it wrote nothing: not one of the consumer's */
	if (sl->n == sl->alloc) {
		size_t na = sl->alloc ? 2 * sl->alloc : 256;
		struct writing *nw = realloc(sl->w, na * sizeof(*nw));

		if (!nw) {
			s->failed = true;
			return;
		}
		sl->w = nw;
		sl->alloc = na;
	}
	sl->w[sl->n++] = (struct writing){ model_pos(s->m), end };
}

void sink_begin(struct job *j, struct kmt_model *m, const struct batch *b)
{
	struct sink *s = &j->sinks[m->shard];

	s->cur = &s->slot[b - j->b];
	s->cur->n = 0;
	s->cur->len = 0;
}

void sink_done(struct job *j, struct kmt_model *m)
{
	struct sink *s = &j->sinks[m->shard];

	/* What the stream still buffers is this batch's. */
	if (__fpending(s->fp) && fflush(s->fp))
		s->failed = true;
	s->cur = NULL;
}

/*
 * Batch slot @b's writings, every shard's, merged by position, to the
 * consumer's output: a run of one shard's at a time (up to the next
 * position another shard has), in one write where no separator goes
 * between.
 */
static void write_batch(struct job *j, unsigned int b)
{
	size_t at[MAX_SHARDS] = { 0 }, from[MAX_SHARDS] = { 0 };
	const char *sep = j->hooks.sep;
	FILE *out = j->hooks.out;
	unsigned int k;

	flockfile(out);
	for (;;) {
		unsigned int first = UINT32_MAX;
		uint64_t pos = UINT64_MAX, next = UINT64_MAX;
		const struct slot *sl;
		size_t i;

		for (k = 0; k < j->nms; k++) {
			sl = &j->sinks[k].slot[b];
			if (at[k] == sl->n)
				continue;
			if (sl->w[at[k]].pos < pos) {
				next = pos;
				pos = sl->w[at[k]].pos;
				first = k;
			} else if (sl->w[at[k]].pos < next) {
				next = sl->w[at[k]].pos;
			}
		}
		if (first == UINT32_MAX)
			break;
		/* The event's writings (all its shard's), and the shard's next ones before another's. */
		sl = &j->sinks[first].slot[b];
		for (i = at[first]; i < sl->n && (i == at[first] || sl->w[i].pos < next); i++)
			if (sep) {
				if (j->nr_writings++)
					fputs_unlocked(sep, out);
				fwrite_unlocked(sl->p + from[first], 1, sl->w[i].end - from[first], out);
				from[first] = sl->w[i].end;
			}
		if (!sep)
			fwrite_unlocked(sl->p + from[first], 1, sl->w[i - 1].end - from[first], out);
		from[first] = sl->w[i - 1].end;
		at[first] = i;
	}
	funlockfile(out);
	for (k = 0; k < j->nms; k++)
		j->sinks[k].slot[b].n = j->sinks[k].slot[b].len = 0;
}

void sink_write(struct job *j)
{
	unsigned int w = j->nms;	/* the writer's taker */
	uint64_t c0, n;

	if (!j->hooks.out || !j->h)
		return;		/* a consumer that only adds up: nothing to write */
	for (;;) {
		if (pthread_mutex_trylock(&j->write_mu))
			return;		/* the thread at it looks again once done (below) */
		c0 = j->stats ? kmt_thread_cpu_ns() : 0;
		while (kmt_handoff_next_by(j->h, w, &n, KMT_HANDOFF_NOW) > 0) {
			write_batch(j, (unsigned int)n & (j->nb - 1));
			kmt_handoff_took(j->h, w);	/* the producer may fill it again */
		}
		if (j->stats)
			j->write_ns += kmt_thread_cpu_ns() - c0;
		pthread_mutex_unlock(&j->write_mu);
		/* A batch another thread ended while this one held the writing. */
		if (kmt_handoff_next_by(j->h, w, &n, KMT_HANDOFF_NOW) <= 0)
			return;
	}
}

/* Fold the clones of shards [0, @n) into the consumer (@m merged, or not), and free the sinks. */
static void sinks_free(struct job *j, unsigned int n, const struct kmt_model *m)
{
	unsigned int k, b;

	for (k = 0; k < n; k++) {
		struct sink *s = &j->sinks[k];

		if (s->failed)
			j->mret = -ENOMEM;
		if (s->clone)
			j->hooks.fold(j->hooks.arg, s->clone, m);
		if (s->fp)
			fclose(s->fp);	/* nothing buffered: each batch flushed it */
		for (b = 0; b < NB; b++) {
			free(s->slot[b].p);
			free(s->slot[b].w);
		}
	}
	line_free(j->sinks, MAX_SHARDS * sizeof(*j->sinks));
	j->sinks = NULL;
	pthread_mutex_destroy(&j->write_mu);
}

bool sink_start(struct job *j, unsigned int n)
{
	const struct kmt_model_hooks *h = &j->m->hooks;
	unsigned int k;

	if (!h->object)
		return true;
	j->sinks = line_alloc(MAX_SHARDS * sizeof(*j->sinks));
	if (!j->sinks)
		return false;
	j->hooks = *h;
	pthread_mutex_init(&j->write_mu, NULL);
	for (k = 0; k < n; k++) {
		struct sink *s = &j->sinks[k];
		struct kmt_model_hooks sh = { .object = sink_object, .arg = s, .pages = j->hooks.pages };

		s->j = j;
		s->m = j->ms[k];
		s->fp = fopencookie(s, "w", (cookie_io_functions_t){ .write = sink_bytes });
		if (s->fp)
			setvbuf(s->fp, NULL, _IOFBF, SINK_BUF);
		s->clone = s->fp ? j->hooks.clone(j->hooks.arg, s->fp, k) : NULL;
		if (!s->clone) {
			kmt_model_set_hooks(j->m, &j->hooks);
			sinks_free(j, k + 1, j->m);
			return false;
		}
		kmt_model_set_hooks(j->ms[k], &sh);
	}
	return true;
}

void sink_end(struct job *j)
{
	if (!j->sinks)
		return;
	sink_write(j);
	kmt_model_set_hooks(j->m, &j->hooks);
}

void sink_fold(struct job *j)
{
	if (j->sinks)
		sinks_free(j, j->nms, j->m);
}
