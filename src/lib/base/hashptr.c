/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SipHash-2-4 (Aumasson and Bernstein) for keyed address hashes
 * (include/kmemtrace/base.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <kmemtrace/base.h>

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define ROUND(v0, v1, v2, v3) do {					\
	v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);	\
	v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;				\
	v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;				\
	v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);	\
} while (0)

uint64_t kmt_siphash(uint64_t k0, uint64_t k1, const void *data, size_t len)
{
	uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
	uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
	const uint8_t *p = data;
	uint64_t m, b = (uint64_t)len << 56;
	size_t i, left = len & 7;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&m, p + i, 8);
		v3 ^= m;
		ROUND(v0, v1, v2, v3);
		ROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	for (i = 0; i < left; i++)
		b |= (uint64_t)p[len - left + i] << (8 * i);
	v3 ^= b;
	ROUND(v0, v1, v2, v3);
	ROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	for (i = 0; i < 4; i++)
		ROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

int kmt_hashptr_init(struct kmt_hashptr *h, const char *key)
{
	uint64_t k[2];

	h->on = true;
	if (key && *key) {
		/* Any string: derive the 128-bit key from it. */
		h->k0 = kmt_siphash(0x6b6d656d74726163ULL, 1, key, strlen(key));
		h->k1 = kmt_siphash(0x6b6d656d74726163ULL, 2, key, strlen(key));
		return 0;
	}
	if (getrandom(k, sizeof(k), 0) != sizeof(k))
		return -errno;
	h->k0 = k[0];
	h->k1 = k[1];
	return 0;
}

uint64_t kmt_hashptr_value(const struct kmt_hashptr *h, uint64_t addr)
{
	return h && h->on ? kmt_siphash(h->k0, h->k1, &addr, sizeof(addr)) : addr;
}

/* By hand, not snprintf(): kmap writes one a record (cut to @len as snprintf() would). */
const char *kmt_hashptr_fmt(const struct kmt_hashptr *h, uint64_t addr, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	bool hashed = h && h->on;
	uint64_t v = hashed ? kmt_hashptr_value(h, addr) : addr;
	char b[18], *p = b + sizeof(b);
	size_t n;

	do
		*--p = hex[v & 15];
	while ((v >>= 4) || (hashed && p > b + 2));
	*--p = hashed ? ':' : 'x';
	*--p = hashed ? 'h' : '0';
	n = (size_t)(b + sizeof(b) - p);
	if (len) {
		n = n < len ? n : len - 1;
		memcpy(buf, p, n);
		buf[n] = '\0';
	}
	return buf;
}
