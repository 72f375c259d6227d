/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace diff's tables (src/diff/diff.h): the columns it compares, once,
 * and per table the columns that name a row and the ones it compares, in
 * their order. The text, JSON, CSV, the page and --columns all read them,
 * so a column is added here and appears in every format.
 */
#include <string.h>

#include "util/util.h"
#include "util/opt.h"
#include "diff.h"

/* ---- the key columns: how a row is named, and which file has it ---- */

static const char *row_key(const struct drow *row)
{
	return row->key;
}

static const char *row_function(const struct drow *row)
{
	return row->function;
}

static const char *row_only_in(const struct drow *row)
{
	return row->in[0] && row->in[1] ? NULL : row->in[0] ? "old" : "new";
}

#define ONLY_IN { .name = "only_in", .type = RT_STR, .label = "only in", .get = row_only_in, \
		  .flags = DC_BARE, .doc = "null in both files, else old or new" }
#define KEY(n, ty, t, l, d) { .name = n, .type = ty, .title = t, .label = l, .width = -40, \
			      .get = row_key, .flags = DC_KEY, .doc = d }

static const struct dcol site_keys[] = {
	KEY("callsite", RT_STR, "call site", "call site", "function+offset, or the function name when "
	    "call sites match by name (match)"),
	{ .name = "function", .type = RT_STR, .label = "", .get = row_function, .flags = DC_JSON_FIRST,
	  .doc = "the function" },
	ONLY_IN,
	{ 0 },
};

static const struct dcol cache_keys[] = {
	KEY("name", RT_STR, "name", "cache", "the cache's name (text and CSV: a merged cache's "
	    "\"name (+aliases)\")"),
	ONLY_IN,
	{ 0 },
};

static const struct dcol comm_keys[] = {
	KEY("comm", RT_STR, "comm", "comm", "the task name"),
	ONLY_IN,
	{ 0 },
};

static const struct dcol cgroup_keys[] = {
	KEY("cgroup", RT_STR, "cgroup", "cgroup", "the cgroup v2 path (without cgroup v2, the v1 memory "
	    "controller's) of the tasks that allocated"),
	ONLY_IN,
	{ 0 },
};

static const struct dcol order_keys[] = {
	KEY("order", RT_U64, "order", "order", "the allocation order"),
	ONLY_IN,
	{ 0 },
};

/*
 * ---- the compared columns ----
 *
 * Each a column of the report's tables, by the same name; this order is
 * the -s keys' (--help, the error message, completion).
 */
#define F(n, t, l, s, ...) { .name = n, .title = t, .label = l, .width = 12, .sort = s, __VA_ARGS__ }
const struct dcol diff_fields[] = {
	F("bytes_alloc", "bytes allocated", "allocated", "bytes"),
	F("allocs", "allocations", "allocs", "allocs"),
	F("frees", "frees", "frees", "frees"),
	F("bytes_req", "requested", "requested", "req"),
	F("waste", "waste", "waste", "waste"),
	F("live_bytes", "live bytes", "live bytes", "live", .flags = DC_LEVEL),
	F("live_objects", "live objects", "live", "objects", .flags = DC_LEVEL),
	F("pages", "pages", "pages", "pages"),
	{ 0 },
};
#undef F

const struct dspec diff_specs[DIFF_TABLES + 1] = {
	{ .name = "callsites", .title = "CALL SITES", .table = "callsites", .keys = site_keys,
	  .function = "function", .full = 2,
	  .doc = "slab allocations per call site (matched by function+offset or by function name)",
	  .fields = { "bytes_alloc", "allocs", "frees", "bytes_req", "waste", "live_objects", "live_bytes" } },
	{ .name = "caches", .title = "CACHES", .table = "caches", .keys = cache_keys, .full = 2,
	  .doc = "slab caches by name, kmalloc by size class",
	  .fields = { "bytes_alloc", "allocs", "frees", "bytes_req", "waste", "live_objects", "live_bytes" } },
	{ .name = "processes", .title = "PROCESSES (by name)", .table = "comms", .keys = comm_keys, .full = 2,
	  .doc = "allocations per task name, its tasks summed",
	  .fields = { "bytes_alloc", "allocs", "frees", "bytes_req", "live_objects", "live_bytes", "pages" } },
	{ .name = "cgroups", .title = "CGROUPS", .table = "cgroups", .keys = cgroup_keys, .full = 2,
	  .doc = "allocations per cgroup of the task that made them (recordings with cgroups)",
	  .fields = { "bytes_alloc", "allocs", "frees", "bytes_req", "live_objects", "live_bytes", "pages" } },
	{ .name = "pages", .title = "PAGES (by order)", .table = "page_orders", .keys = order_keys, .full = 2,
	  .doc = "page allocations per order, migrate types summed",
	  .fields = { "pages", "allocs" } },
	{ 0 },
};

/* The TOTAL: the report summary's numbers that say at once what changed. */
#define T(n, t, fl) { .name = n, .title = t, .flags = fl }
const struct dcol diff_total_cols[DIFF_TOTALS + 1] = {
	T("bytes_alloc", "slab bytes allocated", 0),
	T("allocs", "slab objects allocated", 0),
	T("live_bytes", "slab bytes live at the end", DC_LEVEL),
	T("live_objects", "slab objects live at the end", DC_LEVEL),
	T("pages_allocated", "pages allocated", DC_PAGES),
	{ 0 },
};
#undef T

const struct dspec *dspec_find(const char *name)
{
	const struct dspec *s;

	for (s = diff_specs; s->name; s++)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

const struct dcol *dfield_find(const char *name)
{
	const struct dcol *c;

	for (c = diff_fields; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

const struct dcol *dspec_key(const struct dspec *s)
{
	const struct dcol *c;

	for (c = s->keys; c->name; c++)
		if (c->flags & DC_KEY)
			return c;
	return NULL;
}

const struct rcol *dfield_source(const struct dspec *s, const struct dcol *c)
{
	return rtable_col(rtable_find(s->table), c->name);
}

bool diff_sort_known(const char *key)
{
	const struct dcol *c;

	for (c = diff_fields; c->name; c++)
		if (c->sort && !strcmp(c->sort, key))
			return true;
	return false;
}

const char *diff_sort_keys(char *buf, size_t len)
{
	const struct dcol *c;

	buf[0] = '\0';
	for (c = diff_fields; c->name; c++)
		if (c->sort)
			opt_join(buf, len, ",", c->sort);
	return buf;
}

const char *diff_table_names(char *buf, size_t len, const char *sep)
{
	const struct dspec *s;

	buf[0] = '\0';
	for (s = diff_specs; s->name; s++)
		opt_join(buf, len, sep, s->name);
	return buf;
}

/* A column's type in words: a compared one's is its report column's unit. */
static const char *type_words(const struct dcol *c, const struct rcol *src)
{
	if (src)
		return src->unit == RU_BYTES ? "bytes" : "count";
	return c->type == RT_U64 ? "number" : "string";
}

static void print_col(FILE *out, const struct dcol *c, const struct rcol *src)
{
	fprintf(out, "  %-22s %-16s %s%s%s%s\n", c->name, type_words(c, src), src ? src->doc : c->doc,
		c->sort ? "  [-s " : "", c->sort ? c->sort : "", c->sort ? "]" : "");
}

void diff_columns(FILE *out)
{
	const struct rtable *sum = rtable_find("summary");
	const struct dspec *s;
	const struct dcol *c;
	int f;

	fprintf(out, "total (JSON: total.old, .new, .delta, .pct): the report summary's, as the text's "
		"TOTAL\n  in text and JSON; null where a file has no events for it\n");
	for (c = diff_total_cols; c->name; c++)
		print_col(out, c, rtable_col(sum, c->name));
	for (s = diff_specs; s->name; s++) {
		fprintf(out, "\n%s: %s\n  in text, JSON and CSV; the report's %s table, a row per %s\n",
			s->name, s->doc, s->table, dspec_key(s)->name);
		for (c = s->keys; c->name; c++)
			print_col(out, c, NULL);
		fprintf(out, "  compared (JSON: in old, new, delta and pct; CSV: NAME_old, _new, _delta, "
			"_pct):\n");
		for (f = 0; s->fields[f]; f++) {
			c = dfield_find(s->fields[f]);
			print_col(out, c, dfield_source(s, c));
		}
	}
}
