/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 *  * libkmemtrace, the watch stage (src/lib/watch/): hardware watchpoints
 * and the watcher that samples accesses to chosen objects.
 */
#ifndef KMEMTRACE_WATCH_H
#define KMEMTRACE_WATCH_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base.h"
#include "event.h"
#include "capture.h"

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

/*
 * The watcher behind kmemtrace watch: inside a running recording, it
 * follows one cache's or call site's allocations live, picks objects among
 * them and watches words of each with hardware watchpoints (hwbp.h),
 * writing every sample as a kmemtrace:access event (access.h) into the
 * spool's access buffer (spool.h).
 *
 *   control instance (kmemtrace-PID-ctl: the target's allocations, the
 *   frees of watched objects) --> pick objects, arm / move / disarm the
 *   watchpoints --(hits)--> kmemtrace:access pages in the spool
 *
 * The recording beside it keeps the target's allocations and every free,
 * so the analysis can tell, per sample, which object was live at that
 * address then; the watcher only needs to move a watchpoint soon after a
 * free. The control instance, the recording and the watchpoints all use
 * CLOCK_MONOTONIC ("mono"), so samples and events merge by time.
 *
 * Life: kmt_watcher_start() once the recording traces, then
 * kmt_watcher_fds() / kmt_watcher_poll() in the recording's wait loop,
 * kmt_watcher_stop() on every path before the recording's instance goes,
 * kmt_watcher_free() at the end.
 */

#define KMT_WATCH_MAX_WORDS 8192	/* offsets tracked for coverage (64 KiB objects) */

enum kmt_watch_kind { KMT_WATCH_CALLSITE, KMT_WATCH_CACHE, KMT_WATCH_KMALLOC };

/* Whose objects to watch. */
struct kmt_watch_target {
	enum kmt_watch_kind kind;
	char name[128];			/* function, cache, or "kmalloc-N" */
	uint64_t lo, hi;		/* KMT_WATCH_CALLSITE: the function's addresses */
	uint64_t size;			/* KMT_WATCH_KMALLOC: the size class */
};

/* A fixed word to watch (--offset). */
struct kmt_watch_offset {
	uint32_t off, len;
	char field[64];			/* the member's name, or "" */
};

struct kmt_watcher_opts {
	const char *root;		/* tracefs */
	const int *cpus;
	int nr_cpus;
	struct kmt_spool *spool;	/* samples go to its access buffer (not owned) */
	struct kmt_watch_target target;
	struct kmt_watch_offset offs[KMT_HWBP_MAX_SLOTS];
	int nr_offs;			/* 0: scan */
	bool scan;			/* rotate over every word of the objects */
	const char *type;		/* struct naming the offsets, or NULL */
	const struct kmt_btf *btf;	/* for @type (not owned), or NULL */
	uint64_t max_objects;		/* stop after this many objects, 0: no limit */
	const pid_t *pids;		/* candidates only from these tasks and children */
	int nr_pids;
	double dwell;			/* seconds on one object (or word) */
	unsigned int ring_pages;	/* per CPU, a power of 2 */
	unsigned int ctl_buffer_kb;	/* the control instance's ring buffer per CPU; 0: 1024 */
	int nr_slots;			/* words watched at once, <= KMT_HWBP_MAX_SLOTS */
};

/* What the watcher did, for its summary. */
struct kmt_watcher_stats {
	uint64_t allocs_seen;		/* target allocations reported */
	uint64_t objects;		/* objects watched */
	uint64_t hits;			/* samples taken */
	uint64_t unmapped;		/* of them outside any watch (not kept) */
	uint64_t rearms;		/* watchpoint moves */
	uint64_t lost;			/* samples the kernel dropped */
	int slots;			/* words watched at a time in the end */
	uint32_t words;			/* offsets covered */
	uint32_t max_off;		/* end of the highest word watched */
	char note[160];			/* why slots were given up, or "" */
};

struct kmt_watcher;

/*
 * The watchpoint rings, the access buffer in the spool, and the control
 * instance, tracing. NULL with the reason in @d; nothing is left behind.
 */
struct kmt_watcher *kmt_watcher_start(const struct kmt_watcher_opts *o, struct kmt_diag *d);
/* The name of its control instance (for a watchdog to guard too). */
const char *kmt_watcher_ctl_name(const struct kmt_watcher *w);
/*
 * Descriptors to poll (the watchpoint rings) into @pf (at most @max);
 * *@timeout_ms gets how soon kmt_watcher_poll() wants to run (the control
 * instance is read every few milliseconds). Returns how many.
 */
int kmt_watcher_fds(struct kmt_watcher *w, struct pollfd *pf, int max, int *timeout_ms);
/*
 * Read the control instance and the samples, move the watchpoints.
 * Returns 1 once --objects is reached and every watch is over, else 0.
 */
int kmt_watcher_poll(struct kmt_watcher *w);
/*
 * Disarm, write the remaining samples and their stats into the spool,
 * remove the control instance. Safe to call twice.
 */
void kmt_watcher_stop(struct kmt_watcher *w);
const struct kmt_watcher_stats *kmt_watcher_stats(const struct kmt_watcher *w);
/* Was the word at byte @off (a multiple of 8) ever watched? */
bool kmt_watcher_covered(const struct kmt_watcher *w, uint32_t off);
/* Stops it first if needed. NULL is fine. */
void kmt_watcher_free(struct kmt_watcher *w);

/* The tracefs filter that selects @t's allocations on @ev, or NULL if @ev has none. */
const char *kmt_watch_alloc_filter(const struct kmt_watch_target *t, const char *ev, char *buf,
				   size_t len);

#endif
