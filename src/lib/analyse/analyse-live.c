/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pipeline over a stream that grows (include/kmemtrace/analyse.h:
 * kmt_analyse_live_*; kmemtrace top): the stream's records decoded into
 * kmt_analyse()'s batches (analyse-local.h: the same items, markers as
 * kmt_marker_of() says, what a marker is to the model kmt_model_marker()'s),
 * fed to the model, or to its shards (model-shards.c), pump by pump.
 *
 * An event may only be decoded once no CPU can still hand over an older
 * one: the caller's refill() sets the stream's safe time, and the stream
 * says -EAGAIN there. Decoded events point into their pages (no copy): a
 * page read to the end goes with the batch being filled
 * (kmt_analyse_live_hold()) and back to the caller once the model, every
 * shard of it, has taken that batch.
 *
 * With one job everything runs in the pump, a batch of up to OVER_EVERY
 * items at a time (the caller's over() asked between them). With more,
 * the pipeline is kmt_analyse()'s job (analyse-local.h): a reader thread,
 * the producer, takes pages, merges and decodes, kicked by each pump, into
 * the job's ring (kmt_handoff); the pump's thread is shard 0 (the model,
 * or shard 0 routing the others' events), the other shards take the
 * batches on threads of their own (model-shards.c, as for a file), and a
 * last taker, the pump's thread again, hands a batch's pages back once
 * every shard has taken it. The model sees the same events in the same
 * order either way. A reader's round ends with a batch marked last (empty
 * if need be), so that the pump learns at once that the reader is through.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyse-local.h"

#define OVER_EVERY 256		/* items between two looks at over(): some 30 us */
#define WAIT_NS 5000000ULL	/* the pump looks at over() this often while it waits */
#define SKIPS 16		/* parts passed over a batch has room for */
#define SKIP_BYTES (sizeof(struct kmt_skip) + 8)

struct kmt_analyse_live {
	struct job *j;			/* its model, shards, batches and ring */
	struct kmt_stream *s;
	struct kmt_analyse_opts ao;	/* for consume(): the marker callback */
	struct kmt_analyse_live_opts o;
	void *held[NB];			/* the caller's list that goes with each batch */
	bool last[NB];			/* the reader's round ended with it */
	/* the reader thread (2 jobs and more) */
	unsigned int rel;		/* the ring's last taker: the pages back */
	uint64_t routed, released;	/* batches into the model; their pages back */
	pthread_t th;
	bool running;
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* the kick */
	bool kick, all, quit;
	bool busy;			/* kicked, not through with it yet */
	int err;			/* the reader's error: it has stopped */
	struct kmt_diag d;
};

/* ---- the stream into batches ---- */

/* Room for one more item (a part passed over in its arena too)? */
static bool batch_room(const struct batch *b)
{
	return b->n < BATCH && b->ar.used + SKIP_BYTES <= b->ar.cap;
}

/*
 * The stream's next item into @b, which has room: 1, 0 at the safe time
 * or the end, < 0 an error in @d. Events are decoded in place, their
 * strings left in the pages.
 */
static int next_item(struct kmt_analyse_live *a, struct batch *b, struct kmt_diag *d)
{
	struct kmt_event *ev = &b->ev[b->n];
	struct kmt_marker mk;
	struct kmt_srec sr;
	int ret;

	for (;;) {
		ret = kmt_stream_next(a->s, &sr, d);
		if (ret <= 0)
			return ret == -EAGAIN ? 0 : ret;
		if (sr.lost_marker || sr.skip) {
			kmt_marker_of(&sr, sr.buffer, &mk);	/* one buffer: every marker is of it */
			batch_put_marker(b, &mk, sr.skip);
			return 1;
		}
		ret = kmt_decode(a->j->dec, &sr.rec, sr.cpu, ev);
		if (ret < 0) {
			mk = (struct kmt_marker){ .kind = KMT_MARK_MISFIT, .cpu = sr.cpu, .lost = -1, .ts = sr.rec.ts };
			batch_put_marker(b, &mk, NULL);
			return 1;
		}
		if (ret) {
			b->evp[b->n] = ev;
			b->what[b->n++] = IT_EVENT;
			return 1;
		}
	}
}

/* ---- batches into the model ---- */

/* @b into the model (with shards: into shard 0, which routes the others' events). */
static int feed_batch(struct kmt_analyse_live *a, struct batch *b)
{
	unsigned int k;

	/*
	 * The events' strings are still in their pages, which the reader's
	 * core read last: the cache names the model compares come from
	 * another core's cache (a quarter of this thread's time), unless
	 * asked for now. A batch's names fit in this core's cache. (With
	 * shards, the shards compare them, not this thread; with one job,
	 * this core decoded them.)
	 */
	for (k = 0; a->running && a->j->nms == 1 && k < b->n; k++)
		if (b->ev[k].name_len)
			__builtin_prefetch(b->ev[k].name);
	consume(a->j, a->j->m, b);
	return a->j->mret;
}

static int out_of_memory(struct kmt_diag *d)
{
	return kmt_diag_set(d, -ENOMEM, "out of memory: the analysis stops");
}

/* One job: everything up to the safe time, in batches of OVER_EVERY items. */
static int pump_here(struct kmt_analyse_live *a, bool all, bool *pending, struct kmt_diag *d)
{
	struct batch *b = a->j->b;
	int ret;

	if ((ret = a->o.refill(a->o.arg, all, d)))
		return ret;
	do {
		batch_reset(b);
		while (b->n < OVER_EVERY && batch_room(b) && (ret = next_item(a, b, d)) > 0)
			;
		if (feed_batch(a, b))
			return out_of_memory(d);
		if (a->held[0]) {
			a->o.release(a->o.arg, a->held[0]);
			a->held[0] = NULL;
		}
		if (ret < 0)
			return ret;
		/* Behind a busy machine: stop now and then, so keys come on time. */
		if (ret > 0 && !all && a->o.over(a->o.arg)) {
			*pending = true;
			break;
		}
	} while (ret > 0);
	return 0;
}

/* ---- the reader thread ---- */

/* The batch being filled goes over (@last: the round's); false if told to quit, or the ring stopped. */
static bool reader_hand(struct kmt_analyse_live *a, bool last)
{
	struct job *j = a->j;

	a->last[j->prod & (j->nb - 1)] = last;
	kmt_handoff_give(j->h);
	j->prod = kmt_handoff_room(j->h);
	if (kmt_handoff_stopped(j->h))
		return false;
	batch_reset(&j->b[j->prod & (j->nb - 1)]);
	return !__atomic_load_n(&a->quit, __ATOMIC_RELAXED);
}

/* One kick's work: the pages taken, every item up to the safe time into batches. */
static int read_round(struct kmt_analyse_live *a, bool all, struct kmt_diag *d)
{
	struct batch *b;
	int ret;

	if ((ret = a->o.refill(a->o.arg, all, d)))
		return ret;
	for (;;) {
		b = &a->j->b[a->j->prod & (a->j->nb - 1)];
		if (!batch_room(b)) {
			if (!reader_hand(a, false))
				return 0;
			continue;
		}
		if ((ret = next_item(a, b, d)) <= 0)
			return ret;
	}
}

static void *reader_main(void *arg)
{
	struct kmt_analyse_live *a = arg;
	struct kmt_diag d = { 0 };
	bool all;
	int ret;

	pthread_setname_np(pthread_self(), "kmt-feed");
	kmt_lock(&a->mu);
	for (;;) {
		while (!a->kick && !a->quit)
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->quit)
			break;
		a->kick = false;
		all = a->all;
		pthread_mutex_unlock(&a->mu);
		ret = read_round(a, all, &d);
		kmt_lock(&a->mu);
		if (ret < 0) {
			a->err = ret;
			a->d = d;
		}
		a->busy = a->kick;
		pthread_mutex_unlock(&a->mu);
		/* What is left goes over too, marked the round's last: the pump learns at once. */
		if (!reader_hand(a, true) || ret < 0) {
			kmt_lock(&a->mu);
			break;
		}
		kmt_lock(&a->mu);
	}
	a->busy = false;
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/*
 * The batches routed that every shard has taken: their lists back to the
 * caller, their room to the reader. @wait: for the shards, on the oldest.
 */
static void give_back(struct kmt_analyse_live *a, bool wait)
{
	struct job *j = a->j;
	uint64_t n;

	while (a->released < a->routed &&
	       kmt_handoff_next_by(j->h, a->rel, &n, wait ? 0 : KMT_HANDOFF_NOW) > 0) {
		if (a->held[n & (j->nb - 1)]) {
			a->o.release(a->o.arg, a->held[n & (j->nb - 1)]);
			a->held[n & (j->nb - 1)] = NULL;
		}
		kmt_handoff_took(j->h, a->rel);
		a->released++;
	}
}

/* The pump with the reader: kick it, feed the batches it hands over. */
static int pump_batches(struct kmt_analyse_live *a, bool all, bool *pending, struct kmt_diag *d)
{
	struct job *j = a->j;
	bool through = false;
	uint64_t n;
	int got, ret;

	kmt_lock(&a->mu);
	a->kick = a->busy = true;
	a->all |= all;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
	for (;;) {
		got = kmt_handoff_next_by(j->h, 0, &n, KMT_HANDOFF_NOW);
		if (got < 0) {
			/* Nothing to route: the pages of what was routed back, once the shards have it. */
			give_back(a, true);
			got = kmt_handoff_next_by(j->h, 0, &n, kmt_now_ns() + WAIT_NS);
		}
		if (!got)
			return out_of_memory(d);	/* the ring stopped: a shard ran out of memory */
		if (got > 0) {
			bool last = a->last[n & (j->nb - 1)];

			if (feed_batch(a, &j->b[n & (j->nb - 1)])) {
				kmt_handoff_stop(j->h);
				return out_of_memory(d);
			}
			a->routed++;
			kmt_handoff_took(j->h, 0);
			give_back(a, false);
			if (last) {
				kmt_lock(&a->mu);
				through = !a->busy && a->routed == kmt_handoff_given(j->h);
				pthread_mutex_unlock(&a->mu);
				if (through)
					break;
			}
		}
		if (!all && a->o.over(a->o.arg))
			break;
	}
	if (through)
		give_back(a, true);
	kmt_lock(&a->mu);
	*pending = !through;
	ret = through ? a->err : 0;
	if (ret)
		*d = a->d;
	pthread_mutex_unlock(&a->mu);
	return ret;
}

int kmt_analyse_live_pump(struct kmt_analyse_live *a, bool all, bool *pending, struct kmt_diag *d)
{
	int ret;

	*pending = false;
	ret = a->running ? pump_batches(a, all, pending, d) : pump_here(a, all, pending, d);
	if (!ret && kmt_model_sync(a->j->m))
		ret = out_of_memory(d);
	return ret;
}

int kmt_analyse_live_sync(struct kmt_analyse_live *a)
{
	/* Every batch routed taken by every shard: their tables are still. */
	if (a->running)
		give_back(a, true);
	return shards_sum(a->j);
}

void **kmt_analyse_live_hold(struct kmt_analyse_live *a)
{
	return &a->held[a->running ? a->j->prod & (a->j->nb - 1) : 0];
}

uint64_t kmt_analyse_live_events(const struct kmt_analyse_live *a)
{
	return a->j->fed;
}

unsigned int kmt_analyse_live_shards(const struct kmt_analyse_live *a)
{
	return a->j->nms;
}

double kmt_analyse_live_reader_seconds(const struct kmt_analyse_live *a)
{
	struct timespec ts;
	clockid_t cid;

	if (!a->running || pthread_getcpuclockid(a->th, &cid) || clock_gettime(cid, &ts))
		return -1;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- set up and tear down ---- */

/* With the reader: the model in shards, the ring (shards, then the pages back), the threads. */
static int start_threads(struct kmt_analyse_live *a, struct kmt_diag *d)
{
	struct job *j = a->j;
	int ret;

	j->threaded = true;
	j->nms = shards_make(j, a->o.shards ? a->o.shards : kmt_model_shards_for(a->o.jobs));
	/* A live stream comes in small rounds: no side waits for more than one batch. */
	j->low = 1;
	if (!ring_start(j, 1, 1, true))
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	a->rel = j->nms;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	/* It inherits this thread's blocked signals. */
	if ((ret = pthread_create(&a->th, NULL, reader_main, a)))
		return kmt_diag_set(d, -ret, "cannot start the feed thread: %s", strerror(ret));
	a->running = true;
	shards_start(j);
	return j->mret ? kmt_diag_set(d, -ENOMEM, "cannot start the model's shards") : 0;
}

struct kmt_analyse_live *kmt_analyse_live_new(struct kmt_stream *s, const struct kmt_decoder *dec,
					      struct kmt_model *m, const struct kmt_analyse_live_opts *o,
					      struct kmt_diag *d)
{
	struct kmt_analyse_live *a = calloc(1, sizeof(*a));
	unsigned int i;

	if (!a) {
		kmt_diag_set(d, -ENOMEM, "out of memory");
		return NULL;
	}
	a->s = s;
	a->o = *o;
	a->ao = (struct kmt_analyse_opts){ .t_start = -1, .t_end = -1, .marker = o->marker, .arg = o->arg };
	if (!(a->j = job_alloc(dec, m, &a->ao))) {
		kmt_diag_set(d, -ENOMEM, "out of memory");
		goto fail;
	}
	a->j->nb = NB_SHARDED;
	for (i = 0; i < a->j->nb; i++)
		if (!arena_grow(&a->j->b[i].ar, SKIPS * SKIP_BYTES, 0)) {
			kmt_diag_set(d, -ENOMEM, "out of memory");
			goto fail;
		}
	if (o->jobs >= 2 && start_threads(a, d))
		goto fail;
	return a;
fail:
	kmt_analyse_live_free(a);
	return NULL;
}

void kmt_analyse_live_free(struct kmt_analyse_live *a)
{
	struct job *j;

	if (!a)
		return;
	j = a->j;
	if (j && j->h) {
		/* Every wait ends: the reader's for room, the shards' for batches. */
		kmt_handoff_stop(j->h);
		if (a->running) {
			kmt_lock(&a->mu);
			__atomic_store_n(&a->quit, true, __ATOMIC_RELAXED);
			pthread_cond_signal(&a->cv);
			pthread_mutex_unlock(&a->mu);
			pthread_join(a->th, NULL);
			pthread_cond_destroy(&a->cv);
			pthread_mutex_destroy(&a->mu);
		}
		shards_join(j);
	}
	if (j) {
		shards_free(j);
		job_free(j);
	}
	free(a);
}
