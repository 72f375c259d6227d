/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The protocol-buffer writer (src/util/pb.h).
 */
#include <stdlib.h>
#include <string.h>

#include "pb.h"

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

bool pb_grow(struct pb *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;
	uint8_t *nb;

	if (b->oom)
		return false;
	while (cap < b->len + n)
		cap *= 2;
	if (!(nb = realloc(b->buf, cap))) {
		b->oom = true;
		return false;
	}
	b->buf = nb;
	b->cap = cap;
	return true;
}

static inline bool room(struct pb *b, size_t n)
{
	return pb_reserve(b, n) != NULL;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline void varint(struct pb *b, uint64_t v)
{
	uint8_t *p = pb_reserve(b, 10);

	if (p)
		pb_commit(b, pb_put_varint(p, v));
}

static inline void tag(struct pb *b, uint32_t field, int wire)
{
	varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

void pb_reset(struct pb *b)
{
	b->len = 0;
	b->oom = false;
}

void pb_release(struct pb *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

void pb_bytes(struct pb *b, uint32_t field, const void *p, size_t n)
{
	tag(b, field, WIRE_LEN);
	varint(b, n);
	if (room(b, n)) {
		memcpy(b->buf + b->len, p, n);
		b->len += n;
	}
}

void pb_str(struct pb *b, uint32_t field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

void pb_packed(struct pb *b, uint32_t field, const uint64_t *v, size_t n)
{
	size_t i, len = 0;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		len += varint_len(v[i]);
	tag(b, field, WIRE_LEN);
	varint(b, len);
	for (i = 0; i < n; i++)
		varint(b, v[i]);
}

/*
 * A nested message's length goes in @pad bytes kept in front of it: a
 * varint with redundant continuation bytes where it is shorter (every
 * decoder reads them; Perfetto's own writer does the same), so nothing
 * moves when the message ends unless its length needs more than @pad bytes.
 * One byte for ordinary messages (under 128 bytes never move), four for
 * long ones.
 */
static inline size_t begin_padded(struct pb *b, uint32_t field, size_t pad)
{
	tag(b, field, WIRE_LEN);
	if (room(b, pad))
		b->len += pad;
	return b->len;
}

/* The length of the message from @mark, put in front of it at @at (moving it). */
static void put_len(struct pb *b, size_t at, size_t mark)
{
	size_t n, k;

	if (b->oom || mark > b->len)
		return;
	n = b->len - mark;
	k = varint_len(n);
	if (!room(b, k))
		return;
	memmove(b->buf + at + k, b->buf + mark, n);
	b->len = at;
	varint(b, n);
	b->len = at + k + n;
}

static inline void end_padded(struct pb *b, size_t mark, size_t pad)
{
	size_t n, k;

	if (b->oom || mark < pad || mark > b->len)
		return;
	n = b->len - mark;
	if (n >> (7 * pad)) {
		put_len(b, mark - pad, mark);
		return;
	}
	for (k = 0; k < pad; k++)
		b->buf[mark - pad + k] = (uint8_t)(((n >> 7 * k) & 0x7f) | (k + 1 < pad ? 0x80 : 0));
}

size_t pb_begin(struct pb *b, uint32_t field)
{
	return begin_padded(b, field, 1);
}

void pb_end(struct pb *b, size_t mark)
{
	end_padded(b, mark, 1);
}

size_t pb_begin_long(struct pb *b, uint32_t field)
{
	return begin_padded(b, field, 4);
}

void pb_end_long(struct pb *b, size_t mark)
{
	end_padded(b, mark, 4);
}
