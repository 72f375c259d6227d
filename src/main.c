/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace: the command table. Each subcommand lives in src/cmd-<name>.c
 * and parses its own options; this file only dispatches.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "util/util.h"
#include "util/opt.h"

const char *cmd_name = "kmemtrace";

static const struct cmd commands[] = {
	{ cmd_record, &record_help, false },
	{ cmd_report, &report_help, true },
	{ cmd_diff, &diff_help, true },
	{ cmd_export, &export_help, true },
	{ cmd_top, &top_help, false },
	{ cmd_watch, &watch_help, false },
	{ cmd_kmap, &kmap_help, false },
	{ cmd_check, &check_help, false },
	{ cmd_convert, &convert_help, true },
	{ cmd_info, &info_help, false },
	{ cmd_dump, &dump_help, false },
};

static void main_usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: kmemtrace [--version] [--help] <command> [<args>]\n\n"
		     "Trace the kernel's memory allocations on a stock kernel through tracefs,\n"
		     "store them as trace.dat, and analyse them offline.\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "   %-8s %s\n", commands[i].help->name, commands[i].help->summary);
	fprintf(out, "\n'kmemtrace <command> --help' describes a command; man kmemtrace(1) all of them.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		main_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		main_usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("kmemtrace %s\n", KMT_VERSION);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "completion")) {
		cmd_name = "kmemtrace completion";
		return cmd_completion(argc - 1, argv + 1, commands, sizeof(commands) / sizeof(commands[0]));
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		static char name[64];

		if (strcmp(argv[1], commands[i].help->name))
			continue;
		/* Past a file size limit a write fails (EFBIG) and is reported, not fatal. */
		signal(SIGXFSZ, SIG_IGN);
		if (commands[i].guard_files)
			output_guard_files();
		/* Under sudo, what the command writes is the invoking user's to write. */
		if (output_owner_sudo())
			return EXIT_FAIL;
		snprintf(name, sizeof(name), "kmemtrace %s", commands[i].help->name);
		cmd_name = name;
		return commands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "kmemtrace: '%s' is not a kmemtrace command; see 'kmemtrace --help'\n", argv[1]);
	return EXIT_USAGE;
}
