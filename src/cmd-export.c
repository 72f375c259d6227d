/*
 * kmemtrace export --format FORMAT FILE: the report's analysis in another
 * tool's format (src/export.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "export.h"
#include "flame.h"
#include "opt.h"

enum { O_VALUE = 256, O_TIME, O_COMM, O_DEPTH, O_CACHE, O_HASH };

static const struct export_format *const formats[] = {
	&export_pprof, &export_perfetto, &export_folded, &export_sqlite,
};

static const struct opt export_opts[] = {
	{ 'f', 'f', "format", "FORMAT", "pprof, perfetto, folded or sqlite (required)" },
	{ 'o', 'o', "output", "FILE", "where to write (default: beside the trace, its name\n"
	  "with the format's extension; -: standard output,\nnot for sqlite); mode 0600, complete or not at all" },
	{ O_VALUE, 0, "value", "WHAT", "folded: bytes (default), objects or live-bytes" },
	{ O_TIME, 0, "time", "START,END", "only events in this window, seconds from the first\n"
	  "event (either may be empty)" },
	{ 'p', 'p', "pid", "PID", "only allocations by this task" },
	{ O_COMM, 0, "comm", "NAME", "only allocations by tasks with this name" },
	{ O_CACHE, 0, "cache", "NAME", "only objects of this slab cache (kmalloc-64: a\nkmalloc size; any name of a merged cache)" },
	{ O_DEPTH, 0, "stack-depth", "N", "keep the first N callers of each call site" },
	{ O_HASH, 0, "hash-pointers", "KEY", "kernel addresses (object pointers, call sites,\n"
	  "stack addresses) as report's keyed hashes, so the\noutput can be shared; symbols stay "
	  "readable. Same\nKEY, same hashes; no KEY: a random one", OPT_OPTARG },
	{ 'B', 'B', "buffer", "NAME", "the trace-cmd instance buffer to export" },
	{ 'h', 'h', "help", NULL, "this text" },
	{ 0 },
};

const struct cmd_help export_help = {
	.name = "export",
	.summary = "hand a trace to pprof, Perfetto, flame graph tools or SQLite",
	.usage = "--format FORMAT [options] [FILE]",
	.about =
	"Write the analysis of a trace file (default kmemtrace.dat; trace-cmd's too) in\n"
	"the format of another tool, with report's filters and numbers:\n"
	"  pprof     gzipped profile.proto, heap-profile sample types alloc_objects,\n"
	"            alloc_space, inuse_objects, inuse_space: go tool pprof, Pyroscope,\n"
	"            Parca (stacks of --stack recordings, labels cache and comm)\n"
	"  perfetto  a Perfetto trace: the memory events as Perfetto's ftrace events,\n"
	"            processes and threads, counters of live bytes (ui.perfetto.dev,\n"
	"            trace_processor)\n"
	"  folded    \"outer;...;callsite VALUE\" lines: flamegraph.pl, speedscope, inferno\n"
	"  sqlite    a database: objects (one row each), callsites, caches, processes,\n"
	"            pages, misuse, accesses, meta (schema: docs/export.md)\n",
	.opts = export_opts,
};

struct export_args {
	struct export x;
	const struct export_format *fmt;
	const char *buffer;
	double t_start, t_end;
	struct kmt_hashptr hash;	/* --hash-pointers */
	bool named;			/* the output's name is ours, not -o's */
};

static int export_opt(void *arg, int id, const char *value)
{
	struct export_args *a = arg;
	const struct cmd_help *H = &export_help;
	size_t i;

	switch (id) {
	case 'f':
		for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
			if (!strcmp(value, formats[i]->name))
				a->fmt = formats[i];
		if (!a->fmt)
			return usage_error(H, "unknown format '%s' (pprof, perfetto, folded, sqlite)", value);
		break;
	case 'o': a->x.path = value; break;
	case O_VALUE:
		if (!strcmp(value, "bytes"))
			a->x.value = FV_BYTES;
		else if (!strcmp(value, "objects"))
			a->x.value = FV_OBJECTS;
		else if (!strcmp(value, "live-bytes"))
			a->x.value = FV_LIVE;
		else
			return usage_error(H, "bad --value '%s' (bytes, objects, live-bytes)", value);
		break;
	case O_TIME:
		if (parse_window(value, &a->t_start, &a->t_end))
			return usage_error(H, "bad time window '%s' (START,END in seconds)", value);
		break;
	case 'p':
		if (!opt_int(value, 1, INT32_MAX, &a->x.mo.pid))
			return usage_error(H, "bad pid '%s'", value);
		break;
	case O_COMM: a->x.mo.comm = value; break;
	case O_CACHE: a->x.mo.cache = value; break;
	case O_DEPTH:
		if (!opt_uint(value, 1, 1024, &a->x.mo.stack_depth))
			return usage_error(H, "bad stack depth '%s' (1 to 1024)", value);
		break;
	case O_HASH:
		if (kmt_hashptr_init(&a->hash, value))
			return error("cannot get a random key: %s", strerror(errno));
		break;
	case 'B': a->buffer = value; break;
	}
	return -1;
}

/*
 * The input's name, its ".dat" replaced by @ext: beside the trace (as
 * private as it), never in the current directory unless the trace is.
 */
static char *default_output(const char *in, const char *ext)
{
	const char *base = strrchr(in, '/') ? strrchr(in, '/') + 1 : in;
	size_t n = strlen(in);
	char *out;

	if ((size_t)(in + n - base) > 4 && !strcmp(in + n - 4, ".dat"))
		n -= 4;
	out = malloc(n + strlen(ext) + 1);
	if (out)
		sprintf(out, "%.*s%s", (int)n, in, ext);
	return out;
}

static int run(struct export_args *a, const char *in)
{
	struct export *x = &a->x;
	struct kmt_outfile of = { .fd = -1 };
	struct kmt_diag d = { 0 };
	bool to_stdout = !strcmp(x->path, "-");
	int ret;

	if (to_stdout && !a->fmt->stream)
		return error("the %s format writes a file: give -o FILE", a->fmt->name);
	if (to_stdout && a->fmt->binary && isatty(STDOUT_FILENO))
		return error("not writing %s's binary output to a terminal: give -o FILE", a->fmt->name);
	if (!to_stdout && kmt_outfile_check(x->path, &d))
		return error("%s", d.msg);
	if (!to_stdout && output_is_trace(x->path))
		return error("'%s' is a trace file: not overwriting it with an export", x->path);
	if (analysis_open(&x->a, in))
		return EXIT_FAIL;
	x->r = (struct report){ .path = in, .sections = SEC_ALL, .t_start = a->t_start,
				.t_end = a->t_end, .f = x->a.f, .syms = x->a.syms, .hash = a->hash };
	report_recorded(&x->r, x->a.dec, x->mo.cache);
	x->mo.detail = a->fmt->detail;
	if (to_stdout) {
		x->out = stdout;
	} else {
		/* 0600: object pointers and call-site addresses, as in the trace. */
		if (kmt_outfile_open_flags(&of, x->path, 0600,
					   KMT_OUTFILE_NOSYNC | (a->fmt->stream ? KMT_OUTFILE_BIG : 0), &d))
			return error("%s", d.msg);
		give_fd_to_invoker(of.fd);
		x->tmp = of.tmp;
		if (a->fmt->stream && !(x->out = kmt_outfile_stream(&of))) {
			kmt_outfile_abort(&of);
			return error("%s: %s", x->path, strerror(errno));
		}
	}
	ret = a->fmt->begin(x);
	if (!ret)
		ret = analysis_run(&x->a, a->buffer, &x->mo, &x->hooks, a->t_start, a->t_end);
	if (!ret) {
		x->r.m = x->a.m;
		x->r.t0 = x->a.t0;
		ret = a->fmt->end(x);
	}
	if (to_stdout)
		return ret || fflush(stdout) ? (ret ? ret : error("cannot write: %s", strerror(errno))) :
		       analysis_damage(&x->a);
	if (ret) {
		kmt_outfile_abort(&of);
		return ret;
	}
	if (kmt_outfile_commit(&of, &d))
		return error("%s", d.msg);
	if (a->named)	/* a name the user did not give: say where it went */
		fprintf(stderr, "%s: wrote %s\n", cmd_name, x->path);
	/* A damaged trace: the file holds what could be read, and that is said. */
	return analysis_damage(&x->a);
}

int cmd_export(int argc, char **argv)
{
	struct export_args a = { .t_start = -1, .t_end = -1 };
	const struct cmd_help *H = &export_help;
	const char *in = "kmemtrace.dat";
	char *path = NULL;
	int code, i, ret;

	code = opt_parse(H, argc, argv, export_opt, &a, &i);
	if (code < 0 && !a.fmt)
		code = usage_error(H, "give --format: pprof, perfetto, folded or sqlite");
	if (code < 0 && a.x.value != FV_BYTES && a.fmt != &export_folded)
		code = usage_error(H, "--value is for --format folded");
	code = code >= 0 ? code : opt_file(H, argc, argv, i, &in);
	if (code >= 0)
		return code;
	if (a.t_start < 0)
		a.t_start = 0;
	if (!a.x.path && !(a.x.path = path = default_output(in, a.fmt->ext)))
		return error("out of memory");
	a.named = path;
	ret = run(&a, in);
	if (a.fmt->release)
		a.fmt->release(&a.x);
	analysis_close(&a.x.a);
	free(path);
	return ret;
}
