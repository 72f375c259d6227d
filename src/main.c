/*
 * kmemtrace: the command table. Each subcommand lives in src/cmd-<name>.c
 * and parses its own options; this file only dispatches.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

const char *cmd_name = "kmemtrace";

static const struct cmd commands[] = {
	{ "record", cmd_record, "record kernel memory events into a trace.dat file" },
	{ "report", cmd_report, "analyse a trace: call sites, caches, processes, pages, leaks, misuse" },
	{ "watch", cmd_watch, "sample accesses to a cache's objects with hardware watchpoints" },
	{ "kmap", cmd_kmap, "one record per object: allocation, free, and the accesses watch saw" },
	{ "check", cmd_check, "validate a trace file: structure, pages, time order, losses, consistency" },
	{ "convert", cmd_convert, "rewrite a trace: another version or compression, smaller kallsyms" },
	{ "info", cmd_info, "show what a trace file holds: metadata, events per CPU, losses" },
	{ "dump", cmd_dump, "print the decoded memory events of a trace file, in time order" },
};

static void main_usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: kmemtrace [--version] [--help] <command> [<args>]\n\n"
		     "Trace the kernel's memory allocations on a stock kernel through tracefs,\n"
		     "store them as trace.dat, and analyse them offline.\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "   %-8s %s\n", commands[i].name, commands[i].summary);
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
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		static char name[64];

		if (strcmp(argv[1], commands[i].name))
			continue;
		snprintf(name, sizeof(name), "kmemtrace %s", commands[i].name);
		cmd_name = name;
		return commands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "kmemtrace: '%s' is not a kmemtrace command; see 'kmemtrace --help'\n", argv[1]);
	return EXIT_USAGE;
}
