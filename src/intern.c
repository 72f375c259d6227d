/*
 * Interning for the exports (src/intern.h): open addressing over arrays
 * that double as they fill past half, for a few thousand strings (call
 * sites, caches, task names) and as many addresses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return h;
}

static bool grow(struct intern *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024, i;
	uint32_t *s = calloc(cap, sizeof(*s));

	if (!s)
		return false;
	for (i = 0; i < t->n; i++) {
		size_t j = hash_str(t->v[i]) & (cap - 1);

		while (s[j])
			j = (j + 1) & (cap - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = s;
	t->cap = cap;
	return true;
}

static int64_t add(struct intern *t, const char *s)
{
	size_t j;

	if ((t->n + 1) * 2 > t->cap && !grow(t))
		return -1;
	for (j = hash_str(s) & (t->cap - 1); t->slots[j]; j = (j + 1) & (t->cap - 1))
		if (!strcmp(t->v[t->slots[j] - 1], s))
			return t->slots[j] - 1;
	if (t->n == t->alloc) {
		size_t na = t->alloc ? t->alloc * 2 : 256;
		char **nv = realloc(t->v, na * sizeof(*nv));

		if (!nv)
			return -1;
		t->v = nv;
		t->alloc = na;
	}
	if (!(t->v[t->n] = strdup(s)))
		return -1;
	t->slots[j] = (uint32_t)++t->n;
	return (int64_t)t->n - 1;
}

int64_t intern_id(struct intern *t, const char *s)
{
	int64_t id = add(t, s);

	if (id < 0)
		t->oom = true;
	return id;
}

void intern_release(struct intern *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static size_t slot(const struct intern_map *m, uint64_t key)
{
	size_t j = (size_t)(key * 0x9e3779b97f4a7c15ULL >> 20) & (m->cap - 1);

	while (m->vals[j] && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	return j;
}

uint32_t intern_map_get(const struct intern_map *m, uint64_t key)
{
	return m->cap ? m->vals[slot(m, key)] : 0;
}

int intern_map_put(struct intern_map *m, uint64_t key, uint32_t val)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap) {
		struct intern_map nm = { .cap = m->cap ? m->cap * 2 : 1024 };
		size_t i;

		nm.keys = calloc(nm.cap, sizeof(*nm.keys));
		nm.vals = calloc(nm.cap, sizeof(*nm.vals));
		if (!nm.keys || !nm.vals) {
			free(nm.keys);
			free(nm.vals);
			return -ENOMEM;
		}
		for (i = 0; i < m->cap; i++)
			if (m->vals[i]) {
				j = slot(&nm, m->keys[i]);
				nm.keys[j] = m->keys[i];
				nm.vals[j] = m->vals[i];
			}
		nm.n = m->n;
		intern_map_release(m);
		*m = nm;
	}
	j = slot(m, key);
	m->n += !m->vals[j];
	m->keys[j] = key;
	m->vals[j] = val;
	return 0;
}

void intern_map_release(struct intern_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
