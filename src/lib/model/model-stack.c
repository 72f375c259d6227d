/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Slab allocations by call site and stack (--stack recordings): the
 * stacktrace trigger puts a kernel stack right after each allocation on
 * its CPU. The frames above the call site (its callers, innermost first)
 * are interned once; each (call site, stack) pair counts its objects,
 * bytes, frees and the objects still live at the end.
 */
#include <stdlib.h>

#include <kmemtrace/event.h>
#include "model-local.h"

#define MAX_FRAMES 128

struct stack_head {
	uint32_t off, len;		/* in the flat frame array */
	uint64_t born;			/* kmt_model.pos when first seen */
};

struct kmt_stacks {
	VEC(uint64_t) frames;
	VEC(struct stack_head) heads;
	struct kmt_map by_hash;		/* hash of the frames -> stack id */
	struct kmt_map row_map;		/* site index << 32 | stack id -> row */
	VEC(struct kmt_site_stack) rows;
	VEC(struct reg_meta) row_meta;	/* beside rows: when, and the row_map key */
	bool sorted;
};

int model_stack_init(struct kmt_model *m)
{
	m->stacks = calloc(1, sizeof(*m->stacks));
	if (!m->stacks)
		return -1;
	if (kmt_map_init(&m->stacks->by_hash, 1 << 10) || kmt_map_init(&m->stacks->row_map, 1 << 8))
		return -1;
	return 0;
}

void model_stack_release(struct kmt_model *m)
{
	struct kmt_stacks *t = m->stacks;

	if (!t)
		return;
	free(t->frames.v);
	free(t->heads.v);
	kmt_map_release(&t->by_hash);
	kmt_map_release(&t->row_map);
	free(t->rows.v);
	free(t->row_meta.v);
	free(t);
	m->stacks = NULL;
}

static uint64_t hash_frames(const uint64_t *f, size_t n)
{
	uint64_t h = n;
	size_t i;

	for (i = 0; i < n; i++)
		h = kmt_hash_combine(h, f[i]);
	return h;
}

struct frames {
	const struct kmt_stacks *t;
	const uint64_t *f;
	size_t n;
};

static bool same_frames(const void *ctx, uint32_t id)
{
	const struct frames *k = ctx;
	const struct stack_head *s = &k->t->heads.v[id];

	return s->len == k->n && (!k->n || !memcmp(&k->t->frames.v[s->off], k->f, k->n * sizeof(*k->f)));
}

/* The id of the stack @f[0..n) in @t, interned (made at @born); NONE on ENOMEM. */
static uint32_t intern_in(struct kmt_model *m, struct kmt_stacks *t, const uint64_t *f, size_t n,
			  uint64_t born)
{
	uint64_t h = hash_frames(f, n);
	struct frames key = { t, f, n };
	uint32_t id = kmt_map_find(&t->by_hash, h, same_frames, &key);
	size_t k;

	if (id != NONE)
		return id;
	id = VEC_PUSH(t->heads, m->oom);
	if (id == NONE)
		return NONE;
	t->heads.v[id].off = (uint32_t)t->frames.n;
	t->heads.v[id].len = (uint32_t)n;
	t->heads.v[id].born = born;
	for (k = 0; k < n; k++) {
		uint32_t i = VEC_PUSH(t->frames, m->oom);

		if (i == NONE)
			return NONE;
		t->frames.v[i] = f[k];
	}
	if (kmt_map_add(&t->by_hash, h, id)) {
		m->oom = true;
		return NONE;
	}
	return id;
}

static uint32_t intern(struct kmt_model *m, const uint64_t *f, size_t n)
{
	return intern_in(m, m->stacks, f, n, m->pos);
}

/* The row of @key in @t, made (at @born, for call site @site, stack @id) if new; NONE on ENOMEM. */
static uint32_t row_of(struct kmt_model *m, struct kmt_stacks *t, uint64_t key, uint64_t site, uint32_t id,
		       uint64_t born)
{
	uint32_t r = kmt_map_get(&t->row_map, key), k;

	if (r != NONE)
		return r;
	r = VEC_PUSH(t->rows, m->oom);
	k = VEC_PUSH(t->row_meta, m->oom);
	if (r == NONE || k == NONE || kmt_map_put(&t->row_map, key, r)) {
		m->oom = true;
		return NONE;
	}
	t->rows.v[r].site = site;
	t->rows.v[r].stack = id;
	t->row_meta.v[k] = (struct reg_meta){ born, key };
	return r;
}

/* Frames the tracing machinery adds on top of every stack. */
static bool tracing_frame(const char *fn)
{
	return !strncmp(fn, "trace_", 6) || !strncmp(fn, "__traceiter_", 12) ||
	       !strncmp(fn, "ftrace_", 7) || !strncmp(fn, "__ftrace_", 9) ||
	       !strncmp(fn, "stack_trace_", 12) || !strncmp(fn, "event_triggers_", 15);
}

/*
 * The callers of call site @site in the stack @ev, innermost first, into
 * @out: the frames after the one at the call site itself (the return
 * address the kernel reports as call_site). Where the unwinder shows no
 * such frame, the frames after the allocator's own (by symbol).
 */
static size_t callers(const struct kmt_model *m, const struct kmt_event *ev, uint64_t site,
		      uint64_t *out)
{
	uint32_t i, from = ev->nr_stack;
	size_t n = 0;

	for (i = 0; i < ev->nr_stack; i++)
		if (kmt_event_stack(ev, i) == site) {
			from = i + 1;
			break;
		}
	if (from == ev->nr_stack && m->o.syms) {
		uint64_t off, soff;
		const char *sfn = kmt_symbols_lookup(m->o.syms, site, &soff);

		for (i = 0; i < ev->nr_stack; i++) {
			const char *fn = kmt_symbols_lookup(m->o.syms, kmt_event_stack(ev, i), &off);

			if (fn && (tracing_frame(fn) || model_allocator_frame(fn) ||
				   (sfn && !strcmp(fn, sfn))))
				continue;
			break;
		}
		from = i;
	} else if (from == ev->nr_stack) {
		from = 0;
	}
	for (i = from; i < ev->nr_stack && n < MAX_FRAMES; i++) {
		if (m->o.stack_depth && n == m->o.stack_depth)
			break;
		out[n++] = kmt_event_stack(ev, i);
	}
	return n;
}

void model_stack_slab(struct kmt_model *m, const struct kmt_event *ev, const struct claim *c)
{
	struct kmt_stacks *t = m->stacks;
	struct kmt_site_stack *row;
	uint64_t f[MAX_FRAMES], key;
	struct islot *sl;
	struct obj *o;
	uint32_t id, r;
	size_t n;

	sl = otab_find(&m->slab, c->ptr);
	if (!sl || !slot_live(sl))
		return;
	o = slot_obj(&m->slab, sl);
	/* Freed since (and maybe allocated again elsewhere): not its stack any more. */
	if (o->stack || o->ts != c->ts || o->cpu != ev->cpu)
		return;
	n = callers(m, ev, m->reg.sites.v[o->site].addr, f);
	id = intern(m, f, n);
	if (id == NONE)
		return;
	key = (uint64_t)o->site << 32 | id;
	r = row_of(m, t, key, m->reg.sites.v[o->site].addr, id, m->pos);
	if (r == NONE)
		return;
	row = &t->rows.v[r];
	row->allocs++;
	row->bytes_req += o->req;
	row->bytes_alloc += o->alloc;
	o->stack = r + 1;
}

void model_stack_unalloc(struct kmt_model *m, struct obj *o)
{
	struct kmt_site_stack *row;

	if (!o->stack)
		return;
	row = &m->stacks->rows.v[o->stack - 1];
	row->allocs--;
	row->bytes_req -= o->req;
	row->bytes_alloc -= o->alloc;
	o->stack = 0;
}

void model_stack_freed(struct kmt_model *m, const struct obj *o)
{
	if (o->stack)
		m->stacks->rows.v[o->stack - 1].frees++;
}

uint32_t model_stack_id(const struct kmt_model *m, const struct obj *o)
{
	return o->stack && !m->stacks->sorted ? m->stacks->rows.v[o->stack - 1].stack : UINT32_MAX;
}

void model_stack_live(struct kmt_model *m, const struct obj *o)
{
	struct kmt_site_stack *row;

	if (!o->stack)
		return;
	row = &m->stacks->rows.v[o->stack - 1];
	row->live_objects++;
	row->live_bytes += o->alloc;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct kmt_site_stack *x = a, *y = b;

	if (x->site != y->site)
		return (x->site > y->site) - (x->site < y->site);
	if (x->bytes_alloc != y->bytes_alloc)
		return (x->bytes_alloc < y->bytes_alloc) - (x->bytes_alloc > y->bytes_alloc);
	if (x->allocs != y->allocs)
		return (x->allocs < y->allocs) - (x->allocs > y->allocs);
	return (x->stack > y->stack) - (x->stack < y->stack);
}

/* After the last event: rows by call site, then bytes (objects no longer point at them). */
void model_stack_finish(struct kmt_model *m)
{
	struct kmt_stacks *t = m->stacks;
	size_t i, k = 0;

	/* Rows emptied by an undone twin allocation go. */
	for (i = 0; i < t->rows.n; i++)
		if (t->rows.v[i].allocs)
			t->rows.v[k++] = t->rows.v[i];
	t->rows.n = k;
	if (t->rows.n > 1)
		qsort(t->rows.v, t->rows.n, sizeof(*t->rows.v), cmp_rows);
	t->sorted = true;
}

static size_t heads_n(const struct kmt_model *m)
{
	return m->stacks->heads.n;
}

static uint64_t heads_born(const struct kmt_model *m, size_t i)
{
	return m->stacks->heads.v[i].born;
}

static uint64_t rows_born(const struct kmt_model *m, size_t i)
{
	return m->stacks->row_meta.v[i].born;
}

static const struct shard_list head_list = { heads_n, heads_born }, row_list = { model_stack_rows, rows_born };

/*
 * Shards' stacks and rows into @m's (model-merge.c), in the order they
 * were first seen; @site_map[k] maps shard @k's call sites to @m's,
 * @row_map[k] is filled with its rows' new indexes.
 */
int model_stack_merge(struct kmt_model *m, struct kmt_model **sh, unsigned int n, uint32_t *const *site_map,
		      uint32_t **row_map)
{
	struct kmt_stacks *nt = calloc(1, sizeof(*nt));
	struct shard_ent *e = NULL;
	uint32_t **head_map = calloc(n, sizeof(*head_map));
	size_t i, total;
	unsigned int k;
	int ret = -1;

	if (!nt || !head_map || kmt_map_init(&nt->by_hash, 1 << 10) || kmt_map_init(&nt->row_map, 1 << 8))
		goto out;
	for (k = 0; k < n; k++)
		if (!(head_map[k] = malloc((sh[k]->stacks->heads.n + 1) * sizeof(**head_map))))
			goto out;
	/* Stacks by when first seen: interned again, their ids as one model gives them. */
	e = model_shard_order(sh, n, &head_list, &total);
	if (!e)
		goto out;
	for (i = 0; i < total; i++) {
		const struct kmt_stacks *t = sh[e[i].shard]->stacks;
		const struct stack_head *h = &t->heads.v[e[i].idx];

		head_map[e[i].shard][e[i].idx] = intern_in(m, nt, t->frames.v + h->off, h->len, h->born);
		if (head_map[e[i].shard][e[i].idx] == NONE)
			goto out;
	}
	free(e);
	e = model_shard_order(sh, n, &row_list, &total);
	if (!e)
		goto out;
	for (i = 0; i < total; i++) {
		const struct kmt_stacks *t = sh[e[i].shard]->stacks;
		const struct kmt_site_stack *src = &t->rows.v[e[i].idx];
		const struct reg_meta *mt = &t->row_meta.v[e[i].idx];
		uint32_t site = site_map[e[i].shard][mt->key >> 32];
		uint32_t id = head_map[e[i].shard][(uint32_t)mt->key], r;
		struct kmt_site_stack *d;

		r = row_of(m, nt, (uint64_t)site << 32 | id, src->site, id, mt->born);
		if (r == NONE)
			goto out;
		d = &nt->rows.v[r];
		d->allocs += src->allocs;
		d->frees += src->frees;
		d->bytes_req += src->bytes_req;
		d->bytes_alloc += src->bytes_alloc;
		d->live_objects += src->live_objects;
		d->live_bytes += src->live_bytes;
		row_map[e[i].shard][e[i].idx] = r;
	}
	model_stack_release(m);
	m->stacks = nt;
	nt = NULL;
	/* Kept: a consumer's per-shard stack ids become the model's (kmt_model_shard_stack()). */
	m->shard_heads = head_map;
	m->nshard_heads = n;
	head_map = NULL;
	ret = 0;
out:
	free(e);
	for (k = 0; head_map && k < n; k++)
		free(head_map[k]);
	free(head_map);
	if (nt) {
		struct kmt_stacks *keep = m->stacks;

		m->stacks = nt;
		model_stack_release(m);
		m->stacks = keep;
	}
	if (ret)
		m->oom = true;
	return ret;
}

size_t model_stack_rows(const struct kmt_model *m)
{
	return m->stacks->rows.n;
}

const struct kmt_site_stack *kmt_model_stacks(const struct kmt_model *m, size_t *n)
{
	*n = m->stacks->sorted ? m->stacks->rows.n : 0;
	return m->stacks->rows.v;
}

const struct kmt_site_stack *kmt_model_site_stacks(const struct kmt_model *m, uint64_t site,
						   size_t *n)
{
	const struct kmt_site_stack *v;
	size_t lo = 0, hi, all;

	v = kmt_model_stacks(m, &all);
	hi = all;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].site < site)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (hi = lo; hi < all && v[hi].site == site; hi++)
		;
	*n = hi - lo;
	return *n ? v + lo : NULL;
}

uint32_t kmt_model_shard_stack(const struct kmt_model *m, unsigned int shard, uint32_t id)
{
	if (!m->shard_heads)
		return id;	/* never sharded: the ids are its own */
	if (id == UINT32_MAX || shard >= m->nshard_heads)
		return UINT32_MAX;
	return m->shard_heads[shard][id];
}

const uint64_t *kmt_model_stack(const struct kmt_model *m, uint32_t id, size_t *n)
{
	const struct kmt_stacks *t = m->stacks;

	if (id >= t->heads.n) {
		*n = 0;
		return NULL;
	}
	*n = t->heads.v[id].len;
	return t->frames.v + t->heads.v[id].off;
}
