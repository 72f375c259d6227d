/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace report --json: one document, schema in docs/report-json.md,
 * printed from the report's tables (report-cols.c). Numbers are exact
 * integers; call sites come as "callsite" (symbol+offset) and "function"
 * (symbol alone); addresses as hex strings.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "util/json.h"
#include "report.h"

static void json_value(struct js *j, const struct report *r, const struct rcol *c, const void *row)
{
	struct rval v;
	char buf[512];
	int i, t, top;

	rcol_value(r, c, row, &v, buf, sizeof(buf));
	switch (c->type) {
	case RT_U64:
		js_u64(j, c->name, v.u);
		break;
	case RT_I64:
		js_i64(j, c->name, v.i);
		break;
	case RT_PCT:
		js_dbl(j, c->name, v.f);
		break;
	case RT_STR:
		js_str(j, c->name, v.s ? v.s : "");
		break;
	case RT_BOOL:
		js_bool(j, c->name, v.u);
		break;
	case RT_HIST:
		/* Up to the last bucket in use. */
		for (i = 0, top = -1; i < v.n; i++)
			if (v.v[i])
				top = i;
		js_open(j, c->name, '[');
		for (i = 0; i <= top; i++)
			js_u64(j, NULL, v.v[i]);
		js_close(j, ']');
		break;
	case RT_ARRAY:
		js_open(j, c->name, '[');
		for (i = 0; i < v.n; i++)
			js_u64(j, NULL, v.v[i]);
		js_close(j, ']');
		break;
	case RT_KINDS:
		js_open(j, c->name, '{');
		for (i = 1; i < v.n; i++)
			if (v.v[i])
				js_u64(j, kmt_kind_name(i), v.v[i]);
		js_close(j, '}');
		break;
	case RT_NAMES:
		js_open(j, c->name, '[');
		for (i = 0; i < v.n; i++)
			js_str(j, NULL, v.names[i]);
		js_close(j, ']');
		break;
	case RT_FRAMES:
		js_open(j, c->name, '[');
		for (i = 0; i < v.n; i++)
			js_str(j, NULL, site_name(r, v.v[i], buf, sizeof(buf)));
		js_close(j, ']');
		break;
	case RT_MATRIX:
		js_open(j, c->name, '[');
		for (i = 0; i <= KMT_MAX_ORDER; i++) {
			js_open(j, NULL, '[');
			for (t = 0; t <= KMT_MIGRATE_TYPES; t++)
				js_u64(j, NULL, v.v[i * (KMT_MIGRATE_TYPES + 1) + t]);
			js_close(j, ']');
		}
		js_close(j, ']');
		break;
	}
}

static void json_fields(struct js *j, const struct report *r, const struct rtable *t, const void *row)
{
	const struct rcol *c;

	for (c = t->cols; c->name; c++)
		if (!(c->flags & RC_CSV_ONLY))
			json_value(j, r, c, row);
}

/* Does @t have any rows at all? (Nested lists are left out where none could be.) */
static bool any_rows(const struct report *r, const struct rtable *t)
{
	const void **p = NULL;
	size_t n = t->rows(r, &p);

	free(p);
	return n;
}

/* The rows of @t nested in the row @parent, as a list. */
static void json_list(struct js *j, const struct report *r, const struct rtable *t, const void *parent)
{
	const void **rows = NULL;
	size_t n = rtable_rows_of(r, t, parent, &rows), i;

	if (r->nested_top)
		n = MIN(n, (size_t)r->nested_top);
	js_open(j, t->json_key ? t->json_key : t->name, '[');
	for (i = 0; i < table_limit(&r->tables, n, true); i++) {
		js_open(j, NULL, '{');
		json_fields(j, r, t, rows[i]);
		js_close(j, '}');
	}
	js_close(j, ']');
	free(rows);
}

static void json_table(struct js *j, const struct report *r, const struct rtable *t)
{
	const void **rows = NULL;
	size_t n = rtable_rows(r, t, &rows), i;
	int k;

	const char *name = t->json_key ? t->json_key : t->name;

	if (t->single) {
		js_open(j, name, '{');
		if (n)
			json_fields(j, r, t, rows[0]);
		/* Tables nested in this one, as arrays. */
		for (k = 0; report_tables[k]; k++)
			if (report_tables[k]->parent && !report_tables[k]->rows_of &&
			    !strcmp(report_tables[k]->parent, t->name))
				json_table(j, r, report_tables[k]);
		js_close(j, '}');
	} else {
		const struct rtable *sub[4];
		int nsub = 0;

		/* Tables with a list in each row. */
		for (k = 0; report_tables[k] && nsub < 4; k++)
			if (report_tables[k]->rows_of && !strcmp(report_tables[k]->parent, t->name) &&
			    any_rows(r, report_tables[k]))
				sub[nsub++] = report_tables[k];
		js_open(j, name, '[');
		for (i = 0; i < table_limit(&r->tables, n, true); i++) {
			js_open(j, NULL, '{');
			json_fields(j, r, t, rows[i]);
			for (k = 0; k < nsub; k++)
				json_list(j, r, sub[k], rows[i]);
			js_close(j, '}');
		}
		js_close(j, ']');
	}
	free(rows);
}

/* The report's members, into the object @j has open. */
void report_json_members(const struct report *r, struct js *j)
{
	const struct kmt_file_info *fi = kmt_file_info(r->f);
	int k;

	js_u64(j, "kmemtrace_report", 3);
	js_str(j, "file", r->path);
	js_bool(j, "hashed_pointers", r->addr.hash.on);
	js_u64(j, "file_version", (uint64_t)fi->version);
	js_str(j, "kernel", fi->uname ? fi->uname : "");
	{
		const char *why[4];
		size_t i, n = kmt_decode_file_lacks(r->f, why, 4);

		if (n) {	/* a 6.18 kernel's file has none: the key is left out */
			js_open(j, "kernel_lacks", '[');
			for (i = 0; i < n; i++)
				js_str(j, NULL, why[i]);
			js_close(j, ']');
		}
	}
	{
		/* record --filter: what the recording kept ("filter X" of its settings; none: left out). */
		const char *f = strstr(fi->recinfo.settings, "; filter ");
		char filter[512];

		if (f && strncmp(f + 9, "none", 4)) {
			f += 9;
			snprintf(filter, sizeof(filter), "%.*s", (int)strcspn(f, ";"), f);
			js_str(j, "recording_filter", filter);
		}
	}
	js_str(j, "clock", fi->clock ? fi->clock : "");
	js_u64(j, "cpus", (uint64_t)fi->cpu_count);
	for (k = 0; report_tables[k]; k++) {
		const struct rtable *t = report_tables[k];

		if (t->parent || t->csv_only || !(t->section & r->sections))
			continue;
		if (t->section & r->unrecorded)
			js_null(j, t->json_key ? t->json_key : t->name);	/* no events for it */
		else
			json_table(j, r, t);
	}
}

void report_json(const struct report *r, FILE *out)
{
	struct report plain = *r;	/* names alone: merged caches have their aliases apart */
	struct js j;

	plain.plain_names = true;
	js_init(&j, out, false, false);
	js_open(&j, NULL, '{');
	report_json_members(&plain, &j);
	js_close(&j, '}');
	fputc('\n', out);
}
