/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vmalloc areas in the allocation model (include/kmemtrace/model.h):
 * alloc_vmap_area and free_vmap_area_noflush, by address. The kernel frees
 * vmalloc areas lazily (free_vmap_area_noflush marks the range free; it is
 * purged and reused later) and often from a kworker, so a free is matched
 * by address whoever frees. alloc_vmap_area has no call site: with
 * --stack, the first non-allocator frame of the stack that follows names
 * the allocating function. Few areas live at once (hundreds to thousands),
 * so the live ones are listed one by one at the end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/event.h>
#include "model-local.h"

int model_vmap_init(struct kmt_model *m)
{
	return otab_init(&m->vm.vmap, 1 << 8) || kmt_map_init(&m->vm.vmap_site_map, 1 << 6) ||
	       kmt_map_init(&m->vm.vmap_size_map, 1 << 6) ? -ENOMEM : 0;
}

void model_vmap_release(struct kmt_model *m)
{
	otab_release(&m->vm.vmap);
	kmt_map_release(&m->vm.vmap_site_map);
	kmt_map_release(&m->vm.vmap_size_map);
	free(m->vm.vmap_sites.v);
	free(m->vm.vmap_sizes.v);
	free(m->vm.vmap_live.v);
}

/* The row of areas of @size. */
static struct kmt_vmap_size *size_row(struct kmt_model *m, uint64_t size)
{
	uint32_t i = kmt_map_get(&m->vm.vmap_size_map, size);

	if (i == NONE) {
		i = VEC_PUSH(m->vm.vmap_sizes, m->oom);
		if (i == NONE || kmt_map_put(&m->vm.vmap_size_map, size, i)) {
			m->oom = true;
			return NULL;
		}
		m->vm.vmap_sizes.v[i].size = size;
	}
	return &m->vm.vmap_sizes.v[i];
}

void model_vmap_alloc(struct kmt_model *m, const struct kmt_event *ev)
{
	uint32_t proc = model_proc_of(m, ev->pid);
	struct kmt_vmap_size *z;
	struct islot *sl;
	struct obj *o;

	if (m->filtering && !model_task_wanted(m, ev->pid, proc))
		return;
	m->scope = true;
	if (model_vmap_failed(ev)) {
		m->sum.vmap_failures++;
		return;
	}
	m->sum.vmap_allocs++;
	m->sum.vmap_bytes += ev->bytes_alloc;
	z = size_row(m, ev->bytes_alloc);
	if (z)
		z->allocs++;
	sl = otab_get(&m->vm.vmap, ev->ptr);
	o = !sl ? NULL : slot_live(sl) ? slot_obj(&m->vm.vmap, sl) : otab_obj_new(&m->vm.vmap, sl);
	if (!o) {
		m->oom = true;
		return;
	}
	o->ts = ev->ts;
	o->site = NONE;
	o->proc = proc;
	o->cache = NONE;
	o->alloc = sat32(ev->bytes_alloc);
	o->req = o->alloc;
	o->cpu = (uint16_t)ev->cpu;
	o->kind = KMT_EV_VMAP_ALLOC;
	o->loss_seq = m->loss_seq;
}

void model_vmap_free(struct kmt_model *m, const struct kmt_event *ev)
{
	struct islot *sl = otab_find(&m->vm.vmap, ev->ptr);
	struct obj *o = sl && slot_live(sl) ? slot_obj(&m->vm.vmap, sl) : NULL;
	struct kmt_vmap_size *z;

	/* Areas are mostly freed by kworkers: by address, whoever frees. */
	if (!o) {
		if (m->filtering && !model_task_wanted(m, ev->pid, model_proc_of(m, ev->pid)))
			return;
		m->scope = true;
		m->sum.vmap_frees++;
		m->sum.vmap_preexisting_frees++;
		return;
	}
	m->scope = true;
	m->sum.vmap_frees++;
	m->sum.vmap_bytes_freed += o->alloc;
	z = size_row(m, o->alloc);
	if (z)
		z->frees++;
	if (o->site != NONE) {
		struct kmt_site *s = &m->vm.vmap_sites.v[o->site];

		s->frees++;
		s->bytes_freed += o->alloc;
		s->life[model_life_bucket(ev->ts > o->ts ? ev->ts - o->ts : 0)]++;
		if (ev->cpu != o->cpu)
			s->cross_cpu++;
	}
	otab_remove(&m->vm.vmap, sl);
}

uint64_t model_caller_of(const struct kmt_symbols *syms, const struct kmt_event *ev)
{
	uint32_t i;

	for (i = 0; i < ev->nr_stack; i++) {
		uint64_t a = kmt_event_stack(ev, i), off;
		const char *fn = kmt_symbols_lookup(syms, a, &off);

		if (fn && !model_allocator_frame(fn))
			return a - off;
	}
	return 0;
}

void model_vmap_stack(struct kmt_model *m, const struct kmt_event *ev, const struct claim *c)
{
	struct kmt_site *s;
	struct islot *sl;
	struct obj *o;
	uint64_t fn;

	sl = otab_find(&m->vm.vmap, c->ptr);
	o = sl && slot_live(sl) ? slot_obj(&m->vm.vmap, sl) : NULL;
	if (!o)
		return;
	fn = model_caller_of(m->o.syms, ev);
	if (!fn)
		fn = c->caller;	/* the stack stopped in the allocator */
	if (!fn)
		return;
	s = model_site_of(m, &m->vm.vmap_site_map, &m->vm.vmap_sites, fn);
	if (!s)
		return;
	s->allocs++;
	s->bytes_req += o->alloc;
	s->bytes_alloc += o->alloc;
	o->site = (uint32_t)(s - m->vm.vmap_sites.v);
}

static int cmp_area(const void *a, const void *b)
{
	const struct kmt_vmap_area *x = a, *y = b;

	if (x->size != y->size)
		return (x->size < y->size) - (x->size > y->size);
	return (x->age < y->age) - (x->age > y->age);
}

void model_vmap_finish(struct kmt_model *m, uint64_t ts)
{
	uint32_t i;

	for (i = 0; i < m->vm.vmap.pool_n; i++) {
		const struct obj *o = &m->vm.vmap.pool[i];
		struct kmt_vmap_area *a;
		struct kmt_vmap_size *z;
		uint32_t k;

		if (o->state != OBJ_LIVE)
			continue;
		k = VEC_PUSH(m->vm.vmap_live, m->oom);
		if (k == NONE)
			return;
		a = &m->vm.vmap_live.v[k];
		a->addr = o->key;
		a->size = o->alloc;
		a->age = ts > o->ts ? ts - o->ts : 0;
		a->pid = o->proc != NONE ? m->reg.procs.v[o->proc].pid : -1;
		if (o->proc != NONE)
			memcpy(a->comm, m->reg.procs.v[o->proc].comm, sizeof(a->comm));
		a->function = o->site != NONE ? m->vm.vmap_sites.v[o->site].addr : 0;
		a->uncertain = o->loss_seq != m->loss_seq;
		if (a->uncertain)
			continue;
		m->sum.vmap_live++;
		m->sum.vmap_live_bytes += o->alloc;
		z = size_row(m, o->alloc);
		if (z)
			z->live++;
		if (o->site != NONE) {
			m->vm.vmap_sites.v[o->site].live_objects++;
			m->vm.vmap_sites.v[o->site].live_bytes += o->alloc;
		}
	}
	if (m->vm.vmap_live.n > 1)
		qsort(m->vm.vmap_live.v, m->vm.vmap_live.n, sizeof(*m->vm.vmap_live.v), cmp_area);
}
