/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's ring-buffer statistics text (per_cpu/cpuN/stats, and the
 * CPUSTAT options of a trace file that keep it): its one reader, and the
 * one loss figure made from it (include/kmemtrace/tracefile.h).
 */
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/tracefile.h>
#include "base/kmt-local.h"

static uint64_t stat_value(const char *text, size_t len, const char *key, bool *found)
{
	size_t klen = strlen(key);
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (l > klen && !memcmp(p, key, klen) && p[klen] == ':') {
			*found = true;
			return strtoull(p + klen + 1, NULL, 10);
		}
		p += l + 1;
	}
	return 0;
}

bool kmt_cpustat_parse(struct kmt_cpustat *st, const char *text, size_t len)
{
	bool found = false, cpu;

	memset(st, 0, sizeof(*st));
	st->cpu = (int)stat_value(text, len, "CPU", &found);
	cpu = found;
	st->valid = true;
	st->entries = stat_value(text, len, "entries", &found);
	st->overrun = stat_value(text, len, "overrun", &found);
	st->commit_overrun = stat_value(text, len, "commit overrun", &found);
	st->bytes = stat_value(text, len, "bytes", &found);
	st->dropped = stat_value(text, len, "dropped events", &found);
	st->read = stat_value(text, len, "read events", &found);
	st->died = stat_value(text, len, "kmemtrace lost when the recorder died", &found);
	st->after_death = stat_value(text, len, KMT_CPUSTAT_AFTER_DEATH, &found);
	found = false;
	stat_value(text, len, "kmemtrace truncated", &found);
	if (found) {
		const char *t = memmem(text, len, "kmemtrace truncated:", 20);
		size_t n = 0;

		st->truncated = true;
		t += 20;
		while (t < text + len && *t == ' ')
			t++;
		while (t + n < text + len && t[n] != '\n' && t[n] && n < sizeof(st->note) - 1)
			n++;
		memcpy(st->note, t, n);
		st->note[n] = '\0';
	}
	return cpu;
}

uint64_t kmt_cpustat_lost(const struct kmt_cpustat *st, uint64_t counted)
{
	return st && st->valid ? MAX(counted, st->overrun + st->dropped + st->died) : counted;
}
