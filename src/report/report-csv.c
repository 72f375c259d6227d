/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace report --csv NAME: one table, printed from the report's tables
 * (report-cols.c): a header line and one row per item, or "key,value"
 * lines for a one-row table (summary). Plain numbers (bytes, nanoseconds),
 * strings quoted (csv_field()); histograms and per-CPU arrays are JSON's only.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "report.h"

static bool scalar(const struct rcol *c)
{
	return c->type == RT_U64 || c->type == RT_I64 || c->type == RT_PCT || c->type == RT_STR ||
	       c->type == RT_BOOL || c->type == RT_NAMES || (c->flags & RC_CSV_BUCKETS);
}

/* A histogram's columns: NAME_Nns, N the bucket's lower bound. */
static void bucket_header(const struct rcol *c, FILE *out)
{
	int k;

	for (k = 0; k < KMT_LIFE_BUCKETS; k++)
		fprintf(out, "%s%s_%" PRIu64 "ns", k ? "," : "", c->name, kmt_life_bucket_ns(k + 1));
}

static void value(const struct report *r, const struct rcol *c, const void *row, FILE *out)
{
	struct rval v;
	char buf[8192];

	rcol_value(r, c, row, &v, buf, sizeof(buf));
	switch (c->type) {
	case RT_U64: fprintf(out, "%" PRIu64, v.u); break;
	case RT_I64: fprintf(out, "%" PRId64, v.i); break;
	case RT_PCT: fprintf(out, "%.3f", v.f); break;
	case RT_BOOL: fputs(v.u ? "true" : "false", out); break;
	case RT_STR: csv_field(out, v.s ? v.s : ""); break;
	case RT_NAMES: csv_field(out, rval_names(&v, buf, sizeof(buf))); break;
	case RT_HIST:
		for (int k = 0; k < v.n; k++)
			fprintf(out, "%s%" PRIu64, k ? "," : "", v.v[k]);
		break;
	default: break;
	}
}

int report_csv(const struct report *r, const char *name, FILE *out)
{
	const struct rtable *t = section_bit(name) ? rtable_of_section(section_bit(name)) : rtable_find(name);
	const void **rows = NULL;
	const struct rcol *c;
	size_t n, i;
	bool first = true;

	if (!t || t->json_only)
		return error("no section or table '%s' for --csv", name);
	if ((t->section & SEC_CGROUPS) && r->no_cgroups)
		return error("%s: %s: not recorded (the file has no record of the tasks' cgroups)", r->path, name);
	if (t->section & r->unrecorded)
		return error("%s: %s: its events were not recorded%s", r->path, name,
			     r->cache ? " or not selected (--cache)" : "");
	n = rtable_rows(r, t, &rows);
	if (t->single) {
		fprintf(out, "key,value\n");
		for (c = t->cols; n && c->name; c++) {
			if (!scalar(c) || (c->flags & RC_CSV_BUCKETS))
				continue;
			fprintf(out, "%s,", c->name);
			value(r, c, rows[0], out);
			fputc('\n', out);
		}
		free(rows);
		return EXIT_OK;
	}
	for (c = t->cols; c->name; c++)
		if (scalar(c)) {
			fputs(first ? "" : ",", out);
			if (c->flags & RC_CSV_BUCKETS)
				bucket_header(c, out);
			else
				fputs(c->name, out);
			first = false;
		}
	fputc('\n', out);
	for (i = 0; i < table_limit(&r->tables, n, true); i++) {
		first = true;
		for (c = t->cols; c->name; c++) {
			if (!scalar(c))
				continue;
			if (!first)
				fputc(',', out);
			first = false;
			value(r, c, rows[i], out);
		}
		fputc('\n', out);
	}
	free(rows);
	return EXIT_OK;
}
