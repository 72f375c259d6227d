/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Misuse (include/kmemtrace/model.h): what the model finds contradictory,
 * grouped by kind, call site and cache; and, apart from it, what the
 * kernel allocates or frees without an event (its slab bulk paths and
 * per-CPU sheaves), one row per cache with why. The findings are noted as
 * the events come (model_note_misuse) and judged once the trace is over
 * (model_misuse_finish): a trace that shows untraced traffic turns its
 * "double frees" into allocations the kernel did not trace.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "model-local.h"

/* Each kind's name and what it means. */
static const struct {
	const char *name, *doc;
} misuse_kinds[KMT_MISUSE_NR] = {
	[KMT_MISUSE_DOUBLE_FREE] = { "double_free", "an object freed twice" },
	[KMT_MISUSE_ALLOC_LIVE] = { "alloc_over_live", "an allocation at the address of a live object: "
				    "a free the kernel did not trace" },
	[KMT_MISUSE_CACHE_FREE_KMALLOC] = { "cache_free_of_kmalloc", "kmem_cache_free of a kmalloc object" },
	[KMT_MISUSE_CACHE_MISMATCH] = { "cache_mismatch", "freed to another cache than the one it came from" },
	[KMT_MISUSE_KFREE_CACHE] = { "kfree_of_cache_object", "kfree of a cache object (legal on current kernels)" },
	[KMT_MISUSE_UNTRACED_ALLOC] = { "untraced_alloc", "a free of a freed object where the kernel "
					"allocates without tracing (bulk paths)" },
};

/* Why the kernel allocates or frees a cache's objects untraced: the known cases, then in general. */
static const struct {
	const char *prefix;
	const char *why;
} untraced_whys[] = {
	{ "maple_node", "the maple tree's per-CPU sheaves and bulk frees are not traced" },
	{ "skbuff_head_cache", "napi allocates and frees skbs in bulk (kmem_cache_alloc_bulk, "
	  "kmem_cache_free_bulk), which are not traced" },
	{ "io_kiocb", "io_uring allocates requests in bulk (kmem_cache_alloc_bulk), which is not traced" },
	{ "kmalloc-", "kfree_rcu batches free kmalloc objects with kfree_bulk, which is not traced" },
	{ "", "the slab bulk paths and per-CPU sheaves allocate and free without an event" },
};


const char *kmt_misuse_name(enum kmt_misuse_kind k)
{
	return k < KMT_MISUSE_NR ? misuse_kinds[k].name : "?";
}

const char *kmt_misuse_doc(enum kmt_misuse_kind k)
{
	return k < KMT_MISUSE_NR ? misuse_kinds[k].doc : "";
}

enum kmt_severity kmt_misuse_severity(enum kmt_misuse_kind k)
{
	switch (k) {
	case KMT_MISUSE_KFREE_CACHE:
		return KMT_SEV_INFO;
	case KMT_MISUSE_ALLOC_LIVE:
	case KMT_MISUSE_UNTRACED_ALLOC:
		return KMT_SEV_WARNING;
	default:
		return KMT_SEV_ERROR;
	}
}

const char *kmt_severity_name(enum kmt_severity s)
{
	return s == KMT_SEV_ERROR ? "error" : s == KMT_SEV_WARNING ? "warning" : "info";
}

/* One row per kind, call site and cache: the first occurrence keeps its details. */
static uint64_t misuse_key(enum kmt_misuse_kind kind, uint64_t site, uint32_t cache)
{
	return kmt_hash64(site ^ ((uint64_t)kind << 56)) ^ kmt_hash64((uint64_t)cache << 20);
}

void model_note_misuse(struct kmt_model *m, enum kmt_misuse_kind kind, const struct kmt_event *ev,
			uint64_t alloc_site, uint32_t cache, const char *detail)
{
	uint64_t key = misuse_key(kind, ev->call_site, cache);
	uint32_t i = kmt_map_get(&m->fnd.misuse_map, key);
	struct kmt_misuse *mu;

	if (i == NONE) {
		uint32_t k = VEC_PUSH(m->fnd.misuse_meta, m->oom);

		i = VEC_PUSH(m->fnd.misuse, m->oom);
		if (i == NONE || k == NONE || kmt_map_put(&m->fnd.misuse_map, key, i)) {
			m->oom = true;
			return;
		}
		m->fnd.misuse_meta.v[k] = (struct reg_meta){ m->pos, key };
		mu = &m->fnd.misuse.v[i];
		mu->kind = kind;
		mu->cache = cache;
		mu->site = ev->call_site;
		mu->alloc_site = alloc_site;
		mu->first_ts = ev->ts;
		mu->first_pid = ev->pid;
		mu->first_ptr = ev->ptr;
		if (detail)
			snprintf(mu->detail, sizeof(mu->detail), "%s", detail);
	}
	m->fnd.misuse.v[i].count++;
}

/*
 * Caches the kernel fills through kmem_cache_alloc_bulk(), which fires no
 * per-object event: napi's skb cache (net/core/skbuff.c), io_uring's
 * request cache, the maple tree's node preallocation. A "double free" of
 * their objects is an untraced allocation in between, not a bug.
 */
static bool bulk_filled_cache(const struct kmt_model *m, uint32_t cache)
{
	static const char *const names[] = { "skbuff_head_cache", "io_kiocb", "maple_node" };
	const struct kmt_cache *c;
	size_t i;

	if (cache == NONE)
		return false;
	c = &m->reg.caches.v[cache];
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (c->name_len == strlen(names[i]) && !memcmp(c->name, names[i], c->name_len))
			return true;
	return false;
}

static void classify_untraced(struct kmt_model *m)
{
	uint64_t alloc_live = 0, double_free = 0, bulk = 0, unseen = 0;
	size_t i;

	/*
	 * Double frees in bulk-filled caches, and second frees of objects
	 * never seen allocated (noted as untraced by slab_free, counted as
	 * double frees were): untraced allocations.
	 */
	for (i = 0; i < m->fnd.misuse.n; i++) {
		struct kmt_misuse *mu = &m->fnd.misuse.v[i];
		bool noted = mu->kind == KMT_MISUSE_UNTRACED_ALLOC;

		if (!noted && mu->kind != KMT_MISUSE_DOUBLE_FREE)
			continue;
		if (bulk_filled_cache(m, mu->cache)) {
			mu->kind = KMT_MISUSE_UNTRACED_ALLOC;
			bulk += mu->count;
		} else if (noted) {
			unseen += mu->count;
		} else {
			continue;
		}
		if (mu->cache != NONE)
			m->reg.caches.v[mu->cache].untraced += mu->count;
	}
	for (i = 0; i < m->fnd.misuse.n; i++) {
		const struct kmt_misuse *mu = &m->fnd.misuse.v[i];

		if (mu->kind == KMT_MISUSE_ALLOC_LIVE)
			alloc_live += mu->count;
		else if (mu->kind == KMT_MISUSE_DOUBLE_FREE)
			double_free += mu->count;
		else
			continue;
		if (mu->cache != NONE)
			m->reg.caches.v[mu->cache].untraced += mu->count;
	}
	double_free += unseen;
	m->sum.untraced_evidence = alloc_live + (double_free >= 2 ? double_free : 0);
	if (!m->sum.untraced_evidence) {
		/* Known (bulk caches, objects never seen allocated): says nothing of others. */
		m->sum.untraced_evidence = bulk + unseen;
		return;
	}
	m->sum.untraced_evidence += bulk;
	for (i = 0; i < m->fnd.misuse.n; i++)
		if (m->fnd.misuse.v[i].kind == KMT_MISUSE_DOUBLE_FREE)
			m->fnd.misuse.v[i].kind = KMT_MISUSE_UNTRACED_ALLOC;
}

const char *kmt_untraced_why(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(untraced_whys); i++)
		if (!strncmp(name ? name : "", untraced_whys[i].prefix, strlen(untraced_whys[i].prefix)))
			return untraced_whys[i].why;
	return untraced_whys[ARRAY_SIZE(untraced_whys) - 1].why;
}

static int cmp_untraced(const void *a, const void *b)
{
	const struct kmt_untraced *x = a, *y = b;

	if (x->count != y->count)
		return (x->count < y->count) - (x->count > y->count);
	return (x->first_ts > y->first_ts) - (x->first_ts < y->first_ts);
}

/*
 * The signs of untraced traffic leave the misuse list for one row per
 * cache: allocations over live objects, untraced allocations, and frees
 * naming another cache where the object's cache shows such traffic (it
 * was freed and its memory reused, both unseen).
 */
static void collect_untraced(struct kmt_model *m)
{
	size_t i, k = 0, j;

	for (i = 0; i < m->fnd.misuse.n; i++) {
		struct kmt_misuse mu = m->fnd.misuse.v[i];
		bool reuse = mu.kind == KMT_MISUSE_CACHE_MISMATCH && mu.cache != NONE &&
			     (m->reg.caches.v[mu.cache].untraced || bulk_filled_cache(m, mu.cache));
		struct kmt_untraced *u;

		if (mu.kind != KMT_MISUSE_ALLOC_LIVE && mu.kind != KMT_MISUSE_UNTRACED_ALLOC && !reuse) {
			m->fnd.misuse.v[k++] = mu;
			continue;
		}
		for (j = 0; j < m->fnd.untraced.n && m->fnd.untraced.v[j].cache != mu.cache; j++)
			;
		if (j == m->fnd.untraced.n) {
			j = VEC_PUSH(m->fnd.untraced, m->oom);
			if (j == NONE)
				return;
			u = &m->fnd.untraced.v[j];
			u->cache = mu.cache;
			u->first_ts = mu.first_ts;
			u->first_site = mu.site;
			u->first_alloc_site = mu.alloc_site;
			u->why = kmt_untraced_why(mu.cache != NONE ? m->reg.caches.v[mu.cache].name : NULL);
		}
		u = &m->fnd.untraced.v[j];
		if (mu.kind == KMT_MISUSE_ALLOC_LIVE)
			u->alloc_over_live += mu.count;
		else if (mu.kind == KMT_MISUSE_UNTRACED_ALLOC)
			u->untraced_alloc += mu.count;
		else
			u->reused += mu.count;
		u->count += mu.count;
		if (mu.first_ts < u->first_ts) {
			u->first_ts = mu.first_ts;
			u->first_site = mu.site;
			u->first_alloc_site = mu.alloc_site;
		}
	}
	m->fnd.misuse.n = k;
	if (m->fnd.untraced.n > 1)
		qsort(m->fnd.untraced.v, m->fnd.untraced.n, sizeof(*m->fnd.untraced.v), cmp_untraced);
}

static int misuse_rank(const struct kmt_misuse *x)
{
	return (int)kmt_misuse_severity(x->kind);
}

/* Errors first, then warnings, then information; the most frequent first. */
static int cmp_misuse(const void *a, const void *b)
{
	const struct kmt_misuse *x = a, *y = b;

	if (misuse_rank(x) != misuse_rank(y))
		return misuse_rank(y) - misuse_rank(x);
	if (x->count != y->count)
		return (x->count < y->count) - (x->count > y->count);
	return (x->first_ts > y->first_ts) - (x->first_ts < y->first_ts);
}

void model_misuse_finish(struct kmt_model *m)
{
	classify_untraced(m);
	collect_untraced(m);
	if (m->fnd.misuse.n > 1)
		qsort(m->fnd.misuse.v, m->fnd.misuse.n, sizeof(*m->fnd.misuse.v), cmp_misuse);
}

static size_t misuse_n(const struct kmt_model *m)
{
	return m->fnd.misuse.n;
}

static uint64_t misuse_born(const struct kmt_model *m, size_t i)
{
	return m->fnd.misuse_meta.v[i].born;
}

/* Shards' findings into @sh[0]'s (model-merge.c): by first occurrence, their caches renumbered. */
int model_misuse_merge(struct kmt_model **sh, unsigned int n, uint32_t *const *cache_map)
{
	struct kmt_model *m = sh[0];
	VEC(struct kmt_misuse) nv = { 0 };
	VEC(struct reg_meta) nm = { 0 };
	struct kmt_map map;
	struct shard_ent *e;
	size_t i, total;

	static const struct shard_list list = { misuse_n, misuse_born };

	e = model_shard_order(sh, n, &list, &total);
	if (!e || kmt_map_init(&map, 1 << 6)) {
		free(e);
		m->oom = true;
		return -ENOMEM;
	}
	for (i = 0; i < total; i++) {
		struct kmt_misuse mu = sh[e[i].shard]->fnd.misuse.v[e[i].idx];
		uint64_t key;
		uint32_t j, k;

		if (mu.cache != NONE)
			mu.cache = cache_map[e[i].shard][mu.cache];
		key = misuse_key(mu.kind, mu.site, mu.cache);
		j = kmt_map_get(&map, key);
		if (j != NONE) {
			nv.v[j].count += mu.count;
			continue;
		}
		j = VEC_PUSH(nv, m->oom);
		k = VEC_PUSH(nm, m->oom);
		if (j == NONE || k == NONE || kmt_map_put(&map, key, j))
			break;
		nv.v[j] = mu;
		nm.v[k] = (struct reg_meta){ sh[e[i].shard]->fnd.misuse_meta.v[e[i].idx].born, key };
	}
	free(e);
	if (i < total) {
		free(nv.v);
		free(nm.v);
		kmt_map_release(&map);
		m->oom = true;
		return -ENOMEM;
	}
	free(m->fnd.misuse.v);
	free(m->fnd.misuse_meta.v);
	kmt_map_release(&m->fnd.misuse_map);
	memcpy(&m->fnd.misuse, &nv, sizeof(nv));
	memcpy(&m->fnd.misuse_meta, &nm, sizeof(nm));
	m->fnd.misuse_map = map;
	return 0;
}
