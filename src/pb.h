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

void pb_uint(struct pb *b, uint32_t field, uint64_t v);	/* varint: uint*, int64 >= 0, bool, enum */
void pb_int(struct pb *b, uint32_t field, int64_t v);	/* int32/int64 (two's complement varint) */
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

#endif
