/*
 * Private structures of the allocation model: the object tables and the
 * small maps from keys (addresses, names, pids) to array indices.
 */
#ifndef MODEL_LOCAL_H
#define MODEL_LOCAL_H

#include <kmemtrace/model.h>
#include "kmt-local.h"

enum { OBJ_EMPTY = 0, OBJ_LIVE, OBJ_DEAD };

/* One object, live or freed, keyed by address / pfn / percpu pointer. */
struct obj {
	uint64_t key;
	uint64_t ts;			/* allocation time, or free time if DEAD */
	uint32_t site;			/* allocation site index */
	uint32_t cache;			/* cache index, or NONE */
	uint32_t req, alloc;		/* bytes (saturated at 4 GiB) */
	uint32_t proc;			/* allocating task index */
	uint32_t loss_seq;		/* losses seen when allocated / freed */
	uint16_t cpu;
	uint8_t state;
	uint8_t kind;			/* KMT_EV_KMALLOC, ... */
	uint8_t order;
	uint8_t pad[3];
	uint32_t seq;			/* per-CPU sequence of the allocation */
};

#define NONE UINT32_MAX

/* Open addressing with linear probing; entries never move once placed
 * except on growth, and are never deleted (LIVE <-> DEAD). */
struct otab {
	struct obj *v;
	size_t cap, n;
};

int otab_init(struct otab *t, size_t cap);
void otab_release(struct otab *t);
/* The entry for @key, or NULL. */
struct obj *otab_find(struct otab *t, uint64_t key);
/* The entry for @key, a new EMPTY one (key set) if absent; NULL on ENOMEM. */
struct obj *otab_get(struct otab *t, uint64_t key);

/* u64 -> u32 index map (call sites, pids, caches by size). */
struct imap {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;
};

int imap_init(struct imap *m, size_t cap);
void imap_release(struct imap *m);
uint32_t imap_get(const struct imap *m, uint64_t key);	/* NONE if absent */
int imap_put(struct imap *m, uint64_t key, uint32_t val);

static inline uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

uint64_t hash_str(const char *s, size_t len);

#endif
