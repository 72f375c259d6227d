/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The JSON writer (src/util/json.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

/*
 * Unlocked stdio throughout: a document is one thread's (kmap's shards
 * each write to a stream of their own), and kmap locks the stream once
 * per object.
 */

/* A new line, indented two spaces a level. */
static void indent(struct js *j, int depth)
{
	static const char spaces[] = "                                                                ";
	int n = depth * 2;

	putc_unlocked('\n', j->out);
	for (; n > 0; n -= (int)sizeof(spaces) - 1)
		fwrite_unlocked(spaces, 1, (size_t)MIN(n, (int)sizeof(spaces) - 1), j->out);
}

void js_init(struct js *j, FILE *out, bool html, bool compact)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
	j->html = html;
	j->pretty = compact ? 0 : JS_MAX_DEPTH;
	j->first[0] = true;
}

void js_lines(struct js *j, int depth)
{
	j->pretty = depth;
}

void js_first(struct js *j, bool first)
{
	j->first[j->depth] = first;
}

static void sep(struct js *j)
{
	if (!j->first[j->depth])
		putc_unlocked(',', j->out);
	j->first[j->depth] = false;
	if (j->depth <= j->pretty)
		indent(j, j->depth);
}

void js_raw_str(struct js *j, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s;

	putc_unlocked('"', j->out);
	/* Runs of plain characters in one write. */
	for (;; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[6] = { '\\', 'u', '0', '0' };
		size_t n;

		if (c && c != '"' && c != '\\' && c >= 0x20 && c < 0x7f &&
		    !(j->html && (c == '<' || c == '>' || c == '&')))
			continue;
		if (s > run)
			fwrite_unlocked(run, 1, (size_t)(s - run), j->out);
		if (!c)
			break;
		if (c == '"' || c == '\\') {
			esc[1] = (char)c;
			n = 2;
		} else {
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			n = 6;
		}
		fwrite_unlocked(esc, 1, n, j->out);
		run = s + 1;
	}
	putc_unlocked('"', j->out);
}

void js_key(struct js *j, const char *k)
{
	if (j->depth)
		sep(j);
	if (k) {
		putc_unlocked('"', j->out);
		fputs_unlocked(k, j->out);
		fputs_unlocked(j->depth > j->pretty ? "\":" : "\": ", j->out);
	}
}

void js_open(struct js *j, const char *k, char c)
{
	js_key(j, k);
	putc_unlocked(c, j->out);
	if (j->depth + 1 < JS_MAX_DEPTH)
		j->first[++j->depth] = true;
	else
		abort();
}

void js_close(struct js *j, char c)
{
	bool empty = j->first[j->depth];

	j->depth--;
	if (!empty && j->depth + 1 <= j->pretty)
		indent(j, j->depth);
	putc_unlocked(c, j->out);
}

void js_u64(struct js *j, const char *k, uint64_t v)
{
	js_key(j, k);
	fput_u64(j->out, v);
}

void js_i64(struct js *j, const char *k, int64_t v)
{
	js_key(j, k);
	fput_i64(j->out, v);
}

void js_dbl(struct js *j, const char *k, double v)
{
	js_key(j, k);
	fprintf(j->out, "%.3f", v);
}

void js_str(struct js *j, const char *k, const char *v)
{
	js_key(j, k);
	js_raw_str(j, v);
}

void js_bool(struct js *j, const char *k, bool v)
{
	js_key(j, k);
	fputs_unlocked(v ? "true" : "false", j->out);
}

void js_null(struct js *j, const char *k)
{
	js_key(j, k);
	fputs_unlocked("null", j->out);
}
