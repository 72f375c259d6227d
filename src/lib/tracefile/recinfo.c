/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recording's own description and its VERSION text
 * (include/kmemtrace/tracefile.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kmemtrace/base.h>
#include <kmemtrace/tracefile.h>
#include "tf-local.h"

#define PARTIAL_OPEN " (partial: "

const char *kmt_partial_words(unsigned int partial)
{
	switch (partial & (KMT_PARTIAL_ALLOCS | KMT_PARTIAL_FREES)) {
	case KMT_PARTIAL_ALLOCS: return "allocations";
	case KMT_PARTIAL_FREES: return "frees";
	case KMT_PARTIAL_ALLOCS | KMT_PARTIAL_FREES: return "allocations frees";
	}
	return "";
}

unsigned int kmt_partial_parse(const char *words, size_t len)
{
	unsigned int p = 0;

	if (memmem(words, len, "allocations", 11))
		p |= KMT_PARTIAL_ALLOCS;
	if (memmem(words, len, "frees", 5))
		p |= KMT_PARTIAL_FREES;
	return p;
}

const char *kmt_recinfo_format(const struct kmt_recinfo *ri, char *buf, size_t len)
{
	const char *rec = *ri->recorder ? ri->recorder : "kmemtrace " KMT_VERSION;
	size_t n;

	if (ri->partial)
		n = (size_t)snprintf(buf, len, "%s" PARTIAL_OPEN "%s)", rec, kmt_partial_words(ri->partial));
	else
		n = (size_t)snprintf(buf, len, "%s", rec);
	if (*ri->command && n < len)
		n += (size_t)snprintf(buf + n, len - n, "\ncommand: %s", ri->command);
	if (*ri->settings && n < len)
		n += (size_t)snprintf(buf + n, len - n, "\nsettings: %s", ri->settings);
	if (ri->created && n < len) {
		time_t t = (time_t)ri->created;
		struct tm tm;
		char when[32];

		if (gmtime_r(&t, &tm) && strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
			snprintf(buf + n, len - n, "\nrecorded: %s", when);
	}
	return buf;
}

/* The value of "@key: " on a line of @text, into @out. */
static void line_value(const char *text, const char *key, char *out, size_t len)
{
	size_t klen = strlen(key);
	const char *p = text;

	*out = '\0';
	while ((p = strchr(p, '\n'))) {
		p++;
		if (!strncmp(p, key, klen) && p[klen] == ':' && p[klen + 1] == ' ') {
			p += klen + 2;
			snprintf(out, len, "%.*s", (int)strcspn(p, "\n"), p);
			return;
		}
	}
}

void kmt_recinfo_parse(struct kmt_recinfo *ri, const char *text)
{
	const char *p, *end;

	memset(ri, 0, sizeof(*ri));
	if (!text)
		return;
	p = strstr(text, PARTIAL_OPEN);
	end = p ? strchr(p, ')') : NULL;
	if (p && (size_t)(p - text) > strcspn(text, "\n"))
		p = NULL;	/* not on the first line */
	snprintf(ri->recorder, sizeof(ri->recorder), "%.*s",
		 (int)(p && end ? (size_t)(p - text) : strcspn(text, "\n")), text);
	ri->ours = !strncmp(text, "kmemtrace ", 10);
	if (p && end && (size_t)(p - text) < strcspn(text, "\n"))
		ri->partial = kmt_partial_parse(p, (size_t)(end - p));
	line_value(text, "command", ri->command, sizeof(ri->command));
	line_value(text, "settings", ri->settings, sizeof(ri->settings));
	p = strstr(ri->settings, "; stacks 1 in ");
	if (p) {
		char *num_end;

		ri->stack_sample = (unsigned int)strtoul(p + 14, &num_end, 10);
		ri->stack_slices = !strncmp(num_end, KMT_RECINFO_SLICES, strlen(KMT_RECINFO_SLICES));
	}
	{
		char when[32];
		struct tm tm = { 0 };

		line_value(text, "recorded", when, sizeof(when));
		if (*when && strptime(when, "%Y-%m-%dT%H:%M:%SZ", &tm))
			ri->created = (int64_t)timegm(&tm);
	}
}
