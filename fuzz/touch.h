/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading results so the compiler cannot drop the work that made them,
 * and so the sanitizers see every byte a reader handed out.
 */
#ifndef KMT_FUZZ_TOUCH_H
#define KMT_FUZZ_TOUCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Results go here so reading them is not optimised away. */
static volatile uint64_t sink;

static inline void touch(const void *p, size_t n)
{
	const volatile uint8_t *b = p;
	uint64_t h = 0;
	size_t i;

	for (i = 0; i < n; i++)
		h = h * 31 + b[i];
	sink += h;
}

static inline void touch_str(const char *s)
{
	if (s)
		touch(s, strlen(s) + 1);
}

#endif
