/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The report's tables keyed by call site (src/report/report.h): call sites, their
 * lifetimes, page-allocating functions, and outstanding objects.
 */
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "report-cols.h"

static size_t site_rows(const struct report *r, const void ***out)
{
	size_t n;
	const struct kmt_site *v = kmt_model_sites(r->m, &n);

	return rtable_ptrs(v, n, sizeof(*v), out);
}

static size_t page_site_rows(const struct report *r, const void ***out)
{
	size_t n;
	const struct kmt_site *v = kmt_model_page_sites(r->m, &n);

	return rtable_ptrs(v, n, sizeof(*v), out);
}

static size_t outstanding_rows(const struct report *r, const void ***out)
{
	size_t n;
	const struct kmt_outstanding *v = kmt_model_outstanding(r->m, &n);

	return rtable_ptrs(v, n, sizeof(*v), out);
}

/* ---- which rows show ---- */

static bool site_keep(const struct report *r, const void *row)
{
	const struct kmt_site *s = row;

	return s->allocs || s->failures || s->free_calls;
}

/* The text table shows allocation sites only. */
static bool site_text_keep(const struct report *r, const void *row)
{
	const struct kmt_site *s = row;

	return s->allocs || s->failures;
}

static bool lifetime_keep(const struct report *r, const void *row)
{
	return ((const struct kmt_site *)row)->frees;
}

/* ---- values ---- */

/* g_callsite and friends read the address a site or outstanding row starts with. */
_Static_assert(offsetof(struct kmt_site, addr) == 0, "kmt_site starts with its address");
_Static_assert(offsetof(struct kmt_outstanding, site) == 0, "kmt_outstanding starts with its site");

static void g_callsite(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = site_name(r, *(const uint64_t *)row, buf, len);	/* addr/site comes first */
}

static void g_function(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = site_function(r, *(const uint64_t *)row, buf, len);
}

static void g_address(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = addr_str(r, *(const uint64_t *)row, buf, len);
}

static void g_site_waste(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	const struct kmt_site *s = row;

	v->u = kmt_waste(s->bytes_req, s->bytes_alloc);
}

static void g_site_frag(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	const struct kmt_site *s = row;

	v->f = frag_pct(s->bytes_req, s->bytes_alloc);
}

static void g_site_life(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->v = ((const struct kmt_site *)row)->life;
	v->n = KMT_LIFE_BUCKETS;
}

static void g_life_median(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	const struct kmt_site *s = row;

	v->u = life_quantile(s->life, 0.5, s->life_min, s->life_max);
}

static void g_life_p90(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	const struct kmt_site *s = row;

	v->u = life_quantile(s->life, 0.9, s->life_min, s->life_max);
}

static void g_out_ages(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->v = ((const struct kmt_outstanding *)row)->age;
	v->n = KMT_LIFE_BUCKETS;
}

#define ST struct kmt_site
#define SITE_KEYS(what) \
	G("callsite", RT_STR, RU_NONE, "call site", -40, "callsite", what " as symbol+0xoffset (the address with --raw-ip)", g_callsite), \
	G("function", RT_STR, RU_NONE, NULL, 0, NULL, "the symbol alone", g_function), \
	G("address", RT_STR, RU_NONE, NULL, 0, NULL, "the address (a keyed hash with --hash-pointers)", g_address)

static const struct rcol site_cols[] = {
	SITE_KEYS("the allocation site"),
	U("allocs", ST, allocs, RU_COUNT, "allocs", 9, "allocs", "allocations made here"),
	U("frees", ST, frees, RU_COUNT, "frees", 9, "frees", "of those objects, freed in the window"),
	U("free_calls", ST, free_calls, RU_COUNT, NULL, 0, NULL, "free events whose call site is here"),
	U("bytes_req", ST, bytes_req, RU_BYTES, "requested", 10, "req", "bytes requested"),
	U("bytes_alloc", ST, bytes_alloc, RU_BYTES, "allocated", 10, "bytes", "bytes allocated"),
	U("bytes_freed", ST, bytes_freed, RU_BYTES, NULL, 0, NULL, "allocated bytes of the objects freed"),
	G("waste", RT_U64, RU_BYTES, "waste", 10, "waste", "bytes_alloc - bytes_req", g_site_waste),
	G("frag_pct", RT_PCT, RU_NONE, "frag", 6, "frag", "waste as a share of bytes_alloc", g_site_frag),
	U("cross_cpu_frees", ST, cross_cpu, RU_COUNT, "x-cpu", 7, "x-cpu", "objects from here freed on another CPU"),
	U("live_objects", ST, live_objects, RU_COUNT, "live", 8, NULL, "objects from here live at the end (certain ones)"),
	U("live_bytes", ST, live_bytes, RU_BYTES, "live bytes", 10, "live", "their allocated bytes"),
	U("uncertain", ST, uncertain, RU_COUNT, NULL, 0, NULL, "objects from here whose free a loss may hide"),
	U("unseen_frees", ST, unseen_frees, RU_COUNT, "unseen", 7, NULL,
	  "objects from here freed where the trace shows no free (their address was allocated "
	  "again): allocs = frees + live_objects + uncertain + unseen_frees"),
	U("failures", ST, failures, RU_COUNT, NULL, 0, NULL, "allocations here that returned NULL"),
	G("lifetime_log2_ns", RT_HIST, RU_COUNT, NULL, 0, NULL,
	  "allocation-to-free times: entry i counts lifetimes in [2^(i-1), 2^i) ns (entry 0: 0 ns)", g_site_life),
	END,
};

static const struct rcol lifetime_cols[] = {
	SITE_KEYS("the allocation site"),
	U("allocs", ST, allocs, RU_COUNT, NULL, 0, "allocs", "allocations made here"),
	U("bytes_alloc", ST, bytes_alloc, RU_BYTES, NULL, 0, "bytes", "bytes allocated"),
	U("freed", ST, frees, RU_COUNT, NULL, 0, "frees", "objects from here freed in the window"),
	G("median_ns", RT_U64, RU_NS, NULL, 0, NULL, "median lifetime, estimated from the log2 buckets", g_life_median),
	G("p90_ns", RT_U64, RU_NS, NULL, 0, NULL, "90th percentile, estimated likewise", g_life_p90),
	U("min_ns", ST, life_min, RU_NS, NULL, 0, NULL, "shortest lifetime"),
	U("max_ns", ST, life_max, RU_NS, NULL, 0, NULL, "longest lifetime"),
	{ .name = "lt", .type = RT_HIST, .unit = RU_COUNT, .get = g_site_life, .flags = RC_CSV_BUCKETS,
	  .doc = "the lifetime histogram, a column per bucket: lt_Nns counts lifetimes below N ns "
		 "and at least half that" },
	END,
};

/*
 * The text's lifetime histogram: nine columns of bucket ranges that end
 * on powers of two, so each log2 bucket falls in one (bucket b holds
 * [2^(b-1), 2^b) ns): range d takes the buckets up to life_bound[d].
 */
static const int life_bound[8] = { 10, 14, 17, 20, 24, 27, 30, 34 };

static const char *t_life_range(const struct report *r, const struct rcol *c, const void *row, char *buf,
				size_t len)
{
	const struct kmt_site *s = row;
	uint64_t n = 0;
	int b, d;

	for (b = 0; b < KMT_LIFE_BUCKETS; b++) {
		for (d = 0; d < 8 && b > life_bound[d]; d++)
			;
		if (d == c->arg)
			n += s->life[b];
	}
	return n ? fmt_count((double)n, false, buf, len) : ".";
}

#define RANGE(d, t) { .name = "ranges", .title = t, .width = 7, .text = t_life_range, .arg = d }

/* The text's lifetimes: the call site, times in human units, the histogram in ranges. */
static const struct rcol lifetime_text_cols[] = {
	G("callsite", RT_STR, RU_NONE, "call site", -36, NULL, NULL, g_callsite),
	U("freed", ST, frees, RU_COUNT, "freed", 8, NULL, NULL),
	G("median_ns", RT_U64, RU_NS, "~median", 9, NULL, NULL, g_life_median),
	G("p90_ns", RT_U64, RU_NS, "~p90", 9, NULL, NULL, g_life_p90),
	U("max_ns", ST, life_max, RU_NS, "max", 9, NULL, NULL),
	RANGE(0, "<1.0us"), RANGE(1, "<16us"), RANGE(2, "<131us"), RANGE(3, "<1.0ms"), RANGE(4, "<17ms"),
	RANGE(5, "<134ms"), RANGE(6, "<1.1s"), RANGE(7, "<17s"), RANGE(8, ">=17s"),
	END,
};
#undef RANGE

static const struct rtext lifetime_text = { .cols = lifetime_text_cols };

/* As site_cols, titled for the text's page-allocating functions. */
static const struct rcol page_site_cols[] = {
	G("callsite", RT_STR, RU_NONE, NULL, 0, "callsite", "the first non-allocator function of the stack, "
	  "+offset", g_callsite),
	G("function", RT_STR, RU_NONE, "allocating function (from stacks)", -40, NULL, "the function", g_function),
	G("address", RT_STR, RU_NONE, NULL, 0, NULL, "its address", g_address),
	U("allocs", ST, allocs, RU_COUNT, "allocs", 9, "allocs", "page allocations"),
	U("frees", ST, frees, RU_COUNT, "frees", 9, "frees", "of them, freed in the window"),
	U("free_calls", ST, free_calls, RU_COUNT, NULL, 0, NULL, "always 0 (page frees have no call site)"),
	U("bytes_req", ST, bytes_req, RU_BYTES, NULL, 0, "req", "bytes (pages x page size)"),
	U("bytes_alloc", ST, bytes_alloc, RU_BYTES, "bytes", 10, "bytes", "bytes (pages x page size)"),
	U("bytes_freed", ST, bytes_freed, RU_BYTES, NULL, 0, NULL, "bytes of those freed"),
	G("waste", RT_U64, RU_BYTES, NULL, 0, "waste", "always 0", g_site_waste),
	G("frag_pct", RT_PCT, RU_NONE, NULL, 0, "frag", "always 0", g_site_frag),
	U("cross_cpu_frees", ST, cross_cpu, RU_COUNT, NULL, 0, "x-cpu", "freed on another CPU"),
	U("live_objects", ST, live_objects, RU_COUNT, NULL, 0, NULL, "allocations live at the end"),
	U("live_bytes", ST, live_bytes, RU_BYTES, NULL, 0, "live", "their bytes"),
	U("uncertain", ST, uncertain, RU_COUNT, NULL, 0, NULL, "whose free a loss may hide"),
	U("unseen_frees", ST, unseen_frees, RU_COUNT, NULL, 0, NULL, "always 0 for pages"),
	U("failures", ST, failures, RU_COUNT, NULL, 0, NULL, "failed allocations"),
	G("lifetime_log2_ns", RT_HIST, RU_COUNT, NULL, 0, NULL, "as in callsites", g_site_life),
	END,
};
#undef ST


#define O struct kmt_outstanding
static const struct rcol outstanding_cols[] = {
	SITE_KEYS("the allocation site"),
	U("objects", O, objects, RU_COUNT, "objects", 9, "allocs", "objects from here live at the end"),
	U("bytes_req", O, bytes_req, RU_BYTES, NULL, 0, "req", "their requested bytes"),
	U("bytes_alloc", O, bytes_alloc, RU_BYTES, "bytes", 10, "bytes", "their allocated bytes"),
	U("age_min_ns", O, age_min, RU_NS, "youngest", 10, NULL, "the youngest one's age at the end"),
	U("age_median_ns", O, age_median, RU_NS, "median age", 10, NULL,
	  "the median age, exact (of an even count, the lower middle)"),
	U("age_max_ns", O, age_max, RU_NS, "oldest", 10, NULL, "the oldest one's age"),
	{ .name = "in_untraced_caches", .type = RT_U64, .unit = RU_COUNT, .title = "untraced?", .width = 10,
	  .off = offsetof(O, in_untraced_caches), .flags = RC_BLANK0,
	  .doc = "of them in caches the kernel also frees without tracing: they may be gone" },
	G("age_log2_ns", RT_HIST, RU_COUNT, NULL, 0, NULL, "histogram of ages at the end, as lifetime_log2_ns",
	  g_out_ages),
	END,
};
#undef O

const struct rtable t_callsites = {
	.name = "callsites", .section = SEC_CALLSITES | SEC_LIFETIMES, .cols = site_cols,
	.rows = site_rows, .keep = site_keep, .text_keep = site_text_keep, .default_sort = "bytes",
	.narrow = "unseen_frees cross_cpu_frees live_objects waste frag_pct frees bytes_req",
	.doc = "allocation sites, and sites that only free (allocs 0, free_calls > 0; not in the text)",
	.sql = true,
};
const struct rtable t_lifetimes = {
	.name = "lifetimes", .section = SEC_LIFETIMES, .cols = lifetime_cols, .rows = site_rows,
	.keep = lifetime_keep, .default_sort = "bytes", .csv_only = true, .text = &lifetime_text,
	.narrow = "ranges p90_ns,max_ns",	/* in a narrow width the histogram goes first, whole */
	.doc = "allocation sites whose objects were freed, with lifetimes (in JSON: callsites' lifetime_log2_ns)",
};
const struct rtable t_page_functions = {
	.name = "page_functions", .json_key = "functions", .section = SEC_PAGES, .parent = "pages", .cols = page_site_cols,
	.rows = page_site_rows, .default_sort = "bytes",
	.doc = "page allocations by the first non-allocator function of their stack (record --stack)",
	.sql = true,
};
const struct rtable t_outstanding = {
	.name = "outstanding", .section = SEC_OUTSTANDING, .cols = outstanding_cols,
	.rows = outstanding_rows, .narrow = "age_min_ns age_median_ns in_untraced_caches",
	.doc = "objects live at the end, by allocation site, largest first", .sql = true,
};
