/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The model in shards (-j; include/kmemtrace/model.h): N models, each on a
 * thread. A slab object belongs to the shard its address hashes to
 * (model_shard_of()): its allocation, free, stack and misuse are that
 * shard's. Shard 0 is shown every batch first and does the rest as the
 * one model would — pages, per-CPU and vmalloc areas, the losses and
 * gaps, the task names — and gives each other shard's events their
 * stream position and loss epoch (model.c: route()); shard k takes a
 * batch once shard 0 has, and only its own events and the names
 * (model_routed_events()). Each CPU's sequence (which allocation a stack
 * belongs to, the doubled large kmalloc: model-claim.c) is decided where
 * the CPU's events are read in order: by the parts, which write it beside
 * each event, so that shard 0 reads only its own events (seq_given); with
 * a filter, a window or stack slices, by shard 0, which reads every event
 * and routes the others' with it. Each event is counted by the one shard that
 * took it, if it concerns the chosen tasks or cache (-p, --comm, --cache):
 * a slab event as its object's shard finds, the rest as shard 0 does. Not
 * with a filter on a recording of a stack for every event: whether the
 * stack of a free concerns them is its object's shard's to say, and
 * shard 0 would have to wait for it.
 *
 * At the end the shards fold into shard 0, which then finishes as one
 * model would: registries (call sites, caches, tasks, misuse rows,
 * stacks) in the order their entries were first made — every shard
 * counts the same stream positions (kmt_model.pos), so the first maker's
 * position is the one model's — sums added, live objects moved into
 * shard 0's table with their indexes renumbered. The output is the same
 * for every N (t0206).
 */
#include <errno.h>
#include <stdlib.h>

#include "model-local.h"

bool kmt_model_shardable(const struct kmt_model *m)
{
	return !m->started && !(m->filtering && m->o.stack_slices) && !m->hooks.event &&
	       (!m->hooks.object || m->hooks.clone);
}

struct kmt_model *kmt_model_shard(struct kmt_model *m, unsigned int k, unsigned int n)
{
	struct kmt_model *s = k ? kmt_model_new(&m->o) : m;

	if (!s)
		return NULL;
	s->shard = k;
	s->nshards = n;
	return s;
}

void model_summary_add(struct kmt_summary *d, const struct kmt_summary *s)
{
	int k;

	d->events += s->events;
	for (k = 0; k < KMT_EV_NR; k++)
		d->by_kind[k] += s->by_kind[k];
	d->allocs += s->allocs;
	d->frees += s->frees;
	d->bytes_req += s->bytes_req;
	d->bytes_alloc += s->bytes_alloc;
	d->bytes_freed += s->bytes_freed;
	d->cross_cpu_frees += s->cross_cpu_frees;
	d->preexisting_frees += s->preexisting_frees;
	d->preexisting_bytes += s->preexisting_bytes;
	d->now_objects += s->now_objects;
	d->now_bytes += s->now_bytes;
	d->uncertain_objects += s->uncertain_objects;
	d->unseen_frees += s->unseen_frees;
	d->unseen_bytes += s->unseen_bytes;
	d->uncertain_misuse += s->uncertain_misuse;
	d->failures += s->failures;
	d->kmalloc_large_merged += s->kmalloc_large_merged;
	d->null_frees += s->null_frees;
	d->unseen_allocs += s->unseen_allocs;
	d->nr_cpus = MAX(d->nr_cpus, s->nr_cpus);
	d->filter_matched |= s->filter_matched;
	d->cache_matched |= s->cache_matched;
}

/* An object's indexes, renumbered by shard @k's maps. */
static void renumber(struct obj *o, unsigned int k, uint32_t *const *site, uint32_t *const *cache,
		     uint32_t *const *proc, uint32_t *const *row, uint32_t *const *group)
{
	if (o->group != NONE)
		o->group = group[k][o->group];
	if (o->site != NONE)
		o->site = site[k][o->site];
	if (o->cache != NONE)
		o->cache = cache[k][o->cache];
	if (o->proc != NONE)
		o->proc = proc[k][o->proc];
	if (o->stack)
		o->stack = row[k][o->stack - 1] + 1;
}

/* Shard @k's live slab objects into @m's table (their addresses are only @k's). */
static int move_objects(struct kmt_model *m, struct kmt_model *s, unsigned int k, uint32_t **maps[5])
{
	uint32_t i;

	for (i = 0; i < s->slab.pool_n; i++) {
		struct obj *o = &s->slab.pool[i], *no;
		struct islot *sl;

		if (o->state != OBJ_LIVE)
			continue;
		sl = otab_get(&m->slab, o->key);
		no = sl ? otab_obj_new(&m->slab, sl) : NULL;
		if (!no)
			return -ENOMEM;
		*no = *o;
		renumber(no, k, maps[0], maps[1], maps[2], maps[3], maps[4]);
	}
	return 0;
}

/* The pages each shard named, in one map (the shards' pages are apart), by the merged caches. */
static int merge_slab_pages(struct kmt_model **sh, unsigned int n, uint32_t *const *cache)
{
	struct kmt_map all;
	unsigned int k;
	size_t i;

	if (kmt_map_init(&all, 1 << 6))
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		const struct kmt_map *p = &sh[k]->reg.slab_pages;

		for (i = 0; i < p->cap; i++)
			if (p->vals[i] != KMT_MAP_NONE && kmt_map_put(&all, p->keys[i], cache[k][p->vals[i]])) {
				kmt_map_release(&all);
				return -ENOMEM;
			}
	}
	kmt_map_release(&sh[0]->reg.slab_pages);
	sh[0]->reg.slab_pages = all;
	return 0;
}

int kmt_model_merge(struct kmt_model **sh, unsigned int n)
{
	struct kmt_model *m = sh[0];
	uint32_t **maps[5] = { 0 };	/* site, cache, task, stack row, detail group: per shard */
	unsigned int k, w;
	uint32_t i;
	int ret = -ENOMEM;

	for (k = 0; k < n; k++) {
		if (kmt_model_sync(sh[k]))
			m->oom = true;
		/* Each shard has every page of its objects: it names them, as one model would. */
		model_slab_name_live(sh[k]);
	}
	if (m->oom)
		return -ENOMEM;
	for (w = 0; w < 5; w++)
		if (!(maps[w] = calloc(n, sizeof(*maps[w]))))
			goto out;
	for (k = 0; k < n; k++)
		if (!(maps[0][k] = malloc((sh[k]->reg.sites.n + 1) * sizeof(uint32_t))) ||
		    !(maps[1][k] = malloc((sh[k]->reg.caches.n + 1) * sizeof(uint32_t))) ||
		    !(maps[2][k] = malloc((sh[k]->reg.procs.n + 1) * sizeof(uint32_t))) ||
		    !(maps[3][k] = malloc((model_stack_rows(sh[k]) + 1) * sizeof(uint32_t))) ||
		    !(maps[4][k] = malloc((model_detail_groups(sh[k]) + 1) * sizeof(uint32_t))))
			goto out;
	if (model_registry_merge(sh, n, maps[0], maps[1], maps[2]) || model_misuse_merge(sh, n, maps[1]) ||
	    model_stack_merge(m, sh, n, maps[0], maps[3]) ||
	    ((m->o.detail || m->o.groups) && model_detail_merge(sh, n, maps[0], maps[1], maps[2], maps[4])))
		goto out;
	if (merge_slab_pages(sh, n, maps[1]))
		goto out;
	/* Shard 0's own objects first, in place: slab objects, and the tasks of pages and areas. */
	for (i = 0; i < m->slab.pool_n; i++)
		if (m->slab.pool[i].state == OBJ_LIVE)
			renumber(&m->slab.pool[i], 0, maps[0], maps[1], maps[2], maps[3], maps[4]);
	for (i = 0; i < m->pg.pages.pool_n; i++)
		if (m->pg.pages.pool[i].state == OBJ_LIVE && m->pg.pages.pool[i].proc != NONE)
			m->pg.pages.pool[i].proc = maps[2][0][m->pg.pages.pool[i].proc];
	for (i = 0; i < m->vm.vmap.pool_n; i++)
		if (m->vm.vmap.pool[i].state == OBJ_LIVE && m->vm.vmap.pool[i].proc != NONE)
			m->vm.vmap.pool[i].proc = maps[2][0][m->vm.vmap.pool[i].proc];
	for (k = 1; k < n; k++) {
		if (move_objects(m, sh[k], k, maps))
			goto out;
		/* Its table goes at once: the objects live in one table, not two, at any time. */
		otab_release(&sh[k]->slab);
		model_summary_add(&m->sum, &sh[k]->sum);
		for (i = 0; i < KMT_MAX_CPUS; i++)
			m->events_by_cpu[i] += sh[k]->events_by_cpu[i];
	}
	m->shard = 0;
	m->nshards = 1;
	m->seq_given = false;	/* from here on, it keeps each CPU's sequence itself */
	ret = 0;
out:
	for (w = 0; w < 5; w++)
		for (k = 0; maps[w] && k < n; k++)
			free(maps[w][k]);
	for (w = 0; w < 5; w++)
		free(maps[w]);
	if (ret)
		m->oom = true;
	return ret;
}
