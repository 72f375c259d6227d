/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace diff OLD NEW: what changed between two recordings, per call
 * site, cache, process name and page order (src/diff/diff.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd.h"
#include "util/util.h"
#include "diff/diff.h"
#include "util/opt.h"
#include "util/term.h"

enum { O_PER_SECOND = 256, O_MATCH, O_JSON, O_CSV, O_HTML, O_WIDE, O_COLUMNS };

struct diff_args {
	struct diff d;
	struct input_opts in;	/* --time, --comm: for both traces */
	const char *csv, *output;
	bool json, html;
};

/* What --csv takes, for completion: diff's table names. */
static const char *csv_names(char *buf, size_t len)
{
	return diff_table_names(buf, len, ",");
}

static const struct opt diff_opts[] = {
	{ 's', 's', "sort", "KEY", "sort by the size of the change in: bytes (default),\n"
	  "allocs, frees, req, waste, live, objects (live ones), pages", 0, diff_sort_keys },
	OPT_GROUP(tables_group, struct diff_args, d.tables, 0, NULL),
	{ O_PER_SECOND, 0, "per-second", NULL, "divide each trace's counts by its own span (what is\nlive at the end stays as it is)" },
	{ O_MATCH, 0, "match", "HOW", "call sites by 'offset' (function+offset), 'function'\n"
	  "(name), or 'auto' (the default: offsets in the same\nkernel build, names otherwise)",
	  .type = OT_CHOICE, .choices = diff_match_names, .what = "--match",
	  .off = offsetof(struct diff_args, d.match) },
	OPT_GROUP(input_group, struct diff_args, in, INPUT_TIME | INPUT_COMM | INPUT_JOBS | INPUT_CGROUP, "allocations by"),
	{ O_WIDE, 0, "wide", NULL, "text: every column and whole names, however wide\n"
	  "(default: fit the terminal, or $COLUMNS)" },
	{ O_JSON, 0, "json", NULL, "one JSON document (schema: docs/diff-json.md)" },
	{ O_CSV, 0, "csv", "NAME", "one table as CSV: callsites, caches, processes, pages",
	  0, csv_names },
	{ O_HTML, 0, "html", NULL, "one self-contained page: the largest changes as\n"
	  "bars, old beside new, and the tables" },
	{ O_COLUMNS, 0, "columns", NULL, "list every table and column of the diff, and exit" },
	{ 'o', 'o', "output", "FILE", "write to FILE instead of standard output: mode\n"
	  "0600, complete or not at all" },
	{ 'h', 'h', "help", NULL, "this text" },
	{ 0 },
};

const struct cmd_help diff_help = {
	.name = "diff",
	.summary = "compare two traces: what did my patch change?",
	.usage = "[options] OLD NEW",
	.about =
	"Compare two trace files (ours or trace-cmd's) per call site, cache, process\n"
	"name and page order: old, new, delta and change of allocations, frees,\n"
	"bytes requested and allocated, waste and what is live at the end, largest\n"
	"change first; rows in one file only are marked. Call sites match by\n"
	"function+offset when both traces come from the same kernel build, by\n"
	"function name otherwise (a patched kernel: offsets move), as it says. A\n"
	"file that lost events, was cut short or was recorded with filters has its\n"
	"numbers marked as lower bounds. --time and --comm apply to both traces.\n",
	.opts = diff_opts,
};

static int diff_opt(void *arg, int id, const char *value)
{
	struct diff_args *a = arg;
	const struct cmd_help *H = &diff_help;

	char keys[128];

	switch (id) {
	case 's':
		if (!diff_sort_known(value))
			return usage_error(H, "bad sort key '%s' (keys: %s)", value, diff_sort_keys(keys, sizeof(keys)));
		a->d.sort = value;
		break;
	case O_PER_SECOND: a->d.per_second = true; break;
	case O_WIDE: a->d.wide = true; break;
	case O_JSON: a->json = true; break;
	case O_CSV: a->csv = value; break;
	case O_HTML: a->html = true; break;
	case 'o': a->output = value; break;
	case O_COLUMNS:
		diff_columns(stdout);
		return EXIT_OK;
	}
	return -1;
}

static int print(void *arg, FILE *out)
{
	const struct diff_args *a = arg;

	if (a->csv)
		return diff_csv(&a->d, a->csv, out);
	if (a->json)
		diff_json(&a->d, out);
	else if (a->html)
		diff_html(&a->d, out);
	else
		diff_text(&a->d, out);
	return EXIT_OK;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_args a = { .d = { .tables = TABLE_OPTS_INIT }, .in = INPUT_OPTS_INIT };
	const struct cmd_help *H = &diff_help;
	char names[128];
	int code, i, ret;

	code = opt_parse(H, argc, argv, diff_opt, &a, &i);
	if (code < 0 && a.json + !!a.csv + a.html > 1)
		code = usage_error(H, "--json, --csv and --html exclude each other");
	if (code < 0 && a.csv && !dspec_find(a.csv))
		code = usage_error(H, "no table '%s' for --csv (%s)", a.csv,
				   diff_table_names(names, sizeof(names), ", "));
	if (code < 0 && argc - i != 2)
		code = usage_error(H, argc - i < 2 ? "give two trace files, OLD and NEW" :
				   "too many operands: give two trace files, OLD and NEW");
	if (code >= 0)
		return code;
	a.d.width = term_width(a.output ? -1 : STDOUT_FILENO);
	ret = diff_open(&a.d, argv[i], argv[i + 1], &a.in.mo, MAX(a.in.window[0], 0), a.in.window[1], a.in.jobs);
	if (!ret)
		ret = diff_build(&a.d);
	if (!ret)
		ret = output_to(a.output, print, &a);
	/* Damaged files: the whole diff, then what it leaves out of each. */
	for (i = 0; i < 2 && a.d.side[i].opened; i++)
		if (input_damage(&a.d.side[i].a) && !ret)
			ret = EXIT_FAIL;
	diff_close(&a.d);
	return ret;
}
