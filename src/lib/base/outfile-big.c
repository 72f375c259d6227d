/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stream for a big output file (KMT_OUTFILE_BIG, include/kmemtrace/
 * outfile.h): what is written is gathered into aligned blocks of 4 MiB
 * that a thread of their own writes out, with O_DIRECT where the file
 * system takes it, so the writer's thread never copies into the page cache
 * and never waits for the disk while a block is free. Measured on a
 * 0.6 GB Perfetto export: the copy into the page cache was a third of it.
 *
 *   fwrite -> block[n % NBLK] --(full: kmt_handoff)--> writer thread -> fd
 *
 * The last, partial block is written by the closing thread after the
 * others, without O_DIRECT (its length is not aligned). The file
 * descriptor stays open: kmt_outfile_commit() syncs and closes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmt-local.h"

#define BLK (4u << 20)
#define NBLK 3

struct bigw {
	int fd;
	bool odirect;
	uint8_t *blk[NBLK];
	uint64_t cur;			/* the block being filled */
	size_t fill;			/* bytes in it */
	struct kmt_handoff *h;		/* the full blocks, to the writer */
	int err;			/* the writer's errno, 0 while fine (atomic) */
	pthread_t thread;
};

/* Write @len bytes of @p; an O_DIRECT write the file refuses is made again without it. */
static int put(struct bigw *w, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(w->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EINVAL && w->odirect) {
			w->odirect = false;
			fcntl(w->fd, F_SETFL, fcntl(w->fd, F_GETFL) & ~O_DIRECT);
			continue;
		}
		if (n < 0)
			return errno;
		if (n == 0)
			return EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void *writer(void *arg)
{
	struct bigw *w = arg;
	uint64_t i;
	int err;

	while (kmt_handoff_next(w->h, 0, &i)) {
		/* After an error the blocks are only taken back. */
		if (!__atomic_load_n(&w->err, __ATOMIC_RELAXED) && (err = put(w, w->blk[i % NBLK], BLK)))
			__atomic_store_n(&w->err, err, __ATOMIC_RELAXED);
		kmt_handoff_took(w->h, 0);
	}
	return NULL;
}

static ssize_t bigw_write(void *cookie, const char *buf, size_t size)
{
	struct bigw *w = cookie;
	size_t left = size;
	int err;

	while (left) {
		size_t n = MIN(left, BLK - w->fill);

		memcpy(w->blk[w->cur % NBLK] + w->fill, buf, n);
		w->fill += n;
		buf += n;
		left -= n;
		if (w->fill < BLK)
			break;
		kmt_handoff_give(w->h);
		/* The next block to fill must be written out already. */
		w->cur = kmt_handoff_room(w->h);
		w->fill = 0;
		err = __atomic_load_n(&w->err, __ATOMIC_RELAXED);
		if (err) {
			errno = err;
			return -1;
		}
	}
	return (ssize_t)size;
}

/* Everything out, the thread gone; the descriptor stays open. */
static int bigw_close(void *cookie)
{
	struct bigw *w = cookie;
	int err, i;

	kmt_handoff_end(w->h);
	pthread_join(w->thread, NULL);
	if (!w->err && w->fill) {
		if (w->odirect)
			fcntl(w->fd, F_SETFL, fcntl(w->fd, F_GETFL) & ~O_DIRECT);
		w->err = put(w, w->blk[w->cur % NBLK], w->fill);
	}
	err = w->err;
	for (i = 0; i < NBLK; i++)
		free(w->blk[i]);
	kmt_handoff_free(w->h);
	free(w);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

FILE *kmt_bigw_open(int fd)
{
	cookie_io_functions_t io = { .write = bigw_write, .close = bigw_close };
	struct bigw *w = calloc(1, sizeof(*w));
	FILE *f = NULL;
	int i, fl;

	if (!w)
		return NULL;
	w->fd = fd;
	for (i = 0; i < NBLK; i++)
		if (posix_memalign((void **)&w->blk[i], 4096, BLK))
			goto fail;
	if (!(w->h = kmt_handoff_new(NBLK, 1)))
		goto fail;
	if (pthread_create(&w->thread, NULL, writer, w))
		goto fail;
	/* Only a file written from its start: every block then lands aligned. */
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && lseek(fd, 0, SEEK_CUR) == 0 && !fcntl(fd, F_SETFL, fl | O_DIRECT))
		w->odirect = true;
	if (!(f = fopencookie(w, "w", io))) {
		bigw_close(w);
		return NULL;
	}
	return f;
fail:
	for (i = 0; i < NBLK; i++)
		free(w->blk[i]);
	kmt_handoff_free(w->h);
	free(w);
	return NULL;
}
