/*
 * kmemtrace report, shared between its files: the options, the model
 * with everything needed to print it, and the three printers.
 */
#ifndef KMT_REPORT_H
#define KMT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <kmemtrace/flags.h>
#include <kmemtrace/hashptr.h>
#include <kmemtrace/model.h>
#include <kmemtrace/symbols.h>
#include <kmemtrace/tracefile.h>

enum {
	SEC_SUMMARY = 1 << 0,
	SEC_CALLSITES = 1 << 1,
	SEC_CACHES = 1 << 2,
	SEC_PROCESSES = 1 << 3,
	SEC_PAGES = 1 << 4,
	SEC_LIFETIMES = 1 << 5,
	SEC_OUTSTANDING = 1 << 6,
	SEC_MISUSE = 1 << 7,
	SEC_ACCESS = 1 << 8,		/* watchpoint samples (kmemtrace watch) */
	SEC_ALL = (1 << 9) - 1,
};

enum sort_key { SORT_BYTES, SORT_ALLOCS, SORT_FREES, SORT_WASTE, SORT_FRAG, SORT_PINGPONG,
	SORT_LIVE, SORT_REQ, SORT_CALLSITE, SORT_NR };

struct report {
	const char *path;
	unsigned int sections;
	enum sort_key sort[8];
	int nr_sort;
	int top;			/* rows per table, 0: all */
	bool raw_ip;
	struct kmt_hashptr hash;	/* --hash-pointers */
	double t_start, t_end;		/* seconds from the first event, < 0: open */
	/* filled by the run */
	struct kmt_file *f;
	struct kmt_model *m;
	struct kmt_symbols *syms;
	struct kmt_flags *gfp_names;
	uint64_t t0;			/* first event in the file */
	const char *skipped;		/* events the decoder could not map */
	bool all_sections;		/* no --sections: skip empty optional ones */
};

/* The section name of a bit, and the bit of a name (0 if none). */
const char *section_name(unsigned int bit);
unsigned int section_bit(const char *name);
/* "do_getxattr+0x55" (or the address with --raw-ip) into @buf. */
const char *site_name(const struct report *r, uint64_t addr, char *buf, size_t len);
/* The function alone: "do_getxattr". */
const char *site_function(const struct report *r, uint64_t addr, char *buf, size_t len);
/* An address, hashed with --hash-pointers. */
const char *addr_str(const struct report *r, uint64_t addr, char *buf, size_t len);
/* The cache name of index @i, or "". */
const char *cache_name(const struct report *r, uint32_t i);
/* Sites sorted by the report's keys; a malloc'd array of pointers. */
const struct kmt_site **sorted_sites(const struct report *r, const struct kmt_site *v, size_t n);
double frag_pct(uint64_t req, uint64_t alloc);
/*
 * The @q quantile of a log2 histogram, spreading each bucket evenly over its
 * range (so within a factor of two of the truth), clamped to [lo, hi].
 */
uint64_t life_quantile(const uint64_t *b, double q, uint64_t lo, uint64_t hi);

void report_text(const struct report *r, FILE *out);
void report_json(const struct report *r, FILE *out);
int report_csv(const struct report *r, const char *section, FILE *out);

#endif
