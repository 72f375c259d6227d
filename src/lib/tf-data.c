/*
 * Per-CPU flyrecord data, one sub-buffer at a time. Uncompressed data is
 * used in place (the file is mapped); compressed data is a count of chunks,
 * each "u32 csize, u32 usize, bytes", inflated one at a time into a buffer
 * that is reused, so memory stays at one chunk per CPU.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "tf-local.h"

#define MAX_CHUNK (64u << 20)

struct kmt_cpu_reader {
	struct kmt_file *f;
	const struct kmt_buffer *b;
	const struct kmt_cpu_data *cd;
	uint32_t psize;
	uint64_t pos;			/* raw: offset into the CPU's data */
	/* compressed */
	bool z;
	struct kmt_zctx *zc;
	struct cur chunks;
	uint32_t nr_chunks, chunk;
	uint64_t chunk_off;		/* file offset of the current chunk */
	uint8_t *buf;
	size_t buf_alloc, buf_len, buf_pos;
	uint64_t page_off;		/* file offset of the current page */
	char where[128];
};

int kmt_cpu_reader_open(struct kmt_cpu_reader **rp, struct kmt_file *f,
			int buffer, int idx, struct kmt_diag *d)
{
	const struct kmt_buffer *b = kmt_file_buffer(f, buffer);
	struct kmt_cpu_reader *r;

	*rp = NULL;
	if (!b || idx < 0 || idx >= b->nr_cpus)
		return kmt_diag_set(d, -EINVAL, "%s: no CPU #%d in buffer #%d", f->path, idx, buffer);
	r = calloc(1, sizeof(*r));
	if (!r)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	r->f = f;
	r->b = b;
	r->cd = &b->cpus[idx];
	r->psize = b->page_size;
	r->z = b->compressed && r->cd->size;
	if (r->z) {
		/* The recorded size counts the chunks, not the u32 count before them. */
		r->chunks.p = f->map + r->cd->offset;
		r->chunks.end = r->chunks.p + MIN(r->cd->size + 4, f->size - r->cd->offset);
		r->chunks.be = f->info.big_endian;
		r->nr_chunks = (uint32_t)cur_num(&r->chunks, 4);
		if (r->chunks.bad || r->nr_chunks > r->cd->size / 8) {
			const struct kmt_cpu_data *cd = r->cd;

			kmt_diag_set(d, KMT_EFORMAT, "chunk count %u cannot fit in %" PRIu64 " bytes",
				     r->nr_chunks, cd->size);
			kmt_cpu_reader_close(r);
			return tf_fail(f, d, "flyrecord chunks", cd->offset);
		}
		r->zc = kmt_zctx_new(f->zalg, 0);
		if (!r->zc) {
			kmt_cpu_reader_close(r);
			return kmt_diag_set(d, -ENOMEM, "out of memory");
		}
	}
	*rp = r;
	return 0;
}

static int next_chunk(struct kmt_cpu_reader *r, struct kmt_diag *d)
{
	struct kmt_file *f = r->f;
	uint32_t csize, usize;
	const uint8_t *src;
	int ret;

	r->chunk_off = (uint64_t)(r->chunks.p - f->map);
	csize = (uint32_t)cur_num(&r->chunks, 4);
	usize = (uint32_t)cur_num(&r->chunks, 4);
	src = cur_bytes(&r->chunks, csize);
	if (!src) {
		kmt_diag_set(d, KMT_ETRUNC, "chunk %u of %u (%u bytes) runs past the CPU's data",
			     r->chunk, r->nr_chunks, csize);
		return tf_fail(f, d, "flyrecord chunk", r->chunk_off);
	}
	if (usize == 0 || usize > MAX_CHUNK || usize % r->psize ||
	    (usize > 65536 && usize / 1024 > csize)) {
		kmt_diag_set(d, KMT_ECOMPRESS, "chunk %u: implausible size %u (from %u bytes, pages of %u)",
			     r->chunk, usize, csize, r->psize);
		return tf_fail(f, d, "flyrecord chunk", r->chunk_off);
	}
	if (usize > r->buf_alloc) {
		uint8_t *nb = realloc(r->buf, usize);

		if (!nb)
			return kmt_diag_set(d, -ENOMEM, "out of memory");
		r->buf = nb;
		r->buf_alloc = usize;
	}
	ret = kmt_zdecompress(r->zc, r->buf, usize, src, csize);
	if (ret) {
		kmt_diag_set(d, ret, "chunk %u does not inflate to %u bytes", r->chunk, usize);
		return tf_fail(f, d, "flyrecord chunk", r->chunk_off);
	}
	r->chunk++;
	r->buf_len = usize;
	r->buf_pos = 0;
	return 0;
}

int kmt_cpu_reader_next(struct kmt_cpu_reader *r, struct kmt_page *pg,
			struct kmt_diag *d)
{
	struct kmt_file *f = r->f;
	const uint8_t *page;
	int ret;

	if (!r->z) {
		if (r->pos >= r->cd->size)
			return 0;
		r->page_off = r->cd->offset + r->pos;
		if (r->cd->size - r->pos < r->psize) {
			kmt_diag_set(d, KMT_ETRUNC, "CPU %d: last page has %" PRIu64 " of %u bytes",
				     r->cd->cpu, r->cd->size - r->pos, r->psize);
			return tf_fail(f, d, "flyrecord page", r->page_off);
		}
		page = f->map + r->page_off;
		r->pos += r->psize;
	} else {
		if (r->buf_pos >= r->buf_len) {
			if (r->chunk >= r->nr_chunks)
				return 0;
			ret = next_chunk(r, d);
			if (ret)
				return ret;
		}
		page = r->buf + r->buf_pos;
		r->page_off = r->buf_pos;
		r->buf_pos += r->psize;
	}
	ret = kmt_page_load(pg, page, r->psize, &f->layout, f->info.big_endian, d);
	if (ret)
		return tf_fail(f, d, kmt_cpu_reader_where(r), r->z ? r->chunk_off : r->page_off);
	return 1;
}

const char *kmt_cpu_reader_where(struct kmt_cpu_reader *r)
{
	if (r->z)
		snprintf(r->where, sizeof(r->where), "CPU %d chunk %u, page at +%" PRIu64,
			 r->cd->cpu, r->chunk ? r->chunk - 1 : 0, r->page_off);
	else
		snprintf(r->where, sizeof(r->where), "CPU %d page", r->cd->cpu);
	return r->where;
}

uint64_t kmt_cpu_reader_offset(const struct kmt_cpu_reader *r)
{
	return r->z ? r->chunk_off : r->page_off;
}

int kmt_cpu_reader_cpu(const struct kmt_cpu_reader *r)
{
	return r->cd->cpu;
}

void kmt_cpu_reader_close(struct kmt_cpu_reader *r)
{
	if (!r)
		return;
	kmt_zctx_free(r->zc);
	free(r->buf);
	free(r);
}

int kmt_cpu_reader_fail(struct kmt_cpu_reader *r, struct kmt_diag *d)
{
	return tf_fail(r->f, d, kmt_cpu_reader_where(r), kmt_cpu_reader_offset(r));
}
