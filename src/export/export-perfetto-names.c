/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * export --format perfetto, the events by name (src/export-perfetto.h).
 * Perfetto's ftrace messages for kmalloc and its kin carry the call site
 * as a number and no cache at all (their schema has none), and
 * trace_processor resolves interned kernel symbols only for a few fields
 * of other events (workqueue functions, sched_blocked_reason's caller),
 * so the UI could not tell one function or cache from another. Here each
 * memory event is also an instant track event on its task's thread track,
 * named "kmalloc do_getxattr" (the event and the allocating or freeing
 * function), with debug annotations: call_site ("do_getxattr+0x5e"),
 * cache, sizes, gfp flags by name, the pointer. Names, categories,
 * annotation keys and string values are interned in one packet sequence
 * (InternedData: event_names, event_categories, debug_annotation_names,
 * debug_annotation_string_values): each string goes out once, in the
 * packet that first uses it, and events refer to it by number. The UI
 * then groups the slices by name (area selection, pivot table) and
 * trace_processor's slice and args tables hold the names.
 */
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/event.h>
#include <kmemtrace/tracefile.h>

#include "util/util.h"
#include "export-perfetto.h"
#include "intern.h"

/* Field 1 of the top message, Trace. */
void perfetto_packet(struct export *x, struct pb *p)
{
	uint8_t head[16];
	size_t n = 0, len = p->len;

	if (p->oom) {
		x->failed = true;
		return;
	}
	head[n++] = (uint8_t)(TRACE_PACKET << 3 | 2);	/* length-delimited */
	while (len >= 0x80) {
		head[n++] = (uint8_t)(len | 0x80);
		len >>= 7;
	}
	head[n++] = (uint8_t)len;
	/* The output is this thread's alone (unlocked stdio): a packet an event. */
	if (fwrite_unlocked(head, 1, n, x->out) != n || fwrite_unlocked(p->buf, 1, p->len, x->out) != p->len)
		x->failed = true;
}

#define NAMES_SEQ 2000			/* the packet sequence of the track events */
#define THREAD_UUID 65536		/* a task's track: this + tid (counters use 1 to 207) */

/* Field numbers (proto/perfetto_trace.proto). */
enum {
	TE_CATEGORY_IIDS = 3, TE_DEBUG_ANNOTATIONS = 4, TE_TYPE = 9, TE_NAME_IID = 10, TE_TRACK_UUID = 11,
	TYPE_INSTANT = 3,
	DA_NAME_IID = 1, DA_BOOL = 2, DA_UINT = 3, DA_INT = 4, DA_POINTER = 7, DA_STRING_IID = 17,
	ID_EVENT_CATEGORIES = 1, ID_EVENT_NAMES = 2, ID_DEBUG_ANNOTATION_NAMES = 3,
	ID_DEBUG_ANNOTATION_STRING_VALUES = 29,
	INTERNED_IID = 1, INTERNED_NAME = 2,	/* EventName, EventCategory, DebugAnnotationName, InternedString */
};

struct perfetto_names {
	struct export *x;
	struct pb pkt, te, idata;	/* a packet, its track event, its new interned entries */
	/* number 0 of each is "": interning ids start at 1 */
	struct strtab names, cats, keys, strs;
	struct intern_map by_site[KMT_EV_NR];	/* call site -> the event's name id, per kind */
	struct intern_map site_str;	/* call site -> the id of "function+0x5e" */
	struct intern_map gfp_str;	/* gfp value -> the id of its names */
	struct intern_map kmalloc_str;	/* bytes_alloc + 1 -> the id of its kmalloc cache's name */
	struct cache_iid {		/* a cache name's id, by the name (cache_iid()) */
		uint8_t len;
		char s[47];
		uint64_t id;
	} cache[64];
	struct intern_map threads;	/* tid + 1 -> 1 once its track is described */
	struct kmt_flags *gfp;		/* gfp flag names from the file's formats, or NULL */
	struct literal_iid {		/* the program's own strings' ids, by address (literal_iid()) */
		const struct strtab *t;
		const char *s;
		uint64_t id;
	} lit[256];
	int64_t last_tid;		/* the task whose track was described or found last, + 1 */
	bool started;			/* the first packet (which clears the state) is out */
	bool oom;
	struct perfetto_freed freed;	/* the object of the free being analysed */
};

struct perfetto_names *perfetto_names_new(struct export *x)
{
	struct perfetto_names *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->x = x;
	if (strtab_id(&n->names, "") || strtab_id(&n->cats, "") || strtab_id(&n->keys, "") ||
	    strtab_id(&n->strs, "")) {
		perfetto_names_free(n);
		return NULL;
	}
	n->gfp = kmt_flags_gfp(kmt_file_formats(x->a.f));	/* as report names them */
	return n;
}

void perfetto_names_free(struct perfetto_names *n)
{
	int k;

	if (!n)
		return;
	pb_release(&n->pkt);
	pb_release(&n->te);
	pb_release(&n->idata);
	strtab_release(&n->names);
	strtab_release(&n->cats);
	strtab_release(&n->keys);
	strtab_release(&n->strs);
	for (k = 0; k < KMT_EV_NR; k++)
		intern_map_release(&n->by_site[k]);
	intern_map_release(&n->site_str);
	intern_map_release(&n->gfp_str);
	intern_map_release(&n->kmalloc_str);
	intern_map_release(&n->threads);
	kmt_flags_free(n->gfp);
	free(n);
}

bool perfetto_names_failed(const struct perfetto_names *n)
{
	return n->oom || n->pkt.oom || n->te.oom || n->idata.oom;
}

/* The interning id of @s in @t; new, it goes into this packet's InternedData @field. 0 on ENOMEM. */
static uint64_t iid(struct perfetto_names *n, struct strtab *t, uint32_t field, const char *s)
{
	size_t before = strtab_count(t);
	int64_t id = strtab_id(t, s);
	size_t m;

	if (id <= 0) {
		n->oom |= id < 0;
		return 0;
	}
	if ((size_t)id == before) {
		m = pb_begin(&n->idata, field);
		pb_uint(&n->idata, INTERNED_IID, (uint64_t)id);
		pb_str(&n->idata, INTERNED_NAME, s);
		pb_end(&n->idata, m);
	}
	return (uint64_t)id;
}

/*
 * iid() of one of the program's own strings (annotation keys, kind
 * names: literals, whose address says which), remembered by address: a
 * few per event, each a hash and a compare otherwise.
 */
static uint64_t literal_iid(struct perfetto_names *n, struct strtab *t, uint32_t field, const char *s)
{
	struct literal_iid *l = &n->lit[((uintptr_t)s >> 3 ^ (uintptr_t)t >> 6) % (sizeof(n->lit) / sizeof(n->lit[0]))];

	if (l->s == s && l->t == t)
		return l->id;
	l->id = iid(n, t, field, s);
	l->s = l->id ? s : NULL;
	l->t = t;
	return l->id;
}

/* The id of a string value, remembered under @key in @map (0: not remembered). */
static uint64_t str_of(struct perfetto_names *n, struct intern_map *map, uint64_t key, const char *s)
{
	uint64_t id = iid(n, &n->strs, ID_DEBUG_ANNOTATION_STRING_VALUES, s);

	if (map && id && intern_map_put(map, key, (uint32_t)id))
		n->oom = true;
	return id;
}

/* A debug annotation @key (a literal: literal_iid()): @field (DA_*) = @v. */
static void annotate(struct perfetto_names *n, const char *key, uint32_t field, uint64_t v)
{
	uint64_t k = literal_iid(n, &n->keys, ID_DEBUG_ANNOTATION_NAMES, key);
	uint8_t *p = pb_reserve(&n->te, 32), *m;

	/* Written in place: two varint fields, under 128 bytes (pb_begin()'s bytes). */
	if (!p)
		return;
	m = pb_put_begin(&p, TE_DEBUG_ANNOTATIONS);
	p = pb_put_uint(p, DA_NAME_IID, k);
	p = pb_put_uint(p, field, v);
	pb_put_end(m, p);
	pb_commit(&n->te, p);
}

static void annotate_str(struct perfetto_names *n, const char *key, uint64_t str_iid)
{
	if (str_iid)
		annotate(n, key, DA_STRING_IID, str_iid);
}

/* "function+0x5e" of a call site (or instruction), interned once per address. */
static uint64_t site_iid(struct perfetto_names *n, uint64_t addr)
{
	uint64_t id = intern_map_get(&n->site_str, addr);
	char buf[256];

	return id ? id : str_of(n, &n->site_str, addr, site_name(&n->x->r, addr, buf, sizeof(buf)));
}

/* The event's name: "kmalloc do_getxattr", or the event alone without a call site. */
static uint64_t name_iid(struct perfetto_names *n, const struct kmt_event *ev)
{
	char fn[224], name[256];
	uint64_t id;

	if (!ev->call_site)
		return literal_iid(n, &n->names, ID_EVENT_NAMES, kmt_kind_name(ev->kind));
	if ((id = intern_map_get(&n->by_site[ev->kind], ev->call_site)))
		return id;
	snprintf(name, sizeof(name), "%s %s", kmt_kind_name(ev->kind),
		 site_function(&n->x->r, ev->call_site, fn, sizeof(fn)));
	id = iid(n, &n->names, ID_EVENT_NAMES, name);
	if (id && intern_map_put(&n->by_site[ev->kind], ev->call_site, (uint32_t)id))
		n->oom = true;
	return id;
}

/* gfp flags by name, as the file's print formats spell them (else a number). */
static void annotate_gfp(struct perfetto_names *n, uint64_t gfp)
{
	uint64_t id;
	char buf[512];

	if (!n->gfp) {
		annotate(n, "gfp_flags", DA_UINT, gfp);
		return;
	}
	id = intern_map_get(&n->gfp_str, gfp + 1);
	if (!id)
		id = str_of(n, &n->gfp_str, gfp + 1, kmt_flags_format(n->gfp, gfp, buf, sizeof(buf)));
	annotate_str(n, "gfp_flags", id);
}

/*
 * The id of a cache's name, @len bytes at @s (no NUL among them), as
 * str_of() gives it (a name is cut at 63 bytes), remembered by the name: a
 * cache event's name is in its record, so each event would otherwise hash
 * and compare it.
 */
static uint64_t cache_iid(struct perfetto_names *n, const char *s, size_t len)
{
	struct cache_iid *c;
	char buf[64];

	len = MIN(len, sizeof(buf) - 1);
	c = &n->cache[len ? (len * 31 + (uint8_t)s[0] * 7 + (uint8_t)s[len / 2] * 3 + (uint8_t)s[len - 1]) %
		       (sizeof(n->cache) / sizeof(n->cache[0])) : 0];
	if (len && c->len == len && !memcmp(c->s, s, len))
		return c->id;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (!len || len > sizeof(c->s))
		return str_of(n, NULL, 0, buf);
	c->id = str_of(n, NULL, 0, buf);
	c->len = c->id ? (uint8_t)len : 0;
	memcpy(c->s, s, len);
	return c->id;
}

/* The id of the slab cache of @ev, as its events name it; 0 if not known. */
static uint64_t cache_of(struct perfetto_names *n, const struct kmt_event *ev)
{
	char buf[64];
	uint64_t id;

	switch (ev->kind) {
	case KMT_EV_KMALLOC:
		if (!ev->ptr)
			return 0;
		if ((id = intern_map_get(&n->kmalloc_str, ev->bytes_alloc + 1)))
			return id;
		return str_of(n, &n->kmalloc_str, ev->bytes_alloc + 1, kmt_kmalloc_name(ev->bytes_alloc, buf, sizeof(buf)));
	case KMT_EV_KFREE:
	case KMT_EV_CACHE_FREE:
		/* The model matched the free to its object just before (perfetto_names_object). */
		if (n->freed.set && n->freed.ptr == ev->ptr && n->freed.ts == ev->ts && n->freed.cpu == ev->cpu)
			return cache_iid(n, n->freed.cache, n->freed.len);
		if (ev->kind == KMT_EV_KFREE)
			return 0;
		/* An object allocated before the trace: named by its event. */
		/* fall through */
	case KMT_EV_CACHE_ALLOC:
		if (!ev->name_len)
			return 0;
		return cache_iid(n, ev->name, strnlen(ev->name, ev->name_len));
	default:
		return 0;
	}
}

void perfetto_freed_of(struct perfetto_freed *fr, const struct kmt_object *o)
{
	size_t len;

	if (o->fate != KMT_FATE_FREED || !o->cache) {
		fr->set = false;
		return;
	}
	/* A merged cache's label "name (+alias, ...)": the name its events carry. */
	len = MIN(strcspn(o->cache, " "), sizeof(fr->cache) - 1);
	memcpy(fr->cache, o->cache, len);
	fr->cache[len] = '\0';
	fr->len = len;
	fr->ptr = o->ptr;
	fr->ts = o->free_ts;
	fr->cpu = o->free_cpu;
	fr->set = true;
}

void perfetto_names_object(struct perfetto_names *n, const struct kmt_object *o)
{
	perfetto_freed_of(&n->freed, o);
}

void perfetto_names_freed(struct perfetto_names *n, const struct perfetto_freed *fr)
{
	if (fr->set)
		n->freed = *fr;
	else
		n->freed.set = false;
}

/* The annotations of each kind of event. */
static void annotations(struct perfetto_names *n, const struct kmt_event *ev)
{
	const char *ptr = ev->flags & KMT_EVF_PAGE_PTR ? "page" : "pfn";
	char buf[64];

	if (ev->call_site)
		annotate_str(n, ev->kind == KMT_EV_ACCESS ? "ip" : "call_site", site_iid(n, ev->call_site));
	annotate_str(n, "cache", cache_of(n, ev));
	switch (ev->kind) {
	case KMT_EV_KMALLOC:
	case KMT_EV_CACHE_ALLOC:
	case KMT_EV_PCPU_ALLOC:
		annotate(n, "bytes_req", DA_UINT, ev->bytes_req);
		annotate(n, "bytes_alloc", DA_UINT, ev->bytes_alloc);
		if (ev->kind != KMT_EV_PCPU_ALLOC || ev->gfp)
			annotate_gfp(n, ev->gfp);
		annotate(n, "ptr", DA_POINTER, ev->ptr);
		break;
	case KMT_EV_PAGE_ALLOC:
		annotate(n, "order", DA_UINT, ev->order);
		annotate_gfp(n, ev->gfp);
		annotate(n, "migratetype", DA_INT, (uint64_t)(int64_t)ev->migratetype);
		annotate(n, ptr, DA_POINTER, ev->ptr);
		break;
	case KMT_EV_PAGE_FREE:
		annotate(n, "order", DA_UINT, ev->order);
		/* fall through */
	case KMT_EV_PAGE_FREE_BATCHED:
		annotate(n, ptr, DA_POINTER, ev->ptr);
		break;
	case KMT_EV_VMAP_ALLOC:
		annotate(n, "size", DA_UINT, ev->bytes_alloc);
		if (ev->flags & KMT_EVF_FAILED)
			annotate(n, "failed", DA_BOOL, 1);
		/* fall through */
	case KMT_EV_VMAP_FREE:
		annotate(n, "addr", DA_POINTER, ev->ptr);
		break;
	case KMT_EV_ACCESS:
		annotate(n, "offset", DA_UINT, ev->offset);
		annotate(n, "len", DA_UINT, ev->bytes_req);
		annotate(n, "write", DA_BOOL, !!(ev->flags & KMT_EVF_WRITE));
		if (ev->str2_len) {
			snprintf(buf, sizeof(buf), "%.*s", (int)ev->str2_len, ev->str2);
			annotate_str(n, "field", str_of(n, NULL, 0, buf));
		}
		/* fall through */
	default:	/* KFREE, CACHE_FREE, PCPU_FREE */
		annotate(n, "ptr", DA_POINTER, ev->ptr);
		break;
	}
}

/* The task's thread track, described before its first event. */
static uint64_t thread_track(struct perfetto_names *n, int32_t tid)
{
	uint64_t uuid = THREAD_UUID + (uint32_t)tid;
	struct pb *p = &n->pkt;
	size_t t, th;

	/* Runs of one task's events: its track found once. */
	if (n->last_tid == (int64_t)tid + 1)
		return uuid;
	n->last_tid = (int64_t)tid + 1;

	if (intern_map_get(&n->threads, (uint64_t)(uint32_t)tid + 1))
		return uuid;
	if (intern_map_put(&n->threads, (uint64_t)(uint32_t)tid + 1, 1))
		n->oom = true;
	pb_reset(p);
	t = pb_begin(p, PACKET_TRACK_DESCRIPTOR);
	pb_uint(p, TRACK_UUID, uuid);
	th = pb_begin(p, TRACK_THREAD);
	pb_int(p, THREAD_PID, tid);	/* as the process tree has them: each task a process */
	pb_int(p, THREAD_TID, tid);
	pb_end(p, th);
	pb_end(p, t);
	perfetto_packet(n->x, p);
	return uuid;
}

void perfetto_names_event(struct perfetto_names *n, const struct kmt_event *ev)
{
	uint64_t track;

	switch (ev->kind) {
	case KMT_EV_KMALLOC: case KMT_EV_KFREE: case KMT_EV_CACHE_ALLOC: case KMT_EV_CACHE_FREE:
	case KMT_EV_PAGE_ALLOC: case KMT_EV_PAGE_FREE: case KMT_EV_PAGE_FREE_BATCHED:
	case KMT_EV_PCPU_ALLOC: case KMT_EV_PCPU_FREE: case KMT_EV_VMAP_ALLOC: case KMT_EV_VMAP_FREE:
	case KMT_EV_ACCESS:
		break;
	default:
		return;
	}
	track = thread_track(n, ev->pid);
	pb_reset(&n->te);
	pb_reset(&n->idata);
	pb_uint(&n->te, TE_TYPE, TYPE_INSTANT);
	pb_uint(&n->te, TE_TRACK_UUID, track);
	pb_uint(&n->te, TE_CATEGORY_IIDS, literal_iid(n, &n->cats, ID_EVENT_CATEGORIES, kmt_kind_name(ev->kind)));
	pb_uint(&n->te, TE_NAME_IID, name_iid(n, ev));
	annotations(n, ev);
	n->freed.set = false;
	pb_reset(&n->pkt);
	pb_uint(&n->pkt, PACKET_TIMESTAMP, ev->ts);
	pb_uint(&n->pkt, PACKET_SEQUENCE_ID, NAMES_SEQ);
	pb_uint(&n->pkt, PACKET_SEQUENCE_FLAGS, n->started ? SEQ_NEEDS_INCREMENTAL_STATE :
			 SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE);
	n->started = true;
	if (n->idata.len)
		pb_bytes(&n->pkt, PACKET_INTERNED_DATA, n->idata.buf, n->idata.len);
	pb_bytes(&n->pkt, PACKET_TRACK_EVENT, n->te.buf, n->te.len);
	perfetto_packet(n->x, &n->pkt);
}
