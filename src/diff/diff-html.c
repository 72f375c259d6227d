/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace diff --html: the page of report --html (src/report/report-html.c)
 * with diff --json's document as its data, under "diff", and diff's tables
 * (diff-cols.c), under "diff_tables": the script draws the largest changes
 * as bars, old beside new, and the tables, titled from those.
 */
#include "util/util.h"
#include "diff.h"
#include "util/json.h"
#include "report/report-html.h"

/* A column as the page's tables take it (report's), and whether a compared one is whole. */
static void column(struct js *j, const struct rcol *c, int full)
{
	js_open(j, NULL, '{');
	html_column(j, c);
	if (full >= 0)
		js_bool(j, "full", full);
	js_close(j, '}');
}

/*
 * Each table: its name, text title and key column; the key columns and the
 * compared ones (type, unit and doc the report column's), titled as on the
 * page. Compared columns "full" show old, new, delta and change; the
 * others their delta.
 */
static void tables(struct js *j)
{
	const struct dspec *s;
	const struct dcol *c;
	int f;

	js_open(j, "diff_tables", '[');
	for (s = diff_specs; s->name; s++) {
		js_open(j, NULL, '{');
		js_str(j, "name", s->name);
		js_str(j, "title", s->title);
		js_str(j, "key", dspec_key(s)->name);
		js_open(j, "columns", '[');
		for (c = s->keys; c->name; c++)
			column(j, &(struct rcol){ .name = c->name, .type = c->type, .unit = RU_NONE,
						  .title = c->label, .doc = c->doc }, -1);
		js_close(j, ']');
		js_open(j, "compared", '[');
		for (f = 0; s->fields[f]; f++) {
			struct rcol rc;

			c = dfield_find(s->fields[f]);
			rc = *dfield_source(s, c);
			rc.title = c->label;
			column(j, &rc, f < s->full);
		}
		js_close(j, ']');
		js_close(j, '}');
	}
	js_close(j, ']');
}

static void diff_data(void *arg, struct js *j)
{
	js_open(j, "diff", '{');
	diff_json_members(arg, j);
	js_close(j, '}');
	tables(j);
}

void diff_html(const struct diff *d, FILE *out)
{
	char title[8400];

	snprintf(title, sizeof(title), "kmemtrace diff: %s vs %s", d->side[0].path, d->side[1].path);
	html_page(out, title, "kmemtrace diff --json", diff_data, (void *)d);
}
