/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Slab objects in the model (kmalloc, kmem_cache_alloc, kfree,
 * kmem_cache_free): each allocation enters the table of live objects and
 * counts in its call site, cache, task and the summary; each free finds
 * its object there, or counts as the free of an object allocated before
 * the trace. A loss since an object was allocated makes a contradiction
 * about it uncertain, not misuse; a recording that left frees or
 * allocations out makes it an unseen free or allocation.
 */
#include <stdio.h>
#include <stdlib.h>

#include "model-local.h"

/*
 * The same counters live in a site, a cache, a process and the summary.
 * now_*: allocated and not gone, so far (what a live view shows).
 */
#define COUNT(x, n, req, al) ((x)->allocs += (n), (x)->now_objects += (n), \
			      (x)->bytes_req += (req), (x)->bytes_alloc += (al), (x)->now_bytes += (al))
#define GONE(x, o) ((x)->now_objects--, (x)->now_bytes -= (o)->alloc)


/* Losses since @then (a 16-bit stamp): certain only if none at all. */
static bool lost_since(const struct kmt_model *m, uint16_t then)
{
	return m->loss_seq >= 0xffff || then != (uint16_t)m->loss_seq;
}

/*
 * The kernel traces a large kmalloc twice, with the same pointer: from
 * the page-backed path and from the caller, one event after the other on
 * the same CPU. The second is the real call site.
 */
static bool kmalloc_large_twin(struct kmt_model *m, const struct obj *o, const struct kmt_event *ev)
{
	/*
	 * Only a large kmalloc (above the largest kmalloc cache, 8 KiB) is
	 * traced twice, inside the allocator and at its caller: a small one at
	 * the same address right after another is a reuse whose kfree the
	 * recording left out (-e kmem:kmalloc), a new allocation. So is one
	 * at the address of a merged pair (the next large kmalloc's first
	 * event, when the kfree between was not recorded).
	 */
	return !o->twin && o->kind == KMT_EV_KMALLOC && ev->kind == KMT_EV_KMALLOC && o->cpu == ev->cpu &&
	       ev->bytes_alloc > 8192 && m->reg.sites.v[o->site].addr != ev->call_site && m->twin_prev &&
	       o->req == sat32(ev->bytes_req) && o->alloc == sat32(ev->bytes_alloc);
}

/* @o was freed without a trace (its address came again): gone, now. */
static void gone_unseen(struct kmt_model *m, const struct obj *o)
{
	struct kmt_site *s = &m->reg.sites.v[o->site];

	s->unseen_frees++;
	m->sum.unseen_frees++;
	m->sum.unseen_bytes += o->alloc;
	GONE(s, o);
	if (o->cache != NONE) {
		m->reg.caches.v[o->cache].unseen_frees++;
		GONE(&m->reg.caches.v[o->cache], o);
	}
	if (o->proc != NONE)
		GONE(&m->reg.procs.v[o->proc], o);
	GONE(&m->sum, o);
}

static void count_alloc(struct kmt_model *m, struct obj *o, int sign)
{
	uint64_t n = (uint64_t)(int64_t)sign;
	uint64_t req = (uint64_t)(sign * (int64_t)o->req), al = (uint64_t)(sign * (int64_t)o->alloc);

	COUNT(&m->reg.sites.v[o->site], n, req, al);
	if (o->cache != NONE)
		COUNT(&m->reg.caches.v[o->cache], n, req, al);
	if (o->proc != NONE) {
		struct kmt_proc *p = &m->reg.procs.v[o->proc];

		COUNT(p, n, req, al);
		model_charge_count(o->charge, al, &p->irq_bytes, &p->acct_bytes, &p->unknown_bytes);
	}
	COUNT(&m->sum, n, req, al);
}

bool model_alloc_wanted(struct kmt_model *m, const struct kmt_event *ev, uint32_t proc)
{
	return !m->filtering ||
	       (model_cache_wanted(m, model_cache_of(m, ev)) && model_task_wanted(m, ev->pid, proc));
}

void model_slab_alloc(struct kmt_model *m, const struct kmt_event *ev)
{
	struct cpu_state *cs = &m->cpu[ev->cpu];
	uint32_t proc = model_proc_of_cpu(m, cs, ev->pid);
	struct kmt_site *site;
	struct islot *sl;
	struct obj *o;
	bool twin = false;

	if (!model_alloc_wanted(m, ev, proc))
		return;
	m->scope = true;
	site = model_alloc_site(m, ev->call_site);
	if (!site)
		return;
	site->kinds |= 1u << ev->kind;
	if (!ev->ptr) {
		site->failures++;
		m->sum.failures++;
		return;
	}
	sl = otab_get(&m->slab, ev->ptr);
	if (!sl) {
		m->oom = true;
		return;
	}
	if (slot_live(sl)) {
		o = slot_obj(&m->slab, sl);
		if (kmalloc_large_twin(m, o, ev)) {
			twin = true;
			model_stack_unalloc(m, o);
			model_detail_unalloc(m, o);
			count_alloc(m, o, -1);
			m->sum.kmalloc_large_merged++;
		} else {
			model_emit(m, o, KMT_FATE_UNSEEN_FREE, NULL);
			model_detail_gone(m, o, ev->ts, false);
			gone_unseen(m, o);
			if (o->loss_seq != m->loss_seq)
				m->sum.uncertain_misuse++;	/* its free may be in a gap */
			else if (!m->o.partial_frees)	/* else freed where the recording did not look */
				model_note_misuse(m, KMT_MISUSE_ALLOC_LIVE, ev, m->reg.sites.v[o->site].addr,
					    o->cache, NULL);
		}
		o->hit = 0;
	} else {
		o = otab_obj_new(&m->slab, sl);
		if (!o) {
			m->oom = true;
			return;
		}
	}
	o->ts = ev->ts;
	o->site = (uint32_t)(site - m->reg.sites.v);
	o->cache = model_cache_hinted(m, o->site, ev);
	o->guessed = ev->kind == KMT_EV_CACHE_ALLOC && !ev->name_len;
	o->req = sat32(ev->bytes_req);
	o->alloc = sat32(ev->bytes_alloc);
	o->proc = proc;
	o->loss_seq = m->loss_seq;
	o->cpu = (uint16_t)ev->cpu;
	o->kind = (uint8_t)ev->kind;
	o->twin = twin;
	o->stack = 0;
	o->gfp = (uint32_t)ev->gfp;
	o->charge = model_charge_of(ev);
	count_alloc(m, o, 1);
	model_detail_alloc(m, o);
}

/*
 * @o's allocation named no cache and the one it was given was a guess
 * (model_cache_of()): it is cache @c, as if it had been from the start —
 * its counts, series and rows move, so that what a report shows does not
 * depend on when the name came.
 */
static void recache(struct kmt_model *m, struct obj *o, uint32_t c)
{
	struct kmt_cache *k;

	if (c == o->cache || c == NONE)
		return;
	model_detail_unalloc(m, o);
	if (o->cache != NONE) {
		k = &m->reg.caches.v[o->cache];
		k->allocs--, k->bytes_req -= o->req, k->bytes_alloc -= o->alloc;
		GONE(k, o);
	}
	o->cache = c;
	k = &m->reg.caches.v[c];
	COUNT(k, 1, o->req, o->alloc);
	model_detail_alloc(m, o);
}

/* A free names cache @c at @ptr: the machine page there is that cache's slab. */
static void learn_page(struct kmt_model *m, uint64_t ptr, uint32_t c)
{
	if (c != NONE && kmt_map_put(&m->reg.slab_pages, ptr >> m->reg.page_shift, c))
		m->oom = true;
}

void model_slab_name_live(struct kmt_model *m)
{
	size_t i;

	if (!m->reg.slab_pages.n)
		return;
	for (i = 0; i < m->slab.pool_n; i++) {
		struct obj *o = &m->slab.pool[i];
		uint32_t c;

		if (o->state != OBJ_LIVE || !o->guessed)
			continue;
		c = kmt_map_get(&m->reg.slab_pages, o->key >> m->reg.page_shift);
		if (c != NONE && c != o->cache && m->reg.caches.v[c].object_size == o->alloc)
			recache(m, o, c);
	}
}

/* The misuse in freeing @o by @ev (kind or cache mismatch), or KMT_MISUSE_NR. */
static enum kmt_misuse_kind free_misuse(const struct kmt_model *m, const struct obj *o,
					const struct kmt_event *ev)
{
	const struct kmt_cache *c = o->cache != NONE ? &m->reg.caches.v[o->cache] : NULL;

	if (ev->kind == KMT_EV_CACHE_FREE && o->kind == KMT_EV_KMALLOC)
		return KMT_MISUSE_CACHE_FREE_KMALLOC;
	/* A cache guessed for an allocation that named none is not contradicted: it is corrected. */
	if (ev->kind == KMT_EV_CACHE_FREE && ev->name_len && c && !c->is_kmalloc && !o->guessed &&
	    (c->name_len != ev->name_len || memcmp(c->name, ev->name, ev->name_len)))
		return KMT_MISUSE_CACHE_MISMATCH;
	if (ev->kind == KMT_EV_KFREE && o->kind == KMT_EV_CACHE_ALLOC)
		return KMT_MISUSE_KFREE_CACHE;
	return KMT_MISUSE_NR;
}

/*
 * A free of no live object (@sl: its slot, freed, or NULL): a double free
 * or one more of an object allocated untraced, an object allocated again
 * where the recording did not look, or one allocated before the trace.
 */
static void free_unknown(struct kmt_model *m, const struct kmt_event *ev, struct islot *sl)
{
	struct kmt_site *fsite;

	/*
	 * Not ours to judge when filtering by task: another task's
	 * allocations are not seen, so its frees say nothing.
	 */
	if (m->filtering && (!model_task_wanted(m, ev->pid, model_proc_of(m, ev->pid)) ||
			     (m->o.cache && (!ev->name_len || !model_cache_wanted(m, model_cache_of(m, ev))))))
		return;
	m->scope = true;
	fsite = model_alloc_site(m, ev->call_site);
	if (fsite)
		fsite->free_calls++;
	if (sl && m->o.partial_allocs) {
		/* Allocated again where the recording did not look. */
		m->sum.unseen_allocs++;
		otab_kill(&m->slab, sl, NONE, sl->cache != NO_CACHE16 ? sl->cache : NONE, m->loss_seq);
		return;
	}
	if (sl) {
		uint32_t cache = sl->cache != NO_CACHE16 ? sl->cache : ev->name_len ? model_cache_of(m, ev) : NONE;

		if (lost_since(m, sl->loss))
			m->sum.uncertain_misuse++;	/* a new allocation may be in a gap */
		else if (sl->val == SLOT_NOSITE)
			/*
			 * Its first free was of an object never seen
			 * allocated: its allocations are not in the trace
			 * (before it, or by a task left out, such as the
			 * recorder's own threads, whose files RCU frees
			 * later), so this is one more: not a double free.
			 */
			model_note_misuse(m, KMT_MISUSE_UNTRACED_ALLOC, ev, 0, cache, NULL);
		else
			model_note_misuse(m, KMT_MISUSE_DOUBLE_FREE, ev, m->reg.sites.v[sl->val].addr, cache, NULL);
		return;
	}
	/* Allocated before the trace (or in a gap, if one came first). */
	model_emit_preexisting(m, ev);
	if (m->loss_seq)
		m->sum.uncertain_objects++;
	else
		m->sum.preexisting_frees++;
	sl = otab_get(&m->slab, ev->ptr);
	if (!sl) {
		m->oom = true;
		return;
	}
	otab_kill(&m->slab, sl, NONE, ev->name_len ? model_cache_of(m, ev) : NONE, m->loss_seq);
	if (ev->kind == KMT_EV_CACHE_FREE && ev->name_len && m->o.unnamed_cache_allocs)
		learn_page(m, ev->ptr, model_cache_of(m, ev));
}

/*
 * What the free of live object @o says of misuse: noted (unless a gap may
 * explain it); false if it was no free at all, but the unseen free of a
 * partial recording, the object then gone as such.
 */
static bool free_judged(struct kmt_model *m, const struct kmt_event *ev, struct islot *sl, struct obj *o)
{
	enum kmt_misuse_kind mk = free_misuse(m, o, ev);
	const struct kmt_site *asite = &m->reg.sites.v[o->site];

	if (m->o.partial_frees && (mk == KMT_MISUSE_CACHE_MISMATCH || mk == KMT_MISUSE_CACHE_FREE_KMALLOC)) {
		/*
		 * The recording left frees out: the object was freed unseen
		 * and its memory reused by another cache, not misfreed.
		 */
		model_emit(m, o, KMT_FATE_UNSEEN_FREE, NULL);
		model_detail_gone(m, o, ev->ts, false);
		gone_unseen(m, o);
		otab_kill(&m->slab, sl, o->site, o->cache, m->loss_seq);
		m->sum.unseen_allocs++;
		return false;
	}
	if (mk != KMT_MISUSE_NR && o->loss_seq != m->loss_seq) {
		/* Freed and allocated again in a gap, maybe. */
		m->sum.uncertain_misuse++;
	} else if (mk == KMT_MISUSE_CACHE_MISMATCH) {
		char detail[64];

		snprintf(detail, sizeof(detail), "freed as %.*s, allocated from %.20s",
			 (int)MIN(ev->name_len, 20u), ev->name, m->reg.caches.v[o->cache].name);
		model_note_misuse(m, mk, ev, asite->addr, o->cache, detail);
	} else if (mk != KMT_MISUSE_NR) {
		model_note_misuse(m, mk, ev, asite->addr, o->cache, NULL);
	}
	return true;
}

/* Live object @o freed: its site's, cache's, task's and the summary's counts, then gone. */
static void free_live(struct kmt_model *m, const struct kmt_event *ev, struct islot *sl, struct obj *o)
{
	struct kmt_site *fsite, *asite;
	uint64_t life;

	fsite = model_alloc_site(m, ev->call_site);
	asite = &m->reg.sites.v[o->site];	/* the lookup may have moved the array */
	if (fsite)
		fsite->free_calls++;
	life = ev->ts > o->ts ? ev->ts - o->ts : 0;
	asite->life[model_life_bucket(life)]++;
	if (!asite->frees || life < asite->life_min)
		asite->life_min = life;
	asite->life_max = MAX(asite->life_max, life);
	asite->frees++;
	asite->bytes_freed += o->alloc;
	GONE(asite, o);
	if (ev->cpu != o->cpu) {
		asite->cross_cpu++;
		m->sum.cross_cpu_frees++;
	}
	if (o->cache != NONE) {
		m->reg.caches.v[o->cache].frees++;
		GONE(&m->reg.caches.v[o->cache], o);
	}
	if (o->proc != NONE) {
		m->reg.procs.v[o->proc].frees++;
		m->reg.procs.v[o->proc].bytes_freed += o->alloc;
		GONE(&m->reg.procs.v[o->proc], o);
	}
	m->sum.frees++;
	m->sum.bytes_freed += o->alloc;
	GONE(&m->sum, o);
	model_stack_freed(m, o);
	model_detail_gone(m, o, ev->ts, true);
	model_emit(m, o, KMT_FATE_FREED, ev);
	otab_kill(&m->slab, sl, o->site, o->cache, m->loss_seq);
}

void model_slab_free(struct kmt_model *m, const struct kmt_event *ev)
{
	struct islot *sl;
	struct obj *o;

	if (!ev->ptr) {
		if (m->filtering && (m->o.cache || !model_task_wanted(m, ev->pid, model_proc_of(m, ev->pid))))
			return;
		m->scope = true;
		m->sum.null_frees++;
		return;
	}
	sl = otab_find(&m->slab, ev->ptr);
	if (!sl || !slot_live(sl)) {
		free_unknown(m, ev, sl);
		return;
	}
	o = slot_obj(&m->slab, sl);
	m->scope = true;	/* a chosen task's object */
	if (ev->kind == KMT_EV_CACHE_FREE && ev->name_len && m->o.unnamed_cache_allocs) {
		uint32_t c = model_cache_named(m, ev, ev->name, ev->name_len);

		learn_page(m, ev->ptr, c);
		if (o->guessed)
			recache(m, o, c);
	}
	if (free_judged(m, ev, sl, o))
		free_live(m, ev, sl, o);
}
