/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small protocol-buffer writer for the exports (pprof's profile.proto,
 * Perfetto's trace): fields appended to a growing buffer, nested messages
 * by begin/end (the length is put in front when the message ends). Write
 * only; the schemas written against are in proto/, checked with
 * protoc --decode by the tests.
 */
#ifndef KMT_PB_H
#define KMT_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pb {
	uint8_t *buf;
	size_t len, cap;
	bool oom;			/* an allocation failed: the buffer is incomplete */
};

void pb_reset(struct pb *b);		/* empty, keeping the memory */
void pb_release(struct pb *b);

/* varint: uint*, int64 >= 0, bool, enum (inline, below); int32/int64 (two's complement varint) */
static inline void pb_uint(struct pb *b, uint32_t field, uint64_t v);
static inline void pb_int(struct pb *b, uint32_t field, int64_t v);
void pb_bytes(struct pb *b, uint32_t field, const void *p, size_t n);
void pb_str(struct pb *b, uint32_t field, const char *s);
/* A packed repeated varint field. */
void pb_packed(struct pb *b, uint32_t field, const uint64_t *v, size_t n);
/* A nested message: pb_end(b, pb_begin(b, field)) around its fields. */
size_t pb_begin(struct pb *b, uint32_t field);
void pb_end(struct pb *b, size_t mark);
/* The same for a message of many KiB: its length is not moved in front. */
size_t pb_begin_long(struct pb *b, uint32_t field);
void pb_end_long(struct pb *b, size_t mark);

/*
 * Writing in place, for a message whose size has a small bound (each
 * Perfetto event): pb_reserve() room for @n bytes, pb_put_*() at a pointer
 * into it, pb_commit() the end. The bytes are the same as the calls above
 * would write; NULL from pb_reserve() when memory ran out (b->oom).
 */
bool pb_grow(struct pb *b, size_t n);

static inline uint8_t *pb_reserve(struct pb *b, size_t n)
{
	if ((b->len + n > b->cap || b->oom) && !pb_grow(b, n))
		return NULL;
	return b->buf + b->len;
}

static inline uint8_t *pb_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* A varint field (wire type 0). */
static inline uint8_t *pb_put_uint(uint8_t *p, uint32_t field, uint64_t v)
{
	return pb_put_varint(pb_put_varint(p, (uint64_t)field << 3), v);
}

/*
 * A nested message's tag and a one-byte length to be filled by
 * pb_put_end() (the message must stay under 128 bytes): returns where the
 * message starts.
 */
static inline uint8_t *pb_put_begin(uint8_t **p, uint32_t field)
{
	*p = pb_put_varint(*p, (uint64_t)field << 3 | 2);
	return ++*p;
}

static inline void pb_put_end(uint8_t *start, const uint8_t *p)
{
	start[-1] = (uint8_t)(p - start);
}

static inline void pb_commit(struct pb *b, const uint8_t *p)
{
	b->len = (size_t)(p - b->buf);
}

/* Inline: a few a Perfetto event, and one room check for the tag and the value. */
static inline void pb_uint(struct pb *b, uint32_t field, uint64_t v)
{
	uint8_t *p = pb_reserve(b, 20);

	if (p)
		pb_commit(b, pb_put_uint(p, field, v));
}

static inline void pb_int(struct pb *b, uint32_t field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
}

#endif
