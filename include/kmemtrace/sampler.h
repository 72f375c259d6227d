/*
 * Fair stack sampling (record --stack-sample N).
 *
 * A stack for 1 allocation in N, chosen so that every call site gets its
 * share: a thread switches the instance's "stacktrace" option on for
 * short slices of time at random moments, as many events off as N - 1
 * times the events on. While it is on, the kernel puts a stack after
 * every event it records (frees too; the model keeps only the
 * allocations'). A call site that reuses the same few objects is sampled
 * as often as any other: the choice depends on when an allocation
 * happens, never on its address. It is fair to call sites whose
 * allocations spread over many slices (2 ms / N long, at least 50 us,
 * and about N times that apart); a burst shorter than that is sampled
 * all or nothing, and a call site whose code runs slower under stacks
 * than the rest is sampled a little less. The counts it steers by come
 * from the ring buffers' stats while it switches; on a machine saturated
 * by other work they go wrong (seen: 1 event in 23 to 1 in 72 with stacks
 * for 1 in 16 asked, two hackbench recordings running beside; the call
 * sites still got equal shares), so record prints what the file holds.
 *
 * Switching the stacktrace trigger instead costs a synchronize_rcu per
 * removal (~70 ms on 6.18); the option is one flag (~15 us a write).
 */
#ifndef KMEMTRACE_SAMPLER_H
#define KMEMTRACE_SAMPLER_H

#include <stdint.h>
#include <sys/types.h>
#include "kmemtrace.h"

struct kmt_sampler_opts {
	const char *instance_path;	/* tracefs instance directory */
	const int *cpus;		/* its CPUs, whose events it counts */
	int nr_cpus;
	unsigned int one_in;		/* N >= 2: on 1/N of the time */
	int rt_prio;			/* > 0: SCHED_FIFO at this priority */
	uint32_t slice_us;		/* length of an "on" slice; 0: 2 ms / N, 50 us at least */
	uint64_t seed;			/* of the random gaps; 0: from the clock */
};

/* What the sampler did, for the record's summary and tests. */
struct kmt_sampler_stats {
	uint64_t on_ns, total_ns;	/* time stacks were on, time it ran */
	uint64_t slices;		/* times it was switched on */
	uint64_t events_on, events_off;	/* events counted while on, off */
};

struct kmt_sampler;

/*
 * Start the thread; the option is off until its first slice. NULL and the
 * reason in @d (the option file cannot be opened or written).
 */
struct kmt_sampler *kmt_sampler_start(const struct kmt_sampler_opts *o, struct kmt_diag *d);
/* The thread's tid (to exclude from tracing). */
pid_t kmt_sampler_tid(const struct kmt_sampler *s);
/*
 * Stop the thread and leave the option off; fills @st (may be NULL).
 * Returns 0, or the error of a write that failed (the option may be on).
 * Safe to call twice.
 */
int kmt_sampler_stop(struct kmt_sampler *s, struct kmt_sampler_stats *st);
/* Stop if running, and free. Takes NULL. */
void kmt_sampler_free(struct kmt_sampler *s);

#endif
