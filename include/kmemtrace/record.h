/*
 * Recording: tracefs instance -> per-CPU spool files -> trace.dat.
 *
 * While the workload runs, one thread per CPU moves whole ring-buffer
 * pages from per_cpu/cpuN/trace_pipe_raw into spool/cpuN with splice(),
 * sleeping in poll() until the kernel's buffer_percent watermark wakes it:
 * no per-event work, no wake-up per event. Everything else (metadata,
 * stats) is written into the spool directory as plain files, so a spool
 * left by a recorder that was killed is enough to build a valid trace.
 * After the workload, kmt_spool_finalize() turns the spool into trace.dat
 * v7, compressing then, never on the recording path. A spool with an
 * access/ directory (kmemtrace watch: access/cpuN pages of kmemtrace:access
 * events) gives a second buffer, KMT_ACCESS_BUFFER.
 */
#ifndef KMEMTRACE_RECORD_H
#define KMEMTRACE_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "compress.h"
#include "kmemtrace.h"
#include "tracefs.h"

/* ---- the capture threads ---- */

struct kmt_recorder_opts {
	const char *instance_path;	/* tracefs instance directory */
	const char *spool_dir;
	const int *cpus;
	int nr_cpus;
	uint32_t subbuf_size;
	int rt_prio;			/* > 0: SCHED_FIFO at this priority (or
					   nice -20 if not allowed); 0: as is */
	size_t hold_bytes;		/* pages held in memory before they are
					   written (0: write through) */
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
/* Close the trace_pipe_raw files (the instance can then be removed). */
void kmt_recorder_free(struct kmt_recorder *r);

/* ---- the spool directory ---- */

/*
 * Create @dir (0700) for a recording by this process. -EEXIST with an
 * explanation if it exists (and who left it).
 */
int kmt_spool_create(const char *dir, struct kmt_diag *d);
/* Write @dir/@name (0600) with @len bytes. */
int kmt_spool_put(const char *dir, const char *name, const void *data, size_t len,
		  struct kmt_diag *d);
/* Append "key value\n" to @dir/meta. */
int kmt_spool_meta(const char *dir, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Add one event format to @dir/formats. */
int kmt_spool_add_format(const char *dir, const char *system, const char *name,
			 const char *text, size_t len, struct kmt_diag *d);
/* Remove @dir and everything in it. */
int kmt_spool_remove(const char *dir);
/*
 * Set aside @bytes of disk in @dir (the file "reserve"): if the disk fills
 * while recording, finalising gives it back first and has room to write
 * the trace's metadata. -ENOSPC if there is not even that much room.
 */
int kmt_spool_reserve(const char *dir, uint64_t bytes, struct kmt_diag *d);

struct kmt_finalize_opts {
	enum kmt_zalg zalg;
	int level;
	uint32_t chunk_pages;
	bool recovered;			/* the recorder died; no end stats */
	bool punch;			/* free spool space while writing (disk full) */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
};

struct kmt_finalize_cpu {
	int cpu;
	uint64_t events, pages, bytes;
	uint64_t lost;			/* counts from page headers */
	uint64_t lost_unknown;		/* flagged pages without a count */
	uint64_t overrun, dropped;	/* from the ring buffer's stats */
	bool has_stats;
};

struct kmt_finalize_result {
	int nr_cpus;
	struct kmt_finalize_cpu cpus[256];
	uint64_t events, lost, raw_bytes, file_bytes;
	uint64_t access_events, access_lost;	/* kmemtrace watch's samples */
	bool truncated;
	char truncated_why[128];
};

/*
 * Build @output from the spool @dir: written to a temporary name in the
 * same directory, synced, then renamed, so @output is either absent or
 * complete. The spool is left in place (remove it on success).
 */
int kmt_spool_finalize(const char *dir, const char *output,
		       const struct kmt_finalize_opts *o, struct kmt_finalize_result *res,
		       struct kmt_diag *d);

#endif
