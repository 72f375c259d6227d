/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stages of kmt_analyse() after the producer (analyse-local.h): shard
 * 0 and the other shards (model-merge.c), each a consumer of the ring of
 * batches, each waiting for the stage before it:
 *
 *   producer (or the parts' merge: analyse-parts.c) -> shard 0 -> shards 1..N-1
 *
 * A batch is free again for the producer once every shard has taken it.
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

unsigned int cons_min(const struct job *j)
{
	unsigned int k, c = j->cons[0];

	for (k = 1; k < j->nms; k++)
		if (j->prod - j->cons[k] > j->prod - c)
			c = j->cons[k];
	return c;
}

void stage_wake(struct job *j, int w, unsigned int count)
{
	if (j->waits[w] && count >= j->wake_at[w]) {
		j->wake_at[w] = UINT64_MAX;
		wake(j, 1u << w);
	}
}

/*
 * Wait (with the lock) until stage @w, at @mine, has batches: @src ahead of
 * it by @low, or by any once the stage before is done (@last) or all stop.
 */
static void stage_wait(struct job *j, int w, const unsigned int *src, unsigned int mine, unsigned int low,
		       const bool *last)
{
	if (*src != mine || *last || j->stop)
		return;
	/* Empty: wait for several batches, not one. */
	j->waits[w]++;
	while (*src - mine < low && !*last && !j->stop && !(j->merge_waits && *src != mine)) {
		j->wake_at[w] = MIN(j->wake_at[w], (uint64_t)mine + low);
		kmt_cond_wait(&j->cv[w], &j->mu);
	}
	j->waits[w]--;
}

/*
 * Consumer @k's loop (shard @k) while the producer runs on its thread.
 * Shard 0 takes the producer's batches (the decoder's, with one); the
 * others take them after shard 0, which routed their events.
 */
static void consume_loop(struct job *j, unsigned int k)
{
	const unsigned int *src = k ? &j->cons[0] : &j->prod;
	const bool *last = k ? &j->zero_done : &j->done;
	unsigned int low = k ? LOW_CHAIN : j->low;

	for (;;) {
		struct batch *b;

		kmt_lock(&j->mu);
		stage_wait(j, k ? W_REST : W_ZERO, src, j->cons[k], low, last);
		if (j->cons[k] == *src || j->stop) {
			if (!k) {
				j->zero_done = true;
				wake(j, 1u << CV_REST);
			}
			pthread_mutex_unlock(&j->mu);
			return;
		}
		b = &j->b[j->cons[k] & (j->nb - 1)];
		pthread_mutex_unlock(&j->mu);
		consume(j, j->ms[k], b);
		kmt_lock(&j->mu);
		j->cons[k]++;
		if (j->mret)
			j->stop = true;
		if (j->parts_wait && (int)(cons_min(j) - j->parts_wake_at) >= 0) {
			/* The parts woken each say again what they wait for. */
			j->parts_wake_at = cons_min(j) + PARTS_FAR;
			wake(j, 1u << CV_PARTS);
		}
		if (j->stop)
			wake(j, CV_ALL);
		if (j->prod_waits && j->prod - ring_free(j) <= j->low)
			wake(j, 1u << CV_PROD);
		if (j->merge_waits && !k)
			wake(j, 1u << CV_REST);	/* take what there is */
		else if (!k)
			stage_wake(j, W_REST, j->cons[0]);
		pthread_mutex_unlock(&j->mu);
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

