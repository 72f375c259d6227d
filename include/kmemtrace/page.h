/*
 * The ftrace ring-buffer sub-buffer ("page"), as read from trace_pipe_raw
 * and stored unchanged in trace.dat:
 *
 *	u64 timestamp | long commit (length | MISSED_EVENTS | MISSED_STORED)
 *	| events... | [long lost-count if MISSED_STORED]
 *
 * Each event starts with a 32-bit header (type_len:5, time_delta:27);
 * type_len 29/30/31 are padding, time extend and absolute time stamp.
 * Iteration is bounds-checked against the commit length and never reads
 * outside the page.
 */
#ifndef KMEMTRACE_PAGE_H
#define KMEMTRACE_PAGE_H

#include <stdbool.h>
#include <stdint.h>
#include "format.h"

#define KMT_RB_MISSED_EVENTS (1ULL << 31)
#define KMT_RB_MISSED_STORED (1ULL << 30)
#define KMT_RB_COMMIT_MASK ((1U << 27) - 1)

/* The event header's type_len values above data lengths, and its delta. */
#define KMT_RB_TYPE_PADDING 29
#define KMT_RB_TYPE_TIME_EXTEND 30
#define KMT_RB_TYPE_TIME_STAMP 31
#define KMT_RB_DELTA_BITS 27
#define KMT_RB_DELTA_MASK ((1U << KMT_RB_DELTA_BITS) - 1)

struct kmt_page {
	const uint8_t *base;		/* the whole sub-buffer */
	uint32_t size;			/* sub-buffer size */
	const uint8_t *data;		/* first event */
	uint32_t data_len;		/* bytes of events (commit & mask) */
	uint64_t ts;			/* page start time */
	bool missed;			/* events were lost before this page */
	int64_t lost;			/* how many: > 0, or -1 if unknown */
	bool be;			/* big-endian file */
};

/*
 * Load the sub-buffer at @base (@size bytes). Returns 0, or KMT_EFORMAT
 * with the reason in @d when the header cannot be right (commit beyond
 * the page, lost count beyond the page).
 */
int kmt_page_load(struct kmt_page *pg, const void *base, uint32_t size,
		  const struct kmt_page_layout *pl, bool be, struct kmt_diag *d);

/* One data event of a page. */
struct kmt_rec {
	uint64_t ts;
	const uint8_t *data;
	uint32_t len;			/* payload bytes (4-byte rounded) */
	uint32_t offset;		/* of the event header, from page start */
};

struct kmt_page_iter {
	const struct kmt_page *pg;
	uint32_t pos;			/* offset into pg->data */
	uint64_t ts;
	uint32_t nr_pad, nr_ext, nr_abs; /* counts of non-data events seen */
	uint64_t last_delta;		/* delta of the last event */
};

static inline void kmt_page_iter_init(struct kmt_page_iter *it,
				      const struct kmt_page *pg)
{
	it->pg = pg;
	it->pos = 0;
	it->ts = pg->ts;
	it->nr_pad = it->nr_ext = it->nr_abs = 0;
	it->last_delta = 0;
}

/* The general case of kmt_page_next(): every event type, both byte orders. */
int kmt_page_next_slow(struct kmt_page_iter *it, struct kmt_rec *rec,
		       struct kmt_diag *d);

/*
 * Next data event into @rec. Returns 1 for an event, 0 at the end of the
 * page, KMT_EFORMAT (reason in @d, may be NULL) when an event header points
 * outside the committed data. Inline for the common case: a little-endian
 * page and a small data event (type_len 1..28).
 */
static inline int kmt_page_next(struct kmt_page_iter *it, struct kmt_rec *rec,
				struct kmt_diag *d)
{
	const struct kmt_page *pg = it->pg;
	uint32_t pos = it->pos, hdr, tl, len;

	if (pos + 4 <= pg->data_len && !pg->be) {
		__builtin_memcpy(&hdr, pg->data + pos, 4);
		tl = hdr & 31;
		len = tl * 4;
		if (tl - 1 < 28 && len <= pg->data_len - pos - 4) {
			it->ts += hdr >> 5;
			it->last_delta = hdr >> 5;
			it->pos = pos + 4 + len;
			rec->ts = it->ts;
			rec->data = pg->data + pos + 4;
			rec->len = len;
			rec->offset = pos;
			return 1;
		}
	}
	return kmt_page_next_slow(it, rec, d);
}

/*
 * A CPU's ring-buffer statistics: the kernel's per_cpu/cpuN/stats, live or
 * as a file's CPUSTAT option keeps them.
 */
struct kmt_cpustat {
	int cpu;
	bool valid;
	uint64_t entries, overrun, commit_overrun, bytes, dropped, read;
	/* Lines kmemtrace adds after the kernel's (absent in other files). */
	bool truncated;			/* recording stopped early (e.g. ENOSPC) */
	char note[128];			/* why, if truncated */
	uint64_t died;			/* events lost with a recorder that was
					   killed (recovered, recover.h) */
	char *text;			/* the CPUSTAT text itself */
};

/*
 * Parse the kernel's per_cpu/cpuN/stats text ("entries: N" lines, and
 * kmemtrace's own "CPU:" and "kmemtrace truncated:" lines) into @st; @st->text
 * is left NULL. The one reader of that text. Returns whether a "CPU:" line was there.
 */
bool kmt_cpustat_parse(struct kmt_cpustat *st, const char *text, size_t len);
/*
 * The events a CPU lost, one figure everywhere (record, info, check,
 * report): what its ring buffer counted (overrun + dropped events), or what
 * its page headers counted (@counted) if more; with the events a dead
 * recorder took with it (--recover). @st may be NULL (no stats).
 */
uint64_t kmt_cpustat_lost(const struct kmt_cpustat *st, uint64_t counted);

#endif
