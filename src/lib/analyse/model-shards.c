/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The model in shards, fed live (shards.h; kmemtrace top, by way of
 * analyse-live.c):
 * the caller's thread is shard 0, which takes every run of events first
 * and routes the other shards' (model.c: model_route_events()), as
 * kmt_analyse() does for a file; shards 1..N-1 each take the runs on a
 * thread of their own, in order, after it (model_routed_events()). The
 * rules of who takes what are model-merge.c's and model.c's, the same for
 * a file and for top.
 *
 * Between the caller and the shards: a ring of slots handed over in order
 * (kmt_handoff), each a run of up to SLOT events (pointers to the caller's
 * events, where each goes, what shard 0 decided of it). A slot is free
 * again once every shard has taken it; the caller's events must stay
 * until then (a ticket: kmt_model_shards_taken()).
 *
 * The sums (kmt_model_shards_sync()) wait until every shard has taken
 * every run, then add up the shards' call sites, caches and tasks by key
 * (model-registry.c: model_registry_sum()) and their summaries, as the
 * merge at the end of a file's analysis would (kmt_model_merge()), but
 * leaving the shards as they are: the same numbers as one model's at that
 * point of the stream.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shards.h"
#include "model/model-local.h"

#define SLOT 1024			/* events in a slot */
#define SLOTS 16			/* slots in the ring */
#define SHARDS_WANTED 32		/* see kmt_model_shards_for() */

struct slot {
	const struct kmt_event *evp[SLOT];
	uint8_t to[SLOT];
	struct model_route route[SLOT];
	size_t n;
	uint64_t first_ts;		/* shard 0's trace start, when it routed them */
};

struct shard_thread {
	struct kmt_model_shards *s;
	unsigned int k;
	pthread_t th;
	bool started;
};

struct kmt_model_shards {
	struct kmt_model *ms[MODEL_SHARDS_MAX];	/* ms[0]: the caller's model */
	unsigned int n;
	struct shard_thread th[MODEL_SHARDS_MAX];
	struct kmt_handoff *h;		/* the slots, to shards 1..n-1 (takers 0..n-2) */
	struct slot *ring;
	int err;			/* a shard ran out of memory (atomic): the slots are only let go */
	/* The sums, as of the last kmt_model_shards_sync(). */
	struct model_reg_sum reg[MODEL_REG_NR];
	struct kmt_summary sum;
};

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

static void *shard_main(void *arg)
{
	struct shard_thread *st = arg;
	struct kmt_model_shards *s = st->s;
	struct kmt_model *m = s->ms[st->k];
	uint64_t n;

	pthread_setname_np(pthread_self(), "kmt-shard");
	while (kmt_handoff_next(s->h, st->k - 1, &n)) {
		const struct slot *sl = &s->ring[n % SLOTS];
		int ret = __atomic_load_n(&s->err, __ATOMIC_RELAXED);

		if (!ret && (ret = model_routed_events(m, sl->evp, sl->n, sl->to, sl->route, sl->first_ts)))
			__atomic_store_n(&s->err, ret, __ATOMIC_RELAXED);
		kmt_handoff_took(s->h, st->k - 1);
	}
	return NULL;
}

struct kmt_model_shards *kmt_model_shards_new(struct kmt_model *m, unsigned int n)
{
	struct kmt_model_shards *s;
	unsigned int k;

	if (n < 2 || n > MODEL_SHARDS_MAX || !kmt_model_shardable(m))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->ring = malloc(SLOTS * sizeof(*s->ring))) || !(s->h = kmt_handoff_new(SLOTS, n - 1))) {
		if (s)
			free(s->ring);
		free(s);
		return NULL;
	}
	s->n = n;
	s->ms[0] = m;
	for (k = 1; k < n; k++)
		if (!(s->ms[k] = kmt_model_shard(m, k, n)))
			goto fail;
	kmt_model_shard(m, 0, n);
	for (k = 1; k < n; k++) {
		s->th[k] = (struct shard_thread){ .s = s, .k = k };
		/* It inherits the caller's blocked signals. */
		if (pthread_create(&s->th[k].th, NULL, shard_main, &s->th[k]))
			goto fail;
		s->th[k].started = true;
	}
	return s;
fail:
	kmt_model_shards_free(s);
	return NULL;
}

void kmt_model_shards_free(struct kmt_model_shards *s)
{
	unsigned int k;

	if (!s)
		return;
	kmt_handoff_end(s->h);
	for (k = 1; k < s->n; k++)
		if (s->th[k].started)
			pthread_join(s->th[k].th, NULL);
	for (k = 1; k < s->n; k++)
		kmt_model_free(s->ms[k]);
	/* The caller's model is one model again (its tables stay shard 0's). */
	s->ms[0]->live_sum = NULL;
	s->ms[0]->live_reg = NULL;
	kmt_model_shard(s->ms[0], 0, 1);
	for (k = 0; k < MODEL_REG_NR; k++)
		model_reg_sum_release(&s->reg[k]);
	kmt_handoff_free(s->h);
	free(s->ring);
	free(s);
}

unsigned int kmt_model_shards_n(const struct kmt_model_shards *s)
{
	return s->n;
}

int kmt_model_shards_events(struct kmt_model_shards *s, const struct kmt_event *ev, size_t n)
{
	size_t i, c;
	int ret;

	for (; n; ev += c, n -= c) {
		struct slot *sl = &s->ring[kmt_handoff_room(s->h) % SLOTS];

		if ((ret = __atomic_load_n(&s->err, __ATOMIC_RELAXED)))
			return ret;
		c = MIN(n, (size_t)SLOT);
		for (i = 0; i < c; i++)
			sl->evp[i] = &ev[i];
		sl->n = c;
		if ((ret = model_route_events(s->ms[0], sl->evp, c, sl->to, sl->route, false)))
			return ret;
		sl->first_ts = s->ms[0]->sum.first_ts;
		kmt_handoff_give(s->h);
	}
	return 0;
}

uint64_t kmt_model_shards_posted(const struct kmt_model_shards *s)
{
	return kmt_handoff_given(s->h);
}

bool kmt_model_shards_taken(struct kmt_model_shards *s, uint64_t ticket, bool wait)
{
	/* After an error the shards still let every slot go: a wait ends. */
	return kmt_handoff_taken(s->h, ticket, wait);
}

/* The counts each shard keeps of its events and objects, added up (the losses are shard 0's). */
static void summary_sum(struct kmt_summary *d, struct kmt_model *const *ms, unsigned int n)
{
	unsigned int k;

	*d = ms[0]->sum;	/* its own: kmt_model_summary() gives the sums */
	for (k = 1; k < n; k++)
		model_summary_add(d, &ms[k]->sum);
}

int kmt_model_shards_sync(struct kmt_model_shards *s)
{
	unsigned int k;
	int ret;

	kmt_model_shards_taken(s, kmt_handoff_given(s->h), true);
	if ((ret = __atomic_load_n(&s->err, __ATOMIC_RELAXED)))
		return ret;
	/* Every shard is asleep, or about to be, with nothing to take: their tables are still. */
	for (k = 0; k < s->n; k++)
		if ((ret = kmt_model_sync(s->ms[k])))
			return ret;
	for (k = 0; k < MODEL_REG_NR; k++)
		if ((ret = model_registry_sum(s->ms, s->n, (enum model_reg)k, &s->reg[k]))) {
			__atomic_store_n(&s->err, ret, __ATOMIC_RELAXED);	/* partial sums: the next run stops */
			return ret;
		}
	summary_sum(&s->sum, s->ms, s->n);
	s->ms[0]->live_sum = &s->sum;
	s->ms[0]->live_reg = s->reg;
	return 0;
}
