/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Slab allocations per cgroup and call site (kmt_model_cgroup_sites()):
 * the groups (site, cache, task) folded by the cgroups of their task, once,
 * at the end. A few thousand groups per cgroup at most; a sort of them.
 */
#include <stdlib.h>
#include <string.h>

#include "model-local.h"

/* A path in order ("" for none, first). */
static int cmp_path(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/* A row's cgroup (paths are interned: equal paths are one pointer), for grouping. */
struct keyed {
	struct kmt_cgroup_site r;
	uint32_t rank;			/* its cgroup's place in the paths' order */
};

static int cmp_ptr(const void *x, const void *y)
{
	const struct keyed *a = x, *b = y;
	uintptr_t p = (uintptr_t)a->r.cgroup, q = (uintptr_t)b->r.cgroup;

	if (p == q)
		p = (uintptr_t)a->r.memcg, q = (uintptr_t)b->r.memcg;
	if (p == q)
		p = a->r.site, q = b->r.site;
	return (p > q) - (p < q);
}

static int cmp_names(const void *x, const void *y)
{
	const struct kmt_cgroup_site *a = *(const struct kmt_cgroup_site *const *)x;
	const struct kmt_cgroup_site *b = *(const struct kmt_cgroup_site *const *)y;
	int c = cmp_path(a->cgroup, b->cgroup);

	return c ? c : cmp_path(a->memcg, b->memcg);
}

static int cmp_rank(const void *x, const void *y)
{
	const struct keyed *a = x, *b = y;

	if (a->rank != b->rank)
		return (a->rank > b->rank) - (a->rank < b->rank);
	return (a->r.site > b->r.site) - (a->r.site < b->r.site);
}

/* The order rows are kept in: by cgroup path, memcg path, then site. */
static int cmp_row(const struct kmt_cgroup_site *a, const struct kmt_cgroup_site *b)
{
	int c = cmp_path(a->cgroup, b->cgroup);

	if (!c)
		c = cmp_path(a->memcg, b->memcg);
	if (!c)
		c = (a->site > b->site) - (a->site < b->site);
	return c;
}

/* Group @g of task @p, added to @row: its bytes by what they asked of accounting. */
static void add_group(struct kmt_cgroup_site *row, const struct kmt_group *g, const struct kmt_proc *p)
{
	row->allocs += g->allocs;
	row->bytes_alloc += g->bytes_alloc;
	row->live_bytes += g->live_bytes;
	kmt_charge_add(&row->ch, g->bytes_alloc, g->irq_bytes, g->acct_bytes, g->unknown_bytes, p->kthread);
}

static void add_row(struct kmt_cgroup_site *d, const struct kmt_cgroup_site *s)
{
	d->allocs += s->allocs;
	d->bytes_alloc += s->bytes_alloc;
	d->live_bytes += s->live_bytes;
	d->ch.acct_bytes += s->ch.acct_bytes;
	d->ch.unacct_bytes += s->ch.unacct_bytes;
	d->ch.unknown_bytes += s->ch.unknown_bytes;
	d->ch.irq_bytes += s->ch.irq_bytes;
	d->ch.kthread_bytes += s->ch.kthread_bytes;
}

/*
 * Rows folded by (cgroup, memcg, site) through the paths' pointers, then put
 * in the paths' order: the cgroups (few) sorted by name once, the rows by
 * their cgroup's rank, with no string compared per row.
 */
void model_cgroup_sites(struct kmt_model *m, struct kmt_cgroup_site **v, size_t *n)
{
	size_t ng, i, k = 0, nc = 0;
	const struct kmt_group *g = kmt_model_groups(m, &ng);
	struct kmt_cgroup_site *out, **firsts;
	struct keyed *r;

	free(*v);
	*v = NULL;
	*n = 0;
	if (!m->o.cgroups || !ng)
		return;
	r = calloc(ng, sizeof(*r));
	out = calloc(ng, sizeof(*out));
	firsts = calloc(ng, sizeof(*firsts));
	if (!r || !out || !firsts) {
		m->oom = true;
		goto out;
	}
	for (i = 0; i < ng; i++) {
		const struct kmt_proc *p = g[i].proc != NONE ? &m->reg.procs.v[g[i].proc] : NULL;

		if (!p || !g[i].allocs)
			continue;
		r[k].r.cgroup = p->cgroup;
		r[k].r.memcg = p->memcg;
		r[k].r.site = m->reg.sites.v[g[i].site].addr;
		add_group(&r[k].r, &g[i], p);
		k++;
	}
	qsort(r, k, sizeof(*r), cmp_ptr);
	for (i = 0, ng = k, k = 0; i < ng; i++) {
		if (k && !cmp_ptr(&r[k - 1], &r[i])) {
			add_row(&r[k - 1].r, &r[i].r);
			continue;
		}
		r[k++] = r[i];
	}
	/* Each cgroup's rows are a run: its first row ranks it by name. */
	for (i = 0; i < k; i++)
		if (!i || r[i - 1].r.cgroup != r[i].r.cgroup || r[i - 1].r.memcg != r[i].r.memcg)
			firsts[nc++] = &r[i].r;
	qsort(firsts, nc, sizeof(*firsts), cmp_names);
	for (i = 0; i < nc; i++)
		((struct keyed *)(void *)firsts[i])->rank = (uint32_t)i;
	for (i = 0; i < k; i++)
		if (i && r[i - 1].r.cgroup == r[i].r.cgroup && r[i - 1].r.memcg == r[i].r.memcg)
			r[i].rank = r[i - 1].rank;
	qsort(r, k, sizeof(*r), cmp_rank);
	for (i = 0; i < k; i++)
		out[i] = r[i].r;
	*v = out;
	*n = k;
	out = NULL;
out:
	free(r);
	free(out);
	free(firsts);
}

const struct kmt_cgroup_site *kmt_model_cgroup_sites_of(const struct kmt_model *m, const char *cgroup,
							const char *memcg, size_t *n)
{
	size_t all, lo = 0, hi, i;
	const struct kmt_cgroup_site *v = kmt_model_cgroup_sites(m, &all);
	struct kmt_cgroup_site key = { .cgroup = cgroup, .memcg = memcg };

	*n = 0;
	/* The first row of the cgroup: rows sort by (cgroup, memcg, site), site 0 first. */
	hi = all;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_row(&v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < all && !cmp_path(v[i].cgroup, cgroup) && !cmp_path(v[i].memcg, memcg); i++)
		;
	*n = i - lo;
	return *n ? v + lo : NULL;
}
