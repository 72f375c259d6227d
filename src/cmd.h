/*
 * What every subcommand shares: its entry point, and the few helpers that
 * turn library errors into one clear line on stderr.
 */
#ifndef KMT_CMD_H
#define KMT_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include <kmemtrace/kmemtrace.h>

/* Exit codes: 0 ok, 1 failure (or findings, for check), 2 bad usage. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* A subcommand: its entry point, and its help (names, options: src/opt.h). */
struct cmd_help;
struct cmd {
	int (*fn)(int argc, char **argv);
	const struct cmd_help *help;
};

extern const struct cmd_help record_help, report_help, watch_help, kmap_help, check_help,
	convert_help, info_help, dump_help, diff_help, export_help, top_help;

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_kmap(int argc, char **argv);
int cmd_watch(int argc, char **argv);

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* "kmemtrace <cmd>: <message>" on stderr; returns EXIT_FAIL. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "kmemtrace <cmd>: warning: <message>" on stderr. */
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "kmemtrace <cmd>: note: <message>" on stderr: what an option selected. */
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The name of the running subcommand, for messages. */
extern const char *cmd_name;

/* Parse "1.5", "10s", "2m", "500ms" into nanoseconds; false if bad. */
bool parse_duration(const char *s, double *seconds);
struct kmt_hwbp_probe;
/*
 * Do hardware watchpoints fire on every online CPU (kmt_hwbp_probe)? For
 * the tests, after git's GIT_TEST_*: KMT_TEST_HWBP=decoy makes the probe
 * watch a word nobody writes, so the refusal can be tested on any machine;
 * KMT_TEST_HWBP=skip lets kmemtrace watch run without the probe (set-up,
 * signals and clean-up on machines where watchpoints never fire).
 */
int hwbp_check(struct kmt_hwbp_probe *res, struct kmt_diag *d);
/* cmd-output.c */
/*
 * Make ready to write @path: EXIT_OK, or EXIT_FAIL after one line. A
 * directory, a place we cannot write, or an existing file that is not a
 * trace file (and not empty) is refused; an existing trace file is moved
 * to PATH.old (said on stderr unless @quiet), unless @check_only.
 */
int output_prepare(const char *path, bool quiet, bool check_only);
/*
 * Under sudo (root, SUDO_UID and SUDO_GID set), give @path (a directory:
 * and what is in it) to the invoking user, so they can read what they
 * recorded without root; modes stay as they are (0600).
 */
void give_to_invoker(const char *path);
/* The same for the file open on @fd, if it is a regular file (not a pipe or a device). */
void give_fd_to_invoker(int fd);
/*
 * Run @print(@arg, out) on standard output (@path NULL), or on the file
 * @path, written whole or not at all (outfile.c), mode 0600 (it may hold
 * kernel addresses) and, under sudo, the invoking user's. EXIT_OK, or what
 * @print returned, or EXIT_FAIL after one line.
 */
int output_to(const char *path, int (*print)(void *arg, FILE *out), void *arg);
/* Does @path hold a trace file (never to be overwritten by an output)? */
bool output_is_trace(const char *path);

/* Human units: "12.3 MiB", "456 B". @buf must hold 32 bytes. */
const char *human_bytes(double bytes, char *buf);

#endif
