/*
 * kmemtrace report: where memory goes, what is wasted, what is misused,
 * what is still live. Reads any trace.dat (ours or trace-cmd's), merges
 * the per-CPU streams by time, feeds the allocation model, and prints
 * sections as text tables, one JSON document or one section as CSV.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cmd.h"
#include "report.h"

static const char report_usage[] =
	"usage: kmemtrace report [options] [FILE]\n"
	"\n"
	"Analyse the memory events of a trace file (default kmemtrace.dat; files of\n"
	"trace-cmd record/extract too, v6 or v7): per call site, cache and process the\n"
	"allocations, bytes requested and allocated, internal fragmentation, frees on\n"
	"another CPU and objects still live; page allocations; object lifetimes;\n"
	"outstanding objects (leak candidates) and misuse. Events a CPU lost make the\n"
	"objects they may concern \"uncertain\": counted apart, never a leak or misuse.\n"
	"\n"
	"      --sections LIST    summary,callsites,caches,processes,pages,lifetimes,\n"
	"                         outstanding,misuse,access, or all (default: all;\n"
	"                         access: watchpoint samples of kmemtrace watch, per\n"
	"                         object offset and instruction)\n"
	"  -s, --sort KEY[,KEY]   call sites by bytes (default), allocs, frees, waste,\n"
	"                         frag, pingpong, live, req, callsite\n"
	"  -n, --top N            rows per table (default 20; 0: all)\n"
	"      --time START,END   only events in this window, seconds from the first\n"
	"                         event (either may be empty)\n"
	"  -p, --pid PID          only allocations by this task\n"
	"      --comm NAME        only allocations by tasks with this name\n"
	"  -B, --buffer NAME      the trace-cmd instance buffer to analyse\n"
	"      --raw-ip           call sites as addresses\n"
	"      --hash-pointers[=KEY]  kernel addresses as keyed hashes (h:...), so the\n"
	"                         report can be shared without revealing the kernel's\n"
	"                         layout; symbols stay readable. Same KEY, same hashes;\n"
	"                         no KEY: a random one\n"
	"      --json             one JSON document (schema: docs/report-json.md)\n"
	"      --csv SECTION      one section as CSV\n"
	"  -h, --help             this text\n";

static const char *const sort_names[SORT_NR] = {
	[SORT_BYTES] = "bytes", [SORT_ALLOCS] = "allocs", [SORT_FREES] = "frees",
	[SORT_WASTE] = "waste", [SORT_FRAG] = "frag", [SORT_PINGPONG] = "pingpong",
	[SORT_LIVE] = "live", [SORT_REQ] = "req", [SORT_CALLSITE] = "callsite",
};

static int parse_sections(struct report *r, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;

	r->sections = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned int b = !strcmp(tok, "all") ? SEC_ALL : section_bit(tok);

		if (!b) {
			free(copy);
			return -1;
		}
		r->sections |= b;
	}
	free(copy);
	return r->sections ? 0 : -1;
}

static int parse_sort(struct report *r, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int k;

	r->nr_sort = 0;
	for (tok = strtok_r(copy, ",", &save); tok && r->nr_sort < 8; tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < SORT_NR && strcmp(tok, sort_names[k]); k++)
			;
		if (k == SORT_NR) {
			free(copy);
			return -1;
		}
		r->sort[r->nr_sort++] = (enum sort_key)k;
	}
	free(copy);
	return r->nr_sort ? 0 : -1;
}

static int run(struct report *r, struct analysis *a, const char *buffer, bool json,
	       const char *csv, struct kmt_model_opts *mo)
{
	const struct kmt_format *fmt;
	int ret;

	ret = analysis_open(a, r->path);
	if (ret)
		return ret;
	r->f = a->f;
	r->syms = a->syms;
	r->skipped = a->skipped;
	fmt = kmt_formats_find(kmt_file_formats(r->f), "kmem", "mm_page_alloc");
	if (!fmt)
		fmt = kmt_formats_find(kmt_file_formats(r->f), "kmem", "kmalloc");
	r->gfp_names = fmt ? kmt_flags_from_format(fmt, "gfp_flags") : NULL;
	ret = analysis_run(a, buffer, mo, NULL, r->t_start, r->t_end);
	if (ret)
		return ret;
	r->m = a->m;
	r->t0 = a->t0;
	if (csv)
		ret = report_csv(r, csv, stdout);
	else if (json)
		report_json(r, stdout);
	else
		report_text(r, stdout);
	if (*r->skipped && !json && !csv)
		warning("events the report cannot use (their format lacks a field): %s", r->skipped);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	enum { OPT_SECTIONS = 256, OPT_TIME, OPT_COMM, OPT_RAWIP, OPT_JSON, OPT_CSV, OPT_HASH };
	static const struct option opts[] = {
		{ "sections", required_argument, NULL, OPT_SECTIONS },
		{ "sort", required_argument, NULL, 's' },
		{ "top", required_argument, NULL, 'n' },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "pid", required_argument, NULL, 'p' },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "buffer", required_argument, NULL, 'B' },
		{ "raw-ip", no_argument, NULL, OPT_RAWIP },
		{ "hash-pointers", optional_argument, NULL, OPT_HASH },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "csv", required_argument, NULL, OPT_CSV },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report r = { .path = "kmemtrace.dat", .sections = SEC_ALL, .all_sections = true, .top = 20,
			    .t_start = -1, .t_end = -1, .nr_sort = 1, .sort = { SORT_BYTES } };
	struct kmt_model_opts mo = { 0 };
	const char *buffer = NULL, *csv = NULL;
	struct analysis a;
	bool json = false;
	char *end;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "s:n:p:B:h", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_SECTIONS:
			r.all_sections = false;
			if (parse_sections(&r, optarg))
				return usage_error(report_usage, "bad section list '%s'", optarg);
			break;
		case 's':
			if (parse_sort(&r, optarg))
				return usage_error(report_usage, "bad sort key in '%s'", optarg);
			break;
		case 'n':
			r.top = (int)strtol(optarg, &end, 10);
			if (*end || r.top < 0)
				return usage_error(report_usage, "bad row count '%s'", optarg);
			break;
		case OPT_TIME:
			if (parse_window(optarg, &r.t_start, &r.t_end))
				return usage_error(report_usage, "bad time window '%s' (START,END in seconds)", optarg);
			break;
		case 'p':
			mo.pid = (int32_t)strtol(optarg, &end, 10);
			if (*end || mo.pid <= 0)
				return usage_error(report_usage, "bad pid '%s'", optarg);
			break;
		case OPT_COMM: mo.comm = optarg; break;
		case 'B': buffer = optarg; break;
		case OPT_RAWIP: r.raw_ip = true; break;
		case OPT_HASH:
			if (kmt_hashptr_init(&r.hash, optarg))
				return error("cannot get a random key: %s", strerror(errno));
			break;
		case OPT_JSON: json = true; break;
		case OPT_CSV: csv = optarg; break;
		case 'h':
			usage_print(stdout, report_usage);
			return EXIT_OK;
		default:
			return usage_error(report_usage, "unknown option");
		}
	}
	if (json && csv)
		return usage_error(report_usage, "--json and --csv exclude each other");
	if (csv && !section_bit(csv))
		return usage_error(report_usage, "no section '%s' for --csv", csv);
	if (optind < argc)
		r.path = argv[optind++];
	if (optind < argc)
		return usage_error(report_usage, "too many arguments");
	if (r.t_start < 0)
		r.t_start = 0;
	ret = run(&r, &a, buffer, json, csv, &mo);
	kmt_flags_free(r.gfp_names);
	analysis_close(&a);
	return ret;
}
