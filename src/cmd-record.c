/*
 * kmemtrace record: record kernel memory events into a trace.dat. The
 * options are here; the recording itself (instance, capture, signals,
 * finalising) is src/recording.c, shared with kmemtrace watch.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "record.h"

static const char record_usage[] =
	"usage: kmemtrace record [options] [-- COMMAND [ARG...]]\n"
	"\n"
	"Record the kernel's memory allocation events into a trace.dat file, from a\n"
	"private tracefs instance, without touching the kernel's other tracing.\n"
	"With COMMAND, record while it runs and exit with its status; without, record\n"
	"until Ctrl-C, SIGTERM or -d.\n"
	"\n"
	"  -o, --output FILE       trace file (default kmemtrace.dat, mode 0600)\n"
	"  -e, --event LIST        events to record: kmem:kmalloc, kmem:*, vmalloc, ...\n"
	"                          (default: kmalloc, kfree, kmem_cache_alloc/free, page\n"
	"                          alloc/free, percpu alloc/free); process naming events\n"
	"                          are always added\n"
	"  -p, --pid PID[,PID]     only these processes and their children\n"
	"  -F, --follow            only COMMAND and its children\n"
	"  -b, --buffer-size KB    ring buffer per CPU (default 65536)\n"
	"  -d, --duration TIME     stop after TIME (10, 2.5s, 500ms, 1m)\n"
	"      --stack             add a kernel stack to every allocation event\n"
	"      --filter EXPR       kernel filter, e.g. 'bytes_req > 4096', applied to\n"
	"                          the events that have its fields\n"
	"      --no-compress       store raw pages (default: zstd, after recording)\n"
	"      --level N           zstd level (default 1)\n"
	"  -m, --hold MB           memory for captured pages not yet written; they\n"
	"                          are written when the machine is idle or this fills\n"
	"                          (default: 1/8 of RAM, at most 4096; 0: write at once)\n"
	"      --rt-prio N         capture threads' SCHED_FIFO priority (default 1;\n"
	"                          0: ordinary scheduling)\n"
	"      --user USER         run COMMAND as USER (default under sudo: the\n"
	"                          invoking user)\n"
	"      --list              list this kernel's memory events and their fields\n"
	"      --recover DIR       turn the spool DIR of an interrupted recording into\n"
	"                          a trace file (-o, default: DIR without .spool)\n"
	"  -q, --quiet             no status line or summary\n"
	"  -v, --verbose           with --list: the full formats\n"
	"  -h, --help              this text\n";

enum { OPT_STACK = 256, OPT_FILTER, OPT_NOCOMPRESS, OPT_LEVEL, OPT_RTPRIO, OPT_LIST,
       OPT_RECOVER, OPT_USER, OPT_PERCENT };

static void add_events(struct rec_opts *o, const char *arg)
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

static int parse_options(struct rec *rc, int argc, char **argv, bool *list, bool *verbose,
			 const char **recover)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "event", required_argument, NULL, 'e' },
		{ "pid", required_argument, NULL, 'p' },
		{ "follow", no_argument, NULL, 'F' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "duration", required_argument, NULL, 'd' },
		{ "stack", no_argument, NULL, OPT_STACK },
		{ "filter", required_argument, NULL, OPT_FILTER },
		{ "no-compress", no_argument, NULL, OPT_NOCOMPRESS },
		{ "level", required_argument, NULL, OPT_LEVEL },
		{ "rt-prio", required_argument, NULL, OPT_RTPRIO },
		{ "hold", required_argument, NULL, 'm' },
		{ "user", required_argument, NULL, OPT_USER },
		{ "buffer-percent", required_argument, NULL, OPT_PERCENT },
		{ "list", no_argument, NULL, OPT_LIST },
		{ "recover", required_argument, NULL, OPT_RECOVER },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rec_opts *o = &rc->o;
	bool output_set = false;
	char *end;
	int opt;

	rec_opts_defaults(o);
	while ((opt = getopt_long(argc, argv, "+o:e:p:Fb:d:m:qvh", opts, NULL)) != -1) {
		switch (opt) {
		case 'o': o->output = optarg; output_set = true; break;
		case 'e': add_events(o, optarg); break;
		case 'p':
			switch (rec_add_pids(o, optarg)) {
			case 0:
				break;
			case -ESRCH:
				return error("-p %s: no such process", optarg);
			default:
				return usage_error(record_usage, "bad pid list '%s'", optarg);
			}
			break;
		case 'F': o->follow = true; break;
		case 'm':
			o->hold_mb = strtoul(optarg, &end, 10);
			if (*end || o->hold_mb > 1u << 20)
				return usage_error(record_usage, "bad holding size '%s' (MiB)", optarg);
			break;
		case 'b':
			o->buffer_kb = (unsigned int)strtoul(optarg, &end, 10);
			if (*end || o->buffer_kb < 4 || o->buffer_kb > 64u << 20)
				return usage_error(record_usage, "bad buffer size '%s' (KiB per CPU)", optarg);
			break;
		case 'd':
			if (!parse_duration(optarg, &o->duration) || o->duration <= 0)
				return usage_error(record_usage, "bad duration '%s'", optarg);
			break;
		case OPT_STACK: o->stack = true; break;
		case OPT_FILTER: o->filter = optarg; break;
		case OPT_NOCOMPRESS: o->compress = false; break;
		case OPT_LEVEL:
			o->level = (int)strtol(optarg, &end, 10);
			if (*end || o->level < -7 || o->level > 19)
				return usage_error(record_usage, "bad zstd level '%s'", optarg);
			break;
		case OPT_RTPRIO:
			o->rt_prio = (int)strtol(optarg, &end, 10);
			if (*end || o->rt_prio < 0 || o->rt_prio > 99)
				return usage_error(record_usage, "bad priority '%s' (0-99)", optarg);
			break;
		case OPT_PERCENT:
			o->buffer_percent = (unsigned int)strtoul(optarg, &end, 10);
			if (*end || o->buffer_percent > 100)
				return usage_error(record_usage, "bad buffer percent '%s'", optarg);
			break;
		case OPT_USER: o->user = optarg; break;
		case OPT_LIST: *list = true; break;
		case OPT_RECOVER: *recover = optarg; break;
		case 'q': o->quiet = true; break;
		case 'v': *verbose = true; break;
		case 'h':
			usage_print(stdout, record_usage);
			exit(EXIT_OK);
		default:
			return usage_error(record_usage, "unknown option");
		}
	}
	if (optind < argc)
		o->argv = argv + optind;
	if (o->follow && !o->argv)
		return usage_error(record_usage, "-F needs a COMMAND");
	if (o->follow && o->nr_pids)
		return usage_error(record_usage, "-F and -p cannot be combined");
	if (*recover && !output_set)
		o->output = NULL;
	o->status = !o->quiet && isatty(STDERR_FILENO);
	return 0;
}

static int do_recover(struct rec *rc, const char *dir)
{
	struct kmt_diag d = { 0 };
	struct kmt_spool *spool;
	char out[4096];
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (!rc->o.output) {
		if (n > 6 && !strncmp(dir + n - 6, ".spool", 6))
			snprintf(out, sizeof(out), "%.*s", (int)(n - 6), dir);
		else
			snprintf(out, sizeof(out), "%.*s.dat", (int)n, dir);
		rc->o.output = out;
	}
	if (!access(rc->o.output, F_OK))
		return error("'%s' exists; choose another name with -o", rc->o.output);
	spool = kmt_spool_open(dir, &d);
	if (!spool)
		return error("%s", d.msg);
	return rec_finalize(rc, spool, rc->o.output, true, NULL);
}

int cmd_record(int argc, char **argv)
{
	struct rec *rc = calloc(1, sizeof(*rc));
	const char *recover = NULL;
	bool list = false, verbose = false;
	struct kmt_diag d = { 0 };
	int ret, code;

	if (!rc)
		return error("out of memory");
	ret = parse_options(rc, argc, argv, &list, &verbose, &recover);
	if (ret) {
		code = ret;
	} else if (list) {
		ret = kmt_tracefs_find(rc->root, sizeof(rc->root), getenv("KMT_TRACEFS"), true, &d);
		code = ret ? error("%s", d.msg) : ui_list(rc->root, verbose);
	} else if (recover) {
		code = do_recover(rc, recover);
	} else {
		code = rec_run(rc, NULL);
	}
	free(rc->o.events_spec);
	free(rc);
	return code;
}
