/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace diff's outputs (src/diff/diff.h): text tables, one JSON document,
 * one table as CSV. Rows come largest change first.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "diff.h"
#include "util/json.h"

/* "---- @s ----" centred in @w columns. */
static void banner(FILE *out, const char *s, int w)
{
	int n = (int)strlen(s) + 2, l = (w - n) / 2, r = w - n - l, i;

	for (i = 0; i < l; i++)
		fputc('-', out);
	fprintf(out, " %s ", s);
	for (i = 0; i < r; i++)
		fputc('-', out);
}

/* A value in the column's unit, per second if asked ("/s" said once, in the header). */
static const char *fmt(const struct diff *d, const struct rcol *c, double v, bool sign, char *buf)
{
	char tmp[48];
	const char *plus = sign && v > 0 ? "+" : "";

	if (c->unit == RU_BYTES) {
		snprintf(buf, 48, "%s%s", plus, human_bytes(v, tmp));
	} else if (d->per_second && fabs(v) < 100 && v != floor(v)) {
		snprintf(buf, 48, "%s%.2f", plus, v);
	} else {
		fmt_count(v, *plus, buf, 48);
	}
	return buf;
}

static const char *pct(double p, const struct drow *row, char *buf)
{
	if (!row->in[0])
		snprintf(buf, 48, "new");
	else if (!row->in[1])
		snprintf(buf, 48, "gone");
	else if (isnan(p))
		snprintf(buf, 48, "-");
	else if (fabs(p) < 0.05)
		snprintf(buf, 48, "0.0%%");
	else
		snprintf(buf, 48, "%+.1f%%", p);
	return buf;
}

static void side_line(const struct diff *d, int s, FILE *out)
{
	const struct dside *x = &d->side[s];
	const struct kmt_summary *sum = kmt_model_summary(x->a.m);
	const struct kmt_file_info *fi = kmt_file_info(x->a.f);
	char a[48], e[48], line[1024];
	struct rcol count = { .unit = RU_COUNT };
	struct diff plain = { .per_second = false };

	snprintf(line, sizeof(line), "  %s  %s: %.3f s, %s slab %s, %s %s%s%s%s", s ? "new" : "old",
		 x->path, x->span, fmt(&plain, &count, (double)sum->allocs, false, a),
		 plural((double)sum->allocs, "allocation", "allocations"),
		 fmt(&plain, &count, (double)sum->events, false, e), plural((double)sum->events, "event", "events"),
		 fi->uname ? " (" : "",
		 fi->uname ? fi->uname : "", fi->uname ? ")" : "");
	term_wrap(out, line, term_prose(d->wide ? 0 : d->width), 7);
	/* Said once; the tables mark the column ("old*"), not every number. */
	if (x->lower_bound) {
		snprintf(line, sizeof(line), "       its numbers are lower bounds (%s* in the tables): %s",
			 s ? "new" : "old", x->why);
		term_wrap(out, line, term_prose(d->wide ? 0 : d->width), 7);
	}
}

/* "old", or "old*" when the old file's numbers are lower bounds. */
static const char *side_title(const struct diff *d, int s)
{
	static const char *const titles[2][2] = { { "old", "old*" }, { "new", "new*" } };

	return titles[s][d->side[s].lower_bound];
}

static void total_text(const struct diff *d, FILE *out)
{
	const struct dtotal *x = &d->total;
	const struct drow both = { .in = { true, true } };
	char b[4][48];
	int f;

	fprintf(out, "\nTOTAL%s\n  %-30s %12s %12s %12s %7s\n", d->per_second ? " (per second)" : "", "",
		side_title(d, 0), side_title(d, 1), "delta", "change");
	for (f = 0; f < DIFF_TOTALS; f++) {
		const char *title = diff_total_cols[f].title;
		double o = diff_total(d, 0, f), v = diff_total(d, 1, f);

		if (isnan(o) || isnan(v)) {
			fprintf(out, "  %-30s not compared: the %s file has no events for it\n", title,
				isnan(o) && isnan(v) ? "old nor the new" : isnan(o) ? "old" : "new");
			continue;
		}
		fprintf(out, "  %-30s %12s %12s %12s %7s\n", title, fmt(d, x->src[f], o, false, b[0]),
			fmt(d, x->src[f], v, false, b[1]), fmt(d, x->src[f], v - o, true, b[2]),
			pct(o > 0 ? 100 * (v - o) / o : NAN, &both, b[3]));
	}
}

/*
 * A table's columns: the key, the first fields in full (old, new, delta,
 * change: 40 columns after two spaces), the others as deltas. In a narrow
 * width the deltas go first, the last first, then the second field; never
 * the one sorted by.
 */
static void layout(const struct diff *d, const struct dtable *t, struct term_col *tc, unsigned int *fitted)
{
	size_t i, n = table_limit(&d->tables, t->n, false);
	int f;

	tc[0] = (struct term_col){ .width = dspec_key(t->spec)->width, .longest = 8 };
	for (i = 0; i < n; i++) {
		const struct drow *r = &t->rows[i];

		tc[0].longest = MAX(tc[0].longest, term_cols(r->label ? r->label : r->key));
	}
	for (f = 0; f < t->nfields; f++)
		tc[1 + f] = (struct term_col){ .width = f < t->spec->full ? 41 : t->cols[f]->width,
					       .drop = f == t->sort ? 0 : f == 1 ? t->nfields : t->nfields - f };
	*fitted |= term_fit(tc, 1 + t->nfields, d->width, d->wide, 1);
}

static void dtext_table(const struct diff *d, const struct dtable *t, FILE *out, unsigned int *fitted)
{
	struct term_col tc[1 + DIFF_FIELDS];
	size_t i, n = table_limit(&d->tables, t->n, false);
	char b[4][48];
	int f;

	unsigned int missing = diff_unrecorded(d, t);

	if (missing) {
		fprintf(out, "\n%s: not compared, the %s file%s no %s\n", t->spec->title,
			missing == 3 ? "two" : missing == 1 ? "old" : "new", missing == 3 ? "s have" : " has",
			t->spec->table && !strcmp(t->spec->table, "cgroups") ? "record of the tasks' cgroups"
									    : "events for it");
		return;
	}
	fprintf(out, "\n%s, largest change in %s first%s\n", t->spec->title, t->cols[t->sort]->title,
		d->per_second ? " (per second)" : "");
	if (!t->n) {
		fprintf(out, "  none in either file\n");
		return;
	}
	layout(d, t, tc, fitted);
	/* Two headers: the first fields in full, the rest as deltas. */
	fputc(' ', out);
	term_cell(out, &tc[0], "");
	for (f = 0; f < t->nfields; f++) {
		int w = t->cols[f]->width;

		if (!tc[1 + f].shown)
			continue;
		if (f < t->spec->full) {
			fputs("  ", out);
			banner(out, t->cols[f]->title, 40);
		} else {
			fprintf(out, " %*.*s", w, w, t->cols[f]->title);
		}
	}
	fputs("\n ", out);
	term_cell(out, &tc[0], t->spec->function && d->match != MATCH_OFFSET ? t->spec->function :
		  dspec_key(t->spec)->title);
	for (f = 0; f < t->nfields; f++)
		if (tc[1 + f].shown && f < t->spec->full)
			fprintf(out, "  %10s %10s %10s %7s", side_title(d, 0), side_title(d, 1), "delta", "change");
		else if (tc[1 + f].shown)
			fprintf(out, " %*s", t->cols[f]->width, "delta");
	fputc('\n', out);
	for (i = 0; i < n; i++) {
		const struct drow *r = &t->rows[i];

		fputc(' ', out);
		term_cell(out, &tc[0], r->label ? r->label : r->key);
		for (f = 0; f < t->nfields; f++) {
			double o = diff_value(t, r, 0, f), v = diff_value(t, r, 1, f);

			if (!tc[1 + f].shown)
				continue;
			if (f < t->spec->full)
				fprintf(out, "  %10s %10s %10s %7s", fmt(d, t->src[f], o, false, b[0]),
					fmt(d, t->src[f], v, false, b[1]), fmt(d, t->src[f], v - o, true, b[2]),
					pct(diff_pct(t, r, f), r, b[3]));
			else
				fprintf(out, " %*s", t->cols[f]->width, fmt(d, t->src[f], v - o, true, b[2]));
		}
		fputc('\n', out);
	}
	text_more(out, t->n - n);
}

void diff_text(const struct diff *d, FILE *out)
{
	char line[1024], gave[80];
	unsigned int fitted = 0;
	int k;

	/* Nothing changed: one line, not tables of zeros. */
	if (!diff_differs(d)) {
		fprintf(out, "%s and %s do not differ: every call site, cache, process and page order "
			     "has the same numbers\n", d->side[0].path, d->side[1].path);
		return;
	}
	fprintf(out, "kmemtrace diff\n");
	side_line(d, 0, out);
	side_line(d, 1, out);
	snprintf(line, sizeof(line), "  call sites matched by %s: %s",
		 d->match == MATCH_OFFSET ? "function+offset" : "function name", d->match_why);
	term_wrap(out, line, term_prose(d->wide ? 0 : d->width), 4);
	if (d->per_second)
		fprintf(out, "  numbers per second of each trace's own span\n");
	fprintf(out, "  change: (new - old) / old; \"new\": only in NEW, \"gone\": only in OLD\n");
	total_text(d, out);
	for (k = 0; k < d->nt; k++)
		dtext_table(d, &d->t[k], out, &fitted);
	if (fitted) {
		snprintf(line, sizeof(line), "(cut to fit %d columns: %s; --wide shows everything)", d->width,
			 term_gave(fitted, gave, sizeof(gave)));
		fputc('\n', out);
		term_wrap(out, line, term_prose(d->width), 1);
	}
}

/* ---- JSON ---- */

static void json_side(struct js *j, const struct diff *d, int s)
{
	const struct dside *x = &d->side[s];
	const struct kmt_summary *sum = kmt_model_summary(x->a.m);
	const struct kmt_file_info *fi = kmt_file_info(x->a.f);

	js_open(j, s ? "new" : "old", '{');
	js_str(j, "file", x->path);
	js_str(j, "kernel", fi->uname ? fi->uname : "");
	js_u64(j, "span_ns", kmt_summary_span(sum));
	js_u64(j, "events", sum->events);
	js_u64(j, "allocs", sum->allocs);
	js_u64(j, "bytes_alloc", sum->bytes_alloc);
	js_u64(j, "lost_events", sum->lost_events);
	js_bool(j, "affected_by_loss", sum->affected_by_loss);
	js_bool(j, "partial", sum->partial_allocs || sum->partial_frees);
	js_bool(j, "lower_bound", x->lower_bound);
	js_str(j, "lower_bound_why", x->why);
	js_close(j, '}');
}

static void num(struct js *j, const struct diff *d, const char *k, double v)
{
	if (d->per_second)
		js_dbl(j, k, v);
	else if (v < 0)
		js_i64(j, k, (int64_t)v);
	else
		js_u64(j, k, (uint64_t)v);
}

/* A key column's value: a string, a number kept as one, or null. */
static void json_key_col(struct js *j, const struct dcol *c, const struct drow *r)
{
	const char *v = c->get(r);

	if (!v)
		js_null(j, c->name);
	else if (c->type == RT_U64)
		js_u64(j, c->name, strtoull(v, NULL, 10));
	else
		js_str(j, c->name, v);
}

static void json_row(struct js *j, const struct diff *d, const struct dtable *t, const struct drow *r)
{
	static const char *const sides[] = { "old", "new" };
	const struct dcol *c;
	int f, s;

	js_open(j, NULL, '{');
	for (c = t->spec->keys; c->name; c++)
		if (c->flags & DC_JSON_FIRST)
			json_key_col(j, c, r);
	for (c = t->spec->keys; c->name; c++)
		if (!(c->flags & DC_JSON_FIRST))
			json_key_col(j, c, r);
	for (s = 0; s < 2; s++) {
		js_open(j, sides[s], '{');
		for (f = 0; f < t->nfields; f++)
			num(j, d, t->cols[f]->name, diff_value(t, r, s, f));
		js_close(j, '}');
	}
	js_open(j, "delta", '{');
	for (f = 0; f < t->nfields; f++)
		num(j, d, t->cols[f]->name, diff_value(t, r, 1, f) - diff_value(t, r, 0, f));
	js_close(j, '}');
	js_open(j, "pct", '{');
	for (f = 0; f < t->nfields; f++) {
		double p = diff_pct(t, r, f);

		if (isnan(p)) {
			js_key(j, t->cols[f]->name);
			fputs("null", j->out);
		} else {
			js_dbl(j, t->cols[f]->name, p);
		}
	}
	js_close(j, '}');
	js_close(j, '}');
}

/* The totals: old, new, delta and pct as a row's; null where a file does not record the field. */
static void json_total(struct js *j, const struct diff *d)
{
	static const char *const sides[] = { "old", "new", "delta", "pct" };
	int f, s;

	js_open(j, "total", '{');
	for (s = 0; s < 4; s++) {
		js_open(j, sides[s], '{');
		for (f = 0; f < DIFF_TOTALS; f++) {
			double o = diff_total(d, 0, f), v = diff_total(d, 1, f);
			double val = s < 2 ? (s ? v : o) : s == 2 ? v - o : o > 0 ? 100 * (v - o) / o : NAN;

			if (isnan(val))
				js_null(j, diff_total_cols[f].name);
			else if (s == 3)
				js_dbl(j, diff_total_cols[f].name, val);
			else
				num(j, d, diff_total_cols[f].name, val);
		}
		js_close(j, '}');
	}
	js_close(j, '}');
}

/* The document's members, into the object @j has open (also the page's data). */
void diff_json_members(const struct diff *d, struct js *j)
{
	int k;
	size_t i;

	js_u64(j, "kmemtrace_diff", 1);
	json_side(j, d, 0);
	json_side(j, d, 1);
	js_str(j, "match", d->match == MATCH_OFFSET ? "function+offset" : "function");
	js_str(j, "match_reason", d->match_why);
	js_bool(j, "per_second", d->per_second);
	js_bool(j, "differs", diff_differs(d));
	json_total(j, d);
	for (k = 0; k < d->nt; k++) {
		const struct dtable *t = &d->t[k];

		if (diff_unrecorded(d, t)) {
			js_null(j, t->spec->name);	/* a file has no events for it */
			continue;
		}
		js_open(j, t->spec->name, '[');
		for (i = 0; i < table_limit(&d->tables, t->n, true); i++)
			json_row(j, d, t, &t->rows[i]);
		js_close(j, ']');
	}
}

void diff_json(const struct diff *d, FILE *out)
{
	struct js j;

	js_init(&j, out, false, false);
	js_open(&j, NULL, '{');
	diff_json_members(d, &j);
	js_close(&j, '}');
	fputc('\n', out);
}

/* ---- CSV ---- */

/* A key column's value: the key as the text shows it, a bare word, or a quoted string. */
static void csv_key_col(FILE *out, const struct dcol *c, const struct drow *r)
{
	const char *v = c->get(r);

	if (c->flags & DC_KEY)
		csv_field(out, r->label ? r->label : v);
	else if (c->flags & DC_BARE)
		fputs(v ? v : "", out);
	else
		csv_field(out, v ? v : "");
}

int diff_csv(const struct diff *d, const char *name, FILE *out)
{
	const struct dtable *t = diff_table(d, name);
	const struct dcol *c;
	char names[128];
	size_t i;
	int f;

	if (!t)
		return error("no table '%s' for --csv (%s)", name, diff_table_names(names, sizeof(names), ", "));
	for (c = t->spec->keys; c->name; c++)
		fprintf(out, "%s%s", c == t->spec->keys ? "" : ",", c->name);
	for (f = 0; f < t->nfields; f++)
		fprintf(out, ",%s_old,%s_new,%s_delta,%s_pct", t->cols[f]->name, t->cols[f]->name,
			t->cols[f]->name, t->cols[f]->name);
	fputc('\n', out);
	for (i = 0; i < table_limit(&d->tables, t->n, true); i++) {
		const struct drow *r = &t->rows[i];

		for (c = t->spec->keys; c->name; c++) {
			if (c != t->spec->keys)
				fputc(',', out);
			csv_key_col(out, c, r);
		}
		for (f = 0; f < t->nfields; f++) {
			double o = diff_value(t, r, 0, f), n = diff_value(t, r, 1, f), p = diff_pct(t, r, f);

			if (d->per_second)
				fprintf(out, ",%.3f,%.3f,%.3f", o, n, n - o);
			else
				fprintf(out, ",%.0f,%.0f,%.0f", o, n, n - o);
			if (isnan(p))
				fprintf(out, ",");
			else
				fprintf(out, ",%.3f", p);
		}
		fputc('\n', out);
	}
	return EXIT_OK;
}
