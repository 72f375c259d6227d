/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The report's vmalloc tables (src/report/report.h): the totals, areas by size,
 * allocating functions (from --stack stacks), and the areas live at the
 * end, largest first.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/util.h"
#include "report-cols.h"

static size_t summary_rows(const struct report *r, const void ***out)
{
	return rtable_one(kmt_model_summary(r->m), out);
}

static size_t size_rows(const struct report *r, const void ***out)
{
	size_t n;
	const struct kmt_vmap_size *v = kmt_model_vmap_sizes(r->m, &n);

	return rtable_ptrs(v, n, sizeof(*v), out);
}

static size_t function_rows(const struct report *r, const void ***out)
{
	size_t n;
	const struct kmt_site *v = kmt_model_vmap_sites(r->m, &n);

	return rtable_ptrs(v, n, sizeof(*v), out);
}

static size_t area_rows(const struct report *r, const void ***out)
{
	size_t n;
	const struct kmt_vmap_area *v = kmt_model_vmap_live(r->m, &n);

	return rtable_ptrs(v, n, sizeof(*v), out);
}

static void g_function(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = site_function(r, ((const struct kmt_site *)row)->addr, buf, len);
}

static void g_area_addr(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = addr_str(r, ((const struct kmt_vmap_area *)row)->addr, buf, len);
}

static void g_area_pid(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = (uint64_t)((const struct kmt_vmap_area *)row)->pid;
}

static void g_area_comm(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = ((const struct kmt_vmap_area *)row)->comm;
}

static void g_area_function(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	const struct kmt_vmap_area *a = row;

	v->s = a->function ? site_function(r, a->function, buf, len) : "";
}

static void g_area_uncertain(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = ((const struct kmt_vmap_area *)row)->uncertain;
}

#define S struct kmt_summary
static const struct rcol vmalloc_cols[] = {
	U("allocs", S, vmap_allocs, RU_COUNT, NULL, 0, NULL, "vmalloc areas allocated (alloc_vmap_area)"),
	U("frees", S, vmap_frees, RU_COUNT, NULL, 0, NULL,
	  "areas freed (free_vmap_area_noflush: lazily, often by a kworker)"),
	U("failures", S, vmap_failures, RU_COUNT, NULL, 0, NULL, "allocations that failed"),
	U("bytes", S, vmap_bytes, RU_BYTES, NULL, 0, NULL, "bytes of the areas allocated, guard pages included"),
	U("bytes_freed", S, vmap_bytes_freed, RU_BYTES, NULL, 0, NULL, "bytes of those freed in the window"),
	U("preexisting_frees", S, vmap_preexisting_frees, RU_COUNT, NULL, 0, NULL,
	  "frees of areas allocated before the window"),
	U("live", S, vmap_live, RU_COUNT, NULL, 0, NULL, "areas allocated in the window and live at its end"),
	U("live_bytes", S, vmap_live_bytes, RU_BYTES, NULL, 0, NULL, "their bytes"),
	END,
};
#undef S

#define Z struct kmt_vmap_size
static const struct rcol size_cols[] = {
	U("size", Z, size, RU_BYTES, "size", 10, "bytes", "area size, guard page included"),
	U("allocs", Z, allocs, RU_COUNT, "allocs", 9, "allocs", "areas of this size allocated"),
	U("frees", Z, frees, RU_COUNT, "frees", 9, "frees", "of them, freed in the window"),
	U("live", Z, live, RU_COUNT, "live", 9, "live", "of them, live at the end"),
	END,
};
#undef Z

#define ST struct kmt_site
static const struct rcol function_cols[] = {
	G("function", RT_STR, RU_NONE, "allocating function (from stacks)", -40, "callsite",
	  "the first non-allocator function of the stack", g_function),
	U("allocs", ST, allocs, RU_COUNT, "allocs", 9, "allocs", "areas it allocated"),
	U("frees", ST, frees, RU_COUNT, "frees", 9, "frees", "of them, freed in the window"),
	U("bytes", ST, bytes_alloc, RU_BYTES, "bytes", 10, "bytes", "their bytes"),
	U("live", ST, live_objects, RU_COUNT, "live", 8, NULL, "of them, live at the end"),
	U("live_bytes", ST, live_bytes, RU_BYTES, "live bytes", 10, "live", "their bytes"),
	END,
};
#undef ST

#define A struct kmt_vmap_area
static const struct rcol area_cols[] = {
	U("size", A, size, RU_BYTES, "size", 10, "bytes", "the area's size, guard page included"),
	U("age_ns", A, age, RU_NS, "age", 10, NULL, "its age at the end of the window"),
	G("comm", RT_STR, RU_NONE, "comm", -16, "comm", "the allocating task", g_area_comm),
	G("pid", RT_U64, RU_NONE, "pid", 8, "pid", "its pid", g_area_pid),
	G("function", RT_STR, RU_NONE, "allocating function", -32, NULL,
	  "the allocating function (record --stack), or empty", g_area_function),
	G("address", RT_STR, RU_NONE, "address", -18, NULL, "the area's start (hashed with --hash-pointers)",
	  g_area_addr),
	G("uncertain", RT_BOOL, RU_NONE, NULL, 0, NULL, "a loss followed: it may be gone", g_area_uncertain),
	END,
};
#undef A

const struct rtable t_vmalloc = {
	.name = "vmalloc", .section = SEC_VMALLOC, .single = true, .cols = vmalloc_cols,
	.rows = summary_rows, .json_only = true, .doc = "vmalloc areas in totals",
};
const struct rtable t_vmalloc_sizes = {
	.name = "vmalloc_sizes", .json_key = "sizes", .parent = "vmalloc", .section = SEC_VMALLOC,
	.cols = size_cols, .rows = size_rows, .default_sort = "allocs", .doc = "vmalloc areas by size",
	.sql = true,
};
const struct rtable t_vmalloc_functions = {
	.name = "vmalloc_functions", .json_key = "functions", .parent = "vmalloc",
	.section = SEC_VMALLOC, .cols = function_cols, .rows = function_rows, .default_sort = "bytes",
	.narrow = "live frees",
	.doc = "vmalloc areas by allocating function (record --stack)", .sql = true,
};
const struct rtable t_vmalloc_live = {
	.name = "vmalloc_live", .json_key = "live_areas", .parent = "vmalloc", .section = SEC_VMALLOC,
	.cols = area_cols, .rows = area_rows, .narrow = "address pid age_ns",
	.doc = "areas allocated in the window and live at its end, largest first", .sql = true,
};
