/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the report printers share: section names, call-site naming,
 * sorting, and quantiles from log2 histograms.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/event.h>

#include "util/util.h"
#include "util/opt.h"
#include "report-cols.h"

const struct report_section report_sections[] = {
	{ SEC_SUMMARY, "summary", 0, text_summary, &t_summary },
	{ SEC_CALLSITES, "callsites", NEEDS_SLAB, text_callsites, &t_callsites },
	{ SEC_CACHES, "caches", NEEDS_SLAB, text_caches, &t_caches },
	{ SEC_PROCESSES, "processes", NEEDS_SLAB_OR_PAGES, text_processes, &t_processes },
	{ SEC_CGROUPS, "cgroups", NEEDS_SLAB_OR_PAGES | NEEDS_CGROUPS, text_cgroups, &t_cgroups },
	{ SEC_PAGES, "pages", NEEDS_PAGES, text_pages, &t_page_orders },
	{ SEC_VMALLOC, "vmalloc", NEEDS_VMALLOC, text_vmalloc, &t_vmalloc_live },
	{ SEC_LIFETIMES, "lifetimes", NEEDS_SLAB, text_lifetimes, &t_lifetimes },
	{ SEC_OUTSTANDING, "outstanding", NEEDS_SLAB, text_outstanding, &t_outstanding },
	{ SEC_MISUSE, "misuse", NEEDS_SLAB, text_misuse, &t_misuse },
	{ SEC_ACCESS, "access", 0, text_access, &t_access_rows },
	{ 0 },
};

/* The memory events, by what they tell. */
static const enum kmt_kind slab_kinds[] = { KMT_EV_KMALLOC, KMT_EV_KFREE, KMT_EV_CACHE_ALLOC, KMT_EV_CACHE_FREE };
static const enum kmt_kind page_kinds[] = { KMT_EV_PAGE_ALLOC, KMT_EV_PAGE_FREE, KMT_EV_PAGE_FREE_BATCHED };
static const enum kmt_kind pcpu_kinds[] = { KMT_EV_PCPU_ALLOC, KMT_EV_PCPU_FREE };
static const enum kmt_kind vmap_kinds[] = { KMT_EV_VMAP_ALLOC, KMT_EV_VMAP_FREE };

/* Note the kinds of @k the file lacks; true if it has none of their allocations (the first). */
static bool lacks(struct report *r, const struct kmt_decoder *dec, const enum kmt_kind *k, int n,
		  bool slab)
{
	bool alloc = false;
	int i;

	for (i = 0; i < n; i++) {
		if (kmt_decoder_has(dec, k[i])) {
			alloc |= slab ? k[i] == KMT_EV_KMALLOC || k[i] == KMT_EV_CACHE_ALLOC : i == 0;
			continue;
		}
		if (r->nr_not_recorded < (int)(sizeof(r->not_recorded) / sizeof(*r->not_recorded)))
			r->not_recorded[r->nr_not_recorded++] = kmt_kind_name(k[i]);
	}
	return !alloc;
}

void report_recorded(struct report *r, const struct kmt_decoder *dec, const char *cache)
{
	const struct report_section *s;

	r->nr_not_recorded = 0;
	r->unrecorded = 0;
	r->no_slab = lacks(r, dec, slab_kinds, 4, true);
	r->no_pages = lacks(r, dec, page_kinds, 3, false);
	r->no_pcpu = lacks(r, dec, pcpu_kinds, 2, false);
	r->no_vmalloc = lacks(r, dec, vmap_kinds, 2, false);
	r->cache = cache;
	r->no_cgroups = !r->f || !kmt_file_info(r->f)->cgroups;
	if (cache)
		r->no_pages = r->no_pcpu = r->no_vmalloc = true;
	for (s = report_sections; s->bit; s++)
		if (((s->needs & NEEDS_SLAB) && r->no_slab) || ((s->needs & NEEDS_PAGES) && r->no_pages) ||
		    ((s->needs & NEEDS_SLAB_OR_PAGES) && r->no_slab && r->no_pages) ||
		    ((s->needs & NEEDS_VMALLOC) && r->no_vmalloc) || ((s->needs & NEEDS_CGROUPS) && r->no_cgroups))
			r->unrecorded |= s->bit;
}

static const struct report_section *section_of(unsigned int bit)
{
	const struct report_section *s;

	for (s = report_sections; s->bit; s++)
		if (s->bit == bit)
			return s;
	return NULL;
}

const char *section_name(unsigned int bit)
{
	return section_of(bit) ? section_of(bit)->name : "?";
}

const struct rtable *rtable_of_section(unsigned int bit)
{
	return section_of(bit) ? section_of(bit)->table : NULL;
}

unsigned int section_bit(const char *name)
{
	const struct report_section *s;

	for (s = report_sections; s->bit; s++)
		if (!strcmp(name, s->name))
			return s->bit;
	return 0;
}

unsigned int section_all(void)
{
	const struct report_section *s;
	unsigned int all = 0;

	for (s = report_sections; s->bit; s++)
		all |= s->bit;
	return all;
}

const char *report_section_names(char *buf, size_t len)
{
	const struct report_section *s;

	buf[0] = '\0';
	for (s = report_sections; s->bit; s++)
		opt_join(buf, len, ",", s->name);
	return opt_join(buf, len, ",", "all");
}

const char *addr_str(const struct report *r, uint64_t addr, char *buf, size_t len)
{
	return kmt_hashptr_fmt(&r->addr.hash, addr, buf, len);
}

const char *site_name(const struct report *r, uint64_t addr, char *buf, size_t len)
{
	uint64_t off;
	const char *fn;

	if (!addr)
		snprintf(buf, len, "(unknown)");
	else if (r->addr.raw_ip)
		addr_str(r, addr, buf, len);
	else if ((fn = kmt_symbols_lookup(r->syms, addr, &off)))
		snprintf(buf, len, "%s+0x%" PRIx64, fn, off);
	else
		addr_str(r, addr, buf, len);	/* no symbol: the address, hashed if asked */
	return buf;
}

const char *site_function(const struct report *r, uint64_t addr, char *buf, size_t len)
{
	const char *fn = addr ? kmt_symbols_lookup(r->syms, addr, NULL) : NULL;

	if (fn)
		snprintf(buf, len, "%s", fn);
	else if (addr)
		addr_str(r, addr, buf, len);
	else
		snprintf(buf, len, "(unknown)");
	return buf;
}

const char *cache_name(const struct report *r, uint32_t i)
{
	size_t n;
	const struct kmt_cache *c = kmt_model_caches(r->m, &n);

	return i >= n ? "" : r->plain_names ? c[i].name : kmt_cache_label(&c[i]);
}

double frag_pct(uint64_t req, uint64_t alloc)
{
	return alloc ? 100.0 * (double)(kmt_waste(req, alloc)) / (double)alloc : 0;
}

uint64_t stack_weight(uint64_t v, uint64_t stacked, uint64_t total, uint64_t one_in)
{
	uint64_t all;

	if (one_in <= 1 || !stacked)
		return v;
	all = stacked * one_in < total ? stacked * one_in : total;
	return (uint64_t)((unsigned __int128)v * all / stacked);
}

uint64_t life_quantile(const uint64_t *b, double q, uint64_t lo, uint64_t hi)
{
	uint64_t total = 0, acc = 0, v = hi;
	int i;

	for (i = 0; i < KMT_LIFE_BUCKETS; i++)
		total += b[i];
	if (!total)
		return 0;
	for (i = 0; i < KMT_LIFE_BUCKETS; i++) {
		if (b[i] && (double)(acc + b[i]) >= q * (double)total) {
			/* Spread evenly over the bucket's range [2^(i-1), 2^i). */
			double lo_i = (double)kmt_life_bucket_ns(i), hi_i = i ? lo_i * 2 : 1;
			double f = (q * (double)total - (double)acc) / (double)b[i];

			v = (uint64_t)(lo_i + (f < 0 ? 0 : f) * (hi_i - lo_i));
			break;
		}
		acc += b[i];
	}
	return v < lo ? lo : v > hi ? hi : v;
}

int64_t running_sum(const int64_t *net, size_t n, int64_t *out)
{
	int64_t sum = 0, peak = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		sum += net ? net[i] : 0;
		out[i] = sum;
		peak = MAX(peak, sum);
	}
	return peak;
}
