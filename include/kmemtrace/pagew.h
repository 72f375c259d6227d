/*
 * Writing ring-buffer pages the way the kernel packs them (64-bit layout:
 * u64 timestamp, u64 commit, 4-byte event headers, TIME_EXTEND for deltas
 * that do not fit 27 bits, type_len 0 for payloads over 112 bytes, a
 * missed-events flag and count). kmemtrace watch stores its synthesized
 * samples this way so every reader decodes them like kernel events; the
 * tests build traces with it.
 */
#ifndef KMEMTRACE_PAGEW_H
#define KMEMTRACE_PAGEW_H

#include <stdbool.h>
#include <stdint.h>

/* Receives each finished page (@size bytes); returns 0 or -errno. */
typedef int (*kmt_pagew_out)(void *arg, const uint8_t *page, uint32_t size);

struct kmt_pagew {
	uint8_t *page;
	uint32_t size, used;
	bool open;
	uint64_t page_ts, last_ts;
	bool lost_flag;
	int64_t lost;
	uint64_t clamped;		/* events whose time went back, given the last time */
	kmt_pagew_out out;
	void *arg;
};

/* Pages of @subbuf bytes (at least 64). 0, or -ENOMEM/-EINVAL. */
int kmt_pagew_init(struct kmt_pagew *w, uint32_t subbuf, kmt_pagew_out out, void *arg);
void kmt_pagew_release(struct kmt_pagew *w);
/*
 * Append one event: @len payload bytes (the record, common fields first)
 * at time @ts. Returns 0, -E2BIG if it cannot fit a page, or the output's
 * error.
 */
int kmt_pagew_add(struct kmt_pagew *w, uint64_t ts, const void *payload, uint32_t len);
/* Events were lost here: the next page says so (@lost < 0: how many unknown). */
int kmt_pagew_lost(struct kmt_pagew *w, int64_t lost);
/* Finish the current page, if any, and hand it out. */
int kmt_pagew_flush(struct kmt_pagew *w);

#endif
