/*
 * Hardware data watchpoints on kernel addresses, on every CPU, through
 * perf_event_open(PERF_TYPE_BREAKPOINT) — what kmemtrace watch samples
 * object accesses with.
 *
 * A slot watches one aligned word (1, 2, 4 or 8 bytes) with two
 * breakpoints per CPU: one that fires on writes and one on reads and
 * writes (x86 cannot watch reads alone). A write fires both, in the same
 * debug exception, so their samples are adjacent in the CPU's ring and are
 * paired into one write; a read-and-write sample alone is a read. x86 has
 * four debug registers per CPU: two slots at most (fewer if a debugger
 * holds some). Slots are moved with PERF_EVENT_IOC_MODIFY_ATTRIBUTES, a
 * few microseconds, without closing anything. All samples of a CPU go to
 * one ring (a dummy event's), time-stamped with CLOCK_MONOTONIC — the
 * clock of tracefs's "mono" trace clock.
 */
#ifndef KMEMTRACE_HWBP_H
#define KMEMTRACE_HWBP_H

#include <stdbool.h>
#include <stdint.h>
#include "kmemtrace.h"

#define KMT_HWBP_MAX_SLOTS 2

struct kmt_hwbp_hit {
	uint64_t ts;			/* CLOCK_MONOTONIC, ns */
	uint64_t ip;			/* the instruction after the access */
	uint64_t addr;			/* the watched address */
	int32_t pid, tid;
	int cpu;
	int slot;
	bool write;
};

struct kmt_hwbp;

/*
 * Open rings on @nr_cpus CPUs (@ring_pages data pages each, a power of 2)
 * for up to @slots slots. No breakpoint is set yet. NULL + @d on failure
 * (-EACCES/-EPERM without the privilege, -ENOENT/-EOPNOTSUPP without
 * hardware breakpoints).
 */
struct kmt_hwbp *kmt_hwbp_open(const int *cpus, int nr_cpus, int slots, unsigned int ring_pages,
			       struct kmt_diag *d);
/* Slots usable (after arming found the debug registers taken). */
int kmt_hwbp_slots(const struct kmt_hwbp *h);
/*
 * Watch @len bytes at @addr (aligned to @len) with @slot on every CPU.
 * -ENOSPC if the debug registers are taken (the slot is then unusable),
 * -EINVAL for a bad address or length.
 */
int kmt_hwbp_arm(struct kmt_hwbp *h, int slot, uint64_t addr, unsigned int len,
		 struct kmt_diag *d);
/* Stop watching with @slot. */
int kmt_hwbp_disarm(struct kmt_hwbp *h, int slot);
/* The ring fds to poll (one per CPU); returns how many. */
int kmt_hwbp_fds(const struct kmt_hwbp *h, int *fds, int max);
/*
 * Hand every sample waiting in the rings to @fn, writes paired, CPU by CPU
 * in order. With @final, a sample waiting for its pair is handed out too.
 * Returns the number of hits.
 */
int kmt_hwbp_read(struct kmt_hwbp *h, bool final,
		  void (*fn)(void *arg, const struct kmt_hwbp_hit *hit), void *arg);
/* Samples the kernel dropped (ring full, throttling) on CPU index @i. */
uint64_t kmt_hwbp_lost(const struct kmt_hwbp *h, int i);
/* Closing disarms everything. */
void kmt_hwbp_close(struct kmt_hwbp *h);

/* What kmt_hwbp_probe() saw. */
struct kmt_hwbp_probe {
	int cpus;			/* CPUs tested */
	uint64_t writes, counted;	/* writes made, and counted by the watchpoint */
	int silent_cpu;			/* the first CPU that missed writes, or -1 */
	uint64_t silent_counted;	/* what it counted */
};

/* Test flag: watch a word nobody writes, so the probe sees no hit (tests). */
#define KMT_HWBP_PROBE_DECOY 1u

/*
 * Check that watchpoints fire on each of @cpus: a write watchpoint on a
 * word of the calling thread's, written a known number of times on each
 * CPU in turn (the thread's affinity is restored after). 0 if every write
 * was counted; KMT_ENOFIRE if the watchpoint opened but missed writes
 * (hypervisors that do not pass debug registers through); -ENOENT,
 * -EOPNOTSUPP, -ENODEV without hardware breakpoints; -EACCES/-EPERM without
 * the privilege. @d gets one line; @res is filled in any case.
 */
int kmt_hwbp_probe(const int *cpus, int nr_cpus, unsigned int flags, struct kmt_hwbp_probe *res,
		   struct kmt_diag *d);

#endif
