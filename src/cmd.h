/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The commands: each one's entry point and help (src/cmd-*.c), the table
 * of them (src/main.c).
 */
#ifndef KMT_CMD_H
#define KMT_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include "util/util.h"

/* A subcommand: its entry point, and its help (names, options: src/util/opt.h). */
struct cmd_help;
struct cmd {
	int (*fn)(int argc, char **argv);
	const struct cmd_help *help;
	/* Writes output files and has no signal handling of its own: output_guard_files(). */
	bool guard_files;
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
/* Not in the table: 'kmemtrace completion bash' writes a completion of @cmds. */
int cmd_completion(int argc, char **argv, const struct cmd *cmds, size_t n);

#endif
