/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What only a picture of the trace needs (kmt_model_opts.detail): time
 * series of slab and page traffic, slab allocations per call site, cache
 * and task (alone with kmt_model_opts.groups: the cgroups table's), and by
 * requested size. Bounded by the number of intervals
 * (KMT_TL_BUCKETS, merged in pairs as the trace grows), caches, sites,
 * tasks and sizes, never by the length of the trace.
 */
#include <stdlib.h>

#include "model-local.h"

#define N KMT_TL_BUCKETS
#define NC (KMT_TL_BUCKETS / KMT_TL_COARSE)

struct kmt_detail {
	bool full;			/* all of it (detail), not only the groups */
	struct kmt_timeline tl;
	uint64_t *allocs, *frees, *bytes_alloc, *bytes_freed, *forks, *newtasks;
	uint64_t *pages[KMT_MAX_ORDER + 1];
	int64_t *net;
	int64_t **cache_net, **site_net, **proc_net;	/* grown with the model's tables */
	size_t cache_cap, site_cap, proc_cap;
	unsigned int shift;		/* width = 1 << shift */
	bool started;
	/* Per call site, the group and size row of its last allocation. */
	struct hint { uint32_t group, size; } *hint;
	size_t hint_n;
	VEC(struct kmt_gap) gaps;
	struct kmt_map group_map;		/* site:24 cache:16 proc:24 -> row */
	VEC(struct kmt_group) groups;
	VEC(uint64_t) group_born;		/* beside groups: kmt_model.pos when made */
	struct kmt_map size_map;		/* req << 32 | alloc -> row */
	VEC(struct kmt_size_count) sizes;
	VEC(struct kmt_cgroup_site) cgroup_sites;	/* model-cgroup.c, at the end */
};

static uint64_t *counts(void)
{
	return calloc(N, sizeof(uint64_t));
}

int model_detail_init(struct kmt_model *m)
{
	struct kmt_detail *d;
	int i;

	if (!m->o.detail && !m->o.groups)
		return 0;
	d = m->detail = calloc(1, sizeof(*d));
	if (!d)
		return -1;
	d->full = m->o.detail;
	if (!d->full)
		return kmt_map_init(&d->group_map, 1 << 10) ? -1 : 0;
	d->shift = 10;
	d->tl.width = 1ULL << d->shift;
	d->allocs = counts();
	d->frees = counts();
	d->bytes_alloc = counts();
	d->bytes_freed = counts();
	d->forks = counts();
	d->newtasks = counts();
	d->net = calloc(N, sizeof(int64_t));
	for (i = 0; i <= KMT_MAX_ORDER; i++)
		if (!(d->pages[i] = counts()))
			return -1;
	if (!d->allocs || !d->frees || !d->bytes_alloc || !d->bytes_freed || !d->forks ||
	    !d->newtasks || !d->net || kmt_map_init(&d->group_map, 1 << 10) ||
	    kmt_map_init(&d->size_map, 1 << 10))
		return -1;
	return 0;
}

/* The series by cache, site and task. */
static void free_series(struct kmt_detail *d)
{
	size_t i;

	for (i = 0; i < d->cache_cap; i++)
		free(d->cache_net[i]);
	for (i = 0; i < d->site_cap; i++)
		free(d->site_net[i]);
	for (i = 0; i < d->proc_cap; i++)
		free(d->proc_net[i]);
	free(d->cache_net);
	free(d->site_net);
	free(d->proc_net);
}

void model_detail_release(struct kmt_model *m)
{
	struct kmt_detail *d = m->detail;
	size_t i;

	if (!d)
		return;
	free(d->allocs);
	free(d->frees);
	free(d->bytes_alloc);
	free(d->bytes_freed);
	free(d->forks);
	free(d->newtasks);
	free(d->net);
	for (i = 0; i <= KMT_MAX_ORDER; i++)
		free(d->pages[i]);
	free_series(d);
	free(d->gaps.v);
	kmt_map_release(&d->group_map);
	free(d->groups.v);
	free(d->group_born.v);
	kmt_map_release(&d->size_map);
	free(d->sizes.v);
	free(d->cgroup_sites.v);
	free(d->hint);
	free(d);
	m->detail = NULL;
}

/* Intervals 2i and 2i+1 become interval i. */
static void halve_u(uint64_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n / 2; i++)
		v[i] = v[2 * i] + v[2 * i + 1];
	memset(v + n / 2, 0, (n - n / 2) * sizeof(*v));
}

static void halve_i(int64_t *v, size_t n)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < n / 2; i++)
		v[i] = v[2 * i] + v[2 * i + 1];
	memset(v + n / 2, 0, (n - n / 2) * sizeof(*v));
}

static void widen(struct kmt_detail *d)
{
	size_t i;

	halve_u(d->allocs, N);
	halve_u(d->frees, N);
	halve_u(d->bytes_alloc, N);
	halve_u(d->bytes_freed, N);
	halve_u(d->forks, N);
	halve_u(d->newtasks, N);
	halve_i(d->net, N);
	for (i = 0; i <= KMT_MAX_ORDER; i++)
		halve_u(d->pages[i], N);
	for (i = 0; i < d->cache_cap; i++)
		halve_i(d->cache_net[i], N);
	for (i = 0; i < d->site_cap; i++)
		halve_i(d->site_net[i], NC);
	for (i = 0; i < d->proc_cap; i++)
		halve_i(d->proc_net[i], NC);
	d->shift++;
	d->tl.width = 1ULL << d->shift;
	d->tl.n = (d->tl.n + 1) / 2;
}

/* The interval of @ts, widening them all until it fits. */
static size_t bucket(struct kmt_model *m, uint64_t ts)
{
	struct kmt_detail *d = m->detail;
	uint64_t b;

	if (!d->started) {
		d->started = true;
		d->tl.start = m->sum.first_ts;
	}
	if (ts < d->tl.start)
		return 0;
	while ((b = (ts - d->tl.start) >> d->shift) >= N)
		widen(d);
	if (b >= d->tl.n)
		d->tl.n = (uint32_t)b + 1;
	return (size_t)b;
}

/* Make room for @need series in @tab (NULL entries); false on ENOMEM. */
static bool grow(struct kmt_model *m, int64_t ***tab, size_t *cap, size_t need)
{
	size_t old = *cap;

	if (ALLOC_GROW(*tab, need, *cap, 0)) {
		m->oom = true;
		return false;
	}
	memset(*tab + old, 0, (*cap - old) * sizeof(**tab));
	return true;
}

/* Series @i of @tab, allocated on first use; NULL on ENOMEM. */
static int64_t *series(struct kmt_model *m, int64_t ***tab, size_t *cap, size_t i, size_t len)
{
	if (!grow(m, tab, cap, i + 1))
		return NULL;
	if (!(*tab)[i] && !((*tab)[i] = calloc(len, sizeof(int64_t))))
		m->oom = true;
	return (*tab)[i];
}

/* Add @bytes in interval @b to the net series of @o's cache and site. */
static void net(struct kmt_model *m, const struct obj *o, size_t b, int64_t bytes)
{
	struct kmt_detail *d = m->detail;
	int64_t *s;

	d->net[b] += bytes;
	if (o->cache != NONE && (s = series(m, &d->cache_net, &d->cache_cap, o->cache, N)))
		s[b] += bytes;
	if ((s = series(m, &d->site_net, &d->site_cap, o->site, NC)))
		s[b / KMT_TL_COARSE] += bytes;
	if (o->proc != NONE && (s = series(m, &d->proc_net, &d->proc_cap, o->proc, NC)))
		s[b / KMT_TL_COARSE] += bytes;
}

/* The hint of @o's site (NULL on ENOMEM). */
static struct hint *hint_of(struct kmt_model *m, const struct obj *o)
{
	struct kmt_detail *d = m->detail;

	if (o->site >= d->hint_n) {
		size_t old = d->hint_n;

		if (ALLOC_GROW(d->hint, (size_t)o->site + 1, d->hint_n, 0)) {
			m->oom = true;
			return NULL;
		}
		memset(d->hint + old, 0xff, (d->hint_n - old) * sizeof(*d->hint));
	}
	return &d->hint[o->site];
}

#define NO_IDX24 0xffffffu		/* no task in a group's key; sites stay below it */

/*
 * The key of group (@site, @cache, @proc) in group_map: site:24 cache:16
 * proc:24, no cache NO_CACHE16 and no task NO_IDX24. False when an index
 * does not fit (or would read as none): such allocations are not grouped.
 */
static bool group_key(uint32_t site, uint32_t cache, uint32_t proc, uint64_t *key)
{
	uint64_t c = cache == NONE ? NO_CACHE16 : cache, p = proc == NONE ? NO_IDX24 : proc;

	if (site >= NO_IDX24 || (cache != NONE && cache >= NO_CACHE16) ||
	    (proc != NONE && proc >= NO_IDX24))
		return false;
	*key = (uint64_t)site << 40 | c << 24 | p;
	return true;
}

static struct kmt_group *group_of(struct kmt_model *m, struct obj *o, struct hint *h)
{
	struct kmt_detail *d = m->detail;
	/* The groups alone (the cgroups' call sites) need no cache: fewer groups. */
	uint32_t cache = d->full ? o->cache : NONE, i;
	uint64_t key;

	if (h->group != NONE && d->groups.v[h->group].cache == cache &&
	    d->groups.v[h->group].proc == o->proc) {
		o->group = h->group;
		return &d->groups.v[h->group];
	}
	if (!group_key(o->site, cache, o->proc, &key))
		return NULL;
	i = kmt_map_get(&d->group_map, key);
	if (i == NONE) {
		uint32_t k = VEC_PUSH(d->group_born, m->oom);

		i = VEC_PUSH(d->groups, m->oom);
		if (i == NONE || k == NONE || kmt_map_put(&d->group_map, key, i)) {
			m->oom = true;
			return NULL;
		}
		d->groups.v[i].site = o->site;
		d->groups.v[i].cache = cache;
		d->groups.v[i].proc = o->proc;
		d->group_born.v[k] = m->pos;
	}
	o->group = i;
	h->group = i;
	return &d->groups.v[i];
}

static void count_size(struct kmt_model *m, const struct obj *o, int64_t sign, struct hint *h)
{
	struct kmt_detail *d = m->detail;
	uint64_t key = (uint64_t)o->req << 32 | o->alloc;
	uint32_t i = h && h->size != NONE && d->sizes.v[h->size].req == o->req &&
		     d->sizes.v[h->size].alloc == o->alloc ? h->size : kmt_map_get(&d->size_map, key);

	if (i == NONE) {
		i = VEC_PUSH(d->sizes, m->oom);
		if (i == NONE || kmt_map_put(&d->size_map, key, i)) {
			m->oom = true;
			return;
		}
		d->sizes.v[i].req = o->req;
		d->sizes.v[i].alloc = o->alloc;
	}
	d->sizes.v[i].count += (uint64_t)sign;
	if (h)
		h->size = i;
}

/* @o's allocation into @g's counts (@sign 1), or out of them (-1). */
static void group_count(struct kmt_group *g, const struct obj *o, int sign)
{
	uint64_t al = (uint64_t)(sign * (int64_t)o->alloc);

	g->allocs += (uint64_t)(int64_t)sign;
	g->bytes_req += (uint64_t)(sign * (int64_t)o->req);
	g->bytes_alloc += al;
	model_charge_count(o->charge, al, &g->irq_bytes, &g->acct_bytes, &g->unknown_bytes);
}

void model_detail_alloc(struct kmt_model *m, struct obj *o)
{
	struct kmt_detail *d = m->detail;
	struct kmt_group *g;
	struct hint *h;
	size_t b;

	o->group = NONE;
	if (!d || !(h = hint_of(m, o)))
		return;
	if (d->full) {
		b = bucket(m, o->ts);
		d->allocs[b]++;
		d->bytes_alloc[b] += o->alloc;
		net(m, o, b, o->alloc);
		count_size(m, o, 1, h);
	}
	if ((g = group_of(m, o, h)))
		group_count(g, o, 1);
}

void model_detail_unalloc(struct kmt_model *m, const struct obj *o)
{
	struct kmt_detail *d = m->detail;
	size_t b;

	if (!d)
		return;
	if (d->full) {
		b = bucket(m, o->ts);
		d->allocs[b]--;
		d->bytes_alloc[b] -= o->alloc;
		net(m, o, b, -(int64_t)o->alloc);
		count_size(m, o, -1, NULL);
	}
	if (o->group != NONE)
		group_count(&d->groups.v[o->group], o, -1);
}

void model_detail_gone(struct kmt_model *m, const struct obj *o, uint64_t ts, bool freed)
{
	struct kmt_detail *d = m->detail;
	size_t b;

	if (!d || !d->full)
		return;
	b = bucket(m, ts);
	if (freed) {
		d->frees[b]++;
		d->bytes_freed[b] += o->alloc;
	}
	net(m, o, b, -(int64_t)o->alloc);
}

void model_detail_live(struct kmt_model *m, const struct obj *o)
{
	struct kmt_detail *d = m->detail;

	if (d && o->group != NONE) {
		d->groups.v[o->group].live_objects++;
		d->groups.v[o->group].live_bytes += o->alloc;
	}
}

void model_detail_page(struct kmt_model *m, uint64_t ts, uint32_t order)
{
	if (m->detail && m->detail->full)
		m->detail->pages[MIN(order, (uint32_t)KMT_MAX_ORDER)][bucket(m, ts)]++;
}

void model_detail_birth(struct kmt_model *m, const struct kmt_event *ev)
{
	struct kmt_detail *d = m->detail;

	if (!d || !d->full)
		return;
	if (ev->kind == KMT_EV_FORK)
		d->forks[bucket(m, ev->ts)]++;
	else if (ev->kind == KMT_EV_NEWTASK)
		d->newtasks[bucket(m, ev->ts)]++;
}

void model_detail_gap(struct kmt_model *m, int cpu, int64_t lost, uint64_t ts, bool truncated)
{
	struct kmt_detail *d = m->detail;
	uint32_t i;

	if (!d || !d->full)
		return;
	i = VEC_PUSH(d->gaps, m->oom);
	if (i == NONE)
		return;
	d->gaps.v[i] = (struct kmt_gap){ .ts = ts, .cpu = cpu, .lost = lost, .truncated = truncated };
}

static int cmp_size(const void *a, const void *b)
{
	const struct kmt_size_count *x = a, *y = b;

	if (x->alloc != y->alloc)
		return (x->alloc > y->alloc) - (x->alloc < y->alloc);
	return (x->req > y->req) - (x->req < y->req);
}

static int cmp_gap(const void *a, const void *b)
{
	const struct kmt_gap *x = a, *y = b;

	return (x->ts > y->ts) - (x->ts < y->ts);
}

void model_detail_finish(struct kmt_model *m)
{
	struct kmt_detail *d = m->detail;
	struct kmt_timeline *t;
	size_t i, k = 0;

	if (!d)
		return;
	model_cgroup_sites(m, &d->cgroup_sites.v, &d->cgroup_sites.n);
	if (!d->full)
		return;
	t = &d->tl;
	if (!d->started)
		t->start = m->sum.first_ts;
	if (!t->n)
		t->n = 1;
	t->allocs = d->allocs;
	t->frees = d->frees;
	t->bytes_alloc = d->bytes_alloc;
	t->bytes_freed = d->bytes_freed;
	t->net = d->net;
	t->forks = d->forks;
	t->newtasks = d->newtasks;
	for (i = 0; i <= KMT_MAX_ORDER; i++)
		t->page_allocs[i] = d->pages[i];
	/* Every cache and site gets an entry, NULL where it had no series. */
	grow(m, &d->cache_net, &d->cache_cap, m->reg.caches.n);
	grow(m, &d->site_net, &d->site_cap, m->reg.sites.n);
	grow(m, &d->proc_net, &d->proc_cap, m->reg.procs.n);
	t->nr_caches = m->reg.caches.n;
	t->nr_sites = m->reg.sites.n;
	t->nr_procs = m->reg.procs.n;
	t->cache_net = (const int64_t *const *)d->cache_net;
	t->site_net = (const int64_t *const *)d->site_net;
	t->proc_net = (const int64_t *const *)d->proc_net;
	if (d->gaps.n > 1)
		qsort(d->gaps.v, d->gaps.n, sizeof(*d->gaps.v), cmp_gap);
	t->gaps = d->gaps.v;
	t->nr_gaps = d->gaps.n;
	for (i = 0; i < d->sizes.n; i++)
		if (d->sizes.v[i].count)
			d->sizes.v[k++] = d->sizes.v[i];
	d->sizes.n = k;
	if (d->sizes.n > 1)
		qsort(d->sizes.v, d->sizes.n, sizeof(*d->sizes.v), cmp_size);
}

/* ---- a sharded model's details merged (model-merge.c) ---- */

size_t model_detail_groups(const struct kmt_model *m)
{
	return m->detail ? m->detail->groups.n : 0;
}

static uint64_t group_born(const struct kmt_model *m, size_t i)
{
	return m->detail->group_born.v[i];
}

/* @n series of @len intervals of @from (indexes renumbered by @map) added into @to. */
static bool add_series(struct kmt_model *m, int64_t ***to, size_t *to_cap, int64_t *const *from, size_t n,
		       const uint32_t *map, size_t len)
{
	size_t i, b;

	for (i = 0; i < n; i++) {
		int64_t *s;

		if (!from[i])
			continue;
		if (!(s = series(m, to, to_cap, map[i], len)))
			return false;
		for (b = 0; b < len; b++)
			s[b] += from[i][b];
	}
	return true;
}

/* Every shard's intervals as wide as the widest's, as one model's would be, and summed into shard 0's. */
static void merge_timeline(struct kmt_model **sh, unsigned int n)
{
	struct kmt_detail *d = sh[0]->detail;
	unsigned int shift = d->shift, k;
	size_t b;
	int o;

	for (k = 1; k < n; k++)
		shift = MAX(shift, sh[k]->detail->shift);
	for (k = 0; k < n; k++)
		while (sh[k]->detail->shift < shift)
			widen(sh[k]->detail);
	for (k = 1; k < n; k++) {
		const struct kmt_detail *x = sh[k]->detail;

		for (b = 0; b < N; b++) {
			d->allocs[b] += x->allocs[b];
			d->frees[b] += x->frees[b];
			d->bytes_alloc[b] += x->bytes_alloc[b];
			d->bytes_freed[b] += x->bytes_freed[b];
			d->forks[b] += x->forks[b];
			d->newtasks[b] += x->newtasks[b];
			d->net[b] += x->net[b];
			for (o = 0; o <= KMT_MAX_ORDER; o++)
				d->pages[o][b] += x->pages[o][b];
		}
		d->tl.n = MAX(d->tl.n, x->tl.n);
		if (x->started && !d->started) {
			/* Shard 0 had nothing to picture (from 3 shards it owns no object): the intervals' start is this one's. */
			d->tl.start = x->tl.start;
			d->started = true;
		}
	}
}

/* The series by cache, site and task, renumbered into shard 0's. */
static void merge_series(struct kmt_model **sh, unsigned int n, uint32_t *const *site_map,
			 uint32_t *const *cache_map, uint32_t *const *proc_map)
{
	struct kmt_model *m = sh[0];
	struct kmt_detail *d = m->detail;
	int64_t **cache_net = NULL, **site_net = NULL, **proc_net = NULL;
	size_t cache_cap = 0, site_cap = 0, proc_cap = 0;
	unsigned int k;

	for (k = 0; k < n; k++) {
		const struct kmt_detail *x = sh[k]->detail;

		if (!add_series(m, &cache_net, &cache_cap, x->cache_net, x->cache_cap, cache_map[k], N) ||
		    !add_series(m, &site_net, &site_cap, x->site_net, x->site_cap, site_map[k], NC) ||
		    !add_series(m, &proc_net, &proc_cap, x->proc_net, x->proc_cap, proc_map[k], NC))
			break;
	}
	free_series(d);
	d->cache_net = cache_net;
	d->site_net = site_net;
	d->proc_net = proc_net;
	d->cache_cap = cache_cap;
	d->site_cap = site_cap;
	d->proc_cap = proc_cap;
}

/*
 * The groups, in the order they were first made (@e, @total: every
 * shard's), renumbered and keyed again; @group_map says where each
 * shard's went. False: out of memory (m->oom).
 */
static bool merge_groups(struct kmt_model **sh, struct shard_ent *e, size_t total, uint32_t *const *site_map,
			 uint32_t *const *cache_map, uint32_t *const *proc_map, uint32_t **group_map)
{
	struct kmt_model *m = sh[0];
	struct kmt_detail *d = m->detail;
	VEC(struct kmt_group) ng = { 0 };
	VEC(uint64_t) nb = { 0 };
	struct kmt_map map;
	size_t i;

	if (kmt_map_init(&map, 1 << 10)) {
		m->oom = true;
		return false;
	}
	for (i = 0; i < total && !m->oom; i++) {
		struct kmt_group g = sh[e[i].shard]->detail->groups.v[e[i].idx];
		uint64_t key;
		uint32_t j, q;

		g.site = site_map[e[i].shard][g.site];
		g.cache = g.cache != NONE ? cache_map[e[i].shard][g.cache] : NONE;
		g.proc = g.proc != NONE ? proc_map[e[i].shard][g.proc] : NONE;
		if (!group_key(g.site, g.cache, g.proc, &key)) {
			/* Renumbered past the key: not grouped, as in one model. */
			group_map[e[i].shard][e[i].idx] = NONE;
			continue;
		}
		j = kmt_map_get(&map, key);
		if (j == NONE) {
			j = VEC_PUSH(ng, m->oom);
			q = VEC_PUSH(nb, m->oom);
			if (j == NONE || q == NONE || kmt_map_put(&map, key, j)) {
				m->oom = true;
				break;
			}
			ng.v[j] = g;
			nb.v[q] = e[i].born;
		} else {
			ng.v[j].allocs += g.allocs;
			ng.v[j].bytes_req += g.bytes_req;
			ng.v[j].bytes_alloc += g.bytes_alloc;
			ng.v[j].live_objects += g.live_objects;
			ng.v[j].live_bytes += g.live_bytes;
			ng.v[j].irq_bytes += g.irq_bytes;
			ng.v[j].acct_bytes += g.acct_bytes;
			ng.v[j].unknown_bytes += g.unknown_bytes;
		}
		group_map[e[i].shard][e[i].idx] = j;
	}
	free(d->groups.v);
	free(d->group_born.v);
	kmt_map_release(&d->group_map);
	memcpy(&d->groups, &ng, sizeof(ng));
	memcpy(&d->group_born, &nb, sizeof(nb));
	d->group_map = map;
	return !m->oom;
}

/* The sizes of the other shards added into shard 0's, by (requested, allocated). */
static void merge_sizes(struct kmt_model **sh, unsigned int n)
{
	struct kmt_model *m = sh[0];
	struct kmt_detail *d = m->detail;
	unsigned int k;
	size_t i;

	for (k = 1; k < n && !m->oom; k++) {
		const struct kmt_detail *x = sh[k]->detail;

		for (i = 0; i < x->sizes.n; i++) {
			const struct kmt_size_count *z = &x->sizes.v[i];
			uint64_t key = (uint64_t)z->req << 32 | z->alloc;
			uint32_t j = kmt_map_get(&d->size_map, key);

			if (j == NONE) {
				j = VEC_PUSH(d->sizes, m->oom);
				if (j == NONE || kmt_map_put(&d->size_map, key, j)) {
					m->oom = true;
					break;
				}
				d->sizes.v[j] = *z;
			} else {
				d->sizes.v[j].count += z->count;
			}
		}
	}
}

int model_detail_merge(struct kmt_model **sh, unsigned int n, uint32_t *const *site_map,
		       uint32_t *const *cache_map, uint32_t *const *proc_map, uint32_t **group_map)
{
	static const struct shard_list list = { model_detail_groups, group_born };
	struct kmt_model *m = sh[0];
	struct kmt_detail *d = m->detail;
	struct shard_ent *e;
	size_t total;

	if (d->full) {
		merge_timeline(sh, n);
		merge_series(sh, n, site_map, cache_map, proc_map);
	}
	/* Groups by when first made; sizes by size (they are sorted by it). */
	e = model_shard_order(sh, n, &list, &total);
	if (!e || m->oom) {
		free(e);
		m->oom = true;
		return -1;
	}
	merge_groups(sh, e, total, site_map, cache_map, proc_map, group_map);
	free(e);
	if (d->full)
		merge_sizes(sh, n);
	/* The hints pointed at the old rows. */
	free(d->hint);
	d->hint = NULL;
	d->hint_n = 0;
	return m->oom ? -1 : 0;
}

const struct kmt_timeline *kmt_model_timeline(const struct kmt_model *m)
{
	return m->detail && m->detail->full ? &m->detail->tl : NULL;
}

const struct kmt_group *kmt_model_groups(const struct kmt_model *m, size_t *n)
{
	*n = m->detail ? m->detail->groups.n : 0;
	return m->detail ? m->detail->groups.v : NULL;
}

const struct kmt_cgroup_site *kmt_model_cgroup_sites(const struct kmt_model *m, size_t *n)
{
	*n = m->detail ? m->detail->cgroup_sites.n : 0;
	return m->detail ? m->detail->cgroup_sites.v : NULL;
}

const struct kmt_size_count *kmt_model_sizes(const struct kmt_model *m, size_t *n)
{
	*n = m->detail ? m->detail->sizes.n : 0;
	return m->detail ? m->detail->sizes.v : NULL;
}
