/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace top, the feed: pages the live readers handed over -> events ->
 * the model, in time order across CPUs (src/top/top.h). The pages are a
 * page source of the file path's stream (include/kmemtrace/tracefile.h),
 * which merges them, says where a CPU lost events and passes over a page
 * that cannot be read, as for a file.
 *
 * A CPU's events come in order; across CPUs they must be merged. An event
 * may only be fed once no CPU can still hand over an older one: each
 * reader says when it last found its buffer empty, so everything older
 * than that on that CPU is in hand, and so is everything older than the
 * first event of the newest page taken (a busy CPU's buffer is seldom
 * empty); the earliest of those times over the CPUs, less a margin for
 * events being written as the buffer was read, is safe. (The
 * instance uses the "mono" trace clock, CLOCK_MONOTONIC, to compare.)
 *
 * With -j 2 and more, taking the pages, merging and decoding run on a
 * thread of their own (the feed thread), and top's thread only feeds the
 * model: the events go over in batches, decoded in place and pointing
 * into their pages, which go back to the readers once the batch that
 * holds their last event is fed. Each pump kicks the feed thread, which
 * then takes what the readers have and decodes up to the safe time. The
 * model sees the same events in the same order as with -j 1.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/event.h>
#include <kmemtrace/base.h>
#include <kmemtrace/tracefs.h>

#include "util/util.h"
#include "top.h"

#define MARGIN_NS 2000000ULL		/* events still being written when a buffer read empty */
#define BATCH 1024			/* events and markers in a batch */
#define RING 8				/* batches between the feed thread and top's */
#define WAIT_NS 5000000L		/* top's thread looks at the clock and the ticker this often */

/* What an item of the stream is to the model: an event, a marker, a record that does not fit its format. */
enum item { IT_NONE, IT_EVENT, IT_MARKER, IT_MISFIT };

struct batch {
	struct kmt_event ev[BATCH];	/* IT_MISFIT: its cpu and ts */
	struct kmt_marker mk[BATCH];	/* IT_MARKER: what it is (kmt_marker_of()) */
	uint8_t what[BATCH];
	unsigned int n;
	struct kmt_live_page *held;	/* read to the end as it filled: back once it is fed */
	uint64_t nheld;
	uint64_t ticket;		/* with shards: fed once they have taken this (kmt_model_shards_taken()) */
};

struct feed {
	struct top *t;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* both ways: a batch, room, a kick */
	struct batch b[RING];
	unsigned int prod, routed, cons;	/* batches handed over; into the model (shard 0); fed */
	bool kick, all, quit;
	bool busy;			/* kicked, not yet through what it could take */
	int err;			/* the feed thread's error: it has stopped */
	char msg[512];
	uint64_t held;			/* pages held by batches, not yet back */
};

/* The page source: CPU @i's queue; the page before is given back first. */
static void page_done(struct top *t, struct feed_cpu *c);

static int live_next(void *arg, int i, struct kmt_page *pg, struct kmt_diag *d)
{
	struct top *t = arg;
	struct feed_cpu *c = &t->cpu[i];
	int ret;

	if (c->reading)
		page_done(t, c);
	if (!c->head)
		return t->draining ? 0 : -EAGAIN;
	c->reading = true;
	ret = kmt_page_load(pg, c->head->data, t->psize, &t->layout, false, d);
	if (ret) {
		c->skip = (struct kmt_skip){ .cpu = t->rc.cpus[i], .pages = 1, .err = ret };
		snprintf(c->skip.why, sizeof(c->skip.why), "a live page: %.160s", d->msg);
	}
	return ret ? ret : 1;
}

static const struct kmt_skip *live_skipped(void *arg, int i)
{
	return &((struct top *)arg)->cpu[i].skip;
}

static const char *live_where(void *arg, int i)
{
	return "a live page";
}

static uint64_t live_zero(void *arg, int i)
{
	return 0;
}

static void *feed_main(void *arg);

/* -j 2 and more: the feed thread, started. */
static int feed_start(struct top *t, struct kmt_diag *d)
{
	struct feed *f = calloc(1, sizeof(*f));
	int ret;

	if (!f)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	f->t = t;
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	/* Before it starts: its page_done() holds pages when there is one. */
	t->feed = f;
	/* It inherits this thread's blocked signals: they stay the recording's signalfd's. */
	ret = pthread_create(&f->th, NULL, feed_main, f);
	if (ret) {
		t->feed = NULL;
		pthread_cond_destroy(&f->cv);
		pthread_mutex_destroy(&f->mu);
		free(f);
		return kmt_diag_set(d, -ret, "cannot start the feed thread: %s", strerror(ret));
	}
	return 0;
}

static void feed_stop(struct top *t)
{
	struct feed *f = t->feed;

	if (!f)
		return;
	pthread_mutex_lock(&f->mu);
	f->quit = true;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	pthread_join(f->th, NULL);
	/* Pages still held are the live capture's, freed with it. */
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
	free(f);
	t->feed = NULL;
}

int feed_init(struct top *t, struct kmt_diag *d)
{
	struct recording *rc = &t->rc;
	struct kmt_comms *comms;
	struct kmt_model_opts mo = { .comm = t->comm };
	char ev[160];
	unsigned int n;
	int i, ret;

	/* Merged slab caches, named as report names them (none if sysfs does not say). */
	t->aliases = kmt_slab_aliases_read();
	mo.slab_aliases = t->aliases;
	kmt_formats_init(&t->formats);
	for (i = 0; i < rc->events.n; i++) {
		ret = kmt_tracefs_add_format(rc->root, rc->events.v[i], &t->formats, d);
		if (ret)
			return ret;
	}
	/* The stack trigger's records are ftrace's own kernel_stack events. */
	snprintf(ev, sizeof(ev), "ftrace:kernel_stack");
	if (rc->o.stack && (ret = kmt_tracefs_add_format(rc->root, ev, &t->formats, d)))
		return ret;
	mo.page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	mo.unnamed_cache_allocs = kmt_decode_unnamed_cache_allocs(&t->formats);
	mo.batched_frees_alone = kmt_formats_find(&t->formats, "kmem", "mm_page_free_batched") &&
				 !kmt_formats_find(&t->formats, "kmem", "mm_page_free");
	ret = kmt_tracefs_page_layout(rc->root, &t->layout, d);
	if (ret)
		return ret;
	t->dec = kmt_decoder_new(&t->formats, false, (int)sizeof(long));
	t->syms = kmt_symbols_load_kernel();
	comms = kmt_comms_new();
	if (!t->dec || !t->syms || !comms) {
		kmt_comms_free(comms);
		return kmt_diag_set(d, -ENOMEM, "cannot set up the analysis: %s", strerror(errno));
	}
	kmt_comms_from_proc(comms);
	mo.cmdlines = comms;
	mo.syms = t->syms;
	t->m = kmt_model_new(&mo);
	if (!t->m) {
		kmt_comms_free(comms);
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	}
	t->comms = comms;
	t->ncpu = rc->nr_cpus;
	t->cpu = calloc((size_t)t->ncpu + 1, sizeof(*t->cpu));
	if (!t->cpu)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	for (i = 0; i < t->ncpu; i++) {
		t->cpu[i].spool_fd = -1;
		if (rc->spool) {
			t->cpu[i].spool_fd = kmt_spool_cpu_create(rc->spool, KMT_SPOOL_MAIN, rc->cpus[i], d);
			if (t->cpu[i].spool_fd < 0)
				return t->cpu[i].spool_fd;
		}
	}
	{
		struct kmt_page_source src = { live_next, live_skipped, live_where, live_zero, live_zero, t };

		t->stream = kmt_stream_open_source(&src, rc->cpus, t->ncpu, d);
		if (!t->stream)
			return d->err ? d->err : -ENOMEM;
	}
	if (t->jobs < 2)
		return 0;
	/* Only with the feed thread: its batches keep the events until every shard has taken them. */
	tuning_from_env(&n, NULL);
	t->shards = kmt_model_shards_new(t->m, n ? n : kmt_model_shards_for(t->jobs));
	return feed_start(t, d);
}

void feed_release(struct top *t)
{
	int i;

	feed_stop(t);
	kmt_model_shards_free(t->shards);
	t->shards = NULL;
	kmt_stream_close(t->stream);
	t->stream = NULL;
	/* Pages still queued are the live capture's, freed with it. */
	for (i = 0; t->cpu && i < t->ncpu; i++) {
		t->cpu[i].head = t->cpu[i].tail = NULL;
		if (t->cpu[i].spool_fd >= 0)
			close(t->cpu[i].spool_fd);
	}
	free(t->cpu);
	kmt_model_free(t->m);
	kmt_slab_aliases_free(t->aliases);
	kmt_decoder_free(t->dec);
	kmt_symbols_free(t->syms);
	kmt_comms_free(t->comms);
	kmt_formats_release(&t->formats);
}

/* Pages CPU @i's reader handed over: queued, and kept in the spool with -o. */
static int take(struct top *t, int i, struct kmt_diag *d)
{
	struct feed_cpu *c = &t->cpu[i];
	struct kmt_live_page *p = kmt_live_take(t->rc.live, i, &c->empty_ns), *q;
	uint64_t n = 0;

	if (!p)
		return 0;
	if (c->tail)
		c->tail->next = p;
	else
		c->head = p;
	for (q = p;; q = q->next) {
		n++;
		if (c->spool_fd >= 0 && kmt_write_all(c->spool_fd, q->data, t->psize))
			return kmt_diag_set(d, -errno, "cannot keep the session in %s: %s", t->rc.o.output,
					    strerror(errno));
		if (!q->next)
			break;
	}
	__atomic_add_fetch(&c->npages, n, __ATOMIC_RELAXED);
	c->tail = q;
	/* Events of this CPU come in order: those before its newest page are in hand. */
	if (q->len >= 8) {
		uint64_t ts;

		memcpy(&ts, q->data, 8);
		c->seen_ns = MAX(c->seen_ns, ts);
	}
	return 0;
}

/* Every CPU's pages taken; what is safe to feed (@all: everything, no page will come). */
static int take_all(struct top *t, bool all, struct kmt_diag *d)
{
	uint64_t safe = UINT64_MAX;
	int i, ret;

	for (i = 0; i < t->ncpu; i++)
		if ((ret = take(t, i, d)))
			return ret;
	if (!all) {
		for (i = 0; i < t->ncpu; i++)
			safe = MIN(safe, MAX(t->cpu[i].empty_ns, t->cpu[i].seen_ns));
		safe = safe > MARGIN_NS ? safe - MARGIN_NS : 0;
	}
	t->draining = all;
	kmt_stream_set_safe(t->stream, safe);
	return 0;
}

/*
 * The page at the head of @c's queue is read: back to the readers, or,
 * with the feed thread, held by the batch filling now (its events point
 * into it).
 */
static void page_done(struct top *t, struct feed_cpu *c)
{
	struct kmt_live_page *done = c->head;
	struct feed *f = t->feed;

	c->head = done->next;
	__atomic_sub_fetch(&c->npages, 1, __ATOMIC_RELAXED);
	if (!c->head)
		c->tail = NULL;
	c->reading = false;
	if (f) {
		struct batch *b = &f->b[f->prod % RING];

		done->next = b->held;
		b->held = done;
		b->nheld++;
		__atomic_add_fetch(&f->held, 1, __ATOMIC_RELAXED);
		return;
	}
	done->next = NULL;
	kmt_live_put(t->rc.live, done);
}

double feed_cpu_seconds(const struct top *t)
{
	struct timespec ts;
	clockid_t cid;

	if (!t->feed || pthread_getcpuclockid(t->feed->th, &cid) || clock_gettime(cid, &ts))
		return -1;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t feed_queued(const struct top *t)
{
	uint64_t pages = t->feed ? __atomic_load_n(&t->feed->held, __ATOMIC_RELAXED) : 0;
	int i;

	for (i = 0; i < t->ncpu; i++)
		pages += __atomic_load_n(&t->cpu[i].npages, __ATOMIC_RELAXED);
	return pages * t->psize;
}

/*
 * The stream's next item, decoded into @ev, or a marker into @mk: IT_*, 0
 * at the safe time or the end, < 0 error.
 */
static int next_item(struct top *t, struct kmt_event *ev, struct kmt_marker *mk, struct kmt_diag *d)
{
	struct kmt_srec sr;
	int ret;

	for (;;) {
		ret = kmt_stream_next(t->stream, &sr, d);
		if (ret <= 0)
			return ret == -EAGAIN ? 0 : ret;
		if (sr.lost_marker || sr.skip) {
			kmt_marker_of(&sr, sr.buffer, mk);	/* one buffer: every marker is of it */
			if (sr.skip && !*t->why)
				/* Said when the model gets there, if nothing was said before. */
				snprintf(t->why, sizeof(t->why), "%s", sr.skip->why);
			return IT_MARKER;
		}
		ret = kmt_decode(t->dec, &sr.rec, sr.cpu, ev);
		if (ret < 0) {
			ev->cpu = sr.cpu;
			ev->ts = sr.rec.ts;
			return IT_MISFIT;
		}
		if (ret)
			return IT_EVENT;
	}
}

/*
 * A marker, into the model; the first page that could not be read, or
 * record that does not fit its format (its event counted as lost, of an
 * unknown number), is said once.
 */
static void marker(struct top *t, enum item what, const struct kmt_event *ev, const struct kmt_marker *mk)
{
	if (what == IT_MISFIT) {
		if (!t->failed)
			warning("CPU %d: a record does not fit its format: its event is counted as lost", ev->cpu);
		t->failed = true;
		kmt_model_lost(t->m, ev->cpu, -1, ev->ts);
		return;
	}
	if (mk->kind == KMT_MARK_GAP) {
		if (!t->failed)
			warning("CPU %d: a page cannot be read (%s): its events are counted as lost", mk->cpu, t->why);
		t->failed = true;
	}
	kmt_model_marker(t->m, mk);
}

/* Is a snapshot due, or the pump's time up? */
static bool pump_over(struct top *t)
{
	return atomic_load_explicit(&t->tick_now, memory_order_relaxed) || recording_now_since(&t->rc.t0) > t->due;
}

/* ---- the feed thread (-j 2 and more) ---- */

/* The batch filling now goes over; 0, or 1 if told to quit while waiting for room. */
static int hand(struct feed *f)
{
	bool quit;

	pthread_mutex_lock(&f->mu);
	f->prod++;
	pthread_cond_broadcast(&f->cv);
	while (f->prod - f->cons == RING && !f->quit)
		pthread_cond_wait(&f->cv, &f->mu);
	quit = f->quit;
	pthread_mutex_unlock(&f->mu);
	return quit;
}

/* One kick's work: the pages taken, every event up to the safe time decoded into batches. */
static int feed_round(struct feed *f, bool all, struct kmt_diag *d)
{
	struct top *t = f->t;
	struct batch *b;
	int ret;

	ret = take_all(t, all, d);
	if (ret)
		return ret;
	for (;;) {
		b = &f->b[f->prod % RING];
		ret = next_item(t, &b->ev[b->n], &b->mk[b->n], d);
		if (ret <= 0)
			break;
		b->what[b->n++] = (uint8_t)ret;
		if (b->n == BATCH && hand(f))
			return 0;
	}
	/* What is left goes over too, with the pages it holds. */
	b = &f->b[f->prod % RING];
	if (!ret && (b->n || b->held))
		hand(f);
	return ret;
}

static void *feed_main(void *arg)
{
	struct feed *f = arg;
	struct kmt_diag d = { 0 };
	bool all;
	int ret;

	pthread_setname_np(pthread_self(), "kmt-feed");
	pthread_mutex_lock(&f->mu);
	for (;;) {
		while (!f->kick && !f->quit)
			pthread_cond_wait(&f->cv, &f->mu);
		if (f->quit)
			break;
		f->kick = false;
		all = f->all;
		pthread_mutex_unlock(&f->mu);
		ret = feed_round(f, all, &d);
		pthread_mutex_lock(&f->mu);
		if (ret < 0) {
			f->err = ret;
			snprintf(f->msg, sizeof(f->msg), "%s", d.msg);
		}
		f->busy = f->kick;
		pthread_cond_broadcast(&f->cv);
		if (ret < 0)
			break;
	}
	f->busy = false;
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

/* A batch, into the model (with shards: into shard 0, which routes the others' events). */
static int feed_batch(struct top *t, struct batch *b)
{
	unsigned int i = 0, k;

	/*
	 * The events' strings are still in their pages, which the feed
	 * thread's core read last: the cache names the model compares come
	 * from another core's cache (a quarter of this thread's time), unless
	 * asked for now. A batch's names fit in this core's cache. (With
	 * shards, the shards compare them, not this thread.)
	 */
	for (k = 0; !t->shards && k < b->n; k++)
		if (b->ev[k].name_len)
			__builtin_prefetch(b->ev[k].name);
	while (i < b->n) {
		if (b->what[i] != IT_EVENT) {
			marker(t, b->what[i], &b->ev[i], &b->mk[i]);
			i++;
			continue;
		}
		for (k = i; k < b->n && b->what[k] == IT_EVENT; k++)
			;
		if (t->shards ? kmt_model_shards_events(t->shards, b->ev + i, k - i)
			      : kmt_model_events(t->m, b->ev + i, k - i))
			return error("out of memory: the analysis stops");
		t->events += k - i;
		i = k;
	}
	b->ticket = t->shards ? kmt_model_shards_posted(t->shards) : 0;
	return EXIT_OK;
}

/* Has every shard taken batch @b's events (@wait: once they have)? Without shards, yes. */
static bool batch_taken(struct top *t, struct batch *b, bool wait)
{
	return !t->shards || kmt_model_shards_taken(t->shards, b->ticket, wait);
}

/* A batch fed: its pages back to the readers, its room to the feed thread. */
static void batch_done(struct top *t, struct batch *b)
{
	kmt_live_put(t->rc.live, b->held);
	__atomic_sub_fetch(&t->feed->held, b->nheld, __ATOMIC_RELAXED);
	b->held = NULL;
	b->nheld = 0;
	b->n = 0;
}

/* The pump with the feed thread: kick it, feed the batches it hands over. */
static int pump_batches(struct top *t, bool all)
{
	struct feed *f = t->feed;
	struct timespec until;
	int code = EXIT_OK;

	pthread_mutex_lock(&f->mu);
	f->kick = true;
	f->busy = true;
	f->all |= all;
	pthread_cond_broadcast(&f->cv);
	for (;;) {
		while (f->cons == f->prod && f->busy && !f->err) {
			if (!all && pump_over(t))
				goto out;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += WAIT_NS;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&f->cv, &f->mu, &until);
		}
		if (f->cons == f->prod)
			break;
		if (f->routed != f->prod) {
			pthread_mutex_unlock(&f->mu);
			code = feed_batch(t, &f->b[f->routed % RING]);
			pthread_mutex_lock(&f->mu);
			f->routed++;
		}
		/*
		 * The batches every shard has taken are done; with none left to
		 * feed, wait for the shards on the oldest (a few batches' work).
		 */
		while (!code && f->cons != f->routed) {
			struct batch *b = &f->b[f->cons % RING];
			bool wait = f->routed == f->prod, taken;

			pthread_mutex_unlock(&f->mu);
			taken = batch_taken(t, b, wait);
			if (taken)
				batch_done(t, b);
			pthread_mutex_lock(&f->mu);
			if (!taken)
				break;
			f->cons++;
			pthread_cond_broadcast(&f->cv);
		}
		if (code || (!all && pump_over(t)))
			break;
	}
out:
	t->pending = !code && (f->cons != f->prod || f->busy);
	if (!code && f->err && f->cons == f->prod)
		code = error("%s", f->msg);
	pthread_mutex_unlock(&f->mu);
	return code;
}

int feed_pump(struct top *t, bool all)
{
	struct kmt_diag d = { 0 };
	struct kmt_event ev;
	struct kmt_marker mk;
	uint64_t n = 0;
	int ret;

	t->pending = false;
	if (t->feed)
		ret = pump_batches(t, all);
	else {
		if (take_all(t, all, &d))
			return error("%s", d.msg);
		while ((ret = next_item(t, &ev, &mk, &d)) > 0) {
			if (ret != IT_EVENT) {
				marker(t, ret, &ev, &mk);
				continue;
			}
			if (kmt_model_event(t->m, &ev))
				return error("out of memory: the analysis stops");
			t->events++;
			/*
			 * Behind a busy machine: stop now and then, so keys come on
			 * time, and when a snapshot is due (the ticker, boosting this
			 * thread, says so). The looks are close: 256 events, some 30 us.
			 */
			if (!all && !(++n & 255) && pump_over(t)) {
				t->pending = true;
				break;
			}
		}
		if (ret < 0)
			return error("%s", d.msg);
		ret = EXIT_OK;
	}
	if (ret)
		return ret;
	if (kmt_model_sync(t->m))
		return error("out of memory: the analysis stops");
	return EXIT_OK;
}
