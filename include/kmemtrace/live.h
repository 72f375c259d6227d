/*
 * Live capture, for kmemtrace top: one thread per CPU reads ring-buffer
 * pages from trace_pipe_raw as they fill (the instance's buffer_percent
 * watermark), and the partial page too at least every period, into a
 * queue in memory that the analysis takes from. Unlike the recorder's
 * (record.h), nothing goes to a file here; the threads are the same kind
 * (real-time priority, excluded from tracing by the caller).
 */
#ifndef KMEMTRACE_LIVE_H
#define KMEMTRACE_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "kmemtrace.h"

struct kmt_live_opts {
	const char *instance_path;	/* tracefs instance directory */
	const int *cpus;
	int nr_cpus;
	uint32_t subbuf_size;
	int rt_prio;			/* > 0: SCHED_FIFO, else as is */
	unsigned int period_ms;		/* partial pages handed over at least this often */
	size_t max_bytes;		/* queued pages beyond which the readers wait */
	size_t prefault_bytes;		/* pages faulted in before the readers start */
};

/* A page as read: @len bytes (the rest of @data up to the page size is zero). */
struct kmt_live_page {
	struct kmt_live_page *next;
	uint32_t len;
	uint8_t data[];
};

struct kmt_live;

/* Open every CPU's trace_pipe_raw and start the threads. NULL + reason in @d. */
struct kmt_live *kmt_live_start(const struct kmt_live_opts *o, struct kmt_diag *d);
int kmt_live_tids(const struct kmt_live *l, pid_t *tids, int max);
/* Readable when a thread stopped on an error. */
int kmt_live_error_fd(const struct kmt_live *l);
/*
 * The pages of CPU index @i read so far, oldest first (NULL if none), and
 * in *@empty_ns the CLOCK_MONOTONIC time just before the thread last found
 * that CPU's buffer empty: with the "mono" trace clock, every event older
 * than that (less what is still being written) has been handed over.
 */
struct kmt_live_page *kmt_live_take(struct kmt_live *l, int i, uint64_t *empty_ns);
/* Give pages back for reuse (the list from kmt_live_take, or part of it). */
void kmt_live_put(struct kmt_live *l, struct kmt_live_page *list);
/* Bytes of pages waiting to be taken. */
uint64_t kmt_live_queued(const struct kmt_live *l);
/*
 * Read what the buffers still hold, stop the threads and close the
 * trace_pipe_raw files (tracing switched off first; the instance can go
 * then). The pages stay to be taken. 0 or the first thread error, message
 * in @d.
 */
int kmt_live_stop(struct kmt_live *l, struct kmt_diag *d);
/* Close the trace_pipe_raw files and free every page, taken or not. */
void kmt_live_free(struct kmt_live *l);

#endif
