/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The per-object record's columns (objcols.h): the table kmap's line,
 * kmap --json and the SQLite export's object_rows are written from, and
 * how a column's value is read from a struct kmt_object and named.
 */
#include <stdio.h>
#include <string.h>

#include "util/util.h"
#include "report/report.h"
#include "objcols.h"

#define F(field) .off = offsetof(struct kmt_object, field), .size = sizeof(((struct kmt_object *)0)->field)

/*
 * In object_rows' order. kmap's line and --json pick theirs by name
 * (OBJCOLS_KMAP, OBJCOLS_JSON); a column with no SQL name is not stored
 * (the view may still show it, through another column's id).
 */
const struct objcol objcols[] = {
	{ "ptr", "obj_va_ptr", OT_PTR, "address", "the object's kernel address; pages: pfn",
	  F(ptr), W_ALWAYS, OBJCOL_BR_TABLE, { "ptr" } },
	{ "kind", NULL, OT_KIND, NULL, "kmalloc, cache, page, or unknown (pre-existing)",
	  F(kind), W_ALWAYS, OBJCOL_BR_VIEW, { "kind", NULL, 'k' } },
	{ "function", NULL, OT_FUNC, NULL, "the allocating call site's function",
	  F(alloc_site), W_KNOWN, OBJCOL_BR_VIEW, { NULL, "alloc_function", 'a' } },
	{ "alloc_ip", NULL, OT_SITE, NULL, "the allocation's call site",
	  F(alloc_site), W_KNOWN, OBJCOL_BR_TABLE | OBJCOL_BR_JOIN, { "alloc_site", "alloc_callsite", 'a' } },
	{ "cache", NULL, OT_NAME, NULL, "the slab cache, or the kmalloc size class",
	  F(cache), W_KNOWN, OBJCOL_BR_JOIN, { "cache", NULL, 'c' } },
	{ "size", NULL, OT_U64, "bytes", "bytes allocated (Memorizer's name for bytes_alloc)",
	  F(bytes_alloc), W_ALLOCED, OBJCOL_NO_NULL, { NULL } },
	{ "bytes_req", NULL, OT_U64, "bytes", "bytes requested",
	  F(bytes_req), W_ALLOCED, OBJCOL_NO_NULL | OBJCOL_BR_TABLE | OBJCOL_BR_VIEW, { "bytes_req" } },
	{ "bytes_alloc", NULL, OT_U64, "bytes", "bytes allocated (the page size << order for pages)",
	  F(bytes_alloc), W_ALLOCED, OBJCOL_NO_NULL, { "bytes_alloc" } },
	{ "gfp", NULL, OT_U64, "flags", "the allocation's gfp flags",
	  F(gfp), W_ALLOCED, 0, { "gfp" } },
	{ "page_order", NULL, OT_U64, "order", "pages: the allocation's order",
	  F(order), W_PAGE, OBJCOL_BR_VIEW, { "page_order" } },
	{ "alloc_time", NULL, OT_TIME, "ns", "the allocation, from the trace's first event",
	  F(alloc_ts), W_ALLOCED, OBJCOL_BR_TABLE, { "alloc_time" } },
	{ "free_time", NULL, OT_TIME, "ns", "the free, from the trace's first event",
	  F(free_ts), W_FREED, 0, { "free_time" } },
	{ "alloc_cpu", NULL, OT_I64, "cpu", "the allocating CPU",
	  F(alloc_cpu), W_KNOWN, OBJCOL_BR_TABLE | OBJCOL_BR_VIEW, { "alloc_cpu" } },
	{ "free_cpu", NULL, OT_I64, "cpu", "the freeing CPU",
	  F(free_cpu), W_KNOWN, 0, { "free_cpu" } },
	{ "pid", NULL, OT_I64, "pid", "the allocating task (-1: unknown)",
	  F(alloc_pid), W_KNOWN, OBJCOL_NO_NULL, { "alloc_pid" } },
	{ "free_pid", NULL, OT_I64, "pid", "the freeing task",
	  F(free_pid), W_KNOWN, OBJCOL_BR_VIEW, { "free_pid" } },
	{ "comm", NULL, OT_NAME, NULL, "the allocating task's name at the time",
	  F(comm), W_KNOWN, OBJCOL_NO_NULL | OBJCOL_BR_TABLE, { "comm", NULL, 't' } },
	{ "cgroup", NULL, OT_NAME, NULL, "the allocating task's cgroup then: its cgroup v2 path (recordings "
	  "with cgroups; without cgroup v2, the v1 memory controller's)",
	  F(cgroup), W_KNOWN, 0, { "cgroup", NULL, 'g' } },
	{ "free_ip", NULL, OT_SITE, NULL, "the free's call site",
	  F(free_site), W_KNOWN, OBJCOL_BR_JOIN, { "free_site", "free_callsite", 'f' } },
	{ "fate", NULL, OT_FATE, NULL, "freed, live (at the end), unseen_free, preexisting",
	  F(fate), W_ALWAYS, OBJCOL_BR_TABLE, { "fate", NULL, 'e' } },
	{ "uncertain", NULL, OT_BOOL, NULL, "events were lost after its allocation: its fate may be wrong",
	  F(uncertain), W_ALWAYS, OBJCOL_BR_VIEW, { "uncertain" } },
	{ "stack", NULL, OT_STACK, NULL, "the allocation's callers (--stack recordings)",
	  F(stack), W_KNOWN, OBJCOL_BR_TABLE, { "stack", NULL, 's' } },
	{ NULL },
};

size_t objcols_pick(const char *list, const struct objcol **out)
{
	const struct objcol *c;
	size_t n = 0, len;

	for (; *list && n < OBJCOLS_MAX; list += len + !!list[len]) {
		len = strcspn(list, ",");
		for (c = objcols; c->name; c++)
			if ((strlen(c->name) == len && !strncmp(c->name, list, len)) ||
			    (c->kmap && strlen(c->kmap) == len && !strncmp(c->kmap, list, len)))
				break;
		if (c->name)
			out[n++] = c;
	}
	return n;
}

/* Row ids of the kinds: kmap --json's names, the SQL table kinds. */
static const char *const kinds[] = { NULL, "kmalloc", "cache", "page", "unknown" };
enum { KIND_KMALLOC = 1, KIND_CACHE, KIND_PAGE, KIND_UNKNOWN };

const char *objcol_id_name(enum objcol_type t, uint64_t id)
{
	if (t == OT_KIND)
		return id && id < sizeof(kinds) / sizeof(kinds[0]) ? kinds[id] : NULL;
	/* The fates: the model's, then "?" for one it does not name. */
	return t == OT_FATE && id && id <= KMT_FATE_PREEXISTING + 2 ? kmt_fate_name((enum kmt_fate)(id - 1)) : NULL;
}

bool objcol_value(const struct objcol *c, const struct kmt_object *o, uint64_t t0, struct objval *v)
{
	const char *p = (const char *)o + c->off;
	uint64_t u = 0;
	bool known;

	v->s = "";
	if (c->type == OT_NAME) {
		memcpy(&v->s, p, sizeof(v->s));
		known = v->s != NULL;
		v->s = known ? v->s : "";
		v->u = 0;
		v->i = 0;
		goto when;
	}
	if (c->size == 1) {
		uint8_t x;

		memcpy(&x, p, 1);
		u = x;
	} else if (c->size == 4) {
		uint32_t x;

		memcpy(&x, p, 4);
		u = x;
	} else {
		memcpy(&u, p, 8);
	}
	v->u = u;
	v->i = c->size == 4 ? (int32_t)(uint32_t)u : (int64_t)u;
	known = u != 0;
	switch (c->type) {
	case OT_I64:
		known = v->i >= 0;
		break;
	case OT_TIME:
		v->u = since(t0, u);
		break;
	case OT_KIND:
		v->u = u == KMT_EV_PAGE_ALLOC ? KIND_PAGE : u == KMT_EV_KMALLOC ? KIND_KMALLOC :
		       u == KMT_EV_CACHE_ALLOC ? KIND_CACHE : KIND_UNKNOWN;
		break;
	case OT_FATE:
		v->u = u <= KMT_FATE_PREEXISTING ? u + 1 : KMT_FATE_PREEXISTING + 2;
		break;
	case OT_STACK:
		known = u != UINT32_MAX;
		break;
	default:
		break;
	}
when:
	switch (c->when) {
	case W_KNOWN: return known;
	case W_ALLOCED: return o->fate != KMT_FATE_PREEXISTING;
	case W_FREED: return o->fate == KMT_FATE_FREED || o->fate == KMT_FATE_PREEXISTING;
	case W_PAGE: return o->kind == KMT_EV_PAGE_ALLOC;
	default: return true;
	}
}

const char *objcol_str(const struct objcol *c, const struct kmt_object *o, const struct objval *v,
		       const struct report *r, char *buf, size_t len)
{
	char a[40];

	switch (c->type) {
	case OT_PTR:
		if (o->kind != KMT_EV_PAGE_ALLOC)
			return addr_str(r, v->u, buf, len);
		snprintf(buf, len, "pfn:%s", addr_str(r, v->u, a, sizeof(a)));
		return buf;
	case OT_SITE: return site_name(r, v->u, buf, len);
	case OT_FUNC: return site_function(r, v->u, buf, len);
	case OT_NAME: return v->s;
	case OT_KIND: case OT_FATE: return objcol_id_name(c->type, v->u);
	default: return NULL;
	}
}
