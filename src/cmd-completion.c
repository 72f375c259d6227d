/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace completion bash: a bash completion script written from the
 * program's own tables, so that it cannot drift from them: the commands
 * (src/main.c), each command's option table (src/util/opt.h), and the values
 * an option names through its table's values() hook (report's sort keys
 * and sections, export's formats) or its choices (diff --match, opt_values()).
 * The build writes it once ($(O)/kmemtrace.bash) and make install puts it
 * where bash-completion looks. Not a listed command: it is for the build,
 * not for users.
 */
#include <string.h>

#include "cmd.h"
#include "util/util.h"
#include "util/opt.h"

/* " -o --output" for @o, or with @arg_only only if it takes a separate value. */
static void opt_words(FILE *out, const struct opt *o, bool arg_only)
{
	if (arg_only && (!o->arg || (o->flags & OPT_OPTARG)))
		return;
	if (o->short_name)
		fprintf(out, " -%c", o->short_name);
	if (o->long_name)
		fprintf(out, " --%s", o->long_name);
}

/* Commas to spaces: "a,b" is "a b" to compgen -W. */
static void words(FILE *out, const char *list)
{
	for (; *list; list++)
		fputc(*list == ',' ? ' ' : *list, out);
}

static void cmd_table(FILE *out, const struct cmd *cmds, size_t n)
{
	const struct opt *o[64];
	size_t i;
	int k, no;

	fprintf(out, "_kmemtrace_cmd() {\t# COMMAND: its options (opts), those taking a value (args)\n"
		     "\tcase $1 in\n");
	for (i = 0; i < n; i++) {
		fprintf(out, "\t%s)\n\t\topts='", cmds[i].help->name);
		no = opt_list(cmds[i].help, o, 64);
		for (k = 0; k < no; k++)
			opt_words(out, o[k], false);
		fprintf(out, " '\n\t\targs='");
		for (k = 0; k < no; k++)
			opt_words(out, o[k], true);
		fprintf(out, " '\n\t\t;;\n");
	}
	fprintf(out, "\t*) return 1;;\n\tesac\n}\n\n");
}

static void value_table(FILE *out, const struct cmd *cmds, size_t n)
{
	const struct opt *all[64], *o;
	char buf[1024];
	const char *values;
	size_t i;
	int k, no;

	fprintf(out, "_kmemtrace_values() {\t# COMMAND OPTION: its values; list=1: comma-separated\n"
		     "\tcase $1:$2 in\n");
	for (i = 0; i < n; i++)
		for (no = opt_list(cmds[i].help, all, 64), k = 0; k < no; k++) {
			o = all[k];
			if (!(values = opt_values(o, buf, sizeof(buf))))
				continue;
			fputc('\t', out);
			if (o->short_name)
				fprintf(out, "%s:-%c%s", cmds[i].help->name, o->short_name,
					o->long_name ? "|" : "");
			if (o->long_name)
				fprintf(out, "%s:--%s", cmds[i].help->name, o->long_name);
			fprintf(out, ") values='");
			words(out, values);
			fprintf(out, "'%s ;;\n", o->flags & OPT_LIST ? "; list=1" : "");
		}
	fprintf(out, "\tesac\n}\n\n");
}

/*
 * The function bash calls: the command, or an option of it, or the value
 * of the option before (--opt VALUE, --opt=VALUE, the last of a list). No
 * candidates (a file, a number): bash's default, file names.
 */
static const char completion_fn[] =
	"_kmemtrace() {\n"
	"\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd=${COMP_WORDS[1]}\n"
	"\tlocal opts= args= values= list= opt= pre= i\n"
	"\tCOMPREPLY=()\n"
	"\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	"\t\tCOMPREPLY=($(compgen -W \"$_kmemtrace_commands --help --version\" -- \"$cur\"))\n"
	"\t\treturn 0\n"
	"\tfi\n"
	"\t_kmemtrace_cmd \"$cmd\" || return 0\n"
	"\t# After \"--\" a command line of its own (record, top, watch).\n"
	"\tfor ((i = 2; i < COMP_CWORD; i++)); do\n"
	"\t\tif [ \"${COMP_WORDS[i]}\" = -- ]; then\n"
	"\t\t\t[ $i -eq $((COMP_CWORD - 1)) ] && COMPREPLY=($(compgen -c -- \"$cur\"))\n"
	"\t\t\treturn 0\n"
	"\t\tfi\n"
	"\tdone\n"
	"\t# --opt=VALUE is one word, or three (\"--opt\" \"=\" \"VALUE\") when = breaks words.\n"
	"\tif [[ $cur == --*=* ]]; then\n"
	"\t\topt=${cur%%=*} pre=${cur%%=*}= cur=${cur#*=}\n"
	"\telif [ \"$cur\" = = ] && [[ $prev == -* ]]; then\n"
	"\t\topt=$prev cur=\n"
	"\telif [ \"$prev\" = = ] && [ \"$COMP_CWORD\" -ge 3 ]; then\n"
	"\t\topt=${COMP_WORDS[COMP_CWORD-2]}\n"
	"\telif [[ \" $args \" == *\" $prev \"* ]]; then\n"
	"\t\topt=$prev\n"
	"\tfi\n"
	"\tif [ -n \"$opt\" ]; then\n"
	"\t\t_kmemtrace_values \"$cmd\" \"$opt\"\n"
	"\t\tif [ -n \"$list\" ] && [[ $cur == *,* ]]; then\n"
	"\t\t\tpre=$pre${cur%,*}, cur=${cur##*,}\n"
	"\t\tfi\n"
	"\t\t[ -n \"$values\" ] && COMPREPLY=($(compgen -P \"$pre\" -W \"$values\" -- \"$cur\"))\n"
	"\t\treturn 0\n"
	"\tfi\n"
	"\t[[ $cur == -* ]] && COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	"\treturn 0\n"
	"}\n"
	"complete -o bashdefault -o default -F _kmemtrace kmemtrace\n";

int cmd_completion(int argc, char **argv, const struct cmd *cmds, size_t n)
{
	size_t i;

	if (argc != 2 || strcmp(argv[1], "bash")) {
		fprintf(stderr, "usage: kmemtrace completion bash\n");
		return EXIT_USAGE;
	}
	printf("# bash completion for kmemtrace %s, written by 'kmemtrace completion bash'\n"
	       "# from the program's command and option tables: do not edit.\n\n", KMT_VERSION);
	printf("_kmemtrace_commands='");
	for (i = 0; i < n; i++)
		printf("%s%s", i ? " " : "", cmds[i].help->name);
	printf("'\n\n");
	cmd_table(stdout, cmds, n);
	value_table(stdout, cmds, n);
	fputs(completion_fn, stdout);
	return fflush(stdout) || ferror(stdout) ? error("cannot write the script") : EXIT_OK;
}
