/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Options as data, after perf's OPT_* arrays and tmux's cmd_entry: each
 * command declares one table, and its parser, its --help text and its bash
 * completion are all read from it, so an option cannot exist without its
 * help line. The manual (docs/kmemtrace.1) is written by hand; tests
 * t0000 and t0070 check that it names every option and value the tables do.
 *
 *	static const struct opt record_opts[] = {
 *		{ 'o', 'o', "output", "FILE", "trace file (default kmemtrace.dat)" },
 *		{ O_STACK, 0, "stack", NULL, "add a kernel stack to every allocation" },
 *		{ 0 },
 *	};
 *
 * An option may store its value itself, as perf's OPT_INTEGER() does:
 * a type, the field's offset in the command's argument struct, a range,
 * and a default that the parser sets first and the help prints. A choice
 * (OT_CHOICE) is one table of names, which gives its parsing, its error
 * message, its completion and, where the help says "%s", its help's list.
 * Options several commands share are a group (the input options, the
 * recording options, report's addresses, tables and stats), declared once
 * by the stage that owns their values and brought into a command's table
 * by one entry, OPT_GROUP().
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
#define OPT_LIST 4u		/* the argument is a comma-separated list of values */
#define OPT_INDIRECT 2u		/* OPT_GROUP_AT(): the member points to the group's values */

enum opt_type {
	OT_CALL,		/* the command's (or the group's) function takes it */
	OT_FLAG,		/* bool: true */
	OT_STR,			/* const char *: the argument */
	OT_INT,			/* int in [min, max] */
	OT_UINT,		/* unsigned int in [min, max] */
	OT_WINDOW,		/* double[2]: "START,END" seconds, < 0 open (opt_window()) */
	OT_CHOICE,		/* int (or an enum): the argument's index in @choices */
};

struct opt_group;
struct cmd_help;

struct opt {
	int id;			/* what opt_next() returns: the letter, or >= 256 */
	char short_name;	/* 0: none */
	const char *long_name;	/* NULL: none */
	const char *arg;	/* the argument's name, NULL for a flag; a group: its noun */
	/*
	 * Lines separated by '\n'; or with a "%s", one paragraph wrapped to
	 * fit, the "%s" being in a group the group's noun, else the values the
	 * option takes ("a, b or c", opt_values()).
	 */
	const char *help;
	unsigned int flags;
	/*
	 * The values the argument may take, comma-separated into @buf, from
	 * the table that owns them (for completion); NULL: any.
	 */
	const char *(*values)(char *buf, size_t len);
	enum opt_type type;
	size_t off;		/* typed: the field's offset in the argument struct */
	long long min, max;	/* OT_INT, OT_UINT */
	const char *what;	/* typed: "bad WHAT 'ARG'" */
	const char *def;	/* typed: the default, set before parsing and shown in the help */
	const char *const *choices;	/* OT_CHOICE: the names it takes, NULL-terminated */
	const struct opt_group *group;	/* OPT_GROUP(): the group's options come here */
	unsigned int pick;	/* OPT_GROUP(): bit i takes the group's i-th option; 0: all */
};

/* Options that several commands take, and who parses their OT_CALL ones. */
struct opt_group {
	const struct opt *opts;	/* ends with { 0 } */
	int (*fn)(const struct cmd_help *h, void *values, int id, const char *value);
};

#define OPT_GROUP_ID 1
/* The options @pick of @g, storing into the struct at offsetof(@type, @member). */
#define OPT_GROUP(g, type, member, pick_, noun) \
	{ .id = OPT_GROUP_ID, .group = &(g), .off = offsetof(type, member), .pick = (pick_), .arg = (noun) }
/* The same where @member is a pointer to that struct. */
#define OPT_GROUP_AT(g, type, member, pick_, noun) \
	{ .id = OPT_GROUP_ID, .group = &(g), .off = offsetof(type, member), .pick = (pick_), \
	  .arg = (noun), .flags = OPT_INDIRECT }

/* A command's whole help: its table, and the text around it. */
struct cmd_help {
	const char *name;	/* "record" */
	const char *summary;	/* one line, for 'kmemtrace --help' */
	const char *usage;	/* "[options] [-- COMMAND [ARG...]]" */
	const char *about;	/* paragraphs before the options */
	const struct opt *opts;	/* ends with { 0 } */
	const char *more;	/* paragraphs after them, or NULL */
	void (*about_more)(FILE *out);	/* generated lines after @about (a table's), or NULL */
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

/* @h's options, its groups' among them, into @out (up to @max): how many. */
int opt_list(const struct cmd_help *h, const struct opt **out, int max);
/*
 * The values @o takes, comma-separated into @buf (its values() hook, or
 * its choices), for completion and help; NULL if it takes any.
 */
const char *opt_values(const struct opt *o, char *buf, size_t len);
/*
 * Names joined, as the lists of values are: @name appended to the list in
 * @buf (@len bytes, "" at first), after @sep unless it is the first, and
 * left out if the list holds it already; cut to fit. Returns @buf.
 */
const char *opt_join(char *buf, size_t len, const char *sep, const char *name);
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
/* "START,END" in seconds (either may be empty) into @start/@end (< 0: open); 0 or -1. */
int opt_window(const char *arg, double *start, double *end);

#endif
