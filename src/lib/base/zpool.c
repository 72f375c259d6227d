/*
 * Compressing a long run of bytes on every core, written in order
 * (zpool.h). Workers take chunk numbers in turn, read and compress each
 * into a slot of a small ring; the caller's thread hands the slots to
 * @out strictly in chunk order and frees them. A worker waits only when
 * the ring is full, the writer only for the next chunk in order.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "kmt-local.h"
#include "zpool.h"

#define MAX_THREADS 16

struct slot {
	char *buf, *zbuf;
	size_t len;
	long n;			/* compressed size, or an error */
	uint64_t k;		/* the chunk it holds */
	bool ready;
};

struct zpool {
	enum kmt_zalg alg;
	int level, nthreads, nslots;
	size_t chunk, cap;
	struct kmt_zctx *z[MAX_THREADS];
	struct slot *slot;

	/* One run at a time: */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t total, nchunks, next, written;
	bool stop;
	zpool_read_fn *read;
	void *arg;
};

int zpool_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

struct zpool *zpool_new(enum kmt_zalg alg, int level, size_t chunk, int nthreads)
{
	struct zpool *p = calloc(1, sizeof(*p));
	int i;

	if (!p)
		return NULL;
	p->alg = alg;
	p->level = level;
	p->chunk = chunk;
	p->cap = kmt_zbound(alg, chunk);
	p->nthreads = nthreads < 1 ? 1 : nthreads > MAX_THREADS ? MAX_THREADS : nthreads;
	p->nslots = 2 * p->nthreads;
	p->slot = calloc((size_t)p->nslots, sizeof(*p->slot));
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (!p->slot)
		goto fail;
	for (i = 0; i < p->nslots; i++) {
		p->slot[i].buf = malloc(chunk);
		p->slot[i].zbuf = malloc(p->cap);
		if (!p->slot[i].buf || !p->slot[i].zbuf)
			goto fail;
	}
	for (i = 0; i < p->nthreads; i++)
		if (!(p->z[i] = kmt_zctx_new(alg, level)))
			goto fail;
	return p;
fail:
	zpool_free(p);
	return NULL;
}

void zpool_free(struct zpool *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; p->slot && i < p->nslots; i++) {
		free(p->slot[i].buf);
		free(p->slot[i].zbuf);
	}
	for (i = 0; i < MAX_THREADS; i++)
		kmt_zctx_free(p->z[i]);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p->slot);
	free(p);
}

/* Read and compress chunk @k into @s with @z. */
static void fill(struct zpool *p, struct kmt_zctx *z, struct slot *s, uint64_t k)
{
	uint64_t off = k * p->chunk;
	size_t len = (size_t)MIN((uint64_t)p->chunk, p->total - off);
	int ret = p->read(p->arg, s->buf, len, off);

	s->len = len;
	s->n = ret ? ret : kmt_zcompress(z, s->zbuf, p->cap, s->buf, len);
	s->k = k;
}

struct worker {
	struct zpool *p;
	int i;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct zpool *p = w->p;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		uint64_t k;
		struct slot *s;

		while (!p->stop && p->next < p->nchunks && p->next >= p->written + (uint64_t)p->nslots)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop || p->next >= p->nchunks)
			break;
		k = p->next++;
		s = &p->slot[k % (uint64_t)p->nslots];
		pthread_mutex_unlock(&p->mu);
		fill(p, p->z[w->i], s, k);
		pthread_mutex_lock(&p->mu);
		s->ready = true;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int zpool_run(struct zpool *p, uint64_t total, zpool_read_fn *read, zpool_out_fn *out,
	      void *arg)
{
	pthread_t th[MAX_THREADS];
	struct worker w[MAX_THREADS];
	int i, started = 0, ret = 0;
	uint64_t k;

	p->total = total;
	p->nchunks = (total + p->chunk - 1) / p->chunk;
	p->next = p->written = 0;
	p->stop = false;
	p->read = read;
	p->arg = arg;
	for (i = 0; i < p->nslots; i++)
		p->slot[i].ready = false;
	/* One chunk, or one core: no threads. */
	for (i = 0; p->nchunks > 1 && p->nthreads > 1 && i < p->nthreads; i++) {
		w[i] = (struct worker){ .p = p, .i = i };
		if (pthread_create(&th[i], NULL, worker_main, &w[i]))
			break;
		started++;
	}
	for (k = 0; k < p->nchunks && !ret; k++) {
		struct slot *s = &p->slot[k % (uint64_t)p->nslots];

		if (started) {
			pthread_mutex_lock(&p->mu);
			while (!s->ready)
				pthread_cond_wait(&p->cv, &p->mu);
			pthread_mutex_unlock(&p->mu);
		} else {
			fill(p, p->z[0], s, k);
		}
		ret = s->n < 0 ? (int)s->n : out(arg, s->buf, s->zbuf, (size_t)s->n, s->len, k * p->chunk);
		pthread_mutex_lock(&p->mu);
		s->ready = false;
		p->written++;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	return ret;
}
