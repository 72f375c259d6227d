/*
 * The protocol-buffer writer (src/pb.h).
 */
#include <stdlib.h>
#include <string.h>

#include "pb.h"

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

static bool room(struct pb *b, size_t n)
{
	if (b->oom)
		return false;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *nb;

		while (cap < b->len + n)
			cap *= 2;
		if (!(nb = realloc(b->buf, cap))) {
			b->oom = true;
			return false;
		}
		b->buf = nb;
		b->cap = cap;
	}
	return true;
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

static void varint(struct pb *b, uint64_t v)
{
	if (!room(b, 10))
		return;
	while (v >= 0x80) {
		b->buf[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->buf[b->len++] = (uint8_t)v;
}

static void tag(struct pb *b, uint32_t field, int wire)
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

void pb_uint(struct pb *b, uint32_t field, uint64_t v)
{
	tag(b, field, WIRE_VARINT);
	varint(b, v);
}

void pb_int(struct pb *b, uint32_t field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
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

size_t pb_begin(struct pb *b, uint32_t field)
{
	tag(b, field, WIRE_LEN);
	return b->len;
}

void pb_end(struct pb *b, size_t mark)
{
	size_t n, k;

	if (b->oom || mark > b->len)
		return;
	n = b->len - mark;
	k = varint_len(n);
	if (!room(b, k))
		return;
	memmove(b->buf + mark + k, b->buf + mark, n);
	b->len = mark;
	varint(b, n);
	b->len = mark + k + n;
}
