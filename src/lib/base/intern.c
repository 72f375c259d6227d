/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one string interner (include/kmemtrace/base.h): strings numbered in
 * the order first seen, found by their hash in a kmt_map.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/base.h>
#include "grow.h"

struct key {
	const struct kmt_intern *t;
	uint64_t tag;
	const char *s;
};

static bool same(const void *ctx, uint32_t val)
{
	const struct key *k = ctx;

	return k->t->tag[val] == k->tag && !strcmp(k->t->str[val], k->s);
}

static uint64_t hash_of(uint64_t tag, const char *s)
{
	return kmt_hash_combine(kmt_hash_str(s, SIZE_MAX), tag);
}

int64_t kmt_intern_find(const struct kmt_intern *t, uint64_t tag, const char *s)
{
	struct key k = { t, tag, s };
	uint32_t v = kmt_map_find(&t->by_hash, hash_of(tag, s), same, &k);

	return v == KMT_MAP_NONE ? -1 : (int64_t)v;
}

int64_t kmt_intern_id(struct kmt_intern *t, uint64_t tag, const char *s)
{
	uint64_t h = hash_of(tag, s);
	struct key k = { t, tag, s };
	uint32_t v = kmt_map_find(&t->by_hash, h, same, &k);
	size_t tag_alloc = t->alloc;
	char *copy;

	if (v != KMT_MAP_NONE)
		return v;
	/* tag grows beside str, to the same size, before str's count moves. */
	if (ALLOC_GROW(t->tag, t->n + 1, tag_alloc, 256) || ALLOC_GROW(t->str, t->n + 1, t->alloc, 256))
		return -ENOMEM;
	copy = strdup(s);
	if (!copy || kmt_map_add(&t->by_hash, h, (uint32_t)t->n)) {
		free(copy);
		return -ENOMEM;
	}
	t->str[t->n] = copy;
	t->tag[t->n] = tag;
	return (int64_t)t->n++;
}

void kmt_intern_release(struct kmt_intern *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->str[i]);
	free(t->str);
	free(t->tag);
	kmt_map_release(&t->by_hash);
	memset(t, 0, sizeof(*t));
}
