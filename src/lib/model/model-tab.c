/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The object table of the allocation model: open addressing with
 * linear probing, sized to a power of two and grown at half load, so a
 * lookup is one or two cache lines.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "model-local.h"

/*
 * Large tables are probed at random: back them with huge pages where the
 * kernel allows, so a lookup costs a cache miss, not also a TLB miss.
 */
static void *table_map(size_t *bytes)
{
	void *p;

	if (*bytes >= (2u << 20))
		*bytes = ALIGN_UP(*bytes, 2u << 20);
	p = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (*bytes >= (2u << 20))
		madvise(p, *bytes, MADV_HUGEPAGE);
	return p;
}

/* Forget freed addresses once they outnumber live objects this much. */
#define DEAD_LIMIT (8u << 20)

int otab_init(struct otab *t, size_t cap)
{
	memset(t, 0, sizeof(*t));
	t->cap = cap;
	t->bytes = cap * sizeof(*t->s);
	t->s = table_map(&t->bytes);
	return t->s ? 0 : -ENOMEM;
}

void otab_release(struct otab *t)
{
	if (t->s)
		munmap(t->s, t->bytes);
	if (t->pool)
		munmap(t->pool, t->pool_bytes);
	free(t->free);
	memset(t, 0, sizeof(*t));
}

static struct islot *probe(const struct otab *t, uint64_t k)
{
	size_t mask = t->cap - 1, i = kmt_hash64(k) & mask;

	while (t->s[i].key && t->s[i].key != k)
		i = (i + 1) & mask;
	return &t->s[i];
}

struct islot *otab_find(struct otab *t, uint64_t key)
{
	struct islot *s = probe(t, key ^ KEY_MIX);

	return s->key ? s : NULL;
}

/* Rebuild at @cap slots; with @forget, addresses of freed objects go. */
static int otab_rebuild(struct otab *t, size_t cap, bool forget)
{
	struct otab nt = *t;
	size_t i;

	nt.cap = cap;
	nt.bytes = cap * sizeof(*nt.s);
	nt.s = table_map(&nt.bytes);
	if (!nt.s)
		return -ENOMEM;
	nt.n = nt.dead = 0;
	for (i = 0; i < t->cap; i++) {
		if (!t->s[i].key || (forget && !slot_live(&t->s[i])))
			continue;
		*probe(&nt, t->s[i].key) = t->s[i];
		nt.n++;
		nt.dead += !slot_live(&t->s[i]);
	}
	munmap(t->s, t->bytes);
	*t = nt;
	return 0;
}

struct islot *otab_get(struct otab *t, uint64_t key)
{
	uint64_t k = key ^ KEY_MIX;
	struct islot *s = probe(t, k);

	if (s->key)
		return s;
	if ((t->n + 1) * 2 > t->cap) {
		bool forget = t->dead > DEAD_LIMIT && t->dead > 8 * (size_t)t->live;

		if (otab_rebuild(t, forget ? t->cap : t->cap * 2, forget))
			return NULL;
		t->compactions += forget;
		s = probe(t, k);
	}
	t->n++;
	s->key = k;
	s->val = NONE;
	s->loss = 0;
	s->cache = NO_CACHE16;
	return s;
}

/*
 * The pool doubles in place where it can (mremap), and is probed at
 * random like the index: huge pages too.
 */
static int pool_grow(struct otab *t)
{
	uint32_t nc = t->pool_cap ? t->pool_cap * 2 : 4096;
	size_t bytes = (size_t)nc * sizeof(*t->pool);
	uint32_t *nf;
	void *np;

	if (nc >= SLOT_LIVE)
		return -ENOMEM;
	/* The free stack first, for as many as the pool can hold (2 MiB rounding included). */
	nf = realloc(t->free, (ALIGN_UP(bytes, 2u << 20) / sizeof(*t->pool)) * sizeof(*nf));
	if (!nf)
		return -ENOMEM;
	t->free = nf;
	if (!t->pool) {
		np = table_map(&bytes);
	} else {
		if (bytes >= (2u << 20))
			bytes = ALIGN_UP(bytes, 2u << 20);
#ifndef __SANITIZE_THREAD__
		np = mremap(t->pool, t->pool_bytes, bytes, MREMAP_MAYMOVE);
		if (np == MAP_FAILED)
			np = NULL;
		else if (bytes >= (2u << 20))
			madvise(np, bytes, MADV_HUGEPAGE);
#else
		/*
		 * ThreadSanitizer does not follow mremap() (google/sanitizers
		 * issue 1099): the old range, mapped again by another shard's
		 * table, would carry this one's accesses, reported as races.
		 */
		if ((np = table_map(&bytes))) {
			memcpy(np, t->pool, t->pool_bytes);
			munmap(t->pool, t->pool_bytes);
		}
#endif
	}
	if (!np)
		return -ENOMEM;
	t->pool = np;
	t->pool_bytes = bytes;
	t->pool_cap = (uint32_t)MIN(bytes / sizeof(*t->pool), (size_t)SLOT_LIVE - 1);
	return 0;
}

struct obj *otab_obj_new(struct otab *t, struct islot *s)
{
	uint32_t i;

	if (t->nr_free) {
		i = t->free[--t->nr_free];
		/* The next ones to pop may be cold (freed long ago): fetch them now. */
		if (t->nr_free)
			__builtin_prefetch(&t->pool[t->free[t->nr_free - 1]], 1);
		if (t->nr_free > 1)
			__builtin_prefetch(&t->pool[t->free[t->nr_free - 2]], 1);
	} else {
		if (t->pool_n == t->pool_cap && pool_grow(t))
			return NULL;
		i = t->pool_n++;
	}
	if (!slot_live(s) && s->val != NONE)
		t->dead--;
	s->val = SLOT_LIVE | i;
	t->live++;
	memset(&t->pool[i], 0, sizeof(t->pool[i]));
	t->pool[i].key = s->key ^ KEY_MIX;
	t->pool[i].state = OBJ_LIVE;
	return &t->pool[i];
}

static void pool_free(struct otab *t, const struct islot *s)
{
	uint32_t i = s->val & ~SLOT_LIVE;

	t->pool[i].state = OBJ_EMPTY;
	t->free[t->nr_free++] = i;
	t->live--;
}

void otab_kill(struct otab *t, struct islot *s, uint32_t site, uint32_t cache, uint32_t loss)
{
	if (slot_live(s))
		pool_free(t, s);
	if (s->val == NONE || slot_live(s))
		t->dead++;
	s->val = site == NONE ? SLOT_NOSITE : site & ~SLOT_LIVE;
	s->loss = (uint16_t)loss;
	s->cache = cache < NO_CACHE16 ? (uint16_t)cache : NO_CACHE16;
}

void otab_remove(struct otab *t, struct islot *s)
{
	size_t mask = t->cap - 1, i = (size_t)(s - t->s), j = i;

	if (slot_live(s))
		pool_free(t, s);
	else if (s->val != NONE)
		t->dead--;
	/* Backward shift: pull later members of the cluster into the hole. */
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!t->s[j].key)
			break;
		home = kmt_hash64(t->s[j].key) & mask;
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			t->s[i] = t->s[j];
			i = j;
		}
	}
	t->s[i].key = 0;
	t->n--;
}
