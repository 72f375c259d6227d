/*
 * kmemtrace report --csv SECTION: one section, a header line, one row per
 * item, plain numbers (bytes, nanoseconds), for spreadsheets and scripts.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "report.h"

static void field(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void csv_summary(const struct report *r, FILE *out)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);

	fprintf(out, "key,value\n");
#define KV(k, v) fprintf(out, "%s,%" PRIu64 "\n", k, (uint64_t)(v))
	KV("span_ns", s->last_ts - MIN(s->first_ts, s->last_ts));
	KV("events", s->events);
	KV("allocs", s->allocs);
	KV("frees", s->frees);
	KV("bytes_req", s->bytes_req);
	KV("bytes_alloc", s->bytes_alloc);
	KV("bytes_freed", s->bytes_freed);
	KV("fragmentation_bytes", s->bytes_alloc - MIN(s->bytes_req, s->bytes_alloc));
	KV("cross_cpu_frees", s->cross_cpu_frees);
	KV("preexisting_frees", s->preexisting_frees);
	KV("live_objects", s->live_objects);
	KV("live_bytes", s->live_bytes);
	KV("uncertain_objects", s->uncertain_objects);
	KV("lost_events", s->lost_events);
	KV("page_allocs", s->page_allocs);
	KV("page_frees", s->page_frees);
#undef KV
}

static void csv_sites(const struct report *r, FILE *out, bool lifetimes)
{
	size_t n, i;
	const struct kmt_site *v = kmt_model_sites(r->m, &n);
	const struct kmt_site **p = sorted_sites(r, v, n);
	char a[256], b[256];
	int k;

	if (lifetimes) {
		fprintf(out, "callsite,function,freed,median_ns,p90_ns");
		for (k = 0; k < KMT_LIFE_BUCKETS; k++)
			fprintf(out, ",lt_%" PRIu64 "ns", kmt_life_bucket_ns(k + 1));
		fputc('\n', out);
	} else {
		fprintf(out, "callsite,function,allocs,frees,free_calls,bytes_req,bytes_alloc,waste,"
			     "cross_cpu_frees,live_objects,live_bytes,uncertain,failures\n");
	}
	for (i = 0; p && i < n; i++) {
		const struct kmt_site *s = p[i];

		if (lifetimes ? !s->frees : (!s->allocs && !s->free_calls && !s->failures))
			continue;
		field(out, site_name(r, s->addr, a, sizeof(a)));
		fputc(',', out);
		field(out, site_function(r, s->addr, b, sizeof(b)));
		if (lifetimes) {
			fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, s->frees,
				life_quantile(s->life, 0.5, s->life_min, s->life_max), life_quantile(s->life, 0.9, s->life_min, s->life_max));
			for (k = 0; k < KMT_LIFE_BUCKETS; k++)
				fprintf(out, ",%" PRIu64, s->life[k]);
			fputc('\n', out);
			continue;
		}
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
			s->allocs, s->frees, s->free_calls, s->bytes_req, s->bytes_alloc,
			s->bytes_alloc - MIN(s->bytes_req, s->bytes_alloc), s->cross_cpu,
			s->live_objects, s->live_bytes, s->uncertain, s->failures);
	}
	free(p);
}

static void csv_caches(const struct report *r, FILE *out)
{
	size_t n, i;
	const struct kmt_cache *v = kmt_model_caches(r->m, &n);

	fprintf(out, "name,kind,object_size,allocs,frees,bytes_req,bytes_alloc,live_objects,live_bytes\n");
	for (i = 0; i < n; i++) {
		field(out, v[i].name);
		fprintf(out, ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 "\n", v[i].is_kmalloc ? "kmalloc" : "slab", v[i].object_size,
			v[i].allocs, v[i].frees, v[i].bytes_req, v[i].bytes_alloc, v[i].live_objects,
			v[i].live_bytes);
	}
}

static void csv_processes(const struct report *r, FILE *out)
{
	size_t n, i;
	const struct kmt_proc *v = kmt_model_procs(r->m, &n);

	fprintf(out, "pid,comm,allocs,frees,bytes_req,bytes_alloc,live_objects,live_bytes,page_allocs,pages\n");
	for (i = 0; i < n; i++) {
		if (!v[i].allocs && !v[i].page_allocs)
			continue;
		fprintf(out, "%d,", v[i].pid);
		field(out, v[i].comm);
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 "\n", v[i].allocs, v[i].frees, v[i].bytes_req,
			v[i].bytes_alloc, v[i].live_objects, v[i].live_bytes, v[i].page_allocs, v[i].pages);
	}
}

static void csv_pages(const struct report *r, FILE *out)
{
	const struct kmt_summary *s = kmt_model_summary(r->m);
	int o, t;

	fprintf(out, "order,migratetype,allocs\n");
	for (o = 0; o <= KMT_MAX_ORDER; o++)
		for (t = 0; t <= KMT_MIGRATE_TYPES; t++)
			if (s->order_mt[o][t])
				fprintf(out, "%d,%d,%" PRIu64 "\n", o, t < KMT_MIGRATE_TYPES ? t : -1,
					s->order_mt[o][t]);
}

static void csv_outstanding(const struct report *r, FILE *out)
{
	size_t n, i;
	const struct kmt_outstanding *v = kmt_model_outstanding(r->m, &n);
	char a[256], b[256];

	fprintf(out, "callsite,function,objects,bytes_req,bytes_alloc,age_min_ns,age_median_ns,age_max_ns\n");
	for (i = 0; i < n; i++) {
		field(out, site_name(r, v[i].site, a, sizeof(a)));
		fputc(',', out);
		field(out, site_function(r, v[i].site, b, sizeof(b)));
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
			v[i].objects, v[i].bytes_req, v[i].bytes_alloc, v[i].age_min,
			life_quantile(v[i].age, 0.5, v[i].age_min, v[i].age_max), v[i].age_max);
	}
}

static void csv_misuse(const struct report *r, FILE *out)
{
	size_t n, i;
	const struct kmt_misuse *v = kmt_model_misuse(r->m, &n);
	char a[256], b[256];

	fprintf(out, "kind,severity,count,callsite,function,alloc_callsite,first_ts_ns,first_pid,detail\n");
	for (i = 0; i < n; i++) {
		fprintf(out, "%s,%s,%" PRIu64 ",", kmt_misuse_name(v[i].kind),
			kmt_severity_name(kmt_misuse_severity(v[i].kind)), v[i].count);
		field(out, site_name(r, v[i].site, a, sizeof(a)));
		fputc(',', out);
		field(out, site_function(r, v[i].site, b, sizeof(b)));
		fputc(',', out);
		field(out, site_name(r, v[i].alloc_site, a, sizeof(a)));
		fprintf(out, ",%" PRIu64 ",%d,", v[i].first_ts, v[i].first_pid);
		field(out, v[i].detail);
		fputc('\n', out);
	}
}

static void csv_access(const struct report *r, FILE *out)
{
	size_t n, i;
	const struct kmt_access_stat *v = kmt_model_access(r->m, &n);
	char a[256];

	fprintf(out, "alloc_function,cache,offset,field,len,instruction,function,writes,reads\n");
	for (i = 0; i < n; i++) {
		field(out, site_function(r, v[i].site, a, sizeof(a)));
		fputc(',', out);
		field(out, v[i].cache != UINT32_MAX ? cache_name(r, v[i].cache) : "");
		fprintf(out, ",%u,", v[i].offset);
		field(out, v[i].field);
		fprintf(out, ",%u,", v[i].len);
		field(out, site_name(r, v[i].ip, a, sizeof(a)));
		fputc(',', out);
		field(out, site_function(r, v[i].ip, a, sizeof(a)));
		fprintf(out, ",%" PRIu64 ",%" PRIu64 "\n", v[i].writes, v[i].reads);
	}
}

int report_csv(const struct report *r, const char *section, FILE *out)
{
	switch (section_bit(section)) {
	case SEC_SUMMARY: csv_summary(r, out); break;
	case SEC_CALLSITES: csv_sites(r, out, false); break;
	case SEC_LIFETIMES: csv_sites(r, out, true); break;
	case SEC_CACHES: csv_caches(r, out); break;
	case SEC_PROCESSES: csv_processes(r, out); break;
	case SEC_PAGES: csv_pages(r, out); break;
	case SEC_OUTSTANDING: csv_outstanding(r, out); break;
	case SEC_MISUSE: csv_misuse(r, out); break;
	case SEC_ACCESS: csv_access(r, out); break;
	default: return error("no section '%s'", section);
	}
	return EXIT_OK;
}
