/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Text that fits the terminal (src/util/term.h): the width to fit, cutting
 * a string to a number of columns, and laying out a table's columns.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "term.h"

#define ELLIPSIS "\u2026"

int term_width(int fd)
{
	const char *s = getenv("COLUMNS");
	struct winsize ws;

	if (s && *s) {
		char *end;
		long v = strtol(s, &end, 10);

		if (!*end && v > 0 && v <= 100000)
			return (int)v;
	}
	if (fd >= 0 && isatty(fd) && !ioctl(fd, TIOCGWINSZ, &ws) && ws.ws_col)
		return ws.ws_col;
	return 0;
}

/* A byte that starts a character (not a UTF-8 continuation byte). */
static bool starts(unsigned char c)
{
	return (c & 0xc0) != 0x80;
}

int term_cols(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += starts((unsigned char)*s);
	return n;
}

/* How many bytes of @s make its first @cols columns (whole characters). */
static size_t prefix(const char *s, int cols)
{
	size_t i = 0;

	for (; s[i]; i++)
		if (starts((unsigned char)s[i]) && cols-- == 0)
			break;
	return i;
}

/* The "+0x1f" that ends a call site, or NULL. */
static const char *offset_of(const char *s)
{
	const char *p = strrchr(s, '+');

	if (!p || p == s || strncmp(p, "+0x", 3) || !p[3])
		return NULL;
	return strspn(p + 3, "0123456789abcdef") == strlen(p + 3) ? p : NULL;
}

const char *term_cut(const char *s, int w, bool site, char *buf, size_t len)
{
	const char *off = site ? offset_of(s) : NULL;
	int keep;

	if (term_cols(s) <= w)
		return s;
	if (w <= 0 || len < sizeof(ELLIPSIS))
		return "";
	if (off && term_cols(off) + 2 <= w) {
		keep = w - 1 - term_cols(off);
		snprintf(buf, len, "%.*s" ELLIPSIS "%s", (int)prefix(s, keep), s, off);
	} else {
		snprintf(buf, len, "%.*s" ELLIPSIS, (int)prefix(s, w - 1), s);
	}
	return buf;
}

/*
 * A line breaks at a space, but never right after a number: "12.3 KiB",
 * "2.0 ms", "0 failed", "(1.9 MiB)" stay whole.
 */
static bool breaks(const char *s, const char *sp)
{
	const char *w = sp;
	bool digit = false;

	if (*sp != ' ' || sp == s)
		return false;
	while (w > s && w[-1] != ' ')
		w--;
	for (; w < sp; w++) {
		if (!strchr("0123456789,.()+-", *w))
			return true;
		digit |= *w >= '0' && *w <= '9';
	}
	return !digit;
}

bool term_wrap(FILE *out, const char *s, int width, int indent)
{
	int col = 0, room = width;
	bool broke = false;

	while (width && term_cols(s) > room) {
		const char *sp = NULL, *p, *end = s + prefix(s, room);

		/* The last space within the room, not in the line's own indentation. */
		for (p = s + strspn(s, " "); p <= end; p++)
			if (breaks(s, p))
				sp = p;
		if (!sp)
			break;
		fprintf(out, "%*s%.*s\n", col, "", (int)(sp - s), s);
		s = sp + strspn(sp, " ");
		col = indent;
		room = width - indent;
		broke = true;
	}
	fprintf(out, "%*s%s\n", col, "", s);
	return broke;
}

static int usual(const struct term_col *c)
{
	return c->width < 0 ? -c->width : c->width;
}

/* Leave out the shown columns of the lowest drop rank; false if none can go. */
static bool drop_next(struct term_col *c, int n)
{
	int i, rank = 0;

	for (i = 0; i < n; i++)
		if (c[i].shown && c[i].drop && (!rank || c[i].drop < rank))
			rank = c[i].drop;
	if (!rank)
		return false;
	for (i = 0; i < n; i++)
		if (c[i].shown && c[i].drop == rank)
			c[i].shown = false;
	return true;
}

unsigned int term_fit(struct term_col *c, int n, int width, bool wide, int indent)
{
	int i, name = -1, last = -1, room, want = 0, least = 0, last_least = 0;
	unsigned int gave = 0;

	for (i = 0; i < n; i++)
		if (c[i].name)
			name = i;
	for (i = 0; i < n; i++) {
		c[i].shown = true;
		c[i].end = false;
		c[i].w = c[i].width == -1 ? 0 : usual(&c[i]);
		if (c[i].width == -1)
			last = i;
		else if (c[i].width < -1 && name < 0)
			name = i;
		if (wide && c[i].width < -1 && c[i].longest > c[i].w)
			c[i].w = c[i].longest;
	}
	if (!width || wide)
		return 0;
	if (name >= 0) {
		want = c[name].longest > c[name].w ? c[name].longest : c[name].w;
		least = c[name].longest < TERM_NAME_MIN ? c[name].longest : TERM_NAME_MIN;
	}
	if (last >= 0)
		last_least = c[last].longest < 32 ? c[last].longest : 32;
	for (;;) {
		room = width - indent;
		for (i = 0; i < n; i++)
			if (c[i].shown)
				room -= 1 + (i == name || i == last ? 0 : c[i].w);
		if (last >= 0 && !c[last].shown)
			last_least = 0;
		if (room >= least + last_least || !drop_next(c, n))
			break;
		gave |= TERM_DROPPED;
	}
	if (name >= 0) {
		c[name].w = room - last_least < want ? room - last_least : want;
		if (c[name].w < least)
			c[name].w = least;
		if (c[name].w < c[name].longest)
			gave |= TERM_CUT;
		room -= c[name].w;
	}
	if (last >= 0 && c[last].shown) {
		c[last].w = room > 1 ? room : 1;
		if (c[last].w < c[last].longest)
			gave |= TERM_CUT;
	}
	for (i = n - 1; i >= 0 && !c[i].shown; i--)
		;
	if (i >= 0)
		c[i].end = true;
	return gave;
}

const char *term_gave(unsigned int gave, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s", gave & TERM_DROPPED ? "some columns left out" : "",
		 gave & TERM_DROPPED && gave & (TERM_CUT | TERM_STACKS) ? ", " : "",
		 gave & TERM_CUT ? "names cut" : "", gave & TERM_CUT && gave & TERM_STACKS ? ", " : "",
		 gave & TERM_STACKS ? "stacks cut" : "");
	return buf;
}

void term_cell(FILE *out, const struct term_col *c, const char *s)
{
	char buf[1024];
	int cols;

	if (!c->shown)
		return;
	if (c->width > 0) {
		fprintf(out, " %*s", c->w, s);
		return;
	}
	if (c->width == -1) {
		fprintf(out, " %s", c->w ? term_cut(s, c->w, false, buf, sizeof(buf)) : s);
		return;
	}
	s = term_cut(s, c->w, true, buf, sizeof(buf));
	cols = term_cols(s);
	fprintf(out, " %s%*s", s, c->w > cols && !c->end ? c->w - cols : 0, "");
}
