/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared by the report-cols*.c files: shorthand for column definitions,
 * row helpers, and the tables one file gives report-cols.c's list (or
 * report_sections[], report-common.c, as a section's main table).
 */
#ifndef KMT_REPORT_COLS_H
#define KMT_REPORT_COLS_H

#include <stddef.h>
#include "report.h"

/* A uint64_t field of the row, or a value from a getter. */
#define U(n, st, f, un, t, w, so, d) \
	{ .name = n, .type = RT_U64, .unit = un, .title = t, .width = w, .sort = so, .doc = d, \
	  .off = offsetof(st, f) }
#define G(n, ty, un, t, w, so, d, fn) \
	{ .name = n, .type = ty, .unit = un, .title = t, .width = w, .sort = so, .doc = d, .get = fn }
#define END { .name = NULL }

/* Pointers to the @n elements of @v (@size bytes each): a malloc'd array. */
size_t rtable_ptrs(const void *v, size_t n, size_t size, const void ***out);
/* An array of the one row @row. */
size_t rtable_one(const void *row, const void ***out);

/* report-cols.c: sections' main tables (report_sections[]) */
extern const struct rtable t_summary, t_caches, t_processes, t_page_orders, t_access_rows;
/* report-cols-site.c */
extern const struct rtable t_callsites, t_lifetimes, t_page_functions, t_outstanding;
/* report-cols-misuse.c */
extern const struct rtable t_misuse, t_untraced;
/* report-cols-stack.c */
extern const struct rtable t_callsite_stacks;
/* report-cols-cgroup.c */
extern const struct rtable t_cgroups, t_cgroup_sites;
/* report-cols-vmalloc.c */
extern const struct rtable t_vmalloc, t_vmalloc_sizes, t_vmalloc_functions, t_vmalloc_live;

#endif
