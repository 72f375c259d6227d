/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace dump: the decoded events of a trace file, one per line, in
 * time order — what the analyses see. For checking, scripting and tests:
 *
 *   TIME CPU COMM-PID KIND CALLSITE ptr=... req=... alloc=... [cache=...]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/event.h>
#include <kmemtrace/base.h>
#include <kmemtrace/tracefile.h>
#include "report/input.h"
#include "report/report.h"
#include "cmd.h"
#include "util/util.h"
#include "util/opt.h"

struct dump {
	struct input a;		/* the file, its symbols, task names and decoder */
	struct kmt_file *f;
	struct addr_opts addr;		/* --raw-ip, --hash-pointers */
	struct kmt_flags *gfp_names;	/* from the file's formats, or NULL */
	struct input_opts in;	/* -p, --comm, --time */
	uint64_t lo, hi;		/* the same in the trace clock */
	bool all;
	bool matched;			/* an event of the task asked for, in the window */
	uint64_t t0;
	bool started;
	bool *shown;			/* per CPU: was its last event shown? Its stack follows it */
	/*
	 * The allocation model, fed every event: with -a it says which
	 * allocation each stack was given to (the rules are its own).
	 */
	struct kmt_model *m;
};

static const struct opt dump_opts[] = {
	OPT_GROUP(input_group, struct dump, in, INPUT_PID | INPUT_COMM | INPUT_TIME, "events of"),
	OPT_GROUP(addresses_group, struct dump, addr, 0, "kernel addresses and pfns"),
	{ 'a', 'a', "all", NULL, "also process-naming events and stacks" },
	{ 'h', 'h', "help", NULL, "this text" },
	{ 0 },
};

const struct cmd_help dump_help = {
	.name = "dump",
	.summary = "print the decoded memory events of a trace file, in time order",
	.usage = "[options] [FILE]",
	.about =
	"Print the memory events of a trace file (default kmemtrace.dat), decoded with\n"
	"the formats stored in it, one per line in time order:\n"
	"  TIME [CPU] COMM-PID KIND CALLSITE ptr=... req=... alloc=... cache=...\n"
	"TIME counts seconds from the trace's first event, whose own time in the trace\n"
	"clock the first line (a # comment) gives, as in kmemtrace report.\n",
	.opts = dump_opts,
};


static void note_task(struct kmt_comms *comms, const struct kmt_event *ev)
{
	char buf[KMT_COMM_LEN];
	size_t len;
	const char *name = kmt_event_task_name(ev, buf, &len);

	if (name)
		kmt_comms_set(comms, ev->pid2, name, len);
}

/* A code address: symbol+offset, or the (hashed) address. */
static const char *site_str(const struct dump *dp, uint64_t a, char *buf, size_t len)
{
	uint64_t off;
	const char *fn = dp->addr.raw_ip ? NULL : kmt_symbols_lookup(dp->a.syms, a, &off);

	if (fn)
		snprintf(buf, len, "%s+0x%" PRIx64, fn, off);
	else
		kmt_hashptr_fmt(&dp->addr.hash, a, buf, len);
	return buf;
}

/* gfp=GFP_KERNEL|__GFP_ZERO, named from the file's own print format. */
static const char *gfp_str(const struct dump *dp, uint64_t gfp, char *buf, size_t len)
{
	if (dp->gfp_names)
		return kmt_flags_format(dp->gfp_names, gfp, buf, len);
	snprintf(buf, len, "0x%" PRIx64, gfp);
	return buf;
}

/* " of kmalloc ptr=0x...": the allocation the model gave stack @ev to. */
static void stack_claim(const struct dump *dp, const struct kmt_event *ev)
{
	uint64_t ptr;
	enum kmt_kind k = kmt_model_stack_claim(dp->m, &ptr);
	char p[32];

	kmt_hashptr_fmt(&dp->addr.hash, ptr, p, sizeof(p));
	if (k == KMT_EV_NONE)
		printf(" of no allocation");
	else if (k == KMT_EV_PAGE_ALLOC)
		printf(" of %s pfn=0x%" PRIx64, kmt_kind_name(k), ptr);
	else
		printf(" of %s %s=%s", kmt_kind_name(k), k == KMT_EV_VMAP_ALLOC ? "addr" : "ptr", p);
}

static void print_event(const struct dump *dp, const struct kmt_event *ev)
{
	const char *comm = kmt_comm_name(dp->a.comms, ev->pid);
	char site[256], p[32], g[512];
	uint64_t t = since(dp->t0, ev->ts);
	uint32_t i;

	printf("%6" PRIu64 ".%06" PRIu64 " [%03d] %s-%d %s", t / 1000000000, t / 1000 % 1000000, ev->cpu,
	       comm, ev->pid, kmt_kind_name(ev->kind));
	if (ev->call_site)
		printf(" %s", site_str(dp, ev->call_site, site, sizeof(site)));
	kmt_hashptr_fmt(&dp->addr.hash, ev->ptr, p, sizeof(p));
	switch (ev->kind) {
	case KMT_EV_KMALLOC:
	case KMT_EV_CACHE_ALLOC:
	case KMT_EV_PCPU_ALLOC:
		printf(" ptr=%s req=%" PRIu64 " alloc=%" PRIu64 " gfp=%s", p,
		       ev->bytes_req, ev->bytes_alloc, gfp_str(dp, ev->gfp, g, sizeof(g)));
		break;
	case KMT_EV_KFREE:
	case KMT_EV_CACHE_FREE:
	case KMT_EV_PCPU_FREE:
		printf(" ptr=%s", p);
		break;
	case KMT_EV_PAGE_ALLOC:
		printf(" %s=%s order=%u gfp=%s migratetype=%d",
		       ev->flags & KMT_EVF_PAGE_PTR ? "page" : "pfn", p, ev->order,
		       gfp_str(dp, ev->gfp, g, sizeof(g)), ev->migratetype);
		break;
	case KMT_EV_PAGE_FREE:
	case KMT_EV_PAGE_FREE_BATCHED:
		printf(" %s=%s order=%u", ev->flags & KMT_EVF_PAGE_PTR ? "page" : "pfn", p, ev->order);
		break;
	case KMT_EV_VMAP_ALLOC:
		printf(" addr=%s size=%" PRIu64 "%s", p, ev->bytes_alloc, ev->flags & KMT_EVF_FAILED ? " failed" : "");
		break;
	case KMT_EV_VMAP_FREE:
		printf(" addr=%s", p);
		break;
	case KMT_EV_FORK:
	case KMT_EV_EXEC:
	case KMT_EV_EXIT:
	case KMT_EV_RENAME:
	case KMT_EV_NEWTASK:
		printf(" pid=%d name=%.*s", ev->pid2, (int)ev->str2_len, ev->str2);
		break;
	case KMT_EV_CGROUP:
		printf(" pid=%d hierarchy=%d path=%.*s", ev->pid2, ev->node, (int)ev->str2_len, ev->str2);
		break;
	case KMT_EV_ACCESS:
		printf(" obj=%s offset=%u %s", p, ev->offset, ev->flags & KMT_EVF_WRITE ? "write" : "read");
		break;
	}
	if (ev->name_len)
		printf(" cache=%.*s", (int)ev->name_len, ev->name);
	if (ev->node >= 0 && ev->kind != KMT_EV_PAGE_ALLOC && ev->kind != KMT_EV_CGROUP)
		printf(" node=%d", ev->node);
	if (ev->kind == KMT_EV_STACK && dp->all)
		stack_claim(dp, ev);
	putchar('\n');
	for (i = 0; i < ev->nr_stack; i++) {
		uint64_t a;

		a = kmt_event_stack(ev, i);
		printf("\t=> %s\n", site_str(dp, a, site, sizeof(site)));
	}
}

/* Is @ev in the window and of the task asked for (any task: dp->matched says one was)? */
static bool wanted(struct dump *dp, const struct kmt_event *ev)
{
	if (ev->ts < dp->lo || ev->ts > dp->hi)
		return false;
	if (dp->in.mo.pid && ev->pid != dp->in.mo.pid)
		return false;
	if (dp->in.mo.comm && strcmp(kmt_comm_name(dp->a.comms, ev->pid), dp->in.mo.comm))
		return false;
	dp->matched = true;
	return dp->all || ev->kind < KMT_EV_FORK || ev->kind > KMT_EV_STACK;
}

/*
 * The first thing of the trace: the trace's own start, once; every time
 * printed counts from it (kmt_analyse() has set dp->t0 by then).
 */
static void start(struct dump *dp)
{
	const struct kmt_file_info *fi = kmt_file_info(dp->f);

	dp->started = true;
	dp->lo = dp->in.window[0] > 0 ? kmt_window_at(dp->t0, dp->in.window[0]) : 0;
	dp->hi = dp->in.window[1] >= 0 ? kmt_window_at(dp->t0, dp->in.window[1]) : UINT64_MAX;
	printf("# %s: times are seconds from the trace's first event, at %.6f s of the %s clock\n",
	       fi->path, (double)dp->t0 / 1e9, fi->clock ? fi->clock : "trace");
}

/* A loss, a cut end or damaged data passed over, where the stream meets it. */
static void show_marker(void *arg, const struct kmt_marker *mk, const struct kmt_skip *skip)
{
	struct dump *dp = arg;

	if (!dp->started)
		start(dp);
	if (skip && skip->cpu < 0)
		printf("OTHER CPUS: DATA MISSING (the file ends at byte %" PRIu64 ")\n", skip->from);
	else if (skip)
		printf("CPU %d: DAMAGED DATA SKIPPED HERE (bytes %" PRIu64 "-%" PRIu64 "%s)\n",
		       mk->cpu, skip->from, skip->to, skip->to_end ? ", to its end" : "");
	else if (mk->kind == KMT_MARK_TRUNCATED)
		printf("CPU %d: RECORDING TRUNCATED HERE\n", mk->cpu);
	else if (mk->lost > 0)
		printf("CPU %d: LOST %" PRId64 " %s\n", mk->cpu, mk->lost,
		       mk->kind == KMT_MARK_LOST ? "EVENTS" : "ACCESS SAMPLES");
	else
		printf("CPU %d: LOST %s\n", mk->cpu, mk->kind == KMT_MARK_LOST ? "EVENTS" : "ACCESS SAMPLES");
}

/* An event, after the model took it. A stack follows its event on that CPU (-a shows them, and whose they are). */
static void show_event(void *arg, const struct kmt_event *ev)
{
	struct dump *dp = arg;
	bool *shown = &dp->shown[ev->cpu >= 0 && ev->cpu < KMT_MAX_CPUS ? ev->cpu : KMT_MAX_CPUS];

	if (!dp->started)
		start(dp);
	note_task(dp->a.comms, ev);
	if (ev->kind == KMT_EV_STACK) {
		if (*shown && dp->all)
			print_event(dp, ev);
		return;
	}
	if (ev->kind == KMT_EV_ACCESS) {
		/* Of the samples' buffer: no stack follows it. */
		if (wanted(dp, ev))
			print_event(dp, ev);
		return;
	}
	*shown = wanted(dp, ev);
	if (*shown)
		print_event(dp, ev);
}

/*
 * The trace, through the analysis's own pipeline (kmt_analyse(): the
 * model of every event, the window left to wanted()), printed as it goes.
 */
static int run(struct dump *dp, const char *path)
{
	struct kmt_analyse_opts ao = { .t_start = -1, .t_end = -1, .each = show_event, .marker = show_marker,
				       .arg = dp, .t0 = &dp->t0 };
	struct kmt_model_opts mo = { 0 };
	struct kmt_diag d = { 0 };
	int mb;

	if (input_open(&dp->a, path, 0))
		return EXIT_FAIL;
	tuning_from_env(&ao.shards, &ao.parts);
	dp->f = dp->a.f;
	dp->gfp_names = kmt_flags_gfp(kmt_file_formats(dp->f));
	mb = kmt_file_main_buffer(dp->f);
	if (mb < 0)
		return EXIT_OK;
	mo.syms = dp->a.syms;
	mo.cmdlines = dp->a.comms;
	kmt_model_opts_from_file(&mo, dp->f);
	dp->m = dp->a.m = kmt_model_new(&mo);
	dp->shown = calloc(KMT_MAX_CPUS + 1, sizeof(*dp->shown));
	if (!dp->m || !dp->shown)
		return error("out of memory");
	if (kmt_analyse(dp->f, mb, dp->a.dec, dp->m, &ao, &dp->a.res, &d))
		return error("%s", d.msg);
	if (dp->started && dp->lo > dp->a.res.t_end)
		return error("%s: the window starts at %.6f s, but the trace ends at %.6f s", path,
			     dp->in.window[0], (double)(dp->a.res.t_end - dp->t0) / 1e9);
	if ((dp->in.mo.pid || dp->in.mo.comm) && !dp->matched)
		input_unmatched(path, &dp->in.mo, dp->in.window[0] > 0 || dp->in.window[1] >= 0);
	/* Every event that could be read, then what a damaged file lost. */
	return file_damage(dp->f, dp->a.syms, dp->a.res.skipped, dp->a.res.nr_skipped) ? EXIT_FAIL : EXIT_OK;
}

static int dump_opt(void *arg, int id, const char *value)
{
	struct dump *dp = arg;

	switch (id) {
	case 'a': dp->all = true; break;
	}
	return -1;
}

int cmd_dump(int argc, char **argv)
{
	struct dump dp = { .in = INPUT_OPTS_INIT };
	const char *path = "kmemtrace.dat";
	int ret, code, i;

	code = opt_parse(&dump_help, argc, argv, dump_opt, &dp, &i);
	code = code >= 0 ? code : opt_file(&dump_help, argc, argv, i, &path);
	if (code >= 0)
		return code;
	ret = run(&dp, path);
	free(dp.shown);
	kmt_flags_free(dp.gfp_names);
	input_close(&dp.a);
	return ret;
}
