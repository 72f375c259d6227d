/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pages and per-CPU allocations in the model: page allocations by order,
 * migrate type and gfp flags, the pages live (by pfn, no double-free
 * detection: the page allocator's own frees are all traced), and the
 * functions that asked for pages, named from their stacks; per-CPU
 * allocations counted and matched.
 */
#include <stdio.h>
#include <stdlib.h>

#include <kmemtrace/event.h>
#include "model-local.h"

void model_page_alloc(struct kmt_model *m, const struct kmt_event *ev)
{
	struct cpu_state *cs = &m->cpu[ev->cpu];
	uint32_t proc = model_proc_of_cpu(m, cs, ev->pid), gi;
	uint64_t npages = 1ULL << MIN(ev->order, 30u);
	struct islot *sl;
	struct obj *o;

	if (m->filtering && !model_task_wanted(m, ev->pid, proc))
		return;
	m->scope = true;
	m->sum.page_allocs++;
	if (model_page_failed(ev)) {
		m->sum.page_failures++;
		return;
	}
	m->sum.pages_allocated += npages;
	model_detail_page(m, ev->ts, ev->order);
	m->sum.order_mt[MIN(ev->order, (uint32_t)KMT_MAX_ORDER)]
		       [ev->migratetype >= 0 && ev->migratetype < KMT_MIGRATE_TYPES ? ev->migratetype : KMT_MIGRATE_TYPES]++;
	gi = kmt_map_get(&m->pg.gfp_map, ev->gfp);
	if (gi == NONE) {
		gi = VEC_PUSH(m->pg.gfp, m->oom);
		if (gi == NONE || kmt_map_put(&m->pg.gfp_map, ev->gfp, gi)) {
			m->oom = true;
			return;
		}
		m->pg.gfp.v[gi].gfp = ev->gfp;
	}
	m->pg.gfp.v[gi].allocs++;
	m->pg.gfp.v[gi].pages += npages;
	if (proc != NONE) {
		m->reg.procs.v[proc].page_allocs++;
		m->reg.procs.v[proc].pages += npages;
		if ((ev->flags & (KMT_EVF_ACCOUNTED | KMT_EVF_IRQ)) == KMT_EVF_ACCOUNTED)
			m->reg.procs.v[proc].acct_pages += npages;
	}
	sl = otab_get(&m->pg.pages, ev->ptr);
	o = !sl ? NULL : slot_live(sl) ? slot_obj(&m->pg.pages, sl) : otab_obj_new(&m->pg.pages, sl);
	if (!o) {
		m->oom = true;
		return;
	}
	if (o->kind == KMT_EV_PAGE_ALLOC)
		model_emit(m, o, KMT_FATE_UNSEEN_FREE, NULL);
	o->ts = ev->ts;
	o->kind = KMT_EV_PAGE_ALLOC;
	o->proc = proc;
	o->order = (uint8_t)MIN(ev->order, 255u);
	o->gfp = (uint32_t)ev->gfp;
	o->site = NONE;
	o->cpu = (uint16_t)ev->cpu;
	o->loss_seq = m->loss_seq;
}

void model_page_free(struct kmt_model *m, const struct kmt_event *ev)
{
	struct islot *sl = otab_find(&m->pg.pages, ev->ptr);
	struct obj *o = sl && slot_live(sl) ? slot_obj(&m->pg.pages, sl) : NULL;

	/* With a task filter: the chosen tasks' pages, and pages they free. */
	if (!o && m->filtering && !model_task_wanted(m, ev->pid, model_proc_of(m, ev->pid)))
		return;
	m->scope = true;
	m->sum.page_frees++;
	m->sum.pages_freed += 1ULL << MIN(ev->order, 30u);
	if (o) {
		if (o->site != NONE) {
			struct kmt_site *s = &m->reg.page_sites.v[o->site];

			s->frees++;
			s->life[model_life_bucket(ev->ts - o->ts)]++;
			if (ev->cpu != o->cpu)
				s->cross_cpu++;
		}
		model_emit(m, o, KMT_FATE_FREED, ev);
		otab_remove(&m->pg.pages, sl);
	}
}

/* A stack after a page allocation on its CPU (model_page_claims) names who asked. */
void model_page_stack(struct kmt_model *m, const struct kmt_event *ev, const struct claim *c)
{
	struct kmt_site *s;
	struct islot *sl;
	uint32_t i;

	for (i = 0; i < ev->nr_stack; i++) {
		uint64_t a, off;
		const char *fn;

		a = kmt_event_stack(ev, i);
		fn = kmt_symbols_lookup(m->o.syms, a, &off);
		if (!fn || model_allocator_frame(fn))
			continue;
		s = model_site_of(m, &m->reg.page_site_map, &m->reg.page_sites, a - off);
		if (!s)
			return;
		s->allocs++;
		s->bytes_alloc += model_page_bytes(m, c->order);
		s->order_mask |= 1u << MIN(c->order, 31u);
		sl = otab_find(&m->pg.pages, c->ptr);
		if (sl && slot_live(sl))
			slot_obj(&m->pg.pages, sl)->site = (uint32_t)(s - m->reg.page_sites.v);
		break;
	}
}

void model_pcpu_alloc(struct kmt_model *m, const struct kmt_event *ev)
{
	struct islot *sl;
	struct obj *o;

	if (m->filtering && !model_task_wanted(m, ev->pid, model_proc_of(m, ev->pid)))
		return;
	m->scope = true;
	m->sum.pcpu_allocs++;
	m->sum.pcpu_bytes += ev->bytes_alloc;
	if (!ev->ptr)
		return;
	sl = otab_get(&m->pg.pcpu, ev->ptr);
	o = !sl ? NULL : slot_live(sl) ? slot_obj(&m->pg.pcpu, sl) : otab_obj_new(&m->pg.pcpu, sl);
	if (!o) {
		m->oom = true;
		return;
	}
	o->ts = ev->ts;
	o->alloc = sat32(ev->bytes_alloc);
}

void model_pcpu_free(struct kmt_model *m, const struct kmt_event *ev)
{
	struct islot *sl = otab_find(&m->pg.pcpu, ev->ptr);

	if (!(sl && slot_live(sl)) && m->filtering && !model_task_wanted(m, ev->pid, model_proc_of(m, ev->pid)))
		return;
	m->scope = true;
	m->sum.pcpu_frees++;
	if (sl && slot_live(sl))
		otab_remove(&m->pg.pcpu, sl);
}
