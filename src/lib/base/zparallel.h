/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Compress long runs of bytes in chunks on several threads, handing the
 * compressed chunks back in order on the caller's thread. The trace
 * writer's CPU data goes through it, so finishing a recording (and
 * convert) compresses on every core.
 */
#ifndef KMT_ZPARALLEL_H
#define KMT_ZPARALLEL_H

#include <stdint.h>
#include <kmemtrace/base.h>

#pragma GCC visibility push(hidden)

/* Read @len bytes of segment @seg at @off into @buf: 0 or -errno. Called on workers. */
typedef int kmt_zparallel_read_fn(void *arg, int seg, void *buf, size_t len, uint64_t off);
/*
 * Segment @seg's chunk at @off (@len bytes, still at @raw) compressed to
 * @n bytes at @z: 0 or -errno. In order.
 */
typedef int kmt_zparallel_out_fn(void *arg, int seg, const void *raw, const void *z, size_t n,
				 size_t len, uint64_t off);

/* The threads worth using here: the online CPUs, at most 16. */
int kmt_zparallel_threads(void);
/* @nthreads compressing contexts of @chunk-byte chunks; NULL on ENOMEM. */
struct kmt_zparallel *kmt_zparallel_new(enum kmt_zalg alg, int level, size_t chunk, int nthreads);
void kmt_zparallel_free(struct kmt_zparallel *p);
/*
 * Compress @nseg runs of bytes, @sizes[i] each (a trace file's CPUs, one
 * after another), in chunks that never straddle two: @read on the
 * workers, @out on this thread in order, segment by segment. The workers
 * go on into the next segments while this one's last chunks are written,
 * so a file of many small CPUs keeps them all busy. Stops at the first
 * error, which it returns.
 */
int kmt_zparallel_run(struct kmt_zparallel *p, int nseg, const uint64_t *sizes,
		      kmt_zparallel_read_fn *read, kmt_zparallel_out_fn *out, void *arg);

#pragma GCC visibility pop

#endif
