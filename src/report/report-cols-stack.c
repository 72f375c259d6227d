/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The report's table of slab allocations by call site and stack (--stack
 * recordings): a list under each call site in JSON, lines under it in the
 * text, one CSV table of them all.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "report-cols.h"

static size_t stack_rows(const struct report *r, const void ***out)
{
	size_t n;
	const struct kmt_site_stack *v = kmt_model_stacks(r->m, &n);

	return rtable_ptrs(v, n, sizeof(*v), out);
}

static size_t stack_rows_of(const struct report *r, const void *parent, const void ***out)
{
	size_t n;
	const struct kmt_site_stack *v = kmt_model_site_stacks(r->m, ((const struct kmt_site *)parent)->addr, &n);

	return rtable_ptrs(v, n, sizeof(*v), out);
}

_Static_assert(offsetof(struct kmt_site_stack, site) == 0, "kmt_site_stack starts with its site");

static void g_callsite(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = site_name(r, *(const uint64_t *)row, buf, len);
}

static void g_function(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = site_function(r, *(const uint64_t *)row, buf, len);
}

static void g_frames(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	size_t n;

	v->v = kmt_model_stack(r->m, ((const struct kmt_site_stack *)row)->stack, &n);
	v->n = (int)n;
}

/*
 * The frames of @row's stack, innermost first, joined by @sep into @buf;
 * frames @elide_from to @elide_to (excluded; equal: none) as one "...".
 */
static const char *join_eliding(const struct report *r, const struct kmt_site_stack *row, const char *sep,
				char *buf, size_t len, size_t elide_from, size_t elide_to)
{
	size_t n, i, o = 0;
	const uint64_t *f = kmt_model_stack(r->m, row->stack, &n);
	char name[256];

	buf[0] = '\0';
	for (i = 0; i < n && o + 1 < len; i++) {
		if (i >= elide_from && i < elide_to) {
			if (i == elide_from)
				o += (size_t)snprintf(buf + o, len - o, "%s...", i ? sep : "");
			continue;
		}
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? sep : "",
				      site_name(r, f[i], name, sizeof(name)));
	}
	return buf;
}

static const char *join(const struct report *r, const struct kmt_site_stack *row, const char *sep,
			char *buf, size_t len)
{
	return join_eliding(r, row, sep, buf, len, 0, 0);
}

/* How many innermost frames the first @n stacks of @rows share (the site's common path). */
static size_t common_frames(const struct report *r, const void **rows, size_t n)
{
	size_t k, i, c = SIZE_MAX, n0, nk;
	const uint64_t *f0, *fk;

	if (n < 2)
		return 0;
	f0 = kmt_model_stack(r->m, ((const struct kmt_site_stack *)rows[0])->stack, &n0);
	for (k = 1; k < n; k++) {
		fk = kmt_model_stack(r->m, ((const struct kmt_site_stack *)rows[k])->stack, &nk);
		for (i = 0; i < n0 && i < nk && i < c && f0[i] == fk[i]; i++)
			;
		c = i;
	}
	return c == SIZE_MAX ? 0 : c;
}

static void g_stack(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = join(r, row, ";", buf, len);
}

#define SS struct kmt_site_stack
static const struct rcol stack_cols[] = {
	{ .name = "callsite", .type = RT_STR, .unit = RU_NONE, .get = g_callsite, .flags = RC_CSV_ONLY,
	  .doc = "the call site, as in callsites (CSV only: in JSON the stacks are under their call site)" },
	{ .name = "function", .type = RT_STR, .unit = RU_NONE, .get = g_function, .flags = RC_CSV_ONLY,
	  .doc = "the call site's function (CSV only)" },
	G("frames", RT_FRAMES, RU_NONE, NULL, 0, NULL, "the callers of the call site, innermost first, as "
	  "symbol+0xoffset (at most --stack-depth of them)", g_frames),
	{ .name = "stack", .type = RT_STR, .unit = RU_NONE, .get = g_stack, .flags = RC_CSV_ONLY,
	  .doc = "the frames joined by ';', innermost first (CSV only)" },
	U("allocs", SS, allocs, RU_COUNT, NULL, 0, "allocs", "allocations at the call site with this stack"),
	U("frees", SS, frees, RU_COUNT, NULL, 0, "frees", "of those objects, freed in the window"),
	U("bytes_req", SS, bytes_req, RU_BYTES, NULL, 0, "req", "bytes requested"),
	U("bytes_alloc", SS, bytes_alloc, RU_BYTES, NULL, 0, "bytes", "bytes allocated"),
	U("live_objects", SS, live_objects, RU_COUNT, NULL, 0, NULL, "objects live at the end (certain ones)"),
	U("live_bytes", SS, live_bytes, RU_BYTES, NULL, 0, "live", "their allocated bytes"),
	END,
};
#undef SS

/* One line of text, cut to the report's width if it has one. */
static void line_out(const struct report *r, const char *line, FILE *out)
{
	char cut[1024];

	if (r->width && !r->wide && term_cols(line) > r->width) {
		line = term_cut(line, r->width, false, cut, sizeof(cut));
		if (r->fitted)
			*r->fitted |= TERM_STACKS;
	}
	fprintf(out, "%s\n", line);
}

/* Text: the site's top stacks, one line each, under its row. */
static void stacks_text(const struct report *r, const void *row, FILE *out)
{
	const struct kmt_site *s = row;
	const void **rows = NULL;
	size_t n = rtable_rows_of(r, &t_callsite_stacks, row, &rows), i;
	uint64_t one_in = r->m ? kmt_model_summary(r->m)->stack_sample : 1, stacked = 0, stacked_bytes = 0;
	size_t shown = MIN(n, (size_t)MAX(r->stacks_per_site, 0)), common = common_frames(r, rows, shown);
	char buf[4096], line[4200], num[32], by[32];

	/* Sampled stacks: each stands for the allocations like it (stack_weight), as pprof and folded count. */
	for (i = 0; i < n; i++) {
		stacked += ((const struct kmt_site_stack *)rows[i])->allocs;
		stacked_bytes += ((const struct kmt_site_stack *)rows[i])->bytes_alloc;
	}
	for (i = 0; i < n && i < (size_t)r->stacks_per_site; i++) {
		const struct kmt_site_stack *k = rows[i];
		uint64_t a = stack_weight(k->allocs, stacked, s->allocs, one_in);
		uint64_t b = stack_weight(k->bytes_alloc, stacked_bytes, s->bytes_alloc, one_in);

		join(r, k, " <- ", buf, sizeof(buf));
		snprintf(line, sizeof(line), "      %5.1f%% %9s %10s  <- %s",
			 s->allocs ? 100.0 * (double)a / (double)s->allocs : 0.0,
			 fmt_count((double)a, false, num, sizeof(num)),
			 human_bytes((double)b, by), *buf ? buf : "(no frames above the call site)");
		/*
		 * Too wide: the frames the site's stacks share (but the first) go,
		 * not the outer ones where they differ, so that they do not look alike.
		 */
		if (common > 1 && r->width && !r->wide && term_cols(line) > r->width) {
			join_eliding(r, k, " <- ", buf, sizeof(buf), 1, common);
			snprintf(line, sizeof(line), "      %5.1f%% %9s %10s  <- %s",
				 s->allocs ? 100.0 * (double)a / (double)s->allocs : 0.0, num, by, buf);
		}
		line_out(r, line, out);
	}
	if (n > i)
		fprintf(out, "      (%s more %s)\n", fmt_count((double)(n - i), false, num, sizeof(num)),
			plural((double)(n - i), "stack", "stacks"));
	free(rows);
}

const struct rtable t_callsite_stacks = {
	.name = "callsite_stacks", .json_key = "stacks", .parent = "callsites", .section = SEC_CALLSITES,
	.cols = stack_cols, .rows = stack_rows, .rows_of = stack_rows_of, .text_after = stacks_text,
	.default_sort = "bytes",
	.doc = "slab allocations by call site and the stack of its callers (record --stack; in JSON: "
	       "each call site's stacks)", .sql = true,
};
