/*
 * kmemtrace report --json: one document, schema in docs/report-json.md.
 * Numbers are exact integers; call sites come as "callsite" (symbol+offset)
 * and "function" (symbol alone); addresses as hex strings.
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

static void hex(struct js *j, const char *k, uint64_t v)
{
	char b[32];

	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	sval(j, k, b);
}

/* A kernel address: hashed with --hash-pointers. */
static void kaddr(struct js *j, const struct report *r, const char *k, uint64_t v)
{
	char b[32];

	sval(j, k, addr_str(r, v, b, sizeof(b)));
}

static void hist(struct js *j, const char *k, const uint64_t *b)
{
	int i, top = -1;

	for (i = 0; i < KMT_LIFE_BUCKETS; i++)
		if (b[i])
			top = i;
	open_(j, k, '[');
	for (i = 0; i <= top; i++)
		u64(j, NULL, b[i]);
	close_(j, ']');
}

static void site_keys(struct js *j, const struct report *r, uint64_t addr)
{
	char b[256];

	sval(j, "callsite", site_name(r, addr, b, sizeof(b)));
	sval(j, "function", site_function(r, addr, b, sizeof(b)));
	kaddr(j, r, "address", addr);
}

static void summary(struct js *j, const struct report *r)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);
	int i;

	open_(j, "summary", '{');
	u64(j, "first_ts_ns", s->first_ts);
	u64(j, "last_ts_ns", s->last_ts);
	u64(j, "span_ns", s->last_ts - MIN(s->first_ts, s->last_ts));
	u64(j, "events", s->events);
	open_(j, "events_by_kind", '{');
	for (i = 1; i < KMT_EV_NR; i++)
		if (s->by_kind[i])
			u64(j, kmt_kind_name(i), s->by_kind[i]);
	close_(j, '}');
	u64(j, "allocs", s->allocs);
	u64(j, "frees", s->frees);
	u64(j, "failures", s->failures);
	u64(j, "bytes_req", s->bytes_req);
	u64(j, "bytes_alloc", s->bytes_alloc);
	u64(j, "bytes_freed", s->bytes_freed);
	key(j, "net_bytes");
	fprintf(j->out, "%" PRId64, (int64_t)(s->bytes_alloc - s->bytes_freed));
	u64(j, "fragmentation_bytes", s->bytes_alloc - MIN(s->bytes_req, s->bytes_alloc));
	dbl(j, "fragmentation_pct", frag_pct(s->bytes_req, s->bytes_alloc));
	u64(j, "cross_cpu_frees", s->cross_cpu_frees);
	u64(j, "preexisting_frees", s->preexisting_frees);
	u64(j, "live_objects", s->live_objects);
	u64(j, "live_bytes", s->live_bytes);
	u64(j, "uncertain_objects", s->uncertain_objects);
	u64(j, "uncertain_misuse", s->uncertain_misuse);
	u64(j, "null_frees", s->null_frees);
	u64(j, "kmalloc_large_merged", s->kmalloc_large_merged);
	bval(j, "partial_allocs", s->partial_allocs);
	bval(j, "partial_frees", s->partial_frees);
	u64(j, "unseen_allocs", s->unseen_allocs);
	u64(j, "untraced_evidence", s->untraced_evidence);
	u64(j, "page_allocs", s->page_allocs);
	u64(j, "page_frees", s->page_frees);
	u64(j, "pages_allocated", s->pages_allocated);
	u64(j, "pages_freed", s->pages_freed);
	u64(j, "page_failures", s->page_failures);
	u64(j, "percpu_allocs", s->pcpu_allocs);
	u64(j, "percpu_frees", s->pcpu_frees);
	u64(j, "lost_events", s->lost_events);
	u64(j, "lost_gaps_unknown", s->lost_pages_unknown);
	open_(j, "lost_by_cpu", '[');
	for (i = 0; i < s->nr_cpus; i++)
		u64(j, NULL, s->lost_by_cpu[i]);
	close_(j, ']');
	open_(j, "events_by_cpu", '[');
	for (i = 0; i < s->nr_cpus; i++)
		u64(j, NULL, s->events_by_cpu[i]);
	close_(j, ']');
	bval(j, "affected_by_loss", s->affected_by_loss);
	key(j, "truncated_cpus");
	fprintf(j->out, "%d", s->truncated_cpus);
	close_(j, '}');
}

static void sites(struct js *j, const struct report *r, const char *name,
		  const struct kmt_site *v, size_t n, bool pages)
{
	const struct kmt_site **p = sorted_sites(r, v, n);
	size_t i;

	open_(j, name, '[');
	for (i = 0; p && i < n; i++) {
		const struct kmt_site *s = p[i];

		if (!pages && !s->allocs && !s->failures && !s->free_calls)
			continue;
		open_(j, NULL, '{');
		site_keys(j, r, s->addr);
		u64(j, "allocs", s->allocs);
		u64(j, "frees", s->frees);
		u64(j, "free_calls", s->free_calls);
		u64(j, "bytes_req", s->bytes_req);
		u64(j, "bytes_alloc", s->bytes_alloc);
		u64(j, "bytes_freed", s->bytes_freed);
		u64(j, "waste", s->bytes_alloc - MIN(s->bytes_req, s->bytes_alloc));
		dbl(j, "frag_pct", frag_pct(s->bytes_req, s->bytes_alloc));
		u64(j, "cross_cpu_frees", s->cross_cpu);
		u64(j, "live_objects", s->live_objects);
		u64(j, "live_bytes", s->live_bytes);
		u64(j, "uncertain", s->uncertain);
		u64(j, "failures", s->failures);
		hist(j, "lifetime_log2_ns", s->life);
		close_(j, '}');
	}
	close_(j, ']');
	free(p);
}

static void caches(struct js *j, const struct report *r)
{
	size_t n, i;
	const struct kmt_cache *v = kmt_model_caches(r->m, &n);

	open_(j, "caches", '[');
	for (i = 0; i < n; i++) {
		open_(j, NULL, '{');
		sval(j, "name", v[i].name);
		sval(j, "kind", v[i].is_kmalloc ? "kmalloc" : "slab");
		u64(j, "object_size", v[i].object_size);
		u64(j, "allocs", v[i].allocs);
		u64(j, "frees", v[i].frees);
		u64(j, "bytes_req", v[i].bytes_req);
		u64(j, "bytes_alloc", v[i].bytes_alloc);
		u64(j, "live_objects", v[i].live_objects);
		u64(j, "live_bytes", v[i].live_bytes);
		u64(j, "untraced", v[i].untraced);
		close_(j, '}');
	}
	close_(j, ']');
}

static void processes(struct js *j, const struct report *r)
{
	size_t n, i;
	const struct kmt_proc *v = kmt_model_procs(r->m, &n);

	open_(j, "processes", '[');
	for (i = 0; i < n; i++) {
		if (!v[i].allocs && !v[i].page_allocs)
			continue;
		open_(j, NULL, '{');
		u64(j, "pid", (uint64_t)v[i].pid);
		sval(j, "comm", v[i].comm);
		u64(j, "allocs", v[i].allocs);
		u64(j, "frees", v[i].frees);
		u64(j, "bytes_req", v[i].bytes_req);
		u64(j, "bytes_alloc", v[i].bytes_alloc);
		u64(j, "live_objects", v[i].live_objects);
		u64(j, "live_bytes", v[i].live_bytes);
		u64(j, "page_allocs", v[i].page_allocs);
		u64(j, "pages", v[i].pages);
		close_(j, '}');
	}
	close_(j, ']');
}

static void pages(struct js *j, const struct report *r)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);
	size_t n, i;
	const struct kmt_gfp_count *g = kmt_model_gfp(r->m, &n);
	const struct kmt_site *ps;
	char flags[512];
	int o, t;

	open_(j, "pages", '{');
	u64(j, "allocs", s->page_allocs);
	u64(j, "frees", s->page_frees);
	u64(j, "pages_allocated", s->pages_allocated);
	u64(j, "pages_freed", s->pages_freed);
	u64(j, "failures", s->page_failures);
	open_(j, "order_migratetype", '[');
	for (o = 0; o <= KMT_MAX_ORDER; o++) {
		open_(j, NULL, '[');
		for (t = 0; t <= KMT_MIGRATE_TYPES; t++)
			u64(j, NULL, s->order_mt[o][t]);
		close_(j, ']');
	}
	close_(j, ']');
	open_(j, "gfp", '[');
	for (i = 0; i < n; i++) {
		open_(j, NULL, '{');
		hex(j, "value", g[i].gfp);
		sval(j, "flags", kmt_flags_format(r->gfp_names, g[i].gfp, flags, sizeof(flags)));
		u64(j, "allocs", g[i].allocs);
		u64(j, "pages", g[i].pages);
		close_(j, '}');
	}
	close_(j, ']');
	ps = kmt_model_page_sites(r->m, &n);
	sites(j, r, "functions", ps, n, true);
	close_(j, '}');
}

static void outstanding(struct js *j, const struct report *r)
{
	size_t n, i;
	const struct kmt_outstanding *v = kmt_model_outstanding(r->m, &n);

	open_(j, "outstanding", '[');
	for (i = 0; i < n; i++) {
		open_(j, NULL, '{');
		site_keys(j, r, v[i].site);
		u64(j, "objects", v[i].objects);
		u64(j, "bytes_req", v[i].bytes_req);
		u64(j, "bytes_alloc", v[i].bytes_alloc);
		u64(j, "in_untraced_caches", v[i].in_untraced_caches);
		u64(j, "age_min_ns", v[i].age_min);
		u64(j, "age_max_ns", v[i].age_max);
		hist(j, "age_log2_ns", v[i].age);
		close_(j, '}');
	}
	close_(j, ']');
}

static void misuse(struct js *j, const struct report *r)
{
	size_t n, i;
	const struct kmt_misuse *v = kmt_model_misuse(r->m, &n);
	char b[256];

	open_(j, "misuse", '[');
	for (i = 0; i < n; i++) {
		open_(j, NULL, '{');
		sval(j, "kind", kmt_misuse_name(v[i].kind));
		sval(j, "severity", kmt_severity_name(kmt_misuse_severity(v[i].kind)));
		u64(j, "count", v[i].count);
		site_keys(j, r, v[i].site);
		sval(j, "alloc_callsite", site_name(r, v[i].alloc_site, b, sizeof(b)));
		sval(j, "alloc_function", site_function(r, v[i].alloc_site, b, sizeof(b)));
		u64(j, "first_ts_ns", v[i].first_ts);
		u64(j, "first_pid", (uint64_t)v[i].first_pid);
		kaddr(j, r, "first_ptr", v[i].first_ptr);
		sval(j, "detail", v[i].detail);
		{
			size_t nc;
			const struct kmt_cache *c = kmt_model_caches(r->m, &nc);

			sval(j, "cache", v[i].cache < nc ? c[v[i].cache].name : "");
		}
		close_(j, '}');
	}
	close_(j, ']');
}

static void access(struct js *j, const struct report *r)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);
	size_t n, i;
	const struct kmt_access_stat *v = kmt_model_access(r->m, &n);
	char b[256];

	open_(j, "access", '{');
	u64(j, "hits", s->access_hits);
	u64(j, "writes", s->access_writes);
	u64(j, "reads", s->access_reads);
	u64(j, "dropped", s->access_dropped);
	u64(j, "lost", s->access_lost);
	u64(j, "objects", s->access_objects);
	open_(j, "rows", '[');
	for (i = 0; i < n; i++) {
		open_(j, NULL, '{');
		sval(j, "alloc_function", site_function(r, v[i].site, b, sizeof(b)));
		sval(j, "cache", v[i].cache != UINT32_MAX ? cache_name(r, v[i].cache) : "");
		u64(j, "offset", v[i].offset);
		sval(j, "field", v[i].field);
		u64(j, "len", v[i].len);
		sval(j, "instruction", site_name(r, v[i].ip, b, sizeof(b)));
		sval(j, "function", site_function(r, v[i].ip, b, sizeof(b)));
		u64(j, "writes", v[i].writes);
		u64(j, "reads", v[i].reads);
		close_(j, '}');
	}
	close_(j, ']');
	close_(j, '}');
}

void report_json(const struct report *r, FILE *out)
{
	const struct kmt_file_info *fi = kmt_file_info(r->f);
	struct js j = { .out = out, .depth = 1, .first = { true, true } };
	size_t n;
	const struct kmt_site *v;

	fputc('{', out);
	u64(&j, "kmemtrace_report", 1);
	sval(&j, "file", r->path);
	bval(&j, "hashed_pointers", r->hash.on);
	u64(&j, "file_version", (uint64_t)fi->version);
	sval(&j, "kernel", fi->uname ? fi->uname : "");
	sval(&j, "clock", fi->clock ? fi->clock : "");
	u64(&j, "cpus", (uint64_t)fi->cpu_count);
	if (r->sections & SEC_SUMMARY)
		summary(&j, r);
	if (r->sections & (SEC_CALLSITES | SEC_LIFETIMES)) {
		v = kmt_model_sites(r->m, &n);
		sites(&j, r, "callsites", v, n, false);
	}
	if (r->sections & SEC_CACHES)
		caches(&j, r);
	if (r->sections & SEC_PROCESSES)
		processes(&j, r);
	if (r->sections & SEC_PAGES)
		pages(&j, r);
	if (r->sections & SEC_OUTSTANDING)
		outstanding(&j, r);
	if (r->sections & SEC_MISUSE)
		misuse(&j, r);
	if (r->sections & SEC_ACCESS)
		access(&j, r);
	close_(&j, '}');
	fputc('\n', out);
}
