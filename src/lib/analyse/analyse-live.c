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
 * a reader thread takes pages, merges and decodes, kicked by each pump,
 * and hands batches over to the pump's thread (kmt_handoff, RING of them),
 * which feeds the model: taker 0 routes a batch into the model, taker 1
 * hands its pages back once every shard has taken it. The model sees the
 * same events in the same order either way. A reader's round ends with a
 * batch marked last (empty if need be), so that the pump learns at once
 * that the reader is through.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyse-local.h"
#include "shards.h"

#define RING 8			/* batches between the reader and the pump */
#define OVER_EVERY 256		/* items between two looks at over(): some 30 us */
#define WAIT_NS 5000000ULL	/* the pump looks at over() this often while it waits */
#define SKIPS 16		/* parts passed over a batch has room for */
#define SKIP_BYTES (sizeof(struct kmt_skip) + 8)

struct kmt_analyse_live {
	struct kmt_stream *s;
	const struct kmt_decoder *dec;
	struct kmt_model *m;
	struct kmt_model_shards *shards;	/* or NULL: one model */
	struct kmt_analyse_live_opts o;
	uint64_t events;		/* into the model */
	struct batch *b;		/* nb batches: RING, or one with one job */
	unsigned int nb;
	void *held[RING];		/* the caller's list that goes with each */
	bool last[RING];		/* the reader's round ended with it */
	uint64_t posted[RING];		/* with shards: kmt_model_shards_posted() once routed */
	/* the reader thread (2 jobs and more) */
	struct kmt_handoff *h;		/* takers: 0 the model, 1 the pages back */
	uint64_t fill;			/* the reader's batch being filled */
	uint64_t routed;		/* batches into the model (taker 0's) */
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

static struct batch *batch_reset(struct batch *b)
{
	b->n = 0;
	b->ar.used = 0;
	return b;
}

/* Room for one more item (a part passed over in its arena too)? */
static bool batch_room(const struct batch *b)
{
	return b->n < BATCH && b->ar.used + SKIP_BYTES <= b->ar.cap;
}

/* @mk (and @skip, copied) as @b's next item, as analyse-ring.c's put_marker() puts it. */
static void put_marker(struct batch *b, const struct kmt_marker *mk, const struct kmt_skip *skip)
{
	b->ev[b->n] = (struct kmt_event){ .cpu = mk->cpu, .ts = mk->ts, .bytes_req = (uint64_t)mk->lost,
					  .bytes_alloc = mk->to };
	if (skip) {
		b->ar.used = ALIGN_UP(b->ar.used, 8);
		b->ev[b->n].str2 = arena_keep(&b->ar, skip, sizeof(*skip));
	}
	b->evp[b->n] = &b->ev[b->n];
	b->what[b->n++] = (uint8_t)(IT_MARK + mk->kind);
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
			put_marker(b, &mk, sr.skip);
			return 1;
		}
		ret = kmt_decode(a->dec, &sr.rec, sr.cpu, ev);
		if (ret < 0) {
			mk = (struct kmt_marker){ .kind = KMT_MARK_MISFIT, .cpu = sr.cpu, .lost = -1, .ts = sr.rec.ts };
			put_marker(b, &mk, NULL);
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
static int feed_batch(struct kmt_analyse_live *a, struct batch *b, bool other_core)
{
	unsigned int i = 0, k;

	/*
	 * The events' strings are still in their pages, which the reader's
	 * core read last: the cache names the model compares come from
	 * another core's cache (a quarter of this thread's time), unless
	 * asked for now. A batch's names fit in this core's cache. (With
	 * shards, the shards compare them, not this thread.)
	 */
	for (k = 0; other_core && !a->shards && k < b->n; k++)
		if (b->ev[k].name_len)
			__builtin_prefetch(b->ev[k].name);
	while (i < b->n) {
		if (b->what[i] != IT_EVENT) {
			const struct kmt_skip *skip;
			struct kmt_marker mk = batch_marker(b, i, &skip);

			kmt_model_marker(a->m, &mk);
			if (a->o.marker)
				a->o.marker(a->o.arg, &mk, skip);
			i++;
			continue;
		}
		for (k = i; k < b->n && b->what[k] == IT_EVENT; k++)
			;
		if (a->shards ? kmt_model_shards_events(a->shards, b->ev + i, k - i)
			      : kmt_model_events(a->m, b->ev + i, k - i))
			return -ENOMEM;
		a->events += k - i;
		i = k;
	}
	return 0;
}

static int out_of_memory(struct kmt_diag *d)
{
	return kmt_diag_set(d, -ENOMEM, "out of memory: the analysis stops");
}

/* One job: everything up to the safe time, in batches of OVER_EVERY items. */
static int pump_here(struct kmt_analyse_live *a, bool all, bool *pending, struct kmt_diag *d)
{
	struct batch *b = a->b;
	int ret;

	if ((ret = a->o.refill(a->o.arg, all, d)))
		return ret;
	do {
		batch_reset(b);
		while (b->n < OVER_EVERY && batch_room(b) && (ret = next_item(a, b, d)) > 0)
			;
		if (feed_batch(a, b, false))
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

/* The batch being filled goes over (@last: the round's); false if told to quit. */
static bool reader_hand(struct kmt_analyse_live *a, bool last)
{
	a->last[a->fill % RING] = last;
	kmt_handoff_give(a->h);
	a->fill = kmt_handoff_room(a->h);
	batch_reset(&a->b[a->fill % RING]);
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
		b = &a->b[a->fill % RING];
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
	uint64_t n;

	while (kmt_handoff_next_by(a->h, 1, &n, KMT_HANDOFF_NOW) > 0 && n < a->routed) {
		if (a->shards && !kmt_model_shards_taken(a->shards, a->posted[n % RING], wait))
			break;
		if (a->held[n % RING]) {
			a->o.release(a->o.arg, a->held[n % RING]);
			a->held[n % RING] = NULL;
		}
		kmt_handoff_took(a->h, 1);
	}
}

/* The pump with the reader: kick it, feed the batches it hands over. */
static int pump_batches(struct kmt_analyse_live *a, bool all, bool *pending, struct kmt_diag *d)
{
	bool through = false;
	uint64_t n;
	int got, ret;

	kmt_lock(&a->mu);
	a->kick = a->busy = true;
	a->all |= all;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
	for (;;) {
		got = kmt_handoff_next_by(a->h, 0, &n, KMT_HANDOFF_NOW);
		if (got < 0) {
			/* Nothing to route: the pages of what was routed back, once the shards have it. */
			give_back(a, true);
			got = kmt_handoff_next_by(a->h, 0, &n, kmt_now_ns() + WAIT_NS);
		}
		if (got > 0) {
			struct batch *b = &a->b[n % RING];
			bool last = a->last[n % RING];

			if (feed_batch(a, b, true))
				return out_of_memory(d);
			a->posted[n % RING] = a->shards ? kmt_model_shards_posted(a->shards) : 0;
			a->routed++;
			kmt_handoff_took(a->h, 0);
			give_back(a, false);
			if (last) {
				kmt_lock(&a->mu);
				through = !a->busy && a->routed == kmt_handoff_given(a->h);
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
	ret = a->h ? pump_batches(a, all, pending, d) : pump_here(a, all, pending, d);
	if (!ret && kmt_model_sync(a->m))
		ret = out_of_memory(d);
	return ret;
}

int kmt_analyse_live_sync(struct kmt_analyse_live *a)
{
	return a->shards ? kmt_model_shards_sync(a->shards) : kmt_model_sync(a->m);
}

void **kmt_analyse_live_hold(struct kmt_analyse_live *a)
{
	return &a->held[a->h ? a->fill % RING : 0];
}

uint64_t kmt_analyse_live_events(const struct kmt_analyse_live *a)
{
	return a->events;
}

unsigned int kmt_analyse_live_shards(const struct kmt_analyse_live *a)
{
	return a->shards ? kmt_model_shards_n(a->shards) : 1;
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

struct kmt_analyse_live *kmt_analyse_live_new(struct kmt_stream *s, const struct kmt_decoder *dec,
					      struct kmt_model *m, const struct kmt_analyse_live_opts *o,
					      struct kmt_diag *d)
{
	struct kmt_analyse_live *a = calloc(1, sizeof(*a));
	unsigned int nb = o->jobs >= 2 ? RING : 1, i;
	int ret;

	if (!a || !(a->b = calloc(nb, sizeof(*a->b))))
		goto oom;
	*a = (struct kmt_analyse_live){ .s = s, .dec = dec, .m = m, .o = *o, .b = a->b, .nb = nb };
	for (i = 0; i < nb; i++)
		if (!arena_grow(&a->b[i].ar, SKIPS * SKIP_BYTES, 0))
			goto oom;
	if (nb == 1)
		return a;
	/* Only with the reader: its batches keep the events until every shard has taken them. */
	a->shards = kmt_model_shards_new(m, o->shards ? o->shards : kmt_model_shards_for(o->jobs));
	if (!(a->h = kmt_handoff_new(RING, 2)))
		goto oom;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	/* It inherits this thread's blocked signals. */
	if ((ret = pthread_create(&a->th, NULL, reader_main, a))) {
		kmt_diag_set(d, -ret, "cannot start the feed thread: %s", strerror(ret));
		kmt_analyse_live_free(a);
		return NULL;
	}
	a->running = true;
	return a;
oom:
	kmt_diag_set(d, -ENOMEM, "out of memory");
	kmt_analyse_live_free(a);
	return NULL;
}

void kmt_analyse_live_free(struct kmt_analyse_live *a)
{
	uint64_t n;
	unsigned int i, k;

	if (!a)
		return;
	if (a->running) {
		kmt_lock(&a->mu);
		__atomic_store_n(&a->quit, true, __ATOMIC_RELAXED);
		pthread_cond_signal(&a->cv);
		pthread_mutex_unlock(&a->mu);
		/*
		 * The shards done with what was routed; then every batch is
		 * taken back (not fed), so that the reader, if it waits for
		 * room, gets it and sees it must quit.
		 */
		if (a->shards)
			kmt_model_shards_taken(a->shards, kmt_model_shards_posted(a->shards), true);
		for (;;) {
			for (k = 0; k < 2; k++)
				while (kmt_handoff_next_by(a->h, k, &n, KMT_HANDOFF_NOW) > 0)
					kmt_handoff_took(a->h, k);
			if (!pthread_tryjoin_np(a->th, NULL))
				break;
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		}
	}
	if (a->h) {
		pthread_cond_destroy(&a->cv);
		pthread_mutex_destroy(&a->mu);
	}
	kmt_handoff_free(a->h);
	kmt_model_shards_free(a->shards);
	for (i = 0; a->b && i < a->nb; i++)
		free(a->b[i].ar.p);
	free(a->b);
	free(a);
}
