/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace diff, the comparison (src/diff/diff.h): both traces go through the
 * same analysis as report; each compared table's rows are read through
 * the report's column tables, keyed, summed where keys repeat, merged and
 * sorted by the size of the change.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "diff.h"

const char *const diff_match_names[] = {
	[MATCH_AUTO] = "auto", [MATCH_OFFSET] = "offset", [MATCH_FUNCTION] = "function", NULL,
};

/* The machine a uname names: its last word ("x86_64"). */
static const char *machine(const char *uname)
{
	const char *sp = uname ? strrchr(uname, ' ') : NULL;

	return sp ? sp + 1 : uname;
}

static int open_side(struct dside *s, const char *path, struct kmt_model_opts *mo, double t_start,
		     double t_end, int jobs)
{
	const struct kmt_summary *sum;
	size_t len = 0;

	s->path = path;
	s->r = (struct report){ .path = path, .sections = section_all(), .t_start = t_start,
				.t_end = t_end };
	if (input_open(&s->a, path, jobs))
		return EXIT_FAIL;
	s->opened = true;
	s->r.f = s->a.f;
	s->r.syms = s->a.syms;
	report_recorded(&s->r, s->a.dec, mo->cache);
	if (input_run(&s->a, NULL, mo, NULL, t_start, t_end))
		return EXIT_FAIL;
	s->r.m = s->a.m;
	s->r.t0 = s->a.t0;
	sum = kmt_model_summary(s->a.m);
	s->span = (double)(kmt_summary_span(sum)) / 1e9;
	if (sum->affected_by_loss) {
		s->lower_bound = true;
		len += (size_t)snprintf(s->why + len, sizeof(s->why) - len, "%s%s", len ? "; " : "",
					sum->damaged_gaps ? "parts of the file could not be read" :
					sum->truncated_cpus ? "its recording was cut short" : "it lost events");
	}
	if (sum->partial_allocs || sum->partial_frees) {
		s->lower_bound = true;
		snprintf(s->why + len, sizeof(s->why) - len, "%s%s", len ? "; " : "",
			 "it was recorded with filters (some allocations or frees were left out)");
	}
	return EXIT_OK;
}

/* The new side, on a thread of its own: its messages kept for later. */
struct side_job {
	struct dside *s;
	const char *path;
	struct kmt_model_opts *mo;
	double t_start, t_end;
	int jobs, ret;
	char *msg;
	size_t len;
};

static void *side_main(void *arg)
{
	struct side_job *j = arg;
	FILE *f = open_memstream(&j->msg, &j->len);

	msg_capture(f);
	j->ret = open_side(j->s, j->path, j->mo, j->t_start, j->t_end, j->jobs);
	msg_capture(NULL);
	if (f)
		fclose(f);
	return NULL;
}

/*
 * Both sides at once with -j 2 and more, each read with half the threads:
 * the old one here, the new one on a thread. What is said is what reading
 * them in turn says: the old side's messages, then the new side's, and
 * nothing of the new one if the old one failed (it was not opened then).
 */
static int open_sides(struct diff *d, const char *old, const char *new_, struct kmt_model_opts *mo,
		      struct kmt_model_opts *mo2, double t_start, double t_end, int jobs)
{
	int n = input_jobs(jobs), ret;
	struct side_job j = { &d->side[1], new_, mo2, t_start, t_end, MAX(n / 2, 1), 0, NULL, 0 };
	pthread_t th;

	if (n < 2 || pthread_create(&th, NULL, side_main, &j))
		return open_side(&d->side[0], old, mo, t_start, t_end, jobs) ||
		       open_side(&d->side[1], new_, mo2, t_start, t_end, jobs) ? EXIT_FAIL : EXIT_OK;
	ret = open_side(&d->side[0], old, mo, t_start, t_end, MAX(n - n / 2, 1));
	pthread_join(th, NULL);
	if (!ret && j.msg)
		fputs(j.msg, stderr);
	free(j.msg);
	return ret || j.ret ? EXIT_FAIL : EXIT_OK;
}

int diff_open(struct diff *d, const char *old, const char *new_, struct kmt_model_opts *mo,
	      double t_start, double t_end, int jobs)
{
	const struct kmt_file_info *a, *b;
	struct kmt_model_opts mo2 = *mo;
	const char *ma, *mb;

	if (open_sides(d, old, new_, mo, &mo2, t_start, t_end, jobs))
		return EXIT_FAIL;
	a = kmt_file_info(d->side[0].a.f);
	b = kmt_file_info(d->side[1].a.f);
	ma = machine(a->uname);
	mb = machine(b->uname);
	if (ma && mb && strcmp(ma, mb))
		return error("%s is a trace of an %s kernel and %s of an %s one: their call sites and "
			     "caches cannot be compared", old, ma, new_, mb);
	if (a->kernel_long_size != b->kernel_long_size || a->big_endian != b->big_endian)
		return error("%s is a trace of a %d-bit %s-endian kernel and %s of a %d-bit %s-endian "
			     "one: they cannot be compared", old, a->kernel_long_size * 8,
			     a->big_endian ? "big" : "little", new_, b->kernel_long_size * 8,
			     b->big_endian ? "big" : "little");
	return EXIT_OK;
}

void diff_close(struct diff *d)
{
	int s, t;
	size_t i;

	for (t = 0; t < d->nt; t++) {
		for (i = 0; i < d->t[t].n; i++) {
			free(d->t[t].rows[i].key);
			free(d->t[t].rows[i].label);
			free(d->t[t].rows[i].function);
		}
		free(d->t[t].rows);
	}
	for (s = 0; s < 2; s++)
		if (d->side[s].opened)
			input_close(&d->side[s].a);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The functions of side @k's call sites, sorted (to free with free_names); NULL if none. */
static char **site_functions(const struct diff *d, int k, size_t *n)
{
	const struct kmt_site *s = kmt_model_sites(d->side[k].a.m, n);
	char **v = calloc(*n + 1, sizeof(*v)), fn[256];
	size_t i;

	for (i = 0; v && i < *n; i++)
		v[i] = strdup(site_function(&d->side[k].r, s[i].addr, fn, sizeof(fn)));
	for (i = 0; v && i < *n; i++)
		if (!v[i])
			*n = i;		/* out of memory: the ones before */
	if (v)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

static void free_names(char **v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/*
 * Offsets into functions mean the same code only in the same build: the
 * same kernel release, its functions at the same distances from each
 * other (KASLR moves them all by one amount). The functions compared are
 * those both traces have call sites in: a trace's kallsyms may hold only
 * the symbols its own events name (record's default), and names the
 * others' neighbours without their extent.
 */
static bool same_build(struct diff *d)
{
	const struct kmt_file_info *a = kmt_file_info(d->side[0].a.f), *b = kmt_file_info(d->side[1].a.f);
	size_t n, i, nb = 0, checked = 0;
	const struct kmt_site *s = kmt_model_sites(d->side[0].a.m, &n);
	char **bfn = NULL, fn[256], *key = fn;
	uint64_t shift = 0;
	bool ret = false;

	if (!a->uname || !b->uname || strcmp(a->uname, b->uname)) {
		snprintf(d->match_why, sizeof(d->match_why), "the kernels differ (%s; %s)",
			 a->uname ? a->uname : "unknown", b->uname ? b->uname : "unknown");
		return false;
	}
	bfn = site_functions(d, 1, &nb);
	for (i = 0; i < n; i++) {
		uint64_t alo, ahi, blo, bhi;

		site_function(&d->side[0].r, s[i].addr, fn, sizeof(fn));
		if (!bfn || !bsearch(&key, bfn, nb, sizeof(*bfn), cmp_str) ||
		    kmt_symbols_find(d->side[0].a.syms, fn, &alo, &ahi) != 1 ||
		    kmt_symbols_find(d->side[1].a.syms, fn, &blo, &bhi) != 1)
			continue;
		if (checked++ == 0)
			shift = blo - alo;
		if (blo - alo != shift || bhi - blo != ahi - alo) {
			snprintf(d->match_why, sizeof(d->match_why),
				 "the same release (%s) but another build: %s moved or changed size", a->uname, fn);
			goto out;
		}
	}
	if (!checked) {
		snprintf(d->match_why, sizeof(d->match_why), "no function has call sites in both traces");
		goto out;
	}
	snprintf(d->match_why, sizeof(d->match_why), "the same kernel build (%s; %zu functions at the "
		 "same places)", a->uname, checked);
	ret = true;
out:
	free_names(bfn, nb);
	return ret;
}

/* One side's rows of a table: key, function, values. */
struct srow {
	char *key, *label, *function;
	uint64_t v[DIFF_FIELDS];
};

static int cmp_srow(const void *a, const void *b)
{
	return strcmp(((const struct srow *)a)->key, ((const struct srow *)b)->key);
}

static char *value_str(const struct report *r, const struct rcol *c, const void *row)
{
	struct rval v;
	char buf[512];

	rcol_value(r, c, row, &v, buf, sizeof(buf));
	if (c->type == RT_STR)
		return strdup(v.s ? v.s : "");
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v.u);
	return strdup(buf);
}

/* The rows of @t on side @s, keyed and sorted, repeated keys summed; -1 on ENOMEM. */
static ssize_t side_rows(struct diff *d, int s, struct dtable *t, const struct rtable *rt,
			 const struct rcol *key, const struct rcol *func, struct srow **out)
{
	const struct report *r = &d->side[s].r;
	struct report plain = *r;	/* keys: a merged cache by its name alone */
	const void **rows = NULL;
	size_t n = rtable_rows(r, rt, &rows), i, k = 0;
	struct srow *v = calloc(n + 1, sizeof(*v));
	int f;

	if (!v) {
		free(rows);
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct rval x;
		char buf[64];
		bool any = false;

		for (f = 0; f < t->nfields; f++) {
			rcol_value(r, t->src[f], rows[i], &x, buf, sizeof(buf));
			v[k].v[f] = x.u;
			any |= x.u != 0;
		}
		if (!any)
			continue;	/* e.g. a call site that only frees */
		plain.plain_names = true;
		v[k].key = value_str(&plain, key, rows[i]);
		v[k].label = value_str(r, key, rows[i]);
		v[k].function = func ? value_str(r, func, rows[i]) : NULL;
		if (!v[k].key || !v[k].label || (func && !v[k].function)) {
			k++;
			goto oom;
		}
		if (!strcmp(v[k].label, v[k].key)) {
			free(v[k].label);
			v[k].label = NULL;
		}
		k++;
	}
	free(rows);
	qsort(v, k, sizeof(*v), cmp_srow);
	/* Sum rows whose keys repeat (call sites by function name, pages by order). */
	for (i = 0, n = 0; i < k; i++) {
		if (n && !strcmp(v[n - 1].key, v[i].key)) {
			for (f = 0; f < t->nfields; f++)
				v[n - 1].v[f] += v[i].v[f];
			free(v[i].key);
			free(v[i].label);
			free(v[i].function);
		} else {
			v[n++] = v[i];
		}
	}
	*out = v;
	return (ssize_t)n;
oom:
	free(rows);
	for (i = 0; i < k; i++) {
		free(v[i].key);
		free(v[i].label);
		free(v[i].function);
	}
	free(v);
	return -1;
}

static int cmp_drow(const void *a, const void *b, void *arg)
{
	const struct drow *x = a, *y = b;
	const struct dtable *t = arg;
	double dx = fabs(diff_value(t, x, 1, t->sort) - diff_value(t, x, 0, t->sort));
	double dy = fabs(diff_value(t, y, 1, t->sort) - diff_value(t, y, 0, t->sort));

	if (dx != dy)
		return dx < dy ? 1 : -1;
	return strcmp(x->key, y->key);
}

static int build_table(struct diff *d, struct dtable *t, const struct dspec *spec)
{
	const struct rtable *rt = rtable_find(spec->table);
	const struct rcol *key, *func = NULL;
	struct srow *v[2] = { NULL, NULL };
	ssize_t n[2];
	size_t i = 0, j = 0;
	int f, s;

	t->spec = spec;
	for (f = 0; spec->fields[f]; f++) {
		t->cols[t->nfields] = dfield_find(spec->fields[f]);
		t->src[t->nfields++] = rtable_col(rt, spec->fields[f]);
	}
	if (spec->function)
		func = rtable_col(rt, spec->function);
	key = func && d->match != MATCH_OFFSET ? func : rtable_col(rt, dspec_key(spec)->name);
	for (s = 0; s < 2; s++)
		if ((n[s] = side_rows(d, s, t, rt, key, func, &v[s])) < 0)
			goto oom;
	t->rows = calloc((size_t)(n[0] + n[1]) + 1, sizeof(*t->rows));
	if (!t->rows)
		goto oom;
	/* Merge the two sorted lists. */
	while (i < (size_t)n[0] || j < (size_t)n[1]) {
		int c = i == (size_t)n[0] ? 1 : j == (size_t)n[1] ? -1 : strcmp(v[0][i].key, v[1][j].key);
		struct drow *row = &t->rows[t->n++];

		if (c <= 0) {
			row->key = v[0][i].key;
			row->label = v[0][i].label;
			row->function = v[0][i].function;
			row->in[0] = true;
			memcpy(row->v[0], v[0][i].v, sizeof(row->v[0]));
			i++;
		}
		if (c >= 0) {
			if (row->key) {
				free(v[1][j].key);
				free(v[1][j].function);
				/* Either side may know the aliases (a file of another tool does not). */
				if (!row->label)
					row->label = v[1][j].label;
				else
					free(v[1][j].label);
			} else {
				row->key = v[1][j].key;
				row->label = v[1][j].label;
				row->function = v[1][j].function;
			}
			row->in[1] = true;
			memcpy(row->v[1], v[1][j].v, sizeof(row->v[1]));
			j++;
		}
	}
	free(v[0]);
	free(v[1]);
	t->diff = d;
	for (f = 0; f < t->nfields; f++)
		if (d->sort && !strcmp(t->cols[f]->sort, d->sort))
			t->sort = f;
	if (t->n > 1)
		qsort_r(t->rows, t->n, sizeof(*t->rows), cmp_drow, t);
	return EXIT_OK;
oom:
	for (s = 0; s < 2; s++) {
		for (i = 0; v[s] && n[s] > 0 && i < (size_t)n[s]; i++) {
			free(v[s][i].key);
			free(v[s][i].label);
			free(v[s][i].function);
		}
		free(v[s]);
	}
	return error("out of memory");
}

/* The summary's numbers that say at once what changed: the TOTAL. */
static void build_total(struct diff *d)
{
	const struct rtable *t = rtable_find("summary");
	struct dtotal *x = &d->total;
	int f, s;

	for (f = 0; f < DIFF_TOTALS; f++) {
		x->src[f] = rtable_col(t, diff_total_cols[f].name);
		for (s = 0; s < 2; s++) {
			const struct report *r = &d->side[s].r;
			struct rval v;
			char buf[64];

			rcol_value(r, x->src[f], kmt_model_summary(r->m), &v, buf, sizeof(buf));
			x->v[s][f] = v.u;
			x->recorded[s][f] = diff_total_cols[f].flags & DC_PAGES ? !r->no_pages : !r->no_slab;
		}
	}
}

int diff_build(struct diff *d)
{
	int k;

	if (d->match == MATCH_AUTO) {
		d->match = same_build(d) ? MATCH_OFFSET : MATCH_FUNCTION;
	} else {
		same_build(d);
		snprintf(d->match_why, sizeof(d->match_why), "as asked (--match)");
	}
	for (k = 0; k < DIFF_TABLES && diff_specs[k].name; k++) {
		if (build_table(d, &d->t[k], &diff_specs[k]))
			return EXIT_FAIL;
		d->nt++;
	}
	build_total(d);
	return EXIT_OK;
}

double diff_value(const struct dtable *t, const struct drow *row, int side, int field)
{
	const struct diff *d = t->diff;
	double v = (double)row->v[side][field];

	/* A level (what is live at the end) is not a rate: never divided by the span. */
	if (d->per_second && !(t->cols[field]->flags & DC_LEVEL))
		return d->side[side].span > 0 ? v / d->side[side].span : 0;
	return v;
}

double diff_total(const struct diff *d, int side, int field)
{
	double v = (double)d->total.v[side][field];

	if (!d->total.recorded[side][field])
		return NAN;
	if (d->per_second && !(diff_total_cols[field].flags & DC_LEVEL))
		return d->side[side].span > 0 ? v / d->side[side].span : 0;
	return v;
}

bool diff_differs(const struct diff *d)
{
	size_t i;
	int k, f;

	for (f = 0; f < DIFF_TOTALS; f++)
		if (d->total.recorded[0][f] != d->total.recorded[1][f] ||
		    (d->total.recorded[0][f] && diff_total(d, 0, f) != diff_total(d, 1, f)))
			return true;
	for (k = 0; k < d->nt; k++) {
		const struct dtable *t = &d->t[k];
		unsigned int missing = diff_unrecorded(d, t);

		if (missing == 1 || missing == 2)
			return true;
		for (i = 0; i < t->n; i++) {
			if (!t->rows[i].in[0] || !t->rows[i].in[1])
				return true;
			for (f = 0; f < t->nfields; f++)
				if (diff_value(t, &t->rows[i], 0, f) != diff_value(t, &t->rows[i], 1, f))
					return true;
		}
	}
	return false;
}

double diff_pct(const struct dtable *t, const struct drow *row, int field)
{
	double o = diff_value(t, row, 0, field), n = diff_value(t, row, 1, field);

	return o > 0 ? 100.0 * (n - o) / o : NAN;
}

const struct dtable *diff_table(const struct diff *d, const char *name)
{
	int k;

	for (k = 0; k < d->nt; k++)
		if (!strcmp(d->t[k].spec->name, name))
			return &d->t[k];
	return NULL;
}

unsigned int diff_unrecorded(const struct diff *d, const struct dtable *t)
{
	unsigned int sec = rtable_find(t->spec->table)->section, s, out = 0;

	for (s = 0; s < 2; s++)
		if (d->side[s].r.unrecorded & sec)
			out |= 1u << s;
	return out;
}
