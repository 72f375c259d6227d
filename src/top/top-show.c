/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace top, the display (src/top/top.h): a snapshot as plain text (the
 * batch mode, and the body of the screen), as a JSON line, or on the full
 * screen: the terminal's alternate screen, redrawn in place, its size
 * followed; raw keys. The terminal is put back by screen_close(), which
 * every exit path reaches.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"
#include "util/json.h"
#include "top.h"

/* "1,234" or, with @rate, per second over the snapshot's interval. */
static const char *count(const struct top_snap *s, uint64_t v, bool rate, char *buf)
{
	double x = rate && s->interval > 0 ? (double)v / s->interval : (double)v;

	if (x >= 10e6)
		snprintf(buf, 32, "%.1fM", x / 1e6);
	else
		fmt_count(x, false, buf, 32);
	return buf;
}

static const char *bytes(const struct top_snap *s, double v, bool rate, bool sign, char *buf)
{
	char tmp[32];

	if (rate && s->interval > 0)
		v /= s->interval;
	human_bytes(v, tmp);
	snprintf(buf, 40, "%s%s", sign && v > 0 ? "+" : "", tmp);
	return buf;
}

/*
 * The table's columns are top_cols' with a title; a narrow window drops
 * them in their drop order (the name keeps at least NAME_MIN characters):
 * waste, live objects, frees, growth; allocations, bytes and live bytes
 * stay.
 */
#define NAME_MIN 28

static unsigned int dropped(int width)
{
	unsigned int mask = 0;
	int used = 2 + NAME_MIN, i, rank;

	for (i = 0; top_cols[i].get; i++)
		if (top_cols[i].title)
			used += top_cols[i].width + 1;
	for (rank = 1; used > width; rank++) {
		bool any = false;

		for (i = 0; top_cols[i].get; i++)
			if (top_cols[i].title && top_cols[i].drop == rank) {
				mask |= 1u << i;
				used -= top_cols[i].width + 1;
				any = true;
			}
		if (!any)
			break;
	}
	return mask;
}

/* Column @c of row @r as the screen shows it (the header: @r NULL). */
static const char *cell(const struct top_snap *s, const struct top_col *c, const struct top_row *r,
			char *buf)
{
	int64_t v;

	if (!r)
		return c->title;
	v = c->get(r);
	return c->bytes ? bytes(s, (double)v, c->rate, c->sign, buf) : count(s, (uint64_t)v, c->rate, buf);
}

/* One line of the table: the columns not in @drop, right-aligned, then the name. */
static void cells(char *line, size_t size, unsigned int drop, const struct top_snap *s,
		  const struct top_row *r, const char *name)
{
	size_t o = 0;
	char buf[48];
	int i;

	for (i = 0; top_cols[i].get && o < size; i++)
		if (top_cols[i].title && !(drop & (1u << i)))
			o += (size_t)snprintf(line + o, size - o, "%s%*s", o ? " " : "", top_cols[i].width,
					      cell(s, &top_cols[i], r, buf));
	if (o < size)
		snprintf(line + o, size - o, "  %s", name);
}

/* How many rows of the current view show under the filter (and --cache). */
static size_t matching(const struct top *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->snap.nrows[t->view]; i++)
		n += snap_shown(t, &t->snap.rows[t->view][i]);
	return n;
}

/* Why no row shows, when none does. */
static const char *no_rows(const struct top *t, char *buf, size_t len)
{
	if (!t->snap.nrows[t->view])
		return "  (nothing allocated yet)";
	if (*t->filter)
		snprintf(buf, len, "  (no row matches the filter '%s')", t->filter);
	else
		snprintf(buf, len, "  (nothing of cache %s yet)", t->cache ? t->cache : "?");
	return buf;
}

/*
 * The header and the table, at most @max_rows rows (-1: all), cut to
 * @width. The header has HEAD_FULL lines; a short screen asks for fewer:
 * the blank line goes first, then the live slab line. A row that matches
 * but finds no room is counted in the table's heading, never said to be
 * filtered out.
 */
void show_text(struct top *t, FILE *out, int max_rows, int width, int head)
{
	const struct top_snap *s = &t->snap;
	char a[40], b[40], c[40], d[40], e[40], line[1024], what[96];
	time_t now = time(NULL);
	size_t i, k, match = matching(t);
	unsigned int drop;
	struct tm tm;

	localtime_r(&now, &tm);
	snprintf(line, sizeof(line), "kmemtrace top  %02d:%02d:%02d  up %.1f s, every %.1f s  by %s, sort %s%s%s%s",
		 tm.tm_hour, tm.tm_min, tm.tm_sec, s->t, t->interval, view_name(t->view), sort_name(t->sort),
		 *t->filter ? ", filter " : "", t->filter, t->paused ? "  [paused]" : "");
	fprintf(out, "%.*s\n", width, line);
	snprintf(line, sizeof(line), "events %s/s  allocs %s/s  frees %s/s  pages %s/s  lost %s%s",
		 count(s, s->events, true, a), count(s, s->allocs, true, b), count(s, s->frees, true, c),
		 count(s, s->page_allocs, true, d), count(s, s->lost_events, false, e),
		 s->lost_gaps ? " (+ gaps of unknown size)" : s->lost_now ? " (in this interval)" : "");
	fprintf(out, "%.*s\n", width, line);
	if (head >= HEAD_FULL - 1) {
		char feed[64] = "", shards[24] = "";

		/* -j 2 and more: the feed thread's part, to see which of the two holds the analysis back. */
		if (s->shards > 1)
			snprintf(shards, sizeof(shards), ", %u shards", s->shards);
		if (s->feed_pct >= 0)
			snprintf(feed, sizeof(feed), " (feed %.1f%%%s)", s->feed_pct, shards);
		snprintf(line, sizeof(line), "live slab %s (%s in %.1f s), %s objects  top's CPU %.1f%%%s%s%s",
			 bytes(s, (double)s->live_bytes, false, false, a),
			 bytes(s, (double)s->growth, false, true, b), s->interval,
			 count(s, s->live_objects, false, c), s->cpu_pct, feed, s->queued ? "  analysis behind: " : "",
			 s->queued ? bytes(s, (double)s->queued, false, false, d) : "");
		fprintf(out, "%.*s\n", width, line);
	}
	if (head >= HEAD_FULL)
		fputc('\n', out);
	drop = dropped(width);
	if (max_rows >= 0 && match > (size_t)max_rows)
		snprintf(what, sizeof(what), "%s (%d of %zu)", view_name(t->view), max_rows, match);
	else
		snprintf(what, sizeof(what), "%s", view_name(t->view));
	cells(line, sizeof(line), drop, s, NULL, what);
	fprintf(out, "%.*s\n", width, line);
	for (i = 0, k = 0; i < s->nrows[t->view] && (max_rows < 0 || k < (size_t)max_rows); i++) {
		const struct top_row *r = &s->rows[t->view][i];

		if (!snap_shown(t, r))
			continue;
		k++;
		cells(line, sizeof(line), drop, s, r, r->name);
		fprintf(out, "%.*s\n", width, line);
	}
	if (!match && max_rows)
		fprintf(out, "%.*s\n", width, no_rows(t, line, sizeof(line)));
}

/* One JSON object per snapshot, on one line: counts in the interval, exact. */
void show_json(struct top *t, FILE *out)
{
	const struct top_snap *s = &t->snap;
	const struct top_col *c;
	struct js j;
	size_t i, k;

	js_init(&j, out, false, true);
	js_open(&j, NULL, '{');
	js_u64(&j, "snapshot", s->number);
	js_dbl(&j, "time_s", s->t);
	js_dbl(&j, "interval_s", s->interval);
	js_str(&j, "view", view_name(t->view));
	js_u64(&j, "events", s->events);
	js_u64(&j, "allocs", s->allocs);
	js_u64(&j, "frees", s->frees);
	js_u64(&j, "page_allocs", s->page_allocs);
	js_u64(&j, "live_objects", s->live_objects);
	js_u64(&j, "live_bytes", s->live_bytes);
	js_i64(&j, "growth", s->growth);
	js_u64(&j, "lost_events", s->lost_events);
	js_u64(&j, "lost_gaps", s->lost_gaps);
	js_dbl(&j, "cpu_pct", s->cpu_pct);
	if (s->feed_pct >= 0)
		js_dbl(&j, "feed_cpu_pct", s->feed_pct);
	js_u64(&j, "model_shards", s->shards);
	js_u64(&j, "behind_bytes", s->queued);
	js_open(&j, "rows", '[');
	for (i = 0, k = 0; i < s->nrows[t->view] && (t->rows <= 0 || k < (size_t)t->rows); i++) {
		const struct top_row *r = &s->rows[t->view][i];

		if (!snap_shown(t, r))
			continue;
		k++;
		js_open(&j, NULL, '{');
		js_str(&j, "name", r->name);
		for (c = top_cols; c->get; c++)
			if (c->json)
				js_i64(&j, c->json, c->get(r));
		js_close(&j, '}');
	}
	js_close(&j, ']');
	js_close(&j, '}');
	fputc('\n', out);
	fflush(out);
}

static void size_of(struct top *t)
{
	struct winsize ws;

	if (!ioctl(t->tty_fd, TIOCGWINSZ, &ws) && ws.ws_col && ws.ws_row) {
		t->width = ws.ws_col;
		t->height = ws.ws_row;
	} else {
		t->width = 80;
		t->height = 24;
	}
}

/* Raw keys, no echo, the alternate screen, no cursor. */
int screen_open(struct top *t)
{
	struct termios raw;

	if (tcgetattr(t->tty_fd, &t->saved))
		return -1;
	t->saved_ok = true;
	raw = t->saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG | IEXTEN);
	raw.c_iflag &= ~(tcflag_t)(IXON | ICRNL);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(t->tty_fd, TCSAFLUSH, &raw))
		return -1;
	t->screen = true;
	/* A frame goes out in one write (a tty's stdout is line-buffered): no tearing. */
	setvbuf(t->out, NULL, _IOFBF, 1 << 16);
	fputs("\033[?1049h\033[?25l\033[H\033[2J", t->out);
	fflush(t->out);
	size_of(t);
	return 0;
}

void screen_close(struct top *t)
{
	if (!t->screen)
		return;
	t->screen = false;
	fputs("\033[?25h\033[?1049l", t->out);
	fflush(t->out);
	if (t->saved_ok)
		tcsetattr(t->tty_fd, TCSAFLUSH, &t->saved);
}

/*
 * The header's lines on a screen of @lines lines (the help line apart)
 * when @match rows match: all of it unless that leaves fewer than three
 * of them (or of the matching rows, if fewer) their line; then the blank
 * line goes, then the live slab line.
 */
static int head_lines(int lines, size_t match)
{
	int need = (int)MIN(MAX(match, (size_t)1), (size_t)3), head;

	for (head = HEAD_FULL; head > HEAD_MIN && lines - head < need; head--)
		;
	return head;
}

/*
 * The help line: exactly the keys that work now (a test presses each),
 * the views' from top_views[]: " c call sites  k caches ...", or narrow
 * " c/k/p view".
 */
static void help_line(const struct top *t, char *foot, size_t len)
{
	const struct top_view_def *v;
	bool wide = t->width >= 78;
	size_t n = 0;

	if (t->editing) {
		snprintf(foot, len, "filter: %s_   Enter apply  Esc clear  ^U erase", t->edit);
		return;
	}
	for (v = top_views; v < top_views + VIEW_NR && n < len; v++)
		n += (size_t)(wide ? snprintf(foot + n, len - n, " %c %s ", v->hotkey, v->rows) :
			      snprintf(foot + n, len - n, "%s%c", v == top_views ? " " : "/", v->hotkey));
	if (n < len)
		snprintf(foot + n, len - n, "%s s sort  / filter  space %s  q quit ", wide ? "" : " view ",
			 t->paused ? "resume" : "pause");
}

void screen_draw(struct top *t)
{
	char *buf = NULL, *l, *nl;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char foot[sizeof(t->edit) + 128];
	int lines, head, n;

	if (!m)
		return;
	size_of(t);
	lines = t->height - 1;
	head = head_lines(lines, matching(t));
	show_text(t, m, MAX(lines - head, 0), t->width, head);
	fclose(m);
	/*
	 * Home, each line cleared to its end, the rest of the screen cleared;
	 * never more lines than fit above the help line (more would scroll).
	 */
	fputs("\033[H", t->out);
	for (l = buf, n = 0; l && *l && n < lines; l = nl ? nl + 1 : NULL, n++) {
		nl = strchr(l, '\n');
		fprintf(t->out, "%.*s\033[K\r\n", nl ? (int)(nl - l) : (int)strlen(l), l);
	}
	fputs("\033[J", t->out);
	/* The last line, never wider than the window (a wrap would scroll the screen). */
	help_line(t, foot, sizeof(foot));
	fprintf(t->out, "\033[%d;1H\033[7m%.*s\033[0m\033[K", t->height, t->width > 1 ? t->width - 1 : 1, foot);
	fflush(t->out);
	free(buf);
}
