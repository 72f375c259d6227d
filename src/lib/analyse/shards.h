/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The model in shards fed live (model-shards.c), private to the library:
 * the live pipeline (analyse-live.c) drives it; kmemtrace top reaches it
 * through kmt_analyse_live_*() (include/kmemtrace/analyse.h).
 */
#ifndef ANALYSE_SHARDS_H
#define ANALYSE_SHARDS_H

#include <kmemtrace/analyse.h>

#pragma GCC visibility push(hidden)

/*
 * The model in shards, fed live (kmemtrace top): @m, not yet fed, becomes
 * shard 0, which takes each run of events on the caller's thread and
 * routes the others' to @n - 1 shards, each on a thread of its own. NULL
 * if @m cannot be sharded (kmt_model_shardable()) or on ENOMEM: feed @m
 * alone. Losses (kmt_model_lost()) go to @m, between runs, in order.
 */
struct kmt_model_shards;
struct kmt_model_shards *kmt_model_shards_new(struct kmt_model *m, unsigned int n);
unsigned int kmt_model_shards_n(const struct kmt_model_shards *s);
/*
 * A run of events, as kmt_model_events() would take it: the events (and
 * their strings and stacks) must stay valid until the shards have taken
 * them: kmt_model_shards_taken() of kmt_model_shards_posted() read after
 * this call. 0 or -ENOMEM (then, from any shard, the analysis stops).
 */
int kmt_model_shards_events(struct kmt_model_shards *s, const struct kmt_event *ev, size_t n);
uint64_t kmt_model_shards_posted(const struct kmt_model_shards *s);
/* Have all shards taken the runs up to @ticket? With @wait, once they have. */
bool kmt_model_shards_taken(struct kmt_model_shards *s, uint64_t ticket, bool wait);
/*
 * Wait until the shards have taken every run, then add up their call
 * sites, caches, tasks and summaries by key, as one model's are at this
 * point of the stream: what shard 0's kmt_model_summary(), _sites(),
 * _caches() and _procs() give from then on, until the next call (an entry
 * keeps its index from one call to the next). 0 or -ENOMEM.
 */
int kmt_model_shards_sync(struct kmt_model_shards *s);
/* The shards' threads stopped, shards 1.. freed; @m then holds only shard 0's part (free it). */
void kmt_model_shards_free(struct kmt_model_shards *s);

#pragma GCC visibility pop

#endif
