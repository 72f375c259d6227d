/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace report --html: one self-contained page (report-html.c) whose
 * data (report-html-data.c) is report --json's document and what only
 * pictures need; its script and style (src/html/) are built in.
 */
#ifndef KMT_REPORT_HTML_H
#define KMT_REPORT_HTML_H

#include <stdio.h>
#include "report.h"

struct js;

/* The page's data members, into the object @j has open. */
void html_data(const struct report *r, struct js *j);
/*
 * A column as the page's tables take it (name, title, type, unit, doc),
 * into the object @j has open: report's tables, and diff's.
 */
void html_column(struct js *j, const struct rcol *c);

/*
 * A page titled @title: the style, @data's members in the data document
 * (its object open), the script; @json_cmd prints the same numbers.
 */
void html_page(FILE *out, const char *title, const char *json_cmd,
	       void (*data)(void *arg, struct js *j), void *arg);

/* src/html/report.css and the script (page-*.js, in order), NUL-terminated (src/html/html-assets.S). */
extern const char kmt_html_css[], kmt_html_js[];

#endif
