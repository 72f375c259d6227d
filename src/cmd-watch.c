/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace watch: options, what to watch resolved against the running
 * kernel (a function's addresses from /proc/kallsyms, a member's offset
 * from BTF), and the summary. The recording is src/record/recording.c; the
 * watcher inside it is the library's (include/kmemtrace/watch.h),
 * joined to the recording by the hooks below.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kmemtrace/event.h>
#include <kmemtrace/watch.h>
#include "report/input.h"
#include "cmd.h"
#include "util/util.h"
#include "util/opt.h"
#include "record/record.h"

enum { O_CACHE = 256, O_CALLSITE, O_OFFSET, O_SCAN, O_TYPE, O_DWELL, O_SELFTEST };

struct watch_args {
	struct watch *w;
	struct recording *rc;
	struct recording_opts *o;		/* rc's */
	const char *cache, *callsite, *offsets;
};

static const struct opt watch_opts[] = {
	{ O_CACHE, 0, "cache", "NAME", "objects of this slab cache; kmalloc-N: every kmalloc\n"
	  "of that size class" },
	{ O_CALLSITE, 0, "callsite", "FUNC", "objects allocated (kmalloc, kmem_cache_alloc) in FUNC" },
	{ O_OFFSET, 0, "offset", "WHERE[,WHERE]", "the word(s) to watch: a byte offset, or\n"
	  "STRUCT.MEMBER from the kernel's BTF (eventfd_ctx.count)" },
	{ O_SCAN, 0, "scan", NULL, "rotate over the whole object a word at a time, so every\n"
	  "offset gets sampled over time (the default)" },
	{ O_TYPE, 0, "type", "STRUCT", "name offsets after STRUCT's members (BTF)" },
	{ 'n', 'n', "objects", "N", "stop after watching N objects" },
	OPT_GROUP_AT(recording_group, struct watch_args, o, REC_DURATION, NULL),
	{ O_DWELL, 0, "dwell", "TIME", "move on to another object (with --scan: or word) after\n"
	  "watching one this long (default 100ms)" },
	{ 'F', 'F', "follow", NULL, "only objects allocated by COMMAND and its children" },
	OPT_GROUP_AT(recording_group, struct watch_args, o, REC_PID, NULL),
	{ 'o', 'o', "output", "FILE", "trace file (default kmemtrace.dat, mode 0600)" },
	OPT_GROUP_AT(recording_group, struct watch_args, o, REC_BUFFER | REC_USER, NULL),
	{ 'q', 'q', "quiet", NULL, "no status line or summary" },
	{ O_SELFTEST, 0, "self-test", NULL, "only check that this machine's watchpoints fire, and exit" },
	{ 'h', 'h', "help", NULL, "this text" },
	{ 0 },
};

const struct cmd_help watch_help = {
	.name = "watch",
	.summary = "sample accesses to a cache's objects with hardware watchpoints",
	.usage = "(--cache NAME | --callsite FUNC) [options] [-- COMMAND [ARG...]]",
	.about =
	"Sample how the kernel uses the objects of one slab cache or one allocation\n"
	"call site: follow their allocations live, pick objects among them, and watch a\n"
	"word of each with hardware data watchpoints on every CPU, telling reads from\n"
	"writes. The target's allocations, every free, and the samples go to one trace\n"
	"file: kmemtrace kmap lists each object with its accesses, kmemtrace report\n"
	"--sections access the accesses per offset and function.\n",
	.opts = watch_opts,
	.about_more = budget_help,
	.more =
	"Coverage: x86 has four debug registers per CPU. A watched word takes two (one\n"
	"fires on writes, one on reads and writes), so two words are watched at once,\n"
	"on every CPU. Samples accumulate as the watchpoints move: to another object\n"
	"when the watched one is freed or has been watched for --dwell, and with --scan\n"
	"to the next word. A read-modify-write counts as a write; the instruction shown\n"
	"is the one after the access (data breakpoints trap after it). Samples that\n"
	"land after the object was freed are dropped when the file is analysed.\n"
	"\n"
	"Before recording, watch checks that watchpoints fire on every CPU (a few\n"
	"hundred microseconds). Some hypervisors accept them and never fire them;\n"
	"there watch refuses to run (exit 1) rather than record nothing.\n",
	.stop_at_operand = true,
};

/* What the command sets up, and the watcher once the recording runs. */
struct watch {
	struct kmt_watcher_opts o;
	struct kmt_watcher *w;
	struct kmt_btf *btf;
	char type[64];
	bool follow;
	pid_t pids[64];			/* candidates: -p, and the command with -F */
};

/*
 * Do this machine's watchpoints fire on every online CPU? 0, or EXIT_FAIL
 * after one line saying why not (the probe: cmd-util.c, hwbp_check()).
 */
static int watch_probe(bool report)
{
	struct kmt_hwbp_probe res;
	struct kmt_diag d = { 0 };
	const char *test = getenv("KMT_TEST_HWBP");
	int ret;

	if (!report && test && !strcmp(test, "skip"))
		return EXIT_OK;
	ret = hwbp_check(&res, &d);
	if (ret == KMT_ENOFIRE)
		return error("%s: kmemtrace watch cannot sample here; record, report and kmap still work",
			     d.msg);
	if (ret)
		return error("%s", d.msg);
	if (report)
		printf("hardware watchpoints fire on this machine: %d CPU%s, %llu of %llu writes counted\n",
		       res.cpus, res.cpus == 1 ? "" : "s", (unsigned long long)res.counted,
		       (unsigned long long)res.writes);
	return EXIT_OK;
}

/* ---- what to watch ---- */

/* [lo, hi) of function @name in the running kernel's symbols. */
static int resolve_function(const char *name, uint64_t *lo, uint64_t *hi, struct kmt_diag *d)
{
	struct kmt_symbols *syms = kmt_symbols_load_kernel();
	int n;

	if (!syms)
		return kmt_diag_set(d, -errno, "cannot read " KMT_KALLSYMS ": %s", strerror(errno));
	n = kmt_symbols_find(syms, name, lo, hi);
	if (!n && !kmt_symbols_count(syms)) {
		kmt_symbols_free(syms);
		return kmt_diag_set(d, -EPERM, KMT_KALLSYMS " shows no addresses (kptr_restrict): run as root");
	}
	kmt_symbols_free(syms);
	if (!n)
		return kmt_diag_set(d, -ENOENT, "the kernel has no function '%s' (see " KMT_KALLSYMS ")", name);
	if (n > 1)
		warning("%d functions are called '%s'; watching the first", n, name);
	return 0;
}

static int resolve_target(struct kmt_watch_target *t, const char *cache, const char *callsite,
			  struct kmt_diag *d)
{
	char merged[512];
	int ret;

	if (callsite) {
		t->kind = KMT_WATCH_CALLSITE;
		snprintf(t->name, sizeof(t->name), "%s", callsite);
		return resolve_function(callsite, &t->lo, &t->hi, d);
	}
	ret = kmt_slab_cache_resolve(cache, t->name, sizeof(t->name), merged, sizeof(merged), d);
	if (ret)
		return ret;
	t->size = kmt_kmalloc_class(t->name);
	if (!strcmp(t->name, "kmalloc-large"))
		return kmt_diag_set(d, -EINVAL, "kmalloc-large is no size class: watch a call site (--callsite)");
	t->kind = t->size ? KMT_WATCH_KMALLOC : KMT_WATCH_CACHE;
	if (*merged)
		note("cache '%.60s' is merged: the kernel reports %s as '%s', so objects of them all are watched",
		     cache, merged, t->name);
	return 0;
}

/* One --offset item: a number, or STRUCT.MEMBER through BTF. */
static int parse_offset(struct watch *w, const char *s, struct kmt_watch_offset *o,
			struct kmt_diag *d)
{
	struct kmt_btf_field f;
	uint64_t v;
	int ret;

	if (opt_u64(s, 0, 1u << 20, &v)) {
		o->off = (uint32_t)(v & ~7ULL);
		o->len = 8;
		return 0;
	}
	if (!strchr(s, '.'))
		return kmt_diag_set(d, -EINVAL, "bad offset '%s' (bytes, or STRUCT.MEMBER)", s);
	if (!w->btf && !(w->btf = kmt_btf_open(NULL, d)))
		return d->err ? d->err : -ENOENT;
	ret = kmt_btf_field(w->btf, s, &f, d);
	if (ret)
		return ret;
	/* The member's own size if the hardware can watch it, else its first word. */
	if (!f.bit_size && (f.size == 1 || f.size == 2 || f.size == 4 || f.size == 8) &&
	    !(f.offset & (f.size - 1))) {
		o->off = f.offset;
		o->len = f.size;
	} else {
		o->off = f.offset & ~7u;
		o->len = 8;
	}
	snprintf(o->field, sizeof(o->field), "%s", strchr(s, '.') + 1);
	if (!w->type[0])
		snprintf(w->type, sizeof(w->type), "%.*s", (int)(strchr(s, '.') - s), s);
	return 0;
}

static int parse_offsets(struct watch *w, const char *arg, struct kmt_diag *d)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int ret = 0;

	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		if (w->o.nr_offs == KMT_HWBP_MAX_SLOTS) {
			ret = kmt_diag_set(d, -EINVAL, "at most %d offsets at once (two debug registers each)",
					   KMT_HWBP_MAX_SLOTS);
			break;
		}
		ret = parse_offset(w, tok, &w->o.offs[w->o.nr_offs++], d);
	}
	free(copy);
	return ret;
}

/* The recording's events and their filters: the target's allocations, every free. */
static void set_events(struct watch *w, struct recording *rc, struct kmt_event_filter *ef, char bufs[][300])
{
	static const char *const evs[] = { "kmem:kmalloc", "kmem:kmem_cache_alloc", "kmem:kfree",
					   "kmem:kmem_cache_free" };
	const struct kmt_watch_target *t = &w->o.target;
	char spec[200] = "";
	size_t n = 0;
	int i;

	for (i = 0; i < 4; i++) {
		const char *f = NULL;
		bool want = true;

		if (i < 2) {
			f = kmt_watch_alloc_filter(t, evs[i], bufs[i], 300);
			want = f != NULL;
		} else if (i == 3) {
			/* Cache objects only come from caches; by name if we know it. */
			want = t->kind != KMT_WATCH_KMALLOC;
			if (t->kind == KMT_WATCH_CACHE) {
				snprintf(bufs[i], 300, "name == \"%s\"", t->name);
				f = bufs[i];
			}
		}
		if (!want)
			continue;
		n += (size_t)snprintf(spec + n, sizeof(spec) - n, "%s%s", n ? "," : "", evs[i]);
		if (f) {
			ef[rc->nr_event_filters].event = evs[i];
			ef[rc->nr_event_filters++].filter = f;
		}
	}
	rc->o.events_spec = strdup(spec);
	rc->event_filters = ef;
	rc->clock = "mono";
}

/* ---- the hooks into the recording ---- */

static int w_start(struct recording *rc, void *arg, struct kmt_diag *d)
{
	struct watch *w = arg;

	w->o.root = rc->root;
	w->o.cpus = rc->cpus;
	w->o.nr_cpus = rc->nr_cpus;
	w->o.spool = rc->spool;
	if (w->follow)
		w->pids[w->o.nr_pids++] = rc->child.pid;
	w->o.pids = w->pids;
	w->w = kmt_watcher_start(&w->o, d);
	if (!w->w)
		return d->err ? d->err : -EIO;
	return kmt_watchdog_guard(rc->dog, kmt_watcher_ctl_name(w->w));
}

static int w_fds(struct recording *rc, void *arg, struct pollfd *pf, int max, int *timeout_ms)
{
	struct watch *w = arg;

	return kmt_watcher_fds(w->w, pf, max, timeout_ms);
}

static int w_ready(struct recording *rc, void *arg, const struct pollfd *pf, int n)
{
	struct watch *w = arg;

	return kmt_watcher_poll(w->w);
}

static void w_stop(struct recording *rc, void *arg)
{
	struct watch *w = arg;

	kmt_watcher_stop(w->w);
}

/* The summary: what was watched, what was sampled, what the analysis keeps. */
static void w_done(struct recording *rc, void *arg, const struct kmt_finalize_result *res)
{
	struct watch *w = arg;
	const struct kmt_watcher_stats *st = kmt_watcher_stats(w->w);
	struct kmt_model_opts mo = { 0 };
	struct input a = { 0 };
	char n1[32], n2[32], n3[32], n4[32];
	uint32_t off;

	if (*st->note)
		warning("%s", st->note);
	if (rc->o.quiet)
		return;
	fprintf(stderr, "%s: watched %s of %s %s allocated, %d word%s at a time on %d %s;", cmd_name,
		fmt_count((double)st->objects, false, n1, sizeof(n1)),
		fmt_count((double)st->allocs_seen, false, n2, sizeof(n2)),
		plural((double)st->allocs_seen, "object", "objects"), st->slots, st->slots == 1 ? "" : "s",
		rc->nr_cpus, plural(rc->nr_cpus, "CPU", "CPUs"));
	if (!st->words) {
		fprintf(stderr, " no offset covered\n");
	} else {
		fprintf(stderr, " %u offset%s covered:", st->words, st->words == 1 ? "" : "s");
		for (off = 0; off < st->max_off && off / 8 < KMT_WATCH_MAX_WORDS; off += 8)
			if (kmt_watcher_covered(w->w, off))
				fprintf(stderr, " %u", off);
		fputc('\n', stderr);
	}
	fprintf(stderr, "%s: %s %s recorded (%s outside any watch, not kept), %s lost\n", cmd_name,
		fmt_count((double)(st->hits - st->unmapped), false, n1, sizeof(n1)),
		plural((double)(st->hits - st->unmapped), "sample", "samples"),
		fmt_count((double)st->unmapped, false, n2, sizeof(n2)),
		fmt_count(res ? (double)res->access_lost : 0, false, n3, sizeof(n3)));
	if (st->hits == st->unmapped) {
		/* The watchpoints were checked at start: say why nothing came. */
		if (!st->allocs_seen)
			fprintf(stderr, "%s: no sample because nothing was allocated at the target while "
				"recording (check --cache/--callsite, -F, -p)\n", cmd_name);
		else if (!st->objects)
			fprintf(stderr, "%s: no sample because none of the %s %s lived long enough to "
				"be watched (allocations are picked up every few milliseconds)\n", cmd_name,
				fmt_count((double)st->allocs_seen, false, n1, sizeof(n1)),
				plural((double)st->allocs_seen, "object", "objects"));
		else
			fprintf(stderr, "%s: no sample because nothing touched the watched words while they "
				"were watched (try other offsets, or --scan)\n", cmd_name);
	}
	/* What the analysis keeps: samples in a live object, per the recorded frees. */
	if (input_open(&a, rc->o.output, 0) == EXIT_OK &&
	    input_run(&a, NULL, &mo, NULL, -1, -1) == EXIT_OK) {
		const struct kmt_summary *sum = kmt_model_summary(a.m);

		fprintf(stderr, "%s: %s %s and %s %s in %s %s; %s %s dropped (no live object there then: "
			"after a free)\n", cmd_name,
			fmt_count((double)sum->access_writes, false, n1, sizeof(n1)),
			plural((double)sum->access_writes, "write", "writes"),
			fmt_count((double)sum->access_reads, false, n2, sizeof(n2)),
			plural((double)sum->access_reads, "read", "reads"),
			fmt_count((double)sum->access_objects, false, n3, sizeof(n3)),
			plural((double)sum->access_objects, "object", "objects"),
			fmt_count((double)sum->access_dropped, false, n4, sizeof(n4)),
			plural((double)sum->access_dropped, "sample", "samples"));
	}
	input_close(&a);
}

/* ---- the command ---- */

static int watch_opt(void *arg, int id, const char *value)
{
	const struct cmd_help *H = &watch_help;
	struct watch_args *a = arg;
	struct watch *w = a->w;
	struct recording *rc = a->rc;

	switch (id) {
	case O_CACHE: a->cache = value; break;
	case O_CALLSITE: a->callsite = value; break;
	case O_OFFSET: a->offsets = value; break;
	case O_SCAN: w->o.scan = true; break;
	case O_TYPE: snprintf(w->type, sizeof(w->type), "%s", value); break;
	case 'n':
		if (!opt_u64(value, 1, UINT32_MAX, &w->o.max_objects))
			return usage_error(H, "bad object count '%s'", value);
		break;
	case O_DWELL:
		if (!parse_duration(value, &w->o.dwell) || w->o.dwell <= 0)
			return usage_error(H, "bad dwell time '%s'", value);
		break;
	case 'F': w->follow = true; break;
	case 'o': rc->o.output = value; break;
	case 'q': rc->o.quiet = true; break;
	case O_SELFTEST: return watch_probe(true);
	}
	return -1;
}

/* -1 to go on, or the exit code (help shown, or bad usage). */
static int parse_options(struct watch_args *a, int argc, char **argv)
{
	const struct cmd_help *H = &watch_help;
	int code, i;

	code = opt_parse(H, argc, argv, watch_opt, a, &i);
	if (code >= 0)
		return code;
	if (i < argc)
		a->rc->o.argv = argv + i;
	if (!a->cache == !a->callsite)
		return usage_error(H, "say what to watch: --cache NAME or --callsite FUNC");
	if (a->offsets && a->w->o.scan)
		return usage_error(H, "--offset and --scan exclude each other");
	if (a->w->follow && !a->rc->o.argv)
		return usage_error(H, "-F needs a COMMAND");
	return -1;
}

int cmd_watch(int argc, char **argv)
{
	struct watch *w = calloc(1, sizeof(*w));
	struct recording *rc = calloc(1, sizeof(*rc));
	struct watch_args a = { .w = w, .rc = rc, .o = &rc->o };
	struct kmt_event_filter ef[4];
	char fbufs[4][300];
	struct kmt_diag d = { 0 };
	struct budget bg;
	struct recording_hooks h = { .start = w_start, .fds = w_fds, .ready = w_ready, .stop = w_stop,
			       .done = w_done, .arg = w };
	int code;

	if (!w || !rc) {
		free(w);
		free(rc);
		return error("out of memory");
	}
	recording_opts_defaults(&rc->o);
	budget_here(&bg);
	rc->o.hold_mb = (size_t)(bg.watch_hold >> 20);
	w->o.ctl_buffer_kb = bg.watch_ctl_kb;
	rc->o.cmdline = argv;
	rc->o.cmdline_n = argc;
	w->o.dwell = 0.1;
	w->o.ring_pages = REC_WATCH_RING_PAGES;
	code = parse_options(&a, argc, argv);
	if (code >= 0)
		goto out;
	/* Candidates only: the recording keeps every free, whoever frees. */
	memcpy(w->pids, rc->o.pids, sizeof(w->pids));
	w->o.nr_pids = rc->o.nr_pids;
	rc->o.nr_pids = 0;
	rc->o.status = !rc->o.quiet && isatty(STDERR_FILENO);
	if (resolve_target(&w->o.target, a.cache, a.callsite, &d) ||
	    (a.offsets && parse_offsets(w, a.offsets, &d))) {
		code = error("%s", d.msg);
		goto out;
	}
	if (!a.offsets)
		w->o.scan = true;
	if (w->type[0]) {
		struct kmt_btf_field f;

		if (!w->btf)
			w->btf = kmt_btf_open(NULL, &d);
		if (!w->btf || kmt_btf_field(w->btf, w->type, &f, &d)) {
			code = error("--type %s: %s", w->type, d.msg);
			goto out;
		}
		w->o.type = w->type;
		w->o.btf = w->btf;
	}
	w->o.nr_slots = w->o.scan || w->o.nr_offs == 1 ? KMT_HWBP_MAX_SLOTS : w->o.nr_offs;
	/* Before anything is created: a machine where they never fire gets a refusal. */
	code = watch_probe(false);
	if (code)
		goto out;
	set_events(w, rc, ef, fbufs);
	code = recording_run(rc, &h);
out:
	kmt_watcher_free(w->w);
	kmt_btf_close(w->btf);
	free(rc->o.events_spec);
	free(rc);
	free(w);
	return code;
}
