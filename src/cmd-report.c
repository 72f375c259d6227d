/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace report: where memory goes, what is wasted, what is misused,
 * what is still live. Reads any trace.dat (ours or trace-cmd's), merges
 * the per-CPU streams by time, feeds the allocation model, and prints
 * sections as text tables, one JSON document or one section as CSV.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/input.h"
#include "cmd.h"
#include "util/util.h"
#include "util/opt.h"
#include "report/report.h"

enum { O_SECTIONS = 256, O_JSON, O_CSV, O_COLUMNS, O_STACKS, O_HTML, O_WIDE };

struct report_args {
	struct report r;
	struct input_opts in;
	const char *csv, *output;
	bool json, html, stats;
};

static const struct opt report_opts[] = {
	{ O_SECTIONS, 0, "sections", "LIST", "%s (default: all; access: watchpoint samples of "
	  "kmemtrace watch, per object offset and instruction)", OPT_LIST, report_section_names },
	{ 's', 's', "sort", "KEY[,KEY]", "sort every table by the keys it has: bytes (the\n"
	  "default), allocs, frees, req, waste, frag, x-cpu,\nlive, pages, callsite, name, comm, pid,\n"
	  "unaccounted",
	  OPT_LIST, report_sort_keys },
	OPT_GROUP(tables_group, struct report_args, r.tables, 0, NULL),
	OPT_GROUP(input_group, struct report_args, in, 0, "allocations by"),
	{ O_STACKS, 0, "stacks", "N", "text: stacks shown under each call site (default 3)" },
	{ O_WIDE, 0, "wide", NULL, "text: every column, whole names and stacks, however\n"
	  "wide (default: fit the terminal, or $COLUMNS)" },
	OPT_GROUP(addresses_group, struct report_args, r.addr, 0, "kernel addresses"),
	{ O_JSON, 0, "json", NULL, "one JSON document (schema: docs/report-json.md)" },
	{ O_CSV, 0, "csv", "NAME", "one section or table as CSV (names: --columns)" },
	{ O_HTML, 0, "html", NULL, "one self-contained page: time series, tables, flame\n"
	  "graph (tables: -n rows, default 100)" },
	{ 'o', 'o', "output", "FILE", "write to FILE instead of standard output: mode\n"
	  "0600, complete or not at all" },
	OPT_GROUP(stats_group, struct report_args, stats, 0, NULL),
	{ O_COLUMNS, 0, "columns", NULL, "list every table and column of the report, and exit" },
	{ 'h', 'h', "help", NULL, "this text" },
	{ 0 },
};

const struct cmd_help report_help = {
	.name = "report",
	.summary = "analyse a trace: call sites, caches, processes, pages, leaks, misuse",
	.usage = "[options] [FILE]",
	.about =
	"Analyse the memory events of a trace file (default kmemtrace.dat; files of\n"
	"trace-cmd record/extract too, v6 or v7): per call site, cache and process the\n"
	"allocations, bytes requested and allocated, internal fragmentation, frees on\n"
	"another CPU and objects still live; page allocations; object lifetimes;\n"
	"outstanding objects (leak candidates) and misuse. Events a CPU lost make the\n"
	"objects they may concern \"uncertain\": counted apart, never a leak or misuse.\n",
	.opts = report_opts,
};

static int parse_sections(struct report *r, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;

	r->sections = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned int b = !strcmp(tok, "all") ? section_all() : section_bit(tok);

		if (!b) {
			free(copy);
			return -1;
		}
		r->sections |= b;
	}
	free(copy);
	return r->sections ? 0 : -1;
}

/* -s KEY[,KEY]: the keys any table sorts by; kept in the report. */
static int parse_sort(struct report *r, const char *arg)
{
	char *tok, *save = NULL;

	snprintf(r->sort_text, sizeof(r->sort_text), "%s", arg);
	r->nr_sort = 0;
	for (tok = strtok_r(r->sort_text, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!report_sort_key_known(tok) || r->nr_sort == 8)
			return -1;
		r->sort[r->nr_sort++] = tok;
	}
	return r->nr_sort ? 0 : -1;
}

enum format { F_TEXT, F_JSON, F_CSV, F_HTML };

struct printing {
	const struct report *r;
	enum format fmt;
	const char *csv;
};

static int print(void *arg, FILE *out)
{
	const struct printing *p = arg;

	switch (p->fmt) {
	case F_CSV: return report_csv(p->r, p->csv, out);
	case F_JSON: report_json(p->r, out); break;
	case F_HTML: report_html(p->r, out); break;
	default: report_text(p->r, out); break;
	}
	return EXIT_OK;
}

static int run(struct report *r, struct input *a, const char *buffer, enum format format,
	       const char *csv, const char *path, struct kmt_model_opts *mo, bool stats, int jobs)
{
	uint64_t out0;
	int ret;

	ret = input_open(a, r->path, jobs);
	if (ret)
		return ret;
	a->stats = stats;
	r->f = a->f;
	r->syms = a->syms;
	r->skipped = a->skipped;
	report_recorded(r, a->dec, mo->cache);
	/*
	 * The cgroups' call sites come from the groups (site and task): a cost
	 * per allocation (bench/results/cgroups.md), paid where they show: the
	 * text's cgroups section asked for by name, JSON, CSV and the page.
	 */
	mo->groups = (r->sections & SEC_CGROUPS) && !r->no_cgroups && (format != F_TEXT || !r->all_sections);
	r->gfp_names = kmt_flags_gfp(kmt_file_formats(r->f));
	ret = input_run(a, buffer, mo, NULL, r->t_start, r->t_end);
	if (ret)
		return ret;
	r->m = a->m;
	r->t0 = a->t0;
	out0 = input_thread_cpu_ns();
	ret = output_to(path, print, &(struct printing){ r, format, csv });
	if (stats)
		input_print_stats(a, input_thread_cpu_ns() - out0);
	if (*r->skipped && format == F_TEXT)
		warning("events the report cannot use (their format lacks a field): %s", r->skipped);
	/* A damaged file: the whole report, then what it leaves out. */
	return ret ? ret : input_damage(a);
}

static const char *type_name(const struct rcol *c)
{
	static const char *const units[] = { [RU_COUNT] = "count", [RU_BYTES] = "bytes",
					     [RU_NS] = "ns", [RU_NONE] = "number" };

	switch (c->type) {
	case RT_STR: return "string";
	case RT_PCT: return "percent";
	case RT_BOOL: return "bool";
	case RT_HIST: return "log2 histogram";
	case RT_ARRAY: return "per-CPU array";
	case RT_KINDS: return "per-kind object";
	case RT_MATRIX: return "order x type matrix";
	case RT_FRAMES: return "stack (strings)";
	case RT_NAMES: return "names (strings)";
	case RT_I64: return c->unit == RU_BYTES ? "bytes (signed)" : "number (signed)";
	default: return units[c->unit];
	}
}

/* Every table and column, from report-cols.c: the report's schema. */
static int print_columns(void)
{
	int k;

	for (k = 0; report_tables[k]; k++) {
		const struct rtable *t = report_tables[k];
		const struct rcol *c;
		char doc[512];

		if (t->parent)
			printf("%s (JSON: %s.%s): %s\n", t->name, t->parent, t->json_key ? t->json_key : t->name,
			       t->doc);
		else
			printf("%s: %s\n", t->name, t->doc);
		printf("  in %s%s; section %s%s\n", t->csv_only ? "" : "text and JSON",
		       t->json_only ? "" : t->csv_only ? "CSV" : " and CSV",
		       section_name(t->section & -t->section), t->single ? "; one row" : "");
		for (c = t->cols; c->name; c++)
			printf("  %-22s %-16s %s%s%s%s\n", c->name, type_name(c),
			       rcol_doc(c, doc, sizeof(doc)), c->sort ? "  [-s " : "",
			       c->sort ? c->sort : "", c->sort ? "]" : "");
		printf("\n");
	}
	return EXIT_OK;
}

static int report_opt(void *arg, int id, const char *value)
{
	struct report_args *a = arg;
	const struct cmd_help *H = &report_help;

	switch (id) {
	case O_SECTIONS:
		a->r.all_sections = false;
		if (parse_sections(&a->r, value))
			return usage_error(H, "bad section list '%s'", value);
		break;
	case 's':
		if (parse_sort(&a->r, value)) {
			char keys[256];

			return usage_error(H, "bad sort key in '%s' (keys: %s)", value,
					   report_sort_keys(keys, sizeof(keys)));
		}
		break;
	case O_STACKS:
		if (!opt_int(value, 0, INT32_MAX, &a->r.stacks_per_site))
			return usage_error(H, "bad stack count '%s'", value);
		break;
	case O_WIDE: a->r.wide = true; break;
	case O_JSON: a->json = true; break;
	case O_CSV: a->csv = value; break;
	case O_HTML: a->html = true; break;
	case 'o': a->output = value; break;
	case O_COLUMNS: return print_columns();
	}
	return -1;
}

int cmd_report(int argc, char **argv)
{
	struct report_args o = {
		.r = { .path = "kmemtrace.dat", .sections = section_all(), .all_sections = true,
		       .tables = TABLE_OPTS_INIT, .stacks_per_site = 3 },
		.in = INPUT_OPTS_INIT,
	};
	const struct cmd_help *H = &report_help;
	struct report *r = &o.r;
	struct input a;
	unsigned int fitted = 0;
	int ret, code, i;

	code = opt_parse(H, argc, argv, report_opt, &o, &i);
	if (code < 0 && o.json + !!o.csv + o.html > 1)
		code = usage_error(H, "--json, --csv and --html exclude each other");
	if (code < 0 && o.csv && !section_bit(o.csv) && (!rtable_find(o.csv) || rtable_find(o.csv)->json_only))
		code = usage_error(H, "no section or table '%s' for --csv (names: kmemtrace report --columns)",
				   o.csv);
	code = code >= 0 ? code : opt_file(H, argc, argv, i, &r->path);
	if (code >= 0)
		return code;
	/* Text fits the terminal, or $COLUMNS (into a pipe or a file too). */
	r->width = term_width(o.output ? -1 : STDOUT_FILENO);
	r->fitted = &fitted;
	r->t_start = o.in.window[0] < 0 ? 0 : o.in.window[0];
	r->t_end = o.in.window[1];
	if (o.html) {
		/* A page stays small: bounded tables, a few stacks per call site. */
		o.in.mo.detail = true;
		if (!r->tables.top_set)
			r->tables.top = 100;
		r->tables.top_set = true;
		r->nested_top = 10;
	}
	ret = run(r, &a, o.in.buffer, o.html ? F_HTML : o.json ? F_JSON : o.csv ? F_CSV : F_TEXT, o.csv,
		  o.output, &o.in.mo, o.stats, o.in.jobs);
	kmt_flags_free(r->gfp_names);
	input_close(&a);
	return ret;
}
