/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The model's shards, for a file (kmt_analyse()) and live (kmemtrace top,
 * analyse-live.c) alike: made from the job's model (kmt_model_shard(),
 * model-merge.c), each a taker of the job's ring in stage 1 of its
 * hand-over, after shard 0, which takes every batch first on the caller's
 * thread and routes the others' events (model_route_events());
 * shards 1..N-1 each take the batches on a thread of their own, in order
 * (model_routed_events()). The rules of who takes what are
 * model-merge.c's and model.c's.
 *
 * At the end of a file the shards are folded into the model
 * (kmt_model_merge(), analyse.c); live, their sums are taken at each
 * snapshot (shards_sum()): once every shard has taken every batch, their
 * call sites, caches and tasks are added up by key (model-registry.c:
 * model_registry_sum()) and their summaries, as the fold would, but
 * leaving the shards as they are: the same numbers as one model's at that
 * point of the stream, which the model's own getters then give.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "analyse-local.h"

#define SHARDS_WANTED 32		/* see kmt_model_shards_for() */

/*
 * With -j 4 and more, one shard for each thread of -j less the
 * producer's (the file's reader, top's feed) and shard 0's routing share,
 * at most SHARDS_WANTED; with fewer the model alone on a thread is faster
 * (bench/RESULTS.md), kmap's and pprof's too (2 shards at -j 2 on two
 * cores: kmap 0.98-1.08x the wall time and a third more CPU, pprof
 * 1.4x). Every shard looks at every batch: each costs about 2-3 ns of
 * CPU per event of the stream (bench/results/shards.md), so past 32,
 * where each shard's share of a stack-heavy trace is already under the
 * merge's time, more shards add CPU and no speed.
 */
unsigned int kmt_model_shards_for(int jobs)
{
	return jobs >= 4 ? (unsigned int)MIN(jobs - 2, SHARDS_WANTED) : 1;
}

unsigned int shards_make(struct job *j, unsigned int n)
{
	unsigned int k;

	j->ms[0] = j->m;
	if (n < 2 || !kmt_model_shardable(j->m))
		return 1;
	n = MIN(n, MAX_SHARDS);
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

/* A file's shards (kmt_analyse_opts.shards, or kmt_model_shards_for(): how many), where it can be sharded. */
unsigned int make_shards(struct job *j)
{
	unsigned int n = kmt_model_shards_for(kmt_file_threads(j->f));

	if (j->o && j->o->shards)
		n = j->o->shards;
	if (!j->threaded || (j->o && (j->o->each || j->o->marker)) || kmt_file_access_buffer(j->f) >= 0)
		n = 1;
	return shards_make(j, n);
}

bool ring_start(struct job *j, unsigned int fill_low, unsigned int chain_low, bool last)
{
	bool writer = j->sinks && j->hooks.out;
	unsigned int k, stage = j->nms > 1 ? 2 : 1;

	if (!(j->h = kmt_handoff_new(j->nb, j->nms + writer + last)))
		return false;
	kmt_handoff_wake(j->h, fill_low, j->low);
	for (k = 1; k < j->nms; k++)
		kmt_handoff_stage(j->h, k, 1, chain_low);
	/* The writer, after the shards: the producer fills a batch again once it is written. */
	if (writer)
		kmt_handoff_stage(j->h, j->nms, stage++, 1);
	if (last)
		kmt_handoff_stage(j->h, j->nms + writer, stage, 1);
	return true;
}

/*
 * Shard @k's loop while the producer runs on its thread. Shard 0 takes the
 * producer's batches (the decoder's, with one); the others take them after
 * shard 0, which routed their events (stage 1 of the hand-over).
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

static void *shard_main(void *arg)
{
	struct shard_arg *a = arg;

	pthread_setname_np(pthread_self(), "kmt-shard");
	consume_all(a->j, a->k);
	return NULL;
}

void shards_start(struct job *j)
{
	unsigned int k;

	for (k = 1; k < j->nms && !j->mret; k++) {
		j->sa[k] = (struct shard_arg){ j, k };
		if (pthread_create(&j->sth[k], NULL, shard_main, &j->sa[k])) {
			j->mret = -ENOMEM;
			kmt_handoff_stop(j->h);
			break;
		}
		j->threads_up++;
	}
}

void shards_join(struct job *j)
{
	unsigned int k;

	for (k = 1; k <= j->threads_up; k++)
		pthread_join(j->sth[k], NULL);
	j->threads_up = 0;
}

/* The counts each shard keeps of its events and objects, added up (the losses are shard 0's). */
static void summary_sum(struct kmt_summary *d, struct kmt_model *const *ms, unsigned int n)
{
	unsigned int k;

	*d = ms[0]->sum;	/* its own: kmt_model_summary() gives the sums */
	for (k = 1; k < n; k++)
		model_summary_add(d, &ms[k]->sum);
}

int shards_sum(struct job *j)
{
	unsigned int k;
	int ret;

	/* Every shard is asleep, or about to be, with nothing to take: their tables are still. */
	for (k = 0; k < j->nms; k++)
		if ((ret = kmt_model_sync(j->ms[k])))
			return ret;
	if (j->nms < 2)
		return 0;
	for (k = 0; k < MODEL_REG_NR; k++)
		if ((ret = model_registry_sum(j->ms, j->nms, (enum model_reg)k, &j->sums[k])))
			return ret;
	summary_sum(&j->sum, j->ms, j->nms);
	j->m->live_sum = &j->sum;
	j->m->live_reg = j->sums;
	return 0;
}

void shards_free(struct job *j)
{
	unsigned int k;

	for (k = 1; k < j->nms; k++)
		kmt_model_free(j->ms[k]);
	j->m->live_sum = NULL;
	j->m->live_reg = NULL;
	for (k = 0; k < MODEL_REG_NR; k++)
		model_reg_sum_release(&j->sums[k]);
	if (j->nms > 1)
		kmt_model_shard(j->m, 0, 1);	/* one model again (its tables stay shard 0's) */
	j->nms = 1;
}
