/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every stage of the program shares: exit codes, one clear line on
 * stderr for an error, numbers and times as the outputs print them,
 * outputs written whole or not at all (util.c, output.c).
 */
#ifndef KMT_UTIL_H
#define KMT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <kmemtrace/base.h>

/* Exit codes: 0 ok, 1 failure (or findings, for check), 2 bad usage. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* "kmemtrace <cmd>: <message>" on stderr; returns EXIT_FAIL. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "kmemtrace <cmd>: warning: <message>" on stderr. */
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "kmemtrace <cmd>: note: <message>" on stderr: what an option selected. */
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * The calling thread's error(), warning() and note() go to @f from now on
 * (NULL: stderr again), so that work done on a thread can say its messages
 * later, in the order the same work done in turn would have said them.
 */
void msg_capture(FILE *f);

/* The name of the running subcommand, for messages. */
extern const char *cmd_name;

/* Parse "1.5", "10s", "2m", "500ms", "1h" into *@seconds; false if bad. */
bool parse_duration(const char *s, double *seconds);
/* output.c */
/*
 * Make ready to write @path: EXIT_OK, or EXIT_FAIL after one line. A
 * directory, a place we cannot write, or an existing file that is not a
 * trace file (and not empty) is refused; an existing trace file is moved
 * to PATH.old (said on stderr unless @quiet), unless @check_only.
 */
int output_prepare(const char *path, bool quiet, bool check_only);
/*
 * Under sudo (root, SUDO_UID and SUDO_GID set, the user not root), every
 * output from now on is made with the invoking user's rights and is
 * theirs (kmt_owner_set()): what they could not create is refused. Once,
 * before any thread. EXIT_OK, or EXIT_FAIL after one line.
 */
int output_owner_sudo(void);
/*
 * Run @print(@arg, out) on standard output (@path NULL), or on the file
 * @path, written whole or not at all (outfile.c), mode 0600 (it may hold
 * kernel addresses) and, under sudo, the invoking user's; a file made is said
 * ("wrote FILE", as export says it). EXIT_OK, or what
 * @print returned, or EXIT_FAIL after one line.
 */
int output_to(const char *path, int (*print)(void *arg, FILE *out), void *arg);
/*
 * From now on, while an output's temporary file is written, a signal that
 * would end the process (its action the default) removes the file first.
 * For the commands with no signal handling of their own.
 */
void output_guard_files(void);
/* Does @path hold a trace file (never to be overwritten by an output)? */
bool output_is_trace(const char *path);

/* A duration in the unit that fits: "712 ns", "3.4 us", "420.3 ms", "2.51 s"; returns @buf. */
const char *human_duration(uint64_t ns, char *buf, size_t len);
/* Human units: "12.3 MiB", "456 B". @buf must hold 32 bytes. */
const char *human_bytes(double bytes, char *buf);
/*
 * @v with thousands separators, "-1,234,567", into @buf (32 bytes are
 * enough); with @plus, "+" before a positive one. Returns @buf.
 */
const char *fmt_count(double v, bool plus, char *buf, size_t len);
/*
 * Rotating buffers, so that several values fit in one printf: each call
 * hands out the next of 16 (48 bytes each), the 16 latest stay valid.
 * The main thread's: not for a worker.
 */
char *fmt_slot(void);
/* fmt_count(@v) in a slot: "1,234,567". */
const char *fmt_num(uint64_t v);
/*
 * Time @ts as seconds from @t0 (0 for an earlier one; @t0 0: @ts itself)
 * to the microsecond, "12.000345", into @buf; returns @buf.
 */
const char *fmt_secs(uint64_t t0, uint64_t ts, char *buf, size_t len);
/*
 * @v in decimal on @out, without printf (a record per object is mostly
 * numbers); unlocked: the caller holds the stream (flockfile()), or no
 * other thread writes to it.
 */
void fput_u64(FILE *out, uint64_t v);
void fput_i64(FILE *out, int64_t v);
/*
 * @s as one CSV field (RFC 4180), unlocked as fput_u64(): always in double
 * quotes (a name is never read as a number), a quote doubled, a newline
 * kept inside the quotes. The one CSV writer: report, diff and kmap.
 */
void csv_field(FILE *out, const char *s);
/* @one if @n is 1, else @many: "1 object", "2 objects". */
static inline const char *plural(double n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}
/* Time @ts from the trace's first event at @t0 (0 for an earlier one). */
static inline uint64_t since(uint64_t t0, uint64_t ts)
{
	return ts - MIN(t0, ts);
}

/*
 * How many shards the model and parts the stream take (kmt_analyse_opts):
 * $KMT_MODEL_SHARDS and $KMT_PARTS, for tests and benchmarks; 0: as -j
 * says. @parts may be NULL. The library reads no environment: the program does.
 */
void tuning_from_env(unsigned int *shards, unsigned int *parts);

#endif
