/*
 * Per-CPU flyrecord data, one sub-buffer at a time. Uncompressed data is
 * used in place (the file is mapped). Compressed data is a count of chunks,
 * each "u32 csize, u32 usize, bytes": they are inflated in order into a
 * small ring of buffers, either on demand or, with prefetching on, by a
 * worker thread that stays a few chunks ahead, so decompression runs on
 * another core while the caller walks pages. Memory: a few chunks per CPU.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tf-local.h"

#define MAX_CHUNK (64u << 20)
#define RING 4
#define RELEASE_EVERY (8u << 20)	/* give back mapped data this often */

struct zslot {
	uint8_t *buf;
	size_t alloc, len;
	uint64_t off;			/* file offset of the chunk */
	uint32_t idx;
	int err;
	struct kmt_diag diag;
};

struct kmt_cpu_reader {
	struct kmt_file *f;
	const struct kmt_buffer *b;
	const struct kmt_cpu_data *cd;
	uint32_t psize;
	uint64_t pos;			/* raw: offset into the CPU's data */
	uint64_t page_off;		/* file offset (raw) or offset in chunk */
	uint64_t released;		/* file data up to here was given back */
	char where[128];
	/* compressed */
	bool z;
	struct kmt_zctx *zc;
	struct cur chunks;		/* the producer's cursor over chunk headers */
	uint32_t nr_chunks, produced;
	struct zslot ring[RING];
	uint32_t head, tail;		/* consumer at head, producer fills tail */
	struct zslot *cur;		/* the chunk pages come from */
	size_t buf_pos;
	/* prefetching */
	bool threaded, stop, done;	/* done: the worker has no more to give */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t more, room;
};

/*
 * The file is mapped: data read once would stay resident and make memory
 * grow with the trace. Give back what is consumed, every few megabytes.
 */
static void release_upto(struct kmt_cpu_reader *r, uint64_t off)
{
	struct kmt_file *f = r->f;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), from, to;

	if (!f->mapped || off < r->released + RELEASE_EVERY)
		return;
	from = ALIGN_UP(r->released, page);
	to = off / page * page;
	if (to > from)
		madvise((void *)(f->map + from), (size_t)(to - from), MADV_DONTNEED);
	r->released = to;
}

/* Inflate the next chunk into @s. Returns 0 or an error (in s->diag). */
static int inflate_next(struct kmt_cpu_reader *r, struct zslot *s)
{
	struct kmt_file *f = r->f;
	uint32_t csize, usize;
	const uint8_t *src;
	int ret;

	s->idx = r->produced++;
	s->off = (uint64_t)(r->chunks.p - f->map);
	csize = (uint32_t)cur_num(&r->chunks, 4);
	usize = (uint32_t)cur_num(&r->chunks, 4);
	src = cur_bytes(&r->chunks, csize);
	if (!src) {
		kmt_diag_set(&s->diag, KMT_ETRUNC, "chunk %u of %u (%u bytes) runs past the CPU's data",
			     s->idx, r->nr_chunks, csize);
		return s->err = tf_fail(f, &s->diag, "flyrecord chunk", s->off);
	}
	if (usize == 0 || usize > MAX_CHUNK || usize % r->psize ||
	    (usize > 65536 && usize / 1024 > csize)) {
		kmt_diag_set(&s->diag, KMT_ECOMPRESS, "chunk %u: implausible size %u (from %u bytes, pages of %u)",
			     s->idx, usize, csize, r->psize);
		return s->err = tf_fail(f, &s->diag, "flyrecord chunk", s->off);
	}
	if (usize > s->alloc) {
		uint8_t *nb = realloc(s->buf, usize);

		if (!nb)
			return s->err = kmt_diag_set(&s->diag, -ENOMEM, "out of memory");
		s->buf = nb;
		s->alloc = usize;
	}
	ret = kmt_zdecompress(r->zc, s->buf, usize, src, csize);
	release_upto(r, (uint64_t)(src + csize - f->map));
	if (ret) {
		kmt_diag_set(&s->diag, ret, "chunk %u does not inflate to %u bytes", s->idx, usize);
		return s->err = tf_fail(f, &s->diag, "flyrecord chunk", s->off);
	}
	s->len = usize;
	s->err = 0;
	return 0;
}

static void *prefetch_main(void *arg)
{
	struct kmt_cpu_reader *r = arg;

	pthread_mutex_lock(&r->mu);
	/* r->produced is the worker's alone; the reader waits on done. */
	while (!r->stop && r->produced < r->nr_chunks) {
		struct zslot *s;
		int err;

		if (r->tail - r->head == RING) {
			pthread_cond_wait(&r->room, &r->mu);
			continue;
		}
		s = &r->ring[r->tail % RING];
		pthread_mutex_unlock(&r->mu);
		err = inflate_next(r, s);
		pthread_mutex_lock(&r->mu);
		r->tail++;
		pthread_cond_signal(&r->more);
		if (err)
			break;
	}
	r->done = true;
	pthread_cond_signal(&r->more);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

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
	r->released = r->cd->offset;
	r->z = b->compressed && r->cd->size;
	if (!r->z) {
		*rp = r;
		return 0;
	}
	/* The recorded size counts the chunks, not the u32 count before them. */
	r->chunks.p = f->map + r->cd->offset;
	r->chunks.end = r->chunks.p + MIN(r->cd->size + 4, f->size - r->cd->offset);
	r->chunks.be = f->info.big_endian;
	r->nr_chunks = (uint32_t)cur_num(&r->chunks, 4);
	if (r->chunks.bad || r->nr_chunks > r->cd->size / 8) {
		uint64_t off = r->cd->offset, size = r->cd->size;
		uint32_t n = r->nr_chunks;

		free(r);
		kmt_diag_set(d, KMT_EFORMAT, "chunk count %u cannot fit in %" PRIu64 " bytes", n, size);
		return tf_fail(f, d, "flyrecord chunks", off);
	}
	r->zc = kmt_zctx_new(f->zalg, 0);
	if (!r->zc) {
		free(r);
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	}
	if (f->prefetch && r->nr_chunks > 1) {
		pthread_mutex_init(&r->mu, NULL);
		pthread_cond_init(&r->more, NULL);
		pthread_cond_init(&r->room, NULL);
		r->threaded = !pthread_create(&r->th, NULL, prefetch_main, r);
	}
	*rp = r;
	return 0;
}

/* The next chunk, or NULL at the end; errors come through the slot. */
static struct zslot *next_chunk(struct kmt_cpu_reader *r)
{
	struct zslot *s;

	if (!r->threaded) {
		if (r->produced >= r->nr_chunks)
			return NULL;
		s = &r->ring[0];
		inflate_next(r, s);
		return s;
	}
	pthread_mutex_lock(&r->mu);
	if (r->cur) {
		r->head++;		/* the previous chunk is done with */
		pthread_cond_signal(&r->room);
	}
	while (r->head == r->tail && !r->done)
		pthread_cond_wait(&r->more, &r->mu);
	s = r->head < r->tail ? &r->ring[r->head % RING] : NULL;
	pthread_mutex_unlock(&r->mu);
	return s;
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
		/* Pages before the current one are done with. */
		release_upto(r, r->page_off);
	} else {
		if (!r->cur || r->buf_pos >= r->cur->len) {
			struct zslot *s = next_chunk(r);

			if (!s)
				return 0;
			r->cur = s;
			r->buf_pos = 0;
			if (s->err) {
				if (d)
					*d = s->diag;
				return s->err;
			}
		}
		page = r->cur->buf + r->buf_pos;
		r->page_off = r->buf_pos;
		r->buf_pos += r->psize;
	}
	ret = kmt_page_load(pg, page, r->psize, &f->layout, f->info.big_endian, d);
	if (ret)
		return kmt_cpu_reader_fail(r, d);
	return 1;
}

const char *kmt_cpu_reader_where(struct kmt_cpu_reader *r)
{
	if (r->z)
		snprintf(r->where, sizeof(r->where), "CPU %d chunk %u, page at +%" PRIu64,
			 r->cd->cpu, r->cur ? r->cur->idx : 0, r->page_off);
	else
		snprintf(r->where, sizeof(r->where), "CPU %d page", r->cd->cpu);
	return r->where;
}

uint64_t kmt_cpu_reader_offset(const struct kmt_cpu_reader *r)
{
	return r->z ? (r->cur ? r->cur->off : r->cd->offset) : r->page_off;
}

uint64_t kmt_cpu_reader_in_chunk(const struct kmt_cpu_reader *r)
{
	return r->z ? r->page_off : 0;
}

int kmt_cpu_reader_cpu(const struct kmt_cpu_reader *r)
{
	return r->cd->cpu;
}

void kmt_cpu_reader_close(struct kmt_cpu_reader *r)
{
	int i;

	if (!r)
		return;
	if (r->threaded) {
		pthread_mutex_lock(&r->mu);
		r->stop = true;
		pthread_cond_signal(&r->room);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->th, NULL);
		pthread_mutex_destroy(&r->mu);
		pthread_cond_destroy(&r->more);
		pthread_cond_destroy(&r->room);
	}
	for (i = 0; i < RING; i++)
		free(r->ring[i].buf);
	kmt_zctx_free(r->zc);
	free(r);
}

int kmt_cpu_reader_fail(struct kmt_cpu_reader *r, struct kmt_diag *d)
{
	return tf_fail(r->f, d, kmt_cpu_reader_where(r), kmt_cpu_reader_offset(r));
}
