/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Holding captured pages in memory without copying them: per CPU, a queue
 * of large pipes that ring-buffer pages are spliced into (the kernel moves
 * page references, nothing is copied). A low-priority flusher thread
 * empties sealed pipes into the spool files when the machine has idle
 * time; a reader that finds the holding limit reached flushes its own
 * queue first. With a limit of 0 every page goes straight to the file.
 */
#ifndef KMT_HOLD_H
#define KMT_HOLD_H

#include <stddef.h>
#include <stdint.h>

#include <kmemtrace/base.h>

/* Private to the library: hidden from its users (see the Makefile). */
#pragma GCC visibility push(hidden)

struct hold;

/*
 * @out_fds: the spool file of each of @n CPUs. @limit: bytes that may be
 * held in memory in all (0: write through). NULL + errno on failure.
 */
struct hold *hold_new(int n, const int *out_fds, size_t limit);
/* Start the flusher thread (SCHED_IDLE); 0 or -errno. */
int hold_start(struct hold *h);
/*
 * Move every full page @in_fd has for CPU index @i into the queue.
 * Returns bytes moved, or -errno (the failing step in @d).
 */
long hold_splice_in(struct hold *h, int i, int in_fd, struct kmt_diag *d);
/* Queue @len bytes from memory (the partial last page); 0 or -errno with @d. */
int hold_write_in(struct hold *h, int i, const void *buf, size_t len, struct kmt_diag *d);
/* Stop the flusher: what is held now stays held. */
void hold_seal(struct hold *h);
/* Bytes held for CPU index @i (after hold_seal(), they stay so until read). */
uint64_t hold_queued(struct hold *h, int i);
/* The next @len held bytes of CPU index @i, in order, out of the pipes; 0 or -errno with @d. */
int hold_read(struct hold *h, int i, void *buf, size_t len, struct kmt_diag *d);
/*
 * Stop the flusher and write everything held to the files. Returns 0 or
 * the first error (message in @d).
 */
int hold_finish(struct hold *h, struct kmt_diag *d);
/* Bytes taken in for CPU @i so far, and bytes in memory now. */
uint64_t hold_bytes_in(const struct hold *h, int i);
uint64_t hold_held(const struct hold *h);
/* A tid to exclude from tracing (the flusher's), or 0. */
int hold_flusher_tid(const struct hold *h);
void hold_free(struct hold *h);

#pragma GCC visibility pop

#endif
