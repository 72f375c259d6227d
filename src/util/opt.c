/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Option tables: parsing on top of getopt_long, and the help text
 * (src/util/opt.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "opt.h"

#define HELP_COL 27		/* where the help of an option starts */
#define HELP_WIDTH (80 - HELP_COL)	/* a help's lines, where they are wrapped */

enum { OPT_DONE = -1, OPT_HELP = -2, OPT_BAD = -3 };

#define MAX_OPTS 64

/* An option of a command's table with its groups brought in. */
struct flat {
	const struct opt *o;
	const struct opt_group *g;	/* the group it came from, or NULL */
	size_t base;			/* where its group's values are in the argument struct */
	bool indirect;			/* ... or a pointer to them */
	const char *noun;		/* its group's noun */
};

/* getopt_long's tables, built from a command's option table. */
struct opt_parser {
	const struct cmd_help *h;
	int argc;
	char **argv;
	struct flat flat[MAX_OPTS];
	int n;
	struct option *lopts;
	char shorts[160];
};

/* @h's options in order, each group's picked ones in its place: how many. */
static int flatten(const struct cmd_help *h, struct flat *out)
{
	const struct opt *o, *g;
	int n = 0, i;

	for (o = h->opts; o->id && n < MAX_OPTS; o++) {
		if (o->id != OPT_GROUP_ID) {
			out[n++] = (struct flat){ o, NULL, 0, false, NULL };
			continue;
		}
		for (g = o->group->opts, i = 0; g->id && n < MAX_OPTS; g++, i++)
			if (!o->pick || (o->pick & (1u << i)))
				out[n++] = (struct flat){ g, o->group, o->off, o->flags & OPT_INDIRECT, o->arg };
	}
	return n;
}

int opt_list(const struct cmd_help *h, const struct opt **out, int max)
{
	struct flat flat[MAX_OPTS];
	int i, n = flatten(h, flat);

	for (i = 0; i < n && i < max; i++)
		out[i] = flat[i].o;
	return MIN(n, max);
}

/* Does the @sep-separated list @list hold @name? */
static bool listed(const char *list, const char *sep, const char *name)
{
	size_t n = strlen(name), k = strlen(sep);
	const char *p = list;

	while ((p = strstr(p, name))) {
		if ((p == list || (p - list >= (ptrdiff_t)k && !strncmp(p - k, sep, k))) &&
		    (!p[n] || !strncmp(p + n, sep, k)))
			return true;
		p += n;
	}
	return false;
}

const char *opt_join(char *buf, size_t len, const char *sep, const char *name)
{
	size_t n = strlen(buf);

	if (n < len && !listed(buf, sep, name))
		snprintf(buf + n, len - n, "%s%s", n ? sep : "", name);
	return buf;
}

const char *opt_values(const struct opt *o, char *buf, size_t len)
{
	const char *const *c;

	if (o->values)
		return o->values(buf, len);
	if (!o->choices)
		return NULL;
	buf[0] = '\0';
	for (c = o->choices; *c; c++)
		opt_join(buf, len, ",", *c);
	return buf;
}

/* The names of the comma-separated @list as words, "a, b or c", into @buf. */
static const char *or_list(const char *list, char *buf, size_t len)
{
	const char *p, *comma;
	size_t n = 0;

	buf[0] = '\0';
	for (p = list; *p && n < len; p = comma ? comma + 1 : p + strlen(p)) {
		comma = strchr(p, ',');
		n += (size_t)snprintf(buf + n, len - n, "%s%.*s",
				      p == list ? "" : comma ? ", " : " or ",
				      comma ? (int)(comma - p) : (int)strlen(p), p);
	}
	return buf;
}

static int opt_begin(struct opt_parser *p, const struct cmd_help *h, int argc, char **argv)
{
	int i, n, k = 0;
	size_t s = 0;

	memset(p, 0, sizeof(*p));
	p->h = h;
	p->argc = argc;
	p->argv = argv;
	n = p->n = flatten(h, p->flat);
	p->lopts = calloc((size_t)n + 1, sizeof(*p->lopts));
	if (!p->lopts)
		return -ENOMEM;
	/* "+": stop at the first operand; ":": report a missing argument as ':'. */
	if (h->stop_at_operand)
		p->shorts[s++] = '+';
	p->shorts[s++] = ':';
	for (i = 0; i < n; i++) {
		const struct opt *o = p->flat[i].o;

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

static const struct flat *by_id(const struct opt_parser *p, int id)
{
	int i;

	for (i = 0; i < p->n; i++)
		if (p->flat[i].o->id == id)
			return &p->flat[i];
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
	if (c == 'h' && by_id(p, 'h')) {
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

/* "bad WHAT 'ARG'", with the range of a number, the names of a choice. */
static int bad_value(const struct cmd_help *h, const struct opt *o, const char *value)
{
	const char *const *c;
	char names[512] = "";

	if (o->type == OT_CHOICE) {
		for (c = o->choices; *c; c++)
			opt_join(names, sizeof(names), ", ", *c);
		return usage_error(h, "bad %s '%s' (%s)", o->what, value, names);
	}
	if (o->type == OT_INT || o->type == OT_UINT)
		return usage_error(h, "bad %s '%s' (%lld to %lld)", o->what, value, o->min, o->max);
	if (o->type == OT_WINDOW)
		return usage_error(h, "bad %s '%s' (START,END in seconds)", o->what, value);
	return usage_error(h, "bad %s '%s'", o->what, value);
}

/* Store @value into @f's field: -1, or the exit code after saying why. */
static int store(const struct cmd_help *h, const struct flat *f, void *arg, const char *value)
{
	const struct opt *o = f->o;
	char *values = f->indirect ? *(char **)((char *)arg + f->base) : (char *)arg + f->base;
	char *at = values + o->off;
	long long v;
	char *end;

	switch (o->type) {
	case OT_CALL:
		return f->g ? f->g->fn(h, values, o->id, value) : -1;
	case OT_FLAG:
		*(bool *)at = true;
		return -1;
	case OT_STR:
		*(const char **)at = value;
		return -1;
	case OT_INT:
	case OT_UINT:
		if (!value || !*value || *value == ' ' || (o->type == OT_UINT && *value == '-'))
			return bad_value(h, o, value);
		errno = 0;
		v = strtoll(value, &end, value[0] == '0' && (value[1] == 'x' || value[1] == 'X') ? 16 : 10);
		if (errno || *end || v < o->min || v > o->max)
			return bad_value(h, o, value);
		if (o->type == OT_INT)
			*(int *)at = (int)v;
		else
			*(unsigned int *)at = (unsigned int)v;
		return -1;
	case OT_WINDOW:
		return opt_window(value, (double *)at, (double *)at + 1) ? bad_value(h, o, value) : -1;
	case OT_CHOICE:
		for (v = 0; o->choices[v] && strcmp(value, o->choices[v]); v++)
			;
		if (!o->choices[v])
			return bad_value(h, o, value);
		*(int *)at = (int)v;
		return -1;
	}
	return -1;
}

int opt_parse(const struct cmd_help *h, int argc, char **argv,
	      int (*fn)(void *arg, int id, const char *value), void *arg, int *operands)
{
	struct opt_parser p;
	const char *value;
	int id, i, code = -1;

	if (opt_begin(&p, h, argc, argv))
		return error("out of memory");
	for (i = 0; i < p.n && code < 0; i++)
		if (p.flat[i].o->def)
			code = store(h, &p.flat[i], arg, p.flat[i].o->def);
	while (code < 0 && (id = opt_next(&p, &value)) != OPT_DONE) {
		const struct flat *f = by_id(&p, id);

		if (id == OPT_HELP || id == OPT_BAD)
			code = id == OPT_HELP ? EXIT_OK : EXIT_USAGE;
		else if (f && (f->g || f->o->type != OT_CALL))
			code = store(h, f, arg, value);
		else
			code = fn(arg, id, value);
	}
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

/* @text's words into @buf, in lines of HELP_WIDTH at most (its own breaks undone): the length. */
static size_t wrap(const char *text, char *buf, size_t len)
{
	const char *p = text, *end;
	size_t n = 0, line = 0, w;

	buf[0] = '\0';
	while (*p) {
		while (*p == ' ' || *p == '\n')
			p++;
		end = p + strcspn(p, " \n");
		w = (size_t)(end - p);
		if (!w)
			break;
		if (n && n + 1 < len) {
			buf[n++] = line + 1 + w > HELP_WIDTH ? '\n' : ' ';
			line = buf[n - 1] == '\n' ? 0 : line + 1;
		}
		n += (size_t)snprintf(buf + MIN(n, len), len - MIN(n, len), "%.*s", (int)w, p);
		line += w;
		p = end;
	}
	return MIN(n, len - 1);
}

/*
 * @f's help: with a "%s", its group's noun or the values it takes put in,
 * and the whole wrapped as one paragraph; its default added.
 */
static void help_text(const struct flat *f, char *buf, size_t len)
{
	const struct opt *o = f->o;
	char values[512], list[640], text[1024];
	const char *put = f->noun ? f->noun : "", *last;
	size_t n;

	if (!f->g && opt_values(o, values, sizeof(values)))
		put = or_list(values, list, sizeof(list));
	if (strstr(o->help, "%s")) {
		snprintf(text, sizeof(text), o->help, put);
		n = wrap(text, buf, len);
	} else {
		n = (size_t)snprintf(buf, len, "%s", o->help);
	}
	last = strrchr(buf, '\n') ? strrchr(buf, '\n') + 1 : buf;
	if (o->def && n < len)
		snprintf(buf + n, len - n, "%s(default %s)",
			 strlen(last) + strlen(o->def) + 11 > HELP_WIDTH ? "\n" : " ", o->def);
}

void help_print(FILE *out, const struct cmd_help *h)
{
	struct flat flat[MAX_OPTS];
	int i, nf = flatten(h, flat);

	fprintf(out, "usage: kmemtrace %s %s\n\n%s", h->name, h->usage, h->about);
	if (h->about_more)
		h->about_more(out);
	if (nf)
		fputc('\n', out);
	for (i = 0; i < nf; i++) {
		const struct opt *o = flat[i].o;
		char label[128], text[1024];
		const char *line = text, *nl;
		int n = opt_label(o, label, sizeof(label));

		help_text(&flat[i], text, sizeof(text));
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

int opt_window(const char *arg, double *start, double *end)
{
	const char *comma = strchr(arg, ',');
	char *e;

	*start = *end = -1;
	if (!comma)
		return -1;
	if (comma != arg) {
		*start = strtod(arg, &e);
		if (e != comma || *start < 0)
			return -1;
	}
	if (comma[1]) {
		*end = strtod(comma + 1, &e);
		if (*e || *end < 0)
			return -1;
	}
	return *end < 0 || *end >= *start ? 0 : -1;
}
