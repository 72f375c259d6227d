/*
 * Hash tables of the allocation model. Both are open addressing with
 * linear probing, sized to a power of two and grown at half load, so a
 * lookup is one or two cache lines.
 */
#include <errno.h>
#include <stdlib.h>

#include "model-local.h"

int otab_init(struct otab *t, size_t cap)
{
	t->cap = cap;
	t->n = 0;
	t->v = calloc(cap, sizeof(*t->v));
	return t->v ? 0 : -ENOMEM;
}

void otab_release(struct otab *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

static struct obj *probe(const struct otab *t, uint64_t key)
{
	size_t mask = t->cap - 1, i = hash64(key) & mask;

	while (t->v[i].state != OBJ_EMPTY && t->v[i].key != key)
		i = (i + 1) & mask;
	return &t->v[i];
}

struct obj *otab_find(struct otab *t, uint64_t key)
{
	struct obj *o = probe(t, key);

	return o->state == OBJ_EMPTY ? NULL : o;
}

static int otab_grow(struct otab *t)
{
	struct otab nt;
	size_t i;

	if (otab_init(&nt, t->cap * 2))
		return -ENOMEM;
	for (i = 0; i < t->cap; i++)
		if (t->v[i].state != OBJ_EMPTY)
			*probe(&nt, t->v[i].key) = t->v[i];
	nt.n = t->n;
	free(t->v);
	*t = nt;
	return 0;
}

struct obj *otab_get(struct otab *t, uint64_t key)
{
	struct obj *o = probe(t, key);

	if (o->state != OBJ_EMPTY)
		return o;
	if ((t->n + 1) * 2 > t->cap) {
		if (otab_grow(t))
			return NULL;
		o = probe(t, key);
	}
	t->n++;
	memset(o, 0, sizeof(*o));
	o->key = key;
	return o;
}

int imap_init(struct imap *m, size_t cap)
{
	m->cap = cap;
	m->n = 0;
	m->keys = calloc(cap, sizeof(*m->keys));
	m->vals = malloc(cap * sizeof(*m->vals));
	if (!m->keys || !m->vals) {
		imap_release(m);
		return -ENOMEM;
	}
	memset(m->vals, 0xff, cap * sizeof(*m->vals));
	return 0;
}

void imap_release(struct imap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static size_t islot(const struct imap *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = hash64(key) & mask;

	while (m->vals[i] != NONE && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

uint32_t imap_get(const struct imap *m, uint64_t key)
{
	return m->vals[islot(m, key)];
}

int imap_put(struct imap *m, uint64_t key, uint32_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		struct imap nm;
		size_t k;

		if (imap_init(&nm, m->cap * 2))
			return -ENOMEM;
		for (k = 0; k < m->cap; k++)
			if (m->vals[k] != NONE) {
				size_t j = islot(&nm, m->keys[k]);

				nm.keys[j] = m->keys[k];
				nm.vals[j] = m->vals[k];
			}
		nm.n = m->n;
		imap_release(m);
		*m = nm;
	}
	i = islot(m, key);
	if (m->vals[i] == NONE)
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val;
	return 0;
}

uint64_t hash_str(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < len && s[i]; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ULL;
	return h;
}
