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
#ifndef KMEMTRACE_H
#define KMEMTRACE_H

#include <stddef.h>
#include <stdint.h>

#define KMT_VERSION "0.1.0"

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

#endif
