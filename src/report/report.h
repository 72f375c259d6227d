/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace report, shared between its files: the options, the model
 * with everything needed to print it, and the four printers (text, JSON,
 * CSV and the HTML page).
 */
#ifndef KMT_REPORT_H
#define KMT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <kmemtrace/event.h>
#include <kmemtrace/base.h>
#include <kmemtrace/model.h>
#include <kmemtrace/tracefile.h>
#include "util/opt.h"
#include "util/term.h"

enum {
	SEC_SUMMARY = 1 << 0,
	SEC_CALLSITES = 1 << 1,
	SEC_CACHES = 1 << 2,
	SEC_PROCESSES = 1 << 3,
	SEC_PAGES = 1 << 4,
	SEC_LIFETIMES = 1 << 5,
	SEC_OUTSTANDING = 1 << 6,
	SEC_MISUSE = 1 << 7,
	SEC_ACCESS = 1 << 8,		/* watchpoint samples (kmemtrace watch) */
	SEC_VMALLOC = 1 << 9,
	SEC_CGROUPS = 1 << 10,		/* the file's record of the tasks' cgroups */
};

/*
 * The option groups of the commands that print the report's names and
 * tables (report-opts.c), beside the input group (input.h); in a
 * command's table, e.g.
 *   OPT_GROUP(addresses_group, struct x, addr, 0, "kernel addresses")
 * addresses: --raw-ip and --hash-pointers (the noun: what is hashed);
 * tables: -n, rows per table (into a struct table_opts, TABLE_OPTS_INIT);
 * stats: --stats, into a bool (the noun unused).
 */
struct addr_opts {
	bool raw_ip;			/* --raw-ip: code addresses, not symbol+offset */
	struct kmt_hashptr hash;	/* --hash-pointers */
};
enum { ADDR_RAW_IP = 1, ADDR_HASH = 2 };
extern const struct opt_group addresses_group;

#define TABLES_TOP 20			/* -n's default */
struct table_opts {
	int top;			/* -n: rows per table, 0: all */
	bool top_set;			/* -n given (JSON and CSV: all rows otherwise) */
};
#define TABLE_OPTS_INIT { .top = TABLES_TOP }
extern const struct opt_group tables_group;
/* How many of @n rows to print: -n for text, and for JSON/CSV (@machine) if given. */
size_t table_limit(const struct table_opts *t, size_t n, bool machine);

extern const struct opt_group stats_group;

struct report {
	const char *path;
	unsigned int sections;
	const char *sort[8];		/* -s keys, most significant first */
	char sort_text[256];		/* what they point into */
	int nr_sort;
	struct table_opts tables;	/* -n */
	struct addr_opts addr;		/* --raw-ip, --hash-pointers */
	double t_start, t_end;		/* seconds from the first event, < 0: open */
	int stacks_per_site;		/* text: stacks shown under each call site */
	int nested_top;			/* JSON: rows of lists in rows (stacks), 0: as -n */
	/* filled by the run */
	struct kmt_file *f;
	struct kmt_model *m;
	struct kmt_symbols *syms;
	struct kmt_flags *gfp_names;
	uint64_t t0;			/* first event in the file */
	const char *skipped;		/* events the decoder could not map */
	bool all_sections;		/* no --sections: skip empty optional ones */
	bool plain_names;		/* JSON: a merged cache's name alone (aliases apart) */
	/*
	 * What the file has no events for (report_recorded()): those
	 * sections are left out (JSON: null), and the summary says which.
	 */
	unsigned int unrecorded;	/* SEC_* bits */
	bool no_slab, no_pages, no_pcpu, no_vmalloc;
	bool no_cgroups;		/* the file (@f) has no record of the tasks' cgroups */
	const char *not_recorded[16];	/* event names */
	int nr_not_recorded;
	const char *cache;		/* --cache: only its objects; pages, per-CPU, vmalloc left out */
	/* Text: the width to fit (term_width(), 0: none) or --wide, and whether anything had to give. */
	int width;
	bool wide;
	unsigned int *fitted;		/* what had to give to fit (TERM_*), or NULL */
};

struct kmt_decoder;
/*
 * Which of the memory events the file has (by its formats, as @dec
 * mapped them), into @r's unrecorded fields; with @cache (--cache), page,
 * per-CPU and vmalloc events count as not selected.
 */
void report_recorded(struct report *r, const struct kmt_decoder *dec, const char *cache);

/*
 * The report's sections, in the order they are printed: the one list of
 * their names, the events each needs (a file without them leaves the
 * section out, as not recorded) and the text printer of each.
 */
enum { NEEDS_SLAB = 1, NEEDS_PAGES = 2, NEEDS_SLAB_OR_PAGES = 4, NEEDS_VMALLOC = 8, NEEDS_CGROUPS = 16 };
/*
 * Sections that say "not recorded" themselves in the text rather than be
 * left out (a file without them is the common case: saying why helps).
 */
#define SEC_SAYS_UNRECORDED SEC_CGROUPS
struct rtable;
struct report_section {
	unsigned int bit;		/* SEC_* */
	const char *name;		/* --sections, --csv, the JSON keys' section */
	unsigned int needs;		/* NEEDS_*, 0: always there */
	void (*text)(const struct report *r, FILE *out);	/* report-text.c */
	const struct rtable *table;	/* its main table: --csv SECTION (report-cols*.c) */
};
extern const struct report_section report_sections[];	/* ends with bit 0 */

/* The section name of a bit, and the bit of a name (0 if none). */
const char *section_name(unsigned int bit);
unsigned int section_bit(const char *name);
/* The bits of every section ("all"). */
unsigned int section_all(void);
/* The text printers of the sections (report-text.c). */
void text_summary(const struct report *r, FILE *out);
void text_callsites(const struct report *r, FILE *out);
void text_caches(const struct report *r, FILE *out);
void text_processes(const struct report *r, FILE *out);
void text_cgroups(const struct report *r, FILE *out);
void text_pages(const struct report *r, FILE *out);
void text_vmalloc(const struct report *r, FILE *out);
void text_lifetimes(const struct report *r, FILE *out);
void text_outstanding(const struct report *r, FILE *out);
void text_misuse(const struct report *r, FILE *out);
void text_access(const struct report *r, FILE *out);
/* What --sections takes: the section names and "all", comma-separated, into @buf. */
const char *report_section_names(char *buf, size_t len);
/* "do_getxattr+0x55" (or the address with --raw-ip) into @buf. */
const char *site_name(const struct report *r, uint64_t addr, char *buf, size_t len);
/* The function alone: "do_getxattr". */
const char *site_function(const struct report *r, uint64_t addr, char *buf, size_t len);
/* An address, hashed with --hash-pointers. */
const char *addr_str(const struct report *r, uint64_t addr, char *buf, size_t len);
/*
 * The cache name of index @i, or "": "NAME (+ALIAS, ...)" for a merged
 * cache, but NAME alone in JSON (which has the aliases apart).
 */
const char *cache_name(const struct report *r, uint32_t i);
double frag_pct(uint64_t req, uint64_t alloc);
/*
 * What a sampled stack stands for (record --stack-sample 1 in @one_in): @v
 * of a call site's @stacked, which all stand for @one_in times as much,
 * never more than the site's @total. @v as is if not sampled.
 */
uint64_t stack_weight(uint64_t v, uint64_t stacked, uint64_t total, uint64_t one_in);
/*
 * The @q quantile of a log2 histogram, spreading each bucket evenly over its
 * range (so within a factor of two of the truth), clamped to [lo, hi].
 */
uint64_t life_quantile(const uint64_t *b, double q, uint64_t lo, uint64_t hi);

/* ---- report tables (report-table.c, report-cols.c) ----
 *
 * Every section's rows are a table of columns, after perf's sort_entry:
 * a column has a name (the JSON key, the CSV header, later the SQL column),
 * a type and unit, a text title and width, the -s key that sorts by it,
 * a line of documentation, and how to get its value from a row. Text,
 * JSON and CSV all print from these tables, so a column cannot appear in
 * one format and not another; `kmemtrace report --columns` lists them,
 * and a test holds docs/report-json.md to that list.
 */
enum rtype {
	RT_U64, RT_I64, RT_PCT, RT_STR, RT_BOOL,
	RT_HIST,			/* log2 histogram (KMT_LIFE_BUCKETS counts) */
	RT_ARRAY,			/* counts per CPU */
	RT_KINDS,			/* counts per event kind: an object in JSON */
	RT_MATRIX,			/* pages: order x migrate type */
	RT_FRAMES,			/* a stack: addresses, as symbol+offset strings */
	RT_NAMES,			/* a list of names: JSON array, else space-separated */
};
enum runit { RU_COUNT, RU_BYTES, RU_NS, RU_NONE };

struct rval {
	uint64_t u;			/* RT_U64, RT_BOOL */
	int64_t i;			/* RT_I64 */
	double f;			/* RT_PCT */
	const char *s;			/* RT_STR */
	const uint64_t *v;		/* RT_HIST, RT_ARRAY, RT_KINDS, RT_MATRIX */
	const char *const *names;	/* RT_NAMES */
	int n;
};

struct rcol {
	const char *name;
	enum rtype type;
	enum runit unit;
	const char *title;		/* text header; NULL: not in the text table */
	int width;			/* text: > 0 right-aligned, < 0 left-aligned */
	const char *sort;		/* the -s key that sorts by it, or NULL */
	const char *doc;		/* read it with rcol_doc() */
	/* The doc, where a table of names gives it (into @buf); NULL: doc. */
	const char *(*doc_text)(char *buf, size_t len);
	size_t off;			/* a uint64_t field of the row, if get is NULL */
	void (*get)(const struct report *r, const void *row, struct rval *v, char *buf, size_t len);
	/*
	 * Text: the cell, where it is not the value in human units (perf's
	 * se_snprintf): "before the trace", one bucket range of a histogram,
	 * two values in one cell. Into @buf, or a constant.
	 */
	const char *(*text)(const struct report *r, const struct rcol *c, const void *row, char *buf,
			    size_t len);
	int arg;			/* the text hook's: which bucket range, ... */
	int group;			/* text: blank where the row repeats this level of the one above */
	unsigned int flags;		/* RC_* */
};

#define RC_DASH0 1u			/* text: "-" for 0 */
#define RC_BLANK0 2u			/* text: nothing for 0 */
#define RC_CSV_BUCKETS 4u		/* CSV: a histogram as one column per bucket */
#define RC_CSV_ONLY 8u			/* in CSV, not JSON (a string JSON has as an array) */
#define RC_NAME 16u			/* text: the name column (term_col.name), not the first left-aligned */
#define RC_FIT_TITLE 32u		/* text: laid out by its title's width, its cells not measured */
#define RC_HIDE0 64u			/* text: left out where it is 0 in every row shown */

/*
 * A table's text view, where the text is not the titled columns of its
 * rows: columns of the text's own, with getters or text hooks of their own
 * (a histogram's bucket ranges, "function (cache)"), which JSON, CSV, the
 * page, diff and --columns never see.
 */
struct rtext {
	const struct rcol *cols;	/* every one titled; ends with a NULL name */
	/*
	 * The text's rows in their order, where they are not rtable_rows()
	 * (a pivot; the model's order whatever -s says): a malloc'd array.
	 */
	size_t (*rows)(const struct report *r, const void ***out);
	/*
	 * How many levels of grouping @row repeats of the row above it, @prev
	 * (rcol.group: 1 the outermost); NULL: none.
	 */
	int (*group)(const struct report *r, const void *row, const void *prev);
	const char *empty;		/* no rows: this line instead of the header (still laid out) */
	bool whole;			/* at the usual widths whatever the width (a matrix: none may go) */
};

struct rtable {
	const char *name;		/* --csv name, and JSON key unless json_key says */
	const char *json_key;		/* nested tables: the key in their parent's object */
	unsigned int section;		/* the SEC_* bit it belongs to */
	const char *doc;
	const struct rcol *cols;	/* ends with a NULL name */
	/* The rows in the model's order: a malloc'd array of pointers. */
	size_t (*rows)(const struct report *r, const void ***out);
	bool (*keep)(const struct report *r, const void *row);	/* NULL: every row */
	bool (*text_keep)(const struct report *r, const void *row);	/* and in the text */
	const char *default_sort;	/* a -s key, or NULL: the model's order */
	bool single;			/* one row: a JSON object, CSV key,value lines */
	const char *parent;		/* nested in this table's JSON object, or NULL */
	/*
	 * Nested in each row of the parent (a list per row in JSON, lines
	 * under the row in text): the rows of one parent row.
	 */
	size_t (*rows_of)(const struct report *r, const void *parent, const void ***out);
	void (*text_after)(const struct report *r, const void *row, FILE *out);
	bool json_only, csv_only;	/* shown in one of the machine formats only */
	bool sql;			/* export --format sqlite writes it, by its name */
	/*
	 * Text in a narrow terminal: the titled columns that may be left
	 * out, by name, the first first (never the -s key's); names joined
	 * by commas go together, and a name may be several columns' (a
	 * histogram's ranges).
	 */
	const char *narrow;
	const struct rtext *text;	/* the text's own view, or NULL: the titled columns */
};

extern const struct rtable *const report_tables[];	/* NULL-terminated */
const struct rtable *rtable_find(const char *name);
/* The column @name of @t, or NULL. */
const struct rcol *rtable_col(const struct rtable *t, const char *name);
/* A section's main table ("callsites": its report_sections[] entry's), or NULL. */
const struct rtable *rtable_of_section(unsigned int bit);
/*
 * The rows to show, kept and sorted by the report's -s keys that @t has
 * (then its default): a malloc'd array, NULL if there are none.
 */
size_t rtable_rows(const struct report *r, const struct rtable *t, const void ***out);
/* Likewise, the rows of @t nested in the row @parent (t->rows_of). */
size_t rtable_rows_of(const struct report *r, const struct rtable *t, const void *parent,
		      const void ***out);
void rcol_value(const struct report *r, const struct rcol *c, const void *row, struct rval *v,
		char *buf, size_t len);
/* @c's line of documentation (--columns, the page), into @buf if it is made. */
const char *rcol_doc(const struct rcol *c, char *buf, size_t len);
/* Is @key a -s key of any table? */
bool report_sort_key_known(const char *key);
/* The -s keys, comma-separated, into @buf (for messages and help). */
const char *report_sort_keys(char *buf, size_t len);

/* Text formatting of one value into @buf (human units). */
const char *rval_text(const struct rcol *c, const struct rval *v, char *buf, size_t len);
/* An RT_NAMES value as one string, names separated by spaces, into @buf. */
const char *rval_names(const struct rval *v, char *buf, size_t len);
/*
 * A text table of @t's titled columns (or its text view): header and up to
 * -n rows (report-text.c). Returns how many rows -n left out.
 */
size_t text_table(const struct report *r, const struct rtable *t, FILE *out);
/* The line under a table -n cut, "  (12 more rows; -n 0 shows all)"; nothing if @left is 0. */
void text_more(FILE *out, size_t left);
/* term_fit() in the report's width, noting in r->fitted what had to give. */
void report_fit(const struct report *r, struct term_col *c, int n, int indent);

void report_text(const struct report *r, FILE *out);
void report_html(const struct report *r, FILE *out);
void report_json(const struct report *r, FILE *out);
struct js;
/* The members of report_json's document, into the object @j has open. */
void report_json_members(const struct report *r, struct js *j);
int report_csv(const struct report *r, const char *section, FILE *out);
/* The running sum of @net[0..n) into @out (a time series' live bytes); its peak. */
int64_t running_sum(const int64_t *net, size_t n, int64_t *out);

#endif
