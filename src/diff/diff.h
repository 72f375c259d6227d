/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace diff: two traces analysed alike, their report tables matched
 * row by row (call sites by function+offset, or by function name when the
 * kernels differ), and old, new, delta and change printed per row.
 *
 *   diff-cols.c   its tables: the columns that name a row, those compared
 *   diff.c        the two sides, the matching, the sorting
 *   diff-print.c  text, JSON, CSV
 *   diff-html.c   the page
 *   cmd-diff.c    the command
 */
#ifndef KMT_DIFF_H
#define KMT_DIFF_H

#include <stdbool.h>
#include <stdio.h>

#include "report/input.h"
#include "report/report.h"

#define DIFF_FIELDS 8
#define DIFF_TABLES 5
#define DIFF_TOTALS 5

struct drow;

/* ---- diff's tables (diff-cols.c) ----
 *
 * Of the report's kind (struct rtable, struct rcol in report.h): a column
 * has a name (the JSON key, the CSV header's), a text title and width, a
 * title on the page, the -s key that sorts by it, a line of documentation
 * and how to get its value from a row. The text, JSON, CSV, the page and
 * `kmemtrace diff --columns` all read these tables.
 *
 * A table's key columns name a row and say which file has it. Its
 * compared columns are columns of a report table, by the same name, read
 * from each file and shown as old, new, delta and change (JSON: the key in
 * the row's old, new, delta and pct objects; CSV: NAME_old, NAME_new,
 * NAME_delta, NAME_pct): their type, unit and documentation are the
 * report column's, as the numbers are.
 */
struct dcol {
	const char *name;
	const char *title;		/* text header; NULL: not in the text */
	const char *label;		/* the page's header ("": none) */
	int width;			/* text: < 0 left-aligned; a compared column: its delta's */
	const char *sort;		/* the -s key sorting by its change, or NULL */
	/* Key columns only: */
	enum rtype type;		/* RT_STR, or RT_U64 (JSON: a number) */
	const char *doc;
	const char *(*get)(const struct drow *row);	/* its value; NULL: none (JSON null) */
	unsigned int flags;		/* DC_* */
};

#define DC_KEY 1u			/* the row's key: text and CSV show its label, if it has one */
#define DC_JSON_FIRST 2u		/* JSON: before the key (kmemtrace_diff 1's order) */
#define DC_BARE 4u			/* CSV: a word, unquoted; NULL: empty */
#define DC_PAGES 8u			/* TOTAL: counts page events (else slab ones) */
#define DC_LEVEL 16u			/* a level at the end (live), not a count over the
					   span: --per-second leaves it as it is */

/* One compared table: which report table, its key columns and compared columns. */
struct dspec {
	const char *name;		/* JSON key and --csv name: "callsites"; the page's "diff-callsites" */
	const char *title;		/* text heading; the page's, in sentence case */
	const char *doc;
	const char *table;		/* the report table read: "callsites", "comms" */
	const struct dcol *keys;	/* naming a row (the DC_KEY one its key), then only_in */
	/*
	 * The report column of a row's function (drow.function), or NULL;
	 * call sites matched by function name are keyed (and titled) by it.
	 */
	const char *function;
	const char *fields[DIFF_FIELDS + 1];	/* compared (diff_fields), NULL-terminated */
	int full;			/* the first @full fields whole (old, new, delta, change), the rest as deltas */
};

/* The tables, in the order printed (end with a NULL name); the compared columns, once. */
extern const struct dspec diff_specs[];
extern const struct dcol diff_fields[];
/* The TOTAL's columns: the report summary's, by name. */
extern const struct dcol diff_total_cols[];

/* The table named @name ("callsites"), the compared column named @name, or NULL. */
const struct dspec *dspec_find(const char *name);
const struct dcol *dfield_find(const char *name);
/* The key column of @s. */
const struct dcol *dspec_key(const struct dspec *s);
/* The report column a compared column @c of @s reads. */
const struct rcol *dfield_source(const struct dspec *s, const struct dcol *c);
/* Is @key a -s key? The keys, comma-separated, into @buf. */
bool diff_sort_known(const char *key);
const char *diff_sort_keys(char *buf, size_t len);
/* The table names, separated by @sep, into @buf. */
const char *diff_table_names(char *buf, size_t len, const char *sep);
/* Every table and column, with its type, doc and -s key (diff --columns): diff's schema. */
void diff_columns(FILE *out);

struct drow {
	char *key;
	char *label;			/* shown instead of the key (a merged cache's
					   "name (+aliases)"), or NULL */
	char *function;			/* call sites: the function */
	bool in[2];			/* present in OLD, NEW */
	uint64_t v[2][DIFF_FIELDS];
};

struct diff;

struct dtable {
	const struct diff *diff;
	const struct dspec *spec;
	int sort;			/* the field sorted by (|delta|): the first unless -s says */
	const struct dcol *cols[DIFF_FIELDS];	/* the compared columns */
	const struct rcol *src[DIFF_FIELDS];	/* the report's columns they read */
	int nfields;
	struct drow *rows;
	size_t n;
};

struct dside {
	const char *path;
	struct input a;
	struct report r;
	bool opened;
	double span;			/* seconds */
	bool lower_bound;		/* losses, truncation or a filtered recording */
	char why[200];			/* ... said in words */
};

enum dmatch { MATCH_AUTO, MATCH_OFFSET, MATCH_FUNCTION };
/* What --match takes, by enum dmatch: "auto", "offset", "function"; NULL-terminated. */
extern const char *const diff_match_names[];

/* The totals: one row, a field per line of the text's TOTAL (diff_total_cols). */
struct dtotal {
	const struct rcol *src[DIFF_TOTALS];	/* the report's summary columns */
	uint64_t v[2][DIFF_TOTALS];
	bool recorded[2][DIFF_TOTALS];	/* the file has the events the field counts */
};

struct diff {
	struct dside side[2];
	enum dmatch match;		/* asked for, then used */
	char match_why[400];
	bool per_second;
	const char *sort;		/* -s: the key to sort by ("allocs"), or NULL */
	struct table_opts tables;	/* -n */
	struct dtable t[DIFF_TABLES];
	int nt;
	struct dtotal total;
	/* Text: the width to fit (term_width(), 0: none), or --wide. */
	int width;
	bool wide;
};

/* Open both files and check they can be compared; EXIT_OK or EXIT_FAIL (said). */
int diff_open(struct diff *d, const char *old, const char *new_, struct kmt_model_opts *mo,
	      double t_start, double t_end, int jobs);
/* Match their tables (after diff_open). EXIT_OK or EXIT_FAIL. */
int diff_build(struct diff *d);
void diff_close(struct diff *d);

/* A value of a row of @t as printed: per second when asked (not a level: DC_LEVEL). */
double diff_value(const struct dtable *t, const struct drow *row, int side, int field);
/* The change in percent of @field, or NAN where OLD is 0. */
double diff_pct(const struct dtable *t, const struct drow *row, int field);
/* A total as printed (per second when asked), or NAN where the file does not record it. */
double diff_total(const struct diff *d, int side, int field);
/* Do the two files differ in anything the diff compares? */
bool diff_differs(const struct diff *d);
/* Which files lack the events of @t: bit 0 the old, bit 1 the new; 0 if both have them. */
unsigned int diff_unrecorded(const struct diff *d, const struct dtable *t);
/* The table named @name ("callsites"), or NULL. */
const struct dtable *diff_table(const struct diff *d, const char *name);

struct js;
/* The JSON document's members, into the object @j has open (diff --json, the page's data). */
void diff_json_members(const struct diff *d, struct js *j);
void diff_text(const struct diff *d, FILE *out);
void diff_json(const struct diff *d, FILE *out);
int diff_csv(const struct diff *d, const char *name, FILE *out);
void diff_html(const struct diff *d, FILE *out);

#endif
