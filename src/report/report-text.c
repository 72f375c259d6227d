/*
 * kmemtrace report as text: one aligned table per section, human units,
 * call sites as symbol+offset from the file's kallsyms.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "report.h"

/* Formatting into rotating static buffers, so several fit in one printf. */
static char *slot(void)
{
	static char bufs[16][48];
	static int i;

	return bufs[i++ % 16];
}

static const char *num(uint64_t v)
{
	return fmt_count((double)v, false, slot(), 48);
}

static const char *bytes(double v)
{
	return human_bytes(v, slot());
}

static const char *dur(uint64_t ns)
{
	char *out = slot();

	if (ns < 1000)
		snprintf(out, 48, "%" PRIu64 " ns", ns);
	else if (ns < 1000000)
		snprintf(out, 48, "%.1f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(out, 48, "%.1f ms", (double)ns / 1e6);
	else
		snprintf(out, 48, "%.2f s", (double)ns / 1e9);
	return out;
}

static const char *pct(uint64_t part, uint64_t whole)
{
	char *out = slot();

	snprintf(out, 48, "%.1f%%", whole ? 100.0 * (double)part / (double)whole : 0.0);
	return out;
}

static size_t rows(const struct report *r, size_t n)
{
	return r->top && (size_t)r->top < n ? (size_t)r->top : n;
}

/* The summary's slab lines. */
static void slab_summary(const struct report *r, const struct kmt_summary *s, FILE *out)
{
	uint64_t waste = kmt_waste(s->bytes_req, s->bytes_alloc);

	fprintf(out, "  slab allocations       %s (%s failed)\n", num(s->allocs), num(s->failures));
	fprintf(out, "  slab frees             %s of them; %s of objects allocated before the trace%s%s\n",
		num(s->frees), num(s->preexisting_frees), s->filtered ? " or by other tasks" : "",
		s->partial_allocs ? " or excluded by the recording's filter" : "");
	fprintf(out, "  bytes requested        %s\n", bytes((double)s->bytes_req));
	fprintf(out, "  bytes allocated        %s\n", bytes((double)s->bytes_alloc));
	fprintf(out, "  bytes freed            %s (of objects allocated in the trace)\n",
		bytes((double)s->bytes_freed));
	fprintf(out, "  net                    %s\n", bytes((double)s->bytes_alloc - (double)s->bytes_freed));
	fprintf(out, "  internal fragmentation %s (%s of allocated)\n", bytes((double)waste),
		pct(waste, s->bytes_alloc));
	fprintf(out, "  cross-CPU frees        %s (%s of frees)\n", num(s->cross_cpu_frees),
		pct(s->cross_cpu_frees, s->frees));
	fprintf(out, "  live at the end        %s objects, %s\n", num(s->live_objects),
		bytes((double)s->live_bytes));
}

/*
 * One line: the memory events the file has none of, and the sections
 * left out for it (or, with --cache, those it does not select).
 */
static void not_recorded(const struct report *r, FILE *out)
{
	unsigned int left = r->sections & r->unrecorded;
	int i;

	if (!r->nr_not_recorded && !left && !r->cache)
		return;
	if (r->nr_not_recorded) {
		int col = fprintf(out, "  not recorded          ");

		for (i = 0; i < r->nr_not_recorded; i++) {
			if (col + 1 + (int)strlen(r->not_recorded[i]) > 100)
				col = fprintf(out, "\n                        ");
			col += fprintf(out, " %s", r->not_recorded[i]);
		}
		fputc('\n', out);
	}
	if (r->cache)
		fprintf(out, "  selected               objects of cache %s only (--cache): no page, per-CPU or\n"
			     "                         vmalloc events\n", r->cache);
	if (left) {
		fprintf(out, "                         sections left out:");
		for (i = 0; (1u << i) <= SEC_ALL; i++)
			if (left & (1u << i))
				fprintf(out, " %s", section_name(1u << i));
		fputc('\n', out);
	}
}

void text_summary(const struct report *r, FILE *out)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);
	const struct kmt_file_info *fi = kmt_file_info(r->f);
	int i, k;

	fprintf(out, "SUMMARY\n");
	fprintf(out, "  file                   %s (trace.dat v%d, %s)\n", r->path, fi->version,
		fi->compression);
	if (fi->uname)
		fprintf(out, "  kernel                 %s, %d CPUs, clock %s\n", fi->uname, fi->cpu_count,
			fi->clock ? fi->clock : "?");
	/* Times count from the trace's first event; its own time is stated here, once. */
	fprintf(out, "  trace span             %s, from %.6f to %.6f s (the trace starts at %.6f s of\n"
		     "                         the %s clock; times in this report count from there)\n",
		dur(kmt_summary_span(s)),
		(double)(since(r->t0, s->first_ts)) / 1e9,
		(double)(since(r->t0, s->last_ts)) / 1e9, (double)r->t0 / 1e9,
		fi->clock ? fi->clock : "trace");
	fprintf(out, "  events                 %s\n", num(s->events));
	for (k = 1; k < KMT_EV_NR; k++)
		if (s->by_kind[k])
			fprintf(out, "    %-22s %s\n", kmt_kind_name(k), num(s->by_kind[k]));
	not_recorded(r, out);
	if (!r->no_slab)
		slab_summary(r, s, out);
	if (!r->no_slab && fi->salvaged)
		fprintf(out, "  settings unknown       the options at the end of the file are lost, so it may be\n"
			     "                         a partial recording: a free of a freed address is not\n"
			     "                         a double free; a live object is not a leak\n");
	else if (!r->no_slab && (s->partial_allocs || s->partial_frees))
		fprintf(out, "  partial recording      only some %s%s%s were recorded (pid or event filters):\n"
			     "                         %s%s%s\n",
			s->partial_allocs ? "allocations" : "", s->partial_allocs && s->partial_frees ? " and " : "",
			s->partial_frees ? "frees" : "",
			s->partial_allocs ? "a free of a freed address is not a double free" : "",
			s->partial_allocs && s->partial_frees ? "; " : "",
			s->partial_frees ? "a live object is not a leak" : "");
	if (s->kmalloc_large_merged)
		fprintf(out, "  large kmallocs         %s traced twice by the kernel, counted once\n",
			num(s->kmalloc_large_merged));
	if (!r->no_pages)
		fprintf(out, "  pages                  %s allocations (%s pages), %s frees (%s pages), %s failed\n",
			num(s->page_allocs), num(s->pages_allocated), num(s->page_frees), num(s->pages_freed),
			num(s->page_failures));
	if (s->pcpu_allocs || s->pcpu_frees)
		fprintf(out, "  per-CPU                %s allocations (%s), %s frees\n", num(s->pcpu_allocs),
			bytes((double)s->pcpu_bytes), num(s->pcpu_frees));
	if (s->vmap_allocs || s->vmap_frees)
		fprintf(out, "  vmalloc                %s areas (%s), %s frees, %s live at the end (%s)\n",
			num(s->vmap_allocs), bytes((double)s->vmap_bytes), num(s->vmap_frees),
			num(s->vmap_live), bytes((double)s->vmap_live_bytes));
	if (!s->affected_by_loss) {
		fprintf(out, "  events lost            0\n");
		return;
	}
	/* One figure, as record, info and check give it: the ring buffer's count where the file has it. */
	fprintf(out, "  events lost            %s", num(s->lost_events));
	for (i = 0; i < s->nr_cpus; i++)
		if (s->lost_by_cpu[i])
			fprintf(out, ", CPU %d: %s", i, num(s->lost_by_cpu[i]));
	if (s->lost_gaps)
		fprintf(out, ", in %s gap%s", num(s->lost_gaps), s->lost_gaps > 1 ? "s" : "");
	if (s->lost_by_ring)
		fprintf(out, " (the ring buffer's count)");
	else if (s->lost_pages_unknown)
		fprintf(out, " (%s of the gaps had no count: more were lost)", num(s->lost_pages_unknown));
	fputc('\n', out);
	if (s->damaged_gaps)
		fprintf(out, "  damaged file           %s part%s of the data could not be read: the events there\n"
			     "                         are missing (the warnings say which bytes)\n",
			num(s->damaged_gaps), s->damaged_gaps == 1 ? "" : "s");
	if (s->truncated_cpus)
		fprintf(out, "  recording truncated    on %d CPU%s, from %.6f s on (e.g. the disk was full):\n"
			     "                         events after that are missing\n",
			s->truncated_cpus, s->truncated_cpus > 1 ? "s" : "",
			(double)since(s->first_ts, s->truncated_ts) / 1e9);
	fprintf(out, "  RESULTS ARE AFFECTED BY %s: %s objects and %s misuse findings are\n"
		     "  uncertain (a free or allocation may be in a gap); they are counted apart,\n"
		     "  never reported as leaks or misuse.%s\n",
		s->truncated_cpus || s->damaged_gaps ? "MISSING EVENTS" : "LOST EVENTS",
		num(s->uncertain_objects), num(s->uncertain_misuse),
		s->lost_events || s->lost_pages_unknown ? " Record with a larger buffer (-b)." : "");
}

void text_table(const struct report *r, const struct rtable *t, FILE *out)
{
	const void **rows = NULL;
	size_t n = rtable_rows(r, t, &rows), i, k = 0, lim = r->top ? (size_t)r->top : n;
	const struct rcol *c;
	const struct rtable *sub = NULL;
	char buf[512];
	int j;

	for (j = 0; report_tables[j]; j++)
		if (report_tables[j]->text_after && !strcmp(report_tables[j]->parent, t->name))
			sub = report_tables[j];
	fputc(' ', out);
	for (c = t->cols; c->name; c++)
		if (c->title)
			fprintf(out, " %*s", c->width, c->title);
	fputc('\n', out);
	for (i = 0; i < n && k < lim; i++) {
		if (t->text_keep && !t->text_keep(r, rows[i]))
			continue;
		k++;
		fputc(' ', out);
		for (c = t->cols; c->name; c++) {
			struct rval v;
			const char *txt;

			if (!c->title)
				continue;
			rcol_value(r, c, rows[i], &v, buf, sizeof(buf));
			txt = rval_text(c, &v, buf, sizeof(buf));
			if (c->type == RT_U64 && !v.u && (c->flags & (RC_DASH0 | RC_BLANK0)))
				txt = c->flags & RC_DASH0 ? "-" : "";
			if (c->width < -1 && strlen(txt) > (size_t)-c->width)
				fprintf(out, " %.*s\u2026", -c->width - 1, txt);	/* cut: "..." */
			else if (c->width < -1)
				fprintf(out, " %*.*s", c->width, -c->width, txt);
			else if (c->width == -1)
				fprintf(out, " %s", txt);	/* the last column, as long as it is */
			else
				fprintf(out, " %*s", c->width, txt);
		}
		fputc('\n', out);
		if (sub)
			sub->text_after(r, rows[i], out);
	}
	free(rows);
}

void text_callsites(const struct report *r, FILE *out)
{
	size_t n;

	fprintf(out, "\nCALL SITES (allocation sites; frees: of their objects; unseen: freed where the "
		     "trace\n  shows no free, as the address was allocated again)\n");
	kmt_model_stacks(r->m, &n);
	if (n && r->stacks_per_site)
		fprintf(out, "  under each, its top stacks: share of its allocations, allocations, bytes,\n"
			     "  and the callers, innermost first\n");
	if (n && r->stacks_per_site && r->m && kmt_model_summary(r->m)->stack_sample > 1) {
		const struct kmt_summary *s = kmt_model_summary(r->m);

		if (s->stack_slices)
			fprintf(out, "  stacks are sampled: about 1 allocation in %" PRIu64 " has one, those made "
				     "in short\n  slices of time (record --stack-sample), so a site's stacks "
				     "count those, not all\n  its allocations\n", s->stack_sample);
		else
			fprintf(out, "  stacks are sampled: only allocations in 1 slab page of %" PRIu64 " have one "
				     "(record\n  --stack-sample), so a site's stacks count those, not all its "
				     "allocations\n", s->stack_sample);
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
	lim = r->top ? MIN(n, (size_t)r->top) : n;
	for (i = 0; i < lim; i++) {
		const struct kmt_cache *c = rows[i];

		if (!c->merged)
			continue;
		if (!said)
			fprintf(out, "  merged caches: the kernel reports the objects of all of them by the first name\n");
		said = true;
		fprintf(out, "    %s\n", c->merged->label);
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

void text_pages(const struct report *r, FILE *out)
{
	static const char *const mt[] = { "Unmovable", "Movable", "Reclaimable", "HighAtomic",
					  "CMA", "Isolate", "6", "7", "?" };
	const struct kmt_summary *s = kmt_model_summary(r->m);
	size_t n;
	int o, t, used[KMT_MIGRATE_TYPES + 1] = { 0 };

	fprintf(out, "\nPAGES\n  %s allocations (%s pages), %s frees (%s pages), %s failed\n",
		num(s->page_allocs), num(s->pages_allocated), num(s->page_frees), num(s->pages_freed),
		num(s->page_failures));
	for (o = 0; o <= KMT_MAX_ORDER; o++)
		for (t = 0; t <= KMT_MIGRATE_TYPES; t++)
			used[t] |= s->order_mt[o][t] != 0;
	fprintf(out, "\n  %-6s", "order");
	for (t = 0; t <= KMT_MIGRATE_TYPES; t++)
		if (used[t])
			fprintf(out, " %12s", mt[t]);
	fputc('\n', out);
	for (o = 0; o <= KMT_MAX_ORDER; o++) {
		uint64_t row = 0;

		for (t = 0; t <= KMT_MIGRATE_TYPES; t++)
			row += s->order_mt[o][t];
		if (!row)
			continue;
		fprintf(out, "  %-6d", o);
		for (t = 0; t <= KMT_MIGRATE_TYPES; t++)
			if (used[t])
				fprintf(out, " %12s", num(s->order_mt[o][t]));
		fputc('\n', out);
	}
	fputc('\n', out);
	text_table(r, rtable_find("gfp"), out);
	kmt_model_page_sites(r->m, &n);
	if (!n) {
		fprintf(out, "\n  (page allocations by function need kernel stacks: record with --stack)\n");
		return;
	}
	fputc('\n', out);
	text_table(r, rtable_find("page_functions"), out);
}

void text_vmalloc(const struct report *r, FILE *out)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);
	size_t n;

	fprintf(out, "\nVMALLOC (areas from alloc_vmap_area; freed lazily by free_vmap_area_noflush,\n"
		     "  often from a kworker; sizes include the guard page)\n");
	if (!kmt_formats_find(kmt_file_formats(r->f), "vmalloc", "alloc_vmap_area")) {
		fprintf(out, "  not recorded (kmemtrace record records vmalloc:alloc_vmap_area and\n"
			     "  vmalloc:free_vmap_area_noflush by default where the kernel has them)\n");
		return;
	}
	fprintf(out, "  %s areas (%s), %s frees (%s) and %s of areas allocated before the trace, %s failed\n"
		     "  live at the end: %s areas, %s\n",
		num(s->vmap_allocs), bytes((double)s->vmap_bytes), num(s->vmap_frees - s->vmap_preexisting_frees),
		bytes((double)s->vmap_bytes_freed), num(s->vmap_preexisting_frees), num(s->vmap_failures),
		num(s->vmap_live), bytes((double)s->vmap_live_bytes));
	if (!s->vmap_allocs)
		return;
	fputc('\n', out);
	text_table(r, rtable_find("vmalloc_sizes"), out);
	kmt_model_vmap_sites(r->m, &n);
	fputc('\n', out);
	if (n)
		text_table(r, rtable_find("vmalloc_functions"), out);
	else
		fprintf(out, "  (vmalloc allocations by function need kernel stacks: record with --stack)\n");
	kmt_model_vmap_live(r->m, &n);
	if (n) {
		fprintf(out, "\n  live at the end, largest first:\n");
		text_table(r, rtable_find("vmalloc_live"), out);
	}
}

void text_lifetimes(const struct report *r, FILE *out)
{
	/* Columns end on powers of two, so each log2 bucket falls in one. */
	static const int bound_log2[8] = { 10, 14, 17, 20, 24, 27, 30, 34 };
	static const char *const dec[] = { "<1.0us", "<16us", "<131us", "<1.0ms", "<17ms", "<134ms",
					   "<1.1s", "<17s", ">=17s" };
	const void **p = NULL;
	size_t n = rtable_rows(r, rtable_find("lifetimes"), &p), i;
	char name[256];
	int d;

	fprintf(out, "\nLIFETIMES (allocation to free, objects freed in the trace; median and p90\n"
		     "estimated from log2 buckets, exact within a factor of two)\n");
	fprintf(out, "  %-36s %8s %9s %9s %9s", "call site", "freed", "~median", "~p90", "max");
	for (d = 0; d < 9; d++)
		fprintf(out, " %7s", dec[d]);
	fputc('\n', out);
	for (i = 0; i < rows(r, n); i++) {
		const struct kmt_site *s = p[i];
		uint64_t bins[9] = { 0 };
		int b;

		for (b = 0; b < KMT_LIFE_BUCKETS; b++) {
			int di = 0;

			/* Bucket b holds [2^(b-1), 2^b) ns. */
			while (di < 8 && b > bound_log2[di])
				di++;
			bins[di] += s->life[b];
		}
		fprintf(out, "  %-36.36s %8s %9s %9s %9s", site_name(r, s->addr, name, sizeof(name)),
			num(s->frees), dur(life_quantile(s->life, 0.5, s->life_min, s->life_max)), dur(life_quantile(s->life, 0.9, s->life_min, s->life_max)),
			dur(s->life_max));
		for (d = 0; d < 9; d++)
			fprintf(out, " %7s", bins[d] ? num(bins[d]) : ".");
		fputc('\n', out);
	}
	free(p);
}

void text_outstanding(const struct report *r, FILE *out)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);
	size_t n;

	kmt_model_outstanding(r->m, &n);
	fprintf(out, "\nOUTSTANDING (live at the end of the trace: leak candidates)\n");
	text_table(r, rtable_find("outstanding"), out);
	if (n)
		fprintf(out, "  (untraced?: objects of caches the kernel also frees without tracing: they may be gone)\n");
	fprintf(out, "  %s objects freed in the trace were allocated before it%s (pre-existing, not errors)\n",
		num(s->preexisting_frees), s->partial_allocs ? " or excluded by the recording's filter" : "");
	if (s->partial_frees && n)
		fprintf(out, "  frees were filtered in this recording: these objects may have been freed unseen\n");
	if (s->uncertain_objects)
		fprintf(out, "  %s objects are uncertain (events were lost after they were allocated)\n",
			num(s->uncertain_objects));
}

void text_misuse(const struct report *r, FILE *out)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);
	size_t n, i;
	const struct kmt_misuse *v = kmt_model_misuse(r->m, &n);
	char a[256], b[256];
	uint64_t by[3] = { 0 };

	for (i = 0; i < n; i++)
		by[kmt_misuse_severity(v[i].kind)] += v[i].count;
	fprintf(out, "\nMISUSE (%s error%s, %s info)\n", num(by[KMT_SEV_ERROR]),
		by[KMT_SEV_ERROR] == 1 ? "" : "s", num(by[KMT_SEV_INFO]));
	if (!n)
		fprintf(out, "  none\n");
	else
		fprintf(out, "  %-22s %-7s %8s %-32s %-18s %-32s %s\n", "kind", "", "count", "at", "cache",
			"first: allocated at", "s, pid");
	/* Grouped by kind, call site and cache; errors first, then by count. */
	for (i = 0; i < rows(r, n); i++)
		fprintf(out, "  %-22s %-7s %8s %-32.32s %-18.18s %-32.32s %.6f %d%s%s\n",
			kmt_misuse_name(v[i].kind), kmt_severity_name(kmt_misuse_severity(v[i].kind)),
			num(v[i].count), site_name(r, v[i].site, a, sizeof(a)), cache_name(r, v[i].cache),
			v[i].alloc_site ? site_name(r, v[i].alloc_site, b, sizeof(b)) : "before the trace",
			(double)(since(r->t0, v[i].first_ts)) / 1e9, v[i].first_pid,
			*v[i].detail ? "  " : "", v[i].detail);
	if (rows(r, n) < n)
		fprintf(out, "  (%s more rows; -n 0 shows all)\n", num(n - rows(r, n)));
	if (s->uncertain_misuse)
		fprintf(out, "  %s more findings are uncertain (events were lost in between) and not counted\n",
			num(s->uncertain_misuse));
	if (kmt_model_untraced(r->m, &n), n) {
		/* The kernel's design, one line per cache: not misuse. */
		fprintf(out, "\n  UNTRACED: caches whose objects the kernel allocates or frees without an event,\n"
			     "  so the trace shows an allocation over a live object, a second free, or a free\n"
			     "  naming another cache; not misuse, and no such \"double free\" is one\n");
		text_table(r, rtable_find("untraced"), out);
	}
}

/* Watchpoint samples: per object group, offset and instruction. */
void text_access(const struct report *r, FILE *out)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);
	size_t n, i;
	const struct kmt_access_stat *v = kmt_model_access(r->m, &n);
	char group[256], prev[256] = "", ip[256];
	uint32_t prev_off = UINT32_MAX;

	if (r->all_sections && !s->access_hits)
		return;		/* no watchpoint samples: not a section of every report */

	fprintf(out, "\nACCESSES (watchpoint samples: %s writes and %s reads in %s object%s;\n"
		     "  %s dropped: no live object at that address then; %s lost)\n",
		num(s->access_writes), num(s->access_reads), num(s->access_objects),
		s->access_objects == 1 ? "" : "s", num(s->access_dropped), num(s->access_lost));
	if (!n) {
		fprintf(out, "  none (record them with kmemtrace watch)\n");
		return;
	}
	fprintf(out, "  %-36s %7s %-20s %9s %9s  %s\n", "object (allocated in, cache)", "offset",
		"field", "writes", "reads", "instruction after the access");
	for (i = 0; i < rows(r, n); i++) {
		char fn[200];
		bool same;

		snprintf(group, sizeof(group), "%s (%s)", site_function(r, v[i].site, fn, sizeof(fn)),
			 v[i].cache != UINT32_MAX ? cache_name(r, v[i].cache) : "?");
		same = !strcmp(group, prev);
		fprintf(out, "  %-36.36s %7s %-20.20s %9s %9s  %s\n", same ? "" : group,
			same && v[i].offset == prev_off ? "" : num(v[i].offset),
			same && v[i].offset == prev_off ? "" : v[i].field, num(v[i].writes),
			num(v[i].reads), site_name(r, v[i].ip, ip, sizeof(ip)));
		snprintf(prev, sizeof(prev), "%s", group);
		prev_off = v[i].offset;
	}
	if (rows(r, n) < n)
		fprintf(out, "  (%s more rows; -n 0 shows all)\n", num(n - rows(r, n)));
}

void report_text(const struct report *r, FILE *out)
{
	/* Sections whose events the file lacks are left out; the summary says so. */
	unsigned int sec = r->sections & ~r->unrecorded;
	const struct report_section *s;

	if (!(sec & SEC_SUMMARY) && (r->sections & r->unrecorded))
		not_recorded(r, out);
	for (s = report_sections; s->bit; s++)
		if (sec & s->bit)
			s->text(r, out);
}
