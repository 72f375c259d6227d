/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The per-object record (struct kmt_object, include/kmemtrace/model.h) as
 * a table of columns, the one place its fields are defined: kmemtrace
 * kmap's line (Memorizer's KMAP), kmap --json and the SQLite export's
 * object_rows, with the view objects over it, are all written from
 * objcols[]. A column has a name, a type and unit, a line of
 * documentation, the field of the record it reads and when that field
 * holds a value; what the formats do differently is said per column
 * (its name in kmap's line, OBJCOL_NO_NULL for kmap --json, its SQL
 * column and how the view names it), never in the writers.
 */
#ifndef KMT_OBJCOLS_H
#define KMT_OBJCOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kmemtrace/model.h>

struct report;

/*
 * What a column holds, and so how each format writes it: text and JSON
 * as below, SQLite as an INTEGER (the strings as ids into small tables).
 */
enum objcol_type {
	OT_U64,			/* a count of bytes, flags, an order */
	OT_I64,			/* a pid or CPU (-1: unknown) */
	OT_BOOL,
	OT_TIME,		/* ns from the trace's first event */
	OT_PTR,			/* the object's address ("pfn:0x..." for pages; hashed with --hash-pointers) */
	OT_SITE,		/* a call site, "function+0xoff"; SQL: an id into sites */
	OT_FUNC,		/* a call site's function alone; SQL: the view's, through the site's id */
	OT_NAME,		/* a cache or task name, free text; SQL: an id into names */
	OT_KIND,		/* kmalloc, cache, page, unknown; SQL: an id into kinds */
	OT_FATE,		/* kmt_fate_name(); SQL: an id into fates */
	OT_STACK,		/* the callers; SQL: an id into stacks */
};

/*
 * When a column holds a value; else JSON and SQL write null, and kmap's
 * line (which has no null) a number as it is (0, -1) or an empty string.
 */
enum objcol_when {
	W_ALWAYS,
	W_KNOWN,		/* the field says so: an address not 0, a name, a pid or CPU >= 0, a stack */
	W_ALLOCED,		/* the trace saw the allocation (not a pre-existing object) */
	W_FREED,		/* the trace saw the free */
	W_PAGE,			/* a page allocation */
};

/* kmap --json writes the value even when unknown (-1, 0, ""), never null: as it always has. */
#define OBJCOL_NO_NULL		1u
/* Where the SQL schema's lines break (kept as written): before this column in CREATE TABLE, */
#define OBJCOL_BR_TABLE		2u
/* in the view's columns, */
#define OBJCOL_BR_VIEW		4u
/* in the view's joins. */
#define OBJCOL_BR_JOIN		8u

struct objcol {
	const char *name;		/* kmap --json's key */
	const char *kmap;		/* its name in kmap's line, if not @name */
	enum objcol_type type;
	const char *unit;
	const char *doc;
	size_t off, size;		/* the field of struct kmt_object */
	enum objcol_when when;
	unsigned int flags;		/* OBJCOL_* */
	struct {
		const char *name;	/* its object_rows column; NULL: not stored */
		const char *view;	/* its name in the view objects, if not @name */
		char alias;		/* the view's name for the table its id points into */
	} sql;
};

/* The columns, in object_rows' order; ends with a NULL name. */
extern const struct objcol objcols[];

/* kmap's line (Memorizer's KMAP, as kmap --help shows it) and kmap --json's keys, in order. */
#define OBJCOLS_KMAP "alloc_ip,pid,obj_va_ptr,size,alloc_time,free_time,free_ip,comm,cache"
#define OBJCOLS_JSON "alloc_ip,function,pid,comm,ptr,kind,size,bytes_req,bytes_alloc,cache," \
		     "alloc_time,alloc_cpu,free_time,free_pid,free_cpu,free_ip,fate,uncertain,cgroup"
#define OBJCOLS_MAX 32

/*
 * The columns @list (OBJCOLS_KMAP: by their names in kmap's line; else by
 * name) names, in its order, into @out (OBJCOLS_MAX): how many.
 */
size_t objcols_pick(const char *list, const struct objcol **out);

/* A column's value in one record. */
struct objval {
	uint64_t u;			/* unsigned types, times, addresses; kinds, fates: their id */
	int64_t i;			/* OT_I64 */
	const char *s;			/* OT_NAME: never NULL ("" for none) */
};

/*
 * The value of column @c in @o, times counted from @t0, into @v (always:
 * a time not in the trace is 0, an unknown pid -1); whether @o has one.
 */
bool objcol_value(const struct objcol *c, const struct kmt_object *o, uint64_t t0, struct objval *v);

/*
 * The text of a value @v of @c in @o that is a string (OT_PTR, OT_SITE,
 * OT_FUNC, OT_NAME, OT_KIND, OT_FATE), named as @r names addresses, in
 * @buf (or static); NULL for the other types.
 */
const char *objcol_str(const struct objcol *c, const struct kmt_object *o, const struct objval *v,
		       const struct report *r, char *buf, size_t len);

/* Ids of kinds and fates (1, 2, ...; objval.u) and their names: NULL past the last. */
const char *objcol_id_name(enum objcol_type t, uint64_t id);

#endif
