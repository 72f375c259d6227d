/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A run of one CPU's ring-buffer pages, as a recorder spools them: each
 * page validated and counted in order (page-local.h), the one rule of what
 * a page counts for, for finalising a spool and for recovering one alike.
 *
 * A page that is not right is a gap of unknown size where it is, and only
 * that: the pages after it count, as the readers go on after a page they
 * pass over. Its events before the first bad one are kept (as the readers
 * keep them); a page whose header cannot be right keeps none. Mending
 * rewrites such a page into what it counts for: its commit cut to the
 * events kept, flagged as having lost events with no count (the kernel's
 * own way, which every reader, trace-cmd too, understands), and, keeping
 * no event, timed at the run's last event so as not to go back in time.
 * A mended page counts as it did before it was mended (but for @bad).
 */
#include <string.h>

#include <kmemtrace/tracefile.h>
#include "base/kmt-local.h"
#include "page-local.h"

void kmt_page_run_init(struct kmt_page_run *r, const struct kmt_page_layout *pl, uint32_t subbuf)
{
	memset(r, 0, sizeof(*r));
	r->pl = pl;
	r->subbuf = subbuf;
}

/* Page @p, not right: its events up to @kept bytes, flagged with a loss of unknown size. */
static void mend_page(const struct kmt_page_run *r, uint8_t *p, uint32_t kept)
{
	const struct kmt_page_layout *pl = r->pl;
	uint64_t commit = kept | KMT_RB_MISSED_EVENTS;
	uint32_t c32 = (uint32_t)commit;

	if (pl->commit_size == 4)
		memcpy(p + pl->commit_offset, &c32, 4);
	else
		memcpy(p + pl->commit_offset, &commit, 8);
	if (!kept)	/* its time may be as wrong as the rest */
		memcpy(p + pl->ts_offset, &r->last_ts, 8);
}

/* Count the page at @p; if it is not right and @mend (@p, writable) is set, mend it. */
static void run_page(struct kmt_page_run *r, const uint8_t *p, uint8_t *mend)
{
	struct kmt_page pg;
	struct kmt_page_iter it;
	struct kmt_rec rec;
	uint32_t kept = 0;		/* bytes of data up to the end of its last good record */
	int ret = -1;			/* -1: the header cannot be right */

	r->pages++;
	if (!kmt_page_load(&pg, p, r->subbuf, r->pl, false, NULL)) {
		kmt_page_iter_init(&it, &pg);
		while ((ret = kmt_page_next(&it, &rec, NULL)) > 0) {
			if (!r->first_ts || rec.ts < r->first_ts)
				r->first_ts = rec.ts;
			r->last_ts = MAX(r->last_ts, rec.ts);
			r->events++;
			kept = it.pos;
			if (r->each)
				r->each(r->arg, &rec);
		}
	}
	if (ret < 0) {
		r->bad++;
		r->lost_pages++;
		r->lost_unknown++;
		if (mend)
			mend_page(r, mend, kept);
		return;
	}
	if (pg.missed) {
		r->lost_pages++;
		if (pg.lost > 0)
			r->lost += (uint64_t)pg.lost;
		else
			r->lost_unknown++;
	}
}

void kmt_page_run_count(struct kmt_page_run *r, const void *buf, size_t len)
{
	size_t off;

	for (off = 0; off + r->subbuf <= len; off += r->subbuf)
		run_page(r, (const uint8_t *)buf + off, NULL);
}

void kmt_page_run_mend(struct kmt_page_run *r, void *buf, size_t len)
{
	uint8_t *b = buf;
	size_t off;

	for (off = 0; off + r->subbuf <= len; off += r->subbuf)
		run_page(r, b + off, b + off);
}
