/*
 * kmemtrace report --html: one self-contained page. The data is a JSON
 * document in a <script type="application/json"> element (report --json's
 * document, the time series, the flame graph's tree, the sizes); the
 * built-in script draws it, with no network and nothing beside the page.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "json.h"
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

void report_html(const struct report *r, FILE *out)
{
	struct js j;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"kmemtrace " KMT_VERSION "\">\n<title>kmemtrace: ", out);
	text(out, r->path);
	fputs("</title>\n<style>\n", out);
	fputs(kmt_html_css, out);
	fputs("</style>\n</head>\n<body>\n<noscript><p>This page draws its charts and tables with "
	      "JavaScript. Its numbers are in the JSON document below; <code>kmemtrace report "
	      "--json</code> prints the same.</p></noscript>\n<div id=\"app\"></div>\n"
	      "<script type=\"application/json\" id=\"kmt-data\">", out);
	js_init(&j, out, true, true);
	js_open(&j, NULL, '{');
	js_str(&j, "generator", "kmemtrace " KMT_VERSION);
	html_data(r, &j);
	js_close(&j, '}');
	fputs("</script>\n<script>\n", out);
	fputs(kmt_html_js, out);
	fputs("</script>\n</body>\n</html>\n", out);
}
