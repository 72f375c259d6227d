/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one JSON writer, shared by report --json, the data of report --html,
 * diff, check and kmap: keys and values in order, indentation by depth,
 * strings escaped (and, for a page, '<', '>' and '&' too, so the document
 * can sit in a <script> element).
 */
#ifndef KMT_JSON_H
#define KMT_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JS_MAX_DEPTH 512		/* deeper nesting is a caller's bug */

struct js {
	FILE *out;
	int depth;
	bool first[JS_MAX_DEPTH];	/* nothing written yet at this depth */
	bool html;			/* escape <, > and & */
	int pretty;			/* members at this depth or less get a line each */
};

/* A writer on @out at the top level (call js_open for the document's object). */
void js_init(struct js *j, FILE *out, bool html, bool compact);
/* Members deeper than @depth on their parent's line, "k":v (1: one line per element of the document). */
void js_lines(struct js *j, int depth);
/*
 * Whether the next member at this depth is the first (no comma before
 * it): for writings put together elsewhere (kmap in shards).
 */
void js_first(struct js *j, bool first);
/*
 * A key (NULL inside an array), then a value. Keys are the program's own
 * names (columns, sections), plain ASCII with no quote, backslash or
 * control character: written as they are, not escaped.
 */
void js_key(struct js *j, const char *k);
void js_open(struct js *j, const char *k, char c);	/* '{' or '[' */
void js_close(struct js *j, char c);
void js_u64(struct js *j, const char *k, uint64_t v);
void js_i64(struct js *j, const char *k, int64_t v);
void js_dbl(struct js *j, const char *k, double v);	/* 3 decimals */
void js_str(struct js *j, const char *k, const char *v);
void js_bool(struct js *j, const char *k, bool v);
void js_null(struct js *j, const char *k);
/* A string value alone, escaped (after js_key). */
void js_raw_str(struct js *j, const char *s);

#endif
