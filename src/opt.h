/*
 * Options as data, after perf's OPT_* arrays and tmux's cmd_entry: each
 * command declares one table, and its parser, its --help text and the
 * option lists of the manual are all read from it, so an option cannot
 * exist without its documentation.
 *
 *	static const struct opt record_opts[] = {
 *		{ 'o', 'o', "output", "FILE", "trace file (default kmemtrace.dat)" },
 *		{ O_STACK, 0, "stack", NULL, "add a kernel stack to every allocation" },
 *		{ 0 },
 *	};
 *
 * Usage errors print one line and a hint ("see 'kmemtrace record
 * --help'"), as git does; numbers are range-checked.
 */
#ifndef KMT_OPT_H
#define KMT_OPT_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define OPT_OPTARG 1u		/* the argument may be left out: --name[=ARG] */
#define OPT_LIST 2u		/* the argument is a comma-separated list of values */

struct opt {
	int id;			/* what opt_next() returns: the letter, or >= 256 */
	char short_name;	/* 0: none */
	const char *long_name;	/* NULL: none */
	const char *arg;	/* the argument's name, NULL for a flag */
	const char *help;	/* lines separated by '\n' */
	unsigned int flags;
	/*
	 * The values the argument may take, comma-separated into @buf, from
	 * the table that owns them (for completion); NULL: any.
	 */
	const char *(*values)(char *buf, size_t len);
};

/* A command's whole help: its table, and the text around it. */
struct cmd_help {
	const char *name;	/* "record" */
	const char *summary;	/* one line, for 'kmemtrace --help' */
	const char *usage;	/* "[options] [-- COMMAND [ARG...]]" */
	const char *about;	/* paragraphs before the options */
	const struct opt *opts;	/* ends with { 0 } */
	const char *more;	/* paragraphs after them, or NULL */
	bool stop_at_operand;	/* options end at the first operand (a COMMAND follows) */
};

/*
 * The whole loop: @fn(@arg, id, value) for each option, which returns -1
 * to go on or an exit code to stop (after printing why). Returns -1 with
 * the first operand's index in *@operands, or the exit code to end the
 * command with: EXIT_OK after --help, EXIT_USAGE after a bad option, or
 * what @fn returned.
 */
int opt_parse(const struct cmd_help *h, int argc, char **argv,
	      int (*fn)(void *arg, int id, const char *value), void *arg, int *operands);
/*
 * At most one operand, a file (left as is if there is none): -1, or
 * EXIT_USAGE after saying there are too many.
 */
int opt_file(const struct cmd_help *h, int argc, char **argv, int operands, const char **path);

/* The help text, generated from @h. */
void help_print(FILE *out, const struct cmd_help *h);
/* "kmemtrace CMD: MESSAGE" and "see 'kmemtrace CMD --help'" on stderr; EXIT_USAGE. */
int usage_error(const struct cmd_help *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A whole number in [@min, @max] (decimal, or 0x hex); false if @s is not
 * one or out of range (nothing is cut to fit).
 */
bool opt_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
bool opt_uint(const char *s, unsigned int min, unsigned int max, unsigned int *out);
bool opt_int(const char *s, int min, int max, int *out);

#endif
