/*
 * Keyed hashes of kernel addresses, so a report can be shared without
 * revealing the kernel's layout (KASLR): with the same key an address
 * always hashes the same, so objects can still be followed; without the
 * key nothing can be recovered. SipHash-2-4 of the address, 64 bits.
 */
#ifndef KMEMTRACE_HASHPTR_H
#define KMEMTRACE_HASHPTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kmt_hashptr {
	bool on;
	uint64_t k0, k1;
};

/*
 * Turn hashing on with @key (any string; NULL or "": a random key, so
 * hashes only compare within one run). Returns 0 or -errno.
 */
int kmt_hashptr_init(struct kmt_hashptr *h, const char *key);
uint64_t kmt_siphash(uint64_t k0, uint64_t k1, const void *data, size_t len);
/* @addr itself, or its keyed hash when hashing is on (the number "h:..." shows). */
uint64_t kmt_hashptr_value(const struct kmt_hashptr *h, uint64_t addr);
/* "0xffff888100d83800", or "h:5f1c9a0e3b7d2a41" when hashing is on. */
const char *kmt_hashptr_fmt(const struct kmt_hashptr *h, uint64_t addr, char *buf, size_t len);

#endif
