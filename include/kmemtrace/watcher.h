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
#ifndef KMEMTRACE_WATCHER_H
#define KMEMTRACE_WATCHER_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "btf.h"
#include "hwbp.h"
#include "kmemtrace.h"
#include "spool.h"

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
