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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kmemtrace/event.h>
#include <kmemtrace/base.h>
#include <kmemtrace/tracefs.h>

#include "util/util.h"
#include "top.h"

#define MARGIN_NS 2000000ULL		/* events still being written when a buffer read empty */

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

int feed_init(struct top *t, struct kmt_diag *d)
{
	struct rec *rc = &t->rc;
	struct kmt_comms *comms;
	struct kmt_model_opts mo = { .comm = t->comm };
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
	ret = kmt_tracefs_page_layout(rc->root, &t->layout, d);
	if (ret)
		return ret;
	t->dec = kmt_decoder_new(&t->formats, false, (int)sizeof(long));
	t->syms = kmt_symbols_load("/proc/kallsyms");
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
	return 0;
}

void feed_release(struct top *t)
{
	int i;

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
static int take(struct top *t, int i)
{
	struct feed_cpu *c = &t->cpu[i];
	struct kmt_live_page *p = kmt_live_take(t->rc.live, i, &c->empty_ns), *q;

	if (!p)
		return 0;
	if (c->tail)
		c->tail->next = p;
	else
		c->head = p;
	for (q = p;; q = q->next) {
		c->npages++;
		if (c->spool_fd >= 0 && kmt_write_all(c->spool_fd, q->data, t->psize))
			return error("cannot keep the session in %s: %s", t->rc.o.output, strerror(errno));
		if (!q->next)
			break;
	}
	c->tail = q;
	/* Events of this CPU come in order: those before its newest page are in hand. */
	if (q->len >= 8) {
		uint64_t ts;

		memcpy(&ts, q->data, 8);
		c->seen_ns = MAX(c->seen_ns, ts);
	}
	return 0;
}

/* The page at the head of @c's queue is read: back to the readers. */
static void page_done(struct top *t, struct feed_cpu *c)
{
	struct kmt_live_page *done = c->head;

	c->head = done->next;
	c->npages--;
	if (!c->head)
		c->tail = NULL;
	done->next = NULL;
	kmt_live_put(t->rc.live, done);
	c->reading = false;
}

/* A marker of the stream: events lost on a CPU, or a page that could not be read. */
static void lost(struct top *t, const struct kmt_srec *sr)
{
	if (sr->skip) {
		/* Not this page's events: say so once, go on. */
		if (!t->failed)
			warning("CPU %d: a page cannot be read (%s): its events are counted as lost",
				sr->cpu, sr->skip->why);
		t->failed = true;
	}
	kmt_model_lost(t->m, sr->cpu, sr->skip ? -1 : sr->lost, sr->rec.ts);
}

int feed_pump(struct top *t, bool all)
{
	struct kmt_diag d = { 0 };
	struct kmt_srec sr;
	struct kmt_event ev;
	uint64_t safe = UINT64_MAX, n = 0;
	int i, ret;

	t->pending = false;
	for (i = 0; i < t->ncpu; i++)
		if (take(t, i))
			return EXIT_FAIL;
	if (!all) {
		for (i = 0; i < t->ncpu; i++)
			safe = MIN(safe, MAX(t->cpu[i].empty_ns, t->cpu[i].seen_ns));
		safe = safe > MARGIN_NS ? safe - MARGIN_NS : 0;
	}
	t->draining = all;
	kmt_stream_set_safe(t->stream, safe);
	while ((ret = kmt_stream_next(t->stream, &sr, &d)) > 0) {
		if (sr.lost_marker) {
			lost(t, &sr);
			continue;
		}
		ret = kmt_decode(t->dec, &sr.rec, sr.cpu, &ev);
		if (ret < 0) {
			if (!t->failed)
				warning("CPU %d: a record does not fit its format: its event is counted as lost",
					sr.cpu);
			t->failed = true;
			kmt_model_lost(t->m, sr.cpu, -1, sr.rec.ts);
			continue;
		}
		if (!ret)
			continue;
		if (kmt_model_event(t->m, &ev))
			return error("out of memory: the analysis stops");
		t->events++;
		/*
		 * Behind a busy machine: stop now and then, so keys come on
		 * time, and when a snapshot is due (the ticker, boosting this
		 * thread, says so). The looks are close: 256 events, some 30 us.
		 */
		if (!all && !(++n & 255) &&
		    (atomic_load_explicit(&t->tick_now, memory_order_relaxed) ||
		     rec_now_since(&t->rc.t0) > t->due)) {
			t->pending = true;
			break;
		}
	}
	if (ret < 0 && ret != -EAGAIN)
		return error("%s", d.msg);
	if (kmt_model_sync(t->m))
		return error("out of memory: the analysis stops");
	return EXIT_OK;
}
