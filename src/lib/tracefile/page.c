/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Ring-buffer sub-buffer decoding (see include/kmemtrace/tracefile.h).
 * This is the innermost loop of every reader: keep it branch-light, and
 * keep every bound check.
 */
#include <kmemtrace/tracefile.h>
#include "base/kmt-local.h"
#include "page-local.h"

#define TS_MSB (0xf8ULL << 56)

int kmt_page_load(struct kmt_page *pg, const void *base, uint32_t size,
		  const struct kmt_page_layout *pl, bool be, struct kmt_diag *d)
{
	const uint8_t *b = base;
	uint64_t commit;
	uint32_t room;

	if (size < pl->data_offset)
		return kmt_diag_set(d, KMT_EFORMAT, "sub-buffer of %u bytes is smaller than its header", size);
	room = size - pl->data_offset;
	pg->base = b;
	pg->size = size;
	pg->be = be;
	pg->ts = ld64(b + pl->ts_offset, be);
	commit = ldn(b + pl->commit_offset, pl->commit_size, be);
	pg->data = b + pl->data_offset;
	pg->data_len = (uint32_t)commit & KMT_RB_COMMIT_MASK;
	pg->missed = commit & KMT_RB_MISSED_EVENTS;
	pg->lost = 0;
	if (pg->data_len > room)
		return kmt_diag_set(d, KMT_EFORMAT, "commit %u exceeds the sub-buffer's %u data bytes",
				    pg->data_len, room);
	if (pg->missed) {
		pg->lost = -1;
		if (commit & KMT_RB_MISSED_STORED) {
			if (pg->data_len + pl->commit_size > room)
				return kmt_diag_set(d, KMT_EFORMAT, "lost-events count lies beyond the sub-buffer");
			pg->lost = (int64_t)ldn(pg->data + pg->data_len, pl->commit_size, be);
			if (pg->lost < 0)
				pg->lost = -1;
		}
	}
	return 0;
}

int kmt_page_next_slow(struct kmt_page_iter *it, struct kmt_rec *rec,
		       struct kmt_diag *d)
{
	const struct kmt_page *pg = it->pg;
	const uint8_t *data = pg->data;
	uint32_t end = pg->data_len;
	bool be = pg->be;

	while (it->pos < end) {
		uint32_t pos = it->pos, hdr, type_len, delta, len;

		if (end - pos < 4)
			return kmt_diag_set(d, KMT_EFORMAT, "event header cut by commit at %u", pos);
		hdr = ld32(data + pos, be);
		if (be) {
			type_len = hdr >> KMT_RB_DELTA_BITS;
			delta = hdr & KMT_RB_DELTA_MASK;
		} else {
			type_len = hdr & KMT_RB_TYPE_LEN_MASK;
			delta = hdr >> KMT_RB_TYPE_LEN_BITS;
		}
		if (type_len >= 1 && type_len <= KMT_RB_TYPE_DATA_MAX) {
			len = type_len * 4;
			if (len > end - pos - 4)
				return kmt_diag_set(d, KMT_EFORMAT, "event of %u bytes at %u runs past commit %u",
						    len, pos, end);
			it->ts += delta;
			it->last_delta = delta;
			it->pos = pos + 4 + len;
			rec->ts = it->ts;
			rec->data = data + pos + 4;
			rec->len = len;
			rec->offset = pos;
			return 1;
		}
		if (end - pos < 8) {
			/* Only a lone padding header fits at the very end. */
			if (type_len == KMT_RB_TYPE_PADDING)
				break;
			return kmt_diag_set(d, KMT_EFORMAT, "event header cut by commit at %u", pos);
		}
		len = ld32(data + pos + 4, be);
		switch (type_len) {
		case 0:
			if (len < 4 || len - 4 > end - pos - 8)
				return kmt_diag_set(d, KMT_EFORMAT, "event length %u at %u runs past commit %u",
						    len, pos, end);
			len = (len - 4 + 3) & ~3U;
			if (len > end - pos - 8)
				len = end - pos - 8;
			it->ts += delta;
			it->last_delta = delta;
			it->pos = pos + 8 + len;
			rec->ts = it->ts;
			rec->data = data + pos + 8;
			rec->len = len;
			rec->offset = pos;
			return 1;
		case KMT_RB_TYPE_PADDING:
			it->nr_pad++;
			it->ts += delta;
			if (len > end - pos - 4) {
				/* Discarded tail: the rest of the page is padding. */
				it->pos = end;
				break;
			}
			it->pos = pos + 4 + len;
			if (len == 0)
				it->pos = pos + 8;
			break;
		case KMT_RB_TYPE_TIME_EXTEND:
			it->nr_ext++;
			it->ts += ((uint64_t)len << KMT_RB_DELTA_BITS) + delta;
			it->pos = pos + 8;
			break;
		default: /* KMT_RB_TYPE_TIME_STAMP */
			it->nr_abs++;
			it->ts = ((((uint64_t)len << KMT_RB_DELTA_BITS) + delta) & ~TS_MSB) | (it->ts & TS_MSB);
			it->pos = pos + 8;
			break;
		}
	}
	return 0;
}
