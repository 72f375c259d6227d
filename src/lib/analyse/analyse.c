/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stream -> decoder -> model (include/kmemtrace/analyse.h).
 *
 * Two stages, on threads where the file inflates on threads too:
 *
 *   producer: kmt_stream_next -> kmt_decode -> batch (events, their strings
 *             and stacks copied into the batch's arena, loss markers)
 *   consumer: batch -> kmt_model_events (no copies) -> o->each
 *
 * With -j 4 and more the model is in shards (model-merge.c), a consumer
 * each (analyse-stages.c), and on a file of two CPUs and more the stream
 * is read and decoded in parts, a thread each, that the producer merges
 * (analyse-parts.c): parts -> producer -> shard 0 -> the other shards.
 * Batches go round a ring of NB; the model, the slow
 * stage, never waits for the producer unless the producer is slower; a side
 * that has to wait sleeps until the ring is half full (or half empty)
 * again, so a wake-up costs once per NB / 2 batches, not once per batch.
 * On one thread the producer hands each full batch straight to the
 * consumer. This file is the producer and the whole; analyse-ring.c the
 * producer's side of the ring, analyse-parts.c the parts, analyse-stages.c
 * the stages after them.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "analyse-local.h"
#include "tracefile/observe.h"	/* kmt_stream_undecoded() */

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
	mo->page_size = kmt_file_info(f)->page_size;
	mo->unnamed_cache_allocs = kmt_decode_unnamed_cache_allocs(kmt_file_formats(f));
	mo->batched_frees_alone = kmt_formats_find(kmt_file_formats(f), "kmem", "mm_page_free_batched") &&
				  !kmt_formats_find(kmt_file_formats(f), "kmem", "mm_page_free");
}

#define STATS_EVERY 1021	/* --stats: one record in this many is timed */

/* One record of the stream, decoded and cut to the window, into a batch. */
static int take(struct job *j, struct kmt_stream *s, const struct kmt_srec *sr)
{
	enum item what;
	struct kmt_event *ev;
	struct batch *b;
	int ret;

	if (sr->skip || sr->lost_marker)
		return take_marker(j, sr);
	if ((ret = take_record(j, sr->rec.ts)) != T_GO)
		return ret;
	/* Decoded in place, into the batch's next slot: no copy of the event. */
	b = filling(j);
	if (b->n == BATCH && !hand(j))
		return T_FAIL;
	b = filling(j);
	ev = &b->ev[b->n];
	ret = kmt_decode(j->dec, &sr->rec, sr->cpu, ev);
	if (ret < 0) {
		j->ret = analyse_misfit(j, &j->d, ret, s, sr);
		return T_STOP;
	}
	if (!ret)
		kmt_stream_undecoded(s, sr);
	what = decoded_as(ret, sr->rec.ts < j->lo, ev->kind);
	if (what == IT_SKIP)
		return T_GO;
	if (b->ar.used + ev_bytes(ev) > b->ar.cap) {
		/* No room for its strings: by way of a copy, into the next batch. */
		struct kmt_event tmp = *ev;

		return put_event(j, &tmp, what) ? T_GO : T_FAIL;
	}
	arena_keep_event(&b->ar, ev);
	b->evp[b->n] = ev;
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
	uint64_t c0 = j->stats ? kmt_thread_cpu_ns() : 0, ovh = 0, per_call = 0, c[3] = { 0 }, x[3] = { 0 };
	struct kmt_stream *s;
	struct kmt_srec sr;
	int ret, t = T_GO;
	bool smp;

	if (j->nparts) {
		produce_parts(j);
		return;
	}
	if (j->stats)
		ovh = clock_cost(&per_call);
	s = analyse_stream(j, 0, 1, &j->d);
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

	pthread_setname_np(pthread_self(), "kmt-producer");
	kmt_wait_count(j->stats);
	produce(j);
	if (j->stats) {
		j->prod_ns -= MIN(j->prod_ns, kmt_waited_ns());
		__atomic_fetch_add(&j->wait_ns, kmt_waited_ns(), __ATOMIC_RELAXED);
	}
	kmt_handoff_end(j->h);
	return NULL;
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
	st->write_ns = j->write_ns;
	st->wait_ns = j->wait_ns + kmt_file_wait_ns(j->f) - j->pool_waited;
	st->inflate_threads = kmt_file_inflate_threads(j->f);
	st->model_thread = j->threaded;
	st->model_shards = (int)j->nms;
	/* The producer's thread, less what it did for the other stages. */
	own -= MIN(own, inline_inflate + (j->threaded ? 0 : j->model_ns));
	st->merge_ns = smp ? (uint64_t)((double)own * (double)j->smp_merge / (double)smp) : own / 2;
	st->decode_ns = own - st->merge_ns;
	st->decode_parts = (int)j->nparts;
	if (j->nparts) {
		/* The producer merges the parts; they read, inflate what no thread did, and decode. */
		st->merge_ns = j->prod_ns;
		st->decode_ns = j->parts_ns - MIN(j->parts_ns, inline_inflate);
	}
}

void kmt_analyse_result_release(struct kmt_analyse_result *res)
{
	free(res->skipped);
	res->skipped = NULL;
	res->nr_skipped = 0;
}

/*
 * The job: the model's shards, the ring's size, the stream in parts or
 * not; NULL on ENOMEM.
 */
static void job_unthread(struct job *j);

struct job *job_alloc(const struct kmt_decoder *dec, struct kmt_model *m, const struct kmt_analyse_opts *o)
{
	struct job *j = line_alloc(sizeof(*j));
	int i;

	if (!j)
		return NULL;
	*j = (struct job){ .dec = dec, .m = m, .o = o, .hi = UINT64_MAX, .stats = o && o->stats, .nms = 1 };
	j->ms[0] = m;
	pthread_mutex_init(&j->mu, NULL);
	for (i = 0; i < CV_NR; i++)
		pthread_cond_init(&j->cv[i], NULL);
	return j;
}

static struct job *job_new(struct kmt_file *f, int buffer, const struct kmt_decoder *dec,
			   struct kmt_model *m, const struct kmt_analyse_opts *o)
{
	struct job *j = job_alloc(dec, m, o);
	unsigned int k;

	if (!j)
		return NULL;
	j->f = f;
	j->buffer = buffer;
	/* A second stage with threads (-j 2 and more). Set before the thread starts: the producer reads it. */
	j->threaded = kmt_file_threads(f) > 1;
	j->nms = make_shards(j);
	j->nb = j->nms > 1 ? NB_SHARDED : NB;
	j->low = j->nms > 1 ? LOW_SHARDED : LOW_ONE;
	if (j->threaded && !ring_start(j, j->nb - j->low, LOW_CHAIN, false))
		job_unthread(j);
	/*
	 * The one model on a thread of its own: it and the producer take two
	 * of the -j threads, the rest inflate; at -j 2 the producer inflates
	 * too (two busy threads, about 43 and 40 ns per event on hackbench:
	 * 0.30 s against 0.34 with two inflating threads besides, 2 cores).
	 */
	if (j->threaded && j->nms == 1)
		kmt_file_set_inflaters(f, kmt_file_threads(f) - 2);
	/*
	 * With shards, reading and decoding in parts. A part reads on past a
	 * record another part then finds broken, and a page observer (check)
	 * sees those pages too (each CPU's on its part's thread); but the
	 * analysis then fails, and check reads every CPU again on its own,
	 * its observed findings dropped.
	 */
	j->nparts = parts_wanted(j);
	j->seq_in_parts = j->nparts && !m->filtering && !m->o.stack_slices && !(o && o->t_start > 0);
	for (k = 0; k < j->nms; k++)
		j->ms[k]->seq_given = j->seq_in_parts;
	return j;
}

/* No thread for the producer after all: the one model, on this thread. */
static void job_unthread(struct job *j)
{
	j->threaded = false;
	j->nparts = 0;
	j->seq_in_parts = j->m->seq_given = false;
	sink_end(j);
	sink_fold(j);
	shards_free(j);
}

/*
 * The stages: the producer on a thread, shard 0 on this one, the other
 * shards on threads of their own; or all on this one.
 */
static void job_run(struct job *j)
{
	pthread_t th;

	if (j->threaded && pthread_create(&th, NULL, produce_main, j))
		job_unthread(j);
	if (!j->threaded) {
		produce(j);
		return;
	}
	shards_start(j);
	if (!j->mret)
		consume_all(j, 0);
	/* Done, or stopped: the others see it. */
	shards_join(j);
	kmt_lock(&j->mu);
	j->stop = true;		/* the merge may wait for a part */
	wake(j, CV_ALL);
	pthread_mutex_unlock(&j->mu);
	kmt_handoff_stop(j->h);	/* the producer may wait for room */
	pthread_join(th, NULL);
}

/* The shards folded into the model, the clones into the consumer. */
static void job_merge(struct job *j)
{
	unsigned int k;

	/* The shards' last writings out, before the live objects (kmt_model_finish()). */
	sink_end(j);
	if (j->nms > 1) {
		if (!j->mret && kmt_model_merge(j->ms, j->nms))
			j->mret = -ENOMEM;
		for (k = 1; k < j->nms; k++)
			kmt_model_free(j->ms[k]);
	}
	/* The consumer's clones, with the stack ids of the merged model. */
	sink_fold(j);
}

/* What the job ends with: 0, or an error in @d. */
static int job_result(struct job *j, struct kmt_analyse_result *res, struct kmt_diag *d)
{
	const char *path = kmt_file_info(j->f)->path;
	const struct kmt_analyse_opts *o = j->o;
	int ret = j->ret, i;

	*res = j->res;
	if (j->mret)
		ret = kmt_diag_set(d, -ENOMEM, "%s: out of memory in the allocation model after %" PRIu64
				   " events; the results would be incomplete", path, j->fed);
	else if (ret < 0)
		*d = j->d;
	else if (j->started && j->lo > j->seen && !j->past_hi)
		ret = kmt_diag_set(d, -ERANGE, "%s: the window starts at %.6f s, but the trace ends at %.6f s",
				   path, (double)(j->lo - res->t0) / 1e9, (double)(j->seen - res->t0) / 1e9);
	if (!ret && (!o || (o->t_start <= 0 && o->t_end < 0))) {
		/* The whole trace: its losses are what the ring buffers counted. */
		const struct kmt_buffer *b = kmt_file_buffer(j->f, j->buffer);

		for (i = 0; b && i < b->nr_stats; i++)
			if (b->stats[i].valid) {
				kmt_model_ring_lost(j->m, b->stats[i].cpu, kmt_cpustat_lost(&b->stats[i], 0));
				kmt_model_lost_after_death(j->m, b->stats[i].after_death);
			}
	}
	if (!ret) {
		/* The window's end if the trace goes on past it, else the trace's. */
		res->t_end = j->past_hi ? j->hi : j->seen;
		if (kmt_model_finish(j->m, res->t_end))
			ret = kmt_diag_set(d, -ENOMEM, "%s: out of memory in the allocation model; the "
					   "results would be incomplete", path);
	}
	if (ret)
		kmt_analyse_result_release(res);
	return ret;
}

void job_free(struct job *j)
{
	int i;

	for (i = 0; i < NB; i++)
		free(j->b[i].ar.p);
	parts_free(j);
	kmt_handoff_free(j->h);
	if (j->f)
		kmt_file_set_threads(j->f, kmt_file_threads(j->f));	/* its readers from now on inflate as -j says */
	for (i = 0; i < CV_NR; i++)
		pthread_cond_destroy(&j->cv[i]);
	pthread_mutex_destroy(&j->mu);
	line_free(j, sizeof(*j));
}

int kmt_analyse(struct kmt_file *f, int buffer, const struct kmt_decoder *dec,
		struct kmt_model *m, const struct kmt_analyse_opts *o,
		struct kmt_analyse_result *res, struct kmt_diag *d)
{
	uint64_t inflated[2] = { kmt_file_inflate_ns(f, true), kmt_file_inflate_ns(f, false) };
	uint64_t pool_waited = kmt_file_wait_ns(f);
	struct job *j;
	int ret;

	memset(res, 0, sizeof(*res));
	if (!(j = job_new(f, buffer, dec, m, o)))
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	j->pool_waited = pool_waited;
	job_run(j);
	job_merge(j);
	if (j->stats)
		stage_stats(j, inflated);
	ret = job_result(j, res, d);
	job_free(j);
	return ret;
}
