/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading the report's tables (src/report/report.h): rows kept and sorted by the
 * -s keys, values of columns, and their text form. The tables themselves
 * are in report-cols.c; every printer goes through here.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "util/opt.h"
#include "report.h"

const struct rtable *rtable_find(const char *name)
{
	int i;

	for (i = 0; report_tables[i]; i++)
		if (!strcmp(report_tables[i]->name, name))
			return report_tables[i];
	return NULL;
}

const struct rcol *rtable_col(const struct rtable *t, const char *name)
{
	const struct rcol *c;

	for (c = t->cols; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

void rcol_value(const struct report *r, const struct rcol *c, const void *row, struct rval *v,
		char *buf, size_t len)
{
	memset(v, 0, sizeof(*v));
	if (c->get)
		c->get(r, row, v, buf, len);
	else
		memcpy(&v->u, (const char *)row + c->off, sizeof(v->u));
}

const char *rcol_doc(const struct rcol *c, char *buf, size_t len)
{
	return c->doc_text ? c->doc_text(buf, len) : c->doc;
}

static const struct rcol *col_by_sort(const struct rtable *t, const char *key)
{
	const struct rcol *c;

	for (c = t->cols; c->name; c++)
		if (c->sort && !strcmp(c->sort, key))
			return c;
	return NULL;
}

bool report_sort_key_known(const char *key)
{
	int i;

	for (i = 0; report_tables[i]; i++)
		if (col_by_sort(report_tables[i], key))
			return true;
	return false;
}

const char *report_sort_keys(char *buf, size_t len)
{
	const struct rcol *c;
	int i;

	buf[0] = '\0';
	for (i = 0; report_tables[i]; i++)
		for (c = report_tables[i]->cols; c->name; c++)
			if (c->sort)
				opt_join(buf, len, ",", c->sort);
	return buf;
}

/* Sorting: the keys the table has, in order, then its default; ties by position. */
struct sorter {
	const struct report *r;
	const struct rcol *keys[10];
	int n;
};

static int cmp_col(const struct sorter *so, const struct rcol *c, const void *a, const void *b)
{
	struct rval x, y;
	char bx[256], by[256];

	rcol_value(so->r, c, a, &x, bx, sizeof(bx));
	rcol_value(so->r, c, b, &y, by, sizeof(by));
	switch (c->type) {
	case RT_STR:
		return strcmp(x.s ? x.s : "", y.s ? y.s : "");
	case RT_PCT:
		return (x.f < y.f) - (x.f > y.f);
	case RT_I64:
		return (x.i < y.i) - (x.i > y.i);
	default:
		return (x.u < y.u) - (x.u > y.u);	/* larger first */
	}
}

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const void *a = *(const void *const *)pa, *b = *(const void *const *)pb;
	const struct sorter *so = arg;
	int i, c;

	for (i = 0; i < so->n; i++)
		if ((c = cmp_col(so, so->keys[i], a, b)))
			return c;
	return (a > b) - (a < b);	/* rows point into one array: its order */
}

static size_t keep_and_sort(const struct report *r, const struct rtable *t, const void **p, size_t n)
{
	struct sorter so = { .r = r };
	size_t i, k = 0;
	int j;

	for (i = 0; i < n; i++)
		if (!t->keep || t->keep(r, p[i]))
			p[k++] = p[i];
	for (j = 0; j < r->nr_sort && so.n < 8; j++) {
		const struct rcol *c = col_by_sort(t, r->sort[j]);

		if (c)
			so.keys[so.n++] = c;
	}
	if (t->default_sort && col_by_sort(t, t->default_sort))
		so.keys[so.n++] = col_by_sort(t, t->default_sort);
	if (so.n && k > 1)
		qsort_r(p, k, sizeof(*p), cmp_rows, &so);
	return k;
}

size_t rtable_rows(const struct report *r, const struct rtable *t, const void ***out)
{
	const void **p = NULL;
	size_t n = t->rows(r, &p);

	*out = p;
	return p ? keep_and_sort(r, t, p, n) : 0;
}

size_t rtable_rows_of(const struct report *r, const struct rtable *t, const void *parent,
		      const void ***out)
{
	const void **p = NULL;
	size_t n = t->rows_of(r, parent, &p);

	*out = p;
	return p ? keep_and_sort(r, t, p, n) : 0;
}

const char *rval_names(const struct rval *v, char *buf, size_t len)
{
	size_t o = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < v->n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? " " : "", v->names[i]);
	return buf;
}

const char *rval_text(const struct rcol *c, const struct rval *v, char *buf, size_t len)
{
	char hb[32];

	switch (c->type) {
	case RT_STR:
		return v->s ? v->s : "";
	case RT_NAMES:
		return rval_names(v, buf, len);
	case RT_PCT:
		snprintf(buf, len, "%.1f%%", v->f);
		return buf;
	case RT_BOOL:
		return v->u ? "yes" : "no";
	case RT_I64:
		if (c->unit == RU_BYTES) {
			snprintf(buf, len, "%s", human_bytes((double)v->i, hb));
			return buf;
		}
		snprintf(buf, len, "%" PRId64, v->i);
		return buf;
	case RT_U64:
		if (c->unit == RU_BYTES) {
			snprintf(buf, len, "%s", human_bytes((double)v->u, hb));
			return buf;
		}
		if (c->unit == RU_NS)
			return human_duration(v->u, buf, len);
		if (c->unit == RU_COUNT)
			return fmt_count((double)v->u, false, buf, len);
		snprintf(buf, len, "%" PRIu64, v->u);
		return buf;
	default:
		return "";
	}
}
