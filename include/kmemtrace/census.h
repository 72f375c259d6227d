/*
 * A census of a trace file's buffer: per CPU, how many pages, events and
 * bytes, how many events the ring buffer reported lost, and per event id
 * how many records. A page walk only; no event is decoded.
 */
#ifndef KMEMTRACE_CENSUS_H
#define KMEMTRACE_CENSUS_H

#include <stdint.h>
#include "tracefile.h"

struct kmt_census_cpu {
	int cpu;
	uint64_t pages, events, bytes;	/* bytes: pages x sub-buffer size */
	uint64_t lost_events;		/* sum of the counts pages carry */
	uint64_t lost_pages;		/* pages flagged "events missed" */
	uint64_t lost_unknown;		/* ... whose count did not fit */
	uint64_t lost;			/* the one figure: kmt_cpustat_lost() */
	uint64_t first_ts, last_ts;
};

struct kmt_census {
	int nr_cpus;
	struct kmt_census_cpu *cpus;
	uint32_t nr_ids;
	uint64_t *per_id;		/* records per event id, nr_ids entries */
	uint64_t events, lost_events, lost_unknown;
	uint64_t lost, lost_pages;	/* the one figure, and the gaps, over all CPUs */
	/* Parts of a damaged file's data passed over, in file order per CPU. */
	struct kmt_skip *skipped;
	size_t nr_skipped;
};

/*
 * Walk every page of @buffer of @f, passing over what cannot be read (in
 * @c->skipped). Returns 0, or a negative error (out of memory) with the
 * reason in @d. Release @c with kmt_census_release() either way.
 */
int kmt_census_run(struct kmt_census *c, struct kmt_file *f, int buffer,
		   struct kmt_diag *d);
void kmt_census_release(struct kmt_census *c);

#endif
