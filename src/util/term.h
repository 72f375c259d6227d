/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Text that fits the terminal, as ps and procps top fit it: how wide the
 * output may be, and tables laid out in that width by leaving out their
 * optional columns in a fixed order and cutting long names with "…". A
 * file or a pipe keeps every column at its usual width unless $COLUMNS
 * asks for less; --wide prints everything, names whole (term.c).
 */
#ifndef KMT_TERM_H
#define KMT_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A name column is never cut to less than this to make room for others. */
#define TERM_NAME_MIN 24

/*
 * The width text written to @fd should fit: $COLUMNS when it is set (into
 * a pipe or a file too), else the terminal's when @fd is one (@fd < 0:
 * none); 0 for no limit.
 */
int term_width(int fd);

/* The columns the UTF-8 string @s takes on a terminal. */
int term_cols(const char *s);

/*
 * @s in at most @w columns, into @buf of @len bytes (@s itself if it fits):
 * cut at the end with "…", or, with @site and a "symbol+0xoff", in the
 * symbol, so that the call sites of one function stay apart
 * ("getname_fl…+0x24").
 */
const char *term_cut(const char *s, int w, bool site, char *buf, size_t len);

/* Prose is wrapped at 80 columns, or at a narrower @width (0: none). */
#define TERM_PROSE 80
static inline int term_prose(int width)
{
	return width && width < TERM_PROSE ? width : TERM_PROSE;
}

/*
 * The line @s (no newline in it) and a newline; within @width, broken at
 * spaces into lines of at most @width columns where it can be, the later
 * ones indented by @indent spaces. True if it was broken.
 */
bool term_wrap(FILE *out, const char *s, int width, int indent);

/* A column of a text table: term_fit() lays it out, term_cell() prints it. */
struct term_col {
	const char *title;
	/*
	 * Its usual width: > 0 right-aligned; < -1 left-aligned, cut with
	 * "…" beyond; -1 the last column, as long as its cell is.
	 */
	int width;
	int drop;		/* in a narrow width: left out by rank, 1 first; 0 never */
	bool name;		/* it takes the room others leave (default: the first left-aligned) */
	int longest;		/* the caller's: the columns of its widest cell (left-aligned ones) */
	/* set by term_fit(): */
	bool shown;
	int w;			/* its width; 0 for the last column: no limit */
	bool end;		/* the last shown, in a width: left-aligned, not padded */
};

/*
 * Lay out the @n columns of a table whose lines start with @indent columns
 * and separate cells by one space. With no @width, their usual widths
 * (with @wide, every left-aligned column as wide as its longest cell:
 * nothing is cut). Within @width: the name column (the first left-aligned
 * one unless a column says it is) takes what the others leave it, up to
 * the wider of its usual width and its longest cell, and is cut to no less
 * than TERM_NAME_MIN before the columns with the lowest drop rank are left
 * out; the last column takes the rest of the line (32 columns at least
 * before others go). Returns what had to give: TERM_DROPPED if a column is
 * left out, TERM_CUT if a cell may be cut; 0 if nothing. (TERM_STACKS is
 * the callers': lines they cut themselves.)
 */
enum { TERM_DROPPED = 1, TERM_CUT = 2, TERM_STACKS = 4 };
unsigned int term_fit(struct term_col *c, int n, int width, bool wide, int indent);
/* "some columns left out, names cut" for what @gave (TERM_*), into @buf. */
const char *term_gave(unsigned int gave, char *buf, size_t len);
/* @s as the cell of @c: a space, then @s aligned and cut to the column; nothing if not shown. */
void term_cell(FILE *out, const struct term_col *c, const char *s);

#endif
