/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The model's per-object side (include/kmemtrace/model.h): the object
 * records handed to a consumer (kmemtrace kmap) and the watchpoint
 * samples of kmemtrace watch files, attributed to the object that was live
 * at the sampled address at that time, and counted per object group,
 * offset and instruction.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "model-local.h"

/* Per (group, offset, ip): a dense array, found through a kmt_map. */
struct access_tab {
	struct kmt_access_stat *v;
	size_t n, alloc;
	struct kmt_map by_key;		/* akey() -> index in v */
};

void kmt_model_set_hooks(struct kmt_model *m, const struct kmt_model_hooks *h)
{
	m->hooks = *h;
}

static void fill(const struct kmt_model *m, const struct obj *o, struct kmt_object *x)
{
	memset(x, 0, sizeof(*x));
	x->ptr = o->key;
	x->kind = o->kind;
	x->uncertain = o->loss_seq != m->loss_seq;
	x->alloc_pid = o->proc != NONE ? m->reg.procs.v[o->proc].pid : -1;
	x->comm = o->proc != NONE ? m->reg.procs.v[o->proc].comm : NULL;
	x->memcg = o->proc != NONE ? m->reg.procs.v[o->proc].memcg : NULL;
	x->cgroup = o->proc != NONE ? kmt_cgroup_name(m->reg.procs.v[o->proc].cgroup, x->memcg) : NULL;
	x->alloc_cpu = o->cpu;
	x->alloc_ts = o->ts;
	x->free_pid = -1;
	x->free_cpu = -1;
	x->gfp = o->gfp;
	x->stack = UINT32_MAX;
	if (o->kind == KMT_EV_PAGE_ALLOC) {
		x->order = o->order;
		x->bytes_req = x->bytes_alloc = model_page_bytes(m, o->order);
		x->alloc_site = o->site != NONE ? m->reg.page_sites.v[o->site].addr : 0;
		return;
	}
	x->bytes_req = o->req;
	x->bytes_alloc = o->alloc;
	x->alloc_site = m->reg.sites.v[o->site].addr;
	x->cache = o->cache != NONE ? kmt_cache_label(&m->reg.caches.v[o->cache]) : NULL;
	x->stack = model_stack_id(m, o);
}

const char *kmt_fate_name(enum kmt_fate f)
{
	static const char *const names[] = {
		[KMT_FATE_FREED] = "freed", [KMT_FATE_LIVE] = "live",
		[KMT_FATE_UNSEEN_FREE] = "unseen_free", [KMT_FATE_PREEXISTING] = "preexisting",
	};

	return (unsigned int)f < sizeof(names) / sizeof(names[0]) ? names[f] : "?";
}

void model_emit(struct kmt_model *m, const struct obj *o, enum kmt_fate fate,
		const struct kmt_event *free_ev)
{
	struct kmt_object x;

	if (!m->hooks.object || (o->kind == KMT_EV_PAGE_ALLOC && !m->hooks.pages))
		return;
	fill(m, o, &x);
	x.fate = (uint8_t)fate;
	if (free_ev && fate == KMT_FATE_FREED) {
		x.free_ts = free_ev->ts;
		x.free_pid = free_ev->pid;
		x.free_cpu = free_ev->cpu;
		x.free_site = free_ev->call_site;
	}
	m->hooks.object(m->hooks.arg, &x);
}

void model_emit_preexisting(struct kmt_model *m, const struct kmt_event *ev)
{
	struct kmt_object x = {
		.ptr = ev->ptr, .kind = KMT_EV_NONE, .fate = KMT_FATE_PREEXISTING,
		.uncertain = m->loss_seq != 0, .alloc_pid = -1, .alloc_cpu = -1,
		.free_pid = ev->pid, .free_cpu = ev->cpu, .free_ts = ev->ts,
		.free_site = ev->call_site, .stack = UINT32_MAX,
	};

	if (m->hooks.object)
		m->hooks.object(m->hooks.arg, &x);
}

static int cmp_obj_ts(const void *a, const void *b)
{
	const struct obj *x = *(const struct obj *const *)a, *y = *(const struct obj *const *)b;

	/* Ties by CPU and address: the same order whatever the pool's (shards move objects). */
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return (x->key > y->key) - (x->key < y->key);
}

static void emit_table(struct kmt_model *m, struct otab *t)
{
	const struct obj **v;
	size_t i, n = 0;

	v = malloc(((size_t)t->live + 1) * sizeof(*v));
	if (!v) {
		m->oom = true;
		return;
	}
	for (i = 0; i < t->pool_n && n < t->live; i++)
		if (t->pool[i].state == OBJ_LIVE)
			v[n++] = &t->pool[i];
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_obj_ts);
	for (i = 0; i < n; i++)
		model_emit(m, v[i], KMT_FATE_LIVE, NULL);
	free(v);
}

/* At the end: the objects still live, oldest first. */
void model_emit_live(struct kmt_model *m)
{
	if (!m->hooks.object)
		return;
	emit_table(m, &m->slab);
	if (m->hooks.pages)
		emit_table(m, &m->pg.pages);
}

static uint64_t akey(uint64_t site, uint32_t offset, uint64_t ip)
{
	return kmt_hash_combine(kmt_hash64(ip), site ^ (uint64_t)offset << 48);
}

struct access_key {
	const struct access_tab *a;
	uint64_t site, ip;
	uint32_t offset;
};

static bool same_access(const void *ctx, uint32_t i)
{
	const struct access_key *k = ctx;
	const struct kmt_access_stat *s = &k->a->v[i];

	return s->site == k->site && s->offset == k->offset && s->ip == k->ip;
}

static struct kmt_access_stat *access_slot(struct kmt_model *m, const struct obj *o,
					   const struct kmt_event *ev)
{
	struct access_tab *a = m->access;
	uint64_t site = m->reg.sites.v[o->site].addr;
	struct access_key k = { a, site, ev->call_site, ev->offset };
	uint64_t h = akey(site, ev->offset, ev->call_site);
	uint32_t i;

	if (!a) {
		a = m->access = calloc(1, sizeof(*a));
		if (!a)
			return NULL;
		k.a = a;
	}
	i = kmt_map_find(&a->by_key, h, same_access, &k);
	if (i != NONE)
		return &a->v[i];
	if (ALLOC_GROW(a->v, a->n + 1, a->alloc, 64))
		return NULL;
	if (kmt_map_add(&a->by_key, h, (uint32_t)a->n))
		return NULL;
	memset(&a->v[a->n], 0, sizeof(a->v[a->n]));
	a->v[a->n].site = site;
	a->v[a->n].cache = o->cache;
	a->v[a->n].offset = ev->offset;
	a->v[a->n].ip = ev->call_site;
	a->v[a->n].len = (uint32_t)MIN(ev->bytes_req, (uint64_t)UINT32_MAX);
	if (ev->str2_len)
		snprintf(a->v[a->n].field, sizeof(a->v[a->n].field), "%.*s",
			 (int)MIN(ev->str2_len, 47u), ev->str2);
	return &a->v[a->n++];
}

void model_access(struct kmt_model *m, const struct kmt_event *ev)
{
	struct islot *sl = otab_find(&m->slab, ev->ptr);
	struct kmt_access_stat *s;
	struct obj *o;

	m->sum.access_hits++;
	if (!sl || !slot_live(sl) || (o = slot_obj(&m->slab, sl))->ts > ev->ts) {
		if (!m->filtering)
			m->sum.access_dropped++;
		return;
	}
	if (ev->flags & KMT_EVF_WRITE)
		m->sum.access_writes++;
	else
		m->sum.access_reads++;
	if (!o->hit) {
		o->hit = 1;
		m->sum.access_objects++;
	}
	s = access_slot(m, o, ev);
	if (!s) {
		m->oom = true;
		return;
	}
	if (ev->flags & KMT_EVF_WRITE)
		s->writes++;
	else
		s->reads++;
	if (m->hooks.access) {
		struct kmt_object x;

		fill(m, o, &x);
		x.fate = KMT_FATE_LIVE;
		m->hooks.access(m->hooks.arg, &x, ev);
	}
}

void kmt_model_access_lost(struct kmt_model *m, int64_t lost)
{
	if (lost > 0)
		m->sum.access_lost += (uint64_t)lost;
}

static int cmp_access(const void *a, const void *b)
{
	const struct kmt_access_stat *x = a, *y = b;

	if (x->site != y->site)
		return (x->site > y->site) - (x->site < y->site);
	if (x->offset != y->offset)
		return (x->offset > y->offset) - (x->offset < y->offset);
	return (x->ip > y->ip) - (x->ip < y->ip);
}

void model_access_finish(struct kmt_model *m)
{
	struct access_tab *a = m->access;

	if (!a)
		return;
	if (a->n > 1)
		qsort(a->v, a->n, sizeof(*a->v), cmp_access);
	kmt_map_release(&a->by_key);
}

void model_access_release(struct kmt_model *m)
{
	if (!m->access)
		return;
	free(m->access->v);
	kmt_map_release(&m->access->by_key);
	free(m->access);
	m->access = NULL;
}

const struct kmt_access_stat *kmt_model_access(const struct kmt_model *m, size_t *n)
{
	*n = m->access ? m->access->n : 0;
	return m->access ? m->access->v : NULL;
}
