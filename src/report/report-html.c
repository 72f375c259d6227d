/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The pages of report --html and diff --html: one self-contained file.
 * The data is a JSON document in a <script type="application/json">
 * element; the built-in script (src/html/page-*.js) draws it, with no
 * network and nothing beside the page.
 */
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "util/json.h"
#include "report-html.h"

static void text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

void html_page(FILE *out, const char *title, const char *json_cmd,
	       void (*data)(void *arg, struct js *j), void *arg)
{
	struct js j;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"kmemtrace " KMT_VERSION "\">\n<title>", out);
	text(out, title);
	fputs("</title>\n<style>\n", out);
	fputs(kmt_html_css, out);
	fputs("</style>\n</head>\n<body>\n<noscript><p>This page draws its charts and tables with "
	      "JavaScript. Its numbers are in the JSON document below; <code>", out);
	text(out, json_cmd);
	fputs("</code> prints the same.</p></noscript>\n<div id=\"app\"></div>\n"
	      "<script type=\"application/json\" id=\"kmt-data\">", out);
	js_init(&j, out, true, true);
	js_open(&j, NULL, '{');
	js_str(&j, "generator", "kmemtrace " KMT_VERSION);
	data(arg, &j);
	js_close(&j, '}');
	fputs("</script>\n<script>\n", out);
	fputs(kmt_html_js, out);
	fputs("</script>\n</body>\n</html>\n", out);
}

static void report_data(void *arg, struct js *j)
{
	html_data(arg, j);
}

void report_html(const struct report *r, FILE *out)
{
	char title[4200];

	snprintf(title, sizeof(title), "kmemtrace: %s", r->path);
	html_page(out, title, "kmemtrace report --json", report_data, (void *)r);
}
