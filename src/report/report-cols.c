/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The report's tables (src/report/report.h): for every section, its columns and
 * where its rows come from. This file and report-cols-*.c (the tables
 * keyed by call site, stacks, misuse, vmalloc) are the one place a report
 * column is defined; text, JSON and CSV (and `report --columns`) read them.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "report.h"

#include "report-cols.h"

/* ---- rows ---- */

/* Pointers to the @n elements of @v, of @size bytes each. */
size_t rtable_ptrs(const void *v, size_t n, size_t size, const void ***out)
{
	const void **p = n ? malloc(n * sizeof(*p)) : NULL;
	size_t i;

	*out = p;
	if (!p)
		return 0;
	for (i = 0; i < n; i++)
		p[i] = (const char *)v + i * size;
	return n;
}

size_t rtable_one(const void *row, const void ***out)
{
	const void **p = malloc(sizeof(*p));

	*out = p;
	if (!p)
		return 0;
	p[0] = row;
	return 1;
}

static size_t summary_rows(const struct report *r, const void ***out)
{
	return rtable_one(kmt_model_summary(r->m), out);
}

static size_t cache_rows(const struct report *r, const void ***out)
{
	size_t n;
	const struct kmt_cache *v = kmt_model_caches(r->m, &n);

	return rtable_ptrs(v, n, sizeof(*v), out);
}

static size_t proc_rows(const struct report *r, const void ***out)
{
	size_t n;
	const struct kmt_proc *v = kmt_model_procs(r->m, &n);

	return rtable_ptrs(v, n, sizeof(*v), out);
}

/* Processes by name: every pid of a comm summed (pid: how many pids). */
static size_t comm_rows(const struct report *r, const void ***out)
{
	size_t n, i, j, nc = 0;
	const struct kmt_proc *v = kmt_model_procs(r->m, &n);
	const void **p = malloc((n + 1) * (sizeof(*p) + sizeof(struct kmt_proc)));
	struct kmt_proc *c = (struct kmt_proc *)(p + n + 1);

	*out = p;
	if (!p)
		return 0;
	for (i = 0; i < n; i++) {
		for (j = 0; j < nc && strcmp(c[j].comm, v[i].comm); j++)
			;
		if (j == nc) {
			memset(&c[nc], 0, sizeof(c[nc]));
			memcpy(c[nc].comm, v[i].comm, sizeof(c[nc].comm));
			p[nc] = &c[nc];
			nc++;
		}
		c[j].pid++;
		c[j].allocs += v[i].allocs;
		c[j].frees += v[i].frees;
		c[j].bytes_req += v[i].bytes_req;
		c[j].bytes_alloc += v[i].bytes_alloc;
		c[j].bytes_freed += v[i].bytes_freed;
		c[j].live_objects += v[i].live_objects;
		c[j].live_bytes += v[i].live_bytes;
		c[j].page_allocs += v[i].page_allocs;
		c[j].pages += v[i].pages;
	}
	return nc;
}

static size_t gfp_rows(const struct report *r, const void ***out)
{
	size_t n;
	const struct kmt_gfp_count *v = kmt_model_gfp(r->m, &n);

	return rtable_ptrs(v, n, sizeof(*v), out);
}

static size_t access_rows(const struct report *r, const void ***out)
{
	size_t n;
	const struct kmt_access_stat *v = kmt_model_access(r->m, &n);

	return rtable_ptrs(v, n, sizeof(*v), out);
}

/* Page allocations by order and migrate type, the cells that are not zero. */
struct order_cell {
	uint64_t order, migratetype, allocs;
};

#define NR_CELLS ((KMT_MAX_ORDER + 1) * (KMT_MIGRATE_TYPES + 1))

/* The cells live in the same block as the pointers, freed with them. */
static size_t order_rows(const struct report *r, const void ***out)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);
	const void **p = malloc(NR_CELLS * (sizeof(*p) + sizeof(struct order_cell)));
	struct order_cell *cells = (struct order_cell *)(p + NR_CELLS);
	size_t n = 0;
	int o, t;

	*out = p;
	if (!p)
		return 0;
	for (o = 0; o <= KMT_MAX_ORDER; o++)
		for (t = 0; t <= KMT_MIGRATE_TYPES; t++)
			if (s->order_mt[o][t]) {
				cells[n] = (struct order_cell){ (uint64_t)o, (uint64_t)t, s->order_mt[o][t] };
				p[n] = &cells[n];
				n++;
			}
	return n;
}

/*
 * The text's pivot of those cells: a row per order in use, its counts by
 * migrate type (the summary's order_mt[order]).
 */
static size_t order_text_rows(const struct report *r, const void ***out)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);
	const void **p = malloc((KMT_MAX_ORDER + 1) * sizeof(*p));
	size_t n = 0;
	int o, t;

	*out = p;
	if (!p)
		return 0;
	for (o = 0; o <= KMT_MAX_ORDER; o++) {
		uint64_t sum = 0;

		for (t = 0; t <= KMT_MIGRATE_TYPES; t++)
			sum += s->order_mt[o][t];
		if (sum)
			p[n++] = s->order_mt[o];
	}
	return n;
}

/* ---- which rows show ---- */

/* A cache named only by a free of an object older than the trace has nothing to show. */
static bool cache_keep(const struct report *r, const void *row)
{
	const struct kmt_cache *c = row;

	return c->allocs || c->frees || c->live_objects || c->unseen_frees || c->untraced;
}

static bool proc_keep(const struct report *r, const void *row)
{
	const struct kmt_proc *p = row;

	return p->allocs || p->page_allocs;
}

/* ---- values ---- */

static void g_cache_kind(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = ((const struct kmt_cache *)row)->is_kmalloc ? "kmalloc" : "slab";
}

static void g_cache_name(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	const struct kmt_cache *c = row;

	v->s = r->plain_names ? c->name : kmt_cache_label(c);
}

static void g_cache_aliases(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	const struct kmt_cache *c = row;

	v->names = c->merged ? c->merged->aliases : NULL;
	v->n = c->merged ? (int)c->merged->nr_aliases : 0;
}

static void g_cache_frag(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	const struct kmt_cache *c = row;

	v->f = frag_pct(c->bytes_req, c->bytes_alloc);
}

static void g_cache_waste(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	const struct kmt_cache *c = row;

	v->u = kmt_waste(c->bytes_req, c->bytes_alloc);
}

static void g_proc_pid(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = (uint64_t)((const struct kmt_proc *)row)->pid;
}

static void g_proc_comm(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = ((const struct kmt_proc *)row)->comm;
}

static void g_gfp_value(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	snprintf(buf, len, "0x%" PRIx64, ((const struct kmt_gfp_count *)row)->gfp);
	v->s = buf;
}

static void g_gfp_flags(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = kmt_flags_format(r->gfp_names, ((const struct kmt_gfp_count *)row)->gfp, buf, len);
}

static void g_acc_afunction(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = site_function(r, ((const struct kmt_access_stat *)row)->site, buf, len);
}

static void g_acc_cache(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	const struct kmt_access_stat *a = row;

	v->s = a->cache != UINT32_MAX ? cache_name(r, a->cache) : "";
}

static void g_acc_offset(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = ((const struct kmt_access_stat *)row)->offset;
}

static void g_acc_len(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = ((const struct kmt_access_stat *)row)->len;
}

static void g_acc_field(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = ((const struct kmt_access_stat *)row)->field;
}

static void g_acc_ip(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = site_name(r, ((const struct kmt_access_stat *)row)->ip, buf, len);
}

static void g_acc_function(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = site_function(r, ((const struct kmt_access_stat *)row)->ip, buf, len);
}

/* The text's object group: "function (cache)", "?" for an unknown cache. */
static const char *t_acc_object(const struct report *r, const struct rcol *c, const void *row, char *buf,
				size_t len)
{
	const struct kmt_access_stat *a = row;
	char fn[200];

	snprintf(buf, len, "%s (%s)", site_function(r, a->site, fn, sizeof(fn)),
		 a->cache != UINT32_MAX ? cache_name(r, a->cache) : "?");
	return buf;
}

/* The text's instruction, a space apart from the counts. */
static const char *t_acc_ip(const struct report *r, const struct rcol *c, const void *row, char *buf,
			    size_t len)
{
	char ip[256];

	snprintf(buf, len, " %s", site_name(r, ((const struct kmt_access_stat *)row)->ip, ip, sizeof(ip)));
	return buf;
}

/* How much of the row above an access row repeats: 1 its object group, 2 its offset in it too. */
static int acc_group(const struct report *r, const void *row, const void *prev)
{
	const struct kmt_access_stat *a = row, *b = prev;
	char x[256], y[256];

	if (strcmp(t_acc_object(r, NULL, a, x, sizeof(x)), t_acc_object(r, NULL, b, y, sizeof(y))))
		return 0;
	return a->offset == b->offset ? 2 : 1;
}

/* The summary's derived numbers. */
#define SUM(row) ((const struct kmt_summary *)(row))


static void g_start(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = r->t0;
}

static void g_first(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = since(r->t0, SUM(row)->first_ts);
}

static void g_last(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = since(r->t0, SUM(row)->last_ts);
}

static void g_span(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = kmt_summary_span(SUM(row));
}

static void g_by_kind(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->v = SUM(row)->by_kind;
	v->n = KMT_EV_NR;
}

static void g_net(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->i = (int64_t)(SUM(row)->bytes_alloc - SUM(row)->bytes_freed);
}

static void g_frag_bytes(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = kmt_waste(SUM(row)->bytes_req, SUM(row)->bytes_alloc);
}

static void g_frag_pct(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->f = frag_pct(SUM(row)->bytes_req, SUM(row)->bytes_alloc);
}

static void g_partial_allocs(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = SUM(row)->partial_allocs;
}

static void g_partial_frees(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = SUM(row)->partial_frees;
}

static void g_filtered(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = SUM(row)->filtered;
}

static void g_filter_matched(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = SUM(row)->filter_matched;
}

static void g_affected(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = SUM(row)->affected_by_loss;
}

static void g_truncated(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = (uint64_t)SUM(row)->truncated_cpus;
}

static void g_lost_by_ring(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = SUM(row)->lost_by_ring;
}

static void g_lost_by_cpu(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->v = SUM(row)->lost_by_cpu;
	v->n = SUM(row)->nr_cpus;
}

static void g_events_by_cpu(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->v = SUM(row)->events_by_cpu;
	v->n = SUM(row)->nr_cpus;
}

static void g_order_mt(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->v = &SUM(row)->order_mt[0][0];
	v->n = (KMT_MAX_ORDER + 1) * (KMT_MIGRATE_TYPES + 1);
}

static void g_order_mtype(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	const struct order_cell *c = row;

	v->i = c->migratetype < KMT_MIGRATE_TYPES ? (int64_t)c->migratetype : -1;
}

static void g_order_pages(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	const struct order_cell *c = row;

	v->u = c->allocs << MIN(c->order, (uint64_t)30);
}

/* A row of the text's pivot: its order. */
static void g_pivot_order(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);

	v->u = (uint64_t)((const uint64_t (*)[KMT_MIGRATE_TYPES + 1])row - s->order_mt);
}

/* ---- the tables ---- */

#define S struct kmt_summary
static void g_not_recorded(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->names = r->not_recorded;
	v->n = r->nr_not_recorded;
}

static const struct rcol summary_cols[] = {
	G("start_ts_ns", RT_U64, RU_NS, NULL, 0, NULL,
	  "the trace's first event, in the trace clock: every other time counts from it", g_start),
	G("first_ts_ns", RT_U64, RU_NS, NULL, 0, NULL, "the analysed window's first event", g_first),
	G("last_ts_ns", RT_U64, RU_NS, NULL, 0, NULL, "and its last", g_last),
	G("span_ns", RT_U64, RU_NS, NULL, 0, NULL, "the window's length", g_span),
	U("events", S, events, RU_COUNT, NULL, 0, NULL, "decoded events in the window, all kinds"),
	G("not_recorded", RT_NAMES, RU_NONE, NULL, 0, NULL, "memory events the file has none of (no format "
	  "for them): the sections they make are null, never zeros", g_not_recorded),
	G("events_by_kind", RT_KINDS, RU_COUNT, NULL, 0, NULL, "{\"kmalloc\": N, \"kfree\": N, ...}", g_by_kind),
	U("allocs", S, allocs, RU_COUNT, NULL, 0, NULL, "slab objects (kmalloc and kmem_cache) allocated"),
	U("frees", S, frees, RU_COUNT, NULL, 0, NULL, "of them, freed in the window"),
	U("failures", S, failures, RU_COUNT, NULL, 0, NULL, "allocations that returned NULL"),
	U("bytes_req", S, bytes_req, RU_BYTES, NULL, 0, NULL, "bytes requested by allocs"),
	U("bytes_alloc", S, bytes_alloc, RU_BYTES, NULL, 0, NULL, "bytes allocated for them"),
	U("bytes_freed", S, bytes_freed, RU_BYTES, NULL, 0, NULL, "allocated bytes of the objects freed in the window"),
	G("net_bytes", RT_I64, RU_BYTES, NULL, 0, NULL, "bytes_alloc - bytes_freed (signed)", g_net),
	G("fragmentation_bytes", RT_U64, RU_BYTES, NULL, 0, NULL, "bytes_alloc - bytes_req", g_frag_bytes),
	G("fragmentation_pct", RT_PCT, RU_NONE, NULL, 0, NULL, "its share of bytes_alloc", g_frag_pct),
	U("cross_cpu_frees", S, cross_cpu_frees, RU_COUNT, NULL, 0, NULL,
	  "objects freed on another CPU than the one that allocated them"),
	U("preexisting_frees", S, preexisting_frees, RU_COUNT, NULL, 0, NULL,
	  "frees of objects allocated before the window (not errors)"),
	U("live_objects", S, live_objects, RU_COUNT, NULL, 0, NULL,
	  "objects allocated in the window and live at its end (certain ones)"),
	U("live_bytes", S, live_bytes, RU_BYTES, NULL, 0, NULL, "their allocated bytes"),
	U("uncertain_objects", S, uncertain_objects, RU_COUNT, NULL, 0, NULL,
	  "objects whose fate a loss may hide"),
	U("uncertain_allocs", S, uncertain_allocs, RU_COUNT, NULL, 0, NULL,
	  "of the uncertain objects, those allocated in the window: allocs = frees + live_objects + "
	  "uncertain_allocs + unseen_frees"),
	U("unseen_frees", S, unseen_frees, RU_COUNT, NULL, 0, NULL,
	  "objects freed where the trace shows no free (their address was allocated again)"),
	U("unseen_bytes", S, unseen_bytes, RU_BYTES, NULL, 0, NULL,
	  "their allocated bytes: part of net_bytes, freed where the trace shows no free"),
	U("uncertain_bytes", S, uncertain_bytes, RU_BYTES, NULL, 0, NULL,
	  "allocated bytes of the uncertain objects allocated in the trace (live at its end)"),
	U("uncertain_misuse", S, uncertain_misuse, RU_COUNT, NULL, 0, NULL,
	  "contradictions a loss may explain; not in misuse"),
	U("null_frees", S, null_frees, RU_COUNT, NULL, 0, NULL, "kfree(NULL)"),
	U("kmalloc_large_merged", S, kmalloc_large_merged, RU_COUNT, NULL, 0, NULL,
	  "large kmallocs the kernel traced twice, counted once"),
	G("partial_allocs", RT_BOOL, RU_NONE, NULL, 0, NULL,
	  "the recording kept only some slab allocations (its VERSION option says so)", g_partial_allocs),
	G("partial_frees", RT_BOOL, RU_NONE, NULL, 0, NULL, "the recording kept only some slab frees",
	  g_partial_frees),
	U("stack_sample", S, stack_sample, RU_COUNT, NULL, 0, NULL,
	  "stacks were recorded for 1 in this many allocations (record --stack-sample); 1: all"),
	U("unseen_allocs", S, unseen_allocs, RU_COUNT, NULL, 0, NULL,
	  "with partial_allocs: frees of an address already freed"),
	U("untraced_evidence", S, untraced_evidence, RU_COUNT, NULL, 0, NULL,
	  "findings proving the kernel allocated or freed slab objects without tracing"),
	U("page_allocs", S, page_allocs, RU_COUNT, NULL, 0, NULL, "page allocations"),
	U("page_frees", S, page_frees, RU_COUNT, NULL, 0, NULL, "page frees"),
	U("pages_allocated", S, pages_allocated, RU_COUNT, NULL, 0, NULL, "pages in those allocations"),
	U("pages_freed", S, pages_freed, RU_COUNT, NULL, 0, NULL, "pages in those frees"),
	U("page_failures", S, page_failures, RU_COUNT, NULL, 0, NULL, "page allocations that failed"),
	U("percpu_allocs", S, pcpu_allocs, RU_COUNT, NULL, 0, NULL, "per-CPU allocations"),
	U("percpu_frees", S, pcpu_frees, RU_COUNT, NULL, 0, NULL, "per-CPU frees"),
	U("lost_events", S, lost_events, RU_COUNT, NULL, 0, NULL, "events lost: what the ring buffer counted "
	  "(its stats, stored in the file) for a whole trace, as record, info and check say; else the sum "
	  "of the gaps' counts"),
	U("lost_gaps", S, lost_gaps, RU_COUNT, NULL, 0, NULL, "places where events were lost"),
	G("lost_by_ring", RT_BOOL, RU_NONE, NULL, 0, NULL, "lost_events is the ring buffer's own count",
	  g_lost_by_ring),
	U("lost_gaps_unknown", S, lost_pages_unknown, RU_COUNT, NULL, 0, NULL,
	  "gaps reported without a count"),
	G("lost_by_cpu", RT_ARRAY, RU_COUNT, NULL, 0, NULL, "events lost, indexed by CPU number", g_lost_by_cpu),
	G("events_by_cpu", RT_ARRAY, RU_COUNT, NULL, 0, NULL, "events, indexed by CPU number", g_events_by_cpu),
	G("filtered", RT_BOOL, RU_NONE, NULL, 0, NULL, "only some tasks' events were analysed (-p, --comm)",
	  g_filtered),
	G("filter_matched", RT_BOOL, RU_NONE, NULL, 0, NULL, "with filtered: some task in the window matched",
	  g_filter_matched),
	G("affected_by_loss", RT_BOOL, RU_NONE, NULL, 0, NULL, "true if any loss is in the window", g_affected),
	G("truncated_cpus", RT_U64, RU_COUNT, NULL, 0, NULL,
	  "CPUs whose recording stopped early (disk full): their later events are missing", g_truncated),
	U("damaged_gaps", S, damaged_gaps, RU_COUNT, NULL, 0, NULL,
	  "parts of a damaged file that could not be read (a bad chunk, a cut end): their events are "
	  "missing"),
	END,
};
#undef S


#define C struct kmt_cache
static const struct rcol cache_cols[] = {
	G("name", RT_STR, RU_NONE, "cache", -28, "name", "slab cache name; kmalloc-N for a kmalloc size class", g_cache_name),
	G("aliases", RT_NAMES, RU_NONE, NULL, 0, NULL, "the other names of a merged cache: the kernel merged "
	  "caches of one size and flags, and its events name them all by name (text: \"name (+aliases)\")",
	  g_cache_aliases),
	G("kind", RT_STR, RU_NONE, NULL, 0, NULL, "slab or kmalloc", g_cache_kind),
	{ .name = "object_size", .type = RT_U64, .unit = RU_COUNT, .title = "objsize", .width = 8,
	  .off = offsetof(C, object_size), .flags = RC_DASH0, .doc = "bytes allocated per object" },
	U("allocs", C, allocs, RU_COUNT, "allocs", 9, "allocs", "allocations"),
	U("frees", C, frees, RU_COUNT, "frees", 9, "frees", "of them, freed in the window"),
	U("bytes_req", C, bytes_req, RU_BYTES, "requested", 10, "req", "bytes requested"),
	U("bytes_alloc", C, bytes_alloc, RU_BYTES, "allocated", 10, "bytes", "bytes allocated"),
	G("waste", RT_U64, RU_BYTES, NULL, 0, "waste", "bytes_alloc - bytes_req", g_cache_waste),
	G("frag_pct", RT_PCT, RU_NONE, "frag", 6, "frag", "waste as a share of bytes_alloc", g_cache_frag),
	U("live_objects", C, live_objects, RU_COUNT, "live", 8, NULL, "objects live at the end"),
	U("live_bytes", C, live_bytes, RU_BYTES, "live bytes", 10, "live", "their bytes"),
	U("unseen_frees", C, unseen_frees, RU_COUNT, NULL, 0, NULL,
	  "objects freed where the trace shows no free (their address was allocated again)"),
	U("untraced", C, untraced, RU_COUNT, NULL, 0, NULL,
	  "signs that the kernel allocates or frees its objects without tracing (bulk paths)"),
	END,
};
#undef C

#define P struct kmt_proc
static const struct rcol proc_cols[] = {
	G("comm", RT_STR, RU_NONE, "comm", -16, "comm", "the task's name", g_proc_comm),
	G("pid", RT_U64, RU_NONE, "pid", 8, "pid", "its pid (a task that execs gets a row per name)", g_proc_pid),
	U("allocs", P, allocs, RU_COUNT, "allocs", 9, "allocs", "slab allocations by the task"),
	U("frees", P, frees, RU_COUNT, "frees", 9, "frees", "of its objects, freed in the window"),
	U("bytes_req", P, bytes_req, RU_BYTES, NULL, 0, "req", "bytes requested"),
	U("bytes_alloc", P, bytes_alloc, RU_BYTES, "allocated", 10, "bytes", "bytes allocated"),
	U("live_objects", P, live_objects, RU_COUNT, "live", 8, NULL, "its objects live at the end"),
	U("live_bytes", P, live_bytes, RU_BYTES, "live bytes", 10, "live", "their bytes"),
	U("page_allocs", P, page_allocs, RU_COUNT, NULL, 0, NULL, "page allocations by the task"),
	U("pages", P, pages, RU_COUNT, "pages", 9, "pages", "pages in them"),
	END,
};

static const struct rcol comm_cols[] = {
	G("comm", RT_STR, RU_NONE, "comm", -16, "comm", "the task name", g_proc_comm),
	G("pids", RT_U64, RU_COUNT, "pids", 6, NULL, "how many tasks had it", g_proc_pid),
	U("allocs", P, allocs, RU_COUNT, "allocs", 9, "allocs", "slab allocations by those tasks"),
	U("frees", P, frees, RU_COUNT, "frees", 9, "frees", "of their objects, freed in the window"),
	U("bytes_req", P, bytes_req, RU_BYTES, NULL, 0, "req", "bytes requested"),
	U("bytes_alloc", P, bytes_alloc, RU_BYTES, "allocated", 10, "bytes", "bytes allocated"),
	U("live_objects", P, live_objects, RU_COUNT, "live", 8, NULL, "their objects live at the end"),
	U("live_bytes", P, live_bytes, RU_BYTES, "live bytes", 10, "live", "their bytes"),
	U("page_allocs", P, page_allocs, RU_COUNT, NULL, 0, NULL, "page allocations"),
	U("pages", P, pages, RU_COUNT, "pages", 9, "pages", "pages in them"),
	END,
};
#undef P

static const struct rcol pages_cols[] = {
	U("allocs", struct kmt_summary, page_allocs, RU_COUNT, NULL, 0, NULL, "page allocations"),
	U("frees", struct kmt_summary, page_frees, RU_COUNT, NULL, 0, NULL, "page frees"),
	U("pages_allocated", struct kmt_summary, pages_allocated, RU_COUNT, NULL, 0, NULL, "pages allocated"),
	U("pages_freed", struct kmt_summary, pages_freed, RU_COUNT, NULL, 0, NULL, "pages freed"),
	U("failures", struct kmt_summary, page_failures, RU_COUNT, NULL, 0, NULL, "failed allocations"),
	G("order_migratetype", RT_MATRIX, RU_COUNT, NULL, 0, NULL,
	  "12 rows (orders 0..11, the last 11 and above) of 9 counts (migrate types 0..7, then unknown)",
	  g_order_mt),
	END,
};

static const struct rcol order_cols[] = {
	U("order", struct order_cell, order, RU_NONE, NULL, 0, NULL, "allocation order"),
	G("migratetype", RT_I64, RU_NONE, NULL, 0, NULL, "migrate type (-1: unknown)", g_order_mtype),
	U("allocs", struct order_cell, allocs, RU_COUNT, NULL, 0, "allocs", "allocations"),
	G("pages", RT_U64, RU_COUNT, NULL, 0, "pages", "pages in them (allocs << order)", g_order_pages),
	END,
};

/* The text's matrix: orders down, migrate types across; a type no allocation had is left out. */
#define MT(t, title_) { .name = "migratetype", .type = RT_U64, .unit = RU_COUNT, .title = title_, \
		       .width = 12, .off = (t) * sizeof(uint64_t), .flags = RC_HIDE0 }
static const struct rcol order_text_cols[] = {
	G("order", RT_U64, RU_NONE, "order", -6, NULL, NULL, g_pivot_order),
	MT(0, "Unmovable"), MT(1, "Movable"), MT(2, "Reclaimable"), MT(3, "HighAtomic"), MT(4, "CMA"),
	MT(5, "Isolate"), MT(6, "6"), MT(7, "7"), MT(KMT_MIGRATE_TYPES, "?"),
	END,
};
#undef MT

static const struct rtext order_text = { .cols = order_text_cols, .rows = order_text_rows, .whole = true };

static const struct rcol gfp_cols[] = {
	G("value", RT_STR, RU_NONE, NULL, 0, NULL, "the gfp flags, hex", g_gfp_value),
	U("allocs", struct kmt_gfp_count, allocs, RU_COUNT, "allocs", 10, "allocs", "page allocations with them"),
	U("pages", struct kmt_gfp_count, pages, RU_COUNT, "pages", 10, "pages", "pages in them"),
	G("flags", RT_STR, RU_NONE, "gfp flags", -1, NULL, "named from the file's own print format", g_gfp_flags),
	END,
};


#define S struct kmt_summary
static const struct rcol access_cols[] = {
	U("hits", S, access_hits, RU_COUNT, NULL, 0, NULL, "sample records in the window"),
	U("writes", S, access_writes, RU_COUNT, NULL, 0, NULL, "attributed to an object live at that address then"),
	U("reads", S, access_reads, RU_COUNT, NULL, 0, NULL, "likewise"),
	U("dropped", S, access_dropped, RU_COUNT, NULL, 0, NULL, "no live object there then (freed before the watch moved)"),
	U("lost", S, access_lost, RU_COUNT, NULL, 0, NULL, "samples the kernel dropped"),
	U("objects", S, access_objects, RU_COUNT, NULL, 0, NULL, "distinct objects with samples"),
	END,
};
#undef S

#define A struct kmt_access_stat
static const struct rcol access_row_cols[] = {
	G("alloc_function", RT_STR, RU_NONE, NULL, 0, NULL, "the function that allocated the objects", g_acc_afunction),
	G("cache", RT_STR, RU_NONE, NULL, 0, NULL, "their cache (or kmalloc size class)", g_acc_cache),
	G("offset", RT_U64, RU_NONE, NULL, 0, NULL, "byte offset of the watched word in the object", g_acc_offset),
	G("field", RT_STR, RU_NONE, NULL, 0, NULL, "the struct member(s) at that offset, when known", g_acc_field),
	G("len", RT_U64, RU_NONE, NULL, 0, NULL, "bytes watched (1, 2, 4 or 8)", g_acc_len),
	G("instruction", RT_STR, RU_NONE, NULL, 0, NULL, "the instruction after the access", g_acc_ip),
	G("function", RT_STR, RU_NONE, NULL, 0, NULL, "its function", g_acc_function),
	U("writes", A, writes, RU_COUNT, NULL, 0, NULL, "samples; a read-modify-write counts as a write"),
	U("reads", A, reads, RU_COUNT, NULL, 0, NULL, "samples that only read"),
	END,
};

/* The text's accesses: grouped by object, then offset; a group's repeated cells are blank. */
static const struct rcol access_text_cols[] = {
	{ .name = "object", .type = RT_STR, .title = "object (allocated in, cache)", .width = -36,
	  .text = t_acc_object, .group = 1 },
	{ .name = "offset", .type = RT_U64, .unit = RU_COUNT, .title = "offset", .width = 7, .get = g_acc_offset,
	  .group = 2 },
	{ .name = "field", .type = RT_STR, .title = "field", .width = -20, .get = g_acc_field, .group = 2 },
	U("writes", A, writes, RU_COUNT, "writes", 9, NULL, NULL),
	U("reads", A, reads, RU_COUNT, "reads", 9, NULL, NULL),
	{ .name = "instruction", .type = RT_STR, .title = " instruction after the access", .width = -1,
	  .text = t_acc_ip },
	END,
};
#undef A

static const struct rtext access_text = { .cols = access_text_cols, .group = acc_group };

const struct rtable t_summary = {
	.name = "summary", .section = SEC_SUMMARY, .single = true, .cols = summary_cols,
	.rows = summary_rows, .doc = "the analysed window in totals",
};
const struct rtable t_caches = {
	.name = "caches", .section = SEC_CACHES, .cols = cache_cols, .rows = cache_rows,
	.keep = cache_keep, .default_sort = "bytes",
	.narrow = "live_objects frag_pct object_size frees bytes_req", .doc = "slab caches by name, kmalloc by size class",
	.sql = true,
};
const struct rtable t_processes = {
	.name = "processes", .section = SEC_PROCESSES, .cols = proc_cols, .rows = proc_rows,
	.keep = proc_keep, .default_sort = "bytes", .narrow = "live_objects pages frees",
	.doc = "one row per task id and name", .sql = true,
};
static const struct rtable t_comms = {
	.name = "comms", .section = SEC_PROCESSES, .cols = comm_cols, .rows = comm_rows,
	.keep = proc_keep, .default_sort = "bytes", .narrow = "live_objects pids pages frees",
	.doc = "processes by name: every pid of a name together", .sql = true,
};
static const struct rtable t_pages = {
	.name = "pages", .section = SEC_PAGES, .single = true, .cols = pages_cols, .rows = summary_rows,
	.json_only = true, .doc = "the page allocator",
};
const struct rtable t_page_orders = {
	.name = "page_orders", .section = SEC_PAGES, .cols = order_cols, .rows = order_rows,
	.csv_only = true, .doc = "page allocations by order and migrate type (the cells of order_migratetype)",
	.text = &order_text, .sql = true,
};
static const struct rtable t_gfp = {
	.name = "gfp", .section = SEC_PAGES, .parent = "pages", .cols = gfp_cols, .rows = gfp_rows,
	.default_sort = "allocs", .doc = "page allocations by gfp flags", .sql = true,
};
static const struct rtable t_access = {
	.name = "access", .section = SEC_ACCESS, .single = true, .cols = access_cols,
	.rows = summary_rows, .json_only = true, .doc = "watchpoint samples (files of kmemtrace watch)",
};
const struct rtable t_access_rows = {
	.name = "access_rows", .json_key = "rows", .section = SEC_ACCESS, .parent = "access", .cols = access_row_cols,
	.rows = access_rows, .doc = "samples per allocation site, offset and instruction",
	.text = &access_text, .narrow = "field",
};

const struct rtable *const report_tables[] = {
	&t_summary, &t_callsites, &t_callsite_stacks, &t_lifetimes, &t_caches, &t_processes, &t_comms, &t_cgroups, &t_cgroup_sites, &t_pages, &t_page_orders,
	&t_gfp, &t_page_functions, &t_outstanding, &t_misuse, &t_untraced, &t_access, &t_access_rows,
	&t_vmalloc, &t_vmalloc_sizes, &t_vmalloc_functions, &t_vmalloc_live, NULL,
};
