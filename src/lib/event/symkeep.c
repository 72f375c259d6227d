/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The code addresses a trace names, as a set (include/kmemtrace/event.h).
 * A recording's events name a few thousand distinct addresses among
 * millions of events: an open-addressing table of them, checked first
 * against the last address noted (a call site repeats), stays in cache.
 * (hackbench --stack: 48 M stack frames and call sites in 12.7 M events,
 * 1,533 distinct addresses; noting them all takes 0.16 s, decoding the
 * events 0.10 s.) Not a kmt_map, on purpose (base.h names the exception):
 * with one, 62 M addresses took 0.45 s to note instead of 0.24 s.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include <kmemtrace/event.h>
#include "base/kmt-local.h"

struct kmt_symkeep {
	uint64_t *slot;			/* 0: empty */
	size_t cap, n;			/* cap: a power of two */
	uint64_t last;			/* the address noted last */
	bool oom;			/* a note found no memory */
};

struct kmt_symkeep *kmt_symkeep_new(void)
{
	struct kmt_symkeep *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->cap = 1024;
	k->slot = calloc(k->cap, sizeof(*k->slot));
	if (!k->slot) {
		free(k);
		return NULL;
	}
	return k;
}

void kmt_symkeep_free(struct kmt_symkeep *k)
{
	if (!k)
		return;
	free(k->slot);
	free(k);
}

static size_t slot_of(uint64_t a, size_t cap)
{
	return (size_t)((a * 0x9e3779b97f4a7c15ULL) >> 32) & (cap - 1);
}

static bool grow(struct kmt_symkeep *k)
{
	size_t cap = k->cap * 2, i, j;
	uint64_t *v = calloc(cap, sizeof(*v));

	if (!v)
		return false;
	for (i = 0; i < k->cap; i++) {
		if (!k->slot[i])
			continue;
		for (j = slot_of(k->slot[i], cap); v[j]; j = (j + 1) & (cap - 1))
			;
		v[j] = k->slot[i];
	}
	free(k->slot);
	k->slot = v;
	k->cap = cap;
	return true;
}

void kmt_symkeep_addr(struct kmt_symkeep *k, uint64_t addr)
{
	size_t j;

	if (!addr || addr == k->last)
		return;
	k->last = addr;
	for (j = slot_of(addr, k->cap); k->slot[j]; j = (j + 1) & (k->cap - 1))
		if (k->slot[j] == addr)
			return;
	if ((k->n + 1) * 2 > k->cap) {
		if (!grow(k)) {
			k->oom = true;
			return;
		}
		for (j = slot_of(addr, k->cap); k->slot[j]; j = (j + 1) & (k->cap - 1))
			;
	}
	k->slot[j] = addr;
	k->n++;
}

void kmt_symkeep_event(struct kmt_symkeep *k, const struct kmt_event *ev)
{
	uint32_t i;

	kmt_symkeep_addr(k, ev->call_site);
	for (i = 0; i < ev->nr_stack; i++)
		kmt_symkeep_addr(k, kmt_event_stack(ev, i));
}

void kmt_symkeep_merge(struct kmt_symkeep *into, const struct kmt_symkeep *from)
{
	size_t i;

	into->oom |= from->oom;
	for (i = 0; i < from->cap; i++)
		if (from->slot[i])
			kmt_symkeep_addr(into, from->slot[i]);
}

size_t kmt_symkeep_count(const struct kmt_symkeep *k)
{
	return k->n;
}

int kmt_symkeep_cut(const struct kmt_symkeep *k, const char *text, size_t len, char **out,
		    size_t *out_len)
{
	uint64_t *v;
	size_t i, n = 0;

	if (k->oom)
		return -ENOMEM;
	v = malloc((k->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < k->cap; i++)
		if (k->slot[i])
			v[n++] = k->slot[i];
	*out = kmt_symbols_cut(text, len, v, n, out_len);
	free(v);
	return *out ? 0 : -ENOMEM;
}
