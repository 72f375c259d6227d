/*
 * The compression algorithms a trace.dat v7 may name: zstd and zlib, as
 * trace-cmd writes them (zstd frames; zlib streams from compress2()).
 */
#ifndef KMEMTRACE_COMPRESS_H
#define KMEMTRACE_COMPRESS_H

#include <stddef.h>

enum kmt_zalg {
	KMT_Z_NONE,
	KMT_Z_ZSTD,
	KMT_Z_ZLIB,
};

/* The algorithm called @name ("none", "zstd", "zlib"), or -1. */
int kmt_zalg_from_name(const char *name);
const char *kmt_zalg_name(enum kmt_zalg alg);
/* The library version string written next to the name in a file. */
const char *kmt_zalg_version(enum kmt_zalg alg);

/* A reusable (de)compression context; NULL + errno on failure. */
struct kmt_zctx *kmt_zctx_new(enum kmt_zalg alg, int level);
void kmt_zctx_free(struct kmt_zctx *z);

size_t kmt_zbound(enum kmt_zalg alg, size_t len);
/* Compress; returns the compressed size, or KMT_ECOMPRESS. */
long kmt_zcompress(struct kmt_zctx *z, void *dst, size_t cap,
		   const void *src, size_t len);
/*
 * Decompress @srclen bytes into exactly @dstlen bytes. Returns 0, or
 * KMT_ECOMPRESS if the data is corrupt or does not expand to @dstlen.
 */
int kmt_zdecompress(struct kmt_zctx *z, void *dst, size_t dstlen,
		    const void *src, size_t srclen);

#endif
