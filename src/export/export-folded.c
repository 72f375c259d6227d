/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * export --format folded: one line per path of the flame graph's tree
 * (src/report/flame.c) with its own value, "outer;...;callsite VALUE": the input of
 * flamegraph.pl, speedscope and inferno. --value picks bytes allocated,
 * objects or live bytes; lines with 0 are left out. The values add up to
 * the report's summary (bytes_alloc, allocs, live_bytes).
 */
#include <inttypes.h>
#include <stdlib.h>

#include "util/util.h"
#include "export.h"
#include "report/flame.h"

/* A name as one frame: ';' separates frames and newlines end lines. */
static void frame(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' || *s == '\n' ? ',' : *s, out);
}

static void walk(FILE *out, const struct flame_node *f, const struct flame_node **path, int depth,
		 int value)
{
	uint64_t self = f->v[value];
	size_t i;
	int d;

	for (i = 0; i < f->nkids; i++)
		self -= MIN(self, f->kids[i]->v[value]);
	if (self && depth) {
		for (d = 0; d < depth; d++) {
			if (d)
				fputc(';', out);
			frame(out, path[d]->name);
		}
		fprintf(out, " %" PRIu64 "\n", self);
	}
	if (depth >= 256)
		return;
	for (i = 0; i < f->nkids; i++) {
		path[depth] = f->kids[i];
		walk(out, f->kids[i], path, depth + 1, value);
	}
}

static int end(struct export *x)
{
	struct flame *f = flame_build(&x->r);
	const struct flame_node *path[257];

	if (!f)
		return error("out of memory");
	walk(x->out, flame_root(f), path, 0, x->value);
	flame_free(f);
	return EXIT_OK;	/* an error writing is the driver's to say */
}

static int begin(struct export *x)
{
	return EXIT_OK;
}

const struct export_format export_folded = {
	.name = "folded", .ext = ".folded",
	.about = "\"outer;...;callsite VALUE\" lines: flamegraph.pl, speedscope, inferno",
	.stream = true, .detail = true, .begin = begin, .end = end,
};
