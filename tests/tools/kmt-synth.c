/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt-synth: synthetic trace files for what a real recording on the test
 * machine cannot show on demand (built with the unit tests' trace builder).
 *
 *   kmt-synth full FILE   2 s of slab, page, vmalloc and task events on two
 *                         CPUs with a loss on CPU 1, misuse of every kind,
 *                         watchpoint samples (an access section) and stacks
 *   kmt-synth arch FILE   a small trace of an aarch64 kernel
 *   kmt-synth idle FILE   interrupts on an idle CPU (pid 0): 3 bio allocations,
 *                         freed by the idle task, and one task's kmalloc
 *   kmt-synth wide FILE [STEPS]
 *                         48 CPUs, many chunks each (for -j): most objects
 *                         freed on another CPU, losses on two CPUs, frees of
 *                         objects older than the trace, double frees, stacks,
 *                         pages and tasks; an allocation a step, 60,000
 *                         steps (about 3 events a step) unless STEPS says
 *   kmt-synth shards FILE four CPUs of what a sharded model decides in
 *                         stream order (-j): large kmallocs traced twice,
 *                         stacks after an interrupt's allocation, objects
 *                         freed (and allocated again) before their stacks,
 *                         pages and vmalloc areas named from stacks, tasks
 *                         renamed, per-CPU areas, losses, misuse; then 2 s
 *                         of page allocations alone
 *   kmt-synth unnamed FILE
 *                         a 6.1-6.17 kernel's layout (kmem_cache_alloc names
 *                         no cache, kmem_cache_free does): objects named by
 *                         their frees, by their pages (at allocation, or at
 *                         the end), by a size one cache of the slab list
 *                         has, and some that nothing names; no misuse
 *   kmt-synth kernel VERSION FILE
 *                         a known workload in the event formats of
 *                         tests/data/formats/VERSION (4.18 ... 6.8, Debian's
 *                         kernels), with the events that kernel has: 10
 *                         kmallocs of 100 bytes (kmalloc-128), 5 more on a
 *                         node (kmalloc_node where it exists: kmalloc-256 of
 *                         200), 4 filp objects (184 -> 192; named by the
 *                         events where they carry a name, else by the slab
 *                         list), 3 more on a node, all freed; 2 order-1
 *                         page allocations, freed once each (a batched free
 *                         too); one per-CPU area; the task named by exec
 *   kmt-synth deep FILE   one call site with three stacks that share their
 *                         four innermost callers and differ further out
 *   kmt-synth churn FILE LIVE STEPS
 *                         two CPUs: LIVE objects allocated and kept, then
 *                         STEPS allocations each freed a step later (to
 *                         measure memory per live object, and per event)
 *
 * Deterministic: the same file every time. Formats are read from
 * $KMT_TESTDATA/formats (tests/data).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/tbuild.h"

#define MS 1000000ULL
#define FN(i) (0xffffffff81000000ULL + (uint64_t)(i) * 0x10000)
#define OBJ(n) (0xffff888100000000ULL + (uint64_t)(n) * 0x1000)

static const char ksyms[] =
	"ffffffff81000000 T trace_event_raw_event_kmalloc\n"
	"ffffffff81010000 T __kmalloc_noprof\n"
	"ffffffff81020000 T kmem_cache_alloc_noprof\n"
	"ffffffff81030000 T do_sys_open\n"
	"ffffffff81040000 T alloc_inode\n"
	"ffffffff81050000 T seq_read_iter\n"
	"ffffffff81060000 T load_elf_binary\n"
	"ffffffff81070000 T kfree_sensible\n"
	"ffffffff81080000 T sock_alloc_send_pskb\n"
	"ffffffff81090000 T __x64_sys_openat\n"
	"ffffffff810a0000 T __x64_sys_read\n"
	"ffffffff810b0000 T do_syscall_64\n"
	"ffffffff810c0000 T entry_SYSCALL_64_after_hwframe\n"
	"ffffffff810d0000 T array_map_alloc\n"
	"ffffffff810e0000 T inode_init_once\n"
	"ffffffff810f0000 T zzz_end\n";

/* Sites: function index and offset, the size requested and the cache. */
static const struct {
	int fn;
	const char *cache;		/* NULL: kmalloc */
	uint64_t req, alloc;
	int callers[3];			/* stack above the site, innermost first */
} sites[] = {
	{ 3, "filp", 232, 256, { 9, 11, 12 } },
	{ 4, "inode_cache", 600, 640, { 3, 9, 11 } },
	{ 5, NULL, 100, 128, { 10, 11, 12 } },
	{ 6, NULL, 1337, 2048, { 11, 12, 0 } },
	{ 8, NULL, 3000, 4096, { 10, 11, 12 } },
};

static void stack(struct tb *tb, int cpu, uint64_t ts, int s)
{
	uint64_t f[6] = { FN(0) + 0x10, sites[s].cache ? FN(2) + 0x20 : FN(1) + 0x20,
			  FN(sites[s].fn) + 0x40 };
	int n = 3, i;

	for (i = 0; i < 3 && sites[s].callers[i]; i++)
		f[n++] = FN(sites[s].callers[i]) + 0x18;
	tb_emit(tb, cpu, ts, "ftrace", "kernel_stack", 1, (struct tb_val[]){
		{ "size", (uint64_t)n }, { "caller", 0, NULL, f, n }, { NULL } });
}

static int site_of[8192];		/* by object number */

static void alloc(struct tb *tb, int cpu, uint64_t ts, int pid, int s, uint64_t obj)
{
	site_of[(obj - OBJ(0)) / 0x1000 % 8192] = s;
	uint64_t site = FN(sites[s].fn) + 0x40;

	if (sites[s].cache)
		tb_cache_alloc(tb, cpu, ts, pid, site, obj, sites[s].cache, sites[s].req, sites[s].alloc);
	else
		tb_kmalloc(tb, cpu, ts, pid, site, obj, sites[s].req, sites[s].alloc);
	stack(tb, cpu, ts, s);
}

static void release(struct tb *tb, int cpu, uint64_t ts, int pid, int s, uint64_t obj)
{
	if (sites[s].cache)
		tb_cache_free(tb, cpu, ts, pid, FN(7) + 0x8, obj, sites[s].cache);
	else
		tb_kfree(tb, cpu, ts, pid, FN(7) + 0x8, obj);
}

static void page(struct tb *tb, int cpu, uint64_t ts, int pid, uint64_t pfn, int order)
{
	tb_emit(tb, cpu, ts, "kmem", "mm_page_alloc", pid, (struct tb_val[]){
		{ "pfn", pfn }, { "order", (uint64_t)order }, { "gfp_flags", 0xcc0 },
		{ "migratetype", (uint64_t)(order & 1) }, { NULL } });
}

static void fork_(struct tb *tb, int cpu, uint64_t ts, int parent, int child, const char *comm)
{
	tb_emit(tb, cpu, ts, "sched", "sched_process_fork", parent, (struct tb_val[]){
		{ "parent_comm", 0, comm }, { "parent_pid", (uint64_t)parent }, { "child_comm", 0, comm },
		{ "child_pid", (uint64_t)child }, { NULL } });
}

static void full(struct tb *tb)
{
	static const char *const comms[] = { "bash", "make", "cc1", "ld" };
	uint64_t ts = 1 * MS, obj = 1;
	int i, k, pid;

	tb_kallsyms(tb, ksyms);
	tb_cmdlines(tb, "100 bash\n101 make\n");
	fork_(tb, 0, ts, 100, 101, "make");
	/* 2 s in 1000 steps: a growing live set, a burst in the middle, frees after. */
	for (i = 0; i < 1000; i++, ts += 2 * MS) {
		int cpu = i & 1, s = i % 5;

		pid = 100 + i % 4;
		if (i == 300)
			tb_lost(tb, 1, 250);
		if (i % 100 == 50)
			fork_(tb, cpu, ts, pid, 200 + i / 100, comms[(i / 100) % 4]);
		alloc(tb, cpu, ts, pid, s, OBJ(obj++));
		if (i >= 400 && i < 500)
			for (k = 0; k < 4; k++)
				alloc(tb, cpu, ts + 1 + k, pid, 2, OBJ(obj++));
		if (i % 10 == 0)
			page(tb, cpu, ts + 5, pid, 0x10000 + (uint64_t)i * 8, (i / 10) % 4);
		if (i % 50 == 25) {
			tb_emit(tb, cpu, ts + 7, "vmalloc", "alloc_vmap_area", pid, (struct tb_val[]){
				{ "addr", 0xffffc90000000000ULL + (uint64_t)i * 0x100000 },
				{ "size", 139264 }, { NULL } });
		}
		if (i % 20 == 3) {
			/* Watchpoint samples on the object just allocated. */
			tb_access(tb, cpu, ts + 9, pid, FN(13) + 0x30, OBJ(obj - 1), 0, true, "f_count");
			tb_access(tb, cpu, ts + 11, pid, FN(5) + 0x64, OBJ(obj - 1), 8, false, "f_flags");
			tb_access(tb, cpu, ts + 12, pid, FN(14) + 0x22, OBJ(obj - 1), 16, i % 40 == 3,
				  "f_pos");
		}
		if (i >= 2 && i % 3)
			release(tb, cpu ^ (i % 7 == 0), ts + MS, pid, site_of[(obj - 3) % 8192], OBJ(obj - 3));
	}
	/* Misuse: a double free, kmem_cache_free of kmalloc, a cache mismatch, kfree of a cache object. */
	alloc(tb, 0, ts, 100, 2, OBJ(900001));
	tb_kfree(tb, 0, ts + 1, 100, FN(7) + 0x8, OBJ(900001));
	tb_kfree(tb, 0, ts + 2, 100, FN(7) + 0x8, OBJ(900001));
	alloc(tb, 0, ts + 3, 100, 2, OBJ(900002));
	tb_cache_free(tb, 0, ts + 4, 100, FN(7) + 0x8, OBJ(900002), "kmalloc-128");
	alloc(tb, 0, ts + 5, 100, 0, OBJ(900003));
	tb_cache_free(tb, 0, ts + 6, 100, FN(7) + 0x8, OBJ(900003), "dentry");
	alloc(tb, 0, ts + 7, 100, 1, OBJ(900004));
	tb_kfree(tb, 0, ts + 8, 100, FN(7) + 0x8, OBJ(900004));
}

#define WIDE_CPUS 48

static void wide(struct tb *tb, int steps)
{
	static const char *const comms[] = { "bash", "make", "cc1", "ld" };
	uint64_t ts = 1 * MS;
	int i;

	tb_kallsyms(tb, ksyms);
	tb_cmdlines(tb, "100 bash\n101 make\n");
	for (i = 0; i < steps; i++, ts += 20000) {
		int cpu = i % WIDE_CPUS, pid = 100 + i % 7, s = (i / 3) % 5;

		if (i % 5000 == 17)
			fork_(tb, cpu, ts, pid, 300 + i / 5000, comms[(i / 5000) % 4]);
		if (i == 20011)
			tb_lost(tb, 5, 40);
		if (i == 41040)
			tb_lost(tb, 40, 3);
		alloc(tb, cpu, ts, pid, s, OBJ(i + 1));
		/* Freed by the next CPU, a round later: a cross-CPU free. */
		if (i >= WIDE_CPUS && i % 11)
			release(tb, (cpu + 1) % WIDE_CPUS, ts + 7, pid, site_of[(i + 1 - WIDE_CPUS) % 8192],
				OBJ(i + 1 - WIDE_CPUS));
		if (i % 997 == 3)		/* an object older than the trace */
			tb_kfree(tb, cpu, ts + 9, pid, FN(7) + 0x8, OBJ(700000 + i));
		if (i % 1999 == 1000 && i >= WIDE_CPUS)	/* freed again, on a third CPU */
			release(tb, (cpu + 2) % WIDE_CPUS, ts + 11, pid, site_of[(i + 1 - WIDE_CPUS) % 8192],
				OBJ(i + 1 - WIDE_CPUS));
		if (i % 13 == 0)
			page(tb, cpu, ts + 13, pid, 0x20000 + (uint64_t)i * 4, i % 3);
		if (i % 13 == 6 && i > 13 * WIDE_CPUS)
			tb_emit(tb, (cpu + 5) % WIDE_CPUS, ts + 15, "kmem", "mm_page_free", pid,
				(struct tb_val[]){ { "pfn", 0x20000 + (uint64_t)(i - 6 - 13 * WIDE_CPUS) * 4 },
						   { "order", (uint64_t)((i - 6) % 3) }, { NULL } });
	}
}

/* A stack of @pid's (stack() gives pid 1: no interrupt rule applies there). */
static void kstack(struct tb *tb, int cpu, uint64_t ts, int pid, const uint64_t *f, int n)
{
	tb_emit(tb, cpu, ts, "ftrace", "kernel_stack", pid, (struct tb_val[]){
		{ "size", (uint64_t)n }, { "caller", 0, NULL, f, n }, { NULL } });
}

#define SHARD_CPUS 4
#define BIG(n) (0xffff888200000000ULL + (uint64_t)(n) * 0x4000)

/* One step of kmt-synth shards: what it does comes round every 8 steps. */
static void shards_step(struct tb *tb, int i, uint64_t ts)
{
	static const char *const comms[] = { "bash", "make", "cc1", "ld", "as" };
	int cpu = i % SHARD_CPUS, pid = 100 + i % 5, s = (i / 8) % 5;
	uint64_t site = FN(sites[s].fn) + 0x40, obj = OBJ(i + 1), other = OBJ(i + 1) + 0x800000;
	uint64_t f[5] = { FN(0) + 0x10, FN(1) + 0x20, site, FN(9) + 0x18, FN(11) + 0x18 };
	uint64_t g[3] = { FN(1) + 0x20, FN(8) + 0x40, FN(12) + 0x18 };
	uint64_t v[3] = { FN(2) + 0x20, FN(13) + 0x30, FN(11) + 0x18 };

	switch (i % 8) {
	case 0:	/* a large kmalloc, traced in the allocator and at its caller, and its stack */
		tb_kmalloc(tb, cpu, ts, pid, FN(1) + 0x30, BIG(i), 9000, 12288);
		tb_kmalloc(tb, cpu, ts + 1, pid, site, BIG(i), 9000, 12288);
		kstack(tb, cpu, ts + 2, pid, f, 5);
		break;
	case 1:	/* an interrupt's allocation and its stack between an allocation and its stack */
		tb_kmalloc(tb, cpu, ts, pid, site, obj, 100, 128);
		tb_kmalloc(tb, cpu, ts + 1, pid, FN(8) + 0x40, other, 64, 64);
		kstack(tb, cpu, ts + 2, pid, g, 3);
		kstack(tb, cpu, ts + 3, pid, f, 5);
		break;
	case 2:	/* ... and the object freed, or freed and allocated again elsewhere, before its stack */
		tb_kmalloc(tb, cpu, ts, pid, site, obj, 100, 128);
		tb_kmalloc(tb, cpu, ts + 1, pid, FN(8) + 0x40, other, 64, 64);
		kstack(tb, cpu, ts + 2, pid, g, 3);
		tb_kfree(tb, (cpu + 1) % SHARD_CPUS, ts + 3, pid, FN(7) + 0x8, obj);
		if (i % 16 == 2)
			tb_kmalloc(tb, (cpu + 2) % SHARD_CPUS, ts + 3, pid, site, obj, 100, 128);
		kstack(tb, cpu, ts + 4, pid, f, 5);
		break;
	case 3:	/* pages and a vmalloc area, named from stacks; a per-CPU area */
		page(tb, cpu, ts, pid, 0x30000 + (uint64_t)i * 4, i % 3);
		kstack(tb, cpu, ts + 1, pid, g, 3);
		tb_cache_alloc(tb, cpu, ts + 2, pid, FN(2) + 0x40, other, "vmap_area", 64, 64);
		kstack(tb, cpu, ts + 3, pid, v, 3);
		tb_emit(tb, cpu, ts + 4, "vmalloc", "alloc_vmap_area", pid, (struct tb_val[]){
			{ "addr", 0xffffc90000000000ULL + (uint64_t)i * 0x100000 }, { "size", 8192 },
			{ NULL } });
		kstack(tb, cpu, ts + 5, pid, v, 1);
		tb_emit(tb, cpu, ts + 6, "percpu", "percpu_alloc_percpu", pid, (struct tb_val[]){
			{ "call_site", FN(5) + 0x40 }, { "size", 8 }, { "ptr", 0x2e000 + (uint64_t)i * 8 },
			{ "bytes_alloc", 16 }, { NULL } });
		break;
	case 4:	/* tasks: a fork, a rename; cache objects */
		if (i % 40 == 4)
			fork_(tb, cpu, ts, pid, 400 + i / 40, comms[(i / 40) % 5]);
		else
			tb_emit(tb, cpu, ts, "task", "task_rename", pid, (struct tb_val[]){
				{ "pid", (uint64_t)pid }, { "oldcomm", 0, comms[i % 5] },
				{ "newcomm", 0, comms[(i / 8) % 5] }, { NULL } });
		tb_cache_alloc(tb, cpu, ts + 1, pid, FN(3) + 0x40, obj, "filp", 232, 256);
		stack(tb, cpu, ts + 2, 0);
		break;
	case 5:	/* misuse: a double free, a kfree(NULL), an allocation that failed, a free of an older object */
		tb_kmalloc(tb, cpu, ts, pid, site, obj, 100, 128);
		tb_kfree(tb, cpu, ts + 1, pid, FN(7) + 0x8, obj);
		if (i % 48 == 5)
			tb_kfree(tb, (cpu + 3) % SHARD_CPUS, ts + 2, pid, FN(7) + 0x8, obj);
		tb_kfree(tb, cpu, ts + 3, pid, FN(7) + 0x8, 0);
		tb_kmalloc(tb, cpu, ts + 4, pid, site, 0, 100, 128);
		tb_kfree(tb, cpu, ts + 5, pid, FN(7) + 0x8, OBJ(900000 + i));
		break;
	case 6:	/* what steps 0, 1, 2 and 4 allocated goes, mostly on other CPUs */
		tb_kfree(tb, (cpu + 2) % SHARD_CPUS, ts, pid, FN(7) + 0x8, BIG(i - 6));
		tb_kfree(tb, (cpu + 1) % SHARD_CPUS, ts + 1, pid, FN(7) + 0x8, OBJ(i - 4));
		tb_kfree(tb, (cpu + 1) % SHARD_CPUS, ts + 2, pid, FN(7) + 0x8, OBJ(i - 4) + 0x800000);
		tb_kfree(tb, (cpu + 3) % SHARD_CPUS, ts + 3, pid, FN(7) + 0x8, OBJ(i - 3) + 0x800000);
		tb_cache_free(tb, cpu, ts + 4, pid, FN(7) + 0x8, OBJ(i - 1), "filp");
		break;
	default: /* ... and what step 3 did (the page on another CPU), but not every time */
		if (i % 24 == 7)
			break;
		tb_emit(tb, (cpu + 1) % SHARD_CPUS, ts, "kmem", "mm_page_free", pid, (struct tb_val[]){
			{ "pfn", 0x30000 + (uint64_t)(i - 4) * 4 }, { "order", (uint64_t)((i - 4) % 3) }, { NULL } });
		tb_emit(tb, cpu, ts + 1, "vmalloc", "free_vmap_area_noflush", pid, (struct tb_val[]){
			{ "va_start", 0xffffc90000000000ULL + (uint64_t)(i - 4) * 0x100000 }, { NULL } });
		tb_kfree(tb, cpu, ts + 2, pid, FN(7) + 0x8, OBJ(i - 3) + 0x800000);
		tb_emit(tb, cpu, ts + 3, "percpu", "percpu_free_percpu", pid, (struct tb_val[]){
			{ "ptr", 0x2e000 + (uint64_t)(i - 4) * 8 }, { NULL } });
		break;
	}
}

static void shards(struct tb *tb)
{
	uint64_t ts = 1 * MS;
	int i;

	tb_kallsyms(tb, ksyms);
	tb_cmdlines(tb, "100 bash\n101 make\n");
	for (i = 0; i < 6000; i++, ts += 10000) {
		if (i == 1001)
			tb_lost(tb, 2, 30);
		if (i == 3507)
			tb_lost(tb, 1, -1);
		shards_step(tb, i, ts);
	}
	/* Then 2 s of pages alone: shard 0's time series reach far past the others'. */
	for (i = 0; i < 200; i++, ts += 10 * MS)
		page(tb, i % SHARD_CPUS, ts, 100, 0x90000 + (uint64_t)i * 4, 0);
}

/* A kmem_cache_alloc of a kernel before 6.18: no cache name. */
static void unnamed_alloc(struct tb *tb, int cpu, uint64_t ts, uint64_t site, uint64_t ptr, uint64_t req,
			  uint64_t alloc)
{
	tb_emit(tb, cpu, ts, "kmem", "kmem_cache_alloc", 100, (struct tb_val[]){
		{ "call_site", site }, { "ptr", ptr }, { "bytes_req", req }, { "bytes_alloc", alloc },
		{ "gfp_flags", 0xcc0 }, { "node", (uint64_t)-1 }, { NULL } });
}

/* Machine page @p, 64 KiB apart (each in a shard's range of its own), object @i of @size there. */
#define SLAB(p, i, size) (0xffff888100000000ULL + (uint64_t)(p) * 0x10000 + (uint64_t)(i) * (size))

static void unnamed(struct tb *tb)
{
	/* dentry and filp share a size (a free or a page tells them apart); names_cache has its own. */
	static const char caches[] = "dentry 192 192 0\nfilp 192 192 0\nnames_cache 4096 4096 3\n";

	tb_slab_lists(tb, NULL, caches);
	tb_kallsyms(tb, ksyms);
	tb_cmdlines(tb, "100 bash\n");
	unnamed_alloc(tb, 0, 1 * MS, FN(4) + 0x10, SLAB(10, 0, 192), 192, 192);	/* dentry, freed */
	unnamed_alloc(tb, 1, 2 * MS, FN(4) + 0x10, SLAB(10, 1, 192), 192, 192);	/* dentry at the end */
	tb_cache_free(tb, 0, 3 * MS, 100, FN(7) + 0x8, SLAB(10, 0, 192), "dentry");
	unnamed_alloc(tb, 1, 4 * MS, FN(4) + 0x10, SLAB(10, 2, 192), 192, 192);	/* dentry by its page */
	unnamed_alloc(tb, 0, 5 * MS, FN(2) + 0x20, SLAB(20, 0, 192), 192, 192);	/* filp, freed */
	tb_cache_free(tb, 1, 6 * MS, 100, FN(7) + 0x8, SLAB(20, 0, 192), "filp");
	unnamed_alloc(tb, 0, 7 * MS, FN(2) + 0x20, SLAB(20, 1, 192), 192, 192);	/* filp by its page */
	unnamed_alloc(tb, 1, 8 * MS, FN(1) + 0x30, SLAB(40, 0, 4096), 4096, 4096);	/* names_cache by size */
	tb_cache_free(tb, 1, 9 * MS, 100, FN(7) + 0x8, SLAB(40, 0, 4096), "names_cache");
	unnamed_alloc(tb, 0, 10 * MS, FN(3) + 0x40, SLAB(50, 0, 256), 256, 256);	/* nothing names it */
	unnamed_alloc(tb, 1, 11 * MS, FN(2) + 0x20, SLAB(30, 0, 192), 192, 192);	/* nor this one */
	/* An object older than the trace, freed: its page is filp's. */
	tb_cache_free(tb, 0, 12 * MS, 100, FN(7) + 0x8, SLAB(60, 3, 192), "filp");
	unnamed_alloc(tb, 0, 13 * MS, FN(2) + 0x20, SLAB(60, 0, 192), 192, 192);	/* filp by its page */
	unnamed_alloc(tb, 1, 50 * MS, FN(3) + 0x40, SLAB(51, 0, 256), 256, 256);	/* nothing names it */
}

/* One site, three stacks sharing their inner callers (the usage above). */
static void deep(struct tb *tb)
{
	static const int outer[3] = { 3, 6, 8 };
	int i, k;

	tb_kallsyms(tb, ksyms);
	tb_cmdlines(tb, "100 bash\n");
	for (i = 0; i < 30; i++) {
		uint64_t f[8] = { FN(0) + 0x10, FN(1) + 0x20, FN(5) + 0x40, FN(10) + 0x18, FN(9) + 0x18,
				  FN(11) + 0x18, FN(12) + 0x18, FN(outer[i % 3]) + 0x18 };

		k = i % 2;
		tb_kmalloc(tb, k, (uint64_t)(i + 1) * MS, 100, FN(5) + 0x40, OBJ(i), 100, 128);
		kstack(tb, k, (uint64_t)(i + 1) * MS + 1, 100, f, 8);
	}
}

/* The known workload of kernel @version's formats (the usage above). */
static void kernel(struct tb *tb)
{
	static const char caches[] = "filp 184 192 0\n";
	bool node_ev = tb_has(tb, "kmem", "kmalloc_node", NULL);
	uint64_t ts = MS;
	int i;

	tb_slab_lists(tb, NULL, caches);
	tb_kallsyms(tb, ksyms);
	tb_cmdlines(tb, "100 bash\n");
	tb_emit_some(tb, 0, ts, "sched", "sched_process_exec", 100, (struct tb_val[]){
		{ "filename", 0, "/usr/bin/worker" }, { "pid", 100 }, { "old_pid", 100 }, { NULL } });
	for (i = 0; i < 10; i++) {
		ts += MS;
		tb_emit_some(tb, i % 2, ts, "kmem", "kmalloc", 100, (struct tb_val[]){
			{ "call_site", FN(1) + 0x10 }, { "ptr", OBJ(i) }, { "bytes_req", 100 },
			{ "bytes_alloc", 128 }, { "gfp_flags", 0xcc0 }, { "node", (uint64_t)-1 }, { NULL } });
	}
	for (i = 0; i < 5; i++) {
		ts += MS;
		tb_emit_some(tb, 1, ts, "kmem", node_ev ? "kmalloc_node" : "kmalloc", 100, (struct tb_val[]){
			{ "call_site", FN(3) + 0x20 }, { "ptr", OBJ(20 + i) }, { "bytes_req", 200 },
			{ "bytes_alloc", 256 }, { "gfp_flags", 0xcc0 }, { "node", 1 }, { NULL } });
	}
	for (i = 0; i < 7; i++) {
		bool node = i >= 4;

		ts += MS;
		tb_emit_some(tb, i % 2, ts, "kmem", node && node_ev ? "kmem_cache_alloc_node" : "kmem_cache_alloc",
			     100, (struct tb_val[]){
			{ "call_site", FN(4) + 0x30 }, { "ptr", OBJ(40 + i) }, { "name", 0, "filp" },
			{ "bytes_req", 184 }, { "bytes_alloc", 192 }, { "gfp_flags", 0xcc0 },
			{ "node", node ? 1 : (uint64_t)-1 }, { "accounted", 1 }, { NULL } });
	}
	for (i = 0; i < 15; i++) {
		ts += MS;
		tb_emit_some(tb, (i + 1) % 2, ts, "kmem", "kfree", 100, (struct tb_val[]){
			{ "call_site", FN(7) + 0x8 }, { "ptr", i < 10 ? OBJ(i) : OBJ(20 + i - 10) }, { NULL } });
	}
	for (i = 0; i < 7; i++) {
		ts += MS;
		tb_emit_some(tb, (i + 1) % 2, ts, "kmem", "kmem_cache_free", 100, (struct tb_val[]){
			{ "call_site", FN(7) + 0x8 }, { "ptr", OBJ(40 + i) }, { "name", 0, "filp" }, { NULL } });
	}
	for (i = 0; i < 2; i++) {
		ts += MS;
		tb_emit_some(tb, 0, ts, "kmem", "mm_page_alloc", 100, (struct tb_val[]){
			{ "pfn", 0x1000 + 2 * (uint64_t)i }, { "order", 1 }, { "gfp_flags", 0xcc0 },
			{ "migratetype", 0 }, { NULL } });
	}
	for (i = 0; i < 2; i++) {
		ts += MS;
		tb_emit_some(tb, 1, ts, "kmem", "mm_page_free", 100, (struct tb_val[]){
			{ "pfn", 0x1000 + 2 * (uint64_t)i }, { "order", 1 }, { NULL } });
	}
	ts += MS;	/* a batch's page: traced twice, freed once */
	tb_emit_some(tb, 1, ts, "kmem", "mm_page_free_batched", 100, (struct tb_val[]){
		{ "pfn", 0x1002 }, { NULL } });
	ts += MS;
	tb_emit_some(tb, 0, ts, "percpu", "percpu_alloc_percpu", 100, (struct tb_val[]){
		{ "call_site", FN(5) + 0x8 }, { "reserved", 0 }, { "is_atomic", 0 }, { "size", 64 },
		{ "align", 8 }, { "base_addr", OBJ(100) }, { "off", 64 }, { "ptr", OBJ(101) },
		{ "bytes_alloc", 128 }, { "gfp_flags", 0xcc0 }, { NULL } });
	ts += MS;
	tb_emit_some(tb, 0, ts, "percpu", "percpu_free_percpu", 100, (struct tb_val[]){
		{ "base_addr", OBJ(100) }, { "off", 64 }, { "ptr", OBJ(101) }, { NULL } });
}

static void churn(struct tb *tb, long live, long steps)
{
	uint64_t ts = 1 * MS;
	long i;

	tb_kallsyms(tb, ksyms);
	for (i = 0; i < live; i++, ts += 1000)
		tb_kmalloc(tb, (int)(i & 1), ts, 100, FN(5) + 0x40, OBJ(i + 1), 100, 128);
	for (i = 0; i < steps; i++, ts += 1000) {
		uint64_t obj = OBJ(live + 1 + (i & 1023));

		tb_kmalloc(tb, (int)(i & 1), ts, 100, FN(8) + 0x40, obj, 3000, 4096);
		tb_kfree(tb, (int)(i & 1), ts + 500, 100, FN(7) + 0x8, obj);
	}
}

/* full, arch, idle, shards: FILE; wide: FILE [STEPS]; churn: FILE LIVE STEPS. */
static bool args_ok(int argc, char **argv)
{
	if (argc < 3)
		return false;
	if (!strcmp(argv[1], "wide"))
		return argc == 3 || (argc == 4 && atoi(argv[3]) > 0);
	if (!strcmp(argv[1], "churn"))
		return argc == 5;
	if (!strcmp(argv[1], "kernel"))
		return argc == 4;
	return argc == 3 && (!strcmp(argv[1], "full") || !strcmp(argv[1], "arch") || !strcmp(argv[1], "idle") ||
			     !strcmp(argv[1], "shards") || !strcmp(argv[1], "unnamed") || !strcmp(argv[1], "deep"));
}

int main(int argc, char **argv)
{
	struct tb *tb;
	int ret;

	if (!args_ok(argc, argv)) {
		fprintf(stderr, "usage: kmt-synth full|arch|idle|shards|unnamed|deep FILE, kmt-synth wide FILE [STEPS], "
			"kmt-synth churn FILE LIVE STEPS, kmt-synth kernel VERSION FILE\n");
		return 2;
	}
	tb = tb_new(!strcmp(argv[1], "wide") ? WIDE_CPUS : !strcmp(argv[1], "shards") ? SHARD_CPUS : 2, 0);
	if (!strcmp(argv[1], "unnamed")) {
		tb_formats_of(tb, "6.6");
		tb_uname(tb, "Linux test 6.6.87 x86_64");
	} else if (!strcmp(argv[1], "kernel")) {
		static char uname[128];

		tb_formats_of(tb, argv[2]);
		snprintf(uname, sizeof(uname), "Linux test %s x86_64", argv[2]);
		tb_uname(tb, uname);
	} else {
		tb_formats_6_18(tb);
	}
	if (!strcmp(argv[1], "unnamed")) {
		unnamed(tb);
	} else if (!strcmp(argv[1], "deep")) {
		deep(tb);
	} else if (!strcmp(argv[1], "kernel")) {
		kernel(tb);
	} else if (!strcmp(argv[1], "full")) {
		full(tb);
	} else if (!strcmp(argv[1], "wide")) {
		wide(tb, argc == 4 ? atoi(argv[3]) : 60000);
	} else if (!strcmp(argv[1], "shards")) {
		shards(tb);
	} else if (!strcmp(argv[1], "churn")) {
		churn(tb, atol(argv[3]), atol(argv[4]));
	} else if (!strcmp(argv[1], "idle")) {
		int i;

		/* Block I/O completions in interrupts on idle CPU 1: the idle task's. */
		tb_kallsyms(tb, ksyms);
		tb_cmdlines(tb, "100 bash\n");
		for (i = 0; i < 3; i++)
			tb_cache_alloc(tb, 1, (uint64_t)(1 + i) * MS, 0, FN(4) + 0x10, OBJ(10 + i), "bio-184", 184, 192);
		for (i = 0; i < 3; i++)
			tb_cache_free(tb, 1, (uint64_t)(5 + i) * MS, 0, FN(7) + 0x8, OBJ(10 + i), "bio-184");
		alloc(tb, 0, 9 * MS, 100, 2, OBJ(1));
	} else {
		tb_uname(tb, "Linux test 6.18.0 aarch64");
		tb_kallsyms(tb, ksyms);
		alloc(tb, 0, 1 * MS, 100, 2, OBJ(1));
		alloc(tb, 1, 2 * MS, 100, 0, OBJ(2));
		release(tb, 0, 3 * MS, 100, 2, OBJ(1));
	}
	ret = tb_write(tb, argv[!strcmp(argv[1], "kernel") ? 3 : 2], 7, KMT_Z_ZSTD);
	tb_free(tb);
	if (ret) {
		fprintf(stderr, "kmt-synth: cannot write %s\n", argv[argc - 1]);
		return 1;
	}
	return 0;
}
