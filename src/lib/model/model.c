/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The allocation model (include/kmemtrace/model.h): one pass over the
 * time-ordered events. This file is the dispatch: the events queued a
 * few deep so their table slots are prefetched, each handed to the part
 * that owns its kind (model-slab.c, model-page.c, model-vmap.c, stacks to
 * model-stack.c), the summary's counts, and the end of the trace (live
 * objects, outstanding rows, exact median ages). A per-model loss
 * sequence number (model-loss.c), stamped on every object when allocated
 * and freed, tells whether a loss happened since: if so, a missing free
 * (leak) or a contradiction (misuse) may be the loss and is counted as
 * uncertain instead.
 *
 * The parts call down only: dispatch -> slab, page, vmalloc -> stacks,
 * details, objects, misuse -> registry (model-registry.c) -> tables
 * (model-tab.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmemtrace/event.h>
#include "model-local.h"

struct kmt_model *kmt_model_new(const struct kmt_model_opts *o)
{
	struct kmt_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (o)
		m->o = *o;
	m->filtering = m->o.pid || m->o.comm || m->o.cache || m->o.cgroup;
	m->sum.filtered = m->o.pid || m->o.comm || m->o.cgroup;
	if (m->o.cgroup)
		model_cgroup_filter(m);
	m->sum.cache_filtered = m->o.cache;
	if (m->o.cache)
		kmt_slab_event_name(m->o.slab_aliases, m->o.cache, m->cache_want, sizeof(m->cache_want));
	m->lost_by_cpu = calloc(KMT_MAX_CPUS, sizeof(*m->lost_by_cpu));
	m->events_by_cpu = calloc(KMT_MAX_CPUS, sizeof(*m->events_by_cpu));
	m->cpu = calloc(KMT_MAX_CPUS, sizeof(*m->cpu));
	if (!m->lost_by_cpu || !m->events_by_cpu || !m->cpu ||
	    otab_init(&m->slab, 1 << 14) || otab_init(&m->pg.pages, 1 << 12) ||
	    otab_init(&m->pg.pcpu, 1 << 10) || kmt_map_init(&m->reg.site_map, 1 << 10) ||
	    kmt_map_init(&m->reg.page_site_map, 1 << 8) || kmt_map_init(&m->reg.cache_map, 1 << 8) ||
	    kmt_map_init(&m->reg.proc_map, 1 << 10) || kmt_map_init(&m->reg.pid_map, 1 << 10) ||
	    kmt_map_init(&m->fnd.misuse_map, 1 << 6) || kmt_map_init(&m->pg.gfp_map, 1 << 6) ||
	    kmt_map_init(&m->reg.slab_pages, 1 << 6) ||
	    model_vmap_init(m) || model_stack_init(m) || model_detail_init(m)) {
		kmt_model_free(m);
		errno = ENOMEM;
		return NULL;
	}
	m->reg.page_shift = (uint32_t)__builtin_ctz(m->o.page_size ? m->o.page_size : 4096);
	m->sum.partial_allocs = m->o.partial_allocs;
	m->sum.partial_frees = m->o.partial_frees;
	m->sum.stack_sample = m->o.stack_sample > 1 ? m->o.stack_sample : 1;
	m->sum.stack_slices = m->o.stack_slices;
	m->sum.lost_by_cpu = m->lost_by_cpu;
	m->sum.events_by_cpu = m->events_by_cpu;
	return m;
}

void kmt_model_free(struct kmt_model *m)
{
	if (!m)
		return;
	otab_release(&m->slab);
	otab_release(&m->pg.pages);
	otab_release(&m->pg.pcpu);
	model_vmap_release(m);
	model_stack_release(m);
	while (m->nshard_heads)
		free(m->shard_heads[--m->nshard_heads]);
	free(m->shard_heads);
	model_detail_release(m);
	kmt_map_release(&m->reg.site_map);
	kmt_map_release(&m->reg.page_site_map);
	kmt_map_release(&m->reg.cache_map);
	kmt_map_release(&m->reg.proc_map);
	kmt_map_release(&m->reg.pid_map);
	kmt_map_release(&m->fnd.misuse_map);
	kmt_map_release(&m->pg.gfp_map);
	kmt_map_release(&m->reg.slab_pages);
	free(m->reg.sites.v);
	free(m->reg.page_sites.v);
	free(m->reg.caches.v);
	free(m->reg.procs.v);
	free(m->fnd.misuse.v);
	free(m->fnd.outstanding.v);
	free(m->fnd.untraced.v);
	free(m->pg.gfp.v);
	free(m->lost_by_cpu);
	free(m->events_by_cpu);
	free(m->cpu);
	free(m->reg.cache_hint);
	free(m->reg.site_meta.v);
	free(m->reg.cache_meta.v);
	free(m->reg.proc_meta.v);
	free(m->fnd.misuse_meta.v);
	model_access_release(m);
	free(m);
}

/* Stack @ev is @c's (model-claim.c): its part takes it; the last claim is kept for dump. */
static void stack_taken(struct kmt_model *m, const struct kmt_event *ev, struct claim c)
{
	m->claim = c;
	switch (c.kind) {
	case KMT_EV_KMALLOC:
		m->claim.kind = c.obj_kind;
		model_stack_slab(m, ev, &c);
		break;
	case KMT_EV_VMAP_ALLOC:
		model_vmap_stack(m, ev, &c);
		break;
	case KMT_EV_PAGE_ALLOC:
		model_page_stack(m, ev, &c);
		break;
	default:
		break;
	}
}

/*
 * Sharded (model-merge.c), shard 0 sees every event and keeps each CPU's
 * sequence; an event of another shard's object goes to it with what that
 * decided (its stream position, the loss epoch, a stack's claim, whether
 * an allocation came right after one at the same address on its CPU).
 */
static void route(struct kmt_model *m, uint32_t to, uint64_t pos, const struct claim *c)
{
	struct model_route *r = &m->route[m->ri];

	m->route_to[m->ri] = (uint8_t)to;
	r->pos = pos;
	r->loss_seq = m->loss_seq;
	r->twin_prev = m->twin_prev;
	if (c) {
		r->claim_ptr = c->ptr;
		r->claim_ts = c->ts;
		r->obj_kind = (uint8_t)c->obj_kind;
	}
}

/*
 * Whether a stack concerns the chosen tasks (or cache): as its allocation
 * does. Only allocations in scope wait for their stacks (model-claim.c),
 * so a claimed stack is in scope; one of no allocation is its own task's,
 * never a cache's. With a stack of every event (--stack-sample) it is the
 * stack of the event right before it, and as much in scope (the model is
 * then not in shards: model-merge.c). Shard 0 decides it alone.
 */
static bool stack_scope(struct kmt_model *m, const struct cpu_state *cs, const struct kmt_event *ev,
			struct claim c)
{
	if (!m->filtering || c.kind != KMT_EV_NONE)
		return true;
	if (m->o.stack_slices)
		return cs->last_scope;
	return !m->o.cache && model_pid_wanted(m, ev->pid);
}

/* The shard of the slab object at @ptr: 0 unless routing (model_route_events()). */
static uint32_t owner(const struct kmt_model *m, uint64_t ptr)
{
	return m->route ? model_shard_of(ptr, m->nshards) : 0;
}

/* The shard of the slab event being taken, as model_route_events() found it. */
static uint32_t slab_owner(const struct kmt_model *m)
{
	return m->route ? m->route_to[m->ri] : 0;
}

/*
 * Whether @ev, an allocation, concerns the chosen tasks or cache, so that
 * it waits for its stack (model_claim_event()); as its part finds it.
 */
static bool claim_wanted(struct kmt_model *m, struct cpu_state *cs, const struct kmt_event *ev)
{
	if (!m->filtering)
		return true;
	switch (ev->kind) {
	case KMT_EV_KMALLOC:
	case KMT_EV_CACHE_ALLOC:
		return model_alloc_wanted(m, ev, model_proc_of_cpu(m, cs, ev->pid));
	case KMT_EV_PAGE_ALLOC:
		return !m->o.cache && model_task_wanted(m, ev->pid, model_proc_of_cpu(m, cs, ev->pid));
	case KMT_EV_PCPU_ALLOC:
	case KMT_EV_VMAP_ALLOC:
		return !m->o.cache && model_task_wanted(m, ev->pid, model_proc_of(m, ev->pid));
	default:
		return true;
	}
}

static void process_event(struct kmt_model *m, const struct kmt_event *ev)
{
	uint64_t pos = m->pos++;
	struct model_verdict own;
	const struct model_verdict *v = &own;
	struct cpu_state *cs;
	uint32_t to = 0;	/* the shard that takes the event, and counts it */

	if (ev->cpu < 0 || ev->cpu >= KMT_MAX_CPUS)
		return;
	cs = &m->cpu[ev->cpu];
	/*
	 * A truncated CPU's events are missing from its end to the trace's,
	 * a damaged part of the file's over its span: a gap that stays open,
	 * as if a loss came before every event in it.
	 */
	if (m->sum.truncated_cpus || (m->sum.damaged_gaps && ev->ts <= m->gap_until))
		m->loss_seq++;
	if (!m->started)
		m->sum.first_ts = ev->ts;
	m->started = true;
	m->sum.last_ts = ev->ts;
	if (ev->cpu >= m->sum.nr_cpus)
		m->sum.nr_cpus = ev->cpu + 1;
	/*
	 * Each CPU's sequence: what this event waits for, or is (a stack's
	 * claim). Given by a part, it is read only where it is used (slab
	 * allocations, stacks): it lies on a cache line of its own.
	 */
	if (m->seq_given)
		v = model_verdict_of(ev);
	else
		model_claim_event(m->cpu, &m->o, ev, claim_wanted(m, cs, ev), &own);
	/* Counted below if it concerns the chosen tasks (all of them without a filter). */
	m->scope = !m->filtering;
	if (m->o.cache && !model_slab_kind(ev->kind) && ev->kind != KMT_EV_STACK && ev->kind != KMT_EV_ACCESS) {
		/* --cache: only slab objects; names are still taken. */
		if (model_names_task(ev->kind)) {
			if (m->route)
				route(m, ROUTE_ALL, pos, NULL);	/* every shard names tasks */
			kmt_model_name_event(m, ev);
		}
		cs->last_scope = false;
		return;
	}
	switch (ev->kind) {
	case KMT_EV_KMALLOC:
	case KMT_EV_CACHE_ALLOC:
		m->twin_prev = v->twin_prev;
		if (!(to = slab_owner(m)))
			model_slab_alloc(m, ev);
		else
			route(m, to, pos, NULL);
		break;
	case KMT_EV_KFREE:
	case KMT_EV_CACHE_FREE:
		if (!(to = slab_owner(m)))
			model_slab_free(m, ev);
		else
			route(m, to, pos, NULL);
		break;
	case KMT_EV_PAGE_ALLOC:
		model_page_alloc(m, ev);
		break;
	case KMT_EV_PAGE_FREE:
		model_page_free(m, ev);
		break;
	case KMT_EV_PAGE_FREE_BATCHED:
		if (m->o.batched_frees_alone)
			model_page_free(m, ev);
		break;
	case KMT_EV_PCPU_ALLOC:
		model_pcpu_alloc(m, ev);
		break;
	case KMT_EV_PCPU_FREE:
		model_pcpu_free(m, ev);
		break;
	case KMT_EV_VMAP_ALLOC:
		model_vmap_alloc(m, ev);
		break;
	case KMT_EV_VMAP_FREE:
		model_vmap_free(m, ev);
		break;
	case KMT_EV_FORK:
	case KMT_EV_RENAME:
	case KMT_EV_NEWTASK:
	case KMT_EV_EXEC:
	case KMT_EV_CGROUP:
		if (m->route)
			route(m, ROUTE_ALL, pos, NULL);	/* every shard names tasks */
		kmt_model_name_event(m, ev);
		/* fall through */
	case KMT_EV_EXIT:
		if (m->filtering)
			m->scope = model_task_wanted(m, ev->pid2, model_proc_of(m, ev->pid2));
		break;
	case KMT_EV_STACK:
		m->scope = stack_scope(m, cs, ev, v->c);
		if (v->c.kind == KMT_EV_KMALLOC && (to = owner(m, v->c.ptr)))
			route(m, to, pos, &v->c);
		else
			stack_taken(m, ev, v->c);
		break;
	case KMT_EV_ACCESS:
		model_access(m, ev);
		break;
	}
	if (ev->kind != KMT_EV_STACK)
		cs->last_scope = m->scope;
	if (to)
		return;
	if (m->scope && (ev->kind == KMT_EV_FORK || ev->kind == KMT_EV_NEWTASK))
		model_detail_birth(m, ev);
	if (m->scope && m->hooks.event)
		m->hooks.event(m->hooks.arg, ev);
	if (m->scope) {
		m->sum.events++;
		m->sum.by_kind[ev->kind < KMT_EV_NR ? ev->kind : 0]++;
		m->events_by_cpu[ev->cpu]++;
	}
}

/*
 * Another shard's event, as shard 0 routed it: its object's part, and its
 * count if it concerns the chosen tasks (or cache) — as the object's part
 * finds, or, for a stack, as shard 0 did.
 */
static void process_routed(struct kmt_model *m, const struct kmt_event *ev, const struct model_route *r)
{
	m->pos = r->pos + 1;
	m->loss_seq = r->loss_seq;
	m->scope = !m->filtering;
	/* (Shard 0 may not have read it: model_route_events().) */
	if (ev->cpu >= m->sum.nr_cpus)
		m->sum.nr_cpus = ev->cpu + 1;
	switch (ev->kind) {
	case KMT_EV_KMALLOC:
	case KMT_EV_CACHE_ALLOC:
		m->twin_prev = m->seq_given ? model_verdict_of(ev)->twin_prev : r->twin_prev;
		model_slab_alloc(m, ev);
		break;
	case KMT_EV_KFREE:
	case KMT_EV_CACHE_FREE:
		model_slab_free(m, ev);
		break;
	case KMT_EV_STACK: {
		struct claim c = { KMT_EV_KMALLOC, r->claim_ptr, r->claim_ts, (enum kmt_kind)r->obj_kind };

		if (m->seq_given)
			c = model_verdict_of(ev)->c;
		m->scope = true;	/* claimed: in scope (stack_scope()) */
		model_stack_slab(m, ev, &c);
		break;
	}
	default:
		/* A task's name, which every shard takes; counted by shard 0. */
		kmt_model_name_event(m, ev);
		return;
	}
	if (!m->scope)
		return;
	m->sum.events++;
	m->sum.by_kind[ev->kind]++;
	m->events_by_cpu[ev->cpu]++;
}

/*
 * Objects live in tables far bigger than the caches. Events are queued a
 * few deep and the table slot of each is prefetched when it is queued, so
 * by the time it is processed its cache line is there.
 */
static void prefetch_obj(const struct kmt_model *m, const struct kmt_event *ev)
{
	switch (ev->kind) {
	case KMT_EV_KFREE:
	case KMT_EV_CACHE_FREE:
	case KMT_EV_KMALLOC:
	case KMT_EV_CACHE_ALLOC:
		kmt_prefetch(otab_slot(&m->slab, ev->ptr));
		break;
	case KMT_EV_PAGE_ALLOC:
	case KMT_EV_PAGE_FREE:
	case KMT_EV_PAGE_FREE_BATCHED:
		kmt_prefetch(otab_slot(&m->pg.pages, ev->ptr));
		break;
	}
}

static void drain(struct kmt_model *m, unsigned int keep)
{
	while (m->qlen > keep) {
		process_event(m, &m->q[m->qhead].ev);
		m->qhead = (m->qhead + 1) % LOOKAHEAD;
		m->qlen--;
	}
}

/*
 * Second stage, half the queue later: the slot is in cache by now, so find
 * the live object it points to and prefetch that too.
 */
static void prefetch_pool(struct kmt_model *m, const struct kmt_event *ev)
{
	struct otab *t;
	struct islot *sl;

	switch (ev->kind) {
	case KMT_EV_KFREE:
	case KMT_EV_CACHE_FREE:
	case KMT_EV_KMALLOC:
	case KMT_EV_CACHE_ALLOC:
		t = &m->slab;
		break;
	default:
		return;
	}
	sl = otab_find(t, ev->ptr);
	if (sl && slot_live(sl))
		kmt_prefetch(slot_obj(t, sl));
}

int kmt_model_event(struct kmt_model *m, const struct kmt_event *ev)
{
	struct queued *q;

	if (m->oom)
		return -ENOMEM;
	/* Stacks and renames belong exactly where they are: no queueing. */
	if (ev->kind >= KMT_EV_FORK) {
		drain(m, 0);
		process_event(m, ev);
		return m->oom ? -ENOMEM : 0;
	}
	if (m->qlen == LOOKAHEAD)
		drain(m, LOOKAHEAD - 1);
	q = &m->q[(m->qhead + m->qlen++) % LOOKAHEAD];
	q->ev = *ev;
	if (ev->name_len) {
		q->ev.name_len = MIN(ev->name_len, (uint32_t)sizeof(q->name));
		memcpy(q->name, ev->name, q->ev.name_len);
		q->ev.name = q->name;
	}
	prefetch_obj(m, ev);
	if (m->qlen > LOOKAHEAD / 2)
		prefetch_pool(m, &m->q[(m->qhead + m->qlen - 1 - LOOKAHEAD / 2) % LOOKAHEAD].ev);
	return m->oom ? -ENOMEM : 0;
}

/*
 * A run of events the caller keeps in place until the call returns: no
 * queue and no copies, the same two prefetch stages on the array itself.
 */
/* Event @i of the run is this model's to prefetch (routing: not another shard's). */
static bool mine(const struct kmt_model *m, size_t i)
{
	return !m->route_to || !m->route_to[i];
}

/* Event @i of a run: in an array, or (shards) in an array of pointers. */
#define EV_AT(ev, evp, i) ((evp) ? (evp)[i] : &(ev)[i])

static inline int events_run(struct kmt_model *m, const struct kmt_event *ev, const struct kmt_event *const *evp,
			     size_t n)
{
	if (m->oom)
		return -ENOMEM;
	drain(m, 0);
	for (m->ri = 0; m->ri < n && m->ri < LOOKAHEAD; m->ri++)
		if (mine(m, m->ri))
			prefetch_obj(m, EV_AT(ev, evp, m->ri));
	for (m->ri = 0; m->ri < n && !m->oom; m->ri++) {
		if (evp && m->ri + 2 * LOOKAHEAD < n) {
			/*
			 * Events a part wrote (shard 0): their lines first, so
			 * that prefetch_obj() reads them from cache (an event is
			 * 144 bytes, from anywhere in the line: what it reads spans
			 * two). Paired, medians of 5: 12.7 -> 12.2 ns on the 48-CPU
			 * trace, 10.1 -> 9.8 on hackbench.
			 */
			const char *e = (const char *)evp[m->ri + 2 * LOOKAHEAD];

			kmt_prefetch(e);
			kmt_prefetch(e + 40);
		}
		if (m->ri + LOOKAHEAD < n && mine(m, m->ri + LOOKAHEAD))
			prefetch_obj(m, EV_AT(ev, evp, m->ri + LOOKAHEAD));
		if (m->ri + LOOKAHEAD / 2 < n && mine(m, m->ri + LOOKAHEAD / 2))
			prefetch_pool(m, EV_AT(ev, evp, m->ri + LOOKAHEAD / 2));
		process_event(m, EV_AT(ev, evp, m->ri));
	}
	return m->oom ? -ENOMEM : 0;
}

int kmt_model_events(struct kmt_model *m, const struct kmt_event *ev, size_t n)
{
	return events_run(m, ev, NULL, n);
}

/*
 * Events @idx[0..@k) of the run @ev, in order, with the same two prefetch
 * stages: a shard's own, as shard 0 routed them (@r), or shard 0's own
 * (@r NULL; the run's first is at stream position @pos).
 */
static inline void run_ours(struct kmt_model *m, const struct kmt_event *const *ev, const uint32_t *idx, size_t k,
			    const struct model_route *r, uint64_t pos)
{
	size_t i;

	for (i = 0; i < k && i < LOOKAHEAD; i++)
		prefetch_obj(m, ev[idx[i]]);
	for (i = 0; i < k && !m->oom; i++) {
		if (i + LOOKAHEAD < k)
			prefetch_obj(m, ev[idx[i + LOOKAHEAD]]);
		if (i + LOOKAHEAD / 2 < k)
			prefetch_pool(m, ev[idx[i + LOOKAHEAD / 2]]);
		if (r) {
			process_routed(m, ev[idx[i]], &r[idx[i]]);
		} else {
			m->ri = idx[i];
			m->pos = pos + idx[i];
			process_event(m, ev[idx[i]]);
		}
	}
}

/*
 * Shard 0, when the parts decided each CPU's sequence (seq_given) and no
 * gap is open: the other shards' events are not read at all (their
 * position and loss epoch go in @r), only shard 0's own and the names,
 * in order, with the same two prefetch stages.
 */
static int route_given(struct kmt_model *m, const struct kmt_event *const *ev, size_t n, const uint8_t *to,
		       struct model_route *r)
{
	uint64_t pos = m->pos;
	uint32_t idx[1024];
	size_t base, i, k, last = SIZE_MAX;

	drain(m, 0);
	for (base = 0; base < n && !m->oom; base += ARRAY_SIZE(idx)) {
		for (i = base, k = 0; i < n && i < base + ARRAY_SIZE(idx); i++) {
			if (to[i] && to[i] != ROUTE_ALL) {
				r[i].pos = pos + i;
				r[i].loss_seq = m->loss_seq;
				last = i;
			} else {
				idx[k++] = (uint32_t)i;
				if (ev[i]->cpu >= 0 && ev[i]->cpu < KMT_MAX_CPUS)
					last = i;
			}
			if (!m->started && last == i) {
				m->sum.first_ts = ev[i]->ts;
				m->started = true;
			}
		}
		run_ours(m, ev, idx, k, NULL, pos);
	}
	m->pos = pos + n;
	if (last != SIZE_MAX)
		m->sum.last_ts = ev[last]->ts;
	return m->oom ? -ENOMEM : 0;
}

int model_route_events(struct kmt_model *m, const struct kmt_event *const *ev, size_t n, uint8_t *to,
		       struct model_route *r, bool known)
{
	size_t i;
	int ret;

	m->route = r;
	m->route_to = to;
	/* Whose each slab event is, once (stacks and names are routed as taken). */
	for (i = 0; !known && i < n; i++)
		to[i] = model_route_of(ev[i], m->nshards);
	if (m->seq_given && !m->sum.truncated_cpus && !m->sum.damaged_gaps)
		ret = route_given(m, ev, n, to, r);
	else
		ret = events_run(m, NULL, ev, n);
	m->route = NULL;
	m->route_to = NULL;
	return ret;
}

int model_routed_events(struct kmt_model *m, const struct kmt_event *const *ev, size_t n, const uint8_t *to,
			const struct model_route *r, uint64_t first_ts)
{
	uint32_t idx[1024];
	size_t base, i, k;

	if (!m->started) {
		/* The trace's start (the intervals of details count from it): shard 0's. */
		m->started = true;
		m->sum.first_ts = first_ts;
	}

	for (base = 0; base < n && !m->oom; base += ARRAY_SIZE(idx)) {
		/* This shard's events of the run, then the same two prefetch stages on them. */
		for (i = base, k = 0; i < n && i < base + ARRAY_SIZE(idx); i++) {
			/* Without a branch: which are ours is a coin toss. */
			idx[k] = (uint32_t)i;
			k += (to[i] == m->shard) | (to[i] == ROUTE_ALL);
		}
		run_ours(m, ev, idx, k, r, 0);
	}
	return m->oom ? -ENOMEM : 0;
}

uint64_t model_pos(const struct kmt_model *m)
{
	return m->pos;
}

void model_name_at(struct kmt_model *m, const struct kmt_event *ev, uint64_t pos)
{
	m->pos = pos;
	kmt_model_name_event(m, ev);
}

int kmt_model_sync(struct kmt_model *m)
{
	drain(m, 0);
	return m->oom ? -ENOMEM : 0;
}

static int cmp_outstanding(const void *a, const void *b)
{
	const struct kmt_outstanding *x = a, *y = b;

	if (x->bytes_alloc != y->bytes_alloc)
		return (x->bytes_alloc < y->bytes_alloc) - (x->bytes_alloc > y->bytes_alloc);
	return (x->site > y->site) - (x->site < y->site);
}

/*
 * An allocation at an address we think live proves the kernel freed it
 * without tracing (its bulk and RCU-sheaf paths). Once a trace shows that,
 * or more than one "double free", a free of a freed address cannot be told
 * from an allocation the kernel did not trace either: such findings become
 * untraced allocations (warnings). Caches involved are marked, so their
 * outstanding objects can be flagged.
 */
/* The age of one live object, for the exact median of its site's ages. */
struct age_of {
	uint32_t k;			/* its outstanding row */
	uint64_t age;
};

static int cmp_age(const void *a, const void *b)
{
	const struct age_of *x = a, *y = b;

	if (x->k != y->k)
		return (x->k > y->k) - (x->k < y->k);
	return (x->age > y->age) - (x->age < y->age);
}

/* Each outstanding row's median age, from the ages of its objects. */
static void median_ages(struct kmt_model *m, struct age_of *v, size_t n)
{
	size_t i = 0, j;

	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_age);
	while (i < n) {
		for (j = i; j < n && v[j].k == v[i].k; j++)
			;
		/* The lower middle of an even count: always an age some object has. */
		m->fnd.outstanding.v[v[i].k].age_median = v[i + (j - i - 1) / 2].age;
		i = j;
	}
}

int kmt_model_finish(struct kmt_model *m, uint64_t ts)
{
	struct kmt_map out_map;
	struct age_of *ages;
	size_t i, nages = 0;

	drain(m, 0);
	model_slab_name_live(m);
	model_misuse_finish(m);
	ages = malloc((m->slab.live + 1) * sizeof(*ages));
	if (m->oom || !ages || kmt_map_init(&out_map, 1 << 8)) {
		free(ages);
		m->oom = true;
		return -ENOMEM;
	}
	for (i = 0; i < m->slab.pool_n; i++) {
		struct obj *o = &m->slab.pool[i];
		struct kmt_site *s;
		struct kmt_outstanding *ou;
		uint32_t k;
		uint64_t age;

		if (o->state != OBJ_LIVE)
			continue;
		s = &m->reg.sites.v[o->site];
		if (o->loss_seq != m->loss_seq) {
			/* Its free may have been lost. */
			s->uncertain++;
			m->sum.uncertain_objects++;
			m->sum.uncertain_allocs++;
			m->sum.uncertain_bytes += o->alloc;
			continue;
		}
		model_stack_live(m, o);
		model_detail_live(m, o);
		s->live_objects++;
		s->live_bytes += o->alloc;
		m->sum.live_objects++;
		m->sum.live_bytes += o->alloc;
		if (o->cache != NONE) {
			m->reg.caches.v[o->cache].live_objects++;
			m->reg.caches.v[o->cache].live_bytes += o->alloc;
		}
		if (o->proc != NONE) {
			m->reg.procs.v[o->proc].live_objects++;
			m->reg.procs.v[o->proc].live_bytes += o->alloc;
		}
		k = kmt_map_get(&out_map, o->site);
		if (k == NONE) {
			k = VEC_PUSH(m->fnd.outstanding, m->oom);
			if (k == NONE || kmt_map_put(&out_map, o->site, k)) {
				m->oom = true;
				break;
			}
			m->fnd.outstanding.v[k].site = s->addr;
			m->fnd.outstanding.v[k].age_min = UINT64_MAX;
		}
		ou = &m->fnd.outstanding.v[k];
		age = ts > o->ts ? ts - o->ts : 0;
		ou->objects++;
		if (o->cache != NONE && m->reg.caches.v[o->cache].untraced)
			ou->in_untraced_caches++;
		ou->bytes_req += o->req;
		ou->bytes_alloc += o->alloc;
		ou->age_min = MIN(ou->age_min, age);
		ou->age_max = MAX(ou->age_max, age);
		ou->age[model_life_bucket(age)]++;
		if (nages <= m->slab.live)
			ages[nages++] = (struct age_of){ k, age };
	}
	kmt_map_release(&out_map);
	median_ages(m, ages, nages);
	free(ages);
	model_vmap_finish(m, ts);
	model_emit_live(m);		/* while objects still point at their stack rows */
	model_stack_finish(m);
	model_detail_finish(m);
	model_access_finish(m);
	if (m->fnd.outstanding.n > 1)
		qsort(m->fnd.outstanding.v, m->fnd.outstanding.n, sizeof(*m->fnd.outstanding.v), cmp_outstanding);
	if (ts > m->sum.last_ts)
		m->sum.last_ts = ts;
	return m->oom ? -ENOMEM : 0;
}

enum kmt_kind kmt_model_stack_claim(const struct kmt_model *m, uint64_t *ptr)
{
	*ptr = m->claim.ptr;
	return m->claim.kind;
}

const struct kmt_summary *kmt_model_summary(const struct kmt_model *m)
{
	return m->live_sum ? m->live_sum : &m->sum;
}

/* Fed live in shards, the shards' sums (model-shards.c); else this model's own. */
#define REGISTRY(fn, type, field, r)					\
	const type *fn(const struct kmt_model *m, size_t *n)		\
	{								\
		if (m->live_reg) {					\
			*n = m->live_reg[r].n;				\
			return (const type *)(const void *)m->live_reg[r].v; \
		}							\
		*n = m->field.n;					\
		return m->field.v;					\
	}
REGISTRY(kmt_model_sites, struct kmt_site, reg.sites, MODEL_REG_SITES)
REGISTRY(kmt_model_caches, struct kmt_cache, reg.caches, MODEL_REG_CACHES)
REGISTRY(kmt_model_procs, struct kmt_proc, reg.procs, MODEL_REG_PROCS)

#define ACCESSOR(fn, type, field)					\
	const type *fn(const struct kmt_model *m, size_t *n)		\
	{								\
		*n = m->field.n;					\
		return m->field.v;					\
	}
ACCESSOR(kmt_model_page_sites, struct kmt_site, reg.page_sites)
ACCESSOR(kmt_model_misuse, struct kmt_misuse, fnd.misuse)
ACCESSOR(kmt_model_outstanding, struct kmt_outstanding, fnd.outstanding)
ACCESSOR(kmt_model_untraced, struct kmt_untraced, fnd.untraced)
ACCESSOR(kmt_model_gfp, struct kmt_gfp_count, pg.gfp)
ACCESSOR(kmt_model_vmap_sites, struct kmt_site, vm.vmap_sites)
ACCESSOR(kmt_model_vmap_sizes, struct kmt_vmap_size, vm.vmap_sizes)
ACCESSOR(kmt_model_vmap_live, struct kmt_vmap_area, vm.vmap_live)
