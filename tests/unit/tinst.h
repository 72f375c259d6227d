/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the unit tests of capture/ and tracefs/ read of a private
 * instance they made: a file's text, and the lines of a trigger file
 * that are triggers.
 */
#ifndef TINST_H
#define TINST_H

#include <kmemtrace/tracefs.h>

/* The text of instance file @rel (for exact comparisons): a static buffer, "(unreadable)" if it cannot be read. */
const char *inst_text(const struct kmt_instance *in, const char *rel);
/* Lines of @text that are not comments. */
int live_lines(const char *text);

#endif
