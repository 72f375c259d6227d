/*
 * The JSON writer (src/util/json.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

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

static void sep(struct js *j)
{
	if (!j->first[j->depth])
		fputc(',', j->out);
	j->first[j->depth] = false;
	if (j->depth <= j->pretty) {
		fputc('\n', j->out);
		fprintf(j->out, "%*s", j->depth * 2, "");
	}
}

void js_raw_str(struct js *j, const char *s)
{
	fputc('"', j->out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(j->out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f || (j->html && (c == '<' || c == '>' || c == '&')))
			fprintf(j->out, "\\u%04x", c);
		else
			fputc(c, j->out);
	}
	fputc('"', j->out);
}

void js_key(struct js *j, const char *k)
{
	if (j->depth)
		sep(j);
	if (k) {
		js_raw_str(j, k);
		fputs(j->depth > j->pretty ? ":" : ": ", j->out);
	}
}

void js_open(struct js *j, const char *k, char c)
{
	js_key(j, k);
	fputc(c, j->out);
	if (j->depth + 1 < JS_MAX_DEPTH)
		j->first[++j->depth] = true;
	else
		abort();
}

void js_close(struct js *j, char c)
{
	bool empty = j->first[j->depth];

	j->depth--;
	if (!empty && j->depth + 1 <= j->pretty) {
		fputc('\n', j->out);
		fprintf(j->out, "%*s", j->depth * 2, "");
	}
	fputc(c, j->out);
}

void js_u64(struct js *j, const char *k, uint64_t v)
{
	js_key(j, k);
	fprintf(j->out, "%" PRIu64, v);
}

void js_i64(struct js *j, const char *k, int64_t v)
{
	js_key(j, k);
	fprintf(j->out, "%" PRId64, v);
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
	fputs(v ? "true" : "false", j->out);
}

void js_null(struct js *j, const char *k)
{
	js_key(j, k);
	fputs("null", j->out);
}
