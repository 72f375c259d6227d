/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace top, the feed: the live readers' pages as a page source of
 * the library's stream (include/kmemtrace/tracefile.h), which merges them,
 * says where a CPU lost events and passes over a page that cannot be read,
 * as for a file; decoded and fed to the model by the library's pipeline in
 * steps (kmt_analyse_live_*, include/kmemtrace/analyse.h): with -j 2 and
 * more on a thread of its own, from -j 4 into the model's shards.
 *
 * A CPU's events come in order; across CPUs they must be merged. An event
 * may only be fed once no CPU can still hand over an older one: each
 * reader says when it last found its buffer empty, so everything older
 * than that on that CPU is in hand, and so is everything older than the
 * first event of the newest page taken (a busy CPU's buffer is seldom
 * empty); the earliest of those times over the CPUs, less a margin for
 * events being written as the buffer was read, is safe (the stream's safe
 * time). The instance uses the "mono" trace clock, CLOCK_MONOTONIC, to
 * compare.
 *
 * Decoded events point into their pages: a page read to the end is held
 * with the events decoded then (kmt_analyse_live_hold()) and goes back to
 * the readers once the model has them.
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

/* The page source: CPU @i's queue; the page before is given back first. */
static void page_done(struct top *t, struct feed_cpu *c);
static int refill(void *arg, bool all, struct kmt_diag *d);
static bool pump_over(void *arg);
static void marker(void *arg, const struct kmt_marker *mk, const struct kmt_skip *skip);
static void release(void *arg, void *held);

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

int feed_init(struct top *t, struct kmt_diag *d)
{
	struct recording *rc = &t->rc;
	struct kmt_comms *comms;
	struct kmt_model_opts mo = { .comm = t->comm, .cgroup = t->cgroup };
	char ev[160];
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
	/* Where each task is: moves after, the cgroup events say (a system without cgroups: no view). */
	t->cgroups = kmt_cgroups_new();
	if (t->cgroups && kmt_cgroups_from_proc(t->cgroups, "/proc")) {
		kmt_cgroups_free(t->cgroups);
		t->cgroups = NULL;
	}
	if (t->cgroup && !t->cgroups)
		return kmt_diag_set(d, -ENOENT, "-G: the tasks' cgroups cannot be read in /proc");
	mo.cgroups = t->cgroups;
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
	{
		struct kmt_analyse_live_opts lo = { .jobs = t->jobs, .refill = refill, .over = pump_over,
						    .marker = marker, .release = release, .arg = t };

		tuning_from_env(&lo.shards, NULL);
		t->live = kmt_analyse_live_new(t->stream, t->dec, t->m, &lo, d);
		if (!t->live)
			return d->err;
	}
	return 0;
}

void feed_release(struct top *t)
{
	int i;

	kmt_analyse_live_free(t->live);
	t->live = NULL;
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
	kmt_cgroups_free(t->cgroups);
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
static int refill(void *arg, bool all, struct kmt_diag *d)
{
	struct top *t = arg;
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
 * The page at the head of @c's queue is read: held with the events
 * decoded now (they point into it), until the model has them.
 */
static void page_done(struct top *t, struct feed_cpu *c)
{
	struct kmt_live_page *done = c->head;
	void **held = kmt_analyse_live_hold(t->live);

	c->head = done->next;
	__atomic_sub_fetch(&c->npages, 1, __ATOMIC_RELAXED);
	if (!c->head)
		c->tail = NULL;
	c->reading = false;
	done->next = *held;
	*held = done;
	__atomic_add_fetch(&t->held, 1, __ATOMIC_RELAXED);
}

/* Pages held with events the model now has: back to the readers. */
static void release(void *arg, void *held)
{
	struct top *t = arg;
	struct kmt_live_page *p;
	uint64_t n = 0;

	for (p = held; p; p = p->next)
		n++;
	__atomic_sub_fetch(&t->held, n, __ATOMIC_RELAXED);
	kmt_live_put(t->rc.live, held);
}

double feed_cpu_seconds(const struct top *t)
{
	return kmt_analyse_live_reader_seconds(t->live);
}

uint64_t feed_queued(const struct top *t)
{
	uint64_t pages = __atomic_load_n(&t->held, __ATOMIC_RELAXED);
	int i;

	for (i = 0; i < t->ncpu; i++)
		pages += __atomic_load_n(&t->cpu[i].npages, __ATOMIC_RELAXED);
	return pages * t->psize;
}

/*
 * A marker, after the model: the first page that could not be read, or
 * record that does not fit its format (its event counted as lost, of an
 * unknown number), is said once.
 */
static void marker(void *arg, const struct kmt_marker *mk, const struct kmt_skip *skip)
{
	struct top *t = arg;

	if (t->failed)
		return;
	if (mk->kind == KMT_MARK_MISFIT)
		warning("CPU %d: a record does not fit its format: its event is counted as lost", mk->cpu);
	else if (mk->kind == KMT_MARK_GAP)
		warning("CPU %d: a page cannot be read (%s): its events are counted as lost", mk->cpu,
			skip ? skip->why : "");
	else
		return;
	t->failed = true;
}

/* Is a snapshot due, or the pump's time up? */
static bool pump_over(void *arg)
{
	struct top *t = arg;

	return atomic_load_explicit(&t->tick_now, memory_order_relaxed) || recording_now_since(&t->rc.t0) > t->due;
}

int feed_pump(struct top *t, bool all)
{
	struct kmt_diag d = { 0 };

	if (kmt_analyse_live_pump(t->live, all, &t->pending, &d))
		return error("%s", d.msg);
	return EXIT_OK;
}
