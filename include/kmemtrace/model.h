/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libkmemtrace, the model stage (src/lib/model/): memory events into
 * the allocation model (sites, caches, objects, pages, stacks, losses,
 * misuse). Feeding it a trace (on threads, in shards) and checking a
 * file are the analyse stage's (analyse.h).
 */
#ifndef KMEMTRACE_MODEL_H
#define KMEMTRACE_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tracefile.h"
#include "event.h"

/*
 * The allocation model: decoded memory events, in time order, go in; per
 * call site, cache, process, page order and lifetime statistics, the
 * objects still live at the end and the misuse found come out.
 *
 * Live objects are kept in tables keyed by address (slab objects), pfn
 * (pages) and pointer (per-CPU); each allocation remembers its call site,
 * CPU, pid, time, sizes and cache, and each free resolves against it.
 * Memory is bounded by the objects live (and the addresses freed, for
 * double-free detection) and the number of call sites, not by the length
 * of the trace.
 *
 * Losses: when a CPU lost events, an object whose allocation or free may
 * fall in the gap is "uncertain": counted apart, never a leak or misuse.
 */

#define KMT_LIFE_BUCKETS 48		/* log2(ns): 1 ns .. ~3 days */

struct kmt_comms;
struct kmt_symbols;

struct kmt_model_opts {
	int32_t pid;			/* only allocations by this task (0: all) */
	const char *comm;		/* only allocations by tasks so named */
	const struct kmt_comms *cmdlines; /* names of tasks never seen renamed */
	const struct kmt_symbols *syms;	/* to find page call sites in stacks */
	/* The recording kept only part of the allocations / frees (filters). */
	bool partial_allocs, partial_frees;
	/* Slab allocation stacks: callers kept per stack (0: all of them). */
	uint32_t stack_depth;
	/* The recording kept stacks for 1 in this many allocations (0, 1: all). */
	uint32_t stack_sample;
	/*
	 * ... in slices of time, with a stack after every event then (frees,
	 * too): a stack right after an event that allocates nothing is its own.
	 */
	bool stack_slices;
	/* Collect what pictures need: kmt_model_timeline(), _groups(), _sizes(). */
	bool detail;
	/* Collect kmt_model_cgroup_sites() and kmt_model_groups() (by site and task alone, no cache) only. */
	bool groups;
	/* The traced machine's page size (0: 4096). */
	uint32_t page_size;
	/*
	 * The recording has mm_page_free_batched but not mm_page_free: each
	 * batched free is then the page's only free event. Otherwise the
	 * kernel traces every page a batch frees with mm_page_free too (in
	 * free_pages_prepare()), and the batched event counts nothing.
	 */
	bool batched_frees_alone;
	/*
	 * kmem_cache_alloc names no cache (kernels before 6.18): its objects
	 * are named by their frees' names (5.12 and later), by the page they
	 * lie in, or by their sizes (slab_aliases' caches).
	 */
	bool unnamed_cache_allocs;
	/*
	 * The tasks' cgroups when the recording started (the file's CGROUPS
	 * option), followed on through forks and cgroup_attach_task events;
	 * NULL: not recorded (kmt_proc.cgroup, .memcg stay NULL). The model
	 * interns the paths of moves in it: it must outlive the model and
	 * its results, and may be shared by the shards of one model.
	 */
	struct kmt_cgroups *cgroups;
	/*
	 * Only allocations by tasks in this cgroup or its descendants, the
	 * path as /proc/PID/cgroup shows it: "0::/a/b" (cgroup v2),
	 * "ID:memory:/a/b" or "memory:/a/b" (v1 memory), or "/a/b" (v2 where
	 * it is mounted, else v1 memory). Needs @cgroups.
	 */
	const char *cgroup;
	/* Merged slab caches, to name them (may be NULL; must outlive the model). */
	const struct kmt_slab_aliases *slab_aliases;
	/*
	 * Only objects of this slab cache (a kmalloc class, a cache, or any
	 * name of a merged one); no page, per-CPU or vmalloc events.
	 */
	const char *cache;
};

/* Per allocation call site (the kernel's call_site address). */
struct kmt_site {
	uint64_t addr;
	uint64_t allocs, frees;		/* frees: of objects allocated here */
	uint64_t free_calls;		/* free events whose call site is here */
	uint64_t bytes_req, bytes_alloc, bytes_freed;
	uint64_t cross_cpu;		/* objects from here freed on another CPU */
	uint64_t live_objects, live_bytes; /* at the end (certain ones) */
	uint64_t uncertain;		/* live at the end but a loss followed */
	uint64_t unseen_frees;		/* freed where the trace shows no free: the
					   address was allocated again (the kernel did
					   not trace it, or a loss hid it) */
	uint64_t failures;		/* allocation returned NULL */
	uint64_t now_objects, now_bytes;	/* allocated here and not gone, so far */
	uint64_t life[KMT_LIFE_BUCKETS];	/* alloc -> free time, log2 ns */
	uint64_t life_min, life_max;	/* ns, of objects freed */
	uint32_t kinds;			/* 1 << KMT_EV_* of its allocations */
	uint32_t order_mask;		/* page allocations: orders seen */
};

/* Per slab cache (by name) or kmalloc size class. */
struct kmt_cache {
	char name[48];			/* "filp", or "kmalloc-2k" */
	uint32_t name_len;
	bool is_kmalloc;
	const struct kmt_slab_group *merged;	/* others share the name, or NULL */
	uint64_t object_size;		/* bytes_alloc of its objects */
	uint64_t allocs, frees, bytes_req, bytes_alloc;
	uint64_t live_objects, live_bytes;
	uint64_t untraced;		/* signs of untraced frees/allocations */
	uint64_t unseen_frees;		/* as for sites */
	uint64_t now_objects, now_bytes;	/* as for sites */
	/*
	 * "cache(size=N)": allocations that named no cache, of a size several
	 * caches have, not (yet) named by a free or their page. Emptied when
	 * they are (kmt_cache_emptied()).
	 */
	bool by_size;
};

/* A cache by size whose objects all went to the caches their frees named: no row. */
static inline bool kmt_cache_emptied(const struct kmt_cache *c)
{
	return c->by_size && !c->allocs && !c->frees && !c->unseen_frees && !c->untraced &&
	       !c->live_objects && !c->now_objects;
}

/* "filp", or a merged cache's "pool_workqueue (+sgpool-16, skbuff_fclone_cache)". */
static inline const char *kmt_cache_label(const struct kmt_cache *c)
{
	return c->merged ? c->merged->label : c->name;
}

/*
 * Per task name, pid and cgroups: a task renamed, or moved to another
 * cgroup, continues in a row of its own.
 */
struct kmt_proc {
	int32_t pid;
	char comm[16];
	bool kthread;			/* a kernel thread (recorded with cgroups only) */
	/* Its cgroup v2 path and v1 memory cgroup's (kmt_model_opts.cgroups'), NULL: unknown. */
	const char *cgroup, *memcg;
	uint64_t allocs, frees, bytes_req, bytes_alloc, bytes_freed;
	uint64_t live_objects, live_bytes;
	uint64_t page_allocs, pages;
	uint64_t now_objects, now_bytes;	/* as for sites */
	/*
	 * Of bytes_alloc (slab objects): allocated in interrupt context
	 * (never charged to the task), else asked to be charged to its
	 * memory cgroup (KMT_EVF_ACCOUNTED), or of unknown charge
	 * (KMT_EVF_ACCT_UNKNOWN). The rest asked for no charge.
	 */
	uint64_t irq_bytes, acct_bytes, unknown_bytes;
	uint64_t acct_pages;		/* pages asked to be charged (__GFP_ACCOUNT) */
};

/*
 * What the model finds contradictory. Stock kernels do not trace the slab
 * bulk paths (kmem_cache_alloc_bulk, kmem_cache_free_bulk, kfree_bulk from
 * kfree_rcu batches, the per-CPU sheaves of 6.18): an object can come and go
 * unseen. So an allocation at a live address always means a free the trace
 * did not see (a warning), and a free of a freed address is a double free
 * (an error) only in a trace that shows no sign of untraced traffic;
 * otherwise it is reported as an untraced allocation (a warning).
 */
enum kmt_misuse_kind {
	KMT_MISUSE_DOUBLE_FREE,		/* freed again without a new allocation */
	KMT_MISUSE_ALLOC_LIVE,		/* allocated at a live address: a missed free */
	KMT_MISUSE_CACHE_FREE_KMALLOC,	/* kmem_cache_free of a kmalloc object */
	KMT_MISUSE_CACHE_MISMATCH,	/* kmem_cache_free naming another cache */
	KMT_MISUSE_KFREE_CACHE,		/* kfree of a cache object: legal, information */
	KMT_MISUSE_UNTRACED_ALLOC,	/* a "double free" in a cache with untraced traffic */
	KMT_MISUSE_NR,
};

enum kmt_severity { KMT_SEV_INFO, KMT_SEV_WARNING, KMT_SEV_ERROR };

struct kmt_misuse {
	enum kmt_misuse_kind kind;
	uint32_t cache;			/* cache index of the object, or UINT32_MAX */
	uint64_t site;			/* where it happened (the free / alloc) */
	uint64_t alloc_site;		/* where the object came from, or 0 */
	uint64_t count;
	uint64_t first_ts;
	int32_t first_pid;
	uint64_t first_ptr;
	char detail[64];		/* e.g. "filp != dentry" */
};

/*
 * A cache whose objects the kernel allocates or frees without an event
 * (its bulk paths, per-CPU sheaves, kfree_bulk): what the trace shows of
 * it, one row per cache. These are the kernel's design, not misuse: they
 * are counted here and left out of kmt_model_misuse().
 */
struct kmt_untraced {
	uint32_t cache;			/* cache index, or UINT32_MAX */
	uint64_t alloc_over_live;	/* allocations at a live address: frees not traced */
	uint64_t untraced_alloc;	/* frees of freed addresses: allocations not traced */
	uint64_t reused;		/* freed as another cache: freed and reused untraced */
	uint64_t count;			/* the three together */
	uint64_t first_ts;		/* the first sign */
	uint64_t first_site;		/* ... where it was */
	uint64_t first_alloc_site;	/* ... where its object came from, or 0 */
	const char *why;		/* static, from kmt_untraced_why() */
};

struct kmt_outstanding {
	uint64_t site;
	uint64_t objects, bytes_req, bytes_alloc;
	uint64_t in_untraced_caches;	/* objects of caches the kernel frees untraced */
	uint64_t age_min, age_max;	/* ns, at the end of the trace */
	uint64_t age_median;		/* ns, exact (the lower middle of an even count) */
	uint64_t age[KMT_LIFE_BUCKETS];	/* log2 ns */
};

#define KMT_MAX_ORDER 11
#define KMT_MIGRATE_TYPES 8

struct kmt_gfp_count {
	uint64_t gfp;
	uint64_t allocs, pages;
};

struct kmt_summary {
	uint64_t first_ts, last_ts;
	uint64_t events;		/* records in the window, all kinds */
	uint64_t by_kind[KMT_EV_NR];
	uint64_t allocs, frees;		/* slab objects (kmalloc + cache) */
	uint64_t bytes_req, bytes_alloc, bytes_freed;
	uint64_t cross_cpu_frees;
	uint64_t preexisting_frees;	/* freed, allocated before the trace */
	uint64_t preexisting_bytes;	/* unknown: 0 unless the free says */
	uint64_t live_objects, live_bytes;
	uint64_t now_objects, now_bytes;	/* slab objects allocated and not gone, so far
						   (live and uncertain, before the end) */
	uint64_t uncertain_objects;	/* a loss may hide their fate */
	uint64_t uncertain_allocs;	/* ... of them, allocated in the trace (live at
					   its end): allocs = frees + live_objects +
					   uncertain_allocs + unseen_frees */
	uint64_t unseen_frees;		/* objects freed where the trace shows no free */
	uint64_t unseen_bytes;		/* their allocated bytes: in net, not freed in the trace */
	uint64_t uncertain_bytes;	/* allocated bytes of those allocated in the trace */
	uint64_t uncertain_misuse;	/* misuse findings a loss may explain */
	uint64_t failures;		/* allocations that returned NULL */
	uint64_t kmalloc_large_merged;	/* the kernel's doubled large-kmalloc events */
	uint64_t untraced_evidence;	/* findings showing untraced slab traffic */
	uint64_t null_frees;		/* kfree(NULL) */
	uint64_t page_allocs, page_frees, pages_allocated, pages_freed, page_failures;
	uint64_t pcpu_allocs, pcpu_frees, pcpu_bytes;
	/* vmalloc: alloc_vmap_area and free_vmap_area_noflush (freed lazily). */
	uint64_t vmap_allocs, vmap_frees, vmap_failures;
	uint64_t vmap_bytes, vmap_bytes_freed;
	uint64_t vmap_preexisting_frees;	/* of areas allocated before the trace */
	uint64_t vmap_live, vmap_live_bytes;	/* allocated in the trace, live at its end */
	uint64_t lost_events;		/* the one figure: the ring buffer's count
					   (kmt_model_ring_lost()), else the gaps' */
	uint64_t lost_gaps;		/* places where events were lost */
	uint64_t lost_pages_unknown;	/* gaps of unknown size */
	bool lost_by_ring;		/* lost_events is the ring buffer's count */
	/*
	 * Of lost_events, those the instance dropped after its recorder died
	 * (a recovered recording: nobody read the buffer), not the recording's.
	 */
	uint64_t lost_after_death;
	int nr_cpus;			/* highest CPU seen + 1 */
	const uint64_t *lost_by_cpu;	/* nr_cpus entries */
	const uint64_t *events_by_cpu;
	bool affected_by_loss;
	int truncated_cpus;		/* CPUs whose recording stopped early */
	uint64_t truncated_ts;		/* when the first of them stopped */
	uint64_t damaged_gaps;		/* parts of a damaged file that could not be read */
	bool partial_allocs, partial_frees;	/* from the model's options */
	uint64_t stack_sample;		/* stacks of 1 in N allocations; 1: all */
	bool stack_slices;		/* ... chosen by time, not by address */
	bool filtered;			/* by task (-p, --comm): others' events unseen */
	bool filter_matched;		/* ... and some task matched the filter */
	bool cache_filtered;		/* by cache (kmt_model_opts.cache) */
	bool cache_matched;		/* ... and some allocation was of that cache */
	uint64_t unseen_allocs;		/* frees of freed addresses: partial_allocs */
	/* Watchpoint samples (kmemtrace watch files). */
	uint64_t access_hits;		/* access records in the window */
	uint64_t access_reads, access_writes;	/* attributed to a live object */
	uint64_t access_dropped;	/* no live object there at that time */
	uint64_t access_lost;		/* samples the recorder lost */
	uint64_t access_objects;	/* distinct objects hit */
	uint64_t order_mt[KMT_MAX_ORDER + 1][KMT_MIGRATE_TYPES + 1];
};

/* Internal fragmentation: bytes allocated beyond those requested. */
static inline uint64_t kmt_waste(uint64_t req, uint64_t alloc)
{
	return alloc > req ? alloc - req : 0;
}

/* The window's length: its last event's time less its first's (0 if none). */
static inline uint64_t kmt_summary_span(const struct kmt_summary *s)
{
	return s->last_ts > s->first_ts ? s->last_ts - s->first_ts : 0;
}

/* vmalloc areas by size (alloc_vmap_area's size: the guard page included). */
struct kmt_vmap_size {
	uint64_t size;
	uint64_t allocs, frees;
	uint64_t live;			/* areas of this size live at the end */
};

/* A vmalloc area allocated in the trace and live at its end. */
struct kmt_vmap_area {
	uint64_t addr, size;
	uint64_t age;			/* ns, at the end of the trace */
	int32_t pid;			/* the allocating task */
	char comm[16];
	uint64_t function;		/* allocating function (--stack), or 0 */
	bool uncertain;			/* a loss since: it may be gone */
};

/* One object's life as the trace shows it (kmemtrace kmap). */
enum kmt_fate {
	KMT_FATE_FREED,			/* allocated and freed in the trace */
	KMT_FATE_LIVE,			/* still live at the end */
	KMT_FATE_UNSEEN_FREE,		/* its address was allocated again: freed untraced */
	KMT_FATE_PREEXISTING,		/* freed, allocated before the trace */
};

/* "freed", "live", "unseen_free", "preexisting": the one spelling of each fate ("?" else). */
const char *kmt_fate_name(enum kmt_fate f);

struct kmt_object {
	uint64_t ptr;			/* address; pages: pfn */
	uint8_t kind;			/* KMT_EV_KMALLOC, KMT_EV_CACHE_ALLOC, KMT_EV_PAGE_ALLOC */
	uint8_t fate;			/* enum kmt_fate */
	bool uncertain;			/* events lost since it was allocated */
	int32_t alloc_pid, free_pid;	/* -1: unknown */
	int32_t alloc_cpu, free_cpu;
	uint64_t alloc_ts, free_ts;	/* 0: not in the trace */
	uint64_t alloc_site, free_site;	/* call_site addresses; 0: unknown */
	uint64_t bytes_req, bytes_alloc;
	uint32_t order;			/* pages */
	const char *comm;		/* the allocating task, or NULL */
	/* Its cgroups then (kmt_proc's; @cgroup the v1 memory one without v2), or NULL. */
	const char *cgroup, *memcg;
	const char *cache;		/* "filp", "kmalloc-64", or NULL */
	uint64_t gfp;			/* the allocation's gfp flags */
	uint32_t stack;			/* the callers: kmt_model_stack() id, or UINT32_MAX */
};

struct kmt_model;

/*
 * Calls out of the model, for consumers that want every object rather
 * than totals. @object is called once per object when its story ends: at
 * its free, when its address is allocated again, or at kmt_model_finish()
 * for objects still live (in allocation order). @access is called for each
 * watchpoint sample that falls in a live object (@o then has no free
 * side). Pointers are valid during the call only.
 */
struct kmt_model_hooks {
	void (*object)(void *arg, const struct kmt_object *o);
	void (*access)(void *arg, const struct kmt_object *o, const struct kmt_event *ev);
	/*
	 * Every event that concerns the chosen tasks (all, without a filter),
	 * in time order, after the model has taken it; stacks included.
	 */
	void (*event)(void *arg, const struct kmt_event *ev);
	void *arg;
	bool pages;			/* page allocations are objects too */
	/*
	 * A consumer whose @object writes each object out to @out (kmemtrace
	 * kmap) or adds it up in a way that does not depend on the order
	 * (export to pprof) may have it run in shards (-j) by setting these.
	 * Shard k's calls then get an @arg of its own, @clone(@arg, fp, k):
	 * a consumer like @arg that writes to fp, a stream of the shard's;
	 * kmt_analyse() writes what each call wrote to @out (NULL: nothing
	 * is written), in the order the one model makes the calls, with @sep
	 * (may be NULL) between two calls' writings. Once the shards are
	 * merged into @m, it hands each clone to @fold(@arg, clone, m), in
	 * shard order, to add up and free: a stack id that shard k gave an
	 * object is kmt_model_shard_stack(m, k, id) in @m. The objects still
	 * live at the end come after, through @arg itself.
	 */
	void *(*clone)(void *arg, FILE *fp, unsigned int shard);
	void (*fold)(void *arg, void *clone, const struct kmt_model *m);
	FILE *out;
	const char *sep;
};

/* Per object group, offset in the object and accessing instruction. */
struct kmt_access_stat {
	uint64_t site;			/* allocation site of the objects */
	uint32_t cache;			/* their cache index, or UINT32_MAX */
	uint32_t offset;
	uint64_t ip;			/* the instruction after the access */
	uint64_t reads, writes;
	uint32_t len;			/* bytes watched */
	char field[48];			/* member name, if the samples carry one */
};

struct kmt_model;

struct kmt_model *kmt_model_new(const struct kmt_model_opts *o);
void kmt_model_free(struct kmt_model *m);

/*
 * Feed one decoded event; events must come in time order. -ENOMEM once
 * the model could not allocate: from then on its results are incomplete
 * and must not be shown as if they were not.
 */
int kmt_model_event(struct kmt_model *m, const struct kmt_event *ev);
/*
 * Feed @n events at once, as kmt_model_event() would one by one: faster,
 * because nothing is copied; the events (and the strings and stacks they
 * point to) must stay valid until it returns.
 */
int kmt_model_events(struct kmt_model *m, const struct kmt_event *ev, size_t n);
/*
 * Take the events queued for prefetching, so that the tables are up to
 * date now (kmemtrace top reads them between events; kmt_model_finish()
 * does this itself).
 */
int kmt_model_sync(struct kmt_model *m);
/*
 * The allocation the last stack fed was given to (the stacktrace trigger
 * puts a stack after its event; the model decides whose it is): its kind
 * (KMT_EV_KMALLOC, KMT_EV_CACHE_ALLOC, KMT_EV_PAGE_ALLOC, KMT_EV_VMAP_ALLOC)
 * and address (pages: pfn), or KMT_EV_NONE: no allocation's.
 */
enum kmt_kind kmt_model_stack_claim(const struct kmt_model *m, uint64_t *ptr);
/* Install @h (before the first event). */
void kmt_model_set_hooks(struct kmt_model *m, const struct kmt_model_hooks *h);
/* The recorder of watchpoint samples lost @lost of them. */
void kmt_model_access_lost(struct kmt_model *m, int64_t lost);
/* A CPU lost @lost events (-1: unknown) just before time @ts. */
void kmt_model_lost(struct kmt_model *m, int cpu, int64_t lost, uint64_t ts);
/*
 * The ring buffer of @cpu counted @lost events lost over the whole
 * recording (its stats): the summary's figure for that CPU, where the
 * gaps' own counts (page headers) are less or unknown. Only for a
 * trace analysed whole.
 */
void kmt_model_ring_lost(struct kmt_model *m, int cpu, uint64_t lost);
/* Of them, @n were dropped after the recorder died (kmt_cpustat.after_death). */
void kmt_model_lost_after_death(struct kmt_model *m, uint64_t n);
/*
 * The recording of @cpu stopped early (disk full) at @ts: its later events
 * are missing, so what follows is judged as after a loss of unknown size.
 */
void kmt_model_truncated(struct kmt_model *m, int cpu, uint64_t ts);
/*
 * A part of @cpu's data could not be read (a damaged file): its events
 * from @from to @to (UINT64_MAX: to the end; @cpu -1: unknown) are
 * missing. Every event up to @to is judged as after a loss of unknown size.
 */
void kmt_model_gap(struct kmt_model *m, int cpu, uint64_t from, uint64_t to);

/*
 * What a marker of the stream (kmt_srec: lost_marker or skip) is to the
 * model: the one mapping for every reader of a stream (kmt_analyse(),
 * dump -a, top). A part of the model's buffer passed over is a gap
 * (kmt_model_gap()) from the CPU's last record before it to its first
 * after; a CPU's recording cut short, a truncation; lost events, a loss;
 * any marker of another buffer (the watchpoint samples'), lost samples.
 */
/*
 * KMT_MARK_MISFIT: a record that does not fit its format, read live
 * (kmt_analyse_live_pump(); in a file it is an error): its event is lost.
 */
enum kmt_marker_kind { KMT_MARK_LOST, KMT_MARK_TRUNCATED, KMT_MARK_GAP, KMT_MARK_ACCESS_LOST, KMT_MARK_MISFIT };
struct kmt_marker {
	enum kmt_marker_kind kind;
	int cpu;
	int64_t lost;			/* LOST, ACCESS_LOST: how many, -1 unknown */
	uint64_t ts, to;		/* where; a gap: from @ts to @to */
};
/* @sr's marker, for a model of @buffer's events. */
void kmt_marker_of(const struct kmt_srec *sr, int buffer, struct kmt_marker *mk);
/* Does @mk count for a model of the window [@lo, @hi] (0, UINT64_MAX: all)? */
bool kmt_marker_in(const struct kmt_marker *mk, uint64_t lo, uint64_t hi);
/* @mk into the model (kmt_model_lost(), _truncated(), _gap() or _access_lost()). */
void kmt_model_marker(struct kmt_model *m, const struct kmt_marker *mk);
/*
 * Only the naming in a fork, exec, rename or new-task event (one before
 * the analysed window): not counted as an event.
 */
void kmt_model_name_event(struct kmt_model *m, const struct kmt_event *ev);
/* Name tasks: pid -> comm as it changes (fork, exec, rename). */
void kmt_model_set_comm(struct kmt_model *m, int32_t pid, const char *comm, size_t len);
/*
 * Task @pid is in cgroup @path (@len bytes) of hierarchy @root (0: cgroup
 * v2; the v1 memory hierarchy's id: its memory cgroup) from now on; other
 * hierarchies are not followed. Nothing without kmt_model_opts.cgroups.
 */
void kmt_model_set_cgroup(struct kmt_model *m, int32_t pid, int root, const char *path, size_t len);
/*
 * The trace ended at @ts: computes live objects, outstanding, ages. 0, or
 * -ENOMEM if the model ran out of memory at any point (see above).
 */
int kmt_model_finish(struct kmt_model *m, uint64_t ts);

/*
 * The model in shards (-j, kmt_analyse() does this): each shard is shown
 * every event and takes the slab objects of its share of the addresses,
 * on a thread of its own; kmt_model_merge() folds them into the first,
 * to be finished as one (the same results for any number of shards).
 * Not with an event hook, an object hook without a clone (which writes
 * in the one model's order: kmt_analyse() puts the shards' writings in
 * it), a filter on a recording of a stack per event (stack slices) or
 * watchpoint samples (the caller's to know: kmt_analyse() asks the file).
 */
bool kmt_model_shardable(const struct kmt_model *m);
/* Shard @k of @n: @m itself for 0 (it becomes shard 0), else a new model like it. */
struct kmt_model *kmt_model_shard(struct kmt_model *m, unsigned int k, unsigned int n);
/* Fold @sh[1..n) into @sh[0] (the caller frees them); -ENOMEM. */
int kmt_model_merge(struct kmt_model **sh, unsigned int n);
/*
 * Results, valid after kmt_model_finish(); owned by the model. With a task
 * filter, the summary counts only the events that concern the chosen
 * tasks: their allocations, the frees of their objects (and frees by them
 * of objects the trace did not see allocated), their names.
 * Misuse comes grouped by kind, call site and cache, errors first, then
 * by count.
 */
const struct kmt_summary *kmt_model_summary(const struct kmt_model *m);
const struct kmt_site *kmt_model_sites(const struct kmt_model *m, size_t *n);
const struct kmt_cache *kmt_model_caches(const struct kmt_model *m, size_t *n);
const struct kmt_proc *kmt_model_procs(const struct kmt_model *m, size_t *n);
const struct kmt_misuse *kmt_model_misuse(const struct kmt_model *m, size_t *n);
const struct kmt_outstanding *kmt_model_outstanding(const struct kmt_model *m, size_t *n);
/* Caches the kernel allocates or frees untraced, most signs first. */
const struct kmt_untraced *kmt_model_untraced(const struct kmt_model *m, size_t *n);
const struct kmt_gfp_count *kmt_model_gfp(const struct kmt_model *m, size_t *n);
/* Watchpoint samples by object group, offset and instruction, sorted so. */
const struct kmt_access_stat *kmt_model_access(const struct kmt_model *m, size_t *n);
/* Page-allocating functions (from --stack stacks), as sites. */
const struct kmt_site *kmt_model_page_sites(const struct kmt_model *m, size_t *n);
/* vmalloc: allocating functions (--stack), areas by size, and those live at the end. */
const struct kmt_site *kmt_model_vmap_sites(const struct kmt_model *m, size_t *n);
const struct kmt_vmap_size *kmt_model_vmap_sizes(const struct kmt_model *m, size_t *n);
const struct kmt_vmap_area *kmt_model_vmap_live(const struct kmt_model *m, size_t *n);

/*
 * Slab allocations by call site and the stack of its callers (recordings
 * with --stack): one row per pair, rows by call site address, then bytes.
 * allocs = frees + live_objects + objects uncertain or freed unseen.
 */
struct kmt_site_stack {
	uint64_t site;			/* the call site (kmt_site.addr) */
	uint32_t stack;			/* its callers: kmt_model_stack() */
	uint64_t allocs, frees, bytes_req, bytes_alloc;
	uint64_t live_objects, live_bytes;	/* at the end (certain ones) */
};

const struct kmt_site_stack *kmt_model_stacks(const struct kmt_model *m, size_t *n);
/* The rows of call site @site, most bytes first (NULL, 0 if none). */
const struct kmt_site_stack *kmt_model_site_stacks(const struct kmt_model *m, uint64_t site,
						   size_t *n);
/*
 * The frames of stack @id: return addresses, the call site's caller first
 * (at most kmt_model_opts.stack_depth of them). May be empty: the stack
 * showed nothing above the call site.
 */
const uint64_t *kmt_model_stack(const struct kmt_model *m, uint32_t id, size_t *n);
/*
 * The id in @m (merged from shards: kmt_model_merge()) of the stack that
 * shard @shard numbered @id (UINT32_MAX: none); @id itself if @m was
 * never merged.
 */
uint32_t kmt_model_shard_stack(const struct kmt_model *m, unsigned int shard, uint32_t id);

/*
 * Detail (kmt_model_opts.detail). The time series: the trace cut into at
 * most KMT_TL_BUCKETS intervals of equal width from its first event (the
 * width doubles as the trace grows). Slab counts match the summary: the
 * allocs series sums to allocs, frees to frees (objects allocated in the
 * trace), and the running sum of net to live_bytes + uncertain_bytes at
 * the end (an object found freed unseen leaves when its address is
 * allocated again). Per cache, net bytes at full resolution; per call
 * site and task, KMT_TL_COARSE intervals in one.
 */
#define KMT_TL_BUCKETS 2048
#define KMT_TL_COARSE 8

struct kmt_gap {
	uint64_t ts;
	int cpu;
	int64_t lost;			/* events, or -1: unknown */
	bool truncated;			/* the CPU's recording stopped there */
};

struct kmt_timeline {
	uint64_t start, width;		/* ns, the trace clock */
	uint32_t n;			/* intervals in use */
	const uint64_t *allocs, *frees;	/* slab objects */
	const uint64_t *bytes_alloc, *bytes_freed;
	const int64_t *net;		/* bytes allocated - bytes gone */
	const uint64_t *page_allocs[KMT_MAX_ORDER + 1];	/* by order (the last: higher) */
	const uint64_t *forks, *newtasks;	/* process births */
	size_t nr_caches, nr_sites, nr_procs;	/* as kmt_model_caches(), _sites(), _procs() */
	const int64_t *const *cache_net;	/* [cache][interval]; NULL: none */
	const int64_t *const *site_net;	/* [site][interval / KMT_TL_COARSE] */
	const int64_t *const *proc_net;	/* [task][interval / KMT_TL_COARSE] */
	const struct kmt_gap *gaps;	/* losses and truncations, in time order */
	size_t nr_gaps;
};

/* Slab allocations per call site, cache and task (indices into the tables above). */
struct kmt_group {
	uint32_t site, cache, proc;	/* cache, proc: UINT32_MAX if unknown */
	uint64_t allocs, bytes_req, bytes_alloc;
	uint64_t live_objects, live_bytes;	/* at the end (certain ones) */
	uint64_t irq_bytes, acct_bytes, unknown_bytes;	/* of bytes_alloc, as kmt_proc's */
};

/*
 * Slab allocations per cgroup (kmt_proc.cgroup, .memcg: the same
 * pointers) and call site, from the groups (kmt_model_opts.detail or
 * .groups, and .cgroups): the bytes of bytes_alloc by what they asked of
 * memory accounting, as the report's cgroups table has them. Sorted by
 * cgroup path, memcg path, then site address.
 */
/*
 * Slab bytes by what they asked of memory accounting, as a cgroup counts
 * them: in interrupt context apart; of the rest, a kernel thread's apart
 * (never its cgroup's to pay, whatever they asked); a task's accounted,
 * of unknown charge, and the rest unaccounted. The one rule, for every table.
 */
struct kmt_charge {
	uint64_t acct_bytes, unacct_bytes, unknown_bytes, irq_bytes, kthread_bytes;
};
/* Add bytes @alloc of which @irq, @acct, @unknown (kmt_proc's, kmt_group's), by a kernel thread or not. */
static inline void kmt_charge_add(struct kmt_charge *c, uint64_t alloc, uint64_t irq, uint64_t acct,
				  uint64_t unknown, bool kthread)
{
	c->irq_bytes += irq;
	if (kthread) {
		c->kthread_bytes += alloc - irq;
		return;
	}
	c->acct_bytes += acct;
	c->unknown_bytes += unknown;
	c->unacct_bytes += alloc - irq - acct - unknown;
}

/* The one cgroup a task is shown in: its v2 path, else (v1 alone) its memory cgroup's; NULL: unknown. */
static inline const char *kmt_cgroup_name(const char *cgroup, const char *memcg)
{
	return cgroup ? cgroup : memcg;
}

struct kmt_cgroup_site {
	const char *cgroup, *memcg;
	uint64_t site;			/* the call site's address */
	uint64_t allocs, bytes_alloc, live_bytes;
	struct kmt_charge ch;
};

/* Slab allocations by requested and allocated size. */
struct kmt_size_count {
	uint32_t req, alloc;		/* bytes (4 GiB - 1 at most) */
	uint64_t count;
};

/* NULL without kmt_model_opts.detail. */
const struct kmt_timeline *kmt_model_timeline(const struct kmt_model *m);
const struct kmt_group *kmt_model_groups(const struct kmt_model *m, size_t *n);
/* By allocated size, then requested. */
const struct kmt_size_count *kmt_model_sizes(const struct kmt_model *m, size_t *n);
/* Every row (NULL, 0 without groups or cgroups); after kmt_model_finish(). */
const struct kmt_cgroup_site *kmt_model_cgroup_sites(const struct kmt_model *m, size_t *n);
/* The rows of cgroup (@cgroup, @memcg) (pointers as kmt_proc has them), NULL, 0 if none. */
const struct kmt_cgroup_site *kmt_model_cgroup_sites_of(const struct kmt_model *m, const char *cgroup,
							const char *memcg, size_t *n);

const char *kmt_misuse_name(enum kmt_misuse_kind k);
/* What kind @k means, in a line ("an object freed twice"). */
const char *kmt_misuse_doc(enum kmt_misuse_kind k);
/* Why the kernel allocates or frees objects of cache @name untraced, in words (static). */
const char *kmt_untraced_why(const char *name);
enum kmt_severity kmt_misuse_severity(enum kmt_misuse_kind k);
const char *kmt_severity_name(enum kmt_severity s);

/* Bucket of a duration in ns (log2), and a bucket's lower bound. */
int kmt_life_bucket(uint64_t ns);
uint64_t kmt_life_bucket_ns(int b);

#endif
