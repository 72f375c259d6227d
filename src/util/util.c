/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the subcommands: messages, usage, units.
 */
#include <inttypes.h>
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

void fput_u64(FILE *out, uint64_t v)
{
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	char b[24], *p = b + sizeof(b);

	/* Two digits a step. */
	while (v >= 100) {
		p -= 2;
		memcpy(p, pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, pairs + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	fwrite_unlocked(p, 1, (size_t)(b + sizeof(b) - p), out);
}

void fput_i64(FILE *out, int64_t v)
{
	if (v < 0)
		putc_unlocked('-', out);
	fput_u64(out, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
}

void csv_field(FILE *out, const char *s)
{
	putc_unlocked('"', out);
	for (; *s; s++) {
		if (*s == '"')
			putc_unlocked('"', out);
		putc_unlocked(*s, out);
	}
	putc_unlocked('"', out);
}

char *fmt_slot(void)
{
	static char bufs[16][48];
	static unsigned int i;

	return bufs[i++ % 16];
}

const char *fmt_num(uint64_t v)
{
	return fmt_count((double)v, false, fmt_slot(), 48);
}

const char *fmt_secs(uint64_t t0, uint64_t ts, char *buf, size_t len)
{
	snprintf(buf, len, "%.6f", (double)since(t0, ts) / 1e9);
	return buf;
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

const char *human_duration(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
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

void tuning_from_env(unsigned int *shards, unsigned int *parts)
{
	const char *s = getenv("KMT_MODEL_SHARDS"), *p = getenv("KMT_PARTS");

	*shards = s && *s ? (unsigned int)MAX(atoi(s), 1) : 0;
	if (parts)
		*parts = p && *p ? (unsigned int)MAX(atoi(p), 1) : 0;
}
