/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Compressing long runs of bytes on every core, written in order
 * (zparallel.h). Workers take chunks in turn (segment by segment: a run is
 * one ring of chunks across them all), read and compress each into a slot
 * of a small ring; the caller's thread hands the slots to @out strictly in
 * order and frees them. A worker waits only when the ring is full, the
 * writer only for the next chunk in order.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "kmt-local.h"
#include "zparallel.h"

#define MAX_THREADS 16

struct slot {
	char *buf, *zbuf;
	size_t len;
	long n;			/* compressed size, or an error */
	int seg;		/* the chunk it holds: segment, offset */
	uint64_t off;
	bool ready;
};

struct worker {
	struct kmt_zparallel *p;
	int i;
};

struct kmt_zparallel {
	enum kmt_zalg alg;
	int level, nthreads, nslots;
	size_t chunk, cap;
	struct kmt_zctx *z[MAX_THREADS];
	struct slot *slot;
	/* The workers, started by the first run that needs them, kept until kmt_zparallel_free(). */
	pthread_t th[MAX_THREADS];
	struct worker w[MAX_THREADS];
	int started;

	/* One run at a time: */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const uint64_t *sizes;
	int nseg;
	int hseg;		/* the next chunk handed out: segment, offset */
	uint64_t hoff;
	uint64_t nchunks, next, written;
	int busy;		/* workers filling a slot */
	bool running, quit;
	kmt_zparallel_read_fn *read;
	void *arg;
};

int kmt_zparallel_threads(void)
{
	int n = kmt_cpus_usable();

	return n > MAX_THREADS ? MAX_THREADS : n;
}

struct kmt_zparallel *kmt_zparallel_new(enum kmt_zalg alg, int level, size_t chunk, int nthreads)
{
	struct kmt_zparallel *p = calloc(1, sizeof(*p));
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
	kmt_zparallel_free(p);
	return NULL;
}

void kmt_zparallel_free(struct kmt_zparallel *p)
{
	int i;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->quit = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (i = 0; i < p->started; i++)
		pthread_join(p->th[i], NULL);
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

/* The next chunk's place into @s; under p->mu (or with no workers). */
static void take(struct kmt_zparallel *p, struct slot *s)
{
	while (p->hseg < p->nseg && p->hoff >= p->sizes[p->hseg]) {
		p->hseg++;
		p->hoff = 0;
	}
	s->seg = p->hseg;
	s->off = p->hoff;
	s->len = (size_t)MIN((uint64_t)p->chunk, p->sizes[p->hseg] - p->hoff);
	p->hoff += s->len;
	p->next++;
}

/* Read and compress @s's chunk with @z. */
static void fill(struct kmt_zparallel *p, struct kmt_zctx *z, struct slot *s)
{
	int ret = p->read(p->arg, s->seg, s->buf, s->len, s->off);

	s->n = ret ? ret : kmt_zcompress(z, s->zbuf, p->cap, s->buf, s->len);
}

/*
 * A worker: waits for a run with a chunk to take and room in the ring,
 * fills it, and waits again; across runs (one per CPU of a trace file)
 * until kmt_zparallel_free(), so a file of many CPUs starts its threads once.
 */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct kmt_zparallel *p = w->p;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct slot *s;

		while (!p->quit && !(p->running && p->next < p->nchunks &&
				     p->next < p->written + (uint64_t)p->nslots))
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->quit)
			break;
		s = &p->slot[p->next % (uint64_t)p->nslots];
		take(p, s);
		p->busy++;
		pthread_mutex_unlock(&p->mu);
		fill(p, p->z[w->i], s);
		pthread_mutex_lock(&p->mu);
		s->ready = true;
		p->busy--;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Start the workers once: none for one core. */
static void start_workers(struct kmt_zparallel *p)
{
	int i;

	for (i = p->started; p->nthreads > 1 && i < p->nthreads; i++) {
		p->w[i] = (struct worker){ .p = p, .i = i };
		if (pthread_create(&p->th[i], NULL, worker_main, &p->w[i]))
			break;
		p->started++;
	}
}

int kmt_zparallel_run(struct kmt_zparallel *p, int nseg, const uint64_t *sizes,
		      kmt_zparallel_read_fn *read, kmt_zparallel_out_fn *out, void *arg)
{
	int i, ret = 0;
	uint64_t k;

	pthread_mutex_lock(&p->mu);
	p->sizes = sizes;
	p->nseg = nseg;
	p->hseg = 0;
	p->hoff = 0;
	p->nchunks = 0;
	for (i = 0; i < nseg; i++)
		p->nchunks += (sizes[i] + p->chunk - 1) / p->chunk;
	p->next = p->written = 0;
	p->read = read;
	p->arg = arg;
	for (i = 0; i < p->nslots; i++)
		p->slot[i].ready = false;
	p->running = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	/* One chunk: no threads needed yet. */
	if (p->nchunks > 1 && !p->started)
		start_workers(p);
	for (k = 0; k < p->nchunks && !ret; k++) {
		struct slot *s = &p->slot[k % (uint64_t)p->nslots];

		if (p->started) {
			pthread_mutex_lock(&p->mu);
			while (!s->ready)
				pthread_cond_wait(&p->cv, &p->mu);
			pthread_mutex_unlock(&p->mu);
		} else {
			take(p, s);
			fill(p, p->z[0], s);
		}
		ret = s->n < 0 ? (int)s->n : out(arg, s->seg, s->buf, s->zbuf, (size_t)s->n, s->len, s->off);
		pthread_mutex_lock(&p->mu);
		s->ready = false;
		p->written++;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
	/* The run ends when no worker is still filling a slot of it. */
	pthread_mutex_lock(&p->mu);
	p->running = false;
	while (p->busy)
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
	return ret;
}
