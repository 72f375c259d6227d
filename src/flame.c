/*
 * The flame graph's tree (src/flame.h): paths of names added one by one,
 * children found through one hash table of (parent, name).
 */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "flame.h"

struct flame {
	struct flame_node *root;
	struct flame_node **slots;	/* open addressing over (parent, name) */
	struct flame_node **parent_of;	/* the parent of each slot's node */
	size_t cap, n;
	bool stacks;
};

static uint64_t hash(const struct flame_node *parent, const char *name)
{
	uint64_t h = (uint64_t)(uintptr_t)parent * 0x9e3779b97f4a7c15ULL;

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 1099511628211ULL;
	return h ^ (h >> 29);
}

static struct flame_node *node_new(const char *name)
{
	struct flame_node *f = calloc(1, sizeof(*f));
	char *copy = strdup(name);

	if (!f || !copy) {
		free(f);
		free(copy);
		return NULL;
	}
	f->name = copy;
	return f;
}

static void node_free(struct flame_node *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nkids; i++)
		node_free(f->kids[i]);
	free(f->kids);
	free((char *)f->name);
	free(f);
}

static bool grow(struct flame *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024, i;
	struct flame_node **s = calloc(cap, sizeof(*s)), **p = calloc(cap, sizeof(*p));

	if (!s || !p) {
		free(s);
		free(p);
		return false;
	}
	for (i = 0; i < t->cap; i++)
		if (t->slots[i]) {
			size_t j = hash(t->parent_of[i], t->slots[i]->name) & (cap - 1);

			while (s[j])
				j = (j + 1) & (cap - 1);
			s[j] = t->slots[i];
			p[j] = t->parent_of[i];
		}
	free(t->slots);
	free(t->parent_of);
	t->slots = s;
	t->parent_of = p;
	t->cap = cap;
	return true;
}

/* The child of @f named @name, made if absent; NULL on ENOMEM. */
static struct flame_node *kid(struct flame *t, struct flame_node *f, const char *name)
{
	struct flame_node *k;
	size_t j;

	if ((t->n + 1) * 2 > t->cap && !grow(t))
		return NULL;
	for (j = hash(f, name) & (t->cap - 1); t->slots[j]; j = (j + 1) & (t->cap - 1))
		if (t->parent_of[j] == f && !strcmp(t->slots[j]->name, name))
			return t->slots[j];
	if (f->nkids == f->cap) {
		size_t nc = f->cap ? f->cap * 2 : 4;
		struct flame_node **nk = realloc(f->kids, nc * sizeof(*nk));

		if (!nk)
			return NULL;
		f->kids = nk;
		f->cap = nc;
	}
	if (!(k = node_new(name)))
		return NULL;
	f->kids[f->nkids++] = k;
	t->slots[j] = k;
	t->parent_of[j] = f;
	t->n++;
	return k;
}

/* Add @v along the path @names[0..n) below the root. */
static bool add(struct flame *t, const char *const *names, size_t n, const uint64_t *v)
{
	struct flame_node *f = t->root;
	size_t i;
	int k;

	for (k = 0; k < FV_NR; k++)
		f->v[k] += v[k];
	for (i = 0; i < n; i++) {
		if (!(f = kid(t, f, names[i])))
			return false;
		for (k = 0; k < FV_NR; k++)
			f->v[k] += v[k];
	}
	return true;
}

/*
 * --stack recordings: outermost caller down to the call site. With
 * sampled stacks, each stands for the allocations of its site that have
 * none, so "(no stack)" is only what sampling cannot explain.
 */
static bool from_stacks(struct flame *t, const struct report *r)
{
	size_t n, ns, i, k, nf;
	const struct kmt_site *s = kmt_model_sites(r->m, &n);
	const char *path[130];
	char names[130][128];

	uint64_t one_in = kmt_model_summary(r->m)->stack_sample;

	for (i = 0; i < n; i++) {
		const struct kmt_site_stack *st = kmt_model_site_stacks(r->m, s[i].addr, &ns);
		uint64_t total[FV_NR] = { s[i].bytes_alloc, s[i].allocs, s[i].live_bytes };
		uint64_t rest[FV_NR] = { s[i].bytes_alloc, s[i].allocs, s[i].live_bytes };
		uint64_t stacked[FV_NR] = { 0 };

		if (!s[i].allocs)
			continue;
		for (k = 0; k < ns; k++) {
			stacked[FV_BYTES] += st[k].bytes_alloc;
			stacked[FV_OBJECTS] += st[k].allocs;
			stacked[FV_LIVE] += st[k].live_bytes;
		}
		for (k = 0; k < ns; k++) {
			const uint64_t *f = kmt_model_stack(r->m, st[k].stack, &nf);
			uint64_t v[FV_NR] = { st[k].bytes_alloc, st[k].allocs, st[k].live_bytes };
			size_t d = 0, x;

			/* A sampled stack counts for the allocations like it that have none. */
			for (x = 0; x < FV_NR; x++)
				v[x] = stack_weight(v[x], stacked[x], total[x], one_in);

			nf = MIN(nf, (size_t)128);
			for (x = nf; x-- > 0;)
				path[d++] = site_function(r, f[x], names[x], sizeof(names[x]));
			path[d++] = site_name(r, s[i].addr, names[129], sizeof(names[129]));
			if (!add(t, path, d, v))
				return false;
			for (x = 0; x < FV_NR; x++)
				rest[x] -= MIN(rest[x], v[x]);
		}
		if (rest[FV_BYTES] || rest[FV_OBJECTS] || rest[FV_LIVE]) {
			path[0] = "(no stack)";
			path[1] = site_name(r, s[i].addr, names[0], sizeof(names[0]));
			if (!add(t, path, 2, rest))
				return false;
		}
	}
	return true;
}

/* Otherwise: call site, cache, task name (the model's groups). */
static bool from_sites(struct flame *t, const struct report *r)
{
	size_t ng, ns, np, i;
	const struct kmt_group *g = kmt_model_groups(r->m, &ng);
	const struct kmt_site *s = kmt_model_sites(r->m, &ns);
	const struct kmt_proc *p = kmt_model_procs(r->m, &np);
	char site[256];

	for (i = 0; i < ng; i++) {
		uint64_t v[FV_NR] = { g[i].bytes_alloc, g[i].allocs, g[i].live_bytes };
		const char *path[3];

		if (!g[i].allocs)
			continue;
		path[0] = g[i].site < ns ? site_name(r, s[g[i].site].addr, site, sizeof(site)) : "(unknown)";
		path[1] = g[i].cache != UINT32_MAX ? cache_name(r, g[i].cache) : "(no cache)";
		path[2] = g[i].proc < np ? p[g[i].proc].comm : "(unknown task)";
		if (!add(t, path, 3, v))
			return false;
	}
	return true;
}

struct flame *flame_build(const struct report *r)
{
	struct flame *t = calloc(1, sizeof(*t));
	size_t n;

	if (!t || !(t->root = node_new("all slab allocations")) || !grow(t)) {
		flame_free(t);
		return NULL;
	}
	kmt_model_stacks(r->m, &n);
	t->stacks = n > 0;
	if (!(t->stacks ? from_stacks(t, r) : from_sites(t, r))) {
		flame_free(t);
		return NULL;
	}
	return t;
}

void flame_free(struct flame *f)
{
	if (!f)
		return;
	node_free(f->root);
	free(f->slots);
	free(f->parent_of);
	free(f);
}

struct flame_node *flame_root(struct flame *f)
{
	return f->root;
}

bool flame_stacks(const struct flame *f)
{
	return f->stacks;
}
