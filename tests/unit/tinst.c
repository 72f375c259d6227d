/* SPDX-License-Identifier: GPL-2.0-only */
/* A private instance's files, as the unit tests read them (tinst.h). */
#include <string.h>

#include "tinst.h"

const char *inst_text(const struct kmt_instance *in, const char *rel)
{
	static char buf[4096];

	if (kmt_instance_read(in, rel, buf, sizeof(buf)) < 0)
		return "(unreadable)";
	return buf;
}

int live_lines(const char *text)
{
	int n = 0;

	while (*text) {
		size_t l = strcspn(text, "\n");

		n += l && *text != '#';
		text += l + (text[l] == '\n');
	}
	return n;
}
