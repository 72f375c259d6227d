/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private helpers shared by the library's modules: byte order, a growable
 * buffer, growing arrays (grow.h), whole-file reads. Nothing here is part
 * of the public API.
 */
#ifndef KMT_LOCAL_H
#define KMT_LOCAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <string.h>
#include <sys/types.h>
#include <dirent.h>
#include <sys/stat.h>

#include <kmemtrace/base.h>
#include "grow.h"

/* Private to the library: hidden from its users (see the Makefile). */
#pragma GCC visibility push(hidden)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define ALIGN_UP(x, a) (((x) + (a) - 1) / (a) * (a))

/*
 * A stream over @fd (a file written from its start) whose blocks a thread
 * writes out, with O_DIRECT where it can (outfile-big.c). fclose() writes
 * the rest and leaves @fd open. NULL on failure.
 */
FILE *kmt_bigw_open(int fd);

/*
 * Prefetch the cache line at @p into every cache level. GCC 12 drops
 * __builtin_prefetch in branches of functions it inlines (model.o had one
 * prefetch instruction of the three written), so on x86 it is an
 * instruction of its own, which the compiler keeps. Never faults.
 */
static inline void kmt_prefetch(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1);
#endif
}

/* CLOCK_MONOTONIC in ns. */
static inline uint64_t kmt_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* The calling thread's CPU time in ns (a system call: not per event). */
static inline uint64_t kmt_thread_cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/*
 * pthread_cond_wait(), and the calling thread's CPU time spent in it —
 * going to sleep and waking up, what a hand-over costs a thread that has
 * nothing to do or finds the lock taken — added up once the thread has
 * said kmt_wait_count(true). So --stats tells a stage's work (its CPU
 * less this) from its waiting.
 */
void kmt_cond_wait(pthread_cond_t *cv, pthread_mutex_t *mu);
/* pthread_mutex_lock(), and if another thread holds it, the CPU time spent waiting, likewise. */
void kmt_lock(pthread_mutex_t *mu);
void kmt_wait_count(bool on);
uint64_t kmt_waited_ns(void);

/* Unaligned loads in little or big endian. */
static inline uint16_t ld16(const void *p, bool be)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return be ? __builtin_bswap16(v) : v;
}

static inline uint32_t ld32(const void *p, bool be)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return be ? __builtin_bswap32(v) : v;
}

static inline uint64_t ld64(const void *p, bool be)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return be ? __builtin_bswap64(v) : v;
}

/* Load an unsigned integer of @size bytes (1, 2, 4 or 8). */
static inline uint64_t ldn(const void *p, unsigned int size, bool be)
{
	switch (size) {
	case 1: return *(const uint8_t *)p;
	case 2: return ld16(p, be);
	case 4: return ld32(p, be);
	case 8: return ld64(p, be);
	}
	return 0;
}

/* A growable byte buffer; zero-initialise, release with sbuf_release(). */
struct sbuf {
	char *buf;
	size_t len;
	size_t alloc;
};

int sbuf_grow(struct sbuf *sb, size_t extra);
int sbuf_add(struct sbuf *sb, const void *data, size_t len);
int sbuf_addstr(struct sbuf *sb, const char *s);	/* with its NUL */
int sbuf_printf(struct sbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));		/* without NUL */
int sbuf_add16(struct sbuf *sb, uint16_t v);
int sbuf_add32(struct sbuf *sb, uint32_t v);
int sbuf_add64(struct sbuf *sb, uint64_t v);
void sbuf_release(struct sbuf *sb);

/*
 * Read a whole file, including /proc and tracefs files that report size 0.
 * The result is NUL-terminated (not counted in len). -errno on failure.
 */
int read_file(const char *path, struct sbuf *out);
/* Write all of @len bytes, retrying short writes; -errno on failure. */
int write_all(int fd, const void *buf, size_t len);
/* pwrite() all of @len bytes at @off; -errno on failure. */
int pwrite_all(int fd, const void *buf, size_t len, off_t off);
/* pread() all of @len bytes at @off (-EIO at the end of the file); -errno. */
int pread_all(int fd, void *buf, size_t len, off_t off);
/* Write @s to an existing file (tracefs control files); -errno. */
int write_str_file(const char *path, const char *s);

/* The raw format text of @ev ("system:name") in tracefs at @root (tracefs.c). */
int tracefs_format_text(const char *root, const char *ev, struct sbuf *out);

/* strdup()/strndup() returning NULL on failure; a small convenience. */
char *xstrndup(const char *s, size_t n);

/*
 * Run @fn(@arg, i) for every i in [0, @n) on up to kmt_parallel_workers(@n)
 * threads (this one among them: kmt_cpus_usable(), at most 16). Returns 0,
 * or the error of the lowest i that failed (-ENOMEM if it could not
 * start); every i runs either way.
 */
int kmt_parallel(int n, int (*fn)(void *arg, int i), void *arg);
int kmt_parallel_workers(int n);
/* A string of the file (NUL-terminated) escaped into @buf, an array. */
#define ESC(buf, s) kmt_escape(buf, sizeof(buf), s, SIZE_MAX)

/* open(), mkdir() ... with the owner's rights (owner.c): for the spool's files. */
int owner_open(const char *path, int flags, mode_t mode);
int owner_mkdir(const char *path, mode_t mode);
int owner_rename(const char *from, const char *to);
int owner_unlink(const char *path);
int owner_rmdir(const char *path);
int owner_stat(const char *path, struct stat *st);
DIR *owner_opendir(const char *path);
int owner_read_file(const char *path, struct sbuf *out);

#pragma GCC visibility pop

#endif
