/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libkmemtrace, the base stage (src/lib/base/): errors, versions, the
 * hash map and interner, keyed address hashes, files written whole or not
 * at all, compression, the hand-over of batches between threads.
 */
#ifndef KMEMTRACE_BASE_H
#define KMEMTRACE_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * kmemtrace — kernel memory tracing on a stock kernel.
 *
 * The library behind the kmemtrace command: a tracefs recorder that moves
 * ring-buffer pages into trace.dat files, a reader for trace.dat v6/v7, an
 * event decoder driven by the formats stored in the file, and the allocation
 * model the report is built on.
 *
 * Conventions for every function in include/kmemtrace/:
 *  - int-returning functions return 0 (or a count) on success and a negative
 *    error on failure: -errno for system errors, KMT_E* for the errors below.
 *  - constructors return a pointer, or NULL with errno set.
 *  - the library never prints and never exits; where a failure needs more
 *    than an error code (file, section, offset), the function takes a
 *    struct kmt_diag that receives a one-line message.
 *  - who frees what is written next to each function.
 */

#define KMT_VERSION "0.1.1"

/* CPUs a recording or a trace file may have, numbered 0 .. KMT_MAX_CPUS - 1. */
#define KMT_MAX_CPUS 4096

/* Errors of our own, in a range that cannot collide with -errno. */
enum {
	KMT_EFIRST = -10000,
	KMT_EFORMAT = KMT_EFIRST,	/* the file is not what it claims to be */
	KMT_ETRUNC,			/* the file ends too early */
	KMT_EVERSION,			/* unsupported file version */
	KMT_ECOMPRESS,			/* unknown compression, or a bad chunk */
	KMT_ENOEVENT,			/* the kernel has no such event */
	KMT_ENOTRACEFS,			/* tracefs is not available */
	KMT_ENOFIRE,			/* hardware watchpoints are accepted but never fire */
	KMT_ELAST,
};

/* A static string describing @err (negative errno or KMT_E*). */
const char *kmt_strerror(int err);

/*
 * A diagnostic: the one-line description of the last failure, with the
 * subject (file, section, offset) in it. Callers own it, usually on the
 * stack; functions that take one fill it on failure and leave it alone on
 * success.
 */
struct kmt_diag {
	int err;
	char msg[512];
};

/* Fill @d with @err and a printf-style message; returns @err. */
int kmt_diag_set(struct kmt_diag *d, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Bytes of a file made fit to quote in a message: printable ASCII as it
 * is, a backslash doubled, any other byte as \xHH; at most @len bytes of
 * @s, and no further than a NUL. What does not fit in @size is cut and
 * ends in "...". Returns @buf, always NUL-terminated (@size >= 4).
 */
const char *kmt_escape(char *buf, size_t size, const void *s, size_t len);

/*
 * The one hash map and the one string interner: open addressing with
 * linear probing, a power-of-two size grown at half load, so a lookup is
 * one or two cache lines. Every table of the project that finds a record
 * by key is one of these, but two, each on a path taken for every event:
 * the model's object table, which also stores the objects (model-tab.c),
 * and the set of code addresses a trace names, one word a slot, hashed in
 * line (symkeep.c: a kmt_map there notes addresses at half the speed).
 */

#define KMT_MAP_NONE UINT32_MAX		/* no value; never stored */

/* A 64-bit mix (murmur3's finalizer): keys that differ in any bit spread. */
static inline uint64_t kmt_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/*
 * A key of several parts: part @v folded into the hash @h of those before
 * it (boost's hash_combine, @v mixed first). Order counts: (a, b) and
 * (b, a) differ.
 */
static inline uint64_t kmt_hash_combine(uint64_t h, uint64_t v)
{
	return h ^ (kmt_hash64(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

/* FNV-1a of the first @len bytes of @s, up to a NUL (@len SIZE_MAX: the whole string). */
uint64_t kmt_hash_str(const char *s, size_t len);

/*
 * A hand-over of slots, in order, from the thread that fills them to
 * @takers threads that each take every slot (src/lib/base/handoff.c). The
 * slots are the caller's: a ring of @slots, slot number n at index
 * n % @slots. A slot is free to fill again once every taker has taken it.
 * Takers may come in stages (kmt_handoff_stage()): one of stage s takes a
 * slot once every taker of stage s - 1 has taken it.
 */
struct kmt_handoff;
struct kmt_handoff *kmt_handoff_new(unsigned int slots, unsigned int takers);
void kmt_handoff_free(struct kmt_handoff *h);
/*
 * When a side that has to wait wakes (before the other threads start): a
 * filler that found the ring full once @fill_low slots are free, a taker
 * that found nothing once @take_low are given (or the end): one wake-up
 * for several slots. Both 1 unless said. -EINVAL if 0, or if the slowest
 * taker, which the filler waits for, would wait for more than a full ring
 * holds (@take_low > slots - @fill_low + 1). A thread other than the
 * filler that waits for all to be taken (kmt_handoff_taken()) while takers
 * wait for more than one slot says kmt_handoff_hurry() first.
 */
int kmt_handoff_wake(struct kmt_handoff *h, unsigned int fill_low, unsigned int take_low);
/*
 * Taker @k is of @stage (0, as all are at first: it takes what the filler
 * gives) and waits for @low slots (as kmt_handoff_wake() says). Before the
 * threads start; -EINVAL for a taker or stage that is not, or a @low the
 * ring cannot hold with the filler's.
 */
int kmt_handoff_stage(struct kmt_handoff *h, unsigned int k, unsigned int stage, unsigned int low);
/* Takers take what there is, not waiting for their low slots (@on), or wait again (!@on). */
void kmt_handoff_hurry(struct kmt_handoff *h, bool on);
/*
 * Every wait ends: kmt_handoff_room() returns though the ring may be full
 * (kmt_handoff_stopped() says so: fill nothing), takers end, and so does
 * kmt_handoff_taken()'s wait. For a side that failed.
 */
void kmt_handoff_stop(struct kmt_handoff *h);
bool kmt_handoff_stopped(struct kmt_handoff *h);
/* The filler: the number of the slot to fill next, once it is free. */
uint64_t kmt_handoff_room(struct kmt_handoff *h);
/* The filler: that slot goes over to the takers. */
void kmt_handoff_give(struct kmt_handoff *h);
/* The filler: no more slots; each taker ends once it has taken all given. */
void kmt_handoff_end(struct kmt_handoff *h);
/* The filler: slots given so far. */
uint64_t kmt_handoff_given(const struct kmt_handoff *h);
/* Has every taker taken the first @n slots? With @wait, once they have. */
bool kmt_handoff_taken(struct kmt_handoff *h, uint64_t n, bool wait);
/* Taker @k (0 .. takers - 1): its next slot's number, once given; false at the end. */
bool kmt_handoff_next(struct kmt_handoff *h, unsigned int k, uint64_t *slot);
/*
 * The same, waiting no later than @until (CLOCK_MONOTONIC, ns; 0: as long
 * as it takes, KMT_HANDOFF_NOW: not at all): 1 and the slot's number in
 * @slot, 0 at the end, -ETIMEDOUT if none was given by then.
 */
#define KMT_HANDOFF_NOW 1
int kmt_handoff_next_by(struct kmt_handoff *h, unsigned int k, uint64_t *slot, uint64_t until);
/* Taker @k is done with the slot kmt_handoff_next() gave it. */
void kmt_handoff_took(struct kmt_handoff *h, unsigned int k);

/*
 * u64 key -> u32 value. A key may also be a hash of something larger
 * that several records share: kmt_map_add() then keeps each, and
 * kmt_map_find() asks the caller which is the one.
 */
struct kmt_map {
	uint64_t *keys;
	uint32_t *vals;			/* KMT_MAP_NONE: empty slot */
	size_t cap, n;
};

/* @cap: the first size, a power of two (0: 64). 0 or -ENOMEM. */
int kmt_map_init(struct kmt_map *m, size_t cap);
void kmt_map_release(struct kmt_map *m);
/* The value of @key, or KMT_MAP_NONE. */
uint32_t kmt_map_get(const struct kmt_map *m, uint64_t key);
/* Set @key's value (added, or replaced). 0 or -ENOMEM. */
int kmt_map_put(struct kmt_map *m, uint64_t key, uint32_t val);
/* The value under @key for which @same(@ctx, value) holds, or KMT_MAP_NONE. */
uint32_t kmt_map_find(const struct kmt_map *m, uint64_t key,
		      bool (*same)(const void *ctx, uint32_t val), const void *ctx);
/* Add @val under @key even if @key has values already. 0 or -ENOMEM. */
int kmt_map_add(struct kmt_map *m, uint64_t key, uint32_t val);
/* Remove the entry (@key, @val), if there is one. */
void kmt_map_del(struct kmt_map *m, uint64_t key, uint32_t val);

/*
 * Strings, interned: each distinct (@tag, string) once, numbered from 0 in
 * the order first seen. @tag scopes a name (a flame graph's parent frame,
 * a symbol's address); 0 where none is needed.
 */
struct kmt_intern {
	char **str;
	uint64_t *tag;
	size_t n, alloc;
	struct kmt_map by_hash;
};

void kmt_intern_release(struct kmt_intern *t);
/* The number of (@tag, @s), added if new; -ENOMEM. */
int64_t kmt_intern_id(struct kmt_intern *t, uint64_t tag, const char *s);
/* The number of (@tag, @s), or -1 if it was never added. */
int64_t kmt_intern_find(const struct kmt_intern *t, uint64_t tag, const char *s);

/*
 * Keyed hashes of kernel addresses, so a report can be shared without
 * revealing the kernel's layout (KASLR): with the same key an address
 * always hashes the same, so objects can still be followed; without the
 * key nothing can be recovered. SipHash-2-4 of the address, 64 bits.
 */

struct kmt_hashptr {
	bool on;
	uint64_t k0, k1;
};

/*
 * Turn hashing on with @key (any string; NULL or "": a random key, so
 * hashes only compare within one run). Returns 0 or -errno.
 */
int kmt_hashptr_init(struct kmt_hashptr *h, const char *key);
uint64_t kmt_siphash(uint64_t k0, uint64_t k1, const void *data, size_t len);
/* @addr itself, or its keyed hash when hashing is on (the number "h:..." shows). */
uint64_t kmt_hashptr_value(const struct kmt_hashptr *h, uint64_t addr);
/* "0xffff888100d83800", or "h:5f1c9a0e3b7d2a41" when hashing is on. */
const char *kmt_hashptr_fmt(const struct kmt_hashptr *h, uint64_t addr, char *buf, size_t len);

/*
 * An output file that is either complete or absent: written under a
 * temporary name beside its final one, synced, and renamed into place only
 * when the writer says it is done. Trace files, exports and pages all go
 * through it, so an interrupted or failed run never leaves a file that
 * looks complete.
 */

struct kmt_outfile {
	char *path;			/* the final name */
	char *tmp;			/* PATH.tmp-PID while writing */
	int fd;				/* -1 when closed */
	FILE *stream;			/* kmt_outfile_stream(), or NULL */
	bool direct;			/* a pipe or device: written in place */
	bool nosync;			/* KMT_OUTFILE_NOSYNC */
	bool big;			/* KMT_OUTFILE_BIG */
};

/*
 * Renamed into place without an fsync first: for what can be made again
 * from a trace (exports, pages). Recordings are synced: they cannot.
 */
#define KMT_OUTFILE_NOSYNC 1u
/*
 * Its stream is written out by a thread of its own in large aligned
 * blocks, bypassing the page cache where the file system allows: for
 * outputs of hundreds of MB.
 */
#define KMT_OUTFILE_BIG 2u

/*
 * May @path be written through, if it is a symbolic link? The kernel's
 * protected_symlinks rule, whatever the sysctl says, in every directory:
 * only a link of the caller's (effective uid), or of the directory's owner
 * in a directory that is not sticky and world-writable. 0, or -EPERM with
 * a one-line reason in @d (-errno if the directory cannot be read). A path
 * that is not a link is 0.
 */
int kmt_outfile_check(const char *path, struct kmt_diag *d);
/*
 * Create the temporary file for @path with @mode (0600 for traces). -errno
 * with @d on failure (nothing is left behind); a link kmt_outfile_check()
 * refuses is not followed. A @path that is a pipe or a device is opened
 * and written in place (nothing to rename); a symbolic link's file is
 * replaced, not the link.
 */
int kmt_outfile_open(struct kmt_outfile *of, const char *path, mode_t mode, struct kmt_diag *d);
/* The same with KMT_OUTFILE_* @flags. */
int kmt_outfile_open_flags(struct kmt_outfile *of, const char *path, mode_t mode,
			   unsigned int flags, struct kmt_diag *d);
/* A stdio stream on it (owned by @of); NULL + errno on failure. */
FILE *kmt_outfile_stream(struct kmt_outfile *of);
/*
 * Flush, sync (unless KMT_OUTFILE_NOSYNC), close and rename into place. On
 * failure the temporary file is removed and -errno returned with @d. @of is
 * closed either way.
 */
int kmt_outfile_commit(struct kmt_outfile *of, struct kmt_diag *d);
/* Close and remove the temporary file (after a failure). Safe to repeat. */
void kmt_outfile_abort(struct kmt_outfile *of);
/*
 * Told of every temporary file from now on: @opened once it exists,
 * @closed once it is renamed or removed (the program's signal handling,
 * which may remove it first). NULLs: no more.
 */
void kmt_outfile_watch(void (*opened)(const char *tmp), void (*closed)(const char *tmp));

/*
 * The user whose rights the library's output files are made with: every
 * create, rename, removal and read of an output file (kmt_outfile) or a
 * recording's spool is done with @uid's file-system identity (fsuid, @gid
 * and @uid's supplementary groups), so that what @uid could not create
 * (in /etc, say) is refused with EACCES, and what is made is @uid's. For a
 * root process run by sudo for another user; the process stays root for
 * everything else (tracefs). Call it once, before any thread is made: it
 * is the process's setting, like its umask. A @uid of 0, or a process
 * that is not root, changes nothing. 0, or -errno with @d.
 */
int kmt_owner_set(uid_t uid, gid_t gid, struct kmt_diag *d);
/* Is an owner set (kmt_owner_set())? */
bool kmt_owner_active(void);
/* The uid output files are made as: the owner's, else the effective uid. */
uid_t kmt_owner_uid(void);
/*
 * The calling thread makes files with the owner's rights from here to
 * kmt_owner_leave() (nothing when no owner is set). Nested pairs count
 * as one; kmt_owner_leave() keeps errno.
 */
void kmt_owner_enter(void);
void kmt_owner_leave(void);

/* Write all of @len bytes to @fd, through short writes and EINTR; 0 or -errno. */
int kmt_write_all(int fd, const void *buf, size_t len);

/*
 * The CPUs this process may run on (its affinity, as nproc counts: under
 * taskset or a cpuset, fewer than are online), at least 1: how many
 * threads are worth starting. Not for what is per CPU of the machine
 * (ring buffers, the CPUs a trace has): that is every CPU online.
 */
int kmt_cpus_usable(void);

/*
 * The compression algorithms a trace.dat v7 may name: zstd and zlib, as
 * trace-cmd writes them (zstd frames; zlib streams from compress2()).
 */

enum kmt_zalg {
	KMT_Z_NONE,
	KMT_Z_ZSTD,
	KMT_Z_ZLIB,
};

/* Their names by enum kmt_zalg, "none", "zstd", "zlib"; NULL-terminated. */
extern const char *const kmt_zalg_names[];
/* The algorithm called @name, or -1. */
int kmt_zalg_from_name(const char *name);
const char *kmt_zalg_name(enum kmt_zalg alg);
/* The library version string written next to the name in a file. */
const char *kmt_zalg_version(enum kmt_zalg alg);

/* A reusable (de)compression context; NULL + errno on failure. */
struct kmt_zctx *kmt_zctx_new(enum kmt_zalg alg, int level);
void kmt_zctx_free(struct kmt_zctx *z);

size_t kmt_zbound(enum kmt_zalg alg, size_t len);
/* Compress; returns the compressed size, or KMT_ECOMPRESS. */
long kmt_zcompress(struct kmt_zctx *z, void *dst, size_t cap,
		   const void *src, size_t len);
/*
 * Decompress @srclen bytes into exactly @dstlen bytes. Returns 0, or
 * KMT_ECOMPRESS if the data is corrupt or does not expand to @dstlen.
 */
int kmt_zdecompress(struct kmt_zctx *z, void *dst, size_t dstlen,
		    const void *src, size_t srclen);

#endif
