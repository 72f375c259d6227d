/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace check: validate a trace file (ours or trace-cmd's), one line
 * per finding. Exit 0 clean (warnings allowed), 1 errors (or warnings with
 * --strict), 2 unreadable.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kmemtrace/analyse.h>
#include <kmemtrace/tracefile.h>
#include "cmd.h"
#include "report/input.h"
#include "report/report.h"
#include "util/util.h"
#include "util/json.h"
#include "util/opt.h"

enum { O_JSON = 256, O_NOMODEL, O_STRICT };

struct out {
	bool json, quiet;
	struct js j;			/* --json: a document, a finding a line */
	FILE *f;
	uint64_t t0;			/* the trace's first event: times count from it */
	bool started;			/* on_start() said it */
};

/* The trace's start: the header, and findings' times from it. */
static void on_start(void *arg, uint64_t t0)
{
	struct out *o = arg;
	char ts[32];

	o->t0 = t0;
	o->started = true;
	if (o->json) {
		js_u64(&o->j, "start_ts_ns", o->t0);
		js_open(&o->j, "findings", '[');
	} else if (!o->quiet) {
		printf("# times count from the trace's first event, at %s s of the trace clock\n",
		       fmt_secs(0, o->t0, ts, sizeof(ts)));
	}
}

static void on_finding(void *arg, const struct kmt_finding *fd)
{
	struct out *o = arg;
	char where[64] = "-", cpu[16] = "-", ts[32] = "-";

	if (fd->cpu >= 0)
		snprintf(cpu, sizeof(cpu), "CPU%d", fd->cpu);
	if (fd->offset && fd->compressed)
		snprintf(where, sizeof(where), "0x%" PRIx64 "+0x%" PRIx64, fd->offset, fd->in_chunk);
	else if (fd->offset)
		snprintf(where, sizeof(where), "0x%" PRIx64, fd->offset);
	if (fd->ts)
		fmt_secs(o->t0, fd->ts, ts, sizeof(ts));
	if (o->json) {
		js_open(&o->j, NULL, '{');
		js_str(&o->j, "severity", kmt_severity_name(fd->severity));
		js_i64(&o->j, "cpu", fd->cpu);
		js_u64(&o->j, "offset", fd->offset);
		js_u64(&o->j, "in_chunk", fd->in_chunk);
		js_u64(&o->j, "ts_ns", fd->ts ? since(o->t0, fd->ts) : 0);
		js_str(&o->j, "what", fd->what);
		js_close(&o->j, '}');
		return;
	}
	if (!o->quiet)
		fprintf(o->f, "%-7s %-5s %-18s %-17s %s\n", kmt_severity_name(fd->severity), cpu, where, ts,
			fd->what);
}

struct check_args {
	struct out o;
	struct kmt_check_opts co;
	struct input_opts in;	/* -j */
	bool strict;
};

static const struct opt check_opts[] = {
	{ O_JSON, 0, "json", NULL, "one JSON document: findings and counts" },
	{ O_NOMODEL, 0, "no-model", NULL, "skip the allocation/free consistency pass" },
	{ O_STRICT, 0, "strict", NULL, "warnings count as errors" },
	{ 'q', 'q', "quiet", NULL, "only the summary line" },
	OPT_GROUP(stats_group, struct check_args, co.stats, 0, NULL),
	OPT_GROUP(input_group, struct check_args, in, INPUT_JOBS, "the file"),
	{ 'h', 'h', "help", NULL, "this text" },
	{ 0 },
};

const struct cmd_help check_help = {
	.name = "check",
	.summary = "validate a trace file: structure, pages, time order, losses, consistency",
	.usage = "[options] [FILE]",
	.about =
	"Validate a trace file (default kmemtrace.dat): header, sections and options;\n"
	"event formats; every per-CPU page (header, commit, event headers, padding, time\n"
	"extends); time order per CPU; lost-event markers against the stored ring-buffer\n"
	"stats; records against their formats; and allocation/free consistency (the\n"
	"report's misuse and uncertainty). One line per finding:\n"
	"  SEVERITY CPU OFFSET TIME: what is wrong\n"
	"Exit status: 0 clean (warnings allowed), 1 errors, 2 the file cannot be read.\n",
	.opts = check_opts,
};

static int check_opt(void *arg, int id, const char *value)
{
	struct check_args *a = arg;

	switch (id) {
	case O_JSON: a->o.json = true; break;
	case O_NOMODEL: a->co.model = false; break;
	case O_STRICT: a->strict = true; break;
	case 'q': a->o.quiet = true; break;
	}
	return -1;
}

int cmd_check(int argc, char **argv)
{
	struct check_args a = { .o = { .f = stdout },
				.co = { .model = true, .fn = on_finding, .start = on_start } };
	struct out *o = &a.o;
	struct kmt_check_result res;
	const char *path = "kmemtrace.dat";
	struct kmt_diag d = { 0 };
	struct kmt_file *f;
	struct progress *pr;
	uint64_t wall0 = input_wall_ns();
	int ret;
	int code, i;

	a.co.arg = o;
	code = opt_parse(&check_help, argc, argv, check_opt, &a, &i);
	code = code >= 0 ? code : opt_file(&check_help, argc, argv, i, &path);
	if (code >= 0)
		return code;
	js_init(&o->j, stdout, false, false);
	js_lines(&o->j, 2);
	if (kmt_file_open(&f, path, &d)) {
		if (o->json) {
			js_open(&o->j, NULL, '{');
			js_str(&o->j, "file", path);
			js_bool(&o->j, "readable", false);
			js_str(&o->j, "error", d.msg);
			js_close(&o->j, '}');
			putchar('\n');
		}
		error("%s", d.msg);
		return 2;
	}
	kmt_file_set_threads(f, input_jobs(a.in.jobs));
	if (o->json) {
		js_open(&o->j, NULL, '{');
		js_str(&o->j, "file", path);
		js_bool(&o->j, "readable", true);
	}
	/* Findings may come while reading: no progress line between them on a terminal. */
	pr = o->quiet || !isatty(STDOUT_FILENO) ? progress_start(path, f) : NULL;
	tuning_from_env(&a.co.shards, &a.co.parts);
	ret = kmt_check_file(f, &a.co, &res, &d);
	progress_stop(pr);
	if (!ret && a.co.stats) {
		if (res.timed)
			input_print_stages(&res.stats, res.timed_records, wall0, 0, 0);
		else
			fprintf(stderr, "stats: no one pass ran (%s): nothing timed\n",
				a.co.model ? "the model's reading stopped early" : "--no-model");
	}
	if (ret) {
		kmt_file_close(f);
		if (!o->started)
			on_start(o, 0);
		if (o->json) {
			js_close(&o->j, ']');
			js_close(&o->j, '}');
			putchar('\n');
		}
		error("%s", d.msg);
		return 2;
	}
	code = res.errors || (a.strict && res.warnings) ? EXIT_FAIL : EXIT_OK;
	if (o->json) {
		js_close(&o->j, ']');
		js_u64(&o->j, "events", res.events);
		js_u64(&o->j, "pages", res.pages);
		js_i64(&o->j, "cpus", res.cpus);
		js_u64(&o->j, "lost", res.lost);
		js_u64(&o->j, "errors", res.errors);
		js_u64(&o->j, "warnings", res.warnings);
		js_bool(&o->j, "clean", code == EXIT_OK);
		js_close(&o->j, '}');
		putchar('\n');
	} else {
		char ev[32], pg[32], er[32], wa[32];

		printf("%s: %s %s in %s %s on %d %s: %s %s, %s %s\n", path,
		       fmt_count((double)res.events, false, ev, sizeof(ev)), plural((double)res.events, "event", "events"),
		       fmt_count((double)res.pages, false, pg, sizeof(pg)), plural((double)res.pages, "page", "pages"),
		       res.cpus, plural(res.cpus, "CPU", "CPUs"),
		       fmt_count((double)res.errors, false, er, sizeof(er)), plural((double)res.errors, "error", "errors"),
		       fmt_count((double)res.warnings, false, wa, sizeof(wa)),
		       plural((double)res.warnings, "warning", "warnings"));
	}
	kmt_file_close(f);
	return code;
}
