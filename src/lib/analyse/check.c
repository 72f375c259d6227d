/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kmemtrace check (include/kmemtrace/analyse.h): the file's structure, then
 * every CPU's pages one by one, then (optionally) the allocation model.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmemtrace/analyse.h>
#include <kmemtrace/event.h>
#include "tracefile/observe.h"
#include "tracefile/section.h"
#include "tracefile/tf-local.h"	/* struct kmt_file */

struct ck {
	const struct kmt_check_opts *o;
	struct kmt_check_result *res;
	struct kmt_file *f;
	bool started;			/* the caller has the trace's start (say_start()) */
	struct kmt_finding *early;	/* findings before it, kept */
	size_t nearly, aearly;
};

static void say(struct ck *c, const struct kmt_finding *fd)
{
	if (c->o && c->o->fn)
		c->o->fn(c->o->arg, fd);
}

static void say_start(struct ck *c, uint64_t t0);
static uint64_t trace_start(struct kmt_file *f);

static void finding(struct ck *c, enum kmt_severity sev, int cpu, uint64_t off, uint64_t in_chunk,
		    bool z, uint64_t ts, const char *fmt, ...) __attribute__((format(printf, 8, 9)));

static void finding(struct ck *c, enum kmt_severity sev, int cpu, uint64_t off, uint64_t in_chunk,
		    bool z, uint64_t ts, const char *fmt, ...)
{
	struct kmt_finding fd = { .severity = sev, .cpu = cpu, .offset = off, .in_chunk = in_chunk,
				  .compressed = z, .ts = ts };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fd.what, sizeof(fd.what), fmt, ap);
	va_end(ap);
	if (sev == KMT_SEV_ERROR)
		c->res->errors++;
	else if (sev == KMT_SEV_WARNING)
		c->res->warnings++;
	if (c->started) {
		say(c, &fd);
		return;
	}
	if (c->nearly == c->aearly) {
		size_t na = c->aearly ? 2 * c->aearly : 8;
		struct kmt_finding *e = realloc(c->early, na * sizeof(*e));

		if (!e) {
			/* No room to keep it: the start found the slow way, and all said now. */
			say_start(c, trace_start(c->f));
			say(c, &fd);
			return;
		}
		c->early = e;
		c->aearly = na;
	}
	c->early[c->nearly++] = fd;
}

/* The trace's start to the caller, then the findings kept until it was known. */
static void say_start(struct ck *c, uint64_t t0)
{
	size_t i;

	c->started = true;
	if (c->o && c->o->start)
		c->o->start(c->o->arg, t0);
	for (i = 0; i < c->nearly; i++)
		say(c, &c->early[i]);
	free(c->early);
	c->early = NULL;
	c->nearly = c->aearly = 0;
}

/* The time of the main buffer's first record (0 if none can be read), by a stream's first steps. */
static uint64_t trace_start(struct kmt_file *f)
{
	struct kmt_diag d = { 0 };
	struct kmt_stream *s;
	struct kmt_srec sr;
	uint64_t ts = 0;
	int b = kmt_file_main_buffer(f);

	if (b < 0 || !(s = kmt_stream_open(f, b, &d)))
		return 0;
	while (kmt_stream_next(s, &sr, &d) > 0)
		if (!sr.lost_marker) {
			ts = sr.rec.ts;
			break;
		}
	kmt_stream_close(s);
	return ts;
}

/* v7: the sections must follow each other to the end of the file. */
static void check_sections(struct ck *c)
{
	struct kmt_section_iter it;
	struct kmt_section sec;
	int n = 0, ret;

	if (c->f->info.version < 7)
		return;
	kmt_section_iter_init(&it, c->f);
	while ((ret = kmt_section_next(&it, &sec)) > 0) {
		n++;
		if (!sec.known)
			finding(c, KMT_SEV_WARNING, -1, sec.offset, 0, false, 0, "section of unknown id %u",
				sec.id);
		if (sec.past_end)
			finding(c, KMT_SEV_ERROR, -1, sec.offset, 0, false, 0,
				"section %u of %" PRIu64 " bytes runs past the end of the file", sec.id, sec.size);
	}
	if (ret == KMT_ETRUNC)
		finding(c, KMT_SEV_WARNING, -1, sec.offset, 0, false, 0,
			"%" PRIu64 " bytes after the last section are not a section", sec.size);
	else if (!n)
		finding(c, KMT_SEV_ERROR, -1, c->f->size, 0, false, 0, "no sections");
}

/* CPU data: inside the file (checked at open), page aligned, not overlapping. */
static void check_regions(struct ck *c)
{
	struct kmt_file *f = c->f;
	int i, j, k, l;

	for (i = 0; i < f->nr_buffers; i++) {
		const struct kmt_buffer *b = &f->buffers[i];

		for (j = 0; j < b->nr_cpus; j++) {
			const struct kmt_cpu_data *a = &b->cpus[j];

			if (a->size && !b->compressed && a->offset % f->info.page_size)
				finding(c, KMT_SEV_WARNING, a->cpu, a->offset, 0, false, 0,
					"buffer '%s': CPU data is not page aligned", b->name);
			for (k = 0; k < f->nr_buffers; k++)
				for (l = 0; l < f->buffers[k].nr_cpus; l++) {
					const struct kmt_cpu_data *o = &f->buffers[k].cpus[l];

					if ((k < i || (k == i && l <= j)) || !a->size || !o->size)
						continue;
					if (a->offset < o->offset + o->size && o->offset < a->offset + a->size)
						finding(c, KMT_SEV_ERROR, a->cpu, a->offset, 0, false, 0,
							"buffer '%s': CPU %d data overlaps CPU %d data of buffer '%s'",
							b->name, a->cpu, o->cpu, f->buffers[k].name);
				}
		}
	}
}

/* Damage the file's opening worked around, and kallsyms lines that are not symbols. */
static void check_damage(struct ck *c, const struct kmt_symbols *syms)
{
	size_t bad, off;
	const char *first;
	int i, n;
	const struct kmt_damage *dm = kmt_file_damage(c->f, &n);

	for (i = 0; i < n; i++)
		finding(c, KMT_SEV_ERROR, dm[i].cpu, dm[i].offset, 0, false, 0, "%.190s", dm[i].what);
	bad = kmt_symbols_bad_lines(syms, &off, &first);
	if (bad)
		finding(c, KMT_SEV_ERROR, -1, 0, 0, false, 0,
			"kallsyms: %zu %s, the first at byte %zu of its text: '%.64s'", bad,
			bad == 1 ? "line is not a symbol" : "lines are not symbols", off, first);
}

/*
 * One CPU's pages as they are read: in one pass with the model (an
 * observer of its readers, findings kept until the model is done), or on
 * their own (--no-model, other buffers, or when the model's reading
 * stopped early). The same findings in the same order either way.
 */
#define HELD_MAX 4096			/* findings kept per CPU; more: read again */
struct ck_cpu {
	int cpu;
	uint64_t last, lost, lost_pages, first_lost_off, first_lost_ts;
	int unknown_ids;
	uint64_t first;			/* the first record's time ... */
	bool has_first;			/* ... once a page had one */
	uint64_t pages, events, skipped;	/* into the result at the end */
	bool seen;			/* the observer saw its reader */
	struct kmt_finding *held;	/* kept for later (one pass) */
	size_t nheld, aheld;
	bool overflow;			/* too many, or no memory, to keep */
};

static void cpu_finding(struct ck *c, struct ck_cpu *cc, bool keep, enum kmt_severity sev,
			uint64_t off, uint64_t in, bool z, uint64_t ts, const char *fmt, ...)
	__attribute__((format(printf, 9, 10)));

static void cpu_finding(struct ck *c, struct ck_cpu *cc, bool keep, enum kmt_severity sev,
			uint64_t off, uint64_t in, bool z, uint64_t ts, const char *fmt, ...)
{
	struct kmt_finding *fd;
	va_list ap;

	if (!keep) {
		char what[sizeof(fd->what)];

		va_start(ap, fmt);
		vsnprintf(what, sizeof(what), fmt, ap);
		va_end(ap);
		finding(c, sev, cc->cpu, off, in, z, ts, "%s", what);
		return;
	}
	if (cc->overflow)
		return;
	if (cc->nheld == cc->aheld) {
		size_t na = cc->aheld ? 2 * cc->aheld : 16;

		fd = na <= HELD_MAX ? realloc(cc->held, na * sizeof(*fd)) : NULL;
		if (!fd) {
			cc->overflow = true;
			return;
		}
		cc->held = fd;
		cc->aheld = na;
	}
	fd = &cc->held[cc->nheld++];
	*fd = (struct kmt_finding){ .severity = sev, .cpu = cc->cpu, .offset = off, .in_chunk = in,
				    .compressed = z, .ts = ts };
	va_start(ap, fmt);
	vsnprintf(fd->what, sizeof(fd->what), fmt, ap);
	va_end(ap);
}

/* A part of a CPU's data the reader passed over. */
static void cpu_skipped(struct ck *c, struct ck_cpu *cc, bool keep, const struct kmt_skip *g)
{
	cc->skipped++;
	if (g->cut && cc->cpu < 0)
		cpu_finding(c, cc, keep, KMT_SEV_ERROR, g->from, 0, false, 0,
			    "the data of any CPU after byte %" PRIu64 " is missing", g->from);
	else if (g->cut)
		cpu_finding(c, cc, keep, KMT_SEV_ERROR, g->from, 0, false, 0, "%s", g->why);
	else
		cpu_finding(c, cc, keep, KMT_SEV_ERROR, g->from, 0, false, 0,
			    "%.140s; skipped up to byte %" PRIu64 "%s", g->why, g->to,
			    g->to_end ? " (the end of its data)" : "");
}

/* Where a CPU's reader is: its page's offset, in its chunk, compressed. */
struct ck_where {
	uint64_t off, in;
	bool z;
};

static struct ck_where where(const struct ck *c, struct kmt_cpu_reader *r)
{
	int bi, idx;

	kmt_cpu_reader_index(r, &bi, &idx);
	return (struct ck_where){ kmt_cpu_reader_offset(r), kmt_cpu_reader_in_chunk(r),
				  c->f->buffers[bi].compressed };
}

/* What a walk of a page's records saw (the stream's or check_cpu()'s own), said. */
static void cpu_walked(struct ck *c, struct ck_cpu *cc, bool keep, struct ck_where w,
		       const struct kmt_walk_note *n)
{
	switch (n->what) {
	case KMT_WALK_PAGE_BACK:
		cpu_finding(c, cc, keep, KMT_SEV_ERROR, w.off, w.in, w.z, n->ts,
			    "page starts %" PRIu64 " ns before the previous page's last event", n->back);
		break;
	case KMT_WALK_BACK:
		cpu_finding(c, cc, keep, KMT_SEV_ERROR, w.off, w.in, w.z, n->ts,
			    "time goes back by %" PRIu64 " ns (event at +%u)", n->back, n->offset);
		break;
	case KMT_WALK_UNKNOWN_ID:
		if (cc->unknown_ids++ < 10)
			cpu_finding(c, cc, keep, KMT_SEV_ERROR, w.off, w.in, w.z, n->ts,
				    "record at +%u has event id %u, which no format describes", n->offset, n->id);
		break;
	case KMT_WALK_BROKEN:
		cpu_finding(c, cc, keep, KMT_SEV_ERROR, w.off, w.in, w.z, n->ts,
			    "%s; the rest of the page is skipped", n->msg);
		break;
	}
}

/*
 * What one kmt_cpu_reader_next() of @r returned (@ret, the page @pg or
 * the error in @d): the page's header and time. With @dec, its records
 * walked here too: their times and event ids, and that each fits its
 * format; without (the one pass), the stream's walk says those
 * (walked()).
 * False once the CPU's reading ends (-ENOMEM).
 */
static bool cpu_page(struct ck *c, struct ck_cpu *cc, bool keep, const struct kmt_decoder *dec,
		     struct kmt_cpu_reader *r, int ret, const struct kmt_page *pg, const struct kmt_diag *d)
{
	struct kmt_walk_note n = { 0 };
	struct kmt_page_iter it;
	struct kmt_diag pd = { 0 };
	struct kmt_rec rec;
	struct ck_where w;

	if (ret == 0)
		return true;
	if (ret < 0) {
		/* What cannot be read is passed over, as report does. */
		if (ret == -ENOMEM) {
			cpu_finding(c, cc, keep, KMT_SEV_ERROR, 0, 0, false, 0, "%s", d ? d->msg : "out of memory");
			return false;
		}
		cpu_skipped(c, cc, keep, kmt_cpu_reader_skipped(r));
		return true;
	}
	w = where(c, r);
	cc->pages++;
	if (!dec && !cc->has_first) {
		/* The one pass: the CPU's first record, the first of the first page that has one. */
		kmt_page_iter_init(&it, pg);
		if ((cc->has_first = kmt_page_next(&it, &rec, NULL) > 0))
			cc->first = rec.ts;
	}
	if (pg->missed) {
		if (!cc->lost_pages++) {
			cc->first_lost_off = w.off;
			cc->first_lost_ts = pg->ts;
		}
		if (pg->lost > 0)
			cc->lost += (uint64_t)pg->lost;
	}
	/*
	 * Without @dec (the one pass): the model decodes, and a record that
	 * does not fit its format ends its reading, so the CPU is read again
	 * on its own, with @dec, to say so.
	 */
	if (!dec)
		return true;
	if (pg->ts < cc->last) {
		n = (struct kmt_walk_note){ KMT_WALK_PAGE_BACK, .ts = pg->ts, .back = cc->last - pg->ts };
		cpu_walked(c, cc, keep, w, &n);
	}
	kmt_page_iter_init(&it, pg);
	while ((ret = kmt_page_next(&it, &rec, &pd)) > 0) {
		struct kmt_event ev;
		int k;

		cc->events++;
		if (rec.ts < cc->last) {
			n = (struct kmt_walk_note){ KMT_WALK_BACK, .ts = rec.ts, .back = cc->last - rec.ts,
						    .offset = rec.offset };
			cpu_walked(c, cc, keep, w, &n);
		}
		cc->last = rec.ts;
		/* A record the decoder takes has a format. */
		if ((k = kmt_decode(dec, &rec, cc->cpu, &ev)) < 0)
			cpu_finding(c, cc, keep, KMT_SEV_ERROR, w.off, w.in, w.z, rec.ts,
				    "record of %u bytes at +%u does not fit its format", rec.len, rec.offset);
		else if (k == 0 && rec.len >= 2 &&
			 !kmt_formats_by_id(&c->f->formats, ld16(rec.data, c->f->info.big_endian))) {
			n = (struct kmt_walk_note){ KMT_WALK_UNKNOWN_ID, .ts = rec.ts, .offset = rec.offset,
						    .id = ld16(rec.data, c->f->info.big_endian) };
			cpu_walked(c, cc, keep, w, &n);
		}
	}
	if (ret < 0) {
		n = (struct kmt_walk_note){ KMT_WALK_BROKEN, .ts = it.ts, .msg = pd.msg };
		cpu_walked(c, cc, keep, w, &n);
	}
	return true;
}

/* The end of a CPU's data: its losses against the ring buffer's stats. */
static void cpu_end(struct ck *c, struct ck_cpu *cc, const struct kmt_buffer *b)
{
	int cpu = cc->cpu, s;

	c->res->pages += cc->pages;
	c->res->events += cc->events;
	c->res->skipped += cc->skipped;
	if (cc->lost_pages) {
		const struct kmt_cpustat *st = kmt_buffer_cpustat(b, cpu);
		uint64_t all = kmt_cpustat_lost(st, cc->lost);

		c->res->lost += all;
		finding(c, KMT_SEV_WARNING, cpu, cc->first_lost_off, 0, b->compressed, cc->first_lost_ts,
			"%" PRIu64 " events were lost, in %" PRIu64 " gap%s (%s)", all, cc->lost_pages,
			cc->lost_pages > 1 ? "s" : "", st && st->valid ? "the ring buffer's count" :
			all && cc->lost_pages == 1 ? "the page's count" : "the pages' counts, some unknown");
	}
	for (s = 0; s < b->nr_stats; s++) {
		const struct kmt_cpustat *st = &b->stats[s];

		if (st->cpu != cpu)
			continue;
		if (st->truncated)
			finding(c, KMT_SEV_WARNING, cpu, 0, 0, false, 0, "recording truncated: %s", st->note);
		if (cc->lost_pages && st->overrun + st->dropped + st->died < cc->lost)
			finding(c, KMT_SEV_WARNING, cpu, 0, 0, false, 0,
				"pages count %" PRIu64 " lost events, the ring buffer's stats only %" PRIu64,
				cc->lost, st->overrun + st->dropped + st->died);
		if (!cc->lost_pages && st->overrun + st->dropped)
			finding(c, KMT_SEV_WARNING, cpu, 0, 0, false, 0,
				"the ring buffer's stats report %" PRIu64 " lost events, no page does",
				st->overrun + st->dropped);
	}
}

/*
 * A CPU's pages on their own, findings said as they come; @counted: its
 * records are already in the result (the one pass read them).
 */
static void check_cpu(struct ck *c, int buffer, int idx, const struct kmt_decoder *dec, bool counted)
{
	const struct kmt_buffer *b = &c->f->buffers[buffer];
	struct ck_cpu cc = { .cpu = b->cpus[idx].cpu };
	struct kmt_cpu_reader *r;
	struct kmt_diag d = { 0 };
	struct kmt_page pg;
	int ret;

	if (kmt_cpu_reader_open(&r, c->f, buffer, idx, &d)) {
		finding(c, KMT_SEV_ERROR, cc.cpu, b->cpus[idx].offset, 0, b->compressed, 0, "%s", d.msg);
		return;
	}
	do {
		d.msg[0] = '\0';
		ret = kmt_cpu_reader_next(r, &pg, &d);
	} while (ret != 0 && cpu_page(c, &cc, false, dec, r, ret, &pg, &d));
	kmt_cpu_reader_close(r);
	if (counted)
		cc.events = 0;
	cpu_end(c, &cc, b);
}

/* The one pass: every CPU's state, by buffer and index. */
struct ck_pass {
	struct ck *c;
	struct ck_cpu **cpus;		/* [buffer][idx] */
	uint64_t records;		/* the analysis counted them: those of all it read */
};

static void observe(void *arg, struct kmt_cpu_reader *r, int ret, const struct kmt_page *pg,
		    const struct kmt_diag *d)
{
	struct ck_pass *p = arg;
	struct ck_cpu *cc;
	int bi, idx;

	kmt_cpu_reader_index(r, &bi, &idx);
	cc = &p->cpus[bi][idx];
	cc->seen = true;
	if (!cpu_page(p->c, cc, true, NULL, r, ret, pg, d))
		cc->overflow = true;	/* read again on its own, to say it */
}

static void walked(void *arg, struct kmt_cpu_reader *r, const struct kmt_walk_note *n)
{
	struct ck_pass *p = arg;
	int bi, idx;

	kmt_cpu_reader_index(r, &bi, &idx);
	cpu_walked(p->c, &p->cpus[bi][idx], true, where(p->c, r), n);
}

/*
 * The model's pass over @buffer, the pages of every CPU it reads watched
 * on the way (p). The model, or NULL if its reading stopped early (a
 * record that does not fit its format, no memory): then the CPUs are
 * read again on their own, as before the model existed.
 */
static struct kmt_model *model_pass(struct ck *c, int buffer, const struct kmt_decoder *dec,
				    struct ck_pass *p)
{
	struct kmt_analyse_opts ao = { .t_start = -1, .t_end = -1, .stats = c->o && c->o->stats,
				       .shards = c->o ? c->o->shards : 0, .parts = c->o ? c->o->parts : 0 };
	struct kmt_page_observer ob = { observe, walked, p };
	struct kmt_analyse_result ar;
	struct kmt_model_opts mo = { 0 };
	struct kmt_model *m;
	struct kmt_diag d = { 0 };
	int ret;

	kmt_model_opts_from_file(&mo, c->f);
	m = kmt_model_new(&mo);
	if (!m)
		return NULL;

	kmt_file_set_observer(c->f, &ob);
	ret = kmt_analyse(c->f, buffer, dec, m, &ao, &ar, &d);
	kmt_file_set_observer(c->f, NULL);
	if (ret) {
		kmt_model_free(m);
		return NULL;
	}
	/* The parts passed over are the pages' findings. */
	p->records = ar.records;
	c->res->timed = ao.stats;
	c->res->stats = ar.stats;
	c->res->timed_records = ar.records;
	kmt_analyse_result_release(&ar);
	return m;
}

static void model_findings(struct ck *c, struct kmt_model *m, const struct kmt_symbols *syms)
{
	const struct kmt_summary *s;
	const struct kmt_misuse *v;
	const struct kmt_untraced *u;
	size_t n, i, nc;

	v = kmt_model_misuse(m, &n);
	for (i = 0; i < n; i++) {
		char a[256], b[256];

		if (kmt_misuse_severity(v[i].kind) == KMT_SEV_INFO)
			continue;
		finding(c, kmt_misuse_severity(v[i].kind), -1, 0, 0, false, v[i].first_ts,
			"%s x%" PRIu64 " at %s (object from %s)", kmt_misuse_name(v[i].kind), v[i].count,
			kmt_symbols_format(syms, v[i].site, a, sizeof(a)),
			v[i].alloc_site ? kmt_symbols_format(syms, v[i].alloc_site, b, sizeof(b)) : "before the trace");
	}
	/* The kernel's own untraced traffic: one line per cache, information. */
	u = kmt_model_untraced(m, &n);
	for (i = 0; i < n; i++) {
		char a[256];

		finding(c, KMT_SEV_INFO, -1, 0, 0, false, u[i].first_ts,
			"%s: %" PRIu64 " object%s allocated or freed without an event (first at %s): %s",
			u[i].cache != UINT32_MAX ? kmt_model_caches(m, &nc)[u[i].cache].name : "(no cache)",
			u[i].count, u[i].count == 1 ? "" : "s", kmt_symbols_format(syms, u[i].first_site, a, sizeof(a)),
			u[i].why);
	}
	s = kmt_model_summary(m);
	if (s->uncertain_objects || s->uncertain_misuse)
		finding(c, KMT_SEV_WARNING, -1, 0, 0, false, 0,
			"%s make %" PRIu64 " objects and %" PRIu64 " findings uncertain",
			s->damaged_gaps ? "missing events (a damaged file)" :
			s->truncated_cpus ? "missing events (truncated recording)" : "losses",
			s->uncertain_objects, s->uncertain_misuse);
}

static void pass_free(struct ck_pass *p, const struct kmt_file *f)
{
	int b, i;

	for (b = 0; p->cpus && b < f->nr_buffers; b++) {
		for (i = 0; p->cpus[b] && i < f->buffers[b].nr_cpus; i++)
			free(p->cpus[b][i].held);
		free(p->cpus[b]);
	}
	free(p->cpus);
}

/* The main buffer's first record, from the model's walk: the least of its CPUs' firsts. */
static uint64_t walked_start(const struct ck_pass *p, struct kmt_file *f)
{
	const struct kmt_buffer *b = &f->buffers[f->main_buffer];
	uint64_t t0 = UINT64_MAX;
	int i;

	for (i = 0; i < b->nr_cpus; i++) {
		const struct ck_cpu *cc = &p->cpus[f->main_buffer][i];

		if (!cc->seen)
			return trace_start(f);	/* not walked: the stream's own first steps */
		if (cc->has_first)
			t0 = MIN(t0, cc->first);
	}
	return t0 == UINT64_MAX ? 0 : t0;
}

static bool pass_new(struct ck_pass *p, const struct kmt_file *f)
{
	int b, i;

	if (!(p->cpus = calloc((size_t)f->nr_buffers + 1, sizeof(*p->cpus))))
		return false;
	for (b = 0; b < f->nr_buffers; b++) {
		if (!(p->cpus[b] = calloc((size_t)f->buffers[b].nr_cpus + 1, sizeof(**p->cpus))))
			return false;
		for (i = 0; i < f->buffers[b].nr_cpus; i++)
			p->cpus[b][i].cpu = f->buffers[b].cpus[i].cpu;
	}
	return true;
}

int kmt_check_file(struct kmt_file *f, const struct kmt_check_opts *o,
		   struct kmt_check_result *res, struct kmt_diag *d)
{
	struct ck c = { .o = o, .res = res, .f = f };
	struct ck_pass p = { .c = &c };
	struct kmt_model *m = NULL;
	struct kmt_symbols *syms;
	struct kmt_decoder *dec;
	int b, i;
	size_t k;

	memset(res, 0, sizeof(*res));
	dec = kmt_decoder_new(&f->formats, f->info.big_endian, f->info.kernel_long_size);
	syms = kmt_symbols_parse(f->kallsyms.buf ? f->kallsyms.buf : "", f->kallsyms.len);
	if (!dec || !syms) {
		kmt_decoder_free(dec);
		kmt_symbols_free(syms);
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	}
	check_damage(&c, syms);
	check_sections(&c);
	check_regions(&c);
	if (*kmt_decoder_skipped(dec))
		finding(&c, KMT_SEV_WARNING, -1, 0, 0, false, 0, "formats the decoder cannot use: %s",
			kmt_decoder_skipped(dec));
	/*
	 * The model reads first, the pages' findings kept; they are said first.
	 * The trace's start then comes from the model's walk: no first steps of
	 * a stream of their own, which inflate a chunk of every CPU before the
	 * model starts (64 CPUs: 64 chunks, on one thread).
	 */
	if (o && o->model && f->main_buffer >= 0 && pass_new(&p, f))
		m = model_pass(&c, f->main_buffer, dec, &p);
	say_start(&c, m ? walked_start(&p, f) : trace_start(f));
	if (m)
		res->events = p.records;
	for (b = 0; b < f->nr_buffers; b++) {
		if (!f->buffers[b].nr_cpus)
			continue;
		res->buffers++;
		for (i = 0; i < f->buffers[b].nr_cpus; i++) {
			struct ck_cpu *cc = m ? &p.cpus[b][i] : NULL;

			res->cpus += f->buffers[b].cpus[i].size != 0;
			if (!cc || !cc->seen || cc->overflow) {
				check_cpu(&c, b, i, dec, cc && cc->seen);
				continue;
			}
			for (k = 0; k < cc->nheld; k++)
				finding(&c, cc->held[k].severity, cc->cpu, cc->held[k].offset, cc->held[k].in_chunk,
					cc->held[k].compressed, cc->held[k].ts, "%s", cc->held[k].what);
			cpu_end(&c, cc, &f->buffers[b]);
		}
	}
	if (m)
		model_findings(&c, m, syms);
	kmt_model_free(m);
	pass_free(&p, f);
	kmt_decoder_free(dec);
	kmt_symbols_free(syms);
	return 0;
}
