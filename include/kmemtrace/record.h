/*
 * The capture threads: tracefs instance -> per-CPU spool files.
 *
 * While the workload runs, one thread per CPU moves whole ring-buffer
 * pages from per_cpu/cpuN/trace_pipe_raw into the spool (spool.h) with
 * splice(), sleeping in poll() until the kernel's buffer_percent watermark
 * wakes it: no per-event work, no wake-up per event. After the workload,
 * kmt_spool_finalize() turns the spool into trace.dat v7, compressing
 * then, never on the recording path.
 */
#ifndef KMEMTRACE_RECORD_H
#define KMEMTRACE_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "kmemtrace.h"
#include "spool.h"

/* ---- the capture threads ---- */

struct kmt_recorder_opts {
	const char *instance_path;	/* tracefs instance directory */
	struct kmt_spool *spool;	/* where the pages go (not owned) */
	const int *cpus;
	int nr_cpus;
	uint32_t subbuf_size;
	int rt_prio;			/* > 0: SCHED_FIFO at this priority (or
					   nice -20 if not allowed); 0: as is */
	size_t hold_bytes;		/* pages held in memory before they are
					   written (0: write through) */
	unsigned int sync_ms;		/* > 0: also take what each ring buffer
					   has, its partial page too, this often
					   (with hold_bytes 0: the spool is never
					   further behind); 0: at the watermark */
	bool append;			/* add to the spool's data files (a dead
					   recorder's, recover.h) */
};

struct kmt_recorder;

/*
 * Open every CPU's trace_pipe_raw and spool file and start the threads.
 * They run (and move data) until kmt_recorder_stop(). NULL + reason in @d.
 */
struct kmt_recorder *kmt_recorder_start(const struct kmt_recorder_opts *o,
					struct kmt_diag *d);
/* The threads' tids (to exclude from tracing); returns how many. */
int kmt_recorder_tids(const struct kmt_recorder *r, pid_t *tids, int max);
/* An fd that becomes readable when a thread stops on an error. */
int kmt_recorder_error_fd(const struct kmt_recorder *r);
/* Bytes captured so far for CPU index @i, and bytes held in memory now. */
uint64_t kmt_recorder_bytes(const struct kmt_recorder *r, int i);
uint64_t kmt_recorder_held(const struct kmt_recorder *r);
/*
 * Drain what the ring buffers still hold (full pages, then the partial
 * last page) and join the threads. Call after tracing is switched off.
 * Returns 0 or the first thread error (message in @d; -ENOSPC for a full
 * disk, in which case the spool holds everything up to that point).
 */
int kmt_recorder_stop(struct kmt_recorder *r, struct kmt_diag *d);
/*
 * As kmt_recorder_stop(), but the pages held in memory stay there, to be
 * read in order with kmt_recorder_read_held() (finalising straight from
 * memory, never through the spool files). kmt_recorder_stop() afterwards
 * writes whatever is left to the spool, returning only its own error (the
 * capture's came from this call). The instance must outlive the held
 * pages: remove it only after kmt_recorder_free().
 */
int kmt_recorder_halt(struct kmt_recorder *r, struct kmt_diag *d);
/* Bytes held in memory for CPU index @i, after the spool file's. */
uint64_t kmt_recorder_held_bytes(struct kmt_recorder *r, int i);
/* The next @len of them; 0, or -errno with @d. */
int kmt_recorder_read_held(struct kmt_recorder *r, int i, void *buf, size_t len,
			   struct kmt_diag *d);
/* Close the trace_pipe_raw files (the instance can then be removed). */
void kmt_recorder_free(struct kmt_recorder *r);

#endif
