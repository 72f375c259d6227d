/*
 * kmemtrace report --json: one document, schema in docs/report-json.md,
 * printed from the report's tables (report-cols.c). Numbers are exact
 * integers; call sites come as "callsite" (symbol+offset) and "function"
 * (symbol alone); addresses as hex strings.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "report.h"

struct js {
	FILE *out;
	int depth;
	bool first[32];
};

static void sep(struct js *j)
{
	if (!j->first[j->depth])
		fputc(',', j->out);
	j->first[j->depth] = false;
	fputc('\n', j->out);
	fprintf(j->out, "%*s", j->depth * 2, "");
}

static void str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void key(struct js *j, const char *k)
{
	sep(j);
	if (k) {
		str(j->out, k);
		fputs(": ", j->out);
	}
}

static void open_(struct js *j, const char *k, char c)
{
	key(j, k);
	fputc(c, j->out);
	j->first[++j->depth] = true;
}

static void close_(struct js *j, char c)
{
	bool empty = j->first[j->depth];

	j->depth--;
	if (!empty) {
		fputc('\n', j->out);
		fprintf(j->out, "%*s", j->depth * 2, "");
	}
	fputc(c, j->out);
}

static void u64(struct js *j, const char *k, uint64_t v)
{
	key(j, k);
	fprintf(j->out, "%" PRIu64, v);
}

static void dbl(struct js *j, const char *k, double v)
{
	key(j, k);
	fprintf(j->out, "%.3f", v);
}

static void sval(struct js *j, const char *k, const char *v)
{
	key(j, k);
	str(j->out, v);
}

static void bval(struct js *j, const char *k, bool v)
{
	key(j, k);
	fputs(v ? "true" : "false", j->out);
}

static void json_value(struct js *j, const struct report *r, const struct rcol *c, const void *row)
{
	struct rval v;
	char buf[512];
	int i, t, top;

	rcol_value(r, c, row, &v, buf, sizeof(buf));
	switch (c->type) {
	case RT_U64:
		u64(j, c->name, v.u);
		break;
	case RT_I64:
		key(j, c->name);
		fprintf(j->out, "%" PRId64, v.i);
		break;
	case RT_PCT:
		dbl(j, c->name, v.f);
		break;
	case RT_STR:
		sval(j, c->name, v.s ? v.s : "");
		break;
	case RT_BOOL:
		bval(j, c->name, v.u);
		break;
	case RT_HIST:
		/* Up to the last bucket in use. */
		for (i = 0, top = -1; i < v.n; i++)
			if (v.v[i])
				top = i;
		open_(j, c->name, '[');
		for (i = 0; i <= top; i++)
			u64(j, NULL, v.v[i]);
		close_(j, ']');
		break;
	case RT_ARRAY:
		open_(j, c->name, '[');
		for (i = 0; i < v.n; i++)
			u64(j, NULL, v.v[i]);
		close_(j, ']');
		break;
	case RT_KINDS:
		open_(j, c->name, '{');
		for (i = 1; i < v.n; i++)
			if (v.v[i])
				u64(j, kmt_kind_name(i), v.v[i]);
		close_(j, '}');
		break;
	case RT_FRAMES:
		open_(j, c->name, '[');
		for (i = 0; i < v.n; i++)
			sval(j, NULL, site_name(r, v.v[i], buf, sizeof(buf)));
		close_(j, ']');
		break;
	case RT_MATRIX:
		open_(j, c->name, '[');
		for (i = 0; i <= KMT_MAX_ORDER; i++) {
			open_(j, NULL, '[');
			for (t = 0; t <= KMT_MIGRATE_TYPES; t++)
				u64(j, NULL, v.v[i * (KMT_MIGRATE_TYPES + 1) + t]);
			close_(j, ']');
		}
		close_(j, ']');
		break;
	}
}

static void json_fields(struct js *j, const struct report *r, const struct rtable *t, const void *row)
{
	const struct rcol *c;

	for (c = t->cols; c->name; c++)
		if (!(c->flags & RC_CSV_ONLY))
			json_value(j, r, c, row);
}

/* Does @t have any rows at all? (Nested lists are left out where none could be.) */
static bool any_rows(const struct report *r, const struct rtable *t)
{
	const void **p = NULL;
	size_t n = t->rows(r, &p);

	free(p);
	return n;
}

/* The rows of @t nested in the row @parent, as a list. */
static void json_list(struct js *j, const struct report *r, const struct rtable *t, const void *parent)
{
	const void **rows = NULL;
	size_t n = rtable_rows_of(r, t, parent, &rows), i;

	open_(j, t->json_key ? t->json_key : t->name, '[');
	for (i = 0; i < rtable_limit(r, n, true); i++) {
		open_(j, NULL, '{');
		json_fields(j, r, t, rows[i]);
		close_(j, '}');
	}
	close_(j, ']');
	free(rows);
}

static void json_table(struct js *j, const struct report *r, const struct rtable *t)
{
	const void **rows = NULL;
	size_t n = rtable_rows(r, t, &rows), i;
	int k;

	const char *name = t->json_key ? t->json_key : t->name;

	if (t->single) {
		open_(j, name, '{');
		if (n)
			json_fields(j, r, t, rows[0]);
		/* Tables nested in this one, as arrays. */
		for (k = 0; report_tables[k]; k++)
			if (report_tables[k]->parent && !report_tables[k]->rows_of &&
			    !strcmp(report_tables[k]->parent, t->name))
				json_table(j, r, report_tables[k]);
		close_(j, '}');
	} else {
		const struct rtable *sub[4];
		int nsub = 0;

		/* Tables with a list in each row. */
		for (k = 0; report_tables[k] && nsub < 4; k++)
			if (report_tables[k]->rows_of && !strcmp(report_tables[k]->parent, t->name) &&
			    any_rows(r, report_tables[k]))
				sub[nsub++] = report_tables[k];
		open_(j, name, '[');
		for (i = 0; i < rtable_limit(r, n, true); i++) {
			open_(j, NULL, '{');
			json_fields(j, r, t, rows[i]);
			for (k = 0; k < nsub; k++)
				json_list(j, r, sub[k], rows[i]);
			close_(j, '}');
		}
		close_(j, ']');
	}
	free(rows);
}

void report_json(const struct report *r, FILE *out)
{
	const struct kmt_file_info *fi = kmt_file_info(r->f);
	struct js j = { .out = out, .depth = 1, .first = { true, true } };
	int k;

	fputc('{', out);
	u64(&j, "kmemtrace_report", 2);
	sval(&j, "file", r->path);
	bval(&j, "hashed_pointers", r->hash.on);
	u64(&j, "file_version", (uint64_t)fi->version);
	sval(&j, "kernel", fi->uname ? fi->uname : "");
	sval(&j, "clock", fi->clock ? fi->clock : "");
	u64(&j, "cpus", (uint64_t)fi->cpu_count);
	for (k = 0; report_tables[k]; k++) {
		const struct rtable *t = report_tables[k];

		if (!t->parent && !t->csv_only && (t->section & r->sections))
			json_table(&j, r, t);
	}
	close_(&j, '}');
	fputc('\n', out);
}
