/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libFuzzer target: the allocation model, fed synthetic events.
 *
 * Input: one options byte, then 16-byte events (a short tail is ignored).
 *
 * Options byte: bit 0 filters by pid (bits 1-3), bit 4 by comm (bits 5-6
 * pick the name), bit 7 clear gives the model a cmdlines table and kernel
 * symbols (so stacks after page allocations name page call sites).
 *
 * Event bytes:
 *	 0  low nibble: kmalloc, kfree, cache alloc, cache free, page alloc,
 *	    page free, page free batched, pcpu alloc, pcpu free, fork, exec,
 *	    exit, rename, newtask, stack, and 15 = special (high nibble % 4:
 *	    loss marker with a count, loss of unknown size, kmt_model_set_comm,
 *	    access). Bit 4 also marks page events as struct page pointers.
 *	 1  CPU (% 4; 0xfc..0xff: 4095, 4096, 65535, -1)
 *	 2  pid (% 8) and pid2 (>> 3, % 8)
 *	 3  object address, from 8 (so objects collide), + a small offset
 *	 4  call site, from 8
 *	 5-6 bytes_req (14 bits; bit 15 scales it by 256)
 *	 7  bytes_alloc rule (bits 0-1) and cache name (bits 2-4)
 *	 8  gfp (% 8) and node
 *	 9  time step (strictly increasing; >= 0xf0: seconds)
 *	10  order (% 13) and migratetype
 *	11  task name / exec file name, and how much of it is passed
 *	12-14 stack: depth (% 9) and frames
 *	15  loss count, access offset and write flag
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/event.h>
#include <kmemtrace/model.h>
#include "touch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define EV_BYTES 16

static struct kmt_symbols *syms;
static struct kmt_comms *cmdlines;

static const char kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81100000 T __alloc_pages\n"
	"ffffffff81100400 T alloc_pages_mpol\n"
	"ffffffff81200000 T __kmalloc_noprof\n"
	"ffffffff81300000 T do_sys_openat2\n"
	"ffffffff81300800 t ext4_readdir\n"
	"ffffffff81400000 T stack_trace_save\n"
	"ffffffff81500000 W weak_function\n"
	"ffffffff81600000 D some_data\n"
	"ffffffffc0000000 t module_function\t[mod]\n";

static const char cmdlines_text[] = "0 swapper\n1 systemd\n2 kthreadd\n3 make\n5 sh\n";

static const uint64_t addrs[8] = {
	0, 0xffff888000001000ULL, 0xffff888000001040ULL, 0xffff888000002000ULL,
	0xffff888000003000ULL, 0x1000, UINT32_MAX, UINT64_MAX,
};

static const uint64_t sites[8] = {
	0, 0xffffffff81200010ULL, 0xffffffff81300020ULL, 0xffffffff81300810ULL,
	0xffffffff81500040ULL, 0xffffffffc0000100ULL, 0xffffffff90000000ULL, 0x10,
};

static const uint64_t frames[12] = {
	0xffffffff81400010ULL, 0xffffffff81100020ULL, 0xffffffff81100410ULL,
	0xffffffff81200040ULL, 0xffffffff81300100ULL, 0xffffffff81300900ULL,
	0xffffffff81500008ULL, 0xffffffffc0000010ULL, 0xffffffff81600010ULL,
	0xffffffff00000000ULL, 0, UINT64_MAX,
};

static const uint64_t gfps[8] = {
	0, 0xcc0, 0x2800, 0x400cc0, 0x140cca, 0x820, 1ULL << 63, UINT64_MAX,
};

/* Cache names: pointer and length (not NUL-terminated in real records). */
static const struct {
	const char *s;
	uint32_t len;
} names[8] = {
	{ NULL, 0 },
	{ "filp", 4 },
	{ "dentry", 6 },
	{ "task_struct", 11 },
	{ "filp_extra", 4 },		/* "filp", as a prefix of a longer string */
	{ "a-cache-name-longer-than-the-forty-eight-bytes-kept-by-the-model", 65 },
	{ "names\0cache", 11 },		/* a NUL inside */
	{ "", 0 },
};

static const char *const task_names[8] = {
	"make", "kworker/0:1", "", "a-very-long-command-name-indeed", "/usr/bin/make", "/",
	"bin/", "sh",
};

static const char *const filter_comms[4] = { "make", "sh", "<...>", "<idle>" };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	syms = kmt_symbols_parse(kallsyms, sizeof(kallsyms) - 1);
	cmdlines = kmt_comms_new();
	if (!syms || !cmdlines || kmt_comms_parse(cmdlines, cmdlines_text, sizeof(cmdlines_text) - 1)) {
		fprintf(stderr, "fuzz-model: setup failed\n");
		abort();
	}
	return 0;
}

static void walk_sites(const struct kmt_site *s, size_t n)
{
	size_t i;
	int b;

	for (i = 0; i < n; i++) {
		uint64_t t = 0;

		for (b = 0; b < KMT_LIFE_BUCKETS; b++)
			t += s[i].life[b] * kmt_life_bucket_ns(b);
		sink += t + s[i].addr + s[i].allocs + s[i].frees + s[i].free_calls + s[i].bytes_req +
			s[i].bytes_alloc + s[i].bytes_freed + s[i].cross_cpu + s[i].live_objects +
			s[i].live_bytes + s[i].uncertain + s[i].failures + s[i].life_min +
			s[i].life_max + s[i].kinds + s[i].order_mask;
	}
}

static void walk_results(const struct kmt_model *m)
{
	const struct kmt_summary *s = kmt_model_summary(m);
	const struct kmt_site *si;
	const struct kmt_cache *ca;
	const struct kmt_proc *pr;
	const struct kmt_misuse *mu;
	const struct kmt_outstanding *ou;
	const struct kmt_gfp_count *gf;
	size_t n, i;
	int b;

	if (s->nr_cpus < 0 || s->nr_cpus > 65536) {
		fprintf(stderr, "fuzz-model: summary says %d CPUs\n", s->nr_cpus);
		abort();
	}
	if (s->nr_cpus) {
		touch(s->lost_by_cpu, (size_t)s->nr_cpus * sizeof(*s->lost_by_cpu));
		touch(s->events_by_cpu, (size_t)s->nr_cpus * sizeof(*s->events_by_cpu));
	}
	touch(s, sizeof(*s));

	si = kmt_model_sites(m, &n);
	walk_sites(si, n);
	si = kmt_model_page_sites(m, &n);
	walk_sites(si, n);
	ca = kmt_model_caches(m, &n);
	for (i = 0; i < n; i++) {
		if (ca[i].name_len >= sizeof(ca[i].name)) {
			fprintf(stderr, "fuzz-model: cache name length %u\n", ca[i].name_len);
			abort();
		}
		touch(ca[i].name, ca[i].name_len + 1);
		sink += ca[i].object_size + ca[i].allocs + ca[i].frees + ca[i].live_objects +
			ca[i].untraced + ca[i].is_kmalloc;
	}
	pr = kmt_model_procs(m, &n);
	for (i = 0; i < n; i++) {
		touch_str(pr[i].comm);
		sink += (uint64_t)pr[i].pid + pr[i].allocs + pr[i].frees + pr[i].live_bytes +
			pr[i].page_allocs + pr[i].pages;
	}
	mu = kmt_model_misuse(m, &n);
	for (i = 0; i < n; i++) {
		touch_str(kmt_misuse_name(mu[i].kind));
		touch_str(kmt_severity_name(kmt_misuse_severity(mu[i].kind)));
		touch_str(mu[i].detail);
		sink += mu[i].cache + mu[i].site + mu[i].alloc_site + mu[i].count + mu[i].first_ts +
			(uint64_t)mu[i].first_pid + mu[i].first_ptr;
	}
	ou = kmt_model_outstanding(m, &n);
	for (i = 0; i < n; i++) {
		sink += ou[i].site + ou[i].objects + ou[i].bytes_req + ou[i].bytes_alloc +
			ou[i].in_untraced_caches + ou[i].age_min + ou[i].age_max;
		for (b = 0; b < KMT_LIFE_BUCKETS; b++)
			sink += ou[i].age[b];
	}
	gf = kmt_model_gfp(m, &n);
	for (i = 0; i < n; i++)
		sink += gf[i].gfp + gf[i].allocs + gf[i].pages;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum kmt_kind kinds[15] = {
		KMT_EV_KMALLOC, KMT_EV_KFREE, KMT_EV_CACHE_ALLOC, KMT_EV_CACHE_FREE,
		KMT_EV_PAGE_ALLOC, KMT_EV_PAGE_FREE, KMT_EV_PAGE_FREE_BATCHED,
		KMT_EV_PCPU_ALLOC, KMT_EV_PCPU_FREE, KMT_EV_FORK, KMT_EV_EXEC,
		KMT_EV_EXIT, KMT_EV_RENAME, KMT_EV_NEWTASK, KMT_EV_STACK,
	};
	static const int32_t odd_cpus[4] = { 4095, 4096, 65535, -1 };
	struct kmt_model_opts o = { 0 };
	struct kmt_model *m;
	uint64_t ts = 1000, stack[8];
	/* Even-sized inputs go in through kmt_model_events(), up to 8 at a time. */
	bool batched = size % 2 == 0;
	struct kmt_event batch[8];
	uint64_t bstack[8][8];
	unsigned int nb = 0;
	size_t pos;
	uint8_t ob;
#define FLUSH() do { if (nb) kmt_model_events(m, batch, nb); nb = 0; } while (0)

	if (size < 1)
		return 0;
	ob = data[0];
	if (ob & 1)
		o.pid = (ob >> 1) & 7;
	if (ob & 0x10)
		o.comm = filter_comms[(ob >> 5) & 3];
	if (!(ob & 0x80)) {
		o.cmdlines = cmdlines;
		o.syms = syms;
	}
	m = kmt_model_new(&o);
	if (!m)
		return 0;

	for (pos = 1; pos + EV_BYTES <= size; pos += EV_BYTES) {
		const uint8_t *e = data + pos;
		struct kmt_event ev;
		unsigned int op = e[0] & 15, sub = (e[0] >> 4) & 3, i, depth;
		int32_t cpu = e[1] >= 0xfc ? odd_cpus[e[1] & 3] : e[1] % 4;
		uint64_t req = (uint64_t)(e[5] | (e[6] & 0x3f) << 8);
		const char *tn = task_names[e[11] & 7];
		size_t tlen = strlen(tn);

		if (e[6] & 0x80)
			req <<= 8;
		ts += e[9] >= 0xf0 ? (uint64_t)(e[9] - 0xef) * 1000000000ULL : 1 + e[9];
		switch ((e[11] >> 3) & 3) {
		case 1:
			tlen /= 2;
			break;
		case 2:
			tlen = 0;
			break;
		case 3:
			tlen += 1;		/* the NUL too */
			break;
		}

		if (op == 15 && sub <= 1) {
			FLUSH();
			kmt_model_lost(m, cpu, sub == 0 ? (int64_t)e[15] * 3 : -1, ts);
			continue;
		}
		if (op == 15 && sub == 2) {
			FLUSH();
			kmt_model_set_comm(m, (e[2] >> 3) % 8, tn, tlen);
			continue;
		}

		memset(&ev, 0, sizeof(ev));
		ev.ts = ts;
		ev.cpu = cpu;
		ev.pid = e[2] % 8;
		ev.kind = op == 15 ? KMT_EV_ACCESS : kinds[op];
		/* Some page and per-CPU frees are vmalloc events instead. */
		if (op == KMT_EV_PAGE_FREE_BATCHED - 1 && sub == 3)
			ev.kind = KMT_EV_VMAP_ALLOC;
		if (op == KMT_EV_PCPU_FREE - 1 && sub == 3)
			ev.kind = KMT_EV_VMAP_FREE;
		if (ev.kind == KMT_EV_VMAP_ALLOC && (e[11] & 1))
			ev.flags |= KMT_EVF_FAILED;
		ev.call_site = sites[e[4] & 7];
		ev.ptr = addrs[e[3] & 7] + ((e[3] >> 3) & 3) * 8;
		ev.bytes_req = req;
		switch (e[7] & 3) {
		case 0:
			ev.bytes_alloc = req <= 8 ? 8 : 1ULL << (64 - __builtin_clzll(req - 1));
			break;
		case 1:
			ev.bytes_alloc = req;
			break;
		case 2:
			ev.bytes_alloc = req + (e[15] & 63);
			break;
		default:
			ev.bytes_alloc = 0;
			break;
		}
		ev.gfp = gfps[e[8] & 7];
		ev.node = (int32_t)((e[8] >> 3) % 3) - 1;
		ev.order = e[10] % 13;
		ev.migratetype = (int32_t)((e[10] >> 4) % 10) - 1;
		ev.pid2 = (e[2] >> 3) % 8;
		switch (ev.kind) {
		case KMT_EV_CACHE_ALLOC:
		case KMT_EV_CACHE_FREE: {
			unsigned int k = (e[7] >> 2) & 7;

			ev.name = names[k].s;
			ev.name_len = names[k].len;
			if (!ev.name_len)
				ev.flags |= KMT_EVF_NO_NAME;
			break;
		}
		case KMT_EV_PAGE_ALLOC:
		case KMT_EV_PAGE_FREE:
		case KMT_EV_PAGE_FREE_BATCHED:
			if (e[0] & 0x10)
				ev.flags |= KMT_EVF_PAGE_PTR;
			break;
		case KMT_EV_FORK:
		case KMT_EV_EXEC:
		case KMT_EV_EXIT:
		case KMT_EV_RENAME:
		case KMT_EV_NEWTASK:
			ev.str2 = tn;
			ev.str2_len = (uint32_t)tlen;
			break;
		case KMT_EV_STACK:
			depth = e[12] % 9;
			for (i = 0; i < depth; i++)
				stack[i] = frames[(e[13] + i * (1u + (e[14] & 7))) % 12];
			ev.stack = (const uint8_t *)stack;
			ev.nr_stack = depth;
			break;
		case KMT_EV_ACCESS:
			ev.offset = e[15] >> 1;
			if (e[15] & 1)
				ev.flags |= KMT_EVF_WRITE;
			break;
		}
		if (!batched) {
			kmt_model_event(m, &ev);
			continue;
		}
		batch[nb] = ev;
		if (ev.stack) {
			memcpy(bstack[nb], stack, ev.nr_stack * sizeof(stack[0]));
			batch[nb].stack = (const uint8_t *)bstack[nb];
		}
		if (++nb == 8 || (e[10] & 1))
			FLUSH();
	}
	FLUSH();
#undef FLUSH

	kmt_model_finish(m, size % 3 == 0 ? 0 : ts + 1000);
	walk_results(m);
	kmt_model_free(m);
	return 0;
}
