/*
 * The allocation model (include/kmemtrace/model.h): one pass over the
 * time-ordered events. Each allocation is entered in the table of its
 * kind; each free finds it there, or counts as the free of an object
 * allocated before the trace. A per-model loss sequence number, stamped on
 * every object when allocated and freed, tells whether a loss happened
 * since: if so, a missing free (leak) or a contradiction (misuse) may be
 * the loss and is counted as uncertain instead.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmemtrace/comm.h>
#include <kmemtrace/symbols.h>
#include "model-local.h"

static const char *const misuse_names[KMT_MISUSE_NR] = {
	[KMT_MISUSE_DOUBLE_FREE] = "double_free",
	[KMT_MISUSE_ALLOC_LIVE] = "alloc_over_live",
	[KMT_MISUSE_CACHE_FREE_KMALLOC] = "cache_free_of_kmalloc",
	[KMT_MISUSE_CACHE_MISMATCH] = "cache_mismatch",
	[KMT_MISUSE_KFREE_CACHE] = "kfree_of_cache_object",
	[KMT_MISUSE_UNTRACED_ALLOC] = "untraced_alloc",
};

const char *kmt_misuse_name(enum kmt_misuse_kind k)
{
	return k < KMT_MISUSE_NR ? misuse_names[k] : "?";
}

enum kmt_severity kmt_misuse_severity(enum kmt_misuse_kind k)
{
	switch (k) {
	case KMT_MISUSE_KFREE_CACHE:
		return KMT_SEV_INFO;
	case KMT_MISUSE_ALLOC_LIVE:
	case KMT_MISUSE_UNTRACED_ALLOC:
		return KMT_SEV_WARNING;
	default:
		return KMT_SEV_ERROR;
	}
}

const char *kmt_severity_name(enum kmt_severity s)
{
	return s == KMT_SEV_ERROR ? "error" : s == KMT_SEV_WARNING ? "warning" : "info";
}

/* Losses since @then (a 16-bit stamp): certain only if none at all. */
static bool lost_since(const struct kmt_model *m, uint16_t then)
{
	return m->loss_seq >= 0xffff || then != (uint16_t)m->loss_seq;
}

int kmt_life_bucket(uint64_t ns)
{
	int b = ns ? 64 - __builtin_clzll(ns) : 0;

	return b < KMT_LIFE_BUCKETS ? b : KMT_LIFE_BUCKETS - 1;
}

uint64_t kmt_life_bucket_ns(int b)
{
	return b <= 0 ? 0 : 1ULL << (b - 1);
}

struct kmt_model *kmt_model_new(const struct kmt_model_opts *o)
{
	struct kmt_model *m = calloc(1, sizeof(*m));
	int i;

	if (!m)
		return NULL;
	if (o)
		m->o = *o;
	m->filtering = m->o.pid || m->o.comm || m->o.cache;
	m->sum.filtered = m->o.pid || m->o.comm;
	m->sum.cache_filtered = m->o.cache;
	if (m->o.cache)
		kmt_slab_event_name(m->o.slab_aliases, m->o.cache, m->cache_want, sizeof(m->cache_want));
	m->lost_by_cpu = calloc(MAX_CPUS, sizeof(*m->lost_by_cpu));
	m->events_by_cpu = calloc(MAX_CPUS, sizeof(*m->events_by_cpu));
	m->cpu = calloc(MAX_CPUS, sizeof(*m->cpu));
	if (!m->lost_by_cpu || !m->events_by_cpu || !m->cpu ||
	    otab_init(&m->slab, 1 << 14) || otab_init(&m->pages, 1 << 12) ||
	    otab_init(&m->pcpu, 1 << 10) || imap_init(&m->site_map, 1 << 10) ||
	    imap_init(&m->page_site_map, 1 << 8) || imap_init(&m->cache_map, 1 << 8) ||
	    imap_init(&m->proc_map, 1 << 10) || imap_init(&m->pid_map, 1 << 10) ||
	    imap_init(&m->misuse_map, 1 << 6) || imap_init(&m->gfp_map, 1 << 6) ||
	    model_vmap_init(m) || model_stack_init(m) || model_detail_init(m)) {
		kmt_model_free(m);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < MAX_CPUS; i++)
		m->cpu[i].memo_proc = NONE;
	m->sum.partial_allocs = m->o.partial_allocs;
	m->sum.partial_frees = m->o.partial_frees;
	m->sum.stack_sample = m->o.stack_sample > 1 ? m->o.stack_sample : 1;
	m->sum.stack_slices = m->o.stack_slices;
	m->sum.lost_by_cpu = m->lost_by_cpu;
	m->sum.events_by_cpu = m->events_by_cpu;
	return m;
}

void kmt_model_free(struct kmt_model *m)
{
	if (!m)
		return;
	otab_release(&m->slab);
	otab_release(&m->pages);
	otab_release(&m->pcpu);
	model_vmap_release(m);
	model_stack_release(m);
	model_detail_release(m);
	imap_release(&m->site_map);
	imap_release(&m->page_site_map);
	imap_release(&m->cache_map);
	imap_release(&m->proc_map);
	imap_release(&m->pid_map);
	imap_release(&m->misuse_map);
	imap_release(&m->gfp_map);
	free(m->sites.v);
	free(m->page_sites.v);
	free(m->caches.v);
	free(m->procs.v);
	free(m->misuse.v);
	free(m->outstanding.v);
	free(m->untraced.v);
	free(m->gfp.v);
	free(m->lost_by_cpu);
	free(m->events_by_cpu);
	free(m->cpu);
	free(m->cache_hint);
	model_access_release(m);
	free(m);
}

struct kmt_site *model_site_of(struct kmt_model *m, struct imap *map, void *vec_, uint64_t addr)
{
	VEC(struct kmt_site) *vec = vec_;
	uint32_t i = imap_get(map, addr);

	if (i == NONE) {
		i = VEC_PUSH(*vec, m->oom);
		if (i == NONE || imap_put(map, addr, i)) {
			m->oom = true;
			return NULL;
		}
		vec->v[i].addr = addr;
	}
	return &vec->v[i];
}

/* Slab caches by name; kmalloc objects by size class. */
static uint32_t cache_of(struct kmt_model *m, const struct kmt_event *ev)
{
	uint64_t key;
	uint32_t i;
	bool km = ev->kind == KMT_EV_KMALLOC, alloc = km || ev->kind == KMT_EV_CACHE_ALLOC;

	if (km)
		key = hash64(ev->bytes_alloc) ^ 0x6b6d616c6c6f63ULL;
	else if (ev->name_len)
		key = hash_str(ev->name, ev->name_len);
	else
		key = hash64(ev->bytes_alloc) ^ 0x6361636865ULL;	/* no name: by size */
	i = imap_get(&m->cache_map, key);
	if (i != NONE) {
		/* Named first by a free: its size comes with its first allocation. */
		if (alloc && !m->caches.v[i].object_size && !(km && ev->bytes_alloc > 8192))
			m->caches.v[i].object_size = ev->bytes_alloc;
		return i;
	}
	i = VEC_PUSH(m->caches, m->oom);
	if (i == NONE || imap_put(&m->cache_map, key, i)) {
		m->oom = true;
		return NONE;
	}
	{
		struct kmt_cache *c = &m->caches.v[i];
		uint64_t sz = ev->bytes_alloc;

		c->is_kmalloc = km;
		/* Sizes from allocations: a free says nothing of them. */
		c->object_size = alloc ? sz : 0;
		if (km)
			kmt_kmalloc_name(sz, c->name, sizeof(c->name));
		else if (ev->name_len)
			snprintf(c->name, sizeof(c->name), "%.*s", (int)MIN(ev->name_len, 47u), ev->name);
		else
			snprintf(c->name, sizeof(c->name), "cache(size=%u)", (unsigned)sz);
		c->name_len = (uint32_t)strlen(c->name);
		if (km && sz > 8192)
			c->object_size = 0;
		if (!km && ev->name_len)
			c->merged = kmt_slab_group_of(m->o.slab_aliases, c->name, c->name_len);
		if (m->o.cache && !strcmp(c->name, m->cache_want))
			m->sum.cache_matched = true;
	}
	return i;
}

static uint32_t proc_index(struct kmt_model *m, int32_t pid, const char *comm, size_t len)
{
	uint64_t key = hash64((uint64_t)(uint32_t)pid) ^ hash_str(comm, len);
	uint32_t i = imap_get(&m->proc_map, key);

	if (i != NONE)
		return i;
	i = VEC_PUSH(m->procs, m->oom);
	if (i == NONE || imap_put(&m->proc_map, key, i)) {
		m->oom = true;
		return NONE;
	}
	m->procs.v[i].pid = pid;
	snprintf(m->procs.v[i].comm, sizeof(m->procs.v[i].comm), "%.*s", (int)MIN(len, 15u), comm);
	return i;
}

uint32_t model_proc_of(struct kmt_model *m, int32_t pid)
{
	uint32_t i = imap_get(&m->pid_map, (uint64_t)(uint32_t)pid);
	const char *name;

	if (i != NONE)
		return i;
	name = kmt_comm_name(m->o.cmdlines, pid);
	i = proc_index(m, pid, name, strlen(name));
	if (i != NONE && imap_put(&m->pid_map, (uint64_t)(uint32_t)pid, i))
		m->oom = true;
	return i;
}

/* model_proc_of() through the CPU's memo of the last task it saw. */
static uint32_t proc_of_cpu(struct kmt_model *m, struct cpu_state *cs, int32_t pid)
{
	if (cs->memo_pid == pid && cs->memo_gen == m->comm_gen && cs->memo_proc != NONE)
		return cs->memo_proc;
	cs->memo_pid = pid;
	cs->memo_gen = m->comm_gen;
	cs->memo_proc = model_proc_of(m, pid);
	return cs->memo_proc;
}

void kmt_model_set_comm(struct kmt_model *m, int32_t pid, const char *comm, size_t len)
{
	uint32_t i;

	m->comm_gen++;
	len = strnlen(comm, len);
	i = proc_index(m, pid, comm, len);
	if (i != NONE && imap_put(&m->pid_map, (uint64_t)(uint32_t)pid, i))
		m->oom = true;
}

/* --cache: is cache @c the one chosen (always, without the option)? */
static bool cache_wanted(const struct kmt_model *m, uint32_t c)
{
	return !m->o.cache || (c != NONE && !strcmp(m->caches.v[c].name, m->cache_want));
}

bool model_task_wanted(struct kmt_model *m, int32_t pid, uint32_t proc)
{
	if (m->o.pid && pid != m->o.pid)
		return false;
	if (m->o.comm && (proc == NONE || strcmp(m->procs.v[proc].comm, m->o.comm)))
		return false;
	m->sum.filter_matched = true;
	return true;
}

static void note_misuse(struct kmt_model *m, enum kmt_misuse_kind kind, const struct kmt_event *ev,
			uint64_t alloc_site, uint32_t cache, const char *detail)
{
	/* One row per kind, call site and cache: the first occurrence keeps its details. */
	uint64_t key = hash64(ev->call_site ^ ((uint64_t)kind << 56)) ^ hash64((uint64_t)cache << 20);
	uint32_t i = imap_get(&m->misuse_map, key);
	struct kmt_misuse *mu;

	if (i == NONE) {
		i = VEC_PUSH(m->misuse, m->oom);
		if (i == NONE || imap_put(&m->misuse_map, key, i)) {
			m->oom = true;
			return;
		}
		mu = &m->misuse.v[i];
		mu->kind = kind;
		mu->cache = cache;
		mu->site = ev->call_site;
		mu->alloc_site = alloc_site;
		mu->first_ts = ev->ts;
		mu->first_pid = ev->pid;
		mu->first_ptr = ev->ptr;
		if (detail)
			snprintf(mu->detail, sizeof(mu->detail), "%s", detail);
	}
	m->misuse.v[i].count++;
}

/*
 * The kernel traces a large kmalloc twice, with the same pointer: from
 * the page-backed path and from the caller, one event after the other on
 * the same CPU. The second is the real call site.
 */
static bool kmalloc_large_twin(struct kmt_model *m, const struct obj *o, const struct kmt_event *ev)
{
	const struct cpu_state *cs = &m->cpu[ev->cpu];

	return o->kind == KMT_EV_KMALLOC && ev->kind == KMT_EV_KMALLOC && o->cpu == ev->cpu &&
	       cs->last_slab_ptr == ev->ptr && cs->seq == cs->last_slab_seq + 1 &&
	       o->req == sat32(ev->bytes_req) && o->alloc == sat32(ev->bytes_alloc);
}

/*
 * The same counters live in a site, a cache, a process and the summary.
 * now_*: allocated and not gone, so far (what a live view shows).
 */
#define COUNT(x, n, req, al) ((x)->allocs += (n), (x)->now_objects += (n), \
			      (x)->bytes_req += (req), (x)->bytes_alloc += (al), (x)->now_bytes += (al))
#define GONE(x, o) ((x)->now_objects--, (x)->now_bytes -= (o)->alloc)

/* @o was freed without a trace (its address came again): gone, now. */
static void gone_unseen(struct kmt_model *m, const struct obj *o)
{
	struct kmt_site *s = &m->sites.v[o->site];

	s->unseen_frees++;
	m->sum.unseen_frees++;
	GONE(s, o);
	if (o->cache != NONE) {
		m->caches.v[o->cache].unseen_frees++;
		GONE(&m->caches.v[o->cache], o);
	}
	if (o->proc != NONE)
		GONE(&m->procs.v[o->proc], o);
	GONE(&m->sum, o);
}

static void count_alloc(struct kmt_model *m, struct obj *o, int sign)
{
	uint64_t n = (uint64_t)(int64_t)sign;
	uint64_t req = (uint64_t)(sign * (int64_t)o->req), al = (uint64_t)(sign * (int64_t)o->alloc);

	COUNT(&m->sites.v[o->site], n, req, al);
	if (o->cache != NONE)
		COUNT(&m->caches.v[o->cache], n, req, al);
	if (o->proc != NONE)
		COUNT(&m->procs.v[o->proc], n, req, al);
	COUNT(&m->sum, n, req, al);
}

/* Call sites repeat: a small direct-mapped memo in front of the map. */
static struct kmt_site *alloc_site(struct kmt_model *m, uint64_t addr)
{
	size_t h = (size_t)((addr ^ (addr >> 8)) & 255);
	struct kmt_site *s;

	if (m->site_memo[h].addr == addr && addr)
		return &m->sites.v[m->site_memo[h].idx];
	s = model_site_of(m, &m->site_map, &m->sites, addr);
	if (s) {
		m->site_memo[h].addr = addr;
		m->site_memo[h].idx = (uint32_t)(s - m->sites.v);
	}
	return s;
}

/* The cache of an allocation, through the hint its site keeps. */
static uint32_t cache_hinted(struct kmt_model *m, uint32_t site, const struct kmt_event *ev)
{
	uint32_t c;

	if (site >= m->cache_hint_n) {
		size_t n = MAX(m->sites.alloc, (size_t)site + 1);
		uint32_t *nh = realloc(m->cache_hint, n * sizeof(*nh));

		if (!nh)
			return cache_of(m, ev);
		memset(nh + m->cache_hint_n, 0xff, (n - m->cache_hint_n) * sizeof(*nh));
		m->cache_hint = nh;
		m->cache_hint_n = n;
	}
	c = m->cache_hint[site];
	if (c != NONE) {
		const struct kmt_cache *k = &m->caches.v[c];

		if (ev->kind == KMT_EV_KMALLOC ? k->is_kmalloc && k->object_size == ev->bytes_alloc
		    : !k->is_kmalloc && k->name_len == ev->name_len &&
		      !memcmp(k->name, ev->name, ev->name_len))
			return c;
	}
	c = cache_of(m, ev);
	m->cache_hint[site] = c;
	return c;
}

static void slab_alloc(struct kmt_model *m, const struct kmt_event *ev)
{
	struct cpu_state *cs = &m->cpu[ev->cpu];
	uint32_t proc = proc_of_cpu(m, cs, ev->pid);
	struct kmt_site *site;
	struct islot *sl;
	struct obj *o;

	if (m->filtering && (!cache_wanted(m, cache_of(m, ev)) || !model_task_wanted(m, ev->pid, proc)))
		return;
	m->scope = true;
	site = alloc_site(m, ev->call_site);
	if (!site)
		return;
	site->kinds |= 1u << ev->kind;
	if (!ev->ptr) {
		site->failures++;
		m->sum.failures++;
		return;
	}
	sl = otab_get(&m->slab, ev->ptr);
	if (!sl) {
		m->oom = true;
		return;
	}
	if (slot_live(sl)) {
		o = slot_obj(&m->slab, sl);
		if (kmalloc_large_twin(m, o, ev)) {
			model_stack_unalloc(m, o);
			model_detail_unalloc(m, o);
			count_alloc(m, o, -1);
			m->sum.kmalloc_large_merged++;
		} else {
			model_emit(m, o, KMT_FATE_UNSEEN_FREE, NULL);
			model_detail_gone(m, o, ev->ts, false);
			gone_unseen(m, o);
			if (o->loss_seq != m->loss_seq)
				m->sum.uncertain_misuse++;	/* its free may be in a gap */
			else if (!m->o.partial_frees)	/* else freed where the recording did not look */
				note_misuse(m, KMT_MISUSE_ALLOC_LIVE, ev, m->sites.v[o->site].addr,
					    o->cache, NULL);
		}
		o->hit = 0;
	} else {
		o = otab_obj_new(&m->slab, sl);
		if (!o) {
			m->oom = true;
			return;
		}
	}
	o->ts = ev->ts;
	o->site = (uint32_t)(site - m->sites.v);
	o->cache = cache_hinted(m, o->site, ev);
	o->req = sat32(ev->bytes_req);
	o->alloc = sat32(ev->bytes_alloc);
	o->proc = proc;
	o->loss_seq = m->loss_seq;
	o->cpu = (uint16_t)ev->cpu;
	o->kind = (uint8_t)ev->kind;
	o->stack = 0;
	o->gfp = (uint32_t)ev->gfp;
	cs->last_slab_seq = cs->seq;
	cs->last_slab_ptr = ev->ptr;
	cs->slab_wait[cs->slab_wait_next++ & (SLAB_WAIT - 1)] = (struct slab_wait){ cs->seq, ev->pid, ev->ptr };
	cs->nslab_wait += cs->nslab_wait < SLAB_WAIT;
	count_alloc(m, o, 1);
	model_detail_alloc(m, o);
	if (ev->name_len && m->o.syms)
		model_vmap_area_alloc(m, ev);
}

/* The misuse in freeing @o by @ev (kind or cache mismatch), or KMT_MISUSE_NR. */
static enum kmt_misuse_kind free_misuse(const struct kmt_model *m, const struct obj *o,
					const struct kmt_event *ev)
{
	const struct kmt_cache *c = o->cache != NONE ? &m->caches.v[o->cache] : NULL;

	if (ev->kind == KMT_EV_CACHE_FREE && o->kind == KMT_EV_KMALLOC)
		return KMT_MISUSE_CACHE_FREE_KMALLOC;
	if (ev->kind == KMT_EV_CACHE_FREE && ev->name_len && c && !c->is_kmalloc &&
	    (c->name_len != ev->name_len || memcmp(c->name, ev->name, ev->name_len)))
		return KMT_MISUSE_CACHE_MISMATCH;
	if (ev->kind == KMT_EV_KFREE && o->kind == KMT_EV_CACHE_ALLOC)
		return KMT_MISUSE_KFREE_CACHE;
	return KMT_MISUSE_NR;
}

static void slab_free(struct kmt_model *m, const struct kmt_event *ev)
{
	enum kmt_misuse_kind mk;
	struct kmt_site *fsite, *asite;
	struct islot *sl;
	struct obj *o;
	uint64_t life;

	if (!ev->ptr) {
		if (m->filtering && (m->o.cache || !model_task_wanted(m, ev->pid, model_proc_of(m, ev->pid))))
			return;
		m->scope = true;
		m->sum.null_frees++;
		return;
	}
	sl = otab_find(&m->slab, ev->ptr);
	if (!sl || !slot_live(sl)) {
		/*
		 * Not ours to judge when filtering by task: another task's
		 * allocations are not seen, so its frees say nothing.
		 */
		if (m->filtering && (!model_task_wanted(m, ev->pid, model_proc_of(m, ev->pid)) ||
				     (m->o.cache && (!ev->name_len || !cache_wanted(m, cache_of(m, ev))))))
			return;
		m->scope = true;
		fsite = alloc_site(m, ev->call_site);
		if (fsite)
			fsite->free_calls++;
		if (sl && m->o.partial_allocs) {
			/* Allocated again where the recording did not look. */
			m->sum.unseen_allocs++;
			otab_kill(&m->slab, sl, NONE, sl->cache != 0xffff ? sl->cache : NONE, m->loss_seq);
			return;
		}
		if (sl) {
			uint32_t cache = sl->cache != 0xffff ? sl->cache : ev->name_len ? cache_of(m, ev) : NONE;

			if (lost_since(m, sl->loss))
				m->sum.uncertain_misuse++;	/* a new allocation may be in a gap */
			else if (sl->val == SLOT_NOSITE)
				/*
				 * Its first free was of an object never seen
				 * allocated: its allocations are not in the trace
				 * (before it, or by a task left out, such as the
				 * recorder's own threads, whose files RCU frees
				 * later), so this is one more: not a double free.
				 */
				note_misuse(m, KMT_MISUSE_UNTRACED_ALLOC, ev, 0, cache, NULL);
			else
				note_misuse(m, KMT_MISUSE_DOUBLE_FREE, ev, m->sites.v[sl->val].addr, cache, NULL);
			return;
		}
		/* Allocated before the trace (or in a gap, if one came first). */
		model_emit_preexisting(m, ev);
		if (m->loss_seq)
			m->sum.uncertain_objects++;
		else
			m->sum.preexisting_frees++;
		sl = otab_get(&m->slab, ev->ptr);
		if (!sl) {
			m->oom = true;
			return;
		}
		otab_kill(&m->slab, sl, NONE, ev->name_len ? cache_of(m, ev) : NONE, m->loss_seq);
		return;
	}
	o = slot_obj(&m->slab, sl);
	m->scope = true;	/* a chosen task's object */
	asite = &m->sites.v[o->site];
	mk = free_misuse(m, o, ev);
	if (m->o.partial_frees && (mk == KMT_MISUSE_CACHE_MISMATCH || mk == KMT_MISUSE_CACHE_FREE_KMALLOC)) {
		/*
		 * The recording left frees out: the object was freed unseen
		 * and its memory reused by another cache, not misfreed.
		 */
		model_emit(m, o, KMT_FATE_UNSEEN_FREE, NULL);
		model_detail_gone(m, o, ev->ts, false);
		gone_unseen(m, o);
		otab_kill(&m->slab, sl, o->site, o->cache, m->loss_seq);
		m->sum.unseen_allocs++;
		return;
	}
	if (mk != KMT_MISUSE_NR && o->loss_seq != m->loss_seq) {
		/* Freed and allocated again in a gap, maybe. */
		m->sum.uncertain_misuse++;
	} else if (mk == KMT_MISUSE_CACHE_MISMATCH) {
		char detail[64];

		snprintf(detail, sizeof(detail), "freed as %.*s, allocated from %.20s",
			 (int)MIN(ev->name_len, 20u), ev->name, m->caches.v[o->cache].name);
		note_misuse(m, mk, ev, asite->addr, o->cache, detail);
	} else if (mk != KMT_MISUSE_NR) {
		note_misuse(m, mk, ev, asite->addr, o->cache, NULL);
	}
	fsite = alloc_site(m, ev->call_site);
	asite = &m->sites.v[o->site];	/* the lookup may have moved the array */
	if (fsite)
		fsite->free_calls++;
	life = ev->ts > o->ts ? ev->ts - o->ts : 0;
	asite->life[kmt_life_bucket(life)]++;
	if (!asite->frees || life < asite->life_min)
		asite->life_min = life;
	asite->life_max = MAX(asite->life_max, life);
	asite->frees++;
	asite->bytes_freed += o->alloc;
	GONE(asite, o);
	if (ev->cpu != o->cpu) {
		asite->cross_cpu++;
		m->sum.cross_cpu_frees++;
	}
	if (o->cache != NONE) {
		m->caches.v[o->cache].frees++;
		GONE(&m->caches.v[o->cache], o);
	}
	if (o->proc != NONE) {
		m->procs.v[o->proc].frees++;
		m->procs.v[o->proc].bytes_freed += o->alloc;
		GONE(&m->procs.v[o->proc], o);
	}
	m->sum.frees++;
	m->sum.bytes_freed += o->alloc;
	GONE(&m->sum, o);
	model_stack_freed(m, o);
	model_detail_gone(m, o, ev->ts, true);
	model_emit(m, o, KMT_FATE_FREED, ev);
	otab_kill(&m->slab, sl, o->site, o->cache, m->loss_seq);
}

static bool page_failed(const struct kmt_event *ev)
{
	return (ev->flags & KMT_EVF_PAGE_PTR) ? ev->ptr == 0 : ev->ptr == UINT64_MAX ||
	       ev->ptr == UINT32_MAX;
}

static void page_alloc(struct kmt_model *m, const struct kmt_event *ev)
{
	struct cpu_state *cs = &m->cpu[ev->cpu];
	uint32_t proc = proc_of_cpu(m, cs, ev->pid), gi;
	uint64_t npages = 1ULL << MIN(ev->order, 30u);
	struct islot *sl;
	struct obj *o;

	if (m->filtering && !model_task_wanted(m, ev->pid, proc))
		return;
	m->scope = true;
	m->sum.page_allocs++;
	if (page_failed(ev)) {
		m->sum.page_failures++;
		return;
	}
	m->sum.pages_allocated += npages;
	model_detail_page(m, ev->ts, ev->order);
	m->sum.order_mt[MIN(ev->order, (uint32_t)KMT_MAX_ORDER)]
		       [ev->migratetype >= 0 && ev->migratetype < KMT_MIGRATE_TYPES ? ev->migratetype : KMT_MIGRATE_TYPES]++;
	gi = imap_get(&m->gfp_map, ev->gfp);
	if (gi == NONE) {
		gi = VEC_PUSH(m->gfp, m->oom);
		if (gi == NONE || imap_put(&m->gfp_map, ev->gfp, gi)) {
			m->oom = true;
			return;
		}
		m->gfp.v[gi].gfp = ev->gfp;
	}
	m->gfp.v[gi].allocs++;
	m->gfp.v[gi].pages += npages;
	if (proc != NONE) {
		m->procs.v[proc].page_allocs++;
		m->procs.v[proc].pages += npages;
	}
	sl = otab_get(&m->pages, ev->ptr);
	o = !sl ? NULL : slot_live(sl) ? slot_obj(&m->pages, sl) : otab_obj_new(&m->pages, sl);
	if (!o) {
		m->oom = true;
		return;
	}
	if (o->kind == KMT_EV_PAGE_ALLOC)
		model_emit(m, o, KMT_FATE_UNSEEN_FREE, NULL);
	o->ts = ev->ts;
	o->kind = KMT_EV_PAGE_ALLOC;
	o->proc = proc;
	o->order = (uint8_t)MIN(ev->order, 255u);
	o->gfp = (uint32_t)ev->gfp;
	o->site = NONE;
	o->cpu = (uint16_t)ev->cpu;
	o->loss_seq = m->loss_seq;
	cs->page_pending = true;
	cs->page_seq = cs->seq;
	cs->page_pid = ev->pid;
	cs->page_order = ev->order;
	cs->page_pfn = ev->ptr;
}

static void page_free(struct kmt_model *m, const struct kmt_event *ev)
{
	struct islot *sl = otab_find(&m->pages, ev->ptr);
	struct obj *o = sl && slot_live(sl) ? slot_obj(&m->pages, sl) : NULL;

	/* With a task filter: the chosen tasks' pages, and pages they free. */
	if (!o && m->filtering && !model_task_wanted(m, ev->pid, model_proc_of(m, ev->pid)))
		return;
	m->scope = true;
	m->sum.page_frees++;
	m->sum.pages_freed += 1ULL << MIN(ev->order, 30u);
	if (o) {
		if (o->site != NONE) {
			struct kmt_site *s = &m->page_sites.v[o->site];

			s->frees++;
			s->life[kmt_life_bucket(ev->ts - o->ts)]++;
			if (ev->cpu != o->cpu)
				s->cross_cpu++;
		}
		model_emit(m, o, KMT_FATE_FREED, ev);
		otab_remove(&m->pages, sl);
	}
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

/* A stack after a page allocation on its CPU (model_page_claims) names who asked. */
static void stack(struct kmt_model *m, const struct kmt_event *ev)
{
	struct cpu_state *cs = &m->cpu[ev->cpu];
	struct kmt_site *s;
	struct islot *sl;
	uint32_t i;

	if (!model_page_claims(cs, ev) || !m->o.syms)
		return;
	cs->page_pending = false;
	for (i = 0; i < ev->nr_stack; i++) {
		uint64_t a, off;
		const char *fn;

		a = kmt_event_stack(ev, i);
		fn = kmt_symbols_lookup(m->o.syms, a, &off);
		if (!fn || model_allocator_frame(fn))
			continue;
		s = model_site_of(m, &m->page_site_map, &m->page_sites, a - off);
		if (!s)
			return;
		s->allocs++;
		s->bytes_alloc += 4096ULL << MIN(cs->page_order, 30u);
		s->order_mask |= 1u << MIN(cs->page_order, 31u);
		/* The pending page is the last one allocated on this CPU. */
		sl = otab_find(&m->pages, cs->page_pfn);
		if (sl && slot_live(sl))
			slot_obj(&m->pages, sl)->site = (uint32_t)(s - m->page_sites.v);
		break;
	}
}

static void pcpu_alloc(struct kmt_model *m, const struct kmt_event *ev)
{
	struct islot *sl;
	struct obj *o;

	if (m->filtering && !model_task_wanted(m, ev->pid, model_proc_of(m, ev->pid)))
		return;
	m->scope = true;
	m->sum.pcpu_allocs++;
	m->sum.pcpu_bytes += ev->bytes_alloc;
	if (!ev->ptr)
		return;
	sl = otab_get(&m->pcpu, ev->ptr);
	o = !sl ? NULL : slot_live(sl) ? slot_obj(&m->pcpu, sl) : otab_obj_new(&m->pcpu, sl);
	if (!o) {
		m->oom = true;
		return;
	}
	o->ts = ev->ts;
	o->alloc = sat32(ev->bytes_alloc);
}

static void pcpu_free(struct kmt_model *m, const struct kmt_event *ev)
{
	struct islot *sl = otab_find(&m->pcpu, ev->ptr);

	if (!(sl && slot_live(sl)) && m->filtering && !model_task_wanted(m, ev->pid, model_proc_of(m, ev->pid)))
		return;
	m->scope = true;
	m->sum.pcpu_frees++;
	if (sl && slot_live(sl))
		otab_remove(&m->pcpu, sl);
}

void kmt_model_name_event(struct kmt_model *m, const struct kmt_event *ev)
{
	char buf[KMT_COMM_LEN];
	size_t len;
	const char *name = kmt_event_task_name(ev, buf, &len);

	if (name)
		kmt_model_set_comm(m, ev->pid2, name, len);
}

static bool slab_kind(enum kmt_kind k)
{
	return k == KMT_EV_KMALLOC || k == KMT_EV_CACHE_ALLOC || k == KMT_EV_KFREE || k == KMT_EV_CACHE_FREE;
}

/* The kinds a stack can follow: allocations. */
static bool alloc_kind(enum kmt_kind k)
{
	return k == KMT_EV_KMALLOC || k == KMT_EV_CACHE_ALLOC || k == KMT_EV_PAGE_ALLOC ||
	       k == KMT_EV_PCPU_ALLOC || k == KMT_EV_VMAP_ALLOC;
}

/*
 * A stack of a time-sliced recording (--stack-sample) right after an
 * event that allocated nothing is that event's: no allocation's.
 */
static bool other_events_stack(const struct kmt_model *m, const struct cpu_state *cs)
{
	return m->o.stack_slices && !cs->last_stacked && !cs->last_alloc;
}

static void process_event(struct kmt_model *m, const struct kmt_event *ev)
{
	if (ev->cpu < 0 || ev->cpu >= MAX_CPUS)
		return;
	/*
	 * A truncated CPU's events are missing from its end to the trace's,
	 * a damaged part of the file's over its span: a gap that stays open,
	 * as if a loss came before every event in it.
	 */
	if (m->sum.truncated_cpus || (m->sum.damaged_gaps && ev->ts <= m->gap_until))
		m->loss_seq++;
	if (!m->started)
		m->sum.first_ts = ev->ts;
	m->started = true;
	m->sum.last_ts = ev->ts;
	if (ev->cpu >= m->sum.nr_cpus)
		m->sum.nr_cpus = ev->cpu + 1;
	m->cpu[ev->cpu].seq++;
	if (alloc_kind(ev->kind))
		m->cpu[ev->cpu].alloc_seq = m->cpu[ev->cpu].seq;
	/* Counted below if it concerns the chosen tasks (all of them without a filter). */
	m->scope = !m->filtering;
	if (m->o.cache && !slab_kind(ev->kind) && ev->kind != KMT_EV_STACK && ev->kind != KMT_EV_ACCESS) {
		/* --cache: only slab objects; names are still taken. */
		if (ev->kind >= KMT_EV_FORK && ev->kind != KMT_EV_EXIT)
			kmt_model_name_event(m, ev);
		m->cpu[ev->cpu].last_scope = false;
		m->cpu[ev->cpu].last_alloc = alloc_kind(ev->kind);
		m->cpu[ev->cpu].last_stacked = false;
		return;
	}
	switch (ev->kind) {
	case KMT_EV_KMALLOC:
	case KMT_EV_CACHE_ALLOC:
		slab_alloc(m, ev);
		break;
	case KMT_EV_KFREE:
	case KMT_EV_CACHE_FREE:
		slab_free(m, ev);
		break;
	case KMT_EV_PAGE_ALLOC:
		page_alloc(m, ev);
		break;
	case KMT_EV_PAGE_FREE:
	case KMT_EV_PAGE_FREE_BATCHED:
		page_free(m, ev);
		break;
	case KMT_EV_PCPU_ALLOC:
		pcpu_alloc(m, ev);
		break;
	case KMT_EV_PCPU_FREE:
		pcpu_free(m, ev);
		break;
	case KMT_EV_VMAP_ALLOC:
		model_vmap_alloc(m, ev);
		break;
	case KMT_EV_VMAP_FREE:
		model_vmap_free(m, ev);
		break;
	case KMT_EV_FORK:
	case KMT_EV_RENAME:
	case KMT_EV_NEWTASK:
	case KMT_EV_EXEC:
		kmt_model_name_event(m, ev);
		/* fall through */
	case KMT_EV_EXIT:
		if (m->filtering)
			m->scope = model_task_wanted(m, ev->pid2, model_proc_of(m, ev->pid2));
		break;
	case KMT_EV_STACK:
		m->cpu[ev->cpu].seq--;	/* part of the event before it */
		m->scope = m->cpu[ev->cpu].last_scope;
		if (other_events_stack(m, &m->cpu[ev->cpu]))
			break;
		model_stack_slab(m, ev);
		model_vmap_area_stack(m, ev);
		if (!model_vmap_stack(m, ev))
			stack(m, ev);
		break;
	case KMT_EV_ACCESS:
		m->cpu[ev->cpu].seq--;	/* not part of the CPU's allocation chain */
		model_access(m, ev);
		break;
	}
	if (ev->kind != KMT_EV_STACK)
		m->cpu[ev->cpu].last_scope = m->scope;
	if (ev->kind == KMT_EV_STACK) {
		m->cpu[ev->cpu].last_stacked = true;
	} else if (ev->kind != KMT_EV_ACCESS) {
		m->cpu[ev->cpu].last_alloc = alloc_kind(ev->kind);
		m->cpu[ev->cpu].last_stacked = false;
	}
	if (m->scope && (ev->kind == KMT_EV_FORK || ev->kind == KMT_EV_NEWTASK))
		model_detail_birth(m, ev);
	if (m->scope && m->hooks.event)
		m->hooks.event(m->hooks.arg, ev);
	if (m->scope) {
		m->sum.events++;
		m->sum.by_kind[ev->kind < KMT_EV_NR ? ev->kind : 0]++;
		m->events_by_cpu[ev->cpu]++;
	}
}

/*
 * Objects live in tables far bigger than the caches. Events are queued a
 * few deep and the table slot of each is prefetched when it is queued, so
 * by the time it is processed its cache line is there.
 */
static void prefetch_obj(const struct kmt_model *m, const struct kmt_event *ev)
{
	switch (ev->kind) {
	case KMT_EV_KFREE:
	case KMT_EV_CACHE_FREE:
	case KMT_EV_KMALLOC:
	case KMT_EV_CACHE_ALLOC:
		kmt_prefetch(otab_slot(&m->slab, ev->ptr));
		break;
	case KMT_EV_PAGE_ALLOC:
	case KMT_EV_PAGE_FREE:
	case KMT_EV_PAGE_FREE_BATCHED:
		kmt_prefetch(otab_slot(&m->pages, ev->ptr));
		break;
	}
}

static void drain(struct kmt_model *m, unsigned int keep)
{
	while (m->qlen > keep) {
		process_event(m, &m->q[m->qhead].ev);
		m->qhead = (m->qhead + 1) % LOOKAHEAD;
		m->qlen--;
	}
}

/*
 * Second stage, half the queue later: the slot is in cache by now, so find
 * the live object it points to and prefetch that too.
 */
static void prefetch_pool(struct kmt_model *m, const struct kmt_event *ev)
{
	struct otab *t;
	struct islot *sl;

	switch (ev->kind) {
	case KMT_EV_KFREE:
	case KMT_EV_CACHE_FREE:
	case KMT_EV_KMALLOC:
	case KMT_EV_CACHE_ALLOC:
		t = &m->slab;
		break;
	default:
		return;
	}
	sl = otab_find(t, ev->ptr);
	if (sl && slot_live(sl))
		kmt_prefetch(slot_obj(t, sl));
}

int kmt_model_event(struct kmt_model *m, const struct kmt_event *ev)
{
	struct queued *q;

	if (m->oom)
		return -ENOMEM;
	/* Stacks and renames belong exactly where they are: no queueing. */
	if (ev->kind >= KMT_EV_FORK) {
		drain(m, 0);
		process_event(m, ev);
		return m->oom ? -ENOMEM : 0;
	}
	if (m->qlen == LOOKAHEAD)
		drain(m, LOOKAHEAD - 1);
	q = &m->q[(m->qhead + m->qlen++) % LOOKAHEAD];
	q->ev = *ev;
	if (ev->name_len) {
		q->ev.name_len = MIN(ev->name_len, (uint32_t)sizeof(q->name));
		memcpy(q->name, ev->name, q->ev.name_len);
		q->ev.name = q->name;
	}
	prefetch_obj(m, ev);
	if (m->qlen > LOOKAHEAD / 2)
		prefetch_pool(m, &m->q[(m->qhead + m->qlen - 1 - LOOKAHEAD / 2) % LOOKAHEAD].ev);
	return m->oom ? -ENOMEM : 0;
}

/*
 * A run of events the caller keeps in place until the call returns: no
 * queue and no copies, the same two prefetch stages on the array itself.
 */
int kmt_model_events(struct kmt_model *m, const struct kmt_event *ev, size_t n)
{
	size_t i;

	if (m->oom)
		return -ENOMEM;
	drain(m, 0);
	for (i = 0; i < n && i < LOOKAHEAD; i++)
		prefetch_obj(m, &ev[i]);
	for (i = 0; i < n && !m->oom; i++) {
		if (i + LOOKAHEAD < n)
			prefetch_obj(m, &ev[i + LOOKAHEAD]);
		if (i + LOOKAHEAD / 2 < n)
			prefetch_pool(m, &ev[i + LOOKAHEAD / 2]);
		process_event(m, &ev[i]);
	}
	return m->oom ? -ENOMEM : 0;
}

int kmt_model_sync(struct kmt_model *m)
{
	drain(m, 0);
	return m->oom ? -ENOMEM : 0;
}

static int cmp_outstanding(const void *a, const void *b)
{
	const struct kmt_outstanding *x = a, *y = b;

	if (x->bytes_alloc != y->bytes_alloc)
		return (x->bytes_alloc < y->bytes_alloc) - (x->bytes_alloc > y->bytes_alloc);
	return (x->site > y->site) - (x->site < y->site);
}

/*
 * An allocation at an address we think live proves the kernel freed it
 * without tracing (its bulk and RCU-sheaf paths). Once a trace shows that,
 * or more than one "double free", a free of a freed address cannot be told
 * from an allocation the kernel did not trace either: such findings become
 * untraced allocations (warnings). Caches involved are marked, so their
 * outstanding objects can be flagged.
 */
/*
 * Caches the kernel fills through kmem_cache_alloc_bulk(), which fires no
 * per-object event: napi's skb cache (net/core/skbuff.c), io_uring's
 * request cache, the maple tree's node preallocation. A "double free" of
 * their objects is an untraced allocation in between, not a bug.
 */
static bool bulk_filled_cache(const struct kmt_model *m, uint32_t cache)
{
	static const char *const names[] = { "skbuff_head_cache", "io_kiocb", "maple_node" };
	const struct kmt_cache *c;
	size_t i;

	if (cache == NONE)
		return false;
	c = &m->caches.v[cache];
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (c->name_len == strlen(names[i]) && !memcmp(c->name, names[i], c->name_len))
			return true;
	return false;
}

static void classify_untraced(struct kmt_model *m)
{
	uint64_t alloc_live = 0, double_free = 0, bulk = 0, unseen = 0;
	size_t i;

	/*
	 * Double frees in bulk-filled caches, and second frees of objects
	 * never seen allocated (noted as untraced by slab_free, counted as
	 * double frees were): untraced allocations.
	 */
	for (i = 0; i < m->misuse.n; i++) {
		struct kmt_misuse *mu = &m->misuse.v[i];
		bool noted = mu->kind == KMT_MISUSE_UNTRACED_ALLOC;

		if (!noted && mu->kind != KMT_MISUSE_DOUBLE_FREE)
			continue;
		if (bulk_filled_cache(m, mu->cache)) {
			mu->kind = KMT_MISUSE_UNTRACED_ALLOC;
			bulk += mu->count;
		} else if (noted) {
			unseen += mu->count;
		} else {
			continue;
		}
		if (mu->cache != NONE)
			m->caches.v[mu->cache].untraced += mu->count;
	}
	for (i = 0; i < m->misuse.n; i++) {
		const struct kmt_misuse *mu = &m->misuse.v[i];

		if (mu->kind == KMT_MISUSE_ALLOC_LIVE)
			alloc_live += mu->count;
		else if (mu->kind == KMT_MISUSE_DOUBLE_FREE)
			double_free += mu->count;
		else
			continue;
		if (mu->cache != NONE)
			m->caches.v[mu->cache].untraced += mu->count;
	}
	double_free += unseen;
	m->sum.untraced_evidence = alloc_live + (double_free >= 2 ? double_free : 0);
	if (!m->sum.untraced_evidence) {
		/* Known (bulk caches, objects never seen allocated): says nothing of others. */
		m->sum.untraced_evidence = bulk + unseen;
		return;
	}
	m->sum.untraced_evidence += bulk;
	for (i = 0; i < m->misuse.n; i++)
		if (m->misuse.v[i].kind == KMT_MISUSE_DOUBLE_FREE)
			m->misuse.v[i].kind = KMT_MISUSE_UNTRACED_ALLOC;
}

/* Why the kernel allocates or frees a cache's objects untraced: the known cases, then in general. */
static const struct {
	const char *prefix;
	const char *why;
} untraced_whys[] = {
	{ "maple_node", "the maple tree's per-CPU sheaves and bulk frees are not traced" },
	{ "skbuff_head_cache", "napi allocates and frees skbs in bulk (kmem_cache_alloc_bulk, "
	  "kmem_cache_free_bulk), which are not traced" },
	{ "io_kiocb", "io_uring allocates requests in bulk (kmem_cache_alloc_bulk), which is not traced" },
	{ "kmalloc-", "kfree_rcu batches free kmalloc objects with kfree_bulk, which is not traced" },
	{ "", "the slab bulk paths and per-CPU sheaves allocate and free without an event" },
};

const char *kmt_untraced_why(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(untraced_whys); i++)
		if (!strncmp(name ? name : "", untraced_whys[i].prefix, strlen(untraced_whys[i].prefix)))
			return untraced_whys[i].why;
	return untraced_whys[ARRAY_SIZE(untraced_whys) - 1].why;
}

static int cmp_untraced(const void *a, const void *b)
{
	const struct kmt_untraced *x = a, *y = b;

	if (x->count != y->count)
		return (x->count < y->count) - (x->count > y->count);
	return (x->first_ts > y->first_ts) - (x->first_ts < y->first_ts);
}

/*
 * The signs of untraced traffic leave the misuse list for one row per
 * cache: allocations over live objects, untraced allocations, and frees
 * naming another cache where the object's cache shows such traffic (it
 * was freed and its memory reused, both unseen).
 */
static void collect_untraced(struct kmt_model *m)
{
	size_t i, k = 0, j;

	for (i = 0; i < m->misuse.n; i++) {
		struct kmt_misuse mu = m->misuse.v[i];
		bool reuse = mu.kind == KMT_MISUSE_CACHE_MISMATCH && mu.cache != NONE &&
			     (m->caches.v[mu.cache].untraced || bulk_filled_cache(m, mu.cache));
		struct kmt_untraced *u;

		if (mu.kind != KMT_MISUSE_ALLOC_LIVE && mu.kind != KMT_MISUSE_UNTRACED_ALLOC && !reuse) {
			m->misuse.v[k++] = mu;
			continue;
		}
		for (j = 0; j < m->untraced.n && m->untraced.v[j].cache != mu.cache; j++)
			;
		if (j == m->untraced.n) {
			j = VEC_PUSH(m->untraced, m->oom);
			if (j == NONE)
				return;
			u = &m->untraced.v[j];
			u->cache = mu.cache;
			u->first_ts = mu.first_ts;
			u->first_site = mu.site;
			u->first_alloc_site = mu.alloc_site;
			u->why = kmt_untraced_why(mu.cache != NONE ? m->caches.v[mu.cache].name : NULL);
		}
		u = &m->untraced.v[j];
		if (mu.kind == KMT_MISUSE_ALLOC_LIVE)
			u->alloc_over_live += mu.count;
		else if (mu.kind == KMT_MISUSE_UNTRACED_ALLOC)
			u->untraced_alloc += mu.count;
		else
			u->reused += mu.count;
		u->count += mu.count;
		if (mu.first_ts < u->first_ts) {
			u->first_ts = mu.first_ts;
			u->first_site = mu.site;
			u->first_alloc_site = mu.alloc_site;
		}
	}
	m->misuse.n = k;
	if (m->untraced.n > 1)
		qsort(m->untraced.v, m->untraced.n, sizeof(*m->untraced.v), cmp_untraced);
}

/* The age of one live object, for the exact median of its site's ages. */
struct age_of {
	uint32_t k;			/* its outstanding row */
	uint64_t age;
};

static int cmp_age(const void *a, const void *b)
{
	const struct age_of *x = a, *y = b;

	if (x->k != y->k)
		return (x->k > y->k) - (x->k < y->k);
	return (x->age > y->age) - (x->age < y->age);
}

/* Each outstanding row's median age, from the ages of its objects. */
static void median_ages(struct kmt_model *m, struct age_of *v, size_t n)
{
	size_t i = 0, j;

	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_age);
	while (i < n) {
		for (j = i; j < n && v[j].k == v[i].k; j++)
			;
		/* The lower middle of an even count: always an age some object has. */
		m->outstanding.v[v[i].k].age_median = v[i + (j - i - 1) / 2].age;
		i = j;
	}
}

static int misuse_rank(const struct kmt_misuse *x)
{
	return (int)kmt_misuse_severity(x->kind);
}

/* Errors first, then warnings, then information; the most frequent first. */
static int cmp_misuse(const void *a, const void *b)
{
	const struct kmt_misuse *x = a, *y = b;

	if (misuse_rank(x) != misuse_rank(y))
		return misuse_rank(y) - misuse_rank(x);
	if (x->count != y->count)
		return (x->count < y->count) - (x->count > y->count);
	return (x->first_ts > y->first_ts) - (x->first_ts < y->first_ts);
}

int kmt_model_finish(struct kmt_model *m, uint64_t ts)
{
	struct imap out_map;
	struct age_of *ages;
	size_t i, nages = 0;

	drain(m, 0);
	classify_untraced(m);
	collect_untraced(m);
	ages = malloc((m->slab.live + 1) * sizeof(*ages));
	if (m->oom || !ages || imap_init(&out_map, 1 << 8)) {
		free(ages);
		m->oom = true;
		return -ENOMEM;
	}
	if (m->misuse.n > 1)
		qsort(m->misuse.v, m->misuse.n, sizeof(*m->misuse.v), cmp_misuse);
	for (i = 0; i < m->slab.pool_n; i++) {
		struct obj *o = &m->slab.pool[i];
		struct kmt_site *s;
		struct kmt_outstanding *ou;
		uint32_t k;
		uint64_t age;

		if (o->state != OBJ_LIVE)
			continue;
		s = &m->sites.v[o->site];
		if (o->loss_seq != m->loss_seq) {
			/* Its free may have been lost. */
			s->uncertain++;
			m->sum.uncertain_objects++;
			m->sum.uncertain_allocs++;
			m->sum.uncertain_bytes += o->alloc;
			continue;
		}
		model_stack_live(m, o);
		model_detail_live(m, o);
		s->live_objects++;
		s->live_bytes += o->alloc;
		m->sum.live_objects++;
		m->sum.live_bytes += o->alloc;
		if (o->cache != NONE) {
			m->caches.v[o->cache].live_objects++;
			m->caches.v[o->cache].live_bytes += o->alloc;
		}
		if (o->proc != NONE) {
			m->procs.v[o->proc].live_objects++;
			m->procs.v[o->proc].live_bytes += o->alloc;
		}
		k = imap_get(&out_map, o->site);
		if (k == NONE) {
			k = VEC_PUSH(m->outstanding, m->oom);
			if (k == NONE || imap_put(&out_map, o->site, k)) {
				m->oom = true;
				break;
			}
			m->outstanding.v[k].site = s->addr;
			m->outstanding.v[k].age_min = UINT64_MAX;
		}
		ou = &m->outstanding.v[k];
		age = ts > o->ts ? ts - o->ts : 0;
		ou->objects++;
		if (o->cache != NONE && m->caches.v[o->cache].untraced)
			ou->in_untraced_caches++;
		ou->bytes_req += o->req;
		ou->bytes_alloc += o->alloc;
		ou->age_min = MIN(ou->age_min, age);
		ou->age_max = MAX(ou->age_max, age);
		ou->age[kmt_life_bucket(age)]++;
		if (nages <= m->slab.live)
			ages[nages++] = (struct age_of){ k, age };
	}
	imap_release(&out_map);
	median_ages(m, ages, nages);
	free(ages);
	model_vmap_finish(m, ts);
	model_emit_live(m);		/* while objects still point at their stack rows */
	model_stack_finish(m);
	model_detail_finish(m);
	model_access_finish(m);
	if (m->outstanding.n > 1)
		qsort(m->outstanding.v, m->outstanding.n, sizeof(*m->outstanding.v), cmp_outstanding);
	if (ts > m->sum.last_ts)
		m->sum.last_ts = ts;
	return m->oom ? -ENOMEM : 0;
}

const struct kmt_summary *kmt_model_summary(const struct kmt_model *m)
{
	return &m->sum;
}

#define ACCESSOR(fn, type, field)					\
	const type *fn(const struct kmt_model *m, size_t *n)		\
	{								\
		*n = m->field.n;					\
		return m->field.v;					\
	}
ACCESSOR(kmt_model_sites, struct kmt_site, sites)
ACCESSOR(kmt_model_page_sites, struct kmt_site, page_sites)
ACCESSOR(kmt_model_caches, struct kmt_cache, caches)
ACCESSOR(kmt_model_procs, struct kmt_proc, procs)
ACCESSOR(kmt_model_misuse, struct kmt_misuse, misuse)
ACCESSOR(kmt_model_outstanding, struct kmt_outstanding, outstanding)
ACCESSOR(kmt_model_untraced, struct kmt_untraced, untraced)
ACCESSOR(kmt_model_gfp, struct kmt_gfp_count, gfp)
ACCESSOR(kmt_model_vmap_sites, struct kmt_site, vmap_sites)
ACCESSOR(kmt_model_vmap_sizes, struct kmt_vmap_size, vmap_sizes)
ACCESSOR(kmt_model_vmap_live, struct kmt_vmap_area, vmap_live)
