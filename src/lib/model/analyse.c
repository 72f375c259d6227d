/*
 * Stream -> decoder -> model (include/kmemtrace/model.h).
 *
 * Two stages, on two threads where the file inflates on threads too:
 *
 *   producer: kmt_stream_next -> kmt_decode -> batch (events, their strings
 *             and stacks copied into the batch's arena, loss markers)
 *   consumer: batch -> kmt_model_events (no copies) -> o->each
 *
 * Batches go round a ring of NB; the model, the slow stage, never waits for
 * the decoder unless the decoder is slower. On one thread the producer
 * hands each full batch straight to the consumer.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <kmemtrace/model.h>
#include <kmemtrace/tracefile.h>
#include "base/kmt-local.h"

void kmt_model_opts_from_file(struct kmt_model_opts *mo, const struct kmt_file *f)
{
	const struct kmt_recinfo *ri = &kmt_file_info(f)->recinfo;
	unsigned int p = ri->partial;

	mo->partial_allocs = p & KMT_PARTIAL_ALLOCS;
	mo->partial_frees = p & KMT_PARTIAL_FREES;
	/* Settings lost with a damaged file's options: it may have been partial. */
	if (kmt_file_info(f)->salvaged)
		mo->partial_allocs = mo->partial_frees = true;
	mo->stack_sample = ri->stack_sample;
	mo->stack_slices = ri->stack_slices;
}

#define BATCH 1024		/* events per batch */
#define NB 4			/* batches in the ring */

/* What an item of a batch is: an event for the model, or a marker. */
enum item { IT_EVENT, IT_LOST, IT_TRUNCATED, IT_ACCESS_LOST, IT_NAME, IT_GAP };

struct batch {
	/* markers: cpu, ts, lost in bytes_req; a gap's end in bytes_alloc */
	struct kmt_event ev[BATCH];
	uint8_t what[BATCH];
	unsigned int n;
	char *arena;			/* the events' strings and stacks */
	size_t used, cap;
};

struct job {
	struct kmt_file *f;
	int buffer;
	const struct kmt_decoder *dec;
	struct kmt_model *m;
	const struct kmt_analyse_opts *o;
	struct kmt_analyse_result res;
	struct kmt_diag d;		/* the producer's */
	int ret;			/* the producer's: 0 or an error */
	uint64_t lo, hi, seen, last;
	bool started, past_hi;
	/* consumer */
	int mret;			/* -ENOMEM once the model failed */
	uint64_t fed;			/* events the model took */
	/* the ring */
	struct batch b[NB];
	unsigned int prod, cons;	/* batches handed over, taken */
	bool threaded, done, stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/* The model's side: one batch, in order. */
static void consume(struct job *j, struct batch *b)
{
	unsigned int i = 0, k;

	while (i < b->n && !j->mret) {
		const struct kmt_event *ev = &b->ev[i];

		switch (b->what[i]) {
		case IT_EVENT:
			for (k = i + 1; k < b->n && b->what[k] == IT_EVENT; k++)
				;
			if (kmt_model_events(j->m, ev, k - i)) {
				j->mret = -ENOMEM;
				return;
			}
			j->fed += k - i;
			for (; j->o && j->o->each && i < k; i++)
				j->o->each(j->o->arg, &b->ev[i]);
			i = k;
			continue;
		case IT_LOST:
			kmt_model_lost(j->m, ev->cpu, (int64_t)ev->bytes_req, ev->ts);
			break;
		case IT_TRUNCATED:
			kmt_model_truncated(j->m, ev->cpu, ev->ts);
			break;
		case IT_ACCESS_LOST:
			kmt_model_access_lost(j->m, (int64_t)ev->bytes_req);
			break;
		case IT_GAP:
			kmt_model_gap(j->m, ev->cpu, ev->ts, ev->bytes_alloc);
			break;
		case IT_NAME:
			kmt_model_name_event(j->m, ev);
			break;
		}
		i++;
	}
}

/* The producer's batch being filled. */
static struct batch *filling(struct job *j)
{
	return &j->b[j->prod % NB];
}

/* Hand the batch being filled over; false if the consumer wants no more. */
static bool hand(struct job *j)
{
	struct batch *b = filling(j);
	bool go;

	if (!b->n)
		return !j->stop;
	if (!j->threaded) {
		consume(j, b);
		go = !j->mret;
	} else {
		pthread_mutex_lock(&j->mu);
		j->prod++;
		pthread_cond_broadcast(&j->cv);
		while (j->prod - j->cons >= NB && !j->stop)
			pthread_cond_wait(&j->cv, &j->mu);
		go = !j->stop;
		pthread_mutex_unlock(&j->mu);
	}
	/* The next to fill: this one again on one thread, else one the consumer is done with. */
	b = filling(j);
	b->n = 0;
	b->used = 0;
	return go;
}

/* Room for @need arena bytes in a batch with a free slot; NULL: stop. */
static struct batch *room(struct job *j, size_t need)
{
	struct batch *b = filling(j);

	if ((b->n == BATCH || b->used + need > b->cap) && !hand(j))
		return NULL;
	b = filling(j);
	if (need > b->cap) {
		/* An empty batch: no string points into the old arena. */
		size_t cap = MAX(need, (size_t)64 << 10);
		char *a = realloc(b->arena, cap);

		if (!a) {
			j->ret = kmt_diag_set(&j->d, -ENOMEM, "out of memory");
			return NULL;
		}
		b->arena = a;
		b->cap = cap;
	}
	return b;
}

static const void *keep(struct batch *b, const void *p, size_t len)
{
	char *to;

	if (!len)
		return p;	/* (the arena may not exist yet) */
	to = b->arena + b->used;
	memcpy(to, p, len);
	b->used += len;
	return to;
}

/* Queue @ev (and copies of what it points to) as @what. */
static bool put_event(struct job *j, const struct kmt_event *ev, enum item what)
{
	size_t sl = (size_t)ev->nr_stack * ev->stack_word;
	struct batch *b = room(j, ev->name_len + ev->str2_len + sl);
	struct kmt_event *to;

	if (!b)
		return false;
	to = &b->ev[b->n];
	*to = *ev;
	to->name = keep(b, ev->name, ev->name_len);
	to->str2 = keep(b, ev->str2, ev->str2_len);
	to->stack = keep(b, ev->stack, sl);
	b->what[b->n++] = (uint8_t)what;
	return true;
}

static bool put_marker(struct job *j, enum item what, int cpu, int64_t lost, uint64_t ts)
{
	struct batch *b = room(j, 0);

	if (!b)
		return false;
	b->ev[b->n] = (struct kmt_event){ .cpu = cpu, .ts = ts, .bytes_req = (uint64_t)lost };
	b->what[b->n++] = (uint8_t)what;
	return true;
}

/*
 * A part of a damaged file passed over: kept for the caller, and a gap for
 * the model where it meets the window.
 */
static bool put_skip(struct job *j, const struct kmt_srec *sr)
{
	const struct kmt_skip *g = sr->skip;
	struct kmt_skip *v = realloc(j->res.skipped, sizeof(*v) * (j->res.nr_skipped + 1));

	if (!v) {
		j->ret = kmt_diag_set(&j->d, -ENOMEM, "out of memory");
		return false;
	}
	j->res.skipped = v;
	v[j->res.nr_skipped++] = *g;
	if (sr->buffer != j->buffer)
		return put_marker(j, IT_ACCESS_LOST, sr->cpu, -1, 0);
	if (g->ts_from > j->hi || g->ts_to < j->lo)
		return true;
	if (!put_marker(j, IT_GAP, sr->cpu, -1, g->ts_from))
		return false;
	filling(j)->ev[filling(j)->n - 1].bytes_alloc = g->ts_to;
	return true;
}

/* The stream, decoded and cut to the window, into batches. */
static void produce(struct job *j)
{
	const struct kmt_analyse_opts *o = j->o;
	int bufs[2] = { j->buffer, kmt_file_access_buffer(j->f) };
	struct kmt_stream *s;
	struct kmt_srec sr;
	struct kmt_event ev;
	bool ok = true;
	int ret;

	s = kmt_stream_open_buffers(j->f, bufs, bufs[1] >= 0 && bufs[1] != j->buffer ? 2 : 1, &j->d);
	if (!s) {
		j->ret = j->d.err ? j->d.err : -EINVAL;
		return;
	}
	while (ok && (ret = kmt_stream_next(s, &sr, &j->d)) > 0) {
		if (!j->started) {
			j->started = true;
			j->res.t0 = sr.rec.ts;
			if (o && o->t0)
				*o->t0 = j->res.t0;
			if (o && o->t_start > 0)
				j->lo = j->res.t0 + (uint64_t)(o->t_start * 1e9);
			if (o && o->t_end >= 0)
				j->hi = j->res.t0 + (uint64_t)(o->t_end * 1e9);
		}
		if (sr.skip) {
			ok = put_skip(j, &sr);
			continue;
		}
		if (sr.lost_marker && sr.buffer != j->buffer) {
			ok = put_marker(j, IT_ACCESS_LOST, sr.cpu, sr.lost, 0);
			continue;
		}
		if (sr.lost_marker) {
			if (sr.truncated && sr.rec.ts <= j->hi)
				ok = put_marker(j, IT_TRUNCATED, sr.cpu, -1, sr.rec.ts);
			else if (sr.rec.ts >= j->lo && sr.rec.ts <= j->hi)
				ok = put_marker(j, IT_LOST, sr.cpu, sr.lost, sr.rec.ts);
			continue;
		}
		j->res.records++;
		if (sr.rec.ts > j->hi) {
			j->past_hi = true;
			break;
		}
		j->seen = sr.rec.ts;
		ret = kmt_decode(j->dec, &sr.rec, sr.cpu, &ev);
		if (ret < 0) {
			kmt_diag_set(&j->d, ret, "%s: CPU %d, page at offset %" PRIu64
				     ": a record (id %u, %u bytes) does not fit its format",
				     kmt_file_info(j->f)->path, sr.cpu, kmt_stream_offset(s, sr.idx),
				     sr.rec.len >= 2 ? ld16(sr.rec.data, kmt_file_info(j->f)->big_endian) : 0,
				     sr.rec.len);
			break;
		}
		if (ret == 0)
			continue;
		if (sr.rec.ts < j->lo) {
			/* Names still matter before the window. */
			if (ev.kind >= KMT_EV_FORK && ev.kind <= KMT_EV_NEWTASK)
				ok = put_event(j, &ev, IT_NAME);
			continue;
		}
		j->last = sr.rec.ts;
		ok = put_event(j, &ev, IT_EVENT);
	}
	kmt_stream_close(s);
	if (ret < 0 && !j->ret)
		j->ret = ret;
	/* What is left in hand goes too (or is dropped if the model stopped). */
	if (ok)
		hand(j);
}

static void *produce_main(void *arg)
{
	struct job *j = arg;

	produce(j);
	pthread_mutex_lock(&j->mu);
	j->done = true;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

/* The consumer's loop while the producer runs on its thread. */
static void consume_all(struct job *j)
{
	for (;;) {
		struct batch *b;

		pthread_mutex_lock(&j->mu);
		while (j->cons == j->prod && !j->done)
			pthread_cond_wait(&j->cv, &j->mu);
		if (j->cons == j->prod) {
			pthread_mutex_unlock(&j->mu);
			return;
		}
		b = &j->b[j->cons % NB];
		pthread_mutex_unlock(&j->mu);
		consume(j, b);
		pthread_mutex_lock(&j->mu);
		j->cons++;
		if (j->mret)
			j->stop = true;
		pthread_cond_broadcast(&j->cv);
		pthread_mutex_unlock(&j->mu);
		if (j->mret)
			return;
	}
}

void kmt_analyse_result_release(struct kmt_analyse_result *res)
{
	free(res->skipped);
	res->skipped = NULL;
	res->nr_skipped = 0;
}

int kmt_analyse(struct kmt_file *f, int buffer, const struct kmt_decoder *dec,
		struct kmt_model *m, const struct kmt_analyse_opts *o,
		struct kmt_analyse_result *res, struct kmt_diag *d)
{
	struct job *j = calloc(1, sizeof(*j));
	pthread_t th;
	int ret, i;

	memset(res, 0, sizeof(*res));
	if (!j)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	*j = (struct job){ .f = f, .buffer = buffer, .dec = dec, .m = m, .o = o, .hi = UINT64_MAX };
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	/* A second stage only where there is a core for it. */
	/* Set before the thread starts: the producer reads it. */
	j->threaded = kmt_file_prefetch(f) && sysconf(_SC_NPROCESSORS_ONLN) > 1;
	if (j->threaded && pthread_create(&th, NULL, produce_main, j))
		j->threaded = false;
	if (j->threaded) {
		consume_all(j);
		pthread_mutex_lock(&j->mu);
		j->stop = true;		/* the producer may wait for room */
		pthread_cond_broadcast(&j->cv);
		pthread_mutex_unlock(&j->mu);
		pthread_join(th, NULL);
	} else {
		produce(j);
	}
	*res = j->res;
	ret = j->ret;
	if (j->mret)
		ret = kmt_diag_set(d, -ENOMEM, "%s: out of memory in the allocation model after %" PRIu64
				   " events; the results would be incomplete", kmt_file_info(f)->path, j->fed);
	else if (ret < 0)
		*d = j->d;
	else if (j->started && j->lo > j->seen && !j->past_hi)
		ret = kmt_diag_set(d, -ERANGE, "%s: the window starts at %.6f s, but the trace ends at %.6f s",
				   kmt_file_info(f)->path, (double)(j->lo - res->t0) / 1e9,
				   (double)(j->seen - res->t0) / 1e9);
	if (!ret && (!o || (o->t_start <= 0 && o->t_end < 0))) {
		/* The whole trace: its losses are what the ring buffers counted. */
		const struct kmt_buffer *b = kmt_file_buffer(f, buffer);

		for (i = 0; b && i < b->nr_stats; i++)
			if (b->stats[i].valid)
				kmt_model_ring_lost(m, b->stats[i].cpu, kmt_cpustat_lost(&b->stats[i], 0));
	}
	if (!ret) {
		/* The window's end if the trace goes on past it, else the trace's. */
		res->t_end = j->past_hi ? j->hi : MAX(j->last, j->seen);
		if (kmt_model_finish(m, res->t_end))
			ret = kmt_diag_set(d, -ENOMEM, "%s: out of memory in the allocation model; the "
					   "results would be incomplete", kmt_file_info(f)->path);
	}
	if (ret)
		kmt_analyse_result_release(res);
	for (i = 0; i < NB; i++)
		free(j->b[i].arena);
	pthread_cond_destroy(&j->cv);
	pthread_mutex_destroy(&j->mu);
	free(j);
	return ret;
}
