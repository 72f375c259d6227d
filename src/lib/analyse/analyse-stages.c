/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stages of kmt_analyse() after the producer (analyse-local.h): shard
 * 0 and the other shards (model-merge.c), each a taker of the ring of
 * batches (kmt_handoff, in stages), each waiting for the stage before it:
 *
 *   producer (or the parts' merge: analyse-parts.c) -> shard 0 -> shards 1..N-1
 *                                                              -> the writer
 *
 * A batch is free again for the producer once every shard has taken it,
 * and the writer of the shards' object records (analyse-sink.c) with it.
 */
#include <errno.h>
#include <stdlib.h>

#include "analyse-local.h"

/* The run of events from @i into shard @m: all of it, routed by shard 0, or as shard 0 routed it. */
static int consume_run(struct job *j, struct kmt_model *m, struct batch *b, unsigned int i, unsigned int k)
{
	if (j->nms == 1)
		return kmt_model_events(m, &b->ev[i], k - i);
	if (m == j->m)
		return model_route_events(m, &b->evp[i], k - i, &b->to[i], &b->route[i], j->nparts);
	return model_routed_events(m, &b->evp[i], k - i, &b->to[i], &b->route[i], kmt_model_summary(j->m)->first_ts);
}

/* The model's side: one batch, in order, into shard @m. */
static void consume_batch(struct job *j, struct kmt_model *m, struct batch *b)
{
	unsigned int i = 0, k;

	while (i < b->n && !j->mret) {
		const struct kmt_event *ev = b->evp[i];

		if (b->what[i] == IT_SKIP) {
			i++;
			continue;
		}
		if (m != j->m && b->what[i] != IT_EVENT) {
			/* Another shard: task names only; losses are shard 0's (model-merge.c). */
			if (b->what[i] == IT_NAME)
				model_name_at(m, ev, b->route[i].pos);
			i++;
			continue;
		}
		switch (b->what[i]) {
		case IT_EVENT:
			for (k = i + 1; k < b->n && b->what[k] == IT_EVENT; k++)
				;
			if (j->o && j->o->each) {
				/* One at a time: the callback may ask the model about its event. */
				for (; i < k && !consume_run(j, m, b, i, i + 1); i++, j->fed++)
					j->o->each(j->o->arg, b->evp[i]);
			} else if (!consume_run(j, m, b, i, k)) {
				if (m == j->m)
					j->fed += k - i;
				i = k;
			}
			if (i < k) {
				j->mret = -ENOMEM;
				return;
			}
			continue;
		case IT_NAME:
			b->route[i].pos = model_pos(m);
			kmt_model_name_event(m, ev);
			break;
		default: {
			const struct kmt_skip *skip;
			struct kmt_marker mk = batch_marker(b, i, &skip);

			kmt_model_marker(m, &mk);
			if (j->o && j->o->marker)
				j->o->marker(j->o->arg, &mk, skip);
			break;
		}
		}
		i++;
	}
}

void consume(struct job *j, struct kmt_model *m, struct batch *b)
{
	uint64_t c0 = j->stats ? kmt_thread_cpu_ns() : 0;

	if (j->sinks)
		sink_begin(j, m, b);
	consume_batch(j, m, b);
	if (j->sinks)
		sink_done(j, m);
	if (!j->stats)
		return;
	c0 = kmt_thread_cpu_ns() - c0;
	__atomic_fetch_add(&j->model_ns, c0, __ATOMIC_RELAXED);	/* every shard's */
	if (m == j->m)
		j->route_ns += c0;
}

/*
 * Consumer @k's loop (shard @k) while the producer runs on its thread.
 * Shard 0 takes the producer's batches (the decoder's, with one); the
 * others take them after shard 0, which routed their events (stage 1 of
 * the hand-over).
 */
static void consume_loop(struct job *j, unsigned int k)
{
	uint64_t n;

	while (kmt_handoff_next(j->h, k, &n)) {
		consume(j, j->ms[k], &j->b[n & (j->nb - 1)]);
		if (j->mret)
			kmt_handoff_stop(j->h);	/* every stage ends */
		kmt_handoff_took(j->h, k);
		if (j->sinks)
			sink_write(j);
		if (j->mret)
			return;
	}
}

void consume_all(struct job *j, unsigned int k)
{
	uint64_t w0 = kmt_waited_ns();

	kmt_wait_count(j->stats);
	consume_loop(j, k);
	kmt_wait_count(false);
	if (j->stats)
		__atomic_fetch_add(&j->wait_ns, kmt_waited_ns() - w0, __ATOMIC_RELAXED);
}

void *consume_main(void *arg)
{
	struct shard_arg *a = arg;

	pthread_setname_np(pthread_self(), "kmt-shard");
	consume_all(a->j, a->k);
	return NULL;
}

bool ring_start(struct job *j)
{
	bool writer = j->sinks && j->hooks.out;
	unsigned int k;

	if (!(j->h = kmt_handoff_new(j->nb, j->nms + writer)))
		return false;
	/* The producer wakes for room for all but low, shard 0 for low. */
	kmt_handoff_wake(j->h, j->nb - j->low, j->low);
	for (k = 1; k < j->nms; k++)
		kmt_handoff_stage(j->h, k, 1, LOW_CHAIN);
	/* The writer, after the shards: the producer fills a batch again once it is written. */
	if (writer)
		kmt_handoff_stage(j->h, j->nms, j->nms > 1 ? 2 : 1, 1);
	return true;
}

/* The model's shards where it can be sharded (kmt_analyse_opts.shards, or kmt_model_shards_for(): how many). */
unsigned int make_shards(struct job *j)
{
	unsigned int n = kmt_model_shards_for(kmt_file_threads(j->f)), k;

	if (j->o && j->o->shards)
		n = MIN(j->o->shards, MAX_SHARDS);

	j->ms[0] = j->m;
	if (n < 2 || !j->threaded || (j->o && (j->o->each || j->o->marker)) || kmt_file_access_buffer(j->f) >= 0 ||
	    !kmt_model_shardable(j->m))
		return 1;
	for (k = 1; k < n; k++)
		if (!(j->ms[k] = kmt_model_shard(j->m, k, n)))
			break;
	if (k == n) {
		kmt_model_shard(j->m, 0, n);
		if (sink_start(j, n))
			return n;
		kmt_model_shard(j->m, 0, 1);
	}
	while (--k)
		kmt_model_free(j->ms[k]);
	return 1;
}

