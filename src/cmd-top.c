/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace top: the kernel's allocations, live (src/top/top.h). The options,
 * and the hooks that join top to a recording in live mode: the analysis
 * starts with the instance, pages are taken and fed every 100 ms, a
 * snapshot is shown every interval, keys and window sizes are read in the
 * recording's wait loop, and the terminal is put back on every exit path.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/event.h>

#include "cmd.h"
#include "util/util.h"
#include "util/opt.h"
#include "report/input.h"
#include "top/top.h"

#define PUMP_MS 100			/* pages taken and analysed this often */
#define PUMP_BUDGET_S 0.05		/* a pump's wall time at most, behind a busy machine */
#define TICK_PUMP_S 0.01		/* the last pump before a snapshot, at most */

enum { O_BATCH = 256, O_JSON, O_COMM, O_CACHE, O_VIEW, O_PREFAULT, O_SNAPSHOTS };

static const struct opt top_opts[] = {
	{ 'i', 'i', "interval", "SEC", "refresh every SEC seconds (default 1)" },
	{ 'n', 'n', "count", "N", "stop after N snapshots (default: until q, Ctrl-C or\nthe command's end)" },
	{ O_BATCH, 0, "batch", NULL, "plain text snapshots on standard output, as top -b" },
	{ O_JSON, 0, "json", NULL, "snapshots as JSON lines (counts in each interval)" },
	{ O_SNAPSHOTS, 0, "snapshots", "FILE", "batch or JSON snapshots into FILE, not standard output\n"
	  "(where a COMMAND's own output goes)" },
	{ O_VIEW, 0, "view", "VIEW", "rows per callsite (default), cache, process or cgroup", 0,
	  top_view_keys },
	{ 's', 's', "sort", "KEY", "bytes (default), allocs, frees, live, growth, waste\nor name", 0,
	  top_sort_keys },
	{ 'r', 'r', "rows", "N", "rows per snapshot in batch and JSON (default 20; 0:\nall)" },
	OPT_GROUP(recording_group, struct top, rc.o, REC_PID | REC_FOLLOW, NULL),
	{ O_COMM, 0, "comm", "NAME", "only allocations by tasks with this name" },
	{ 'G', 'G', "cgroup", "PATH", "only allocations by tasks in this cgroup or below it\n"
	  "(0::/a/b, memory:/a/b or /a/b, as report -G)" },
	{ O_CACHE, 0, "cache", "NAME", "only this slab cache (kmalloc-N too): in the kernel\n"
	  "for slab caches' events, and in the rows" },
	OPT_GROUP(recording_group, struct top, rc.o, REC_FILTER, NULL),
	{ 'o', 'o', "output", "FILE", "keep the whole session as a trace file, for report\n"
	  "(its clock is mono, which top needs; record's is\nlocal: times count from the first event in both)" },
	OPT_GROUP(recording_group, struct top, rc.o, REC_BUFFER | REC_PERCENT | REC_RTPRIO, NULL),
	{ O_PREFAULT, 0, "prefault", "MB", "memory per CPU for pages the analysis has yet to\n"
	  "take, faulted in before tracing starts (default:\nhalf of what the ring buffers leave of "
	  "the\nmemory budget, over the CPUs; 0: none; see above)" },
	/* The input group's range (input.c), its own help: top's threads are not report's. */
	{ 'j', 'j', "jobs", "N", "threads for the analysis: from 2, taking, merging and\n"
	  "decoding the pages run on one of their own, the model\non top's; from 4, the model in N-2 "
	  "shards (at most\n32); 1: all on top's (default: the CPUs it may run\non, as nproc counts)",
	  .type = OT_INT, .min = 1, .max = 1024, .what = "number of jobs",
	  .off = offsetof(struct top, jobs) },
	{ 'h', 'h', "help", NULL, "this text" },
	{ 0 },
};

const struct cmd_help top_help = {
	.name = "top",
	.summary = "the kernel's allocations, live: per call site, cache or process",
	.usage = "[options] [-- COMMAND [ARG...]]",
	.about =
	"Show the kernel's slab allocations as they happen, refreshed every interval:\n"
	"allocations, frees and bytes per second, waste, and what is live (allocated\n"
	"since top began, not freed) and its growth, per call site, cache, process or\n"
	"cgroup; events lost are shown, never hidden, and so is top's own CPU. Keys:\n"
	"c, k, p, g switch the rows to call sites, caches, processes, cgroups; s\n"
	"cycles the sort key; / filters by name (Enter applies, Esc clears); space\n"
	"pauses; q quits. With COMMAND, until it ends.\n",
	.opts = top_opts,
	.about_more = budget_help,
	.stop_at_operand = true,
};

/* ---- options ---- */

static int top_opt(void *arg, int id, const char *value)
{
	const struct cmd_help *H = &top_help;
	struct top *t = arg;
	struct recording_opts *o = &t->rc.o;
	char keys[128];
	int k;

	switch (id) {
	case 'i':
		if (!parse_duration(value, &t->interval) || t->interval < 0.1 || t->interval > 3600)
			return usage_error(H, "bad interval '%s' (0.1 to 3600 seconds)", value);
		break;
	case 'n':
		if (!opt_uint(value, 1, 1u << 30, &t->count))
			return usage_error(H, "bad count '%s'", value);
		break;
	case O_BATCH: t->batch = true; break;
	case O_JSON: t->json = true; break;
	case O_SNAPSHOTS: t->snapshots_path = value; break;
	case O_VIEW:
		for (k = 0; k < VIEW_NR; k++) {
			size_t n = strlen(top_views[k].key);

			/* "cache" or "caches"; "process" or "processes" */
			if (!strncmp(value, top_views[k].key, n) &&
			    (!value[n] || !strcmp(value + n, "s") || !strcmp(value + n, "es")))
				break;
		}
		if (k == VIEW_NR)
			return usage_error(H, "bad view '%s' (%s)", value, top_view_keys(keys, sizeof(keys)));
		t->view = (enum top_view)k;
		break;
	case 's':
		for (k = 0; k < SORT_NR && strcmp(value, top_sorts[k].key); k++)
			;
		if (k == SORT_NR)
			return usage_error(H, "bad sort key '%s' (%s)", value, top_sort_keys(keys, sizeof(keys)));
		t->sort = (enum top_sort)k;
		break;
	case 'r':
		if (!opt_int(value, 0, INT32_MAX, &t->rows))
			return usage_error(H, "bad row count '%s'", value);
		break;
	case O_COMM: t->comm = value; break;
	case 'G': t->cgroup = value; break;
	case O_CACHE: t->cache = value; break;
	case 'o': o->output = value; break;
	case O_PREFAULT:
		if (!opt_int(value, 0, 1 << 20, &t->prefault_mb))
			return usage_error(H, "bad prefault size '%s' (MB per CPU, 0 to 1048576)", value);
		break;
	}
	return -1;
}

/*
 * --cache NAME in the kernel: a slab cache's own events carry its name; a
 * kmalloc size class is kmalloc's bytes_alloc. Frees of kmalloc objects
 * say no size: those stay, and the rows show the cache alone.
 */
static int cache_filters(struct top *t, struct kmt_event_filter *f, char (*expr)[96])
{
	uint64_t size = kmt_kmalloc_class(t->cache);

	if (size || !strcmp(t->cache, "kmalloc-large")) {
		snprintf(expr[0], 96, size ? "bytes_alloc == %" PRIu64 : "bytes_alloc > 8192", size);
		f[0] = (struct kmt_event_filter){ "kmem:kmalloc", expr[0] };
		snprintf(expr[1], 96, "common_pid < 0");	/* no slab cache events at all */
		f[1] = (struct kmt_event_filter){ "kmem:kmem_cache_alloc", expr[1] };
		f[2] = (struct kmt_event_filter){ "kmem:kmem_cache_free", expr[1] };
		return 3;
	}
	snprintf(expr[0], 96, "name == \"%.60s\"", t->cache);
	snprintf(expr[1], 96, "common_pid < 0");	/* no kmalloc events at all */
	f[0] = (struct kmt_event_filter){ "kmem:kmem_cache_alloc", expr[0] };
	f[1] = (struct kmt_event_filter){ "kmem:kmem_cache_free", expr[0] };
	f[2] = (struct kmt_event_filter){ "kmem:kmalloc", expr[1] };
	f[3] = (struct kmt_event_filter){ "kmem:kfree", expr[1] };
	return 4;
}

/* ---- the loop ---- */

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void show(struct top *t)
{
	FILE *out = t->snapshots ? t->snapshots : stdout;

	if (t->json) {
		show_json(t, out);
	} else if (t->batch) {
		show_text(t, out, t->rows > 0 ? t->rows : -1, 1000, HEAD_FULL);
		fputc('\n', out);
		fflush(out);
	} else {
		screen_draw(t);
	}
}

/* --snapshots FILE: made as an output (mode 0600; under sudo, the invoking user's), written as it goes. */
static int open_snapshots(struct top *t)
{
	struct kmt_diag d = { 0 };
	int fd;

	if (kmt_outfile_check(t->snapshots_path, &d))
		return error("%s", d.msg);
	if (output_is_trace(t->snapshots_path))
		return error("'%s' is a trace file: not overwriting it", t->snapshots_path);
	kmt_owner_enter();
	fd = open(t->snapshots_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	kmt_owner_leave();
	if (fd < 0 || !(t->snapshots = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		return error("cannot write '%s': %s", t->snapshots_path, strerror(errno));
	}
	return EXIT_OK;
}

static void snapshot(struct top *t)
{
	snap_take(t, recording_now_since(&t->rc.t0), cpu_seconds());
	t->shown++;
	show(t);
}

static int start(struct recording *rc, void *arg, struct kmt_diag *d)
{
	struct top *t = arg;
	sigset_t winch;
	char sub[32];
	int ret;

	t->psize = (uint32_t)sysconf(_SC_PAGESIZE);
	if (kmt_instance_read(&rc->in, "buffer_subbuf_size_kb", sub, sizeof(sub)) > 0)
		t->psize = (uint32_t)strtoul(sub, NULL, 10) * 1024;
	ret = feed_init(t, d);
	if (ret)
		return ret;
	t->pump_fd = top_timer(PUMP_MS / 1000.0);
	sigemptyset(&winch);
	sigaddset(&winch, SIGWINCH);
	t->winch_fd = signalfd(-1, &winch, SFD_CLOEXEC | SFD_NONBLOCK);
	if (t->pump_fd < 0 || t->winch_fd < 0)
		return kmt_diag_set(d, -errno, "cannot set up the timers: %s", strerror(errno));
	ret = tick_start(t);
	if (ret)
		return kmt_diag_set(d, ret, "cannot start the ticker: %s", strerror(-ret));
	/* The first interval's CPU is its own, not the set-up's (symbols, prefaulting). */
	t->prev_cpu = cpu_seconds();
	t->prev_feed = feed_cpu_seconds(t);
	if (!t->batch && !t->json && screen_open(t))
		return kmt_diag_set(d, -errno, "cannot set up the terminal: %s", strerror(errno));
	return 0;
}

static int fds(struct recording *rc, void *arg, struct pollfd *pf, int max, int *timeout_ms)
{
	struct top *t = arg;
	int n = 0;

	pf[n++] = (struct pollfd){ t->pump_fd, POLLIN, 0 };
	pf[n++] = (struct pollfd){ t->tick_fd, POLLIN, 0 };
	pf[n++] = (struct pollfd){ t->winch_fd, POLLIN, 0 };
	if (t->screen)
		pf[n++] = (struct pollfd){ t->tty_fd, POLLIN, 0 };
	if (t->pending)
		*timeout_ms = 0;	/* more to analyse: only look round */
	return n;
}

static void drain_fd(int fd)
{
	char buf[256];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* A key: 1 to quit. */
static int key(struct top *t, int c)
{
	int k;

	if (t->editing) {
		size_t n = strlen(t->edit);

		if (c == '\r' || c == '\n') {
			snprintf(t->filter, sizeof(t->filter), "%s", t->edit);	/* empty: no filter */
			t->editing = false;
		} else if (c == 27) {
			*t->filter = '\0';	/* as in htop: Esc leaves the filter empty */
			t->editing = false;
		} else if (c == 21) {		/* Ctrl-U: the text typed so far goes */
			*t->edit = '\0';
		} else if ((c == 127 || c == 8) && n) {
			t->edit[n - 1] = '\0';
		} else if (c >= 32 && c < 127 && n + 1 < sizeof(t->edit)) {
			t->edit[n] = (char)c;
			t->edit[n + 1] = '\0';
		}
		return 0;
	}
	for (k = 0; k < VIEW_NR; k++)
		if (c == top_views[k].hotkey) {
			t->view = (enum top_view)k;
			return 0;
		}
	switch (c) {
	case 'q': case 'Q': case 3:	/* Ctrl-C: the terminal is raw */
		return 1;
	case 's': t->sort = (enum top_sort)((t->sort + 1) % SORT_NR); break;
	case ' ': t->paused = !t->paused; break;
	case '/':
		t->editing = true;
		snprintf(t->edit, sizeof(t->edit), "%s", t->filter);
		break;
	default:
		return 0;
	}
	return 0;
}

/*
 * An arrow or function key is no Esc: the last byte of the sequence at
 * @b[@j] (ESC O x, or ESC [ parameters and a final byte in @-~).
 */
static ssize_t sequence_end(const unsigned char *b, ssize_t j, ssize_t k)
{
	if (b[j + 1] == 'O')
		return MIN(j + 2, k - 1);
	for (j += 2; j < k - 1 && (b[j] < 0x40 || b[j] > 0x7e); j++)
		;
	return j;
}

/* Feed what was read, for PUMP_BUDGET_S at most, or until a snapshot is due. */
static int pump(struct top *t)
{
	t->due = recording_now_since(&t->rc.t0) + PUMP_BUDGET_S;
	return feed_pump(t, false);
}

/*
 * A snapshot is due (the ticker boosted this thread): a short last pump,
 * the snapshot, the boost off. 1 to stop.
 */
static int tick(struct top *t)
{
	int ret = 0;

	atomic_store(&t->tick_now, false);
	t->due = recording_now_since(&t->rc.t0) + TICK_PUMP_S;
	if (feed_pump(t, false))
		ret = 1;
	else if (!t->paused) {
		snapshot(t);
		if (t->count && t->shown >= t->count) {
			t->ended_by_count = true;
			ret = 1;
		}
	}
	tick_done(t);
	return ret;
}

static int ready(struct recording *rc, void *arg, const struct pollfd *pf, int n)
{
	struct top *t = arg;
	bool redraw = false, pumped = false;
	int i;

	/* A snapshot that is due comes first. */
	for (i = 0; i < n; i++)
		if (pf[i].revents && pf[i].fd == t->tick_fd && tick(t))
			return 1;
	for (i = 0; i < n; i++) {
		if (!pf[i].revents)
			continue;
		if (pf[i].fd == t->pump_fd) {
			drain_fd(t->pump_fd);
			pumped = true;
			if (pump(t))
				return 1;
		} else if (pf[i].fd == t->winch_fd) {
			drain_fd(t->winch_fd);
			redraw = true;
		} else if (pf[i].fd == t->tty_fd) {
			unsigned char buf[64];
			ssize_t k = read(t->tty_fd, buf, sizeof(buf)), j;

			for (j = 0; j < k; j++) {
				if (buf[j] == 27 && j + 1 < k && (buf[j + 1] == '[' || buf[j + 1] == 'O')) {
					j = sequence_end(buf, j, k);
					continue;
				}
				if (key(t, buf[j]))
					return 1;
			}
			/* A new view, order or filter shows at once, on the last interval's rows. */
			snap_sort(t);
			redraw = true;
		}
	}
	if (redraw && t->screen)
		screen_draw(t);
	if (t->pending && !pumped && pump(t))
		return 1;
	return 0;
}

/* Capture stops: no more ticks (nor boosts) while the last pages are fed. */
static void stop(struct recording *rc, void *arg)
{
	tick_stop(arg);
	screen_close(arg);
}

/* Capture has stopped: the last pages, and the last snapshot (unless -n ended it). */
static void drained(struct recording *rc, void *arg)
{
	struct top *t = arg;

	if (!t->m)
		return;
	if (feed_pump(t, true))
		return;
	if ((t->batch || t->json) && !t->ended_by_count)
		snapshot(t);
}

int cmd_top(int argc, char **argv)
{
	struct top t = { .interval = 1.0, .rows = 20, .prefault_mb = -1, .tty_fd = STDIN_FILENO,
			 .pump_fd = -1, .tick_fd = -1, .timer_fd = -1, .tick_stop_fd = -1, .winch_fd = -1 };
	struct recording_hooks h = { .start = start, .fds = fds, .ready = ready, .stop = stop,
			       .drained = drained, .arg = &t };
	const struct cmd_help *H = &top_help;
	struct kmt_event_filter filters[4];
	char exprs[2][96];
	sigset_t winch;
	int code, i;

	recording_opts_defaults(&t.rc.o);
	t.rc.o.output = NULL;
	t.rc.o.cmdline = argv;
	t.rc.o.cmdline_n = argc;
	t.out = stdout;
	code = opt_parse(H, argc, argv, top_opt, &t, &i);
	if (code >= 0)
		return code;
	if (i < argc)
		t.rc.o.argv = argv + i;
	if (t.rc.o.follow && !t.rc.o.argv)
		return usage_error(H, "-F needs a COMMAND");
	if (t.rc.o.follow && t.rc.o.nr_pids)
		return usage_error(H, "-F and -p cannot be combined");
	if (t.json && t.batch)
		return usage_error(H, "--batch and --json exclude each other");
	if (t.snapshots_path && !t.json && !t.batch)
		return usage_error(H, "--snapshots is for --batch or --json");
	if (t.snapshots_path && open_snapshots(&t))
		return EXIT_FAIL;
	if (!t.batch && !t.json && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
		return error("the full-screen view needs a terminal: use --batch or --json");
	if (t.cache) {
		struct kmt_diag d = { 0 };
		char merged[512];

		/* As watch checks it: the kernel's own name, or a merged cache's. */
		if (kmt_slab_cache_resolve(t.cache, t.cache_name, sizeof(t.cache_name), merged,
					   sizeof(merged), &d))
			return error("--cache: %s", d.msg);
		if (*merged)
			note("cache '%.60s' is merged: the kernel reports %s as '%s', so this shows them all",
			     t.cache, merged, t.cache_name);
		t.cache = t.cache_name;
		t.rc.nr_event_filters = cache_filters(&t, filters, exprs);
		t.rc.event_filters = filters;
		if (t.view == VIEW_SITES)
			t.view = VIEW_CACHES;
	}
	t.rc.o.live = true;
	t.rc.o.live_period_ms = (unsigned int)MIN(t.interval * 1000 / 4, 250.0);
	/*
	 * The readers' queue grows while the analysis falls behind on a busy
	 * machine; its pages are faulted in before tracing, so that the
	 * readers do not fault in fresh memory at the workload's expense.
	 * hackbench -g 4 -l 1000 on 2 CPUs: top peaks at 315 MB, and the
	 * workload ran 1.05-1.11x the floor with 160 MB per CPU faulted in
	 * first, 1.15-1.21x with none (paired rounds, bench/results/top.md). The
	 * queue's limit and the prefault are the memory budget's (budget.c);
	 * --prefault never goes past the queue's own limit.
	 */
	if (t.prefault_mb >= 0)
		t.rc.o.live_prefault = MIN((size_t)t.prefault_mb << 20,
					   t.rc.o.live_max_bytes / (size_t)MAX(sysconf(_SC_NPROCESSORS_ONLN), 1));
	t.jobs = input_jobs(t.jobs);
	t.rc.o.quiet = true;
	t.rc.clock = "mono";
	/* Every thread blocks SIGWINCH, so that its signalfd sees it. */
	sigemptyset(&winch);
	sigaddset(&winch, SIGWINCH);
	sigprocmask(SIG_BLOCK, &winch, NULL);
	code = recording_run(&t.rc, &h);
	if (t.snapshots && fclose(t.snapshots) && code == EXIT_OK)
		code = error("writing '%s': %s", t.snapshots_path, strerror(errno));
	tick_stop(&t);
	screen_close(&t);
	feed_release(&t);
	snap_release(&t);
	if (t.pump_fd >= 0)
		close(t.pump_fd);
	if (t.winch_fd >= 0)
		close(t.winch_fd);
	return code;
}
