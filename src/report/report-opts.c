/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The option groups of the commands that print the report's names and
 * tables (src/report/report.h), beside the input group (input.c):
 * how kernel addresses are written (--raw-ip, --hash-pointers), how many
 * rows a table has (-n), and the analysis's stages timed (--stats). Each
 * is declared once here and brought into a command by OPT_GROUP(), so its
 * help, its parsing and its error messages are the same everywhere.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "util/util.h"
#include "util/opt.h"
#include "report.h"

enum { O_RAWIP = 0x2001, O_HASH, O_STATS };	/* beside the input group's 0x1001... */

/* In the order of the ADDR_ bits. */
static const struct opt addresses_opts[] = {
	{ O_RAWIP, 0, "raw-ip", NULL, "call sites and instructions as addresses, not\nsymbol+offset",
	  .type = OT_FLAG, .off = offsetof(struct addr_opts, raw_ip) },
	{ O_HASH, 0, "hash-pointers", "KEY", "%s as keyed hashes, so the output can be shared "
	  "without revealing the kernel's layout; symbols stay readable. Same KEY, same hashes; no "
	  "KEY: a random one", OPT_OPTARG },
	{ 0 },
};

/* --hash-pointers[=KEY]: the key, or a random one. */
static int addresses_opt(const struct cmd_help *h, void *values, int id, const char *value)
{
	struct addr_opts *a = values;

	if (id == O_HASH && kmt_hashptr_init(&a->hash, value))
		return error("cannot get a random key: %s", strerror(errno));
	return -1;
}

const struct opt_group addresses_group = { addresses_opts, addresses_opt };

#define STR_(x) #x
#define STR(x) STR_(x)

static const struct opt tables_opts[] = {
	{ 'n', 'n', "top", "N", "rows per table (default " STR(TABLES_TOP) "; 0: all)" },
	{ 0 },
};

/* -n N: typed by hand, as it also notes that it was given. */
static int tables_opt(const struct cmd_help *h, void *values, int id, const char *value)
{
	struct table_opts *t = values;

	if (!opt_int(value, 0, INT32_MAX, &t->top))
		return usage_error(h, "bad row count '%s'", value);
	t->top_set = true;
	return -1;
}

const struct opt_group tables_group = { tables_opts, tables_opt };

size_t table_limit(const struct table_opts *t, size_t n, bool machine)
{
	if (machine && !t->top_set)
		return n;
	return t->top && (size_t)t->top < n ? (size_t)t->top : n;
}

static const struct opt stats_opts[] = {
	{ O_STATS, 0, "stats", NULL, "print the CPU time of each stage of the analysis\n"
	  "(reading, merge, decode, model, output), per event\ntoo, to standard error",
	  .type = OT_FLAG },
	{ 0 },
};

const struct opt_group stats_group = { stats_opts, NULL };
