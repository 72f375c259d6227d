/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tree behind the flame graph (report --html) and folded stacks
 * (export --format folded): slab allocations by the path from the
 * outermost caller down to the call site (--stack recordings), or by call
 * site, cache and task name otherwise. Each node holds bytes allocated,
 * objects and live bytes; a node's values are its own plus its children's.
 */
#ifndef KMT_FLAME_H
#define KMT_FLAME_H

#include <stdbool.h>
#include <stdint.h>

#include "report.h"

enum { FV_BYTES, FV_OBJECTS, FV_LIVE, FV_NR };

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
