/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The capture threads (include/kmemtrace/capture.h). One thread per CPU:
 *
 *	poll(trace_pipe_raw, stop) -> splice(trace_pipe_raw -> holding pipe)
 *	flusher (idle priority)    -> splice(holding pipe -> spool/cpuN)
 *
 * poll() returns when the CPU's buffer passes the instance's buffer_percent
 * watermark, so a thread wakes a few times per buffer-full, not per event,
 * and moves page references into pipes: nothing is copied while the
 * workload runs. Pages reach the spool file when the machine has idle time,
 * or when the holding limit is reached (see hold.c). splice() only hands
 * over full pages; at the end the partial last page is fetched with a
 * non-blocking read(). With a sync period (record -m 0), a thread also
 * wakes that often and takes what its buffer has, the writer's partial
 * page included, so the spool is never further behind than the period.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/tracefs.h>
#include <kmemtrace/capture.h>
#include "hold.h"
#include "base/kmt-local.h"

struct rcpu {
	struct kmt_recorder *r;
	int idx, cpu;
	int in_fd, out_fd;
	pthread_t th;
	bool started;
	pid_t tid;
	int err;
	struct kmt_diag diag;		/* what went wrong, once err is set */
};

struct kmt_recorder {
	int n;
	struct rcpu *c;
	struct hold *hold;
	int stop_fd, err_fd;
	uint32_t psize;
	int rt_prio;
	uint64_t sync_ns;		/* 0: only when the watermark wakes */
	sem_t ready;
	bool halted;
};

/* The thread stops on @err: the message in c->diag gets the CPU in front. */
static void rcpu_fail(struct rcpu *c, int err)
{
	uint64_t one = 1;
	char msg[sizeof(c->diag.msg)];

	if (c->err)
		return;
	c->err = err;
	snprintf(msg, sizeof(msg), "%s", c->diag.msg);
	kmt_diag_set(&c->diag, err, "CPU %d: %.400s", c->cpu, msg);
	if (write(c->r->err_fd, &one, 8) < 0)
		c->err = err;	/* nothing more we can do */
}

static long drain(struct rcpu *c)
{
	long n = hold_splice_in(c->r->hold, c->idx, c->in_fd, &c->diag);

	if (n < 0)
		rcpu_fail(c, (int)n);
	return n;
}

/*
 * Is @page one the writer had not filled (its commit, after the u64 time
 * stamp, well short of the page)? A full page ends short only by the
 * event that did not fit.
 */
static bool page_partial(const char *page, uint32_t psize)
{
	unsigned long commit;

	memcpy(&commit, page + 8, sizeof(commit));
	return (commit & ((1UL << 27) - 1)) + 1024 < psize - 8 - sizeof(commit);
}

/*
 * The pages splice() does not hand over: read() does, the writer's partial
 * page too. @all: until the buffer is empty (at the end, tracing off);
 * otherwise up to the first partial page (the writer's: reading on would
 * only take a few events at a time while it writes).
 */
static void read_pages(struct rcpu *c, bool all)
{
	uint32_t psize = c->r->psize;
	char *page = malloc(psize);
	int i;

	if (!page) {
		rcpu_fail(c, kmt_diag_set(&c->diag, -ENOMEM, "out of memory"));
		return;
	}
	for (i = 0; i < (all ? 1 << 20 : 64); i++) {
		ssize_t n = read(c->in_fd, page, psize);
		int ret;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if ((size_t)n < psize)
			memset(page + n, 0, psize - (size_t)n);
		ret = hold_write_in(c->r->hold, c->idx, page, psize, &c->diag);
		if (ret) {
			rcpu_fail(c, ret);
			break;
		}
		if (!all && page_partial(page, psize))
			break;
	}
	free(page);
}

/* Milliseconds to @deadline (CLOCK_MONOTONIC ns), for poll(); -1 for none. */
static int ms_until(uint64_t deadline)
{
	uint64_t now = kmt_now_ns();

	if (!deadline)
		return -1;
	return now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
}

static void *rcpu_main(void *arg)
{
	struct rcpu *c = arg;
	struct kmt_recorder *r = c->r;
	struct pollfd pf[2] = { { c->in_fd, POLLIN, 0 }, { r->stop_fd, POLLIN, 0 } };
	struct timespec nap = { 0, 5 * 1000 * 1000 };
	uint64_t next_sync;
	char name[16];

	c->tid = (pid_t)gettid();
	snprintf(name, sizeof(name), "kmemtrace/%d", c->cpu);
	pthread_setname_np(pthread_self(), name);
	/*
	 * A saturated machine must not starve the reader (it would lose
	 * events): real-time priority if allowed, else the highest nice.
	 */
	if (r->rt_prio > 0) {
		struct sched_param sp = { .sched_priority = r->rt_prio };

		if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
			setpriority(PRIO_PROCESS, (id_t)c->tid, -20);
	}
	sem_post(&r->ready);
	next_sync = r->sync_ns ? kmt_now_ns() + r->sync_ns : 0;
	while (!c->err) {
		long moved;

		if (poll(pf, 2, ms_until(next_sync)) < 0) {
			if (errno == EINTR)
				continue;
			rcpu_fail(c, kmt_diag_set(&c->diag, -errno, "poll: %s", strerror(errno)));
			break;
		}
		if (pf[1].revents)
			break;
		moved = drain(c);
		if (next_sync && kmt_now_ns() >= next_sync) {
			if (moved >= 0)
				read_pages(c, false);
			next_sync = kmt_now_ns() + r->sync_ns;
		} else if (moved == 0) {
			/* poll and splice may disagree on "full": do not spin. */
			nanosleep(&nap, NULL);
		}
	}
	if (!c->err && drain(c) >= 0)
		read_pages(c, true);
	return NULL;
}

static int rcpu_open(struct rcpu *c, const struct kmt_recorder_opts *o, struct kmt_diag *d)
{
	c->in_fd = kmt_instance_open_cpu(o->instance_path, c->cpu, "trace_pipe_raw", O_RDONLY | O_NONBLOCK, d);
	if (c->in_fd < 0)
		return c->in_fd;
	if (o->append)
		c->out_fd = kmt_spool_cpu_append(o->spool, KMT_SPOOL_MAIN, c->cpu, o->subbuf_size, d);
	else
		c->out_fd = kmt_spool_cpu_create(o->spool, KMT_SPOOL_MAIN, c->cpu, d);
	return c->out_fd < 0 ? c->out_fd : 0;
}

struct open_job {
	struct kmt_recorder *r;
	const struct kmt_recorder_opts *o;
};

static int open_one(void *arg, int i)
{
	struct open_job *j = arg;

	return rcpu_open(&j->r->c[i], j->o, &j->r->c[i].diag);
}

/* Every CPU's trace_pipe_raw and spool file, on the CPUs at hand (kmt_parallel). */
static int open_all(struct kmt_recorder *r, const struct kmt_recorder_opts *o, struct kmt_diag *d)
{
	struct open_job j = { r, o };
	int ret = kmt_parallel(r->n, open_one, &j), i;

	for (i = 0; ret && i < r->n; i++)
		if (r->c[i].diag.err)
			return kmt_diag_set(d, r->c[i].diag.err, "%s", r->c[i].diag.msg);
	return ret ? kmt_diag_set(d, ret, "cannot open the ring buffers: %s", strerror(-ret)) : 0;
}

struct kmt_recorder *kmt_recorder_start(const struct kmt_recorder_opts *o,
					struct kmt_diag *d)
{
	struct kmt_recorder *r = calloc(1, sizeof(*r));
	int *fds = calloc((size_t)o->nr_cpus + 1, sizeof(*fds));
	int i, k, ret;

	if (!r || !fds) {
		free(r);
		free(fds);
		kmt_diag_set(d, -ENOMEM, "out of memory");
		return NULL;
	}
	r->n = o->nr_cpus;
	r->psize = o->subbuf_size;
	r->rt_prio = o->rt_prio;
	r->sync_ns = (uint64_t)o->sync_ms * 1000000;
	r->stop_fd = eventfd(0, EFD_CLOEXEC);
	r->err_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->c = calloc((size_t)r->n + 1, sizeof(*r->c));
	sem_init(&r->ready, 0, 0);
	if (!r->c || r->stop_fd < 0 || r->err_fd < 0) {
		kmt_diag_set(d, -ENOMEM, "cannot set up the recorder");
		goto fail;
	}
	for (i = 0; i < r->n; i++) {
		r->c[i].r = r;
		r->c[i].idx = i;
		r->c[i].cpu = o->cpus[i];
		r->c[i].in_fd = r->c[i].out_fd = -1;
	}
	if (open_all(r, o, d))
		goto fail;
	for (i = 0; i < r->n; i++)
		fds[i] = r->c[i].out_fd;
	r->hold = hold_new(r->n, fds, o->hold_bytes);
	if (!r->hold) {
		kmt_diag_set(d, -ENOMEM, "out of memory");
		goto fail;
	}
	ret = hold_start(r->hold);
	if (ret) {
		kmt_diag_set(d, ret, "cannot start the flusher thread: %s", strerror(-ret));
		goto fail;
	}
	/* All started, then all waited for: they set themselves up side by side. */
	for (i = 0; i < r->n; i++) {
		ret = pthread_create(&r->c[i].th, NULL, rcpu_main, &r->c[i]);
		if (ret) {
			kmt_diag_set(d, -ret, "cannot start a recorder thread: %s", strerror(ret));
			break;
		}
		r->c[i].started = true;
	}
	for (k = 0; k < i; k++)
		sem_wait(&r->ready);
	if (i < r->n)
		goto fail;
	free(fds);
	return r;
fail:
	free(fds);
	kmt_recorder_stop(r, NULL);
	kmt_recorder_free(r);
	return NULL;
}

int kmt_recorder_tids(const struct kmt_recorder *r, pid_t *tids, int max)
{
	int i, n = 0;

	for (i = 0; i < r->n && n < max; i++)
		if (r->c[i].started)
			tids[n++] = r->c[i].tid;
	if (r->hold && hold_flusher_tid(r->hold) && n < max)
		tids[n++] = hold_flusher_tid(r->hold);
	return n;
}

int kmt_recorder_error_fd(const struct kmt_recorder *r)
{
	return r->err_fd;
}

uint64_t kmt_recorder_bytes(const struct kmt_recorder *r, int i)
{
	return r->hold ? hold_bytes_in(r->hold, i) : 0;
}

uint64_t kmt_recorder_held(const struct kmt_recorder *r)
{
	return r->hold ? hold_held(r->hold) : 0;
}

int kmt_recorder_halt(struct kmt_recorder *r, struct kmt_diag *d)
{
	uint64_t one = 1;
	int i, err = 0;

	if (r->halted)
		return 0;	/* the capture's error was returned then */
	r->halted = true;
	if (r->stop_fd >= 0 && write(r->stop_fd, &one, 8) < 0)
		err = -errno;
	for (i = 0; r->c && i < r->n; i++) {
		struct rcpu *c = &r->c[i];

		if (c->started) {
			pthread_join(c->th, NULL);
			c->started = false;
		}
		if (c->err && !err)
			err = kmt_diag_set(d, c->err, "%s", c->diag.msg);
	}
	if (r->hold)
		hold_seal(r->hold);
	return err;
}

uint64_t kmt_recorder_held_bytes(struct kmt_recorder *r, int i)
{
	return r->hold ? hold_queued(r->hold, i) : 0;
}

int kmt_recorder_read_held(struct kmt_recorder *r, int i, void *buf, size_t len,
			   struct kmt_diag *d)
{
	if (!r->hold)
		return len ? kmt_diag_set(d, -EIO, "no pages are held") : 0;
	return hold_read(r->hold, i, buf, len, d);
}

int kmt_recorder_stop(struct kmt_recorder *r, struct kmt_diag *d)
{
	struct kmt_diag hd = { 0 };
	int err = kmt_recorder_halt(r, d);

	if (r->hold) {
		int ret = hold_finish(r->hold, &hd);

		if (ret && !err)
			err = kmt_diag_set(d, ret, "%s", hd.msg);
	}
	return err;
}

void kmt_recorder_free(struct kmt_recorder *r)
{
	int i;

	if (!r)
		return;
	hold_free(r->hold);
	for (i = 0; r->c && i < r->n; i++) {
		if (r->c[i].in_fd >= 0)
			close(r->c[i].in_fd);
		if (r->c[i].out_fd >= 0)
			close(r->c[i].out_fd);
	}
	if (r->stop_fd >= 0)
		close(r->stop_fd);
	if (r->err_fd >= 0)
		close(r->err_fd);
	sem_destroy(&r->ready);
	free(r->c);
	free(r);
}
