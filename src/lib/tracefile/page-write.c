/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Packing events into ring-buffer pages (page-local.h), the inverse of
 * page.c: what the kernel's rb_update_event() and rb_add_time_stamp()
 * produce.
 */
#include <errno.h>
#include <stdlib.h>

#include <kmemtrace/tracefile.h>
#include "base/kmt-local.h"
#include "page-local.h"

#define HDR 16				/* u64 timestamp, u64 commit */

int kmt_pagew_init(struct kmt_pagew *w, uint32_t subbuf, kmt_pagew_out out, void *arg)
{
	memset(w, 0, sizeof(*w));
	if (subbuf < 64 || (subbuf & 7))
		return -EINVAL;
	w->page = calloc(1, subbuf);
	if (!w->page)
		return -ENOMEM;
	w->size = subbuf;
	w->out = out;
	w->arg = arg;
	return 0;
}

void kmt_pagew_release(struct kmt_pagew *w)
{
	free(w->page);
	w->page = NULL;
}

int kmt_pagew_flush(struct kmt_pagew *w)
{
	uint64_t commit;
	int ret;

	if (!w->open)
		return 0;
	commit = w->used;
	memcpy(w->page, &w->page_ts, 8);
	if (w->lost_flag) {
		commit |= KMT_RB_MISSED_EVENTS;
		if (w->lost >= 0) {
			commit |= KMT_RB_MISSED_STORED;
			memcpy(w->page + HDR + w->used, &w->lost, 8);
		}
		w->lost_flag = false;
	}
	memcpy(w->page + 8, &commit, 8);
	ret = w->out(w->arg, w->page, w->size);
	memset(w->page, 0, w->size);
	w->open = false;
	w->used = 0;
	return ret;
}

int kmt_pagew_lost(struct kmt_pagew *w, int64_t lost)
{
	int ret = kmt_pagew_flush(w);

	if (w->lost_flag && w->lost >= 0 && lost >= 0)
		lost += w->lost;	/* two losses before the next page */
	else if (w->lost_flag)
		lost = -1;
	w->lost_flag = true;
	w->lost = lost;
	return ret;
}

int kmt_pagew_add(struct kmt_pagew *w, uint64_t ts, const void *payload, uint32_t len)
{
	uint32_t plen = (len + 3) & ~3u, hdr;
	bool small = plen <= KMT_RB_TYPE_DATA_MAX * 4;	/* its length in type_len */
	uint32_t need = (small ? 4 : 8) + plen;
	uint32_t room = w->size - HDR - 8;	/* keep room for a lost count */
	uint64_t delta;
	int ret;

	if (need + 8 > room)
		return -E2BIG;
	if (w->open && w->used + need + 8 > room) {
		ret = kmt_pagew_flush(w);
		if (ret)
			return ret;
	}
	if (!w->open) {
		w->open = true;
		w->page_ts = MAX(ts, w->last_ts);
		w->last_ts = w->page_ts;
		w->used = 0;
	}
	if (ts < w->last_ts) {
		w->clamped++;
		ts = w->last_ts;
	}
	delta = ts - w->last_ts;
	if (delta > KMT_RB_DELTA_MASK) {
		uint32_t ext[2] = { KMT_RB_TYPE_TIME_EXTEND |
					(uint32_t)((delta & KMT_RB_DELTA_MASK) << KMT_RB_TYPE_LEN_BITS),
				    (uint32_t)(delta >> KMT_RB_DELTA_BITS) };

		memcpy(w->page + HDR + w->used, ext, 8);
		w->used += 8;
		delta = 0;
	}
	if (small) {
		hdr = (plen / 4) | (uint32_t)(delta << KMT_RB_TYPE_LEN_BITS);
		memcpy(w->page + HDR + w->used, &hdr, 4);
		memcpy(w->page + HDR + w->used + 4, payload, len);
		w->used += 4 + plen;
	} else {
		uint32_t a0 = plen + 4;

		hdr = (uint32_t)(delta << KMT_RB_TYPE_LEN_BITS);
		memcpy(w->page + HDR + w->used, &hdr, 4);
		memcpy(w->page + HDR + w->used + 4, &a0, 4);
		memcpy(w->page + HDR + w->used + 8, payload, len);
		w->used += 8 + plen;
	}
	w->last_ts = ts;
	return 0;
}
