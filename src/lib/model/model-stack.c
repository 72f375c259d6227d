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
};

struct kmt_stacks {
	VEC(uint64_t) frames;
	VEC(struct stack_head) heads;
	struct kmt_map by_hash;		/* hash of the frames -> stack id */
	struct kmt_map row_map;		/* site index << 32 | stack id -> row */
	VEC(struct kmt_site_stack) rows;
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
	free(t);
	m->stacks = NULL;
}

static uint64_t hash_frames(const uint64_t *f, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
	size_t i;

	for (i = 0; i < n; i++)
		h = kmt_hash64(h ^ f[i]) + i;
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

/* The id of the stack @f[0..n), interned; NONE on ENOMEM. */
static uint32_t intern(struct kmt_model *m, const uint64_t *f, size_t n)
{
	struct kmt_stacks *t = m->stacks;
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

void model_stack_slab(struct kmt_model *m, const struct kmt_event *ev, uint64_t ptr)
{
	struct kmt_stacks *t = m->stacks;
	struct kmt_site_stack *row;
	uint64_t f[MAX_FRAMES], key;
	struct islot *sl;
	struct obj *o;
	uint32_t id, r;
	size_t n;

	sl = otab_find(&m->slab, ptr);
	if (!sl || !slot_live(sl))
		return;
	o = slot_obj(&m->slab, sl);
	if (o->stack)
		return;
	n = callers(m, ev, m->reg.sites.v[o->site].addr, f);
	id = intern(m, f, n);
	if (id == NONE)
		return;
	key = (uint64_t)o->site << 32 | id;
	r = kmt_map_get(&t->row_map, key);
	if (r == NONE) {
		r = VEC_PUSH(t->rows, m->oom);
		if (r == NONE || kmt_map_put(&t->row_map, key, r)) {
			m->oom = true;
			return;
		}
		t->rows.v[r].site = m->reg.sites.v[o->site].addr;
		t->rows.v[r].stack = id;
	}
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
