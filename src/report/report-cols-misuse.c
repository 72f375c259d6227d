/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The report's misuse tables (src/report/report.h): what the model finds
 * contradictory, by kind, call site and cache, and the caches the kernel
 * allocates or frees without an event (the kernel's design, not misuse).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "util/opt.h"
#include "report-cols.h"

static size_t misuse_rows(const struct report *r, const void ***out)
{
	size_t n;
	const struct kmt_misuse *v = kmt_model_misuse(r->m, &n);

	return rtable_ptrs(v, n, sizeof(*v), out);
}

static size_t untraced_rows(const struct report *r, const void ***out)
{
	size_t n;
	const struct kmt_untraced *v = kmt_model_untraced(r->m, &n);

	return rtable_ptrs(v, n, sizeof(*v), out);
}

/* ---- values ---- */

static void g_mis_kind(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = kmt_misuse_name(((const struct kmt_misuse *)row)->kind);
}

static void g_mis_severity(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = kmt_severity_name(kmt_misuse_severity(((const struct kmt_misuse *)row)->kind));
}

static void g_mis_site(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = site_name(r, ((const struct kmt_misuse *)row)->site, buf, len);
}

static void g_mis_function(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = site_function(r, ((const struct kmt_misuse *)row)->site, buf, len);
}

static void g_mis_address(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = addr_str(r, ((const struct kmt_misuse *)row)->site, buf, len);
}

static void g_mis_asite(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = site_name(r, ((const struct kmt_misuse *)row)->alloc_site, buf, len);
}

static void g_mis_afunction(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = site_function(r, ((const struct kmt_misuse *)row)->alloc_site, buf, len);
}

static void g_mis_ts(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	const struct kmt_misuse *m = row;

	v->u = since(r->t0, m->first_ts);
}

static void g_mis_pid(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->u = (uint64_t)((const struct kmt_misuse *)row)->first_pid;
}

static void g_mis_ptr(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = addr_str(r, ((const struct kmt_misuse *)row)->first_ptr, buf, len);
}

static void g_mis_detail(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = ((const struct kmt_misuse *)row)->detail;
}

static void g_unt_cache(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	uint32_t c = ((const struct kmt_untraced *)row)->cache;

	v->s = c != UINT32_MAX ? cache_name(r, c) : "(no cache)";
}

static void g_unt_site(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = site_name(r, ((const struct kmt_untraced *)row)->first_site, buf, len);
}

static void g_unt_ts(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	uint64_t ts = ((const struct kmt_untraced *)row)->first_ts;

	v->u = since(r->t0, ts);
}

static void g_unt_why(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = ((const struct kmt_untraced *)row)->why;
}

static void g_mis_cache(const struct report *r, const void *row, struct rval *v, char *buf, size_t len)
{
	v->s = cache_name(r, ((const struct kmt_misuse *)row)->cache);
}

/* The text's "first: allocated at": "before the trace" for an object older than it. */
static const char *t_mis_asite(const struct report *r, const struct rcol *c, const void *row, char *buf,
			       size_t len)
{
	const struct kmt_misuse *m = row;

	return m->alloc_site ? site_name(r, m->alloc_site, buf, len) : "before the trace";
}

/* The text's first occurrence: seconds, pid, and the detail. */
static const char *t_mis_first(const struct report *r, const struct rcol *c, const void *row, char *buf,
			       size_t len)
{
	const struct kmt_misuse *m = row;
	char t[32];

	snprintf(buf, len, "%s %d%s%s", fmt_secs(r->t0, m->first_ts, t, sizeof(t)), m->first_pid,
		 *m->detail ? "  " : "", m->detail);
	return buf;
}

/* ---- the kinds ---- */

/*
 * What each kind of misuse means, by enum kmt_misuse_kind (its name is
 * kmt_misuse_name()'s): the page shows them under its misuse table.
 */
/*
 * The kind column's doc: the kinds the misuse table has, those the
 * untraced table does not count in a column of their name.
 */
static const char *d_mis_kind(char *buf, size_t len)
{
	size_t n;
	int k;

	buf[0] = '\0';
	for (k = 0; k < KMT_MISUSE_NR; k++)
		if (!rtable_col(&t_untraced, kmt_misuse_name(k)))
			opt_join(buf, len, ", ", kmt_misuse_name(k));
	n = strlen(buf);
	snprintf(buf + n, len - n, " (what the kernel allocates or frees untraced is in untraced)");
	return buf;
}

/* ---- the tables ---- */

#define M struct kmt_misuse
static const struct rcol misuse_cols[] = {
	{ .name = "kind", .type = RT_STR, .unit = RU_NONE, .get = g_mis_kind,
	  .doc_text = d_mis_kind },
	G("severity", RT_STR, RU_NONE, NULL, 0, NULL, "error or info", g_mis_severity),
	U("count", M, count, RU_COUNT, NULL, 0, "allocs", "occurrences with this kind, call site and allocation site"),
	G("callsite", RT_STR, RU_NONE, NULL, 0, "callsite", "where it happened (the free, or the allocation)", g_mis_site),
	G("function", RT_STR, RU_NONE, NULL, 0, NULL, "the symbol alone", g_mis_function),
	G("address", RT_STR, RU_NONE, NULL, 0, NULL, "the address", g_mis_address),
	G("alloc_callsite", RT_STR, RU_NONE, NULL, 0, NULL, "where the object came from ((unknown) if before the trace)",
	  g_mis_asite),
	G("alloc_function", RT_STR, RU_NONE, NULL, 0, NULL, "its symbol alone", g_mis_afunction),
	G("first_ts_ns", RT_U64, RU_NS, NULL, 0, NULL, "the first occurrence", g_mis_ts),
	G("first_pid", RT_U64, RU_NONE, NULL, 0, NULL, "its task", g_mis_pid),
	G("first_ptr", RT_STR, RU_NONE, NULL, 0, NULL, "its object's address", g_mis_ptr),
	G("detail", RT_STR, RU_NONE, NULL, 0, NULL, "e.g. freed as dentry, allocated from filp", g_mis_detail),
	G("cache", RT_STR, RU_NONE, NULL, 0, NULL, "the object's cache", g_mis_cache),
	END,
};

/*
 * The text's misuse: what and where, the object's cache and origin, and
 * the first occurrence (s, pid, detail), which fits by its title.
 */
static const struct rcol misuse_text_cols[] = {
	G("kind", RT_STR, RU_NONE, "kind", -22, NULL, NULL, g_mis_kind),
	G("severity", RT_STR, RU_NONE, "", -7, NULL, NULL, g_mis_severity),
	U("count", M, count, RU_COUNT, "count", 8, NULL, NULL),
	{ .name = "callsite", .type = RT_STR, .title = "at", .width = -32, .get = g_mis_site, .flags = RC_NAME },
	G("cache", RT_STR, RU_NONE, "cache", -18, NULL, NULL, g_mis_cache),
	{ .name = "alloc_callsite", .type = RT_STR, .title = "first: allocated at", .width = -32,
	  .text = t_mis_asite },
	{ .name = "first", .type = RT_STR, .title = "s, pid", .width = -1, .text = t_mis_first,
	  .flags = RC_FIT_TITLE },
	END,
};
#undef M

/* In the model's order whatever -s says: grouped by kind, call site and cache; errors first, then by count. */
static const struct rtext misuse_text = { .cols = misuse_text_cols, .rows = misuse_rows, .empty = "  none" };

#define T struct kmt_untraced
static const struct rcol untraced_cols[] = {
	G("cache", RT_STR, RU_NONE, "cache", -34, "name", "the cache", g_unt_cache),
	U("count", T, count, RU_COUNT, "signs", 9, "allocs", "signs of objects allocated or freed without an event"),
	U("alloc_over_live", T, alloc_over_live, RU_COUNT, NULL, 0, NULL,
	  "allocations at the address of a live object: a free the kernel did not trace"),
	U("untraced_alloc", T, untraced_alloc, RU_COUNT, NULL, 0, NULL,
	  "frees of a freed address: an allocation the kernel did not trace"),
	U("reused", T, reused, RU_COUNT, NULL, 0, NULL,
	  "frees naming another cache: the object was freed and its memory reused, unseen"),
	G("first_callsite", RT_STR, RU_NONE, NULL, 0, NULL, "where the first sign was", g_unt_site),
	G("first_ts_ns", RT_U64, RU_NS, NULL, 0, NULL, "when", g_unt_ts),
	G("why", RT_STR, RU_NONE, "why", -1, NULL, "why the kernel does this, as far as known", g_unt_why),
	END,
};
#undef T

const struct rtable t_misuse = {
	.name = "misuse", .section = SEC_MISUSE, .cols = misuse_cols, .rows = misuse_rows,
	.doc = "what the model finds contradictory", .text = &misuse_text,
	/* In a narrow width: first when and why, then where it came from, the severity, the cache. */
	.narrow = "first alloc_callsite severity cache", .sql = true,
};
const struct rtable t_untraced = {
	.name = "untraced", .section = SEC_MISUSE, .cols = untraced_cols, .rows = untraced_rows,
	.doc = "caches whose objects the kernel allocates or frees without an event (its bulk paths, "
	       "per-CPU sheaves): the kernel's design, not misuse; one row per cache",
};
