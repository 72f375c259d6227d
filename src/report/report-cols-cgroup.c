/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The report's cgroups table (report-cols.h): the tasks' rows
 * (kmt_model_procs()) folded by the cgroups each was in when it
 * allocated, with what the slab bytes asked of memory accounting.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "report.h"

#include "report-cols.h"

/* One cgroup: its paths (interned: compared as pointers) and its tasks' sums. */
struct cgroup_row {
	const char *cgroup, *memcg;
	uint64_t tasks, allocs, frees, bytes_req, bytes_alloc, live_objects, live_bytes;
	uint64_t page_allocs, pages, acct_pages;
	struct kmt_charge ch;
	int32_t last_pid;		/* while folding: tasks counts pids, rows of one pid are adjacent */
};

/* Task row @p added to @c. */
static void cgroup_add(struct cgroup_row *c, const struct kmt_proc *p)
{
	if (p->pid != c->last_pid || !c->tasks)
		c->tasks++;
	c->last_pid = p->pid;
	c->allocs += p->allocs;
	c->frees += p->frees;
	c->bytes_req += p->bytes_req;
	c->bytes_alloc += p->bytes_alloc;
	c->live_objects += p->live_objects;
	c->live_bytes += p->live_bytes;
	c->page_allocs += p->page_allocs;
	c->pages += p->pages;
	c->acct_pages += p->acct_pages;
	kmt_charge_add(&c->ch, p->bytes_alloc, p->irq_bytes, p->acct_bytes, p->unknown_bytes, p->kthread);
}

static int cmp_pid(const void *a, const void *b)
{
	const struct kmt_proc *x = *(const struct kmt_proc *const *)a, *y = *(const struct kmt_proc *const *)b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The cgroups in the order their first task (by pid) comes; rows and pointers in one block. */
static size_t cgroup_rows(const struct report *r, const void ***out)
{
	size_t n, i, j, nc = 0;
	const struct kmt_proc *v = kmt_model_procs(r->m, &n);
	const struct kmt_proc **byp = malloc((n + 1) * sizeof(*byp));
	const void **p = malloc((n + 1) * (sizeof(*p) + sizeof(struct cgroup_row)));
	struct cgroup_row *c = (struct cgroup_row *)(p + n + 1);

	*out = p;
	if (!p || !byp) {
		free(byp);
		return 0;
	}
	for (i = 0; i < n; i++)
		byp[i] = &v[i];
	qsort(byp, n, sizeof(*byp), cmp_pid);
	for (i = 0; i < n; i++) {
		const struct kmt_proc *t = byp[i];

		if (!t->allocs && !t->page_allocs)
			continue;
		/* Few cgroups hold many tasks: a scan of the rows made so far. */
		for (j = 0; j < nc && (c[j].cgroup != t->cgroup || c[j].memcg != t->memcg); j++)
			;
		if (j == nc) {
			memset(&c[nc], 0, sizeof(c[nc]));
			c[nc].cgroup = t->cgroup;
			c[nc].memcg = t->memcg;
			p[nc] = &c[nc];
			nc++;
		}
		cgroup_add(&c[j], t);
	}
	free(byp);
	return nc;
}

#define CG(row) ((const struct cgroup_row *)(row))

/* Both tables' rows begin with their cgroup's paths: one pair of getters. */
_Static_assert(offsetof(struct cgroup_row, cgroup) == offsetof(struct kmt_cgroup_site, cgroup) &&
	       offsetof(struct cgroup_row, memcg) == offsetof(struct kmt_cgroup_site, memcg),
	       "cgroup rows and cgroup-site rows begin alike");

static void g_cgroup(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	const char *p = kmt_cgroup_name(CG(row)->cgroup, CG(row)->memcg);

	v->s = p ? p : "?";
}

static void g_memcg(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = CG(row)->memcg ? CG(row)->memcg : "";
}

static void g_container(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	const char *c = CG(row)->cgroup ? kmt_cgroup_container(CG(row)->cgroup, buf, len) : NULL;

	if (!c && CG(row)->memcg)
		c = kmt_cgroup_container(CG(row)->memcg, buf, len);
	v->s = c ? c : "";
}

/* The cgroup's name in the text: its v2 path, and its memory cgroup's where that is another. */
static const char *t_cgroup(const struct report *r, const struct rcol *c, const void *row, char *buf,
			    size_t len)
{
	const struct cgroup_row *g = row;

	if (!g->cgroup && !g->memcg)
		return "? (a task the file cannot place)";
	if (!g->memcg || (g->cgroup && !strcmp(g->cgroup, g->memcg)))
		return g->cgroup ? g->cgroup : g->memcg;
	snprintf(buf, len, "%s (memory: %s)", g->cgroup ? g->cgroup : "?", g->memcg);
	return buf;
}

#define C struct cgroup_row
static const struct rcol cgroup_cols[] = {
	{ .name = "cgroup", .type = RT_STR, .unit = RU_NONE, .title = "cgroup", .width = -32,
	  .doc = "the cgroup v2 path of the tasks that allocated, as /proc/PID/cgroup shows it (\"?\": unknown); "
	  "without cgroup v2, the v1 memory controller's", .get = g_cgroup, .text = t_cgroup, .flags = RC_NAME },
	G("memcg", RT_STR, RU_NONE, NULL, 0, NULL, "their cgroup v1 memory controller's path, where it is mounted "
	  "(a hybrid system charges memory there), else empty", g_memcg),
	G("container", RT_STR, RU_NONE, "container", -18, NULL, "the container the path names (docker, containerd, "
	  "cri-o, podman: \"runtime:12 hex digits\"; a Kubernetes pod: \"pod:UID\"), else empty", g_container),
	U("tasks", C, tasks, RU_COUNT, "tasks", 6, NULL, "tasks (pids) that allocated in it"),
	U("allocs", C, allocs, RU_COUNT, "allocs", 9, "allocs", "slab allocations by them in it"),
	U("frees", C, frees, RU_COUNT, "frees", 9, "frees", "of those objects, freed in the window"),
	U("bytes_req", C, bytes_req, RU_BYTES, NULL, 0, "req", "bytes requested"),
	U("bytes_alloc", C, bytes_alloc, RU_BYTES, "allocated", 10, "bytes", "bytes allocated"),
	U("live_objects", C, live_objects, RU_COUNT, NULL, 0, NULL, "their objects live at the end"),
	U("live_bytes", C, live_bytes, RU_BYTES, "live bytes", 10, "live", "their bytes"),
	U("page_allocs", C, page_allocs, RU_COUNT, NULL, 0, NULL, "page allocations by them in it"),
	U("pages", C, pages, RU_COUNT, "pages", 8, "pages", "pages in them"),
	U("accounted_pages", C, acct_pages, RU_COUNT, NULL, 0, NULL,
	  "of them, pages that asked to be charged to the memory cgroup (__GFP_ACCOUNT; a user page is "
	  "charged without it)"),
	U("accounted_bytes", C, ch.acct_bytes, RU_BYTES, "accounted", 10, NULL, "slab bytes allocated in "
	  "task context that asked to be charged to the memory cgroup (the event's accounted field, else "
	  "__GFP_ACCOUNT): asked, not done where the cgroup is the root"),
	U("unaccounted_bytes", C, ch.unacct_bytes, RU_BYTES, "unaccounted", 11, "unaccounted", "slab bytes allocated "
	  "in task context that asked for no charge: memory the cgroup's limit does not see"),
	U("unknown_bytes", C, ch.unknown_bytes, RU_BYTES, "unknown", 9, NULL, "slab bytes whose charge the kernel "
	  "cannot tell (kmem_cache_alloc before 6.0 without __GFP_ACCOUNT: its cache may charge)"),
	U("irq_bytes", C, ch.irq_bytes, RU_BYTES, "irq", 9, NULL, "slab bytes allocated in interrupt context "
	  "while its tasks ran: never charged to them"),
	U("kthread_bytes", C, ch.kthread_bytes, RU_BYTES, "kthreads", 9, NULL, "slab bytes allocated by kernel "
	  "threads (outside interrupts): not charged to the cgroup"),
	END,
};
#undef C

const struct rtable t_cgroups = {
	.name = "cgroups", .section = SEC_CGROUPS, .cols = cgroup_cols, .rows = cgroup_rows,
	.default_sort = "bytes", .narrow = "live_bytes unknown_bytes frees kthread_bytes irq_bytes tasks container pages",
	.doc = "allocations by the cgroup of the task that made them (recordings with cgroups)", .sql = true,
};

/* ---- per cgroup and call site: the holes in memory accounting ---- */

static size_t site_rows(const struct report *r, const void ***out)
{
	size_t n;
	const struct kmt_cgroup_site *v = kmt_model_cgroup_sites(r->m, &n);

	return rtable_ptrs(v, n, sizeof(*v), out);
}

static size_t site_rows_of(const struct report *r, const void *parent, const void ***out)
{
	size_t n;
	const struct kmt_cgroup_site *v = kmt_model_cgroup_sites_of(r->m, CG(parent)->cgroup, CG(parent)->memcg, &n);

	return rtable_ptrs(v, n, sizeof(*v), out);
}

#define CS(row) ((const struct kmt_cgroup_site *)(row))

static void g_site_callsite(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = site_name(r, CS(row)->site, buf, len);
}

static void g_site_function(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = site_function(r, CS(row)->site, buf, len);
}

#define S struct kmt_cgroup_site
static const struct rcol site_cols[] = {
	G("cgroup", RT_STR, RU_NONE, NULL, 0, NULL, "as in cgroups", g_cgroup),
	G("memcg", RT_STR, RU_NONE, NULL, 0, NULL, "as in cgroups", g_memcg),
	G("callsite", RT_STR, RU_NONE, NULL, 0, NULL, "the call site (function+offset)", g_site_callsite),
	G("function", RT_STR, RU_NONE, NULL, 0, NULL, "its function", g_site_function),
	U("allocs", S, allocs, RU_COUNT, NULL, 0, "allocs", "slab allocations there by the cgroup's tasks"),
	U("bytes_alloc", S, bytes_alloc, RU_BYTES, NULL, 0, "bytes", "bytes allocated"),
	U("live_bytes", S, live_bytes, RU_BYTES, NULL, 0, "live", "of them, live at the end"),
	U("accounted_bytes", S, ch.acct_bytes, RU_BYTES, NULL, 0, NULL, "as in cgroups"),
	U("unaccounted_bytes", S, ch.unacct_bytes, RU_BYTES, NULL, 0, "unaccounted", "as in cgroups: the holes"),
	U("unknown_bytes", S, ch.unknown_bytes, RU_BYTES, NULL, 0, NULL, "as in cgroups"),
	U("irq_bytes", S, ch.irq_bytes, RU_BYTES, NULL, 0, NULL, "as in cgroups"),
	U("kthread_bytes", S, ch.kthread_bytes, RU_BYTES, NULL, 0, NULL, "as in cgroups"),
	END,
};
#undef S

const struct rtable t_cgroup_sites;

/* Text: the cgroup's call sites that asked for no charge, most bytes first, under its row. */
static void sites_text(const struct report *r, const void *row, FILE *out)
{
	const void **rows = NULL;
	size_t n = rtable_rows_of(r, &t_cgroup_sites, row, &rows), i, shown = 0, holes = 0;
	char site[256], ub[32], ab[32], num[32];

	for (i = 0; i < n; i++)
		holes += CS(rows[i])->ch.unacct_bytes > 0;
	for (i = 0; i < n && shown < (size_t)MAX(r->stacks_per_site, 0); i++) {
		const struct kmt_cgroup_site *s = rows[i];

		if (!s->ch.unacct_bytes)
			continue;
		fprintf(out, "      %10s unaccounted %10s accounted %9s allocs  %s\n",
			human_bytes((double)s->ch.unacct_bytes, ub), human_bytes((double)s->ch.acct_bytes, ab),
			fmt_count((double)s->allocs, false, num, sizeof(num)), site_name(r, s->site, site, sizeof(site)));
		shown++;
	}
	if (holes > shown)
		fprintf(out, "      (%s more call %s with unaccounted bytes)\n",
			fmt_count((double)(holes - shown), false, num, sizeof(num)),
			holes - shown == 1 ? "site" : "sites");
	free(rows);
}

const struct rtable t_cgroup_sites = {
	.name = "cgroup_sites", .json_key = "sites", .parent = "cgroups", .section = SEC_CGROUPS,
	.cols = site_cols, .rows = site_rows, .rows_of = site_rows_of, .text_after = sites_text,
	.default_sort = "unaccounted",
	.doc = "slab allocations by cgroup and call site (in JSON: each cgroup's), the unaccounted first: "
	       "where a cgroup's tasks allocate memory its limit does not see", .sql = true,
};
