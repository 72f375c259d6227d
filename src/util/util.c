/*
 * Helpers shared by the subcommands: messages, usage, units.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static __thread FILE *msg_sink;		/* msg_capture(): this thread's messages */

void msg_capture(FILE *f)
{
	msg_sink = f;
}

int error(const char *fmt, ...)
{
	FILE *out = msg_sink ? msg_sink : stderr;
	va_list ap;

	fprintf(out, "%s: ", cmd_name);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
	return EXIT_FAIL;
}

static void say(const char *what, const char *fmt, va_list ap)
{
	FILE *out = msg_sink ? msg_sink : stderr;

	fprintf(out, "%s: %s: ", cmd_name, what);
	vfprintf(out, fmt, ap);
	fputc('\n', out);
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("warning", fmt, ap);
	va_end(ap);
}

void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("note", fmt, ap);
	va_end(ap);
}

bool parse_duration(const char *s, double *seconds)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0)
		return false;
	if (!*end || !strcmp(end, "s"))
		*seconds = v;
	else if (!strcmp(end, "ms"))
		*seconds = v / 1e3;
	else if (!strcmp(end, "m"))
		*seconds = v * 60;
	else if (!strcmp(end, "h"))
		*seconds = v * 3600;
	else
		return false;
	return true;
}

const char *fmt_count(double v, bool plus, char *buf, size_t len)
{
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%.0f", v < 0 ? -v : v), i;
	size_t o = 0;

	if (v < 0 && n && digits[0] != '0')
		buf[o++] = '-';
	else if (plus && v > 0)
		buf[o++] = '+';
	for (i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

const char *human_bytes(double bytes, char *buf)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;
	double v = bytes < 0 ? -bytes : bytes;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, 32, "%s%.0f B", bytes < 0 ? "-" : "", v);
	else
		snprintf(buf, 32, "%s%.1f %s", bytes < 0 ? "-" : "", v, units[u]);
	return buf;
}
