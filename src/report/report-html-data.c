/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The data of report --html beyond report --json's document: the time
 * series (the model's detail, with the top caches and call sites), the
 * flame graph's tree and the requested x allocated sizes, all bounded so
 * that a page of any trace stays a few MB.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "flame.h"
#include "util/json.h"
#include "report-html.h"

#define TOP_SERIES 8			/* caches, sites stacked in the live series */
#define FLAME_MIN 5000			/* nodes below 1/FLAME_MIN of the root, in every metric, merged */
#define MAX_SIZES 4000			/* (requested, allocated) pairs; the rest summed per class */

/* ---- time series ---- */

static void u64_array(struct js *j, const char *k, const uint64_t *v, size_t n)
{
	size_t i;

	js_open(j, k, '[');
	for (i = 0; i < n; i++)
		js_u64(j, NULL, v[i]);
	js_close(j, ']');
}

static void i64_array(struct js *j, const char *k, const int64_t *v, size_t n)
{
	size_t i;

	js_open(j, k, '[');
	for (i = 0; i < n; i++)
		js_i64(j, NULL, v[i]);
	js_close(j, ']');
}


struct top {
	size_t idx;
	int64_t peak;
};

static int cmp_top(const void *a, const void *b)
{
	const struct top *x = a, *y = b;

	if (x->peak != y->peak)
		return (x->peak < y->peak) - (x->peak > y->peak);
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/*
 * The live bytes of the @nr series in @tab with the highest peaks, and of
 * the rest together ("other"), each @n intervals; @total their sum.
 */
static void top_series(struct js *j, const struct report *r, const char *key,
		       const int64_t *const *tab, size_t nr, size_t n, const int64_t *total,
		       bool sites)
{
	struct top *t = calloc(nr + 1, sizeof(*t));
	int64_t *live = calloc(n + 1, sizeof(*live)), *other = calloc(n + 1, sizeof(*other));
	size_t i, k, m = 0;
	char buf[256];

	js_open(j, key, '[');
	if (!t || !live || !other)
		goto out;
	for (i = 0; i < nr; i++)
		if (tab[i]) {
			t[m].idx = i;
			t[m++].peak = running_sum(tab[i], n, live);
		}
	qsort(t, m, sizeof(*t), cmp_top);
	memcpy(other, total, n * sizeof(*other));
	for (k = 0; k < m && k < TOP_SERIES && t[k].peak > 0; k++) {
		size_t nsites;
		const struct kmt_site *s = kmt_model_sites(r->m, &nsites);

		running_sum(tab[t[k].idx], n, live);
		for (i = 0; i < n; i++)
			other[i] -= live[i];
		js_open(j, NULL, '{');
		js_str(j, "name", sites ? site_name(r, s[t[k].idx].addr, buf, sizeof(buf))
				       : cache_name(r, (uint32_t)t[k].idx));
		i64_array(j, "live", live, n);
		js_close(j, '}');
	}
	if (m > k) {
		js_open(j, NULL, '{');
		js_str(j, "name", "other");
		i64_array(j, "live", other, n);
		js_close(j, '}');
	}
out:
	js_close(j, ']');
	free(t);
	free(live);
	free(other);
}

static void timeline(struct js *j, const struct report *r)
{
	const struct kmt_timeline *t = kmt_model_timeline(r->m);
	size_t n, nc, i;
	int64_t *live, *coarse_net, *coarse;
	uint64_t births = 0, newtasks = 0;
	int o;

	if (!t)
		return;
	n = t->n;
	nc = (n + KMT_TL_COARSE - 1) / KMT_TL_COARSE;
	live = calloc(n + 1, sizeof(*live));
	coarse_net = calloc(nc + 1, sizeof(*coarse_net));
	coarse = calloc(nc + 1, sizeof(*coarse));
	if (!live || !coarse_net || !coarse)
		goto out;
	js_open(j, "timeline", '{');
	js_u64(j, "start_ns", since(r->t0, t->start));
	js_u64(j, "width_ns", t->width);
	js_u64(j, "n", n);
	u64_array(j, "allocs", t->allocs, n);
	u64_array(j, "frees", t->frees, n);
	u64_array(j, "bytes_alloc", t->bytes_alloc, n);
	u64_array(j, "bytes_freed", t->bytes_freed, n);
	running_sum(t->net, n, live);
	i64_array(j, "live", live, n);
	js_open(j, "pages", '[');
	for (o = 0; o <= KMT_MAX_ORDER; o++) {
		uint64_t sum = 0;

		for (i = 0; i < n; i++)
			sum += t->page_allocs[o][i];
		if (!sum)
			continue;
		js_open(j, NULL, '{');
		js_u64(j, "order", (uint64_t)o);
		u64_array(j, "allocs", t->page_allocs[o], n);
		js_close(j, '}');
	}
	js_close(j, ']');
	/* Births: sched_process_fork where recorded, else task_newtask. */
	for (i = 0; i < n; i++) {
		births += t->forks[i];
		newtasks += t->newtasks[i];
	}
	js_str(j, "births_event", births || !newtasks ? "sched_process_fork" : "task_newtask");
	u64_array(j, "births", births || !newtasks ? t->forks : t->newtasks, n);
	top_series(j, r, "caches", t->cache_net, t->nr_caches, n, live, false);
	/* Call sites at a coarser grain: KMT_TL_COARSE intervals in one. */
	for (i = 0; i < n; i++)
		coarse_net[i / KMT_TL_COARSE] += t->net[i];
	running_sum(coarse_net, nc, coarse);
	js_u64(j, "site_width_ns", t->width * KMT_TL_COARSE);
	js_u64(j, "site_n", nc);
	top_series(j, r, "sites", t->site_net, t->nr_sites, nc, coarse, true);
	js_open(j, "gaps", '[');
	for (i = 0; i < t->nr_gaps; i++) {
		js_open(j, NULL, '{');
		js_u64(j, "ts_ns", since(r->t0, t->gaps[i].ts));
		js_i64(j, "cpu", t->gaps[i].cpu);
		js_i64(j, "lost", t->gaps[i].lost);
		js_bool(j, "truncated", t->gaps[i].truncated);
		js_close(j, '}');
	}
	js_close(j, ']');
	js_close(j, '}');
out:
	free(live);
	free(coarse_net);
	free(coarse);
}

/* ---- the flame graph (src/report/flame.c) ---- */

static int cmp_node(const void *a, const void *b)
{
	const struct flame_node *x = *(struct flame_node *const *)a, *y = *(struct flame_node *const *)b;

	if (x->v[FV_BYTES] != y->v[FV_BYTES])
		return (x->v[FV_BYTES] < y->v[FV_BYTES]) - (x->v[FV_BYTES] > y->v[FV_BYTES]);
	return strcmp(x->name, y->name);
}

static void values(struct js *j, const uint64_t *v)
{
	int k;

	js_open(j, "v", '[');
	for (k = 0; k < FV_NR; k++)
		js_u64(j, NULL, v[k]);
	js_close(j, ']');
}

/* Children too small in every metric are summed into one "(other)" leaf. */
static void node_write(struct js *j, const char *key, struct flame_node *f, const uint64_t *min)
{
	uint64_t other[FV_NR] = { 0 };
	size_t i, nother = 0;
	int k;

	js_open(j, key, '{');
	js_str(j, "n", f->name);
	values(j, f->v);
	if (f->nkids) {
		qsort(f->kids, f->nkids, sizeof(*f->kids), cmp_node);
		js_open(j, "c", '[');
		for (i = 0; i < f->nkids; i++) {
			struct flame_node *c = f->kids[i];

			bool small = true;

			for (k = 0; k < FV_NR; k++)
				small &= c->v[k] < min[k];
			if (small) {
				for (k = 0; k < FV_NR; k++)
					other[k] += c->v[k];
				nother++;
			} else {
				node_write(j, NULL, c, min);
			}
		}
		if (nother) {
			js_open(j, NULL, '{');
			js_str(j, "n", "(other)");
			values(j, other);
			js_u64(j, "merged", nother);
			js_close(j, '}');
		}
		js_close(j, ']');
	}
	js_close(j, '}');
}

static void flame(struct js *j, const struct report *r)
{
	struct flame *f = flame_build(r);
	uint64_t min[FV_NR];
	int k;

	if (!f)
		return;
	for (k = 0; k < FV_NR; k++)
		min[k] = MAX(flame_root(f)->v[k] / FLAME_MIN, (uint64_t)1);
	js_open(j, "flame", '{');
	js_str(j, "kind", flame_stacks(f) ? "stacks" : "sites");
	node_write(j, "root", flame_root(f), min);
	js_close(j, '}');
	flame_free(f);
}

/* ---- sizes ---- */

static int cmp_count(const void *a, const void *b)
{
	const struct kmt_size_count *x = a, *y = b;

	if (x->count != y->count)
		return (x->count < y->count) - (x->count > y->count);
	if (x->alloc != y->alloc)
		return (x->alloc > y->alloc) - (x->alloc < y->alloc);
	return (x->req > y->req) - (x->req < y->req);
}

static int cmp_alloc(const void *a, const void *b)
{
	const struct kmt_size_count *x = a, *y = b;

	return (x->alloc > y->alloc) - (x->alloc < y->alloc);
}

/*
 * Slab allocations by (requested, allocated) size, the most frequent
 * MAX_SIZES pairs; the rest per allocated size with "req": null.
 */
static void sizes(struct js *j, const struct report *r)
{
	size_t n, i, k;
	const struct kmt_size_count *v = kmt_model_sizes(r->m, &n);
	struct kmt_size_count *c = n ? malloc(n * sizeof(*c)) : NULL;

	js_open(j, "sizes", '[');
	if (c) {
		memcpy(c, v, n * sizeof(*c));
		qsort(c, n, sizeof(*c), cmp_count);
		for (i = 0; i < n && i < MAX_SIZES; i++) {
			js_open(j, NULL, '[');
			js_u64(j, NULL, c[i].req);
			js_u64(j, NULL, c[i].alloc);
			js_u64(j, NULL, c[i].count);
			js_close(j, ']');
		}
		/* The rest, summed per allocated size: [-requested bytes, alloc, count]. */
		if (i < n)
			qsort(c + i, n - i, sizeof(*c), cmp_alloc);
		for (; i < n; i = k) {
			uint64_t req = 0, cnt = 0;

			for (k = i; k < n && c[k].alloc == c[i].alloc; k++) {
				req += (uint64_t)c[k].req * c[k].count;
				cnt += c[k].count;
			}
			js_open(j, NULL, '[');
			js_i64(j, NULL, -(int64_t)req);
			js_u64(j, NULL, c[i].alloc);
			js_u64(j, NULL, cnt);
			js_close(j, ']');
		}
		free(c);
	}
	js_close(j, ']');
}

/* ---- the columns of the report's tables ---- */

static const char *const unit_names[] = {
	[RU_COUNT] = "count", [RU_BYTES] = "bytes", [RU_NS] = "ns", [RU_NONE] = "",
};

void html_column(struct js *j, const struct rcol *c)
{
	static const char *const types[] = {
		[RT_U64] = "u64", [RT_I64] = "i64", [RT_PCT] = "pct", [RT_STR] = "str",
		[RT_BOOL] = "bool", [RT_HIST] = "hist", [RT_ARRAY] = "array", [RT_KINDS] = "kinds",
		[RT_MATRIX] = "matrix", [RT_FRAMES] = "frames", [RT_NAMES] = "names",
	};
	char doc[512];

	js_str(j, "name", c->name);
	js_str(j, "title", c->title ? c->title : "");
	js_str(j, "type", types[c->type]);
	js_str(j, "unit", unit_names[c->unit]);
	js_str(j, "doc", rcol_doc(c, doc, sizeof(doc)));
}

static void columns(struct js *j)
{
	const struct rcol *c;
	int k;

	js_open(j, "columns", '{');
	for (k = 0; report_tables[k]; k++) {
		js_open(j, report_tables[k]->name, '[');
		for (c = report_tables[k]->cols; c->name; c++) {
			if (c->flags & RC_CSV_ONLY)
				continue;
			js_open(j, NULL, '{');
			html_column(j, c);
			js_close(j, '}');
		}
		js_close(j, ']');
	}
	js_close(j, '}');
}

/* Each table's rows before -n cut them, so the page can say "100 of 2,345". */
static void totals(struct js *j, const struct report *r)
{
	int k;

	js_open(j, "totals", '{');
	for (k = 0; report_tables[k]; k++) {
		const struct rtable *t = report_tables[k];
		const void **rows = NULL;

		if (t->single || t->rows_of)
			continue;
		js_u64(j, t->name, rtable_rows(r, t, &rows));
		free(rows);
	}
	js_close(j, '}');
}

/* What each misuse kind means, by name: the page's glossary under its misuse table. */
static void misuse_kinds(struct js *j)
{
	int k;

	js_open(j, "misuse_kinds", '{');
	for (k = 0; k < KMT_MISUSE_NR; k++)
		js_str(j, kmt_misuse_name(k), kmt_misuse_doc(k));
	js_close(j, '}');
}

void html_data(const struct report *r, struct js *j)
{
	js_open(j, "report", '{');
	report_json_members(r, j);
	js_close(j, '}');
	columns(j);
	misuse_kinds(j);
	totals(j, r);
	timeline(j, r);
	flame(j, r);
	sizes(j, r);
}
