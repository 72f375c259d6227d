/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace export --format FORMAT FILE: the report's analysis in another
 * tool's format (src/export/export.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "util/util.h"
#include "export/export.h"
#include "report/flame.h"
#include "util/opt.h"

enum { O_VALUE = 256 };

struct export_args {
	struct export x;
	const struct export_format *fmt;
	struct input_opts in;
	struct addr_opts addr;		/* --hash-pointers */
	bool named;			/* the output's name is ours, not -o's */
	bool stats;
};

static const struct export_format *const formats[] = {
	&export_pprof, &export_perfetto, &export_folded, &export_sqlite,
};

#define NR_FORMATS (sizeof(formats) / sizeof(formats[0]))

/* "  NAME      ABOUT", the about's lines under each other. */
static void print_formats(FILE *out)
{
	size_t i;

	for (i = 0; i < NR_FORMATS; i++) {
		const char *line = formats[i]->about, *nl;
		int first = 1;

		do {
			nl = strchr(line, '\n');
			fprintf(out, "  %-9s %.*s\n", first ? formats[i]->name : "",
				nl ? (int)(nl - line) : (int)strlen(line), line);
			first = 0;
			line = nl + 1;
		} while (nl);
	}
}

/* What --format takes, comma-separated, into @buf. */
static const char *format_names(char *buf, size_t len)
{
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < NR_FORMATS; i++)
		opt_join(buf, len, ",", formats[i]->name);
	return buf;
}

static const struct opt export_opts[] = {
	{ 'f', 'f', "format", "FORMAT", "one of the formats above (required)", 0, format_names },
	{ 'o', 'o', "output", "FILE", "where to write (default: beside the trace, its name\n"
	  "with the format's extension; -: standard output,\nnot for sqlite); mode 0600, complete or not at all" },
	{ O_VALUE, 0, "value", "WHAT", "folded: bytes (default), objects or live-bytes of slab\n"
	  "allocations; page-bytes or pages of page allocations", .type = OT_CHOICE,
	  .choices = flame_value_names, .what = "--value",
	  .off = offsetof(struct export_args, x.value) },
	OPT_GROUP(input_group, struct export_args, in, 0, "allocations by"),
	OPT_GROUP(addresses_group, struct export_args, addr, ADDR_HASH, "kernel addresses"),
	OPT_GROUP(stats_group, struct export_args, stats, 0, NULL),
	{ 'h', 'h', "help", NULL, "this text" },
	{ 0 },
};

const struct cmd_help export_help = {
	.name = "export",
	.summary = "hand a trace to pprof, Perfetto, flame graph tools or SQLite",
	.usage = "--format FORMAT [options] [FILE]",
	.about =
	"Write the analysis of a trace file (default kmemtrace.dat; trace-cmd's too) in\n"
	"the format of another tool, with report's filters and numbers:\n",
	.about_more = print_formats,
	.opts = export_opts,
};

static int export_opt(void *arg, int id, const char *value)
{
	struct export_args *a = arg;
	const struct cmd_help *H = &export_help;
	char names[128];
	size_t i;

	switch (id) {
	case 'f':
		for (i = 0; i < NR_FORMATS; i++)
			if (!strcmp(value, formats[i]->name))
				a->fmt = formats[i];
		if (!a->fmt)
			return usage_error(H, "unknown format '%s' (%s)", value, format_names(names, sizeof(names)));
		break;
	case 'o': a->x.path = value; break;
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
	if (input_open(&x->a, in, a->in.jobs))
		return EXIT_FAIL;
	x->a.stats = a->stats;
	x->r = (struct report){ .path = in, .sections = section_all(), .t_start = a->in.window[0],
				.t_end = a->in.window[1], .f = x->a.f, .syms = x->a.syms,
				.addr = a->addr };
	report_recorded(&x->r, x->a.dec, x->mo.cache);
	x->mo.detail = a->fmt->detail;
	if (to_stdout) {
		x->out = stdout;
	} else {
		/* 0600: object pointers and call-site addresses, as in the trace. */
		if (kmt_outfile_open_flags(&of, x->path, 0600,
					   KMT_OUTFILE_NOSYNC | (a->fmt->stream ? KMT_OUTFILE_BIG : 0), &d))
			return error("%s", d.msg);
		x->tmp = of.tmp;
		if (a->fmt->stream && !(x->out = kmt_outfile_stream(&of))) {
			kmt_outfile_abort(&of);
			return error("%s: %s", x->path, strerror(errno));
		}
	}
	/* The format's state is the driver's to make and to free (cmd_export()). */
	if (a->fmt->priv_size && !(x->priv = calloc(1, a->fmt->priv_size)))
		ret = error("out of memory");
	else
		ret = a->fmt->begin(x);
	if (!ret)
		ret = input_run(&x->a, a->in.buffer, &x->mo, &x->hooks, a->in.window[0], a->in.window[1]);
	if (!ret) {
		uint64_t out0 = input_thread_cpu_ns();

		x->r.m = x->a.m;
		x->r.t0 = x->a.t0;
		ret = a->fmt->end(x);
		if (!ret && x->out && ferror(x->out))
			ret = error("cannot write %s: %s", x->path, strerror(errno ? errno : EIO));
		if (!ret && a->stats)
			input_print_stats(&x->a, input_thread_cpu_ns() - out0);
	}
	if (to_stdout)
		return ret || fflush(stdout) ? (ret ? ret : error("cannot write: %s", strerror(errno))) :
		       input_damage(&x->a);
	if (ret) {
		kmt_outfile_abort(&of);
		return ret;
	}
	if (kmt_outfile_commit(&of, &d))
		return error("%s", d.msg);
	if (a->named)	/* a name the user did not give: say where it went */
		fprintf(stderr, "%s: wrote %s\n", cmd_name, x->path);
	/* A damaged trace: the file holds what could be read, and that is said. */
	return input_damage(&x->a);
}

int cmd_export(int argc, char **argv)
{
	struct export_args a = { .in = INPUT_OPTS_INIT };
	const struct cmd_help *H = &export_help;
	const char *in = "kmemtrace.dat";
	char *path = NULL, names[128];
	int code, i, ret;

	code = opt_parse(H, argc, argv, export_opt, &a, &i);
	if (code < 0 && !a.fmt)
		code = usage_error(H, "give --format: %s", format_names(names, sizeof(names)));
	if (code < 0 && a.x.value != FV_BYTES && a.fmt != &export_folded)
		code = usage_error(H, "--value is for --format folded");
	code = code >= 0 ? code : opt_file(H, argc, argv, i, &in);
	if (code >= 0)
		return code;
	if (a.in.window[0] < 0)
		a.in.window[0] = 0;
	a.x.mo = a.in.mo;
	if (!a.x.path && !(a.x.path = path = default_output(in, a.fmt->ext)))
		return error("out of memory");
	a.named = path;
	ret = run(&a, in);
	if (a.x.priv && a.fmt->release)
		a.fmt->release(&a.x);
	free(a.x.priv);
	input_close(&a.x.a);
	free(path);
	return ret;
}
