/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * export --format pprof: a gzipped profile.proto (proto/profile.proto,
 * from pprof's published schema) with the four heap-profile sample types
 * of Go's runtime, so go tool pprof, Pyroscope and Parca read kernel
 * allocations as they read heap profiles: alloc_objects, alloc_space (every
 * slab allocation of the window), inuse_objects, inuse_space (those live
 * at its end, as report's live_objects and live_bytes); and four more of
 * the page allocator's, page_alloc_objects, page_alloc_space,
 * page_inuse_objects, page_inuse_space (allocations and their bytes, the
 * page size << order), where most of a process's kernel memory often is.
 * One sample per call site, stack, cache, task name and cgroup; its
 * locations are the call site then its callers (--stack recordings), leaf
 * first, in one [kernel.kallsyms] mapping; labels cache, comm, and cgroup
 * and container in recordings with cgroups. A page allocation's
 * location is the function that asked, named from its stack (--stack),
 * else "(page allocation, no stack)"; its cache label "pages". Samples come in the
 * order of call site, stack, cache and comm, the strings numbered as
 * met in them: the same bytes whatever order the objects came in (-j:
 * each shard adds up its own objects, folded at the end).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <kmemtrace/base.h>
#include "base/grow.h"
#include "util/util.h"
#include "export.h"
#include "intern.h"
#include "util/pb.h"

/* profile.proto field numbers (the ones written). */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2,
	MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3, MAPPING_FILENAME = 5,
	MAPPING_HAS_FUNCTIONS = 7,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
};

/* The sample types: the heap profile's four, then the page allocator's four. */
#define NV 8
static const char *const value_types[NV][2] = {
	{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
	{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
	{ "page_alloc_objects", "count" }, { "page_alloc_space", "bytes" },
	{ "page_inuse_objects", "count" }, { "page_inuse_space", "bytes" },
};
enum { V_SLAB = 0, V_PAGE = 4 };

/* A page allocation no stack named a function for: its pseudo-location (not a kernel address). */
#define PAGE_NOSITE 1ULL

/* A sample: call site, stack, cache, comm and cgroup (string ids); its values. */
struct sample {
	uint64_t site;
	uint32_t stack;
	int64_t cache, comm, cgroup;	/* string ids, 0: none */
	uint64_t v[NV];
};

struct pprof {
	struct strtab str;		/* the samples' cache and task names (index 0 is "") */
	struct sample *s;
	size_t n, alloc;
	struct kmt_map by_key;		/* sample_hash() -> index; samples may share a hash */
	unsigned int shard;		/* a shard's (-j): the model's shard it adds up */
};

static uint64_t sample_hash(const struct sample *s)
{
	uint64_t h = kmt_hash_combine(kmt_hash64(s->site), s->stack);

	h = kmt_hash_combine(h, (uint64_t)s->cache);
	h = kmt_hash_combine(h, (uint64_t)s->cgroup);
	return kmt_hash_combine(h, (uint64_t)s->comm);
}

struct sample_key {
	const struct pprof *p;
	const struct sample *k;
};

static bool same(const void *ctx, uint32_t i)
{
	const struct sample *a = &((const struct sample_key *)ctx)->p->s[i];
	const struct sample *b = ((const struct sample_key *)ctx)->k;

	return a->site == b->site && a->stack == b->stack && a->cache == b->cache && a->comm == b->comm &&
	       a->cgroup == b->cgroup;
}

/* The sample with @k's key, made if new (NULL on ENOMEM). */
static struct sample *sample_of(struct pprof *p, const struct sample *k)
{
	struct sample_key sk = { p, k };
	uint64_t h = sample_hash(k);
	uint32_t i = kmt_map_find(&p->by_key, h, same, &sk);

	if (i != KMT_MAP_NONE)
		return &p->s[i];
	if (ALLOC_GROW(p->s, p->n + 1, p->alloc, 1024))
		return NULL;
	if (kmt_map_add(&p->by_key, h, (uint32_t)p->n))
		return NULL;
	p->s[p->n] = *k;
	memset(p->s[p->n].v, 0, sizeof(p->s[p->n].v));
	return &p->s[p->n++];
}

static void on_object(void *arg, const struct kmt_object *o)
{
	struct export *x = arg;
	struct pprof *p = x->priv;
	struct sample k = { .site = o->alloc_site, .stack = o->stack }, *s;
	bool page = o->kind == KMT_EV_PAGE_ALLOC;
	int base = page ? V_PAGE : V_SLAB;
	const char *cg;

	if (o->fate == KMT_FATE_PREEXISTING)
		return;		/* not allocated in the window */
	if (page) {
		k.site = o->alloc_site ? o->alloc_site : PAGE_NOSITE;
		k.stack = UINT32_MAX;
	}
	k.cache = page ? strtab_id(&p->str, "pages") : o->cache ? strtab_id(&p->str, o->cache) : 0;
	k.comm = o->comm ? strtab_id(&p->str, o->comm) : 0;
	cg = o->cgroup;
	k.cgroup = cg ? strtab_id(&p->str, cg) : 0;
	if (k.cache < 0 || k.comm < 0 || k.cgroup < 0 || !(s = sample_of(p, &k))) {
		x->failed = true;
		return;
	}
	s->v[base]++;
	s->v[base + 1] += o->bytes_alloc;
	if (o->fate == KMT_FATE_LIVE && !o->uncertain) {
		s->v[base + 2]++;
		s->v[base + 3] += o->bytes_alloc;
	}
}

struct by_site {
	uint64_t site;
	size_t i;
};

static int cmp_by_site(const void *a, const void *b)
{
	const struct by_site *x = a, *y = b;

	return x->site != y->site ? (x->site > y->site) - (x->site < y->site) : (x->i > y->i) - (x->i < y->i);
}

/*
 * Sampled stacks (record --stack-sample): each stacked sample of a call
 * site stands for the allocations like it that have no stack
 * (stack_weight), and the site's samples without one keep what is left,
 * so a site's values still add up to its own. -1 on ENOMEM.
 */
static int weigh_sampled(struct pprof *p, uint64_t one_in)
{
	struct by_site *v = malloc((p->n + 1) * sizeof(*v));
	size_t i, j, k;

	if (!v)
		return -1;
	for (i = 0; i < p->n; i++)
		v[i] = (struct by_site){ p->s[i].site, i };
	qsort(v, p->n, sizeof(*v), cmp_by_site);
	for (i = 0; i < p->n; i = j) {
		uint64_t total[4] = { 0 }, stacked[4] = { 0 }, weighed[4] = { 0 };

		for (j = i; j < p->n && v[j].site == v[i].site; j++)
			for (k = 0; k < 4; k++) {
				total[k] += p->s[v[j].i].v[k];
				if (p->s[v[j].i].stack != UINT32_MAX)
					stacked[k] += p->s[v[j].i].v[k];
			}
		for (j = i; j < p->n && v[j].site == v[i].site; j++) {
			struct sample *sm = &p->s[v[j].i];

			for (k = 0; k < 4 && sm->stack != UINT32_MAX; k++) {
				sm->v[k] = stack_weight(sm->v[k], stacked[k], total[k], one_in);
				weighed[k] += sm->v[k];
			}
		}
		for (j = i; j < p->n && v[j].site == v[i].site; j++) {
			struct sample *sm = &p->s[v[j].i];

			for (k = 0; k < 4 && sm->stack == UINT32_MAX; k++)
				sm->v[k] = total[k] == stacked[k] ? 0 :
					   (uint64_t)((unsigned __int128)sm->v[k] *
						      (total[k] - MIN(weighed[k], total[k])) / (total[k] - stacked[k]));
		}
	}
	free(v);
	return 0;
}

static void release(struct export *x);

/* @p (zeroed) ready: string 0 is "", as profile.proto wants. */
static int pprof_init(struct pprof *p)
{
	return strtab_id(&p->str, "") ? -1 : 0;
}

/* A shard's export and its state (clone()'s), gone. */
static void shard_free(struct export *c)
{
	if (c->priv)
		release(c);
	free(c->priv);
	free(c);
}

/* Shard @shard's export (-j, kmt_model_hooks.clone): its own samples; it writes nothing. */
static void *clone(void *arg, FILE *fp, unsigned int shard)
{
	const struct export *x = arg;
	struct export *c = malloc(sizeof(*c));

	(void)fp;
	if (!c)
		return NULL;
	*c = *x;
	c->failed = false;
	if (!(c->priv = calloc(1, sizeof(struct pprof))) || pprof_init(c->priv)) {
		shard_free(c);
		return NULL;
	}
	((struct pprof *)c->priv)->shard = shard;
	return c;
}

/* A shard's samples added to @arg's, their stacks as the merged model @m numbers them. */
static void fold(void *arg, void *cl, const struct kmt_model *m)
{
	struct export *x = arg, *c = cl;
	struct pprof *p = x->priv, *q = c->priv;
	size_t i, k;

	x->failed |= c->failed;
	for (i = 0; i < q->n && !x->failed; i++) {
		struct sample key = q->s[i], *s;

		key.stack = kmt_model_shard_stack(m, q->shard, key.stack);
		key.cache = key.cache ? strtab_id(&p->str, strtab_str(&q->str, (size_t)key.cache)) : 0;
		key.comm = key.comm ? strtab_id(&p->str, strtab_str(&q->str, (size_t)key.comm)) : 0;
		key.cgroup = key.cgroup ? strtab_id(&p->str, strtab_str(&q->str, (size_t)key.cgroup)) : 0;
		if (key.cache < 0 || key.comm < 0 || key.cgroup < 0 || !(s = sample_of(p, &key))) {
			x->failed = true;
			break;
		}
		for (k = 0; k < NV; k++)
			s->v[k] += q->s[i].v[k];
	}
	shard_free(c);
}

static int begin(struct export *x)
{
	if (pprof_init(x->priv))
		return error("out of memory");
	x->hooks.object = on_object;
	x->hooks.pages = true;
	x->hooks.arg = x;
	x->hooks.clone = clone;
	x->hooks.fold = fold;
	return EXIT_OK;
}

/* Samples by call site, stack, cache and comm (names, not their ids: those depend on the order met). */
static int cmp_sample(const void *a, const void *b, void *arg)
{
	const struct sample *x = a, *y = b;
	const struct strtab *t = arg;
	int c;

	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	if ((c = strcmp(strtab_str(t, (size_t)x->cache), strtab_str(t, (size_t)y->cache))))
		return c;
	if ((c = strcmp(strtab_str(t, (size_t)x->comm), strtab_str(t, (size_t)y->comm))))
		return c;
	return strcmp(strtab_str(t, (size_t)x->cgroup), strtab_str(t, (size_t)y->cgroup));
}

/* Locations (one per address) and functions (one per name), in the order met. */
struct locs {
	struct kmt_map by_addr;		/* address -> location id (1, 2, ...) */
	uint64_t *addr;
	size_t n, alloc;
};

static uint64_t loc_id(struct locs *l, uint64_t addr, bool *oom)
{
	uint32_t id = kmt_map_get(&l->by_addr, addr);

	if (id != KMT_MAP_NONE)
		return id;
	if (ALLOC_GROW(l->addr, l->n + 1, l->alloc, 1024)) {
		*oom = true;
		return 0;
	}
	if (kmt_map_put(&l->by_addr, addr, (uint32_t)l->n + 1)) {
		*oom = true;
		return 0;
	}
	l->addr[l->n] = addr;
	return ++l->n;
}

static void value_type(struct pb *b, uint32_t field, struct strtab *t, const char *type, const char *unit)
{
	size_t m = pb_begin(b, field);

	pb_int(b, VALUETYPE_TYPE, strtab_id(t, type));
	pb_int(b, VALUETYPE_UNIT, strtab_id(t, unit));
	pb_end(b, m);
}

static void label(struct pb *b, struct strtab *t, const char *key, int64_t str)
{
	size_t m = pb_begin(b, SAMPLE_LABEL);

	pb_int(b, LABEL_KEY, strtab_id(t, key));
	pb_int(b, LABEL_STR, str);
	pb_end(b, m);
}

/* The profile, gzipped, to @out. */
static int gzip_out(const struct pb *b, FILE *out)
{
	unsigned char buf[65536];
	z_stream z = { 0 };
	int ret;

	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = b->buf;
	z.avail_in = (uInt)b->len;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		ret = deflate(&z, Z_FINISH);
		if (fwrite(buf, 1, sizeof(buf) - z.avail_out, out) != sizeof(buf) - z.avail_out) {
			deflateEnd(&z);
			return -EIO;
		}
	} while (ret == Z_OK);
	deflateEnd(&z);
	return ret == Z_STREAM_END ? 0 : -EIO;
}

static int end(struct export *x)
{
	struct pprof *p = x->priv;
	struct strtab strs = { 0 }, *t = &strs;	/* the profile's string table, as met in writing */
	const struct kmt_summary *sum = kmt_model_summary(x->r.m);
	struct locs l = { 0 };
	struct pb b = { 0 };
	uint64_t *ids = NULL, lo = UINT64_MAX, hi = 0;
	int64_t *fnid = NULL;
	bool *done = NULL;
	char name[256], comment[4600], sampled[300], container[96];
	bool oom = x->failed;
	size_t i, k, nf, m;
	int ret = EXIT_OK;

	if (sum->stack_sample > 1 && weigh_sampled(p, sum->stack_sample))
		oom = true;
	if (p->n > 1)
		qsort_r(p->s, p->n, sizeof(*p->s), cmp_sample, &p->str);
	if (strtab_id(t, "") != 0)
		oom = true;
	for (i = 0; i < NV; i++)
		value_type(&b, PROFILE_SAMPLE_TYPE, t, value_types[i][0], value_types[i][1]);
	if (!(ids = malloc(130 * sizeof(*ids))))
		oom = true;
	for (i = 0; i < p->n && !oom; i++) {
		const struct sample *s = &p->s[i];
		const uint64_t *f = s->stack != UINT32_MAX ? kmt_model_stack(x->r.m, s->stack, &nf) : NULL;

		if (!f)
			nf = 0;
		nf = MIN(nf, (size_t)128);
		ids[0] = loc_id(&l, s->site, &oom);
		for (k = 0; k < nf; k++)
			ids[k + 1] = loc_id(&l, f[k], &oom);
		m = pb_begin(&b, PROFILE_SAMPLE);
		pb_packed(&b, SAMPLE_LOCATION_ID, ids, nf + 1);
		pb_packed(&b, SAMPLE_VALUE, s->v, NV);
		if (s->cache)
			label(&b, t, "cache", strtab_id(t, strtab_str(&p->str, (size_t)s->cache)));
		if (s->comm)
			label(&b, t, "comm", strtab_id(t, strtab_str(&p->str, (size_t)s->comm)));
		if (s->cgroup) {
			const char *cg = strtab_str(&p->str, (size_t)s->cgroup), *ct;

			label(&b, t, "cgroup", strtab_id(t, cg));
			if ((ct = kmt_cgroup_container(cg, container, sizeof(container))))
				label(&b, t, "container", strtab_id(t, ct));
		}
		pb_end(&b, m);
	}
	for (i = 0; i < l.n; i++) {
		lo = MIN(lo, export_addr(x, l.addr[i]));
		hi = MAX(hi, export_addr(x, l.addr[i]));
	}
	m = pb_begin(&b, PROFILE_MAPPING);
	pb_uint(&b, MAPPING_ID, 1);
	pb_uint(&b, MAPPING_MEMORY_START, l.n ? lo : 0);
	pb_uint(&b, MAPPING_MEMORY_LIMIT, l.n ? hi + 1 : 0);
	pb_int(&b, MAPPING_FILENAME, strtab_id(t, "[kernel.kallsyms]"));
	pb_uint(&b, MAPPING_HAS_FUNCTIONS, 1);
	pb_end(&b, m);
	/* A location per address, a function per name (its id: the name's string id). */
	if (!oom && !(fnid = malloc((l.n + 1) * sizeof(*fnid))))
		oom = true;
	for (i = 0; i < l.n && !oom; i++)
		if ((fnid[i] = strtab_id(t, l.addr[i] == PAGE_NOSITE ? "(page allocation, no stack)" :
					 site_function(&x->r, l.addr[i], name, sizeof(name)))) < 0)
			oom = true;
	if (!oom && !(done = calloc(strtab_count(t) + 1, sizeof(*done))))
		oom = true;
	for (i = 0; i < l.n && !oom; i++) {
		size_t ml;

		m = pb_begin(&b, PROFILE_LOCATION);
		pb_uint(&b, LOCATION_ID, i + 1);
		pb_uint(&b, LOCATION_MAPPING_ID, 1);
		pb_uint(&b, LOCATION_ADDRESS, export_addr(x, l.addr[i]));
		ml = pb_begin(&b, LOCATION_LINE);
		pb_uint(&b, LINE_FUNCTION_ID, (uint64_t)fnid[i]);
		pb_end(&b, ml);
		pb_end(&b, m);
	}
	for (i = 0; i < l.n && !oom; i++) {
		if (done[fnid[i]])
			continue;
		done[fnid[i]] = true;
		m = pb_begin(&b, PROFILE_FUNCTION);
		pb_uint(&b, FUNCTION_ID, (uint64_t)fnid[i]);
		pb_int(&b, FUNCTION_NAME, fnid[i]);
		pb_int(&b, FUNCTION_SYSTEM_NAME, fnid[i]);
		pb_int(&b, FUNCTION_FILENAME, strtab_id(t, "[kernel.kallsyms]"));
		pb_end(&b, m);
	}
	pb_int(&b, PROFILE_DURATION_NANOS, (int64_t)(kmt_summary_span(sum)));
	/* Every allocation is counted; only stacks may be sampled: 1 allocation in the period. */
	value_type(&b, PROFILE_PERIOD_TYPE, t, "alloc_objects", "count");
	pb_int(&b, PROFILE_PERIOD, (int64_t)sum->stack_sample);
	if (sum->stack_sample > 1)
		snprintf(sampled, sizeof(sampled), "every slab allocation; stacks sampled, 1 in %" PRIu64
			 " (record --stack-sample): a stack's values count the allocations of its call "
			 "site that have none", sum->stack_sample);
	snprintf(comment, sizeof(comment), "kmemtrace export of %s: %s%s", x->r.path,
		 sum->stack_sample > 1 ? sampled : "every slab and page allocation, not sampled",
		 sum->damaged_gaps ? "; THE FILE IS DAMAGED: counts are lower bounds" :
		 sum->affected_by_loss ? "; EVENTS WERE LOST: counts are lower bounds" : "");
	pb_int(&b, PROFILE_COMMENT, strtab_id(t, comment));
	pb_int(&b, PROFILE_DEFAULT_SAMPLE_TYPE, strtab_id(t, "alloc_space"));
	/* The string table last: every string is in it by now. */
	for (i = 0; i < strtab_count(t); i++)
		pb_str(&b, PROFILE_STRING_TABLE, strtab_str(t, i));
	if (oom || b.oom || t->oom)
		ret = error("out of memory");
	else if (gzip_out(&b, x->out))
		ret = error("cannot write %s: %s", x->path, strerror(errno ? errno : EIO));
	free(ids);
	free(fnid);
	free(done);
	strtab_release(&strs);
	free(l.addr);
	kmt_map_release(&l.by_addr);
	pb_release(&b);
	return ret;
}

static void release(struct export *x)
{
	struct pprof *p = x->priv;

	strtab_release(&p->str);
	free(p->s);
	kmt_map_release(&p->by_key);
}

const struct export_format export_pprof = {
	.name = "pprof", .ext = ".pb.gz",
	.about = "gzipped profile.proto, heap-profile sample types alloc_objects,\n"
		 "alloc_space, inuse_objects, inuse_space, and page_alloc_objects,\n"
		 "page_alloc_space, page_inuse_objects, page_inuse_space of the page\n"
		 "allocator: go tool pprof, Pyroscope, Parca (stacks of --stack\n"
		 "recordings; labels cache, comm, cgroup, container)",
	.binary = true, .stream = true, .priv_size = sizeof(struct pprof),
	.begin = begin, .end = end, .release = release,
};
