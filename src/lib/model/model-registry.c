/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The model's registry (src/lib/model/model-local.h): what the other parts of
 * the model name things by. Call sites by address (a small memo in front
 * of the map: sites repeat), slab caches by name and kmalloc classes by
 * size (a hint per site: a site allocates from one cache), tasks by pid
 * and name (a memo per CPU: the last task seen there), the task and cache
 * filters, the frames of the allocators themselves, and the log2 buckets
 * of lifetimes. Nothing here knows an object.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmemtrace/event.h>
#include "model-local.h"

int kmt_life_bucket(uint64_t ns)
{
	return model_life_bucket(ns);
}

uint64_t kmt_life_bucket_ns(int b)
{
	return b <= 0 ? 0 : 1ULL << (b - 1);
}

/* The meta of a registry's new entry (the one just pushed): now, @key. */
static bool model_meta(struct kmt_model *m, void *meta_, uint64_t key)
{
	VEC(struct reg_meta) *meta = meta_;
	uint32_t i = VEC_PUSH(*meta, m->oom);

	if (i == NONE)
		return false;
	meta->v[i] = (struct reg_meta){ m->pos, key };
	return true;
}

struct kmt_site *model_site_of(struct kmt_model *m, struct kmt_map *map, void *vec_, uint64_t addr)
{
	VEC(struct kmt_site) *vec = vec_;
	uint32_t i = kmt_map_get(map, addr);

	if (i == NONE) {
		i = VEC_PUSH(*vec, m->oom);
		if (i == NONE || kmt_map_put(map, addr, i) ||
		    (vec_ == (void *)&m->reg.sites && !model_meta(m, &m->reg.site_meta, addr))) {
			m->oom = true;
			return NULL;
		}
		vec->v[i].addr = addr;
	}
	return &vec->v[i];
}

/*
 * A cache no event names: "cache(size=N)", and where the recording's slab
 * list has several caches of the sizes, which (as many as fit, "..." for
 * the rest): "cache(size=4096: biovec-max|names_cache)" (kernels before
 * 5.12 name no cache at all).
 */
static void by_size_name(const struct kmt_model *m, const struct kmt_event *ev, char *buf, size_t len)
{
	const struct kmt_slab_cache *c[8];
	size_t n = kmt_slab_caches_of_size(m->o.slab_aliases, ev->bytes_req, ev->bytes_alloc, c, 8), i, o;

	o = (size_t)snprintf(buf, len, "cache(size=%u", (unsigned)ev->bytes_alloc);
	for (i = 0; n >= 2 && i < MIN(n, 8) && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? "|" : ": ", c[i]->name);
	if (o + 1 < len)
		snprintf(buf + o, len - o, ")");
	else if (len > 4)
		memcpy(buf + len - 5, "...)", 5);
}

/* The cache of allocation or free @ev as named @name (@len bytes; 0: by size), made if new. */
static uint32_t cache_entry(struct kmt_model *m, const struct kmt_event *ev, const char *name, size_t len)
{
	uint64_t key;
	uint32_t i;
	bool km = ev->kind == KMT_EV_KMALLOC, alloc = km || ev->kind == KMT_EV_CACHE_ALLOC;

	if (km)
		key = kmt_hash64(ev->bytes_alloc) ^ 0x6b6d616c6c6f63ULL;
	else if (len)
		key = kmt_hash_str(name, len);
	else	/* no name: by its sizes */
		key = kmt_hash64(ev->bytes_alloc) ^ 0x6361636865ULL ^ kmt_hash64(ev->bytes_req << 32);
	i = kmt_map_get(&m->reg.cache_map, key);
	if (i != NONE) {
		/* Named first by a free: its size comes with its first allocation. */
		if (alloc && !m->reg.caches.v[i].object_size && !(km && ev->bytes_alloc > 8192))
			m->reg.caches.v[i].object_size = ev->bytes_alloc;
		return i;
	}
	i = VEC_PUSH(m->reg.caches, m->oom);
	if (i == NONE || kmt_map_put(&m->reg.cache_map, key, i) || !model_meta(m, &m->reg.cache_meta, key)) {
		m->oom = true;
		return NONE;
	}
	{
		struct kmt_cache *c = &m->reg.caches.v[i];
		uint64_t sz = ev->bytes_alloc;

		c->is_kmalloc = km;
		/* Sizes from allocations: a free says nothing of them. */
		c->object_size = alloc ? sz : 0;
		if (km)
			kmt_kmalloc_name(sz, c->name, sizeof(c->name));
		else if (len)
			snprintf(c->name, sizeof(c->name), "%.*s", (int)MIN(len, 47u), name);
		else
			by_size_name(m, ev, c->name, sizeof(c->name));
		c->by_size = !km && !len;
		c->name_len = (uint32_t)strlen(c->name);
		if (km && sz > 8192)
			c->object_size = 0;
		if (!km && len)
			c->merged = kmt_slab_group_of(m->o.slab_aliases, c->name, c->name_len);
		if (m->o.cache && !strcmp(c->name, m->cache_want))
			m->sum.cache_matched = true;
	}
	return i;
}

/*
 * The cache of a kmem_cache_alloc that names none (before 6.18): the one
 * its page was seen to be (a page is one slab's, a slab one cache's),
 * else the one cache of its sizes the kernel had (the recording's slab
 * list), else a cache by size, "cache(size=N)", until a free names it
 * (model-slab.c).
 */
static uint32_t cache_guess(struct kmt_model *m, const struct kmt_event *ev)
{
	uint32_t c = kmt_map_get(&m->reg.slab_pages, ev->ptr >> m->reg.page_shift);
	const struct kmt_slab_cache *sc;
	size_t n;

	if (c != NONE && c < m->reg.caches.n &&
	    (!m->reg.caches.v[c].object_size || m->reg.caches.v[c].object_size == ev->bytes_alloc))
		return cache_entry(m, ev, m->reg.caches.v[c].name, m->reg.caches.v[c].name_len);
	sc = kmt_slab_cache_of_size(m->o.slab_aliases, ev->bytes_req, ev->bytes_alloc, &n);
	if (sc)
		return cache_entry(m, ev, sc->name, strlen(sc->name));
	return cache_entry(m, ev, NULL, 0);
}

/* Slab caches by name; kmalloc objects by size class. */
uint32_t model_cache_of(struct kmt_model *m, const struct kmt_event *ev)
{
	if (ev->kind == KMT_EV_CACHE_ALLOC && !ev->name_len)
		return cache_guess(m, ev);
	return cache_entry(m, ev, ev->name, ev->kind == KMT_EV_KMALLOC ? 0 : ev->name_len);
}

/* The cache named @name (@len bytes) for free @ev, made if new. */
uint32_t model_cache_named(struct kmt_model *m, const struct kmt_event *ev, const char *name, size_t len)
{
	return cache_entry(m, ev, name, len);
}

/* A task's row: its pid, name and cgroups (interned: the same path, the same pointer). */
struct task_key {
	int32_t pid;
	const char *comm;
	size_t len;
	const char *cgroup, *memcg;
	bool kthread;
	char buf[KMT_COMM_LEN];		/* @comm when it is a row's: rows move as they grow */
};

static uint32_t proc_index(struct kmt_model *m, const struct task_key *t)
{
	uint64_t key = kmt_hash64((uint64_t)(uint32_t)t->pid) ^ kmt_hash_str(t->comm, t->len);
	uint32_t i;

	if (t->cgroup)
		key ^= kmt_hash64(kmt_hash_str(t->cgroup, strlen(t->cgroup)) + 1);
	if (t->memcg)
		key ^= kmt_hash64(kmt_hash_str(t->memcg, strlen(t->memcg)) + 2);
	i = kmt_map_get(&m->reg.proc_map, key);
	if (i != NONE)
		return i;
	i = VEC_PUSH(m->reg.procs, m->oom);
	if (i == NONE || kmt_map_put(&m->reg.proc_map, key, i) || !model_meta(m, &m->reg.proc_meta, key)) {
		m->oom = true;
		return NONE;
	}
	m->reg.procs.v[i].pid = t->pid;
	snprintf(m->reg.procs.v[i].comm, sizeof(m->reg.procs.v[i].comm), "%.*s", (int)MIN(t->len, 15u), t->comm);
	m->reg.procs.v[i].cgroup = t->cgroup;
	m->reg.procs.v[i].memcg = t->memcg;
	m->reg.procs.v[i].kthread = t->kthread;
	return i;
}

/* Task @pid as the file knows it before any event of it: its name, and its cgroups at the start. */
static void task_at_start(const struct kmt_model *m, int32_t pid, struct task_key *t)
{
	const struct kmt_cgroup_task *c = m->o.cgroups ? kmt_cgroups_task(m->o.cgroups, pid) : NULL;

	t->pid = pid;
	t->comm = kmt_comm_name(m->o.cmdlines, pid);
	t->len = strlen(t->comm);
	t->cgroup = c ? c->v2 : NULL;
	t->memcg = c ? c->memory : NULL;
	t->kthread = c && c->kthread;
	/* pid 0, the idle task (interrupts on an idle CPU), is in no /proc: the root's, a kernel thread. */
	if (!pid && m->o.cgroups) {
		t->cgroup = kmt_cgroups_has_v2(m->o.cgroups) ? kmt_cgroups_intern(m->o.cgroups, "/", 1) : NULL;
		t->memcg = kmt_cgroups_memory_id(m->o.cgroups) >= 0 ? kmt_cgroups_intern(m->o.cgroups, "/", 1) : NULL;
		t->kthread = true;
	}
}

/* Task @pid as its row says now, or as at the start if it has none yet (none is made). */
static void task_now(struct kmt_model *m, int32_t pid, struct task_key *t)
{
	uint32_t i = kmt_map_get(&m->reg.pid_map, (uint64_t)(uint32_t)pid);
	const struct kmt_proc *p;

	if (i == NONE) {
		task_at_start(m, pid, t);
		return;
	}
	p = &m->reg.procs.v[i];
	*t = (struct task_key){ pid, NULL, 0, p->cgroup, p->memcg, p->kthread, { 0 } };
	t->len = strnlen(p->comm, sizeof(t->buf) - 1);
	memcpy(t->buf, p->comm, t->len);
	t->comm = t->buf;
}

/* @t is the task from now on. */
static void task_set(struct kmt_model *m, const struct task_key *t)
{
	uint32_t i;

	m->reg.comm_gen++;
	m->pos++;	/* a row made here comes after the event before (model-merge.c) */
	i = proc_index(m, t);
	if (i != NONE && kmt_map_put(&m->reg.pid_map, (uint64_t)(uint32_t)t->pid, i))
		m->oom = true;
}

uint32_t model_proc_of(struct kmt_model *m, int32_t pid)
{
	uint32_t i = kmt_map_get(&m->reg.pid_map, (uint64_t)(uint32_t)pid);
	struct task_key t;

	if (i != NONE)
		return i;
	task_at_start(m, pid, &t);
	i = proc_index(m, &t);
	if (i != NONE && kmt_map_put(&m->reg.pid_map, (uint64_t)(uint32_t)pid, i))
		m->oom = true;
	return i;
}

void kmt_model_set_comm(struct kmt_model *m, int32_t pid, const char *comm, size_t len)
{
	struct task_key t;

	task_now(m, pid, &t);
	t.comm = comm;
	t.len = strnlen(comm, len);
	task_set(m, &t);
}

void kmt_model_set_cgroup(struct kmt_model *m, int32_t pid, int root, const char *path, size_t len)
{
	struct task_key t;
	const char *p;

	if (!m->o.cgroups || (root != 0 && root != kmt_cgroups_memory_id(m->o.cgroups)))
		return;
	if (!(p = kmt_cgroups_intern(m->o.cgroups, path, len))) {
		m->oom = true;
		return;
	}
	task_now(m, pid, &t);
	if (root == 0)
		t.cgroup = p;
	else
		t.memcg = p;
	task_set(m, &t);
}

/* A fork: the child, named @comm, starts in its parent's cgroups, a kernel thread if it is one. */
static void task_fork(struct kmt_model *m, int32_t parent, int32_t child, const char *comm, size_t len)
{
	struct task_key t;

	task_now(m, parent, &t);
	t.pid = child;
	t.comm = comm;
	t.len = strnlen(comm, len);
	task_set(m, &t);
}

/* --cache: is cache @c the one chosen (always, without the option)? */
bool model_cache_wanted(const struct kmt_model *m, uint32_t c)
{
	return !m->o.cache || (c != NONE && !strcmp(m->reg.caches.v[c].name, m->cache_want));
}

void model_cgroup_filter(struct kmt_model *m)
{
	const char *w = m->o.cgroup, *c;

	m->cgroup_want_memcg = m->o.cgroups && !kmt_cgroups_has_v2(m->o.cgroups);
	if (!strncmp(w, "0::", 3)) {
		m->cgroup_want_memcg = false;
		w += 3;
	} else if (*w != '/' && (c = strstr(w, "memory:"))) {
		m->cgroup_want_memcg = true;
		w = c + 7;
	}
	m->cgroup_want = w;
}

/* The task filter's one rule: task @t (its comm NULL: no name). */
static bool task_wanted(struct kmt_model *m, const struct task_key *t)
{
	const char *cg;

	if (m->o.pid && t->pid != m->o.pid)
		return false;
	if (m->o.comm && (!t->comm || strcmp(t->comm, m->o.comm)))
		return false;
	cg = m->cgroup_want_memcg ? t->memcg : t->cgroup;
	if (m->o.cgroup && (!cg || !kmt_cgroup_under(cg, m->cgroup_want)))
		return false;
	m->sum.filter_matched = true;
	return true;
}

bool model_task_wanted(struct kmt_model *m, int32_t pid, uint32_t proc)
{
	struct task_key t = { .pid = pid };

	if (proc != NONE) {
		const struct kmt_proc *p = &m->reg.procs.v[proc];

		t = (struct task_key){ pid, p->comm, 0, p->cgroup, p->memcg, p->kthread };
	}
	return task_wanted(m, &t);
}

/*
 * model_task_wanted() for a task named by its pid alone, making no entry
 * for it (an entry would count among its name's tasks): its name is the
 * one its entry has, else the file's (as model_proc_of() would make it).
 */
bool model_pid_wanted(struct kmt_model *m, int32_t pid)
{
	uint32_t i = kmt_map_get(&m->reg.pid_map, (uint64_t)(uint32_t)pid);
	char comm[sizeof(m->reg.procs.v[0].comm)];
	struct task_key t;

	if (i != NONE)
		return model_task_wanted(m, pid, i);
	task_at_start(m, pid, &t);
	snprintf(comm, sizeof(comm), "%.15s", t.comm);
	t.comm = comm;
	return task_wanted(m, &t);
}

/* Call sites repeat: a small direct-mapped memo in front of the map. */
struct kmt_site *model_alloc_site(struct kmt_model *m, uint64_t addr)
{
	size_t h = (size_t)((addr ^ (addr >> 8)) & 255);
	struct kmt_site *s;

	if (m->reg.site_memo[h].addr == addr && addr)
		return &m->reg.sites.v[m->reg.site_memo[h].idx];
	s = model_site_of(m, &m->reg.site_map, &m->reg.sites, addr);
	if (s) {
		m->reg.site_memo[h].addr = addr;
		m->reg.site_memo[h].idx = (uint32_t)(s - m->reg.sites.v);
	}
	return s;
}

/* The cache of an allocation whose site's hint does not fit it (or has none yet). */
uint32_t model_cache_hinted_slow(struct kmt_model *m, uint32_t site, const struct kmt_event *ev)
{
	uint32_t c;

	if (site >= m->reg.cache_hint_n) {
		size_t n = MAX(m->reg.sites.alloc, (size_t)site + 1);
		uint32_t *nh = realloc(m->reg.cache_hint, n * sizeof(*nh));

		if (!nh)
			return model_cache_of(m, ev);
		memset(nh + m->reg.cache_hint_n, 0xff, (n - m->reg.cache_hint_n) * sizeof(*nh));
		m->reg.cache_hint = nh;
		m->reg.cache_hint_n = n;
	}
	/* The hint missed (model_cache_hinted() looked): by name or size, and kept. */
	c = model_cache_of(m, ev);
	m->reg.cache_hint[site] = c;
	return c;
}

/* Frames of the allocator itself, skipped to find who asked for pages. */
bool model_allocator_frame(const char *fn)
{
	static const char *const prefixes[] = {
		"trace_", "__traceiter_", "alloc_pages", "__alloc_pages", "__alloc_frozen",
		"alloc_frozen", "get_page_from_freelist", "__folio_alloc", "folio_alloc",
		"__get_free_pages", "get_free_pages", "get_zeroed_page", "vma_alloc_folio", "__kmalloc_large", "___kmalloc_large",
		"__kmalloc", "kmalloc_", "__kvmalloc", "kvmalloc", "rmqueue", "alloc_slab_page",
		"allocate_slab", "new_slab", "___slab_alloc", "__slab_alloc", "__do_kmalloc",
		"kmem_cache_alloc", "vm_area_alloc_pages", "__vmalloc", "vmalloc", "__alloc_",
		"alloc_vmap_area", "__get_vm_area", "get_vm_area", "__vmap", "vmap",
		"stack_trace_save", "__ftrace_trace_stack", "ftrace_", "event_triggers_call",
		"trace_event_", "pcpu_",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(fn, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

void kmt_model_name_event(struct kmt_model *m, const struct kmt_event *ev)
{
	char buf[KMT_COMM_LEN];
	size_t len;
	const char *name;

	if (ev->kind == KMT_EV_CGROUP) {
		kmt_model_set_cgroup(m, ev->pid2, ev->node, ev->str2, ev->str2_len);
		return;
	}
	name = kmt_event_task_name(ev, buf, &len);
	if (name && ev->kind == KMT_EV_FORK && m->o.cgroups)
		task_fork(m, ev->pid, ev->pid2, name, len);
	else if (name)
		kmt_model_set_comm(m, ev->pid2, name, len);
}

/* ---- merging a sharded model's registries (model-merge.c) ---- */

static int cmp_ent(const void *a, const void *b)
{
	const struct shard_ent *x = a, *y = b;

	if (x->born != y->born)
		return (x->born > y->born) - (x->born < y->born);
	if (x->shard != y->shard)
		return (x->shard > y->shard) - (x->shard < y->shard);
	return (x->idx > y->idx) - (x->idx < y->idx);
}

struct shard_ent *model_shard_order(struct kmt_model **sh, unsigned int n, const struct shard_list *l, size_t *total)
{
	struct shard_ent *e;
	size_t t = 0, i;
	unsigned int k;

	for (k = 0; k < n; k++)
		t += l->count(sh[k]);
	e = malloc((t + 1) * sizeof(*e));
	if (!e)
		return NULL;
	t = 0;
	for (k = 0; k < n; k++)
		for (i = 0; i < l->count(sh[k]); i++)
			e[t++] = (struct shard_ent){ l->born(sh[k], i), k, (uint32_t)i };
	qsort(e, t, sizeof(*e), cmp_ent);
	*total = t;
	return e;
}

static size_t sites_n(const struct kmt_model *m)
{
	return m->reg.sites.n;
}

static uint64_t sites_born(const struct kmt_model *m, size_t i)
{
	return m->reg.site_meta.v[i].born;
}

static size_t caches_n(const struct kmt_model *m)
{
	return m->reg.caches.n;
}

static uint64_t caches_born(const struct kmt_model *m, size_t i)
{
	return m->reg.cache_meta.v[i].born;
}

static size_t procs_n(const struct kmt_model *m)
{
	return m->reg.procs.n;
}

static uint64_t procs_born(const struct kmt_model *m, size_t i)
{
	return m->reg.proc_meta.v[i].born;
}

static const struct shard_list site_list = { sites_n, sites_born }, cache_list = { caches_n, caches_born },
			       proc_list = { procs_n, procs_born };

static void site_add(void *d_, const void *s_)
{
	struct kmt_site *d = d_;
	const struct kmt_site *s = s_;
	int b;

	if (s->frees && (!d->frees || s->life_min < d->life_min))
		d->life_min = s->life_min;
	d->life_max = MAX(d->life_max, s->life_max);
	d->allocs += s->allocs;
	d->frees += s->frees;
	d->free_calls += s->free_calls;
	d->bytes_req += s->bytes_req;
	d->bytes_alloc += s->bytes_alloc;
	d->bytes_freed += s->bytes_freed;
	d->cross_cpu += s->cross_cpu;
	d->live_objects += s->live_objects;
	d->live_bytes += s->live_bytes;
	d->uncertain += s->uncertain;
	d->unseen_frees += s->unseen_frees;
	d->failures += s->failures;
	d->now_objects += s->now_objects;
	d->now_bytes += s->now_bytes;
	for (b = 0; b < KMT_LIFE_BUCKETS; b++)
		d->life[b] += s->life[b];
	d->kinds |= s->kinds;
	d->order_mask |= s->order_mask;
}

static void cache_add(void *d_, const void *s_)
{
	struct kmt_cache *d = d_;
	const struct kmt_cache *s = s_;
	if (!d->object_size)
		d->object_size = s->object_size;
	d->allocs += s->allocs;
	d->frees += s->frees;
	d->bytes_req += s->bytes_req;
	d->bytes_alloc += s->bytes_alloc;
	d->live_objects += s->live_objects;
	d->live_bytes += s->live_bytes;
	d->untraced += s->untraced;
	d->unseen_frees += s->unseen_frees;
	d->now_objects += s->now_objects;
	d->now_bytes += s->now_bytes;
}

static void proc_add(void *d_, const void *s_)
{
	struct kmt_proc *d = d_;
	const struct kmt_proc *s = s_;
	d->allocs += s->allocs;
	d->frees += s->frees;
	d->bytes_req += s->bytes_req;
	d->bytes_alloc += s->bytes_alloc;
	d->bytes_freed += s->bytes_freed;
	d->live_objects += s->live_objects;
	d->live_bytes += s->live_bytes;
	d->page_allocs += s->page_allocs;
	d->pages += s->pages;
	d->now_objects += s->now_objects;
	d->now_bytes += s->now_bytes;
	d->irq_bytes += s->irq_bytes;
	d->acct_bytes += s->acct_bytes;
	d->unknown_bytes += s->unknown_bytes;
	d->acct_pages += s->acct_pages;
}

/* A registry's vector, of any type (VEC()'s layout). */
struct any_vec {
	char *v;
	size_t n, alloc;
};

/* Where a registry lives in a model, how big its entries are, and how two are added. */
struct reg_desc {
	const struct shard_list *list;
	size_t vec, map, meta;		/* offsets in struct kmt_model */
	size_t size;
	void (*add)(void *d, const void *s);
};

#define AT(m, off, type) ((type *)((char *)(m) + (off)))

/*
 * One registry of every shard into a new vector, map and meta, by birth:
 * the first shard to make an entry gives it its place, the others add to
 * it. @remap[k][i]: where shard k's entry i went.
 */
static int merge_reg(struct kmt_model **sh, unsigned int n, const struct reg_desc *r, uint32_t **remap)
{
	struct any_vec nv = { 0 };
	VEC(struct reg_meta) nm = { 0 };
	struct kmt_map map;
	struct shard_ent *e;
	size_t total, i;
	bool oom = false;

	e = model_shard_order(sh, n, r->list, &total);
	if (!e || kmt_map_init(&map, 1 << 8)) {
		free(e);
		return -ENOMEM;
	}
	nv.v = malloc((total + 1) * r->size);
	nm.v = malloc((total + 1) * sizeof(*nm.v));
	for (i = 0; nv.v && nm.v && i < total; i++) {
		struct kmt_model *s = sh[e[i].shard];
		const struct reg_meta *mt = (const struct reg_meta *)AT(s, r->meta, struct any_vec)->v + e[i].idx;
		const char *src = AT(s, r->vec, struct any_vec)->v + e[i].idx * r->size;
		uint32_t j = kmt_map_get(&map, mt->key);

		if (j == NONE) {
			j = (uint32_t)nv.n++;
			nm.v[nm.n++] = *mt;
			memcpy(nv.v + j * r->size, src, r->size);
			if (kmt_map_put(&map, mt->key, j)) {
				oom = true;
				break;
			}
		} else {
			r->add(nv.v + j * r->size, src);
		}
		remap[e[i].shard][e[i].idx] = j;
	}
	free(e);
	if (oom || !nv.v || !nm.v) {
		free(nv.v);
		free(nm.v);
		kmt_map_release(&map);
		return -ENOMEM;
	}
	nv.alloc = nm.alloc = total + 1;
	free(AT(sh[0], r->vec, struct any_vec)->v);
	free(AT(sh[0], r->meta, struct any_vec)->v);
	kmt_map_release(AT(sh[0], r->map, struct kmt_map));
	*AT(sh[0], r->vec, struct any_vec) = nv;
	memcpy(AT(sh[0], r->meta, struct any_vec), &nm, sizeof(nm));
	*AT(sh[0], r->map, struct kmt_map) = map;
	return 0;
}


static const struct reg_desc regs[] = {
	{ &site_list, offsetof(struct kmt_model, reg.sites), offsetof(struct kmt_model, reg.site_map),
	  offsetof(struct kmt_model, reg.site_meta), sizeof(struct kmt_site), site_add },
	{ &cache_list, offsetof(struct kmt_model, reg.caches), offsetof(struct kmt_model, reg.cache_map),
	  offsetof(struct kmt_model, reg.cache_meta), sizeof(struct kmt_cache), cache_add },
	{ &proc_list, offsetof(struct kmt_model, reg.procs), offsetof(struct kmt_model, reg.proc_map),
	  offsetof(struct kmt_model, reg.proc_meta), sizeof(struct kmt_proc), proc_add },
};

int model_registry_merge(struct kmt_model **sh, unsigned int n, uint32_t **site_map, uint32_t **cache_map,
			 uint32_t **proc_map)
{
	struct kmt_model *m = sh[0];

	if (merge_reg(sh, n, &regs[0], site_map) || merge_reg(sh, n, &regs[1], cache_map) ||
	    merge_reg(sh, n, &regs[2], proc_map)) {
		m->oom = true;
		return -ENOMEM;
	}
	/* What pointed at the old indexes goes: the memos, the hints, tasks by pid. */
	memset(m->reg.site_memo, 0, sizeof(m->reg.site_memo));
	free(m->reg.cache_hint);
	m->reg.cache_hint = NULL;
	m->reg.cache_hint_n = 0;
	kmt_map_release(&m->reg.pid_map);
	if (kmt_map_init(&m->reg.pid_map, 1 << 10)) {
		m->oom = true;
		return -ENOMEM;
	}
	m->reg.comm_gen++;	/* and with it each CPU's memo of its last task */
	return 0;
}

int model_registry_sum(struct kmt_model *const *sh, unsigned int n, enum model_reg which, struct model_reg_sum *s)
{
	const struct reg_desc *r = &regs[which];
	unsigned int k;
	size_t i, need = s->n;

	if (!s->map.cap && kmt_map_init(&s->map, 1 << 8))
		return -ENOMEM;
	for (k = 0; k < n; k++)
		need += r->list->count(sh[k]);
	if (need > s->alloc) {
		size_t cap = MAX(need, s->alloc * 2);
		char *v = realloc(s->v, cap * r->size);
		uint32_t *round;

		if (!v)
			return -ENOMEM;
		s->v = v;
		if (!(round = realloc(s->round, cap * sizeof(*round))))
			return -ENOMEM;
		s->round = round;
		s->alloc = cap;
	}
	s->rounds++;
	for (k = 0; k < n; k++) {
		const struct reg_meta *mt = (const struct reg_meta *)AT(sh[k], r->meta, struct any_vec)->v;
		const char *src = AT(sh[k], r->vec, struct any_vec)->v;
		size_t cnt = r->list->count(sh[k]);

		for (i = 0; i < cnt; i++) {
			uint32_t j = kmt_map_get(&s->map, mt[i].key);

			if (j == NONE) {
				j = (uint32_t)s->n++;
				if (kmt_map_put(&s->map, mt[i].key, j))
					return -ENOMEM;
				s->round[j] = 0;
			}
			if (s->round[j] != s->rounds) {
				memcpy(s->v + j * r->size, src + i * r->size, r->size);
				s->round[j] = s->rounds;
			} else {
				r->add(s->v + j * r->size, src + i * r->size);
			}
		}
	}
	return 0;
}

void model_reg_sum_release(struct model_reg_sum *s)
{
	kmt_map_release(&s->map);
	free(s->v);
	free(s->round);
	memset(s, 0, sizeof(*s));
}
