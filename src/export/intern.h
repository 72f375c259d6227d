/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The exports' interning: string tables (struct strtab: pprof's string
 * table, Perfetto's interned names) and maps of keys to numbers, over the
 * one interner and map (include/kmemtrace/base.h: kmt_intern, kmt_map). A
 * string's id of -1 means out of memory, and the table remembers it
 * (->oom), so a writer can finish and then say its output would be
 * incomplete.
 */
#ifndef KMT_INTERN_H
#define KMT_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kmemtrace/base.h>

/* A string table: strings by number, from 0 in the order added; zero it to start. */
struct strtab {
	struct kmt_intern in;
	bool oom;			/* a string could not be added: the output is incomplete */
};

/* The number of @s, @s added if new; -1 on ENOMEM (and then t->oom). */
static inline int64_t strtab_id(struct strtab *t, const char *s)
{
	int64_t id = kmt_intern_id(&t->in, 0, s);

	if (id < 0)
		t->oom = true;
	return id < 0 ? -1 : id;
}

static inline size_t strtab_count(const struct strtab *t)
{
	return t->in.n;
}

static inline const char *strtab_str(const struct strtab *t, size_t i)
{
	return t->in.str[i];
}

static inline void strtab_release(struct strtab *t)
{
	kmt_intern_release(&t->in);
}

/* 64-bit keys to numbers other than 0 (kmt_map); zero it to start. */
struct intern_map {
	struct kmt_map m;
};

/* The number stored for @key, or 0. */
static inline uint32_t intern_map_get(const struct intern_map *m, uint64_t key)
{
	uint32_t v = kmt_map_get(&m->m, key);

	return v == KMT_MAP_NONE ? 0 : v;
}

/* Store @val (not 0) for @key; -ENOMEM. */
static inline int intern_map_put(struct intern_map *m, uint64_t key, uint32_t val)
{
	return kmt_map_put(&m->m, key, val);
}

static inline void intern_map_release(struct intern_map *m)
{
	kmt_map_release(&m->m);
}

#endif
