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
#include "report/analysis.h"
#include "cmd.h"
#include "util/util.h"
#include "util/opt.h"

enum { O_RAWIP = 256, O_HASH };

struct dump {
	struct kmt_hashptr hash;
	struct kmt_flags *gfp_names;	/* from the file's formats, or NULL */
	struct analysis_opts an;	/* -p, --comm, --time */
	uint64_t lo, hi;		/* the same in the trace clock */
	struct kmt_symbols *syms;
	struct kmt_comms *comms;
	bool raw_ip, all;
	uint64_t t0;
	bool started;
	/*
	 * With -a: the allocation model, fed every event, says which
	 * allocation each stack was given to (the rules are its own).
	 */
	struct kmt_model *m;
};

static const struct opt dump_opts[] = {
	OPT_GROUP(analysis_group, struct dump, an, AN_PID | AN_COMM | AN_TIME, "events of"),
	{ O_RAWIP, 0, "raw-ip", NULL, "call sites as addresses" },
	{ O_HASH, 0, "hash-pointers", "KEY", "kernel addresses and pfns as keyed hashes", OPT_OPTARG },
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
	const char *fn = dp->raw_ip ? NULL : kmt_symbols_lookup(dp->syms, a, &off);

	if (fn)
		snprintf(buf, len, "%s+0x%" PRIx64, fn, off);
	else
		kmt_hashptr_fmt(&dp->hash, a, buf, len);
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

	kmt_hashptr_fmt(&dp->hash, ptr, p, sizeof(p));
	if (k == KMT_EV_NONE)
		printf(" of no allocation");
	else if (k == KMT_EV_PAGE_ALLOC)
		printf(" of %s pfn=0x%" PRIx64, kmt_kind_name(k), ptr);
	else
		printf(" of %s %s=%s", kmt_kind_name(k), k == KMT_EV_VMAP_ALLOC ? "addr" : "ptr", p);
}

static void print_event(const struct dump *dp, const struct kmt_event *ev)
{
	const char *comm = kmt_comm_name(dp->comms, ev->pid);
	char site[256], p[32], g[512];
	uint64_t t = since(dp->t0, ev->ts);
	uint32_t i;

	printf("%6" PRIu64 ".%06" PRIu64 " [%03d] %s-%d %s", t / 1000000000, t / 1000 % 1000000, ev->cpu,
	       comm, ev->pid, kmt_kind_name(ev->kind));
	if (ev->call_site)
		printf(" %s", site_str(dp, ev->call_site, site, sizeof(site)));
	kmt_hashptr_fmt(&dp->hash, ev->ptr, p, sizeof(p));
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
	case KMT_EV_ACCESS:
		printf(" obj=%s offset=%u %s", p, ev->offset, ev->flags & KMT_EVF_WRITE ? "write" : "read");
		break;
	}
	if (ev->name_len)
		printf(" cache=%.*s", (int)ev->name_len, ev->name);
	if (ev->node >= 0 && ev->kind != KMT_EV_PAGE_ALLOC)
		printf(" node=%d", ev->node);
	if (ev->kind == KMT_EV_STACK && dp->m)
		stack_claim(dp, ev);
	putchar('\n');
	for (i = 0; i < ev->nr_stack; i++) {
		uint64_t a;

		a = kmt_event_stack(ev, i);
		printf("\t=> %s\n", site_str(dp, a, site, sizeof(site)));
	}
}

static bool wanted(const struct dump *dp, const struct kmt_event *ev)
{
	if (!dp->all && (ev->kind >= KMT_EV_FORK && ev->kind <= KMT_EV_STACK))
		return false;
	if (ev->ts < dp->lo || ev->ts > dp->hi)
		return false;
	if (dp->an.mo.pid && ev->pid != dp->an.mo.pid)
		return false;
	if (dp->an.mo.comm && strcmp(kmt_comm_name(dp->comms, ev->pid), dp->an.mo.comm))
		return false;
	return true;
}

/* What the stream says of losses and damage, to the model as the analysis says it. */
static void feed_marker(struct dump *dp, const struct kmt_srec *sr, int mb)
{
	if (sr->buffer != mb)
		return;
	if (sr->skip)
		kmt_model_gap(dp->m, sr->cpu, sr->skip->ts_from, sr->skip->ts_to);
	else if (sr->lost_marker && sr->truncated)
		kmt_model_truncated(dp->m, sr->cpu, sr->rec.ts);
	else if (sr->lost_marker)
		kmt_model_lost(dp->m, sr->cpu, sr->lost, sr->rec.ts);
}

static int run(struct dump *dp, struct kmt_file *f)
{
	const struct kmt_file_info *fi = kmt_file_info(f);
	struct kmt_decoder *dec;
	struct kmt_stream *s;
	struct kmt_diag d = { 0 };
	struct kmt_srec sr;
	struct kmt_event ev;
	struct kmt_skip *lost = NULL;
	size_t len, nr_lost = 0;
	const char *text;
	int bufs[2] = { kmt_file_main_buffer(f), kmt_file_access_buffer(f) };
	int mb = bufs[0], nb = bufs[1] >= 0 ? 2 : 1, ncpu, ret;
	bool *shown;

	text = kmt_file_kallsyms(f, &len);
	dp->syms = kmt_symbols_parse(text, len);
	dp->comms = kmt_comms_new();
	text = kmt_file_cmdlines(f, &len);
	if (dp->comms)
		kmt_comms_parse(dp->comms, text, len);
	dec = kmt_decoder_new(kmt_file_formats(f), fi->big_endian, fi->kernel_long_size);
	if (!dp->syms || !dp->comms || !dec)
		return error("out of memory");
	if (dp->all) {
		struct kmt_model_opts mo = { .syms = dp->syms, .cmdlines = dp->comms };

		kmt_model_opts_from_file(&mo, f);
		if (!(dp->m = kmt_model_new(&mo)))
			return error("out of memory");
	}
	{
		const struct kmt_format *fmt = kmt_formats_find(kmt_file_formats(f), "kmem", "mm_page_alloc");

		if (!fmt)
			fmt = kmt_formats_find(kmt_file_formats(f), "kmem", "kmalloc");
		dp->gfp_names = fmt ? kmt_flags_from_format(fmt, "gfp_flags") : NULL;
	}
	if (mb < 0) {
		kmt_decoder_free(dec);
		kmt_model_free(dp->m);
		return EXIT_OK;
	}
	s = kmt_stream_open_buffers(f, bufs, nb, 0, 1, &d);
	/* Per CPU: was the last event shown? Its stack follows it there. */
	ncpu = kmt_file_buffer(f, mb)->nr_cpus + (nb > 1 ? kmt_file_buffer(f, bufs[1])->nr_cpus : 0);
	shown = calloc((size_t)ncpu + 1, sizeof(*shown));
	if (!s || !shown) {
		kmt_decoder_free(dec);
		kmt_model_free(dp->m);
		kmt_stream_close(s);
		free(shown);
		return error("%s", s ? "out of memory" : d.msg);
	}
	while ((ret = kmt_stream_next(s, &sr, &d)) > 0) {
		if (!dp->started) {
			/* The trace's own start, once; every time printed counts from it. */
			dp->started = true;
			dp->t0 = sr.rec.ts;
			dp->lo = dp->an.window[0] > 0 ? dp->t0 + (uint64_t)(dp->an.window[0] * 1e9) : 0;
			dp->hi = dp->an.window[1] >= 0 ? dp->t0 + (uint64_t)(dp->an.window[1] * 1e9) : UINT64_MAX;
			printf("# %s: times are seconds from the trace's first event, at %.6f s of the %s clock\n",
			       fi->path, (double)dp->t0 / 1e9, fi->clock ? fi->clock : "trace");
		}
		if (dp->m)
			feed_marker(dp, &sr, mb);
		if (sr.skip) {
			struct kmt_skip *v = realloc(lost, sizeof(*v) * (nr_lost + 1));

			if (!v) {
				ret = kmt_diag_set(&d, -ENOMEM, "out of memory");
				break;
			}
			lost = v;
			lost[nr_lost++] = *sr.skip;
			if (sr.cpu < 0)
				printf("OTHER CPUS: DATA MISSING (the file ends at byte %" PRIu64 ")\n",
				       sr.skip->from);
			else
				printf("CPU %d: DAMAGED DATA SKIPPED HERE (bytes %" PRIu64 "-%" PRIu64 "%s)\n",
				       sr.cpu, sr.skip->from, sr.skip->to, sr.skip->to_end ? ", to its end" : "");
			continue;
		}
		if (sr.lost_marker) {
			const char *what = sr.buffer == mb ? "EVENTS" : "ACCESS SAMPLES";

			if (sr.truncated)
				printf("CPU %d: RECORDING TRUNCATED HERE\n", sr.cpu);
			else if (sr.lost > 0)
				printf("CPU %d: LOST %" PRId64 " %s\n", sr.cpu, sr.lost, what);
			else
				printf("CPU %d: LOST %s\n", sr.cpu, what);
			continue;
		}
		ret = kmt_decode(dec, &sr.rec, sr.cpu, &ev);
		if (ret < 0) {
			error("%s: CPU %d, page at offset %" PRIu64 ": a record (time %" PRIu64
			      ") does not fit its format", fi->path, sr.cpu,
			      kmt_stream_offset(s, sr.idx), sr.rec.ts);
			ret = KMT_EFORMAT;
			d.msg[0] = '\0';	/* said already */
			break;
		}
		if (ret == 0)
			continue;
		note_task(dp->comms, &ev);
		if (dp->m && kmt_model_event(dp->m, &ev)) {
			ret = kmt_diag_set(&d, -ENOMEM, "out of memory");
			break;
		}
		/* A stack follows its event on that CPU (-a shows them, and whose they are). */
		if (ev.kind == KMT_EV_STACK) {
			if (shown[sr.idx] && dp->all)
				print_event(dp, &ev);
			continue;
		}
		shown[sr.idx] = wanted(dp, &ev);
		if (shown[sr.idx])
			print_event(dp, &ev);
	}
	if (ret < 0 && d.msg[0])
		error("%s", d.msg);
	kmt_stream_close(s);
	kmt_decoder_free(dec);
	kmt_model_free(dp->m);
	free(shown);
	/* Every event that could be read, then what a damaged file lost. */
	if (ret >= 0 && file_damage(f, dp->syms, lost, nr_lost))
		ret = KMT_EFORMAT;
	free(lost);
	return ret < 0 ? EXIT_FAIL : EXIT_OK;
}

static int dump_opt(void *arg, int id, const char *value)
{
	struct dump *dp = arg;

	switch (id) {
	case O_RAWIP: dp->raw_ip = true; break;
	case O_HASH:
		if (kmt_hashptr_init(&dp->hash, value))
			return error("cannot get a random key");
		break;
	case 'a': dp->all = true; break;
	}
	return -1;
}

int cmd_dump(int argc, char **argv)
{
	struct dump dp = { .an = ANALYSIS_OPTS_INIT };
	const char *path = "kmemtrace.dat";
	struct kmt_diag d = { 0 };
	struct kmt_file *f;
	int ret, code, i;

	code = opt_parse(&dump_help, argc, argv, dump_opt, &dp, &i);
	code = code >= 0 ? code : opt_file(&dump_help, argc, argv, i, &path);
	if (code >= 0)
		return code;
	if (kmt_file_open(&f, path, &d))
		return error("%s", d.msg);
	ret = run(&dp, f);
	kmt_symbols_free(dp.syms);
	kmt_comms_free(dp.comms);
	kmt_flags_free(dp.gfp_names);
	kmt_file_close(f);
	return ret;
}
