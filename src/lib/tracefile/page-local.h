/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Ring-buffer pages from the inside, private to the library (and its unit
 * tests): the rest of the kernel's encoding, beside what kmt_page_next()
 * reads inline (include/kmemtrace/tracefile.h), for page.c's reader,
 * page-write.c's writer and capture/recover.c; the page writer itself
 * (kmemtrace watch's samples, the tests' traces); and a run of spooled
 * pages counted (page-run.c: finalising and recovering a spool).
 */
#ifndef PAGE_LOCAL_H
#define PAGE_LOCAL_H

#include <kmemtrace/tracefile.h>

/* Private to the library: hidden from its users (see the Makefile). */
#pragma GCC visibility push(hidden)

/* The commit word: the data's length, and what was lost before the page. */
#define KMT_RB_MISSED_EVENTS (1ULL << 31)
#define KMT_RB_MISSED_STORED (1ULL << 30)
#define KMT_RB_COMMIT_MASK ((1U << 27) - 1)

/*
 * The event header's type_len past the data lengths (KMT_RB_TYPE_DATA_MAX;
 * 0 is a data event whose length follows): padding, time extend and
 * absolute time stamp; and the time delta above type_len.
 */
#define KMT_RB_TYPE_PADDING 29
#define KMT_RB_TYPE_TIME_EXTEND 30
#define KMT_RB_TYPE_TIME_STAMP 31
#define KMT_RB_DELTA_BITS 27
#define KMT_RB_DELTA_MASK ((1U << KMT_RB_DELTA_BITS) - 1)

/*
 * Writing ring-buffer pages the way the kernel packs them (64-bit layout:
 * u64 timestamp, u64 commit, 4-byte event headers, TIME_EXTEND for deltas
 * that do not fit 27 bits, type_len 0 for payloads over 112 bytes, a
 * missed-events flag and count). kmemtrace watch stores its synthesized
 * samples this way so every reader decodes them like kernel events; the
 * tests build traces with it.
 */

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

/*
 * page-run.c: one CPU's spooled pages counted in order, a bad page as a
 * gap of unknown size (its events before the bad one kept), for
 * finalising and recovering a spool. _mend() also rewrites bad pages in
 * @buf into what they count for. @each, if set, gets every record counted.
 */
struct kmt_page_run {
	const struct kmt_page_layout *pl;
	uint32_t subbuf;
	void (*each)(void *arg, const struct kmt_rec *rec);
	void *arg;
	uint64_t pages, events, lost, lost_unknown, lost_pages;	/* as kmt_census_cpu */
	uint64_t first_ts, last_ts;	/* of its events, 0: none */
	uint64_t bad;			/* pages not right (among lost_unknown) */
};
void kmt_page_run_init(struct kmt_page_run *r, const struct kmt_page_layout *pl, uint32_t subbuf);
void kmt_page_run_count(struct kmt_page_run *r, const void *buf, size_t len);
void kmt_page_run_mend(struct kmt_page_run *r, void *buf, size_t len);

#pragma GCC visibility pop

#endif
