/*
 * kmemtrace check (include/kmemtrace/model.h): the file's structure, then
 * every CPU's pages one by one, then (optionally) the allocation model.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmemtrace/model.h>
#include <kmemtrace/event.h>
#include "tracefile/tf-local.h"

struct ck {
	const struct kmt_check_opts *o;
	struct kmt_check_result *res;
	struct kmt_file *f;
};

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
	if (c->o && c->o->fn)
		c->o->fn(c->o->arg, &fd);
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

/* A part of a CPU's data the reader passed over. */
static void skipped(struct ck *c, int cpu, const struct kmt_skip *g)
{
	c->res->skipped++;
	if (g->cut && cpu < 0)
		finding(c, KMT_SEV_ERROR, cpu, g->from, 0, false, 0,
			"the data of any CPU after byte %" PRIu64 " is missing", g->from);
	else if (g->cut)
		finding(c, KMT_SEV_ERROR, cpu, g->from, 0, false, 0, "%s", g->why);
	else
		finding(c, KMT_SEV_ERROR, cpu, g->from, 0, false, 0, "%.140s; skipped up to byte %" PRIu64 "%s",
			g->why, g->to, g->to_end ? " (the end of its data)" : "");
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

static void check_cpu(struct ck *c, int buffer, int idx, const struct kmt_decoder *dec)
{
	const struct kmt_buffer *b = &c->f->buffers[buffer];
	int cpu = b->cpus[idx].cpu;
	uint64_t last = 0, lost = 0, lost_pages = 0, first_lost_off = 0, first_lost_ts = 0;
	struct kmt_cpu_reader *r;
	struct kmt_diag d = { 0 };
	struct kmt_page pg;
	int ret, unknown_ids = 0;

	if (kmt_cpu_reader_open(&r, c->f, buffer, idx, &d)) {
		finding(c, KMT_SEV_ERROR, cpu, b->cpus[idx].offset, 0, b->compressed, 0, "%s", d.msg);
		return;
	}
	for (;;) {
		struct kmt_page_iter it;
		struct kmt_rec rec;
		uint64_t off, in;
		bool z = b->compressed;

		d.msg[0] = '\0';
		ret = kmt_cpu_reader_next(r, &pg, &d);
		if (ret == 0)
			break;
		if (ret < 0) {
			/* What cannot be read is passed over, as report does. */
			if (ret == -ENOMEM) {
				finding(c, KMT_SEV_ERROR, cpu, 0, 0, false, 0, "%s", d.msg);
				break;
			}
			skipped(c, cpu, kmt_cpu_reader_skipped(r));
			continue;
		}
		off = kmt_cpu_reader_offset(r);
		in = kmt_cpu_reader_in_chunk(r);
		c->res->pages++;
		if (pg.missed) {
			if (!lost_pages++) {
				first_lost_off = off;
				first_lost_ts = pg.ts;
			}
			if (pg.lost > 0)
				lost += (uint64_t)pg.lost;
		}
		if (pg.ts < last)
			finding(c, KMT_SEV_ERROR, cpu, off, in, z, pg.ts,
				"page starts %" PRIu64 " ns before the previous page's last event", last - pg.ts);
		kmt_page_iter_init(&it, &pg);
		while ((ret = kmt_page_next(&it, &rec, &d)) > 0) {
			struct kmt_event ev;
			int k;

			c->res->events++;
			if (rec.ts < last)
				finding(c, KMT_SEV_ERROR, cpu, off, in, z, rec.ts,
					"time goes back by %" PRIu64 " ns (event at +%u)", last - rec.ts, rec.offset);
			last = rec.ts;
			k = kmt_decode(dec, &rec, cpu, &ev);
			if (k < 0) {
				finding(c, KMT_SEV_ERROR, cpu, off, in, z, rec.ts,
					"record of %u bytes at +%u does not fit its format", rec.len, rec.offset);
			} else if (k == 0 && rec.len >= 2 &&
				   !kmt_formats_by_id(&c->f->formats, ld16(rec.data, c->f->info.big_endian)) &&
				   unknown_ids++ < 10) {
				finding(c, KMT_SEV_ERROR, cpu, off, in, z, rec.ts,
					"record at +%u has event id %u, which no format describes", rec.offset,
					ld16(rec.data, c->f->info.big_endian));
			}
		}
		if (ret < 0)
			finding(c, KMT_SEV_ERROR, cpu, off, in, z, it.ts,
				"%s; the rest of the page is skipped", d.msg);
	}
	kmt_cpu_reader_close(r);
	if (lost_pages) {
		const struct kmt_cpustat *st = kmt_buffer_cpustat(b, cpu);
		uint64_t all = kmt_cpustat_lost(st, lost);

		c->res->lost += all;
		finding(c, KMT_SEV_WARNING, cpu, first_lost_off, 0, b->compressed, first_lost_ts,
			"%" PRIu64 " events were lost, in %" PRIu64 " gap%s (%s)", all, lost_pages,
			lost_pages > 1 ? "s" : "", st && st->valid ? "the ring buffer's count" :
			all && lost_pages == 1 ? "the page's count" : "the pages' counts, some unknown");
	}
	{
		int s;

		for (s = 0; s < b->nr_stats; s++) {
			const struct kmt_cpustat *st = &b->stats[s];

			if (st->cpu != cpu)
				continue;
			if (st->truncated)
				finding(c, KMT_SEV_WARNING, cpu, 0, 0, false, 0, "recording truncated: %s",
					st->note);
			if (lost_pages && st->overrun + st->dropped + st->died < lost)
				finding(c, KMT_SEV_WARNING, cpu, 0, 0, false, 0,
					"pages count %" PRIu64 " lost events, the ring buffer's stats only %" PRIu64,
					lost, st->overrun + st->dropped + st->died);
			if (!lost_pages && st->overrun + st->dropped)
				finding(c, KMT_SEV_WARNING, cpu, 0, 0, false, 0,
					"the ring buffer's stats report %" PRIu64 " lost events, no page does",
					st->overrun + st->dropped);
		}
	}
}

static void check_model(struct ck *c, int buffer, const struct kmt_decoder *dec,
			const struct kmt_symbols *syms)
{
	struct kmt_analyse_opts ao = { .t_start = -1, .t_end = -1 };
	struct kmt_analyse_result ar;
	struct kmt_model_opts mo = { 0 };
	struct kmt_model *m;
	const struct kmt_summary *s;
	const struct kmt_misuse *v;
	const struct kmt_untraced *u;
	struct kmt_diag d = { 0 };
	size_t n, i, nc;

	kmt_model_opts_from_file(&mo, c->f);
	m = kmt_model_new(&mo);
	if (!m || kmt_analyse(c->f, buffer, dec, m, &ao, &ar, &d)) {
		/* Page-level problems were reported above already. */
		kmt_model_free(m);
		return;
	}
	/* So were the parts passed over. */
	kmt_analyse_result_release(&ar);
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
	kmt_model_free(m);
}

int kmt_check_file(struct kmt_file *f, const struct kmt_check_opts *o,
		   struct kmt_check_result *res, struct kmt_diag *d)
{
	struct ck c = { .o = o, .res = res, .f = f };
	struct kmt_symbols *syms;
	struct kmt_decoder *dec;
	int b, i;

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
	for (b = 0; b < f->nr_buffers; b++) {
		if (!f->buffers[b].nr_cpus)
			continue;
		res->buffers++;
		for (i = 0; i < f->buffers[b].nr_cpus; i++) {
			res->cpus += f->buffers[b].cpus[i].size != 0;
			check_cpu(&c, b, i, dec);
		}
	}
	if (o && o->model && f->main_buffer >= 0)
		check_model(&c, f->main_buffer, dec, syms);
	kmt_decoder_free(dec);
	kmt_symbols_free(syms);
	return 0;
}
