/*
 * Option tables: parsing on top of getopt_long, and the help text
 * (src/opt.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "opt.h"

#define HELP_COL 27		/* where the help of an option starts */

enum { OPT_DONE = -1, OPT_HELP = -2, OPT_BAD = -3 };

/* getopt_long's tables, built from a command's option table. */
struct opt_parser {
	const struct cmd_help *h;
	int argc;
	char **argv;
	struct option *lopts;
	char shorts[160];
};

static int nr_opts(const struct opt *o)
{
	int n = 0;

	while (o[n].id)
		n++;
	return n;
}

static int opt_begin(struct opt_parser *p, const struct cmd_help *h, int argc, char **argv)
{
	int i, n = nr_opts(h->opts), k = 0;
	size_t s = 0;

	memset(p, 0, sizeof(*p));
	p->h = h;
	p->argc = argc;
	p->argv = argv;
	p->lopts = calloc((size_t)n + 1, sizeof(*p->lopts));
	if (!p->lopts)
		return -ENOMEM;
	/* "+": stop at the first operand; ":": report a missing argument as ':'. */
	if (h->stop_at_operand)
		p->shorts[s++] = '+';
	p->shorts[s++] = ':';
	for (i = 0; i < n; i++) {
		const struct opt *o = &h->opts[i];

		if (o->short_name && s + 3 < sizeof(p->shorts)) {
			p->shorts[s++] = o->short_name;
			if (o->arg)
				p->shorts[s++] = ':';
			if (o->arg && (o->flags & OPT_OPTARG))
				p->shorts[s++] = ':';
		}
		if (o->long_name)
			p->lopts[k++] = (struct option){
				o->long_name, !o->arg ? no_argument : (o->flags & OPT_OPTARG) ?
				optional_argument : required_argument, NULL, o->id };
	}
	optind = 0;	/* getopt's full reset */
	opterr = 0;
	return 0;
}

static const struct opt *by_id(const struct cmd_help *h, int id)
{
	const struct opt *o;

	for (o = h->opts; o->id; o++)
		if (o->id == id)
			return o;
	return NULL;
}

static int opt_next(struct opt_parser *p, const char **arg)
{
	int c = getopt_long(p->argc, p->argv, p->shorts, p->lopts, NULL);
	const char *bad = optind > 0 && optind <= p->argc ? p->argv[optind - 1] : "?";

	*arg = optarg;
	if (c == -1)
		return OPT_DONE;
	if (c == ':') {
		usage_error(p->h, "option '%s' needs a value", bad);
		return OPT_BAD;
	}
	if (c == '?') {
		if (optopt && optopt < 256)
			usage_error(p->h, "unknown option '-%c'", optopt);
		else
			usage_error(p->h, "unknown option '%s'", bad);
		return OPT_BAD;
	}
	if (c == 'h' && by_id(p->h, 'h')) {
		help_print(stdout, p->h);
		return OPT_HELP;
	}
	return c;
}

static int opt_index(const struct opt_parser *p)
{
	return optind;
}

static void opt_end(struct opt_parser *p)
{
	free(p->lopts);
	p->lopts = NULL;
}

int opt_parse(const struct cmd_help *h, int argc, char **argv,
	      int (*fn)(void *arg, int id, const char *value), void *arg, int *operands)
{
	struct opt_parser p;
	const char *value;
	int id, code = -1;

	if (opt_begin(&p, h, argc, argv))
		return error("out of memory");
	while (code < 0 && (id = opt_next(&p, &value)) != OPT_DONE)
		code = id == OPT_HELP ? EXIT_OK : id == OPT_BAD ? EXIT_USAGE : fn(arg, id, value);
	*operands = opt_index(&p);
	opt_end(&p);
	return code;
}

int opt_file(const struct cmd_help *h, int argc, char **argv, int operands, const char **path)
{
	if (operands < argc)
		*path = argv[operands++];
	if (operands < argc)
		return usage_error(h, "too many arguments");
	return -1;
}

/* "  -o, --output FILE" for @o. */
static int opt_label(const struct opt *o, char *buf, size_t len)
{
	const char *arg = o->arg ? o->arg : "";
	bool opt = o->flags & OPT_OPTARG;

	if (o->short_name && o->long_name)
		return snprintf(buf, len, "  -%c, --%s%s%s%s%s", o->short_name, o->long_name,
				opt ? "[=" : *arg ? " " : "", arg, opt ? "]" : "", "");
	if (o->short_name)
		return snprintf(buf, len, "  -%c%s%s", o->short_name, *arg ? " " : "", arg);
	return snprintf(buf, len, "      --%s%s%s%s", o->long_name, opt ? "[=" : *arg ? " " : "",
			arg, opt ? "]" : "");
}

void help_print(FILE *out, const struct cmd_help *h)
{
	const struct opt *o;

	fprintf(out, "usage: kmemtrace %s %s\n\n%s", h->name, h->usage, h->about);
	if (h->opts[0].id)
		fputc('\n', out);
	for (o = h->opts; o->id; o++) {
		char label[128];
		const char *line = o->help, *nl;
		int n = opt_label(o, label, sizeof(label));

		fputs(label, out);
		if (n + 1 >= HELP_COL) {
			fputc('\n', out);
			n = 0;
		}
		do {
			nl = strchr(line, '\n');
			fprintf(out, "%*s%.*s\n", HELP_COL - n, "", nl ? (int)(nl - line) : (int)strlen(line),
				line);
			n = 0;
			line = nl + 1;
		} while (nl);
	}
	if (h->more)
		fprintf(out, "\n%s", h->more);
}

int usage_error(const struct cmd_help *h, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cmd_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nsee 'kmemtrace %s --help'\n", h->name);
	return EXIT_USAGE;
}

bool opt_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtoull(s, &end, s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool opt_uint(const char *s, unsigned int min, unsigned int max, unsigned int *out)
{
	uint64_t v;

	if (!opt_u64(s, min, max, &v))
		return false;
	*out = (unsigned int)v;
	return true;
}

bool opt_int(const char *s, int min, int max, int *out)
{
	long v;
	char *end;

	if (!s || !*s || *s == ' ')
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = (int)v;
	return true;
}
