/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tree behind the flame graph (report --html) and folded stacks
 * (export --format folded): slab allocations by the path from the
 * outermost caller down to the call site (--stack recordings), or by call
 * site, cache and task name otherwise; beside them, under "page
 * allocations", the page allocator's by the function that asked (named
 * from --stack stacks; "(no stack)" for the rest). Each node holds bytes
 * allocated, objects and live bytes of slab objects, and bytes and pages
 * of page allocations; a node's values are its own plus its children's.
 */
#ifndef KMT_FLAME_H
#define KMT_FLAME_H

#include <stdbool.h>
#include <stdint.h>

#include "report.h"

enum { FV_BYTES, FV_OBJECTS, FV_LIVE, FV_PAGE_BYTES, FV_PAGES, FV_NR };
/*
 * Their names, as export --value takes them: "bytes", "objects",
 * "live-bytes", "page-bytes", "pages"; NULL-terminated.
 */
extern const char *const flame_value_names[FV_NR + 1];

struct flame_node {
	const char *name;
	uint64_t v[FV_NR];
	struct flame_node **kids;
	size_t nkids, cap;
};

struct flame;

/* From the report's model (NULL on ENOMEM). Call sites need the model's groups without stacks. */
struct flame *flame_build(const struct report *r);
void flame_free(struct flame *f);
struct flame_node *flame_root(struct flame *f);
bool flame_stacks(const struct flame *f);	/* built from stacks */

#endif
