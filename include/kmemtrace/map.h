/*
 * The one hash map and the one string interner: open addressing with
 * linear probing, a power-of-two size grown at half load, so a lookup is
 * one or two cache lines. Every table of the project that finds a record
 * by key is one of these (the model's object table, which also stores the
 * objects, is the exception: model-tab.c).
 */
#ifndef KMEMTRACE_MAP_H
#define KMEMTRACE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KMT_MAP_NONE UINT32_MAX		/* no value; never stored */

/* A 64-bit mix (murmur3's finalizer): keys that differ in any bit spread. */
static inline uint64_t kmt_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* FNV-1a of the first @len bytes of @s, up to a NUL (@len SIZE_MAX: the whole string). */
uint64_t kmt_hash_str(const char *s, size_t len);

/*
 * u64 key -> u32 value. A key may also be a hash of something larger
 * that several records share: kmt_map_add() then keeps each, and
 * kmt_map_find() asks the caller which is the one.
 */
struct kmt_map {
	uint64_t *keys;
	uint32_t *vals;			/* KMT_MAP_NONE: empty slot */
	size_t cap, n;
};

/* @cap: the first size, a power of two (0: 64). 0 or -ENOMEM. */
int kmt_map_init(struct kmt_map *m, size_t cap);
void kmt_map_release(struct kmt_map *m);
/* The value of @key, or KMT_MAP_NONE. */
uint32_t kmt_map_get(const struct kmt_map *m, uint64_t key);
/* Set @key's value (added, or replaced). 0 or -ENOMEM. */
int kmt_map_put(struct kmt_map *m, uint64_t key, uint32_t val);
/* The value under @key for which @same(@ctx, value) holds, or KMT_MAP_NONE. */
uint32_t kmt_map_find(const struct kmt_map *m, uint64_t key,
		      bool (*same)(const void *ctx, uint32_t val), const void *ctx);
/* Add @val under @key even if @key has values already. 0 or -ENOMEM. */
int kmt_map_add(struct kmt_map *m, uint64_t key, uint32_t val);
/* Remove the entry (@key, @val), if there is one. */
void kmt_map_del(struct kmt_map *m, uint64_t key, uint32_t val);

/*
 * Strings, interned: each distinct (@tag, string) once, numbered from 0 in
 * the order first seen. @tag scopes a name (a flame graph's parent frame,
 * a symbol's address); 0 where none is needed.
 */
struct kmt_intern {
	char **str;
	uint64_t *tag;
	size_t n, alloc;
	struct kmt_map by_hash;
};

void kmt_intern_release(struct kmt_intern *t);
/* The number of (@tag, @s), added if new; -ENOMEM. */
int64_t kmt_intern_id(struct kmt_intern *t, uint64_t tag, const char *s);
/* The number of (@tag, @s), or -1 if it was never added. */
int64_t kmt_intern_find(const struct kmt_intern *t, uint64_t tag, const char *s);

#endif
