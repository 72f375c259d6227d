/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace report as text: the sections' tables (report-cols*.c, or their
 * text views) laid out by text_table() in human units, call sites as
 * symbol+offset from the file's kallsyms; the summary a list of items; the
 * prose around the tables.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "report.h"

/* Formatting into util's rotating buffers (fmt_slot()), so several fit in one printf. */
static const char *bytes(double v)
{
	return human_bytes(v, fmt_slot());
}

static const char *dur(uint64_t ns)
{
	return human_duration(ns, fmt_slot(), 48);
}

/* Seconds from @t0, "12.000345". */
static const char *secs(uint64_t t0, uint64_t ts)
{
	return fmt_secs(t0, ts, fmt_slot(), 48);
}

static const char *pct(uint64_t part, uint64_t whole)
{
	char *out = fmt_slot();

	snprintf(out, 48, "%.1f%%", whole ? 100.0 * (double)part / (double)whole : 0.0);
	return out;
}

/* One line of prose, wrapped with its later lines indented by @indent. */
static void __attribute__((format(printf, 4, 5)))
para(const struct report *r, FILE *out, int indent, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	term_wrap(out, line, term_prose(r->wide ? 0 : r->width), indent);
}

/* A summary line: "  label   text", the text wrapped under itself. */
#define item(r, out, label, fmt, ...) para(r, out, 25, "  %-22s " fmt, label, __VA_ARGS__)

/* "1 object", "2,048 objects". */
static const char *nouns(uint64_t v, const char *one, const char *many)
{
	char *out = fmt_slot();

	snprintf(out, 48, "%s %s", fmt_num(v), plural((double)v, one, many));
	return out;
}

/*
 * The memory events the file has none of, and the sections left out for
 * it (or, with --cache, those it does not select).
 */
static void not_recorded(const struct report *r, FILE *out)
{
	unsigned int left = r->sections & r->unrecorded & ~SEC_SAYS_UNRECORDED;
	char list[1024];
	size_t n = 0;
	int i;

	if (!r->nr_not_recorded && !left && !r->cache)
		return;
	for (i = 0; i < r->nr_not_recorded && n < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? " " : "", r->not_recorded[i]);
	if (r->nr_not_recorded)
		item(r, out, "not recorded", "%s", list);
	if (r->cache)
		item(r, out, "selected", "objects of cache %s only (--cache): no page, per-CPU or vmalloc "
		     "events", r->cache);
	for (i = 0, n = 0; left >> i && n < sizeof(list); i++)
		if (left & (1u << i))
			n += (size_t)snprintf(list + n, sizeof(list) - n, " %s", section_name(1u << i));
	if (left)
		para(r, out, 25, "                         sections left out:%s", list);
}

/*
 * The summary: its items in order, each a line "  label   text" whose text
 * wraps under itself. An item's text comes from its printer, NULL where it
 * does not apply; a few items are lines of their own (no label).
 */
typedef const char *sum_text(const struct report *r, const struct kmt_summary *s, char *b, size_t n);
typedef void sum_lines(const struct report *r, const struct kmt_summary *s, FILE *out);

struct sum_item {
	const char *label;
	sum_text *text;
	sum_lines *lines;		/* instead of label and text */
	unsigned int needs;		/* NEEDS_SLAB, NEEDS_PAGES: left out where the file has none */
};

static const char *__attribute__((format(printf, 3, 4))) sum(char *b, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, n, fmt, ap);
	va_end(ap);
	return b;
}

#define FI (kmt_file_info(r->f))
#define SUM_TEXT(name) static const char *name(const struct report *r, const struct kmt_summary *s, char *b, size_t n)

SUM_TEXT(s_file) { return sum(b, n, "%s (trace.dat v%d, %s)", r->path, FI->version, FI->compression); }
SUM_TEXT(s_kernel)
{
	return !FI->uname ? NULL : sum(b, n, "%s, %s, clock %s", FI->uname,
				       nouns((uint64_t)FI->cpu_count, "CPU", "CPUs"), FI->clock ? FI->clock : "?");
}
/* Times count from the trace's first event; its own time is stated here, once. */
SUM_TEXT(s_span)
{
	return sum(b, n, "%s, from %s to %s s", dur(kmt_summary_span(s)), secs(r->t0, s->first_ts),
		   secs(r->t0, s->last_ts));
}
SUM_TEXT(s_start)
{
	return sum(b, n, "%s s of the %s clock (times count from it)", secs(0, r->t0),
		   FI->clock ? FI->clock : "trace");
}
SUM_TEXT(s_events) { return fmt_num(s->events); }

/* What the recording's kernel could not trace that 6.18 does, a line each (kmt_decode_lacks()). */
static void s_lacks(const struct report *r, const struct kmt_summary *s, FILE *out)
{
	const char *why[4];
	size_t i, n = kmt_decode_file_lacks(r->f, why, 4);

	for (i = 0; i < n; i++)
		item(r, out, i ? "" : "kernel lacks", "%s", why[i]);
}

static void s_by_kind(const struct report *r, const struct kmt_summary *s, FILE *out)
{
	int k;

	for (k = 1; k < KMT_EV_NR; k++)
		if (s->by_kind[k])
			fprintf(out, "    %-22s %s\n", kmt_kind_name(k), fmt_num(s->by_kind[k]));
}

static void s_not_recorded(const struct report *r, const struct kmt_summary *s, FILE *out)
{
	not_recorded(r, out);
}

SUM_TEXT(s_allocs) { return sum(b, n, "%s (%s failed)", fmt_num(s->allocs), fmt_num(s->failures)); }
SUM_TEXT(s_frees)
{
	char more[128] = "";

	/* A recording that left allocations out: a free of a freed address (allocated unseen between). */
	if (s->unseen_allocs)
		snprintf(more, sizeof(more), "; %s of addresses freed again, allocated where the recording did "
			 "not look", fmt_num(s->unseen_allocs));
	return sum(b, n, "%s of them; %s of objects allocated before the trace%s%s%s", fmt_num(s->frees),
		   fmt_num(s->preexisting_frees), s->filtered ? " or by other tasks" : "",
		   s->partial_allocs ? " or excluded by the recording's filter" : "", more);
}
SUM_TEXT(s_req) { return bytes((double)s->bytes_req); }
SUM_TEXT(s_alloc) { return bytes((double)s->bytes_alloc); }
SUM_TEXT(s_freed) { return sum(b, n, "%s (of objects allocated in the trace)", bytes((double)s->bytes_freed)); }
SUM_TEXT(s_net)
{
	if (!s->unseen_bytes)
		return bytes((double)s->bytes_alloc - (double)s->bytes_freed);
	return sum(b, n, "%s, of it %s freed where the trace shows no free (the kernel's untraced frees: "
		   "unseen in the caches' table)", bytes((double)s->bytes_alloc - (double)s->bytes_freed),
		   bytes((double)s->unseen_bytes));
}
SUM_TEXT(s_frag)
{
	uint64_t waste = kmt_waste(s->bytes_req, s->bytes_alloc);

	return sum(b, n, "%s (%s of allocated)", bytes((double)waste), pct(waste, s->bytes_alloc));
}
SUM_TEXT(s_cross) { return sum(b, n, "%s (%s of frees)", fmt_num(s->cross_cpu_frees), pct(s->cross_cpu_frees, s->frees)); }
SUM_TEXT(s_live)
{
	return sum(b, n, "%s, %s", nouns(s->live_objects, "object", "objects"), bytes((double)s->live_bytes));
}
SUM_TEXT(s_salvaged)
{
	return !FI->salvaged ? NULL : "the options at the end of the file are lost, so it may be a partial "
		"recording: a free of a freed address is not a double free; a live object is not a leak";
}
SUM_TEXT(s_partial)
{
	if (FI->salvaged || !(s->partial_allocs || s->partial_frees))
		return NULL;
	return sum(b, n, "only some %s%s%s were recorded (pid or event filters): %s%s%s",
		   s->partial_allocs ? "allocations" : "", s->partial_allocs && s->partial_frees ? " and " : "",
		   s->partial_frees ? "frees" : "",
		   s->partial_allocs ? "a free of a freed address is not a double free" : "",
		   s->partial_allocs && s->partial_frees ? "; " : "",
		   s->partial_frees ? "a live object is not a leak" : "");
}
SUM_TEXT(s_large)
{
	return !s->kmalloc_large_merged ? NULL :
	       sum(b, n, "%s traced twice by the kernel, counted once", fmt_num(s->kmalloc_large_merged));
}
SUM_TEXT(s_pages)
{
	return sum(b, n, "%s (%s), %s (%s), %s failed", nouns(s->page_allocs, "allocation", "allocations"),
		   nouns(s->pages_allocated, "page", "pages"), nouns(s->page_frees, "free", "frees"),
		   nouns(s->pages_freed, "page", "pages"), fmt_num(s->page_failures));
}
SUM_TEXT(s_pcpu)
{
	return !(s->pcpu_allocs || s->pcpu_frees) ? NULL :
	       sum(b, n, "%s (%s), %s", nouns(s->pcpu_allocs, "allocation", "allocations"),
		   bytes((double)s->pcpu_bytes), nouns(s->pcpu_frees, "free", "frees"));
}
SUM_TEXT(s_vmalloc)
{
	return !(s->vmap_allocs || s->vmap_frees) ? NULL :
	       sum(b, n, "%s (%s), %s, %s live at the end (%s)", nouns(s->vmap_allocs, "area", "areas"),
		   bytes((double)s->vmap_bytes), nouns(s->vmap_frees, "free", "frees"), fmt_num(s->vmap_live),
		   bytes((double)s->vmap_live_bytes));
}

/* One figure, as record, info and check give it: the ring buffer's count where the file has it. */
SUM_TEXT(s_lost)
{
	size_t o = 0;
	int i;

	if (!s->affected_by_loss)
		return "0";
	n = MIN(n, (size_t)1024);	/* as long as the line always was */
	o += (size_t)snprintf(b + o, n - o, "%s", fmt_num(s->lost_events));
	for (i = 0; i < s->nr_cpus && o < n; i++)
		if (s->lost_by_cpu[i])
			o += (size_t)snprintf(b + o, n - o, ", CPU %d: %s", i, fmt_num(s->lost_by_cpu[i]));
	if (s->lost_gaps && o < n)
		o += (size_t)snprintf(b + o, n - o, ", in %s", nouns(s->lost_gaps, "gap", "gaps"));
	if (s->lost_after_death && o < n)
		o += (size_t)snprintf(b + o, n - o, "; %s dropped by the instance after its recorder died "
				      "(nobody read it): not the recording's", fmt_num(s->lost_after_death));
	if (s->lost_by_ring && o < n)
		snprintf(b + o, n - o, " (the ring buffer's count)");
	else if (s->lost_pages_unknown && o < n)
		snprintf(b + o, n - o, " (%s of the gaps had no count: more were lost)", fmt_num(s->lost_pages_unknown));
	return b;
}
SUM_TEXT(s_damaged)
{
	return !s->affected_by_loss || !s->damaged_gaps ? NULL :
	       sum(b, n, "%s of the data could not be read: the events there are missing (the warnings say "
		   "which bytes)", nouns(s->damaged_gaps, "part", "parts"));
}
SUM_TEXT(s_truncated)
{
	return !s->affected_by_loss || !s->truncated_cpus ? NULL :
	       sum(b, n, "on %s, from %s s on (e.g. the disk was full): events after that are missing",
		   nouns((uint64_t)s->truncated_cpus, "CPU", "CPUs"), secs(s->first_ts, s->truncated_ts));
}

static void s_affected(const struct report *r, const struct kmt_summary *s, FILE *out)
{
	if (!s->affected_by_loss)
		return;
	para(r, out, 2, "  RESULTS ARE AFFECTED BY %s: %s and %s are uncertain (a free or allocation may "
	     "be in a gap); they are counted apart, never reported as leaks or misuse.%s",
	     s->truncated_cpus || s->damaged_gaps ? "MISSING EVENTS" : "LOST EVENTS",
	     nouns(s->uncertain_objects, "object", "objects"),
	     nouns(s->uncertain_misuse, "misuse finding", "misuse findings"),
	     s->lost_events > s->lost_after_death || s->lost_pages_unknown ? " Record with a larger buffer (-b)." : "");
}
#undef SUM_TEXT
#undef FI

static const struct sum_item sum_items[] = {
	{ "file", s_file }, { "kernel", s_kernel }, { .lines = s_lacks }, { "trace span", s_span },
	{ "trace start", s_start },
	{ "events", s_events }, { .lines = s_by_kind }, { .lines = s_not_recorded },
	{ "slab allocations", s_allocs, .needs = NEEDS_SLAB }, { "slab frees", s_frees, .needs = NEEDS_SLAB },
	{ "bytes requested", s_req, .needs = NEEDS_SLAB }, { "bytes allocated", s_alloc, .needs = NEEDS_SLAB },
	{ "bytes freed", s_freed, .needs = NEEDS_SLAB }, { "net", s_net, .needs = NEEDS_SLAB },
	{ "internal fragmentation", s_frag, .needs = NEEDS_SLAB },
	{ "cross-CPU frees", s_cross, .needs = NEEDS_SLAB }, { "live at the end", s_live, .needs = NEEDS_SLAB },
	{ "settings unknown", s_salvaged, .needs = NEEDS_SLAB },
	{ "partial recording", s_partial, .needs = NEEDS_SLAB },
	{ "large kmallocs", s_large }, { "pages", s_pages, .needs = NEEDS_PAGES }, { "per-CPU", s_pcpu },
	{ "vmalloc", s_vmalloc }, { "events lost", s_lost }, { "damaged file", s_damaged },
	{ "recording truncated", s_truncated }, { .lines = s_affected },
	{ NULL },
};

void text_summary(const struct report *r, FILE *out)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);
	const struct sum_item *it;
	char buf[2048];
	const char *txt;

	fprintf(out, "SUMMARY\n");
	for (it = sum_items; it->label || it->lines; it++) {
		if ((it->needs & NEEDS_SLAB && r->no_slab) || (it->needs & NEEDS_PAGES && r->no_pages))
			continue;
		if (it->lines)
			it->lines(r, s, out);
		else if ((txt = it->text(r, s, buf, sizeof(buf))))
			item(r, out, it->label, "%s", txt);
	}
}

/* The -s keys say a column matters: it is never left out to fit. */
static bool sorted_by(const struct report *r, const struct rcol *c)
{
	int i;

	for (i = 0; c->sort && i < r->nr_sort; i++)
		if (!strcmp(r->sort[i], c->sort))
			return true;
	return false;
}

/*
 * Where @c is in @t's list of columns left out to fit (1: first), 0 if it
 * is not: names apart by spaces are ranks, names joined by commas share one.
 */
static int drop_rank(const struct report *r, const struct rtable *t, const struct rcol *c)
{
	const char *p = t->narrow;
	size_t n = strlen(c->name);
	int rank = 1;

	if (!p || sorted_by(r, c))
		return 0;
	while (*p) {
		if (!strncmp(p, c->name, n) && (!p[n] || p[n] == ' ' || p[n] == ','))
			return rank;
		p += strcspn(p, " ,");
		rank += *p == ' ';
		p += strspn(p, " ,");
	}
	return 0;
}

/* A row's cell of @c, as the text shows it. */
static const char *cell(const struct report *r, const struct rcol *c, const void *row, char *buf, size_t len)
{
	struct rval v;
	const char *txt;

	if (c->text)
		return c->text(r, c, row, buf, len);
	rcol_value(r, c, row, &v, buf, len);
	txt = rval_text(c, &v, buf, len);
	if (c->type == RT_U64 && !v.u && (c->flags & (RC_DASH0 | RC_BLANK0)))
		txt = c->flags & RC_DASH0 ? "-" : "";
	return txt;
}

void report_fit(const struct report *r, struct term_col *c, int n, int indent)
{
	unsigned int gave = term_fit(c, n, r->width, r->wide, indent);

	if (r->fitted)
		*r->fitted |= gave;
}

void text_more(FILE *out, size_t left)
{
	if (left)
		fprintf(out, "  (%s more %s; -n 0 shows all)\n", fmt_num(left), plural((double)left, "row", "rows"));
}

#define MAX_COLS 32

/* A text table's columns: the titled ones of @t, or of its text view. */
struct tcols {
	const struct rcol *c[MAX_COLS];
	struct term_col tc[MAX_COLS];
	bool used[MAX_COLS];		/* RC_HIDE0: not 0 in some row shown */
	int n;
};

static void tcols_init(const struct report *r, const struct rtable *t, struct tcols *k)
{
	const struct rcol *c;

	k->n = 0;
	for (c = t->text ? t->text->cols : t->cols; c->name && k->n < MAX_COLS; c++)
		if (c->title) {
			k->c[k->n] = c;
			k->used[k->n] = false;
			k->tc[k->n++] = (struct term_col){ .title = c->title, .width = c->width,
							   .drop = drop_rank(r, t, c), .name = c->flags & RC_NAME,
							   .longest = term_cols(c->title) };
		}
}

/* What @row needs of the layout: its widest cells, and whether it is 0 where 0 hides. */
static void tcols_measure(const struct report *r, struct tcols *k, const void *row)
{
	char buf[512];
	struct rval v;
	int j;

	for (j = 0; j < k->n; j++) {
		if (k->tc[j].width < 0 && !(k->c[j]->flags & RC_FIT_TITLE))
			k->tc[j].longest = MAX(k->tc[j].longest, term_cols(cell(r, k->c[j], row, buf, sizeof(buf))));
		if (k->c[j]->flags & RC_HIDE0) {
			rcol_value(r, k->c[j], row, &v, buf, sizeof(buf));
			k->used[j] |= v.u != 0;
		}
	}
}

/* The columns 0 in every row shown (RC_HIDE0) left out. */
static void tcols_drop_unused(struct tcols *k)
{
	int j, m = 0;

	for (j = 0; j < k->n; j++)
		if (!(k->c[j]->flags & RC_HIDE0) || k->used[j]) {
			k->c[m] = k->c[j];
			k->tc[m++] = k->tc[j];
		}
	k->n = m;
}

static bool text_shows(const struct report *r, const struct rtable *t, const void *row)
{
	return !t->text_keep || t->text_keep(r, row);
}

/* One row; cells of the groups it repeats of the row above (@level) blank. */
static void text_row(const struct report *r, const struct tcols *k, const void *row, int level, FILE *out)
{
	char buf[512];
	int j;

	fputc(' ', out);
	for (j = 0; j < k->n; j++)
		if (k->tc[j].shown)
			term_cell(out, &k->tc[j], k->c[j]->group && level >= k->c[j]->group ? "" :
				  cell(r, k->c[j], row, buf, sizeof(buf)));
	fputc('\n', out);
}

size_t text_table(const struct report *r, const struct rtable *t, FILE *out)
{
	const struct rtext *x = t->text;
	const void **rows = NULL, *prev = NULL;
	size_t n = x && x->rows ? x->rows(r, &rows) : rtable_rows(r, t, &rows), i, k, left = 0;
	/* A matrix (whole) shows every row, whatever -n. */
	size_t lim = r->tables.top && !(x && x->whole) ? (size_t)r->tables.top : n;
	const struct rtable *sub = NULL;
	struct tcols tc;
	int j;

	for (j = 0; report_tables[j]; j++)
		if (report_tables[j]->text_after && !strcmp(report_tables[j]->parent, t->name))
			sub = report_tables[j];
	tcols_init(r, t, &tc);
	for (i = 0, k = 0; i < n && k < lim; i++)
		if (text_shows(r, t, rows[i])) {
			k++;
			tcols_measure(r, &tc, rows[i]);
		}
	tcols_drop_unused(&tc);
	if (x && x->whole)
		term_fit(tc.tc, tc.n, 0, r->wide, 1);
	else
		report_fit(r, tc.tc, tc.n, 1);
	if (!k && x && x->empty) {
		fprintf(out, "%s\n", x->empty);
	} else {
		fputc(' ', out);
		for (j = 0; j < tc.n; j++)
			term_cell(out, &tc.tc[j], tc.tc[j].title);
		fputc('\n', out);
	}
	for (i = 0, k = 0; i < n; i++) {
		if (!text_shows(r, t, rows[i]))
			continue;
		if (k++ >= lim) {
			left++;
			continue;
		}
		text_row(r, &tc, rows[i], x && x->group && prev ? x->group(r, rows[i], prev) : 0, out);
		prev = rows[i];
		if (sub)
			sub->text_after(r, rows[i], out);
	}
	free(rows);
	return left;
}

void text_callsites(const struct report *r, FILE *out)
{
	size_t n;

	fprintf(out, "\n");
	para(r, out, 2, "CALL SITES (allocation sites; frees: of their objects; unseen: freed where the "
	     "trace shows no free, as the address was allocated again)");
	kmt_model_stacks(r->m, &n);
	if (n && r->stacks_per_site)
		para(r, out, 2, "  under each, its top stacks: share of its allocations, allocations, bytes, "
		     "and the callers, innermost first");
	if (n && r->stacks_per_site && r->m && kmt_model_summary(r->m)->stack_sample > 1) {
		const struct kmt_summary *s = kmt_model_summary(r->m);

		if (s->stack_slices)
			para(r, out, 2, "  stacks are sampled: about 1 allocation in %" PRIu64 " has one, those "
			     "made in short slices of time (record --stack-sample); each stack's share, "
			     "allocations and bytes are estimates, its sampled allocations scaled to its "
			     "site's, as pprof and folded count them", s->stack_sample);
		else
			para(r, out, 2, "  stacks are sampled: only allocations in 1 slab page of %" PRIu64 " have "
			     "one (record --stack-sample); each stack's share, allocations and bytes are "
			     "estimates, its sampled allocations scaled to its site's, as pprof and folded "
			     "count them", s->stack_sample);
	}
	text_table(r, rtable_find("callsites"), out);
}

void text_caches(const struct report *r, FILE *out)
{
	const struct rtable *t = rtable_find("caches");
	const void **rows = NULL;
	size_t n, i, lim;
	bool said = false;

	fprintf(out, "\nCACHES (slab caches by name, kmalloc by size class)\n");
	text_table(r, t, out);
	/* Merged caches in the table, whole: the kernel names all their objects by the first name. */
	n = rtable_rows(r, t, &rows);
	lim = r->tables.top ? MIN(n, (size_t)r->tables.top) : n;
	for (i = 0; i < lim; i++) {
		const struct kmt_cache *c = rows[i];

		if (!c->merged)
			continue;
		if (!said)
			para(r, out, 2, "  merged caches: the kernel reports the objects of all of them by the first "
			     "name");
		said = true;
		para(r, out, 5, "    %s", c->merged->label);
	}
	free(rows);
}

void text_processes(const struct report *r, FILE *out)
{
	fprintf(out, "\nPROCESSES (by name; the task that allocated)\n");
	text_table(r, rtable_find("comms"), out);
	fputc('\n', out);
	text_table(r, rtable_find("processes"), out);
}

void text_cgroups(const struct report *r, FILE *out)
{
	fprintf(out, "\nCGROUPS (of the task that allocated, as it was then)\n");
	if (r->no_cgroups) {
		para(r, out, 2, "  not recorded: the file has no record of the tasks' cgroups (recorded by "
		     "another tool or an older kmemtrace)");
		return;
	}
	if (r->unrecorded & SEC_CGROUPS) {
		para(r, out, 2, "  not recorded: the file has no slab or page events");
		return;
	}
	text_table(r, rtable_find("cgroups"), out);
	if (r->all_sections)
		para(r, out, 2, "  (each cgroup's call sites, the most unaccounted bytes first: --sections cgroups)");
}

void text_pages(const struct report *r, FILE *out)
{
	char b[256];
	size_t n;

	fprintf(out, "\nPAGES\n");
	/* The summary's own line. */
	para(r, out, 2, "  %s", s_pages(r, kmt_model_summary(r->m), b, sizeof(b)));
	fputc('\n', out);
	text_table(r, rtable_find("page_orders"), out);
	fputc('\n', out);
	text_table(r, rtable_find("gfp"), out);
	kmt_model_page_sites(r->m, &n);
	if (!n) {
		fprintf(out, "\n");
		para(r, out, 3, "  (page allocations by function need kernel stacks: record with --stack)");
		return;
	}
	fputc('\n', out);
	text_table(r, rtable_find("page_functions"), out);
}

void text_vmalloc(const struct report *r, FILE *out)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);
	size_t n;

	fprintf(out, "\n");
	para(r, out, 2, "VMALLOC (areas from alloc_vmap_area; freed lazily by free_vmap_area_noflush, "
	     "often from a kworker; sizes include the guard page)");
	if (!kmt_formats_find(kmt_file_formats(r->f), "vmalloc", "alloc_vmap_area")) {
		fprintf(out, "  not recorded (kmemtrace record records vmalloc:alloc_vmap_area and\n"
			     "  vmalloc:free_vmap_area_noflush by default where the kernel has them)\n");
		return;
	}
	para(r, out, 2, "  %s (%s), %s failed; %s (%s), and %s of areas older than the trace",
	     nouns(s->vmap_allocs, "area", "areas"), bytes((double)s->vmap_bytes), fmt_num(s->vmap_failures),
	     nouns(s->vmap_frees - s->vmap_preexisting_frees, "free", "frees"), bytes((double)s->vmap_bytes_freed),
	     fmt_num(s->vmap_preexisting_frees));
	para(r, out, 2, "  live at the end: %s, %s", nouns(s->vmap_live, "area", "areas"),
	     bytes((double)s->vmap_live_bytes));
	if (!s->vmap_allocs)
		return;
	fputc('\n', out);
	text_table(r, rtable_find("vmalloc_sizes"), out);
	kmt_model_vmap_sites(r->m, &n);
	fputc('\n', out);
	if (n)
		text_table(r, rtable_find("vmalloc_functions"), out);
	else
		para(r, out, 3, "  (vmalloc allocations by function need kernel stacks: record with --stack)");
	kmt_model_vmap_live(r->m, &n);
	if (n) {
		fprintf(out, "\n  live at the end, largest first:\n");
		text_table(r, rtable_find("vmalloc_live"), out);
	}
}

void text_lifetimes(const struct report *r, FILE *out)
{
	fprintf(out, "\n");
	para(r, out, 0, "LIFETIMES (allocation to free, objects freed in the trace; median and p90 "
	     "estimated from log2 buckets, exact within a factor of two)");
	text_table(r, rtable_find("lifetimes"), out);
}

void text_outstanding(const struct report *r, FILE *out)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);
	size_t n;

	kmt_model_outstanding(r->m, &n);
	fprintf(out, "\nOUTSTANDING (live at the end of the trace: leak candidates)\n");
	text_table(r, rtable_find("outstanding"), out);
	if (n && (s->partial_allocs || s->partial_frees))
		para(r, out, 3, "  (untraced?: not known here: a recording that leaves events out (-F, -p, "
		     "--filter) cannot tell the kernel's untraced frees from those it left out)");
	else if (n)
		para(r, out, 3, "  (untraced?: in caches the kernel also frees without an event: may be gone)");
	para(r, out, 2, "  %s freed in the trace %s older than it%s (pre-existing, not errors)",
	     nouns(s->preexisting_frees, "object", "objects"), plural((double)s->preexisting_frees, "was", "were"),
	     s->partial_allocs ? " or excluded by the recording's filter" : "");
	if (s->partial_frees && n)
		para(r, out, 2, "  frees were filtered in this recording: these objects may have been freed "
		     "unseen");
	if (s->uncertain_objects)
		para(r, out, 2, "  %s %s uncertain (events were lost after %s allocated)",
		     nouns(s->uncertain_objects, "object", "objects"),
		     plural((double)s->uncertain_objects, "is", "are"),
		     plural((double)s->uncertain_objects, "it was", "they were"));
}

void text_misuse(const struct report *r, FILE *out)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);
	size_t n, i;
	const struct kmt_misuse *v = kmt_model_misuse(r->m, &n);
	uint64_t by[3] = { 0 };

	for (i = 0; i < n; i++)
		by[kmt_misuse_severity(v[i].kind)] += v[i].count;
	fprintf(out, "\nMISUSE (%s, %s info)\n", nouns(by[KMT_SEV_ERROR], "error", "errors"),
		fmt_num(by[KMT_SEV_INFO]));
	text_more(out, text_table(r, rtable_find("misuse"), out));
	if (s->uncertain_misuse)
		para(r, out, 2, "  %s more %s uncertain (events were lost in between) and not counted",
		     nouns(s->uncertain_misuse, "finding", "findings"),
		     plural((double)s->uncertain_misuse, "is", "are"));
	if (kmt_model_untraced(r->m, &n), n) {
		/* The kernel's design, one line per cache: not misuse. */
		fprintf(out, "\n");
		para(r, out, 2, "  UNTRACED: caches whose objects the kernel allocates or frees without an "
		     "event, so the trace shows an allocation over a live object, a second free, or a free "
		     "naming another cache; not misuse, and no such \"double free\" is one");
		text_table(r, rtable_find("untraced"), out);
	}
}

/* Watchpoint samples: per object group, offset and instruction. */
void text_access(const struct report *r, FILE *out)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);
	size_t n;

	if (r->all_sections && !s->access_hits)
		return;		/* no watchpoint samples: not a section of every report */

	fprintf(out, "\n");
	para(r, out, 2, "ACCESSES (watchpoint samples: %s and %s in %s; %s dropped: no live object at that "
	     "address then; %s lost)", nouns(s->access_writes, "write", "writes"),
	     nouns(s->access_reads, "read", "reads"), nouns(s->access_objects, "object", "objects"),
	     fmt_num(s->access_dropped), fmt_num(s->access_lost));
	if (kmt_model_access(r->m, &n), !n) {
		fprintf(out, "  none (record them with kmemtrace watch)\n");
		return;
	}
	text_more(out, text_table(r, rtable_find("access_rows"), out));
}

void report_text(const struct report *r, FILE *out)
{
	/* Sections whose events the file lacks are left out; the summary says so. */
	unsigned int sec = r->sections & ~(r->unrecorded & ~SEC_SAYS_UNRECORDED);
	const struct report_section *s;

	if (!(sec & SEC_SUMMARY) && (r->sections & r->unrecorded))
		not_recorded(r, out);
	for (s = report_sections; s->bit; s++)
		if (sec & s->bit)
			s->text(r, out);
	if (r->fitted && *r->fitted) {
		fprintf(out, "\n");
		char gave[80];

		para(r, out, 1, "(cut to fit %d columns: %s; --wide shows everything)", r->width,
		     term_gave(*r->fitted, gave, sizeof(gave)));
	}
}
