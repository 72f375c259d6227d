/*
 * Stream -> decoder -> model (include/kmemtrace/model.h).
 *
 * Two stages, on threads where the file inflates on threads too:
 *
 *   producer: kmt_stream_next -> kmt_decode -> batch (events, their strings
 *             and stacks copied into the batch's arena, loss markers)
 *   consumer: batch -> kmt_model_events (no copies) -> o->each
 *
 * With -j N the model is in N shards (model-shard.c), a consumer each:
 * every consumer reads every batch, and a batch is free again once the
 * slowest has. Batches go round a ring of NB; the model, the slow stage,
 * never waits for the decoder unless the decoder is slower; a side that
 * has to wait sleeps until the ring is half full (or half empty) again, so
 * a wake-up costs once per NB / 2 batches, not once per batch. On one
 * thread the producer hands each full batch straight to the consumer.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <kmemtrace/model.h>
#include <kmemtrace/tracefile.h>
#include "model-local.h"

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
#define STATS_EVERY 1021	/* --stats: one record in this many is timed */
#define NB 8			/* batches in the ring */
#define MAX_SHARDS 64		/* model shards (and their threads) at most */
/* A side that waits sleeps until the ring is half full (consumer) or half empty (producer). */
#define LOW (NB / 2)
/*
 * ... but a shard after shard 0 wakes for half that: it waits for shard 0,
 * which waits for the producer, which waits for the slowest shard; with
 * less than LOW / 2 + LOW ahead of the slowest, the producer never waits
 * on a shard that is itself waiting (no deadlock).
 */
#define LOW_ROUTED (LOW / 2)

/* What an item of a batch is: an event for the model, or a marker. */
enum item { IT_EVENT, IT_LOST, IT_TRUNCATED, IT_ACCESS_LOST, IT_NAME, IT_GAP };

struct batch {
	/* markers: cpu, ts, lost in bytes_req; a gap's end in bytes_alloc */
	struct kmt_event ev[BATCH];
	uint8_t what[BATCH];
	/* sharded: where shard 0 sent each item (a shard, or ROUTE_ALL), and what it decided */
	uint8_t to[BATCH];
	struct model_route route[BATCH];
	unsigned int n;
	char *arena;			/* the events' strings and stacks */
	size_t used, cap;
};

struct job {
	struct kmt_file *f;
	int buffer;
	const struct kmt_decoder *dec;
	struct kmt_model *m;
	/* the model's shards: ms[0] is m; one consumer each */
	struct kmt_model *ms[MAX_SHARDS];
	unsigned int nms;
	const struct kmt_analyse_opts *o;
	struct kmt_analyse_result res;
	struct kmt_diag d;		/* the producer's */
	int ret;			/* the producer's: 0 or an error */
	uint64_t lo, hi, seen, last;
	bool started, past_hi;
	/* consumer */
	int mret;			/* -ENOMEM once the model failed */
	uint64_t fed;			/* events the model took */
	/* with o->stats */
	bool stats;
	uint64_t model_ns;		/* in consume(), all shards */
	uint64_t route_ns;		/* ... of it, shard 0's (which routes the others') */
	uint64_t prod_ns;		/* the producer's thread in produce() */
	uint64_t smp_merge, smp_decode;	/* sampled records: in the stream, after it */
	uint64_t nr_smp, tick;
	/* the ring */
	struct batch b[NB];
	unsigned int prod;		/* batches handed over */
	unsigned int cons[MAX_SHARDS];	/* ... taken, by each shard */
	bool threaded, done, stop;
	bool prod_waits;		/* asleep on cv */
	bool zero_done;			/* shard 0 took every batch: the others' producer */
	/*
	 * Consumers asleep on cv, and when the first of them wants waking:
	 * [0] shard 0, for the producer's batches (prod), [1] the other
	 * shards, for shard 0's (cons[0]).
	 */
	unsigned int cons_waits[2];
	uint64_t wake_at[2];
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/* The run of events from @i into shard @m: all of it, routed by shard 0, or as shard 0 routed it. */
static int consume_run(struct job *j, struct kmt_model *m, struct batch *b, unsigned int i, unsigned int k)
{
	if (j->nms == 1)
		return kmt_model_events(m, &b->ev[i], k - i);
	if (m == j->m)
		return model_route_events(m, &b->ev[i], k - i, &b->to[i], &b->route[i]);
	return model_routed_events(m, &b->ev[i], k - i, &b->to[i], &b->route[i]);
}

/* The model's side: one batch, in order, into shard @m. */
static void consume_batch(struct job *j, struct kmt_model *m, struct batch *b)
{
	unsigned int i = 0, k;

	while (i < b->n && !j->mret) {
		const struct kmt_event *ev = &b->ev[i];

		if (m != j->m && b->what[i] != IT_EVENT) {
			/* Another shard: task names only; losses are shard 0's (model-shard.c). */
			if (b->what[i] == IT_NAME)
				model_name_at(m, ev, b->route[i].pos);
			i++;
			continue;
		}
		switch (b->what[i]) {
		case IT_EVENT:
			for (k = i + 1; k < b->n && b->what[k] == IT_EVENT; k++)
				;
			if (consume_run(j, m, b, i, k)) {
				j->mret = -ENOMEM;
				return;
			}
			if (m == j->m)
				j->fed += k - i;
			for (; j->o && j->o->each && i < k; i++)
				j->o->each(j->o->arg, &b->ev[i]);
			i = k;
			continue;
		case IT_LOST:
			kmt_model_lost(m, ev->cpu, (int64_t)ev->bytes_req, ev->ts);
			break;
		case IT_TRUNCATED:
			kmt_model_truncated(m, ev->cpu, ev->ts);
			break;
		case IT_ACCESS_LOST:
			kmt_model_access_lost(m, (int64_t)ev->bytes_req);
			break;
		case IT_GAP:
			kmt_model_gap(m, ev->cpu, ev->ts, ev->bytes_alloc);
			break;
		case IT_NAME:
			b->route[i].pos = model_pos(m);
			kmt_model_name_event(m, ev);
			break;
		}
		i++;
	}
}

static void consume(struct job *j, struct kmt_model *m, struct batch *b)
{
	uint64_t c0;

	if (!j->stats) {
		consume_batch(j, m, b);
		return;
	}
	c0 = kmt_thread_cpu_ns();
	consume_batch(j, m, b);
	c0 = kmt_thread_cpu_ns() - c0;
	if (j->nms > 1)
		__atomic_fetch_add(&j->model_ns, c0, __ATOMIC_RELAXED);
	else
		j->model_ns += c0;
	if (m == j->m)
		j->route_ns += c0;
}

/* Batches taken by the slowest consumer (with the lock). */
static unsigned int cons_min(const struct job *j)
{
	unsigned int k, c = j->cons[0];

	for (k = 1; k < j->nms; k++)
		if (j->prod - j->cons[k] > j->prod - c)
			c = j->cons[k];
	return c;
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
		consume(j, j->m, b);
		go = !j->mret;
	} else {
		pthread_mutex_lock(&j->mu);
		j->prod++;
		if (j->cons_waits[0] && j->prod >= j->wake_at[0]) {
			j->wake_at[0] = UINT64_MAX;
			pthread_cond_broadcast(&j->cv);
		}
		if (j->prod - cons_min(j) >= NB) {
			/* Full: wait for room for several, not one (fewer wake-ups). */
			j->prod_waits = true;
			while (j->prod - cons_min(j) > LOW && !j->stop)
				pthread_cond_wait(&j->cv, &j->mu);
			j->prod_waits = false;
		}
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

/* What take() tells the producer's loop. */
enum { T_FAIL = -1, T_STOP, T_GO };

/* One record of the stream, decoded and cut to the window, into a batch. */
static int take(struct job *j, struct kmt_stream *s, const struct kmt_srec *sr)
{
	const struct kmt_analyse_opts *o = j->o;
	enum item what = IT_EVENT;
	struct kmt_event *ev;
	struct batch *b;
	size_t need;
	int ret;

	if (!j->started) {
		j->started = true;
		j->res.t0 = sr->rec.ts;
		if (o && o->t0)
			*o->t0 = j->res.t0;
		if (o && o->t_start > 0)
			j->lo = j->res.t0 + (uint64_t)(o->t_start * 1e9);
		if (o && o->t_end >= 0)
			j->hi = j->res.t0 + (uint64_t)(o->t_end * 1e9);
	}
	if (sr->skip)
		return put_skip(j, sr) ? T_GO : T_FAIL;
	if (sr->lost_marker && sr->buffer != j->buffer)
		return put_marker(j, IT_ACCESS_LOST, sr->cpu, sr->lost, 0) ? T_GO : T_FAIL;
	if (sr->lost_marker) {
		if (sr->truncated && sr->rec.ts <= j->hi)
			return put_marker(j, IT_TRUNCATED, sr->cpu, -1, sr->rec.ts) ? T_GO : T_FAIL;
		if (sr->rec.ts >= j->lo && sr->rec.ts <= j->hi)
			return put_marker(j, IT_LOST, sr->cpu, sr->lost, sr->rec.ts) ? T_GO : T_FAIL;
		return T_GO;
	}
	j->res.records++;
	if (sr->rec.ts > j->hi) {
		j->past_hi = true;
		return T_STOP;
	}
	j->seen = sr->rec.ts;
	/* Decoded in place, into the batch's next slot: no copy of the event. */
	b = filling(j);
	if (b->n == BATCH && !hand(j))
		return T_FAIL;
	b = filling(j);
	ev = &b->ev[b->n];
	ret = kmt_decode(j->dec, &sr->rec, sr->cpu, ev);
	if (ret < 0) {
		j->ret = kmt_diag_set(&j->d, ret, "%s: CPU %d, page at offset %" PRIu64
				      ": a record (id %u, %u bytes) does not fit its format",
				      kmt_file_info(j->f)->path, sr->cpu, kmt_stream_offset(s, sr->idx),
				      sr->rec.len >= 2 ? ld16(sr->rec.data, kmt_file_info(j->f)->big_endian) : 0,
				      sr->rec.len);
		return T_STOP;
	}
	if (ret == 0)
		return T_GO;
	if (sr->rec.ts < j->lo) {
		/* Names still matter before the window. */
		if (ev->kind < KMT_EV_FORK || ev->kind > KMT_EV_NEWTASK)
			return T_GO;
		what = IT_NAME;
	} else {
		j->last = sr->rec.ts;
	}
	need = ev->name_len + ev->str2_len + (size_t)ev->nr_stack * ev->stack_word;
	if (b->used + need > b->cap) {
		/* No room for its strings: by way of a copy, into the next batch. */
		struct kmt_event tmp = *ev;

		return put_event(j, &tmp, what) ? T_GO : T_FAIL;
	}
	ev->name = keep(b, ev->name, ev->name_len);
	ev->str2 = keep(b, ev->str2, ev->str2_len);
	ev->stack = keep(b, ev->stack, (size_t)ev->nr_stack * ev->stack_word);
	b->what[b->n++] = (uint8_t)what;
	return T_GO;
}

/*
 * The cost of reading the thread's CPU clock, as seen between two reads:
 * taken off each sampled interval.
 */
static uint64_t clock_cost(uint64_t *per_call)
{
	uint64_t best = UINT64_MAX, a, b, c0 = kmt_thread_cpu_ns();
	int i;

	for (i = 0; i < 32; i++) {
		a = kmt_thread_cpu_ns();
		b = kmt_thread_cpu_ns();
		best = MIN(best, b - a);
	}
	*per_call = (kmt_thread_cpu_ns() - c0) / 65;
	return best;
}

/* The stream, decoded and cut to the window, into batches. */
static void produce(struct job *j)
{
	int bufs[2] = { j->buffer, kmt_file_access_buffer(j->f) };
	uint64_t c0 = j->stats ? kmt_thread_cpu_ns() : 0, ovh = 0, per_call = 0, c[3] = { 0 }, x[3] = { 0 };
	struct kmt_stream *s;
	struct kmt_srec sr;
	int ret, t = T_GO;
	bool smp;

	if (j->stats)
		ovh = clock_cost(&per_call);
	s = kmt_stream_open_buffers(j->f, bufs, bufs[1] >= 0 && bufs[1] != j->buffer ? 2 : 1, &j->d);
	if (!s) {
		j->ret = j->d.err ? j->d.err : -EINVAL;
		return;
	}
	for (;;) {
		smp = j->stats && !(++j->tick % STATS_EVERY);
		if (smp) {
			/*
			 * Inflating and the model met on this thread are not the
			 * stream's (the model only without a thread of its own:
			 * then model_ns is the other thread's, not to be read).
			 */
			x[0] = kmt_file_inflate_ns(j->f, false) + (j->threaded ? 0 : j->model_ns);
			c[0] = kmt_thread_cpu_ns();
		}
		ret = kmt_stream_next(s, &sr, &j->d);
		if (ret <= 0)
			break;
		if (smp) {
			c[1] = kmt_thread_cpu_ns();
			x[1] = kmt_file_inflate_ns(j->f, false) + (j->threaded ? 0 : j->model_ns);
		}
		t = take(j, s, &sr);
		if (smp) {
			c[2] = kmt_thread_cpu_ns();
			x[2] = kmt_file_inflate_ns(j->f, false) + (j->threaded ? 0 : j->model_ns);
			c[1] -= MIN(c[1] - c[0], x[1] - x[0]);
			c[2] -= MIN(c[2] - c[1], x[2] - x[1]);
			j->smp_merge += c[1] - c[0] > ovh ? c[1] - c[0] - ovh : 0;
			j->smp_decode += c[2] - c[1] > ovh ? c[2] - c[1] - ovh : 0;
			j->nr_smp++;
		}
		if (t != T_GO)
			break;
	}
	kmt_stream_close(s);
	if (ret < 0 && !j->ret)
		j->ret = ret;
	/* What is left in hand goes too (or is dropped if the model stopped). */
	if (t != T_FAIL)
		hand(j);
	if (j->stats) {
		/* Less what the samples themselves cost. */
		j->prod_ns = kmt_thread_cpu_ns() - c0;
		j->prod_ns -= MIN(j->prod_ns, j->nr_smp * 3 * per_call + 67 * per_call);
	}
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

/*
 * Consumer @k's loop (shard @k) while the producer runs on its thread.
 * Shard 0 takes the producer's batches; the others take them after
 * shard 0, which routed their events.
 */
static void consume_all(struct job *j, unsigned int k)
{
	for (;;) {
		unsigned int *from = k ? &j->cons[0] : &j->prod, w = !!k, low = k ? LOW_ROUTED : LOW;
		bool *last = k ? &j->zero_done : &j->done;
		struct batch *b;

		pthread_mutex_lock(&j->mu);
		if (j->cons[k] == *from && !*last && !j->stop) {
			/* Empty: wait for several batches, not one. */
			j->cons_waits[w]++;
			while (*from - j->cons[k] < low && !*last && !j->stop) {
				j->wake_at[w] = MIN(j->wake_at[w], (uint64_t)j->cons[k] + low);
				pthread_cond_wait(&j->cv, &j->mu);
			}
			j->cons_waits[w]--;
		}
		if (j->cons[k] == *from || j->stop) {
			if (!k)
				j->zero_done = true;
			if (!k && j->cons_waits[1])
				pthread_cond_broadcast(&j->cv);
			pthread_mutex_unlock(&j->mu);
			return;
		}
		b = &j->b[j->cons[k] % NB];
		pthread_mutex_unlock(&j->mu);
		consume(j, j->ms[k], b);
		pthread_mutex_lock(&j->mu);
		j->cons[k]++;
		if (j->mret)
			j->stop = true;
		if (j->stop || (j->prod_waits && j->prod - cons_min(j) <= LOW) ||
		    (!k && j->cons_waits[1] && j->cons[0] >= j->wake_at[1])) {
			if (!k)
				j->wake_at[1] = UINT64_MAX;
			pthread_cond_broadcast(&j->cv);
		}
		pthread_mutex_unlock(&j->mu);
		if (j->mret)
			return;
	}
}

struct shard_arg {
	struct job *j;
	unsigned int k;
};

static void *consume_main(void *arg)
{
	struct shard_arg *a = arg;

	consume_all(a->j, a->k);
	return NULL;
}

/*
 * The model's shards where it can be sharded: with -j 4 and more, one
 * for each thread of -j less the producer's and shard 0's routing share
 * (at most MAX_SHARDS); with fewer the model alone on a thread is faster
 * (bench/RESULTS.md). $KMT_MODEL_SHARDS says how many, for tests and
 * benchmarks.
 */
static unsigned int make_shards(struct job *j)
{
	int jobs = kmt_file_threads(j->f);
	unsigned int n = jobs >= 4 ? (unsigned int)MIN(jobs - 2, MAX_SHARDS) : 1, k;
	const char *env = getenv("KMT_MODEL_SHARDS");

	if (env && *env)
		n = (unsigned int)MIN(MAX(atoi(env), 1), MAX_SHARDS);
	j->ms[0] = j->m;
	if (n < 2 || !j->threaded || (j->o && j->o->each) || kmt_file_access_buffer(j->f) >= 0 ||
	    !kmt_model_shardable(j->m))
		return 1;
	for (k = 1; k < n; k++)
		if (!(j->ms[k] = kmt_model_shard(j->m, k, n)))
			break;
	if (k < n) {
		while (--k)
			kmt_model_free(j->ms[k]);
		return 1;
	}
	kmt_model_shard(j->m, 0, n);
	return n;
}

/* The stages' CPU time from what was timed; @inflated: the file's counts before. */
static void stage_stats(struct job *j, const uint64_t inflated[2])
{
	struct kmt_analyse_stats *st = &j->res.stats;
	uint64_t inline_inflate = kmt_file_inflate_ns(j->f, false) - inflated[1];
	uint64_t own = j->prod_ns, smp = j->smp_merge + j->smp_decode;

	st->inflate_ns = kmt_file_inflate_ns(j->f, true) - inflated[0] + inline_inflate;
	st->model_ns = j->model_ns;
	st->route_ns = j->nms > 1 ? j->route_ns : 0;
	st->inflate_threads = kmt_file_inflate_threads(j->f);
	st->model_thread = j->threaded;
	st->model_shards = (int)j->nms;
	/* The producer's thread, less what it did for the other stages. */
	own -= MIN(own, inline_inflate + (j->threaded ? 0 : j->model_ns));
	st->merge_ns = smp ? (uint64_t)((double)own * (double)j->smp_merge / (double)smp) : own / 2;
	st->decode_ns = own - st->merge_ns;
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
	struct shard_arg sa[MAX_SHARDS];
	pthread_t th, sth[MAX_SHARDS];
	uint64_t inflated[2];
	unsigned int k, started = 1;
	int ret, i;

	memset(res, 0, sizeof(*res));
	if (!j)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	*j = (struct job){ .f = f, .buffer = buffer, .dec = dec, .m = m, .o = o, .hi = UINT64_MAX,
			   .stats = o && o->stats,
			   .wake_at = { UINT64_MAX, UINT64_MAX } };
	inflated[0] = kmt_file_inflate_ns(f, true);
	inflated[1] = kmt_file_inflate_ns(f, false);
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	/* A second stage with threads (-j 2 and more). Set before the thread starts: the producer reads it. */
	j->threaded = kmt_file_threads(f) > 1;
	j->nms = make_shards(j);
	if (j->threaded && pthread_create(&th, NULL, produce_main, j)) {
		j->threaded = false;
		for (k = 1; k < j->nms; k++)
			kmt_model_free(j->ms[k]);
		j->nms = 1;
		kmt_model_shard(m, 0, 1);
	}
	if (j->threaded) {
		/* Shards 1.. on threads of their own, shard 0 on this one. */
		for (k = 1; k < j->nms && !j->mret; k++, started++) {
			sa[k] = (struct shard_arg){ j, k };
			if (pthread_create(&sth[k], NULL, consume_main, &sa[k])) {
				pthread_mutex_lock(&j->mu);
				j->mret = -ENOMEM;
				j->stop = true;
				pthread_mutex_unlock(&j->mu);
			}
		}
		if (!j->mret)
			consume_all(j, 0);
		/* Done, or stopped: the others see it. */
		for (k = 1; k < started; k++)
			pthread_join(sth[k], NULL);
		pthread_mutex_lock(&j->mu);
		j->stop = true;		/* the producer may wait for room */
		pthread_cond_broadcast(&j->cv);
		pthread_mutex_unlock(&j->mu);
		pthread_join(th, NULL);
	} else {
		produce(j);
	}
	if (j->nms > 1) {
		if (!j->mret && kmt_model_merge(j->ms, j->nms))
			j->mret = -ENOMEM;
		for (k = 1; k < j->nms; k++)
			kmt_model_free(j->ms[k]);
	}
	if (j->stats)
		stage_stats(j, inflated);
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
