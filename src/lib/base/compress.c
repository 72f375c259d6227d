/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * zstd and zlib behind one small interface, for trace.dat sections and
 * flyrecord chunks. Decompression insists on the exact advertised size, so
 * a lying chunk header is caught here rather than in the page walker.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include <kmemtrace/base.h>

struct kmt_zctx {
	enum kmt_zalg alg;
	int level;
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
};

const char *const kmt_zalg_names[] = {
	[KMT_Z_NONE] = "none", [KMT_Z_ZSTD] = "zstd", [KMT_Z_ZLIB] = "zlib", NULL,
};

int kmt_zalg_from_name(const char *name)
{
	int i;

	for (i = 0; kmt_zalg_names[i]; i++)
		if (!strcmp(name, kmt_zalg_names[i]))
			return i;
	return -1;
}

const char *kmt_zalg_name(enum kmt_zalg alg)
{
	return alg <= KMT_Z_ZLIB ? kmt_zalg_names[alg] : kmt_zalg_names[KMT_Z_NONE];
}

const char *kmt_zalg_version(enum kmt_zalg alg)
{
	switch (alg) {
	case KMT_Z_ZSTD: return ZSTD_versionString();
	case KMT_Z_ZLIB: return zlibVersion();
	default: return "";
	}
}

struct kmt_zctx *kmt_zctx_new(enum kmt_zalg alg, int level)
{
	struct kmt_zctx *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	z->alg = alg;
	z->level = level;
	return z;
}

void kmt_zctx_free(struct kmt_zctx *z)
{
	if (!z)
		return;
	ZSTD_freeCCtx(z->cctx);
	ZSTD_freeDCtx(z->dctx);
	free(z);
}

size_t kmt_zbound(enum kmt_zalg alg, size_t len)
{
	switch (alg) {
	case KMT_Z_ZSTD: return ZSTD_compressBound(len);
	case KMT_Z_ZLIB: return compressBound(len);
	default: return len;
	}
}

long kmt_zcompress(struct kmt_zctx *z, void *dst, size_t cap,
		   const void *src, size_t len)
{
	if (z->alg == KMT_Z_ZSTD) {
		size_t r;

		if (!z->cctx) {
			z->cctx = ZSTD_createCCtx();
			if (!z->cctx)
				return -ENOMEM;
			ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, z->level);
		}
		r = ZSTD_compress2(z->cctx, dst, cap, src, len);
		return ZSTD_isError(r) ? KMT_ECOMPRESS : (long)r;
	}
	if (z->alg == KMT_Z_ZLIB) {
		uLongf out = cap;

		if (compress2(dst, &out, src, len, z->level) != Z_OK)	/* 0 (stored) to 9 */
			return KMT_ECOMPRESS;
		return (long)out;
	}
	if (cap < len)
		return KMT_ECOMPRESS;
	memcpy(dst, src, len);
	return (long)len;
}

int kmt_zdecompress(struct kmt_zctx *z, void *dst, size_t dstlen,
		    const void *src, size_t srclen)
{
	if (z->alg == KMT_Z_ZSTD) {
		size_t r;

		if (!z->dctx) {
			z->dctx = ZSTD_createDCtx();
			if (!z->dctx)
				return -ENOMEM;
		}
		r = ZSTD_decompressDCtx(z->dctx, dst, dstlen, src, srclen);
		if (ZSTD_isError(r) || r != dstlen)
			return KMT_ECOMPRESS;
		return 0;
	}
	if (z->alg == KMT_Z_ZLIB) {
		uLongf out = dstlen;

		if (uncompress(dst, &out, src, srclen) != Z_OK || out != dstlen)
			return KMT_ECOMPRESS;
		return 0;
	}
	if (srclen != dstlen)
		return KMT_ECOMPRESS;
	memcpy(dst, src, dstlen);
	return 0;
}
