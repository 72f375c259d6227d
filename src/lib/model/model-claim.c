/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Each CPU's sequence of events (src/lib/model/model-local.h): the one
 * owner of what each CPU has allocated and not yet given a stack, of the
 * rule that gives each stack to exactly one of them, and of the doubled
 * large kmalloc (an allocation right after one at the same address on its
 * CPU). model_claim_event() takes every event of a CPU in order, on the
 * model's thread (the one model, or shard 0) or, with the model in shards
 * and no filter, window or stack slices, on the part that reads the CPU
 * (analyse-parts.c); its verdict is the same either way.
 *
 * The kernel puts a stack right after its event on the same CPU, unless
 * an interrupt's events come between. So a stack is, in this order:
 *  - with a time-sliced recording (--stack-sample), where every event has
 *    a stack: the stack of an event that allocates nothing, right after it;
 *  - the slab allocation right before it;
 *  - the vmalloc area right before it;
 *  - the per-CPU area right before it (said in dump; the model keeps no
 *    callers of per-CPU areas);
 *  - the page allocated last, right before it or after any number of
 *    events of the same task that allocated nothing (an RCU callback's
 *    frees: 9 to 120 seen);
 *  - the newest slab allocation of the same task, 8 events back at most,
 *    whose call site is one of its frames (an interrupt's allocation and
 *    stack came between), or any number back if nothing was allocated
 *    since (an RCU callback's batch of frees);
 *  - no allocation.
 * The stack event itself does not count in a CPU's sequence of events.
 * Only the CPU's own events decide, never the table of objects, so it can
 * be decided apart from the objects (model-merge.c); the object's part
 * checks that the claimed object is still the one allocated then. (So a
 * vmalloc's stack takes the caller its vmap_area allocation's stack named
 * whether or not the area is still live: it is, unless freed by another
 * CPU between the allocation and its stack.)
 */
#include "model-local.h"

/* The @j-th newest slab allocation awaiting its stack on @cs. */
static const struct slab_wait *wait_at(const struct cpu_state *cs, int j)
{
	return &cs->slab_wait[(cs->slab_wait_next - 1 - j) & (SLAB_WAIT - 1)];
}

static bool has_frame(const struct kmt_event *ev, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < ev->nr_stack; i++)
		if (kmt_event_stack(ev, i) == addr)
			return true;
	return false;
}

/* The page allocated last, right before @ev or after only an interrupt's frees of its task. */
static bool page_claims(const struct cpu_state *cs, const struct kmt_event *ev)
{
	return cs->page_pending &&
	       (cs->page_seq == cs->seq ||
		(cs->page_seq == cs->alloc_seq && cs->page_pid == ev->pid));
}

/* The waiting slab allocation @ev belongs to, newest first (-1: none). */
static int slab_claims(const struct cpu_state *cs, const struct kmt_event *ev)
{
	int j;

	if (!cs->nslab_wait)
		return -1;
	if (wait_at(cs, 0)->seq == cs->seq)
		return 0;
	if (page_claims(cs, ev) || (cs->vmap_pending && cs->vmap_seq == cs->seq) ||
	    (cs->pcpu_pending && cs->pcpu_seq == cs->seq))
		return -1;
	for (j = 0; j < cs->nslab_wait; j++) {
		const struct slab_wait *w = wait_at(cs, j);
		uint32_t back = cs->seq - w->seq;

		/*
		 * A few events back, an interrupt's allocations (with their
		 * own stacks) may have come between; further back, only if
		 * nothing was allocated since: an RCU callback's batch of
		 * frees, which have no stacks.
		 */
		if (back > SLAB_WAIT_EVENTS && w->seq != cs->alloc_seq)
			break;
		if (w->pid == ev->pid && has_frame(ev, w->site))
			return j;
	}
	return -1;
}

/* Stack @ev, after the CPU's events in @cs: what it belongs to, taken from those waiting. */
static struct claim claim_stack(struct cpu_state *cs, const struct kmt_model_opts *o, const struct kmt_event *ev)
{
	struct claim c = { .kind = KMT_EV_NONE };
	int j;

	if (o->stack_slices && !cs->last_stacked && !cs->last_alloc)
		return c;	/* an event that allocates nothing: its own */
	j = slab_claims(cs, ev);
	if (j >= 0) {
		c.kind = KMT_EV_KMALLOC;
		c.ptr = wait_at(cs, j)->ptr;
		c.ts = wait_at(cs, j)->ts;
		c.obj_kind = wait_at(cs, j)->kind;
		/* It is taken, and any newer ones (an interrupt's, without stacks). */
		cs->slab_wait_next = (uint8_t)(cs->slab_wait_next - (j + 1));
		cs->nslab_wait = (uint8_t)(cs->nslab_wait - (j + 1));
	} else if (cs->vmap_pending && cs->vmap_seq == cs->seq && o->syms) {
		c.kind = KMT_EV_VMAP_ALLOC;
		c.ptr = cs->vmap_addr;
		cs->vmap_pending = false;
		/* Its own stack may stop in the allocator: then its vmap_area's names the caller. */
		c.caller = cs->vmap_caller_pid == ev->pid ? cs->vmap_caller : 0;
		cs->vmap_caller = 0;
	} else if (page_claims(cs, ev) && o->syms) {
		c.kind = KMT_EV_PAGE_ALLOC;
		c.ptr = cs->page_pfn;
		c.order = cs->page_order;
		cs->page_pending = false;
	} else if (cs->pcpu_pending && cs->pcpu_seq == cs->seq) {
		c.kind = KMT_EV_PCPU_ALLOC;
		c.ptr = cs->pcpu_ptr;
		cs->pcpu_pending = false;
	}
	return c;
}

/* A stack: its claim, and the vmalloc caller it may name (apart: the rest is lean). */
static __attribute__((noinline)) void stack_event(struct cpu_state *cs, const struct kmt_model_opts *o,
						  const struct kmt_event *ev, struct model_verdict *v)
{
	v->c = claim_stack(cs, o, ev);
	/* The stack of a vmap_area allocation right before it names a vmalloc's caller. */
	if (cs->vmap_area_pending && cs->vmap_area_seq == cs->seq && o->syms) {
		uint64_t fn = model_caller_of(o->syms, ev);

		cs->vmap_area_pending = false;
		if (fn) {
			cs->vmap_caller = fn;
			cs->vmap_caller_pid = ev->pid;
		}
	}
	cs->last_stacked = true;
}

/* The kinds a stack can follow: allocations. */
static bool alloc_kind(enum kmt_kind k)
{
	return k == KMT_EV_KMALLOC || k == KMT_EV_CACHE_ALLOC || k == KMT_EV_PAGE_ALLOC ||
	       k == KMT_EV_PCPU_ALLOC || k == KMT_EV_VMAP_ALLOC;
}

void model_claim_event(struct cpu_state *cpu, const struct kmt_model_opts *o, const struct kmt_event *ev,
		       bool wanted, struct model_verdict *v)
{
	struct cpu_state *cs;

	v->c.kind = KMT_EV_NONE;
	v->twin_prev = false;
	if (ev->cpu < 0 || ev->cpu >= KMT_MAX_CPUS)
		return;
	cs = &cpu[ev->cpu];
	/* A stack is part of the event before it; an access is not of the allocation chain. */
	if (ev->kind != KMT_EV_STACK && ev->kind != KMT_EV_ACCESS) {
		cs->seq++;
		if (alloc_kind(ev->kind))
			cs->alloc_seq = cs->seq;
	}
	switch (ev->kind) {
	case KMT_EV_KMALLOC:
	case KMT_EV_CACHE_ALLOC:
		v->twin_prev = cs->last_slab_ptr == ev->ptr && cs->seq == cs->last_slab_seq + 1;
		if (!wanted || !ev->ptr)
			break;
		cs->last_slab_seq = cs->seq;
		cs->last_slab_ptr = ev->ptr;
		cs->slab_wait[cs->slab_wait_next++ & (SLAB_WAIT - 1)] =
			(struct slab_wait){ cs->seq, ev->pid, ev->ptr, ev->call_site, ev->ts, (uint8_t)ev->kind };
		cs->nslab_wait += cs->nslab_wait < SLAB_WAIT;
		if (ev->name_len && o->syms && model_vmap_area(ev)) {
			cs->vmap_area_pending = true;
			cs->vmap_area_seq = cs->seq;
		}
		break;
	case KMT_EV_PAGE_ALLOC:
		if (wanted && !model_page_failed(ev)) {
			cs->page_pending = true;
			cs->page_seq = cs->seq;
			cs->page_pid = ev->pid;
			cs->page_order = ev->order;
			cs->page_pfn = ev->ptr;
		}
		break;
	case KMT_EV_PCPU_ALLOC:
		if (wanted) {
			cs->pcpu_pending = true;
			cs->pcpu_seq = cs->seq;
			cs->pcpu_ptr = ev->ptr;
		}
		break;
	case KMT_EV_VMAP_ALLOC:
		if (wanted && !model_vmap_failed(ev)) {
			cs->vmap_pending = true;
			cs->vmap_seq = cs->seq;
			cs->vmap_addr = ev->ptr;
		}
		break;
	case KMT_EV_STACK:
		stack_event(cs, o, ev, v);
		return;
	case KMT_EV_ACCESS:
		return;
	default:
		break;
	}
	cs->last_alloc = alloc_kind(ev->kind);
	cs->last_stacked = false;
}
