/*
 * Which allocation a stack is (src/lib/model/model-local.h): the one owner of
 * what each CPU has allocated and not yet given a stack, and of the rule
 * that gives each stack to exactly one of them.
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
 * Only the CPU's own events decide, never the table of objects, so every
 * shard of a sharded model (model-shard.c) decides alike; the object's
 * part checks that the claimed object is still the one allocated then.
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

struct claim model_claim_stack(struct kmt_model *m, const struct kmt_event *ev)
{
	struct cpu_state *cs = &m->cpu[ev->cpu];
	struct claim c = { KMT_EV_NONE, 0 };
	int j;

	if (m->o.stack_slices && !cs->last_stacked && !cs->last_alloc)
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
	} else if (cs->vmap_pending && cs->vmap_seq == cs->seq && m->o.syms) {
		c.kind = KMT_EV_VMAP_ALLOC;
		c.ptr = cs->vmap_addr;
		cs->vmap_pending = false;
	} else if (page_claims(cs, ev) && m->o.syms) {
		c.kind = KMT_EV_PAGE_ALLOC;
		c.ptr = cs->page_pfn;
		cs->page_pending = false;
	} else if (cs->pcpu_pending && cs->pcpu_seq == cs->seq) {
		c.kind = KMT_EV_PCPU_ALLOC;
		c.ptr = cs->pcpu_ptr;
		cs->pcpu_pending = false;
	}
	return c;
}
