/*
 * kmemtrace diff --html: the page of report --html (src/report/report-html.c)
 * with diff --json's document as its data, under "diff": the script
 * draws the largest changes as bars, old beside new, and the tables.
 */
#include "util/util.h"
#include "diff.h"
#include "util/json.h"
#include "report/report-html.h"

static void diff_data(void *arg, struct js *j)
{
	js_open(j, "diff", '{');
	diff_json_members(arg, j);
	js_close(j, '}');
}

void diff_html(const struct diff *d, FILE *out)
{
	char title[8400];

	snprintf(title, sizeof(title), "kmemtrace diff: %s vs %s", d->side[0].path, d->side[1].path);
	html_page(out, title, "kmemtrace diff --json", diff_data, (void *)d);
}
