/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace top, the snapshots (src/top/top.h): every interval, the model's
 * call sites, caches or processes, each compared with what the previous
 * snapshot saw of it: allocations, frees and bytes in the interval, and
 * what is live now (allocated since top began and not gone).
 */
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "util/util.h"
#include "util/opt.h"
#include "top.h"

static int64_t get_allocs(const struct top_row *r) { return (int64_t)r->allocs; }
static int64_t get_frees(const struct top_row *r) { return (int64_t)r->frees; }
static int64_t get_bytes(const struct top_row *r) { return (int64_t)r->bytes_alloc; }
static int64_t get_req(const struct top_row *r) { return (int64_t)r->bytes_req; }
static int64_t get_waste(const struct top_row *r) { return (int64_t)kmt_waste(r->bytes_req, r->bytes_alloc); }
static int64_t get_live_objects(const struct top_row *r) { return (int64_t)r->live_objects; }
static int64_t get_live(const struct top_row *r) { return (int64_t)r->live_bytes; }
static int64_t get_growth(const struct top_row *r) { return r->growth; }

const struct top_view_def top_views[VIEW_NR] = {
	[VIEW_SITES] = { "callsite", "call site", 'c', "call sites" },
	[VIEW_CACHES] = { "cache", "cache", 'k', "caches" },
	[VIEW_PROCS] = { "process", "process", 'p', "processes" },
	[VIEW_CGROUPS] = { "cgroup", "cgroup", 'g', "cgroups" },
};

const struct top_sort_key top_sorts[SORT_NR] = {
	[SORT_BYTES] = { "bytes", "bytes/s", get_bytes },
	[SORT_ALLOCS] = { "allocs", "allocs/s", get_allocs },
	[SORT_FREES] = { "frees", "frees/s", get_frees },
	[SORT_LIVE] = { "live", "live bytes", get_live },
	[SORT_GROWTH] = { "growth", "growth", get_growth },
	[SORT_WASTE] = { "waste", "waste", get_waste },
	[SORT_NAME] = { "name", "name", NULL },
};

/* The screen's order is the table's; so is the JSON row's. */
const struct top_col top_cols[] = {
	{ "allocs/s", 10, "allocs", false, true, false, 0, get_allocs },
	{ "frees/s", 10, "frees", false, true, false, 3, get_frees },
	{ "bytes/s", 11, "bytes_alloc", true, true, false, 0, get_bytes },
	{ NULL, 0, "bytes_req", true, false, false, 0, get_req },
	{ "waste/s", 10, NULL, true, true, false, 1, get_waste },
	{ "live", 9, "live_objects", false, false, false, 2, get_live_objects },
	{ "live bytes", 11, "live_bytes", true, false, false, 0, get_live },
	{ "growth", 11, "growth", true, false, true, 4, get_growth },
	{ 0 },
};

const char *view_name(enum top_view v)
{
	return v < VIEW_NR ? top_views[v].label : "?";
}

const char *sort_name(enum top_sort s)
{
	return s < SORT_NR ? top_sorts[s].label : "?";
}

const char *top_sort_keys(char *buf, size_t len)
{
	int i;

	buf[0] = '\0';
	for (i = 0; i < SORT_NR; i++)
		opt_join(buf, len, ",", top_sorts[i].key);
	return buf;
}

const char *top_view_keys(char *buf, size_t len)
{
	int i;

	buf[0] = '\0';
	for (i = 0; i < VIEW_NR; i++)
		opt_join(buf, len, ",", top_views[i].key);
	return buf;
}

/* The previous values of row @i of view @v (grown as the table grows); NULL on ENOMEM. */
static struct top_prev *prev_of(struct top *t, enum top_view v, size_t i)
{
	if (i >= t->nprev[v]) {
		size_t n = MAX(i + 1, t->nprev[v] * 2);
		struct top_prev *p = realloc(t->prev[v], n * sizeof(*p));

		if (!p)
			return NULL;
		memset(p + t->nprev[v], 0, (n - t->nprev[v]) * sizeof(*p));
		t->prev[v] = p;
		t->nprev[v] = n;
	}
	return &t->prev[v][i];
}

static struct top_row *row_add(struct top_snap *s, enum top_view v)
{
	if (ALLOC_GROW(s->rows[v], s->nrows[v] + 1, s->alloc[v], 256))
		return NULL;
	memset(&s->rows[v][s->nrows[v]], 0, sizeof(s->rows[v][0]));
	return &s->rows[v][s->nrows[v]++];
}

/* Row @i of view @v from cumulative counts @now, if anything moved or is live. */
static void row(struct top *t, enum top_view v, size_t i, const char *name, const struct top_prev *now,
		uint64_t live_objects)
{
	struct top_prev *p = prev_of(t, v, i);
	struct top_row *r;

	if (!p)
		return;
	if ((now->allocs != p->allocs || now->frees != p->frees || now->now_bytes) &&
	    (r = row_add(&t->snap, v))) {
		/* A name cut short says so (a merged cache's list of aliases can be long). */
		if (snprintf(r->name, sizeof(r->name), "%s", name) >= (int)sizeof(r->name))
			memcpy(r->name + sizeof(r->name) - 4, "...", 4);
		r->allocs = now->allocs - p->allocs;
		r->frees = now->frees - p->frees;
		r->bytes_alloc = now->bytes_alloc - p->bytes_alloc;
		r->bytes_req = now->bytes_req - p->bytes_req;
		r->live_objects = live_objects;
		r->live_bytes = now->now_bytes;
		r->growth = (int64_t)(now->now_bytes - p->now_bytes);
	}
	*p = *now;
}

static int cmp_rows(const void *a, const void *b, void *arg)
{
	const struct top_row *x = a, *y = b;
	enum top_sort sorting = *(const enum top_sort *)arg;
	int64_t kx, ky;

	if (!top_sorts[sorting].value)
		return strcmp(x->name, y->name);
	kx = top_sorts[sorting].value(x);
	ky = top_sorts[sorting].value(y);
	if (kx != ky)
		return kx < ky ? 1 : -1;
	if (x->live_bytes != y->live_bytes)
		return x->live_bytes < y->live_bytes ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Key @cg, @mem's index in the cgroup view (made if new; SIZE_MAX on ENOMEM): stable from one snapshot to the next. */
static size_t cgroup_key(struct top *t, const char *cg, const char *mem)
{
	size_t i;

	for (i = 0; i < t->ncgkeys; i++)
		if (t->cgkeys[i].cgroup == cg && t->cgkeys[i].memcg == mem)
			return i;
	if (ALLOC_GROW(t->cgkeys, t->ncgkeys + 1, t->cgkeys_alloc, 64))
		return SIZE_MAX;
	t->cgkeys[t->ncgkeys].cgroup = cg;
	t->cgkeys[t->ncgkeys].memcg = mem;
	return t->ncgkeys++;
}

/* The cgroup view: the tasks' rows summed by their cgroups (as report's cgroups table). */
static void cgroup_rows(struct top *t, const struct kmt_proc *procs, size_t n)
{
	struct top_prev *sum;
	uint64_t *live;
	size_t i, k;
	char name[128];

	for (i = 0; i < n; i++)
		if (cgroup_key(t, procs[i].cgroup, procs[i].memcg) == SIZE_MAX)
			return;
	sum = calloc(t->ncgkeys + 1, sizeof(*sum));
	live = calloc(t->ncgkeys + 1, sizeof(*live));
	for (i = 0; sum && live && i < n; i++) {
		k = cgroup_key(t, procs[i].cgroup, procs[i].memcg);
		sum[k].allocs += procs[i].allocs;
		sum[k].frees += procs[i].frees;
		sum[k].bytes_alloc += procs[i].bytes_alloc;
		sum[k].bytes_req += procs[i].bytes_req;
		sum[k].now_bytes += procs[i].now_bytes;
		live[k] += procs[i].now_objects;
	}
	for (k = 0; sum && live && k < t->ncgkeys; k++) {
		const struct top_cgroup *c = &t->cgkeys[k];

		if (!c->cgroup && !c->memcg)
			snprintf(name, sizeof(name), "?");
		else if (c->cgroup && c->memcg && strcmp(c->cgroup, c->memcg))
			snprintf(name, sizeof(name), "%s (memory: %s)", c->cgroup, c->memcg);
		else
			snprintf(name, sizeof(name), "%s", c->cgroup ? c->cgroup : c->memcg);
		row(t, VIEW_CGROUPS, k, name, &sum[k], live[k]);
	}
	free(sum);
	free(live);
}

void snap_take(struct top *t, double now, double cpu_s)
{
	struct top_snap *s = &t->snap;
	const struct kmt_summary *sum;
	double feed;
	size_t n, i;
	const struct kmt_site *sites;
	const struct kmt_cache *caches;
	const struct kmt_proc *procs;
	char name[64];
	uint64_t pages;

	/*
	 * In shards, a call site, cache or task has a row in each shard that
	 * took its events: the model gives their sums by key (an entry keeps
	 * its index, so the previous values by index still apply).
	 */
	if (kmt_analyse_live_sync(t->live))
		error("out of memory: the analysis stops");
	sum = kmt_model_summary(t->m);
	sites = kmt_model_sites(t->m, &n);
	for (i = 0; i < VIEW_NR; i++)
		s->nrows[i] = 0;
	s->number++;
	s->t = now;
	s->interval = now - t->prev_t;
	for (i = 0; i < n; i++) {
		struct top_prev c = { sites[i].allocs, sites[i].frees, sites[i].bytes_alloc, sites[i].bytes_req,
				      sites[i].now_bytes };

		if (!sites[i].allocs && !sites[i].now_bytes)
			continue;	/* only frees here */
		kmt_symbols_format(t->syms, sites[i].addr, name, sizeof(name));
		row(t, VIEW_SITES, i, name, &c, sites[i].now_objects);
	}
	caches = kmt_model_caches(t->m, &n);
	for (i = 0; i < n; i++) {
		struct top_prev c = { caches[i].allocs, caches[i].frees, caches[i].bytes_alloc,
				      caches[i].bytes_req, caches[i].now_bytes };

		if (kmt_cache_emptied(&caches[i]))
			continue;
		row(t, VIEW_CACHES, i, kmt_cache_label(&caches[i]), &c, caches[i].now_objects);
	}
	procs = kmt_model_procs(t->m, &n);
	for (i = 0; i < n; i++) {
		struct top_prev c = { procs[i].allocs, procs[i].frees, procs[i].bytes_alloc, procs[i].bytes_req,
				      procs[i].now_bytes };

		snprintf(name, sizeof(name), "%s %d", procs[i].comm, procs[i].pid);
		row(t, VIEW_PROCS, i, name, &c, procs[i].now_objects);
	}
	cgroup_rows(t, procs, n);
	snap_sort(t);
	pages = sum->page_allocs;
	s->events = kmt_analyse_live_events(t->live) - t->prev_events;
	s->allocs = sum->allocs - t->prev_sum.allocs;
	s->frees = sum->frees - t->prev_sum.frees;
	s->page_allocs = pages - t->prev_pages;
	s->live_objects = sum->now_objects;
	s->live_bytes = sum->now_bytes;
	s->growth = (int64_t)(sum->now_bytes - t->prev_sum.now_bytes);
	s->lost_events = sum->lost_events;
	s->lost_gaps = sum->lost_pages_unknown;
	s->lost_now = sum->lost_events + sum->lost_pages_unknown - t->prev_lost;
	s->cpu_pct = s->interval > 0 ? 100.0 * (cpu_s - t->prev_cpu) / s->interval : 0;
	feed = feed_cpu_seconds(t);
	s->feed_pct = feed < 0 ? -1 : s->interval > 0 ? 100.0 * (feed - t->prev_feed) / s->interval : 0;
	t->prev_feed = feed;
	s->shards = kmt_analyse_live_shards(t->live);
	s->queued = (t->rc.live ? kmt_live_queued(t->rc.live) : 0) + feed_queued(t);
	t->prev_sum = (struct top_prev){ sum->allocs, sum->frees, sum->bytes_alloc, sum->bytes_req,
					 sum->now_bytes };
	t->prev_events = kmt_analyse_live_events(t->live);
	t->prev_pages = pages;
	t->prev_lost = sum->lost_events + sum->lost_pages_unknown;
	t->prev_t = now;
	t->prev_cpu = cpu_s;
}

void snap_sort(struct top *t)
{
	int v;

	for (v = 0; v < VIEW_NR; v++)
		if (t->snap.nrows[v] > 1)
			qsort_r(t->snap.rows[v], t->snap.nrows[v], sizeof(*t->snap.rows[v]), cmp_rows, &t->sort);
}

/* Is the row @label ("pool_workqueue (+sgpool-16)") cache @name's? */
static bool cache_is(const char *label, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(label, name, n) && (!label[n] || !strncmp(label + n, " (+", 3));
}

bool snap_shown(const struct top *t, const struct top_row *r)
{
	if (*t->filter && !strcasestr(r->name, t->filter))	/* as htop: any case */
		return false;
	return !(t->cache && t->view == VIEW_CACHES && !cache_is(r->name, t->cache));
}

void snap_release(struct top *t)
{
	int v;

	for (v = 0; v < VIEW_NR; v++) {
		free(t->prev[v]);
		free(t->snap.rows[v]);
	}
	free(t->cgkeys);
}
