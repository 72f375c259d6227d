/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The flame graph's tree (src/report/flame.h): paths of names added one by one,
 * children found through the interner's (parent, name).
 */
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/base.h>
#include "util/util.h"
#include "flame.h"

struct flame {
	struct flame_node *root;
	struct kmt_intern names;	/* (parent, name): the number of each node below the root */
	struct flame_node **nodes;	/* by that number */
	size_t alloc;
	bool stacks;
};

static struct flame_node *node_new(const char *name)
{
	struct flame_node *f = calloc(1, sizeof(*f));

	if (f)
		f->name = name;
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
	free(f);
}

/* The child of @f named @name, made if absent; NULL on ENOMEM. */
static struct flame_node *kid(struct flame *t, struct flame_node *f, const char *name)
{
	int64_t id = kmt_intern_id(&t->names, (uintptr_t)f, name);
	struct flame_node *k;

	if (id < 0)
		return NULL;
	if ((size_t)id < t->alloc && t->nodes[id])
		return t->nodes[id];
	if ((size_t)id >= t->alloc) {
		size_t na = t->alloc ? t->alloc * 2 : 1024;
		struct flame_node **nn = realloc(t->nodes, na * sizeof(*nn));

		if (!nn)
			return NULL;
		memset(nn + t->alloc, 0, (na - t->alloc) * sizeof(*nn));
		t->nodes = nn;
		t->alloc = na;
	}
	if (f->nkids == f->cap) {
		size_t nc = f->cap ? f->cap * 2 : 4;
		struct flame_node **nk = realloc(f->kids, nc * sizeof(*nk));

		if (!nk)
			return NULL;
		f->kids = nk;
		f->cap = nc;
	}
	if (!(k = node_new(t->names.str[id])))
		return NULL;
	f->kids[f->nkids++] = k;
	t->nodes[id] = k;
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

/*
 * Page allocations by the function that asked (a page site: the first
 * frame of its stack that is not the allocator's), the rest "(no stack)".
 */
static bool from_pages(struct flame *t, const struct report *r)
{
	const struct kmt_summary *sum = kmt_model_summary(r->m);
	uint32_t psize = kmt_file_info(r->f)->page_size ? kmt_file_info(r->f)->page_size : 4096;
	size_t n, i;
	const struct kmt_site *s = kmt_model_page_sites(r->m, &n);
	uint64_t rest[FV_NR] = { 0 }, named = 0, named_bytes = 0;
	const char *path[2] = { "page allocations", NULL };
	char name[256];

	for (i = 0; i < n; i++) {
		uint64_t v[FV_NR] = { 0 };

		if (!s[i].allocs)
			continue;
		v[FV_PAGE_BYTES] = s[i].bytes_alloc;
		v[FV_PAGES] = s[i].bytes_alloc / psize;
		named += v[FV_PAGES];
		named_bytes += v[FV_PAGE_BYTES];
		path[1] = site_function(r, s[i].addr, name, sizeof(name));
		if (!add(t, path, 2, v))
			return false;
	}
	rest[FV_PAGES] = sum->pages_allocated - MIN(sum->pages_allocated, named);
	rest[FV_PAGE_BYTES] = sum->pages_allocated * psize - MIN(sum->pages_allocated * psize, named_bytes);
	path[1] = "(no stack)";
	return !rest[FV_PAGES] || add(t, path, 2, rest);
}

const char *const flame_value_names[FV_NR + 1] = {
	[FV_BYTES] = "bytes", [FV_OBJECTS] = "objects", [FV_LIVE] = "live-bytes",
	[FV_PAGE_BYTES] = "page-bytes", [FV_PAGES] = "pages", [FV_NR] = NULL,
};

struct flame *flame_build(const struct report *r)
{
	struct flame *t = calloc(1, sizeof(*t));
	size_t n;

	if (!t || !(t->root = node_new("all allocations"))) {
		flame_free(t);
		return NULL;
	}
	kmt_model_stacks(r->m, &n);
	t->stacks = n > 0;
	if (!(t->stacks ? from_stacks(t, r) : from_sites(t, r)) || !from_pages(t, r)) {
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
	kmt_intern_release(&f->names);
	free(f->nodes);
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
