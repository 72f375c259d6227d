/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private structures of the allocation model: the object tables and the
 * small maps from keys (addresses, names, pids) to array indices.
 */
#ifndef MODEL_LOCAL_H
#define MODEL_LOCAL_H

#include <kmemtrace/base.h>
#include <kmemtrace/model.h>
#include "base/kmt-local.h"

/* Private to the library: hidden from its users (see the Makefile). */
#pragma GCC visibility push(hidden)

enum { OBJ_EMPTY = 0, OBJ_LIVE };

/* A live object's details, in a dense pool (the index points here). */
struct obj {
	uint64_t key;
	uint64_t ts;			/* allocation time */
	uint32_t site;			/* allocation site index */
	uint32_t cache;			/* cache index, or NONE */
	uint32_t req, alloc;		/* bytes (saturated at 4 GiB) */
	uint32_t proc;			/* allocating task index */
	uint32_t loss_seq;		/* losses seen when allocated */
	uint16_t cpu;
	uint8_t state;			/* OBJ_LIVE, or OBJ_EMPTY on the free list */
	uint8_t kind;			/* KMT_EV_KMALLOC, ... */
	uint8_t order;
	uint8_t hit;			/* a watchpoint sample fell in it */
	uint8_t twin;			/* a large kmalloc's two events, merged into it */
	uint8_t guessed;		/* its allocation named no cache: @cache is inferred */
	uint8_t charge;			/* CHARGE_*: what its allocation asked of memcg */
	uint8_t spare[3];
	uint32_t stack;			/* its (site, stack) row + 1, or 0 (model-stack.c) */
	uint32_t group;			/* its (site, cache, task) row, or NONE (model-detail.c) */
	uint32_t gfp;			/* the allocation's gfp flags (their low 32 bits) */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct obj) == 64, "one object, one cache line");

#define NONE UINT32_MAX

/* An allocation's charge (struct obj.charge): none asked, asked, unknown, in interrupt context. */
enum { CHARGE_NONE, CHARGE_ASKED, CHARGE_UNKNOWN, CHARGE_IRQ };
static inline uint8_t model_charge_of(const struct kmt_event *ev)
{
	if (ev->flags & KMT_EVF_IRQ)
		return CHARGE_IRQ;
	return ev->flags & KMT_EVF_ACCOUNTED ? CHARGE_ASKED : ev->flags & KMT_EVF_ACCT_UNKNOWN ? CHARGE_UNKNOWN
											       : CHARGE_NONE;
}
/* @al bytes of charge @charge into a row's irq, acct and unknown bytes (kmt_proc's, kmt_group's). */
static inline void model_charge_count(uint8_t charge, uint64_t al, uint64_t *irq, uint64_t *acct, uint64_t *unknown)
{
	if (charge == CHARGE_IRQ)
		*irq += al;
	else if (charge == CHARGE_ASKED)
		*acct += al;
	else if (charge == CHARGE_UNKNOWN)
		*unknown += al;
}
/* "No cache" where a cache index has 16 bits (a freed address's slot, a group's key). */
#define NO_CACHE16 0xffffu
#define SLOT_LIVE 0x80000000u
#define SLOT_NOSITE 0x7fffffffu		/* freed, allocation site unknown */

/*
 * The index of addresses: 16-byte slots, open addressing with linear
 * probing. A slot is live (val = SLOT_LIVE | pool index) or remembers an
 * address freed in the trace (val = its allocation site, or NONE; loss =
 * losses seen when freed), which is how a double free is told from the
 * free of an object allocated before the trace. One probe per event, one
 * cache line; the details of live objects stay in a small dense pool.
 */
struct islot {
	uint64_t key;			/* 0: empty (keys are stored mixed) */
	uint32_t val;
	uint16_t loss;			/* losses seen when freed (low 16 bits) */
	uint16_t cache;			/* cache of the freed object, or NO_CACHE16 */
};

struct otab {
	struct islot *s;
	size_t cap, n, bytes;
	size_t dead;			/* slots remembering a freed address */
	size_t compactions;		/* times the freed addresses were forgotten */
	struct obj *pool;		/* mapped (model-tab.c): pool_bytes */
	size_t pool_bytes;
	uint32_t pool_n, pool_cap, live;
	/*
	 * Freed pool objects, a stack (the last freed is reused first): apart
	 * from the objects, so taking one reads no cold object. Room for
	 * pool_cap.
	 */
	uint32_t *free, nr_free;
};

int otab_init(struct otab *t, size_t cap);
void otab_release(struct otab *t);
/* The slot of @key, or NULL. */
struct islot *otab_find(struct otab *t, uint64_t key);
/* The slot of @key, a new empty one (val NONE) if absent; NULL on ENOMEM. */
struct islot *otab_get(struct otab *t, uint64_t key);
/* Make @s live with a new pool object; NULL on ENOMEM (pool pointers go stale). */
struct obj *otab_obj_new(struct otab *t, struct islot *s);
/* A size in an object's 32 bits: saturated. */
static inline uint32_t sat32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* The live object of @s. */
static inline struct obj *slot_obj(struct otab *t, const struct islot *s)
{
	return &t->pool[s->val & ~SLOT_LIVE];
}

static inline bool slot_live(const struct islot *s)
{
	return s->val != NONE && (s->val & SLOT_LIVE);
}

/* The object of @s is freed: remember the address with @site, @cache, @loss. */
void otab_kill(struct otab *t, struct islot *s, uint32_t site, uint32_t cache, uint32_t loss);
/* Forget @s entirely (pages, per-CPU: no double-free detection). */
void otab_remove(struct otab *t, struct islot *s);
/* Where @key would be probed first, for prefetching. */
static inline const void *otab_slot(const struct otab *t, uint64_t key);

#define KEY_MIX 0x8000000000000001ULL	/* so that pfn 0 is not "empty" */

static inline const void *otab_slot(const struct otab *t, uint64_t key)
{
	return &t->s[kmt_hash64(key ^ KEY_MIX) & (t->cap - 1)];
}

/* ---- the model itself, shared by every file of model/ and by analyse/ (its shards) ---- */

#define LOOKAHEAD 16		/* events queued so their objects can be prefetched */

/*
 * A CPU's last slab allocations still awaiting their stacks. A
 * stack comes right after its allocation, unless an interrupt's events
 * come first (an RCU callback's kfree, or an allocation with its own
 * stack): then it is the newest allocation a few events back (any number
 * if only frees came between) whose call site is one of the stack's frames.
 */
#define SLAB_WAIT 4			/* a power of 2 */
#define SLAB_WAIT_EVENTS 8
struct slab_wait {
	uint32_t seq;
	int32_t pid;
	uint64_t ptr;
	uint64_t site;			/* its call site */
	uint64_t ts;			/* its time: the object a stack is for */
	uint8_t kind;			/* KMT_EV_KMALLOC or KMT_EV_CACHE_ALLOC */
};

struct cpu_state {
	int32_t memo_pid;		/* the last task seen here ... */
	uint32_t memo_proc;		/* ... its process index + 1 (0: none: a
					   zeroed CPU is untouched memory) ... */
	uint32_t memo_gen;		/* ... valid while names are unchanged */
	uint32_t seq;			/* events seen on this CPU */
	uint32_t last_slab_seq;		/* seq of its last slab allocation */
	uint64_t last_slab_ptr;
	uint32_t alloc_seq;		/* seq of its last allocation of any kind */
	uint32_t page_seq;		/* seq of its last page allocation */
	int32_t page_pid;
	uint32_t page_order;
	uint64_t page_pfn;
	bool page_pending;
	bool last_scope;		/* the last event here was in scope (for its stack) */
	bool last_alloc;		/* the last event here was an allocation ... */
	bool last_stacked;		/* ... and a stack came after it already */
	bool vmap_pending;		/* its last event was a vmalloc, to name from a stack */
	uint8_t nslab_wait;		/* of slab_wait, a ring ... */
	uint8_t slab_wait_next;		/* ... whose next entry goes here */
	struct slab_wait slab_wait[SLAB_WAIT];
	uint32_t vmap_seq;
	uint64_t vmap_addr;
	bool pcpu_pending;		/* its last event was a per-CPU area's allocation */
	uint32_t pcpu_seq;
	uint64_t pcpu_ptr;
	/*
	 * The vmalloc's own stack is often cut short by the unwinder (two
	 * frames on 6.18); the stack of its vmap_area allocation just before,
	 * same task and CPU, names the caller instead.
	 */
	bool vmap_area_pending;
	uint32_t vmap_area_seq;
	uint64_t vmap_caller;
	int32_t vmap_caller_pid;
};

/*
 * model-claim.c: what a CPU allocated and has not given a stack yet, and
 * which of them a stack is: exactly one claimant, or none.
 */
struct claim {
	enum kmt_kind kind;		/* KMT_EV_KMALLOC (any slab object), KMT_EV_PAGE_ALLOC,
					   KMT_EV_VMAP_ALLOC, KMT_EV_PCPU_ALLOC, or KMT_EV_NONE */
	uint64_t ptr;			/* its address (pages: pfn) */
	uint64_t ts;			/* a slab object's allocation time */
	enum kmt_kind obj_kind;		/* a slab object's kind (for dump) */
	uint32_t order;			/* a page's order */
	uint64_t caller;		/* a vmalloc area: the caller its vmap_area allocation's
					   stack named, of the same task (0: none) */
};

/*
 * What each CPU's sequence says of an event (model_claim_event()): a
 * stack's claim, and whether a slab allocation came right after one at
 * the same address on its CPU (a large kmalloc traced twice). Decided in
 * stream order by whoever sees all of the CPU's events: the one model,
 * shard 0, or (no filter, window or stack slices) the part that read the
 * CPU (analyse-parts.c), which writes it right after the event
 * (struct model_slot) for the shards to read (kmt_model.seq_given).
 */
struct model_verdict {
	struct claim c;
	bool twin_prev;
};
struct model_slot {
	struct kmt_event ev;
	struct model_verdict v;
};
static inline const struct model_verdict *model_verdict_of(const struct kmt_event *ev)
{
	return &((const struct model_slot *)(const void *)ev)->v;
}

/* kmt_life_bucket(), inline for the model's hot paths. */
static inline int model_life_bucket(uint64_t ns)
{
	int b = ns ? 64 - __builtin_clzll(ns) : 0;

	return b < KMT_LIFE_BUCKETS ? b : KMT_LIFE_BUCKETS - 1;
}

/* A gap in @cs's events: nothing before it is waiting any more. */
static inline void model_claim_break(struct cpu_state *cs)
{
	cs->page_pending = false;
	cs->nslab_wait = 0;
	cs->seq += 2;
}
/*
 * Event @ev on its CPU's sequence @cpu[ev->cpu] (the one owner of each
 * CPU's sequence): what it is waiting for, if @wanted (only allocations
 * in the chosen tasks or cache wait for their stacks), and what it decides
 * (@v): a stack's claim, taken from those waiting; a slab allocation's twin.
 */
void model_claim_event(struct cpu_state *cpu, const struct kmt_model_opts *o, const struct kmt_event *ev,
		       bool wanted, struct model_verdict *v);
/* A slab allocation from the vmap_area cache: its stack may name a vmalloc caller. */
static inline bool model_vmap_area(const struct kmt_event *ev)
{
	return ev->name_len == 9 && !memcmp(ev->name, "vmap_area", 9);
}
/* A page or vmalloc allocation that failed (no object). */
static inline bool model_page_failed(const struct kmt_event *ev)
{
	return (ev->flags & KMT_EVF_PAGE_PTR) ? ev->ptr == 0 : ev->ptr == UINT64_MAX || ev->ptr == UINT32_MAX;
}
static inline bool model_vmap_failed(const struct kmt_event *ev)
{
	return (ev->flags & KMT_EVF_FAILED) || !ev->ptr;
}

/* A queued event, with its strings copied (its record may go away). */
struct queued {
	struct kmt_event ev;
	char name[48];
};

/* When an entry of a registry was made, and its key. */
struct reg_meta {
	uint64_t born, key;
};

/* Objects of guessed caches live now, named by their pages where a free named them (model-slab.c). */
void model_slab_name_live(struct kmt_model *m);

/* model-registry.c: call sites, caches and tasks, each found by key. */
struct model_registry {
	struct kmt_map site_map, page_site_map, cache_map, proc_map, pid_map;
	VEC(struct kmt_site) sites;
	VEC(struct kmt_site) page_sites;
	VEC(struct kmt_cache) caches;
	VEC(struct kmt_proc) procs;
	struct { uint64_t addr; uint32_t idx; } site_memo[256];
	/*
	 * Beside sites, caches and tasks, by index: the stream position of
	 * the event that made each (kmt_model.pos), and its key in the map
	 * (model-merge.c merges shards in that order, by those keys).
	 */
	VEC(struct reg_meta) site_meta, cache_meta, proc_meta;
	uint32_t *cache_hint;		/* per site: the cache it last used */
	size_t cache_hint_n;
	/*
	 * Kernels whose kmem_cache_alloc names no cache (before 6.18): the
	 * machine page of a slab object -> the cache a named free (or an
	 * allocation named by its page) put there. A page belongs to one
	 * slab, a slab to one cache (model-slab.c).
	 */
	struct kmt_map slab_pages;
	uint32_t page_shift;
	uint32_t comm_gen;		/* bumped when a task is renamed */
};

/* model-misuse.c: findings, what was never freed, untraced traffic. */
struct model_findings {
	struct kmt_map misuse_map;
	VEC(struct kmt_misuse) misuse;
	VEC(struct reg_meta) misuse_meta;	/* beside misuse: when, its key */
	VEC(struct kmt_outstanding) outstanding;
	VEC(struct kmt_untraced) untraced;
};

/* model-page.c: pages, per-CPU areas, gfp flags. */
struct model_pages {
	struct otab pages, pcpu;
	struct kmt_map gfp_map;
	VEC(struct kmt_gfp_count) gfp;
};

/* model-vmap.c: vmalloc areas. */
struct model_vmap {
	struct otab vmap;
	struct kmt_map vmap_site_map, vmap_size_map;
	VEC(struct kmt_site) vmap_sites;
	VEC(struct kmt_vmap_size) vmap_sizes;
	VEC(struct kmt_vmap_area) vmap_live;
};

struct kmt_model {
	struct kmt_model_opts o;
	struct queued q[LOOKAHEAD];
	unsigned int qhead, qlen;
	struct otab slab;		/* slab objects (model-slab.c) */
	struct model_registry reg;
	struct model_findings fnd;
	struct model_pages pg;
	struct model_vmap vm;
	struct kmt_summary sum;
	uint64_t *lost_by_cpu, *events_by_cpu;
	struct cpu_state *cpu;
	struct kmt_model_hooks hooks;
	struct access_tab *access;	/* per (object, offset, ip) counts */
	struct kmt_stacks *stacks;	/* slab allocations by stack (model-stack.c) */
	struct kmt_detail *detail;	/* time series etc., if asked for (model-detail.c) */
	uint32_t loss_seq;
	/*
	 * Sharded (-j, model-merge.c): this model is shard @shard of
	 * @nshards. Shard 0 is shown every event and routes the slab objects
	 * of the others (model_shard_of()) to them; they take only those.
	 * @pos is the stream position (events and names), shard 0's or as it
	 * routed it: registries stamp their entries with it.
	 */
	uint32_t shard, nshards;
	uint64_t pos;
	/* Merged: each former shard's stack ids, as this model numbers them (kmt_model_shard_stack()). */
	uint32_t **shard_heads;
	unsigned int nshard_heads;
	/* Shard 0, in model_route_events(): where event @ri of the run goes. */
	struct model_route *route;
	uint8_t *route_to;
	size_t ri;
	bool twin_prev;			/* the allocation being taken came right after
					   one at its address on its CPU */
	struct claim claim;		/* what the last stack was given to */
	char cache_want[64];		/* --cache: the name its events carry */
	/* -G: the cgroup chosen, in which hierarchy (model-registry.c: cgroup_filter()). */
	const char *cgroup_want;
	bool cgroup_want_memcg;
	uint64_t gap_until;		/* damaged data: every event up to here is in a gap */
	bool filtering;
	bool seq_given;			/* the parts decided each CPU's sequence (model_verdict) */
	bool scope;			/* the event being processed concerns the chosen tasks */
	bool started;			/* an event was seen */
	bool oom;
	/*
	 * Shard 0 of a model fed live in shards (model-shards.c): the shards'
	 * sums as of the last sync, which its summary, call sites, caches and
	 * tasks give (NULL: its own); [MODEL_REG_NR] sums.
	 */
	const struct kmt_summary *live_sum;
	const struct model_reg_sum *live_reg;
};

/*
 * What shard 0 decided of an event another shard takes (model.c): its
 * stream position, the loss epoch, and (unless the parts decided them:
 * seq_given) twin_prev and a stack's claim.
 */
struct model_route {
	uint64_t pos;
	uint64_t claim_ptr, claim_ts;
	uint32_t loss_seq;
	uint8_t twin_prev, obj_kind;
};
#define ROUTE_ALL 0xff			/* every shard takes it (task names) */

/*
 * A run of events into shard 0, which keeps every CPU's sequence and
 * says in @to (a shard, or ROUTE_ALL) and @r where each goes; into shard
 * k, the run with what shard 0 said (and its first event's time). Then model_pos() and model_name_at()
 * for the task names read before a window (analyse.c).
 */
int model_route_events(struct kmt_model *m, const struct kmt_event *const *ev, size_t n, uint8_t *to,
		       struct model_route *r, bool known);
int model_routed_events(struct kmt_model *m, const struct kmt_event *const *ev, size_t n, const uint8_t *to,
			const struct model_route *r, uint64_t first_ts);
uint64_t model_pos(const struct kmt_model *m);
void model_name_at(struct kmt_model *m, const struct kmt_event *ev, uint64_t pos);

/*
 * The shard of @n that owns the slab object at @ptr: a hash's high bits
 * (tables use its low ones). From 3 shards on, shard 0 owns none: it
 * routes every event, the part no number of shards spreads, so the
 * others take all the objects (with 2, shard 0 takes half: it would
 * otherwise wait on shard 1).
 */
static inline uint32_t model_shard_of(uint64_t ptr, uint32_t n)
{
	/*
	 * By 64 KiB: a machine page's objects (pages of up to 64 KiB) in one
	 * shard, which alone learns which cache the page is (slab_pages).
	 */
	uint64_t h = kmt_hash64(ptr >> 16) >> 32;

	return n < 3 ? (uint32_t)((h * n) >> 32) : 1 + (uint32_t)((h * (n - 1)) >> 32);
}

/* Bytes in 2^@order pages of the traced machine. */
static inline uint64_t model_page_bytes(const struct kmt_model *m, uint32_t order)
{
	return (uint64_t)(m->o.page_size ? m->o.page_size : 4096) << (order < 30 ? order : 30);
}

/* Model shards (and their threads) at most: kmt_model_shards_for() says no more. */
#define MODEL_SHARDS_MAX 64

/* An event that names a task (fork, exec, rename, new task, a move to a cgroup): every shard takes it. */
static inline bool model_names_task(unsigned int k)
{
	return k == KMT_EV_FORK || k == KMT_EV_EXEC || k == KMT_EV_RENAME || k == KMT_EV_NEWTASK ||
	       k == KMT_EV_CGROUP;
}

/* A slab object's event: kmalloc, kmem_cache_alloc, kfree, kmem_cache_free. */
static inline bool model_slab_kind(unsigned int k)
{
	return k == KMT_EV_KMALLOC || k == KMT_EV_CACHE_ALLOC || k == KMT_EV_KFREE || k == KMT_EV_CACHE_FREE;
}

/*
 * Which of @n shards takes @ev first: a slab event its object's
 * (model_shard_of()), anything else shard 0, which routes stacks and
 * names as it takes them. @known in model_route_events(): the producer
 * said it already, as it wrote the event (analyse-parts.c).
 */
static inline uint8_t model_route_of(const struct kmt_event *ev, uint32_t n)
{
	bool slab = model_slab_kind(ev->kind) && ev->cpu >= 0 && ev->cpu < KMT_MAX_CPUS;

	return slab ? (uint8_t)model_shard_of(ev->ptr, n) : 0;
}

/* model-registry.c: call sites, caches, tasks, the filters, allocator frames. */
struct kmt_site *model_site_of(struct kmt_model *m, struct kmt_map *map, void *vec, uint64_t addr);
/* The slab call site of @addr, through a memo (NULL on ENOMEM). */
struct kmt_site *model_alloc_site(struct kmt_model *m, uint64_t addr);
/*
 * The cache of @ev: by name, kmalloc by size class, a kmem_cache_alloc
 * that names none by its page or sizes (NONE on ENOMEM).
 */
uint32_t model_cache_of(struct kmt_model *m, const struct kmt_event *ev);
/* The cache named @name (@len bytes) for free @ev, made if new. */
uint32_t model_cache_named(struct kmt_model *m, const struct kmt_event *ev, const char *name, size_t len);
/* The same through the hint site index @site keeps. */
uint32_t model_cache_hinted_slow(struct kmt_model *m, uint32_t site, const struct kmt_event *ev);
/* (Inline: per allocation; the hint fits nearly always.) */
static inline uint32_t model_cache_hinted(struct kmt_model *m, uint32_t site, const struct kmt_event *ev)
{
	uint32_t c = site < m->reg.cache_hint_n ? m->reg.cache_hint[site] : NONE;

	if (c != NONE) {
		const struct kmt_cache *k = &m->reg.caches.v[c];

		if (ev->kind == KMT_EV_KMALLOC ? k->is_kmalloc && k->object_size == ev->bytes_alloc
		    : !k->is_kmalloc && k->name_len == ev->name_len &&
		      !memcmp(k->name, ev->name, ev->name_len))
			return c;
	}
	return model_cache_hinted_slow(m, site, ev);
}
uint32_t model_proc_of(struct kmt_model *m, int32_t pid);
/* model_proc_of() through @cs's memo of the last task it saw. */
static inline uint32_t model_proc_of_cpu(struct kmt_model *m, struct cpu_state *cs, int32_t pid)
{
	uint32_t p;

	if (cs->memo_pid == pid && cs->memo_gen == m->reg.comm_gen && cs->memo_proc)
		return cs->memo_proc - 1;
	p = model_proc_of(m, pid);
	cs->memo_pid = pid;
	cs->memo_gen = m->reg.comm_gen;
	cs->memo_proc = p == NONE ? 0 : p + 1;
	return p;
}
/* -G (kmt_model_opts.cgroup): which hierarchy, and the path in it (cgroup_want). */
void model_cgroup_filter(struct kmt_model *m);
/* Is the task one the filter chose (always, without a filter)? */
bool model_task_wanted(struct kmt_model *m, int32_t pid, uint32_t proc);
bool model_pid_wanted(struct kmt_model *m, int32_t pid);
/* --cache: is cache @c the one chosen (always, without the option)? */
bool model_cache_wanted(const struct kmt_model *m, uint32_t c);
/* A frame of the allocators themselves, skipped to find who asked. */
bool model_allocator_frame(const char *fn);

/* model-misuse.c: findings as they come, judged at the end. */
void model_note_misuse(struct kmt_model *m, enum kmt_misuse_kind kind, const struct kmt_event *ev,
		       uint64_t alloc_site, uint32_t cache, const char *detail);
/* Untraced traffic apart, per cache; the rest sorted: errors first. */
void model_misuse_finish(struct kmt_model *m);

/* model-slab.c, model-page.c: the events of each kind. */
/* A slab allocation of the chosen cache and tasks (always, without a filter). */
bool model_alloc_wanted(struct kmt_model *m, const struct kmt_event *ev, uint32_t proc);
void model_slab_alloc(struct kmt_model *m, const struct kmt_event *ev);
void model_slab_free(struct kmt_model *m, const struct kmt_event *ev);
void model_page_alloc(struct kmt_model *m, const struct kmt_event *ev);
void model_page_free(struct kmt_model *m, const struct kmt_event *ev);
/* Stack @ev of a page (@c: its claim): the function that asked for it. */
void model_page_stack(struct kmt_model *m, const struct kmt_event *ev, const struct claim *c);
void model_pcpu_alloc(struct kmt_model *m, const struct kmt_event *ev);
void model_pcpu_free(struct kmt_model *m, const struct kmt_event *ev);

/* model-vmap.c: vmalloc areas. */
int model_vmap_init(struct kmt_model *m);
void model_vmap_release(struct kmt_model *m);
void model_vmap_alloc(struct kmt_model *m, const struct kmt_event *ev);
void model_vmap_free(struct kmt_model *m, const struct kmt_event *ev);
/* A stack right after a vmalloc on its CPU (@c: its claim): the function that asked. */
void model_vmap_stack(struct kmt_model *m, const struct kmt_event *ev, const struct claim *c);
/* The first frame of @ev that is not the allocators': a function's address, or 0. */
uint64_t model_caller_of(const struct kmt_symbols *syms, const struct kmt_event *ev);
void model_vmap_finish(struct kmt_model *m, uint64_t ts);

/* model-stack.c: slab allocations by call site and stack. */
int model_stack_init(struct kmt_model *m);
void model_stack_release(struct kmt_model *m);
/* A stack event: the callers of the slab allocation just before it on its CPU. */
void model_stack_slab(struct kmt_model *m, const struct kmt_event *ev, const struct claim *c);
void model_stack_unalloc(struct kmt_model *m, struct obj *o);	/* a twin undone */
void model_stack_freed(struct kmt_model *m, const struct obj *o);
void model_stack_live(struct kmt_model *m, const struct obj *o);	/* live at the end, certain */
/* The stack id of @o (kmt_model_stack()), or UINT32_MAX; before model_stack_finish(). */
uint32_t model_stack_id(const struct kmt_model *m, const struct obj *o);
void model_stack_finish(struct kmt_model *m);

/*
 * model-detail.c: what only a picture needs (kmt_model_opts.detail): time
 * series, allocations by site, cache and task, and by requested size.
 * All do nothing without the option.
 */
int model_detail_init(struct kmt_model *m);
void model_detail_release(struct kmt_model *m);
void model_detail_alloc(struct kmt_model *m, struct obj *o);
void model_detail_unalloc(struct kmt_model *m, const struct obj *o);	/* a twin undone */
/* @o leaves at @ts: freed (@freed) or found gone by a new allocation at its address. */
void model_detail_gone(struct kmt_model *m, const struct obj *o, uint64_t ts, bool freed);
void model_detail_live(struct kmt_model *m, const struct obj *o);	/* live at the end, certain */
void model_detail_page(struct kmt_model *m, uint64_t ts, uint32_t order);
void model_detail_birth(struct kmt_model *m, const struct kmt_event *ev);
void model_detail_gap(struct kmt_model *m, int cpu, int64_t lost, uint64_t ts, bool truncated);
void model_detail_finish(struct kmt_model *m);
/*
 * model-cgroup.c: the groups (kmt_model_groups()) by cgroup and call site,
 * into a malloc'd array (*@v, *@n; NULL, 0 without cgroups); m->oom on ENOMEM.
 */
void model_cgroup_sites(struct kmt_model *m, struct kmt_cgroup_site **v, size_t *n);

/* model-object.c: per-object calls out and watchpoint samples. */
void model_emit(struct kmt_model *m, const struct obj *o, enum kmt_fate fate,
		const struct kmt_event *free_ev);
void model_emit_preexisting(struct kmt_model *m, const struct kmt_event *ev);
void model_emit_live(struct kmt_model *m);
void model_access(struct kmt_model *m, const struct kmt_event *ev);
void model_access_finish(struct kmt_model *m);
void model_access_release(struct kmt_model *m);

/*
 * model-merge.c: a sharded model's parts merged, each registry in the order
 * its entries were first made (kmt_model.pos), whichever shard made them.
 * A registry's entries in a shard: how many, and when each was made.
 */
struct shard_list {
	size_t (*count)(const struct kmt_model *m);
	uint64_t (*born)(const struct kmt_model *m, size_t i);
};
struct shard_ent {
	uint64_t born;
	uint32_t shard, idx;
};
/* The counts each shard keeps of the events and objects it takes, @s's added to @d's (not the losses: shard 0's). */
void model_summary_add(struct kmt_summary *d, const struct kmt_summary *s);
/* model-registry.c: the entries of @l in the @n shards, by birth (then shard, index); NULL on ENOMEM. */
struct shard_ent *model_shard_order(struct kmt_model **sh, unsigned int n, const struct shard_list *l, size_t *total);
/* Each part merges its own: @sh[0] is the model merged into; the maps are per shard, old index -> new. */
int model_registry_merge(struct kmt_model **sh, unsigned int n, uint32_t **site_map, uint32_t **cache_map,
			 uint32_t **proc_map);
int model_misuse_merge(struct kmt_model **sh, unsigned int n, uint32_t *const *cache_map);
int model_stack_merge(struct kmt_model *m, struct kmt_model **sh, unsigned int n, uint32_t *const *site_map,
		      uint32_t **row_map);
/*
 * model-registry.c: one registry of @n shards added up by key as it is now,
 * the shards left as they are (the live model in shards' sums:
 * model-shards.c). An entry keeps its index from one sum to the next.
 */
enum model_reg { MODEL_REG_SITES, MODEL_REG_CACHES, MODEL_REG_PROCS, MODEL_REG_NR };
struct model_reg_sum {
	struct kmt_map map;		/* key -> index */
	char *v;			/* the entries, of the registry's type */
	uint32_t *round;		/* per entry: the sum that last filled it */
	size_t n, alloc;
	uint32_t rounds;
};
int model_registry_sum(struct kmt_model *const *sh, unsigned int n, enum model_reg which, struct model_reg_sum *s);
void model_reg_sum_release(struct model_reg_sum *s);
/* Stack rows in @m (kmt_model_merge() sizes its maps by it). */
size_t model_stack_rows(const struct kmt_model *m);
/* model-detail.c: the details' groups in @m (0 without details); and the merge, @group_map filled. */
size_t model_detail_groups(const struct kmt_model *m);
int model_detail_merge(struct kmt_model **sh, unsigned int n, uint32_t *const *site_map,
		       uint32_t *const *cache_map, uint32_t *const *proc_map, uint32_t **group_map);

#pragma GCC visibility pop

#endif
