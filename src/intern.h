/*
 * Interning for the exports: strings numbered in the order they are first
 * met (pprof's string table, Perfetto's interned names), and a map from
 * 64-bit keys (addresses) to such numbers.
 */
#ifndef KMT_INTERN_H
#define KMT_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Strings by number; zero it to start. The table owns its copies. */
struct intern {
	char **v;			/* v[i]: string number i */
	size_t n, alloc;
	uint32_t *slots;		/* open addressing: number + 1, 0 empty */
	size_t cap;
	bool oom;			/* a string could not be added: the output is incomplete */
};

/* The number of @s, from 0 in the order added, @s added if new; -1 on ENOMEM (and then t->oom). */
int64_t intern_id(struct intern *t, const char *s);
void intern_release(struct intern *t);

/* 64-bit keys to numbers other than 0; zero it to start. */
struct intern_map {
	uint64_t *keys;
	uint32_t *vals;			/* 0: empty */
	size_t cap, n;
};

/* The number stored for @key, or 0. */
uint32_t intern_map_get(const struct intern_map *m, uint64_t key);
/* Store @val (not 0) for @key; -ENOMEM. */
int intern_map_put(struct intern_map *m, uint64_t key, uint32_t val);
void intern_map_release(struct intern_map *m);

#endif
