/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace record: record kernel memory events into a trace.dat. The
 * options are here; the recording itself (instance, capture, signals,
 * finalising) is src/record/recording.c, shared with kmemtrace watch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "util/util.h"
#include "util/opt.h"
#include "util/term.h"
#include "record/record.h"

enum { O_STACK = 256, O_NOCOMPRESS, O_LEVEL, O_LIST, O_RECOVER, O_STACK_SAMPLE, O_FULLSYMS };

struct record_args {
	struct recording_opts *o;
	bool list, verbose, output_set;
	const char *recover;
};

static const struct opt record_opts[] = {
	{ 'o', 'o', "output", "FILE", "trace file (default kmemtrace.dat, mode 0600)" },
	{ 'e', 'e', "event", "LIST", "events to record: kmem:kmalloc, kmem:*, vmalloc, ...\n"
	  "(default: those above); process naming events are\nalways added" },
	OPT_GROUP_AT(recording_group, struct record_args, o, REC_PID | REC_FOLLOW | REC_CGROUP | REC_BUFFER |
		     REC_DURATION, NULL),
	{ O_STACK, 0, "stack", NULL, "add a kernel stack to every allocation event" },
	{ O_STACK_SAMPLE, 0, "stack-sample", "N", "stacks for about 1 in N allocations only (N a\n"
	  "power of two; those in short random slices of time,\nfair to every call site; "
	  "implies --stack)" },
	OPT_GROUP_AT(recording_group, struct record_args, o, REC_FILTER, NULL),
	{ O_NOCOMPRESS, 0, "no-compress", NULL, "store raw pages (default: zstd, after recording)" },
	{ O_LEVEL, 0, "level", "N", "zstd level (default 1)" },
	{ O_FULLSYMS, 0, "full-kallsyms", NULL, "keep all of /proc/kallsyms (default: only the\n"
	  "functions the events name, which name them alike)" },
	{ 'm', 'm', "hold", "MB", "memory for captured pages not yet spooled; they\n"
	  "are spooled when the machine is idle or this fills,\n"
	  "and compressed from memory at the end; a SIGKILL\n"
	  "loses them (default: what the ring buffers leave\n"
	  "of the memory budget, see above; 0: spool at once,\n"
	  "the spool never more than a second behind)" },
	OPT_GROUP_AT(recording_group, struct record_args, o, REC_RTPRIO | REC_PERCENT | REC_USER, NULL),
	{ O_LIST, 0, "list", NULL, "list this kernel's memory events and their fields" },
	{ O_RECOVER, 0, "recover", "DIR", "turn the spool DIR of an interrupted recording into\n"
	  "a trace file (-o, default: DIR without .spool),\n"
	  "after taking the events its instance still holds\n"
	  "if its recorder was killed" },
	{ 'q', 'q', "quiet", NULL, "no status line or summary" },
	{ 'v', 'v', "verbose", NULL, "with --list: the full formats" },
	{ 'h', 'h', "help", NULL, "this text" },
	{ 0 },
};

/* The events recorded by default: record's own list (kmt_events_default). */
static void print_default_events(FILE *out)
{
	char list[1024] = "  ";
	size_t i, n = 2;

	for (i = 0; kmt_events_default[i] && n + 3 < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, kmt_events_default[i] == ',' ? ", " : "%c",
				      kmt_events_default[i]);
	fprintf(out, "\nRecorded by default, those of them the kernel has (--list marks them *):\n");
	term_wrap(out, list, TERM_PROSE, 2);
}

/* After the paragraphs: the default events, then the memory rule. */
static void about_more(FILE *out)
{
	print_default_events(out);
	budget_help(out);
}

const struct cmd_help record_help = {
	.name = "record",
	.summary = "record kernel memory events into a trace.dat file",
	.usage = "[options] [-- COMMAND [ARG...]]",
	.about =
	"Record the kernel's memory allocation events into a trace.dat file, from a\n"
	"private tracefs instance, without touching the kernel's other tracing.\n"
	"With COMMAND, record while it runs and exit with its status; without, record\n"
	"until Ctrl-C, SIGTERM or -d. Every task's events are recorded (system-wide;\n"
	"-F: only COMMAND and its children). A recorder that is killed (SIGKILL)\n"
	"leaves its instance and its spool; its watchdog process stops the instance's\n"
	"tracing at once and notes when. --recover takes both into a file, and the\n"
	"next recorder moves the instance's unread events into the spool, saying so,\n"
	"before removing the instance.\n",
	.about_more = about_more,
	.opts = record_opts,
	.stop_at_operand = true,
};

static void add_events(struct recording_opts *o, const char *arg)
{
	size_t old = o->events_spec ? strlen(o->events_spec) : 0;
	char *s = realloc(o->events_spec, old + strlen(arg) + 2);

	if (!s)
		return;
	if (old)
		s[old++] = ',';
	strcpy(s + old, arg);
	o->events_spec = s;
}

static int record_opt(void *arg, int id, const char *value)
{
	const struct cmd_help *H = &record_help;
	struct record_args *a = arg;
	struct recording_opts *o = a->o;
	uint64_t v;

	switch (id) {
	case 'o': o->output = value; a->output_set = true; break;
	case 'e': add_events(o, value); break;
	case 'm':
		if (!opt_u64(value, 0, 1u << 20, &v))
			return usage_error(H, "bad holding size '%s' (MiB, 0 to 1048576)", value);
		o->hold_mb = (size_t)v;
		break;
	case O_STACK: o->stack = true; break;
	case O_STACK_SAMPLE:
		if (!opt_uint(value, 1, 1u << 16, &o->stack_sample) ||
		    (o->stack_sample & (o->stack_sample - 1)))
			return usage_error(H, "bad stack sample '%s' (a power of two, 1 to 65536)", value);
		o->stack = true;
		break;
	case O_NOCOMPRESS: o->compress = false; break;
	case O_FULLSYMS: o->full_kallsyms = true; break;
	case O_LEVEL:
		if (!opt_int(value, -7, 19, &o->level))
			return usage_error(H, "bad zstd level '%s' (-7 to 19)", value);
		break;
	case O_LIST: a->list = true; break;
	case O_RECOVER: a->recover = value; break;
	case 'q': o->quiet = true; break;
	case 'v': a->verbose = true; break;
	}
	return -1;
}

/* -1 to go on, or the exit code (help shown, or bad usage). */
static int parse_options(struct recording *rc, int argc, char **argv, struct record_args *a)
{
	const struct cmd_help *H = &record_help;
	struct recording_opts *o = &rc->o;
	int code, i;

	recording_opts_defaults(o);
	o->cmdline = argv;
	o->cmdline_n = argc;
	a->o = o;
	code = opt_parse(H, argc, argv, record_opt, a, &i);
	if (code >= 0)
		return code;
	if (i < argc)
		o->argv = argv + i;
	if (o->follow && !o->argv)
		return usage_error(H, "-F needs a COMMAND");
	if (o->follow && o->nr_pids)
		return usage_error(H, "-F and -p cannot be combined");
	if (a->recover && !a->output_set)
		o->output = NULL;
	o->status = !o->quiet && isatty(STDERR_FILENO);
	return -1;
}

/*
 * What the recording's instance still holds goes into the spool first
 * (its recorder died and left it tracing): that needs tracefs, and root.
 * EXIT_OK, or the exit code after saying why (then nothing is written).
 */
static int take_instance(struct recording *rc, struct kmt_spool *spool)
{
	const struct kmt_spool_meta *m = kmt_spool_meta(spool);
	struct kmt_recover_result rr;
	struct kmt_diag d = { 0 };
	int ret;

	if (!*m->instance)
		return EXIT_OK;
	ret = kmt_tracefs_find(rc->root, sizeof(rc->root), getenv("KMT_TRACEFS"), false, &d);
	if (ret == KMT_ENOTRACEFS)
		return EXIT_OK;		/* no instance can be left here */
	if (ret) {
		fprintf(stderr, "%s: note: cannot look for the recording's instance %s, which may hold "
			"more of it: %s\n", cmd_name, m->instance, d.msg);
		return EXIT_OK;
	}
	ret = kmt_recover_take(spool, rc->root, &rr, &d);
	if (ret)
		return error("cannot take the events of instance %s into '%s': %s", m->instance,
			     kmt_spool_dir(spool), d.msg);
	ui_took(&rr, rc->o.quiet);
	return EXIT_OK;
}

static int do_recover(struct recording *rc, const char *dir)
{
	struct kmt_diag d = { 0 };
	struct kmt_spool *spool;
	char out[4096];

	if (!rc->o.output) {
		if (kmt_spool_output_name(dir, out, sizeof(out)))
			return error("spool name too long: %s", dir);
		rc->o.output = out;
	}
	spool = kmt_spool_open(dir, &d);
	if (!spool)
		return error("%s", d.msg);
	/* The output's place is checked before the instance is taken, and kept as .old after. */
	if (output_prepare(rc->o.output, rc->o.quiet, true) || take_instance(rc, spool) ||
	    output_prepare(rc->o.output, rc->o.quiet, false)) {
		kmt_spool_close(spool);
		return EXIT_FAIL;
	}
	return recording_finalize(rc, spool, rc->o.output, true, NULL);
}

int cmd_record(int argc, char **argv)
{
	struct recording *rc = calloc(1, sizeof(*rc));
	struct record_args a = { 0 };
	struct kmt_diag d = { 0 };
	int ret, code;

	if (!rc)
		return error("out of memory");
	code = parse_options(rc, argc, argv, &a);
	if (code >= 0) {
		/* help, or bad usage */
	} else if (a.list) {
		ret = kmt_tracefs_find_readable(rc->root, sizeof(rc->root), getenv("KMT_TRACEFS"), &d);
		code = ret ? error("listing this kernel's events: %s", d.msg) : ui_list(rc->root, a.verbose);
	} else if (a.recover) {
		code = do_recover(rc, a.recover);
	} else {
		code = recording_run(rc, NULL);
	}
	free(rc->o.events_spec);
	free(rc);
	return code;
}
