/*
 * kmemtrace check: validate a trace file (ours or trace-cmd's), one line
 * per finding. Exit 0 clean (warnings allowed), 1 errors (or warnings with
 * --strict), 2 unreadable.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/check.h>
#include <kmemtrace/stream.h>
#include <kmemtrace/tracefile.h>
#include "cmd.h"
#include "opt.h"

enum { O_JSON = 256, O_NOMODEL, O_STRICT };

static const struct opt check_opts[] = {
	{ O_JSON, 0, "json", NULL, "one JSON document: findings and counts" },
	{ O_NOMODEL, 0, "no-model", NULL, "skip the allocation/free consistency pass" },
	{ O_STRICT, 0, "strict", NULL, "warnings count as errors" },
	{ 'q', 'q', "quiet", NULL, "only the summary line" },
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

struct out {
	bool json, quiet, first;
	FILE *f;
	uint64_t t0;			/* the trace's first event: times count from it */
};

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* The time of the trace's first event (0 if none can be read). */
static uint64_t first_ts(struct kmt_file *f)
{
	struct kmt_diag d = { 0 };
	struct kmt_stream *s;
	struct kmt_srec sr;
	uint64_t ts = 0;
	int b = kmt_file_main_buffer(f);

	if (b < 0 || !(s = kmt_stream_open(f, b, &d)))
		return 0;
	while (kmt_stream_next(s, &sr, &d) > 0)
		if (!sr.lost_marker) {
			ts = sr.rec.ts;
			break;
		}
	kmt_stream_close(s);
	return ts;
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
		snprintf(ts, sizeof(ts), "%.6f", (double)(since(o->t0, fd->ts)) / 1e9);
	if (o->json) {
		fprintf(o->f, "%s\n    {\"severity\": \"%s\", \"cpu\": %d, \"offset\": %" PRIu64
			", \"in_chunk\": %" PRIu64 ", \"ts_ns\": %" PRIu64 ", \"what\": ",
			o->first ? "" : ",", kmt_severity_name(fd->severity), fd->cpu, fd->offset,
			fd->in_chunk, fd->ts ? since(o->t0, fd->ts) : 0);
		json_str(o->f, fd->what);
		fputc('}', o->f);
		o->first = false;
		return;
	}
	if (!o->quiet)
		fprintf(o->f, "%-7s %-5s %-18s %-17s %s\n", kmt_severity_name(fd->severity), cpu, where, ts,
			fd->what);
}

struct check_args {
	struct out o;
	struct kmt_check_opts co;
	bool strict;
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
	struct check_args a = { .o = { .first = true, .f = stdout },
				.co = { .model = true, .fn = on_finding } };
	struct out *o = &a.o;
	struct kmt_check_result res;
	const char *path = "kmemtrace.dat";
	struct kmt_diag d = { 0 };
	struct kmt_file *f;
	int code, i;

	a.co.arg = o;
	code = opt_parse(&check_help, argc, argv, check_opt, &a, &i);
	code = code >= 0 ? code : opt_file(&check_help, argc, argv, i, &path);
	if (code >= 0)
		return code;
	if (kmt_file_open(&f, path, &d)) {
		if (o->json) {
			printf("{\"file\": ");
			json_str(stdout, path);
			printf(", \"readable\": false, \"error\": ");
			json_str(stdout, d.msg);
			printf("}\n");
		}
		error("%s", d.msg);
		return 2;
	}
	o->t0 = first_ts(f);
	kmt_file_set_prefetch(f, true);
	if (o->json) {
		printf("{\"file\": ");
		json_str(stdout, path);
		printf(", \"readable\": true, \"start_ts_ns\": %" PRIu64 ", \"findings\": [", o->t0);
	} else if (!o->quiet) {
		printf("# times count from the trace's first event, at %.6f s of the trace clock\n",
		       (double)o->t0 / 1e9);
	}
	if (kmt_check_file(f, &a.co, &res, &d)) {
		kmt_file_close(f);
		if (o->json)
			printf("]}\n");
		error("%s", d.msg);
		return 2;
	}
	code = res.errors || (a.strict && res.warnings) ? EXIT_FAIL : EXIT_OK;
	if (o->json)
		printf("\n  ],\n  \"events\": %" PRIu64 ", \"pages\": %" PRIu64 ", \"cpus\": %d, \"lost\": %" PRIu64
		       ", \"errors\": %" PRIu64 ", \"warnings\": %" PRIu64 ", \"clean\": %s\n}\n",
		       res.events, res.pages, res.cpus, res.lost, res.errors, res.warnings,
		       code == EXIT_OK ? "true" : "false");
	else
		printf("%s: %" PRIu64 " events in %" PRIu64 " pages on %d CPUs: %" PRIu64 " error%s, %" PRIu64
		       " warning%s\n", path, res.events, res.pages, res.cpus, res.errors,
		       res.errors == 1 ? "" : "s", res.warnings, res.warnings == 1 ? "" : "s");
	kmt_file_close(f);
	return code;
}
