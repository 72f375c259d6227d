/*
 * kmemtrace diff: two traces analysed alike, their report tables matched
 * row by row (call sites by function+offset, or by function name when the
 * kernels differ), and old, new, delta and change printed per row.
 *
 *   diff.c        the two sides, the matching, the sorting
 *   diff-print.c  text, JSON, CSV
 *   diff-html.c   the page
 *   cmd-diff.c    the command
 */
#ifndef KMT_DIFF_H
#define KMT_DIFF_H

#include <stdbool.h>
#include <stdio.h>

#include "report/analysis.h"
#include "report/report.h"

#define DIFF_FIELDS 8
#define DIFF_TABLES 4
#define DIFF_TOTALS 5

/* One compared table: which report table, its key column and numeric columns. */
struct dspec {
	const char *name;		/* JSON key and --csv name: "callsites" */
	const char *title;		/* text heading */
	const char *table;		/* the report table read: "callsites", "comms" */
	const char *key;		/* the column naming a row ("callsite"; "function" by name) */
	const char *key_name;		/* its JSON key */
	const char *fields[DIFF_FIELDS + 1];	/* compared columns, NULL-terminated */
};

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
	const struct rcol *cols[DIFF_FIELDS];
	int nfields;
	struct drow *rows;
	size_t n;
};

struct dside {
	const char *path;
	struct analysis a;
	struct report r;
	bool opened;
	double span;			/* seconds */
	bool lower_bound;		/* losses, truncation or a filtered recording */
	char why[200];			/* ... said in words */
};

enum dmatch { MATCH_AUTO, MATCH_OFFSET, MATCH_FUNCTION };

/* The totals: one row, a field per line of the text's TOTAL. */
struct dtotal {
	const struct rcol *cols[DIFF_TOTALS];	/* the report's summary columns */
	const char *title[DIFF_TOTALS];
	uint64_t v[2][DIFF_TOTALS];
	bool recorded[2][DIFF_TOTALS];	/* the file has the events the field counts */
};

struct diff {
	struct dside side[2];
	enum dmatch match;		/* asked for, then used */
	char match_why[400];
	bool per_second;
	const char *sort_name;		/* -s: the column to sort by ("allocs"), or NULL */
	int top;			/* rows per table, 0: all */
	bool top_set;
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

/* A value as printed: per second when asked. */
double diff_value(const struct diff *d, const struct drow *row, int side, int field);
/* The change in percent of @field, or NAN where OLD is 0. */
double diff_pct(const struct diff *d, const struct drow *row, int field);
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
