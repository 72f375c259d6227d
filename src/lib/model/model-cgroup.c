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

static int cmp_row(const void *x, const void *y)
{
	const struct kmt_cgroup_site *a = x, *b = y;
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
	uint64_t task = g->bytes_alloc - g->irq_bytes;

	row->allocs += g->allocs;
	row->bytes_alloc += g->bytes_alloc;
	row->live_bytes += g->live_bytes;
	row->irq_bytes += g->irq_bytes;
	if (p->kthread) {
		row->kthread_bytes += task;
		return;
	}
	row->acct_bytes += g->acct_bytes;
	row->unknown_bytes += g->unknown_bytes;
	row->unacct_bytes += task - g->acct_bytes - g->unknown_bytes;
}

void model_cgroup_sites(struct kmt_model *m, struct kmt_cgroup_site **v, size_t *n)
{
	size_t ng, i, k = 0;
	const struct kmt_group *g = kmt_model_groups(m, &ng);
	struct kmt_cgroup_site *r;

	free(*v);
	*v = NULL;
	*n = 0;
	if (!m->o.cgroups || !ng)
		return;
	r = calloc(ng, sizeof(*r));
	if (!r) {
		m->oom = true;
		return;
	}
	/* A row per group, then sorted and folded: rows of one key are adjacent. */
	for (i = 0; i < ng; i++) {
		const struct kmt_proc *p = g[i].proc != NONE ? &m->reg.procs.v[g[i].proc] : NULL;

		if (!p || !g[i].allocs)
			continue;
		r[k].cgroup = p->cgroup;
		r[k].memcg = p->memcg;
		r[k].site = m->reg.sites.v[g[i].site].addr;
		add_group(&r[k], &g[i], p);
		k++;
	}
	qsort(r, k, sizeof(*r), cmp_row);
	for (i = 0, ng = k, k = 0; i < ng; i++) {
		if (k && !cmp_row(&r[k - 1], &r[i])) {
			struct kmt_cgroup_site *d = &r[k - 1];

			d->allocs += r[i].allocs;
			d->bytes_alloc += r[i].bytes_alloc;
			d->live_bytes += r[i].live_bytes;
			d->acct_bytes += r[i].acct_bytes;
			d->unacct_bytes += r[i].unacct_bytes;
			d->unknown_bytes += r[i].unknown_bytes;
			d->irq_bytes += r[i].irq_bytes;
			d->kthread_bytes += r[i].kthread_bytes;
		} else {
			r[k++] = r[i];
		}
	}
	*v = r;
	*n = k;
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
