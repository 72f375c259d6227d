/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one hash map (include/kmemtrace/base.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/base.h>

uint64_t kmt_hash_str(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < len && s[i]; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ULL;
	return h;
}

int kmt_map_init(struct kmt_map *m, size_t cap)
{
	m->cap = cap ? cap : 64;
	m->n = 0;
	m->keys = calloc(m->cap, sizeof(*m->keys));
	m->vals = malloc(m->cap * sizeof(*m->vals));
	if (!m->keys || !m->vals) {
		kmt_map_release(m);
		return -ENOMEM;
	}
	memset(m->vals, 0xff, m->cap * sizeof(*m->vals));
	return 0;
}

void kmt_map_release(struct kmt_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* The slot of @key, or the empty slot where it would go. */
static size_t slot(const struct kmt_map *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = kmt_hash64(key) & mask;

	while (m->vals[i] != KMT_MAP_NONE && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

static size_t empty_slot(const struct kmt_map *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = kmt_hash64(key) & mask;

	while (m->vals[i] != KMT_MAP_NONE)
		i = (i + 1) & mask;
	return i;
}

uint32_t kmt_map_get(const struct kmt_map *m, uint64_t key)
{
	return m->cap ? m->vals[slot(m, key)] : KMT_MAP_NONE;
}

uint32_t kmt_map_find(const struct kmt_map *m, uint64_t key,
		      bool (*same)(const void *ctx, uint32_t val), const void *ctx)
{
	size_t mask = m->cap - 1, i;

	if (!m->cap)
		return KMT_MAP_NONE;
	for (i = kmt_hash64(key) & mask; m->vals[i] != KMT_MAP_NONE; i = (i + 1) & mask)
		if (m->keys[i] == key && same(ctx, m->vals[i]))
			return m->vals[i];
	return KMT_MAP_NONE;
}

/* Room for one more at half load. */
static int reserve(struct kmt_map *m)
{
	struct kmt_map nm;
	size_t k;

	if (!m->cap && kmt_map_init(m, 0))
		return -ENOMEM;
	if ((m->n + 1) * 2 <= m->cap)
		return 0;
	if (kmt_map_init(&nm, m->cap * 2))
		return -ENOMEM;
	for (k = 0; k < m->cap; k++)
		if (m->vals[k] != KMT_MAP_NONE) {
			size_t j = empty_slot(&nm, m->keys[k]);

			nm.keys[j] = m->keys[k];
			nm.vals[j] = m->vals[k];
		}
	nm.n = m->n;
	kmt_map_release(m);
	*m = nm;
	return 0;
}

int kmt_map_put(struct kmt_map *m, uint64_t key, uint32_t val)
{
	size_t i;

	if (reserve(m))
		return -ENOMEM;
	i = slot(m, key);
	if (m->vals[i] == KMT_MAP_NONE)
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val;
	return 0;
}

int kmt_map_add(struct kmt_map *m, uint64_t key, uint32_t val)
{
	size_t i;

	if (reserve(m))
		return -ENOMEM;
	i = empty_slot(m, key);
	m->n++;
	m->keys[i] = key;
	m->vals[i] = val;
	return 0;
}

void kmt_map_del(struct kmt_map *m, uint64_t key, uint32_t val)
{
	size_t mask = m->cap - 1, i, j;

	if (!m->cap)
		return;
	for (i = kmt_hash64(key) & mask; m->vals[i] != KMT_MAP_NONE; i = (i + 1) & mask)
		if (m->keys[i] == key && m->vals[i] == val)
			break;
	if (m->vals[i] == KMT_MAP_NONE)
		return;
	/* Backward shift: pull later members of the cluster into the hole. */
	for (j = i;;) {
		size_t home;

		j = (j + 1) & mask;
		if (m->vals[j] == KMT_MAP_NONE)
			break;
		home = kmt_hash64(m->keys[j]) & mask;
		/* Stays if its home lies cyclically in (i, j]. */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		i = j;
	}
	m->vals[i] = KMT_MAP_NONE;
	m->n--;
}
