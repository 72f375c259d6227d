/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fair stack sampling (include/kmemtrace/capture.h): one thread, asleep
 * between the moments it writes "1" or "0" to the instance's
 * options/stacktrace. "On" slices have a fixed length; the gaps between
 * them are random (uniform), so no periodic workload can fall into step
 * with them.
 *
 * 1 event in N, not 1/N of the time: a stack costs microseconds, so the
 * workload runs slower while stacks are on (4x slower in a loop of
 * open/close). The thread counts the events the ring buffers took during
 * its slices and its gaps (per_cpu/cpuN/stats, ~2 us a read, at most
 * MEASURED CPUs at a time, in turn) and makes each gap as long as the
 * events so far ask: N - 1 events off for each event on. Until it has
 * seen enough events (an idle machine), time stands in for them.
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
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <kmemtrace/tracefs.h>
#include <kmemtrace/tracefile.h>
#include <kmemtrace/capture.h>
#include "base/kmt-local.h"

#define MIN_SLICE_NS 50000ULL		/* a wake-up is as late as this on a VM */
#define PERIOD_NS 2000000ULL		/* a slice and its gap, on average (unslowed) */
#define MEASURED 8			/* CPUs whose events are counted at a time */
#define TURN 64			/* slices before the next CPUs' turn */
#define ENOUGH 256			/* events counted before they steer */

struct kmt_sampler {
	int fd;				/* options/stacktrace */
	int stop_fd;			/* eventfd: stop now */
	pthread_t th;
	bool started, stopped;
	pid_t tid;
	sem_t ready;
	unsigned int n;
	uint64_t slice_ns;
	int rt_prio;
	uint64_t rng;
	int err;
	struct kmt_sampler_stats st;
	/* Event counts: per_cpu/cpuN/stats of the CPUs counted now. */
	int *stat_fd;
	int nr_cpus, first;		/* CPUs counted: first .. first + MEASURED - 1 */
	uint64_t ev_on, ev_off;		/* events counted during slices, gaps */
	uint64_t ns_on, ns_off;		/* ... and how long those were */
};

static int set(struct kmt_sampler *s, bool on)
{
	return pwrite(s->fd, on ? "1" : "0", 1, 0) == 1 ? 0 : errno ? -errno : -EIO;
}

/* xorshift64*: the gaps need no better. */
static uint64_t rnd(struct kmt_sampler *s)
{
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545f4914f6cdd1dULL;
}

/* Events the counted CPUs' ring buffers have taken so far. */
static uint64_t counted(struct kmt_sampler *s)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < MIN(s->nr_cpus, MEASURED); i++) {
		struct kmt_cpustat st;
		char text[512];
		ssize_t len = pread(s->stat_fd[(s->first + i) % s->nr_cpus], text, sizeof(text) - 1, 0);

		if (len <= 0)
			continue;
		kmt_cpustat_parse(&st, text, (size_t)len);
		n += st.entries + st.overrun + st.read;
	}
	return n;
}

/* Sleep until @deadline (CLOCK_MONOTONIC ns): true if told to stop. */
static bool nap_until(struct kmt_sampler *s, uint64_t deadline)
{
	struct pollfd pf = { s->stop_fd, POLLIN, 0 };

	for (;;) {
		uint64_t now = kmt_now_ns(), left;
		struct timespec ts;
		int r;

		if (now >= deadline)
			return false;
		left = deadline - now;
		ts.tv_sec = (time_t)(left / 1000000000ULL);
		ts.tv_nsec = (long)(left % 1000000000ULL);
		r = ppoll(&pf, 1, &ts, NULL);
		if (r > 0 || (r < 0 && errno != EINTR))
			return true;
	}
}

/*
 * The next gap: random around its mean, plus what the gaps so far lack
 * from N - 1 events off for each event on (negative if they have too
 * many), in time at the rate events come while off. The mean is N - 1
 * slices, shortened by the slowdown the slices cause. Before enough
 * events are counted: N - 1 times the time on.
 */
static uint64_t next_gap(struct kmt_sampler *s)
{
	double mean = (double)((s->n - 1) * s->slice_ns), owed;
	int64_t gap;

	if (s->ev_on + s->ev_off >= ENOUGH && s->ev_on && s->ev_off && s->ns_on && s->ns_off) {
		double rate_on = (double)s->ev_on / (double)s->ns_on;
		double rate_off = (double)s->ev_off / (double)s->ns_off;
		double slowdown = rate_off / rate_on;

		mean /= slowdown < 0.25 ? 0.25 : slowdown > s->n ? s->n : slowdown;
		owed = ((double)(s->n - 1) * (double)s->ev_on - (double)s->ev_off) / rate_off;
	} else {
		owed = (double)(s->n - 1) * (double)s->st.on_ns - (double)(s->st.total_ns - s->st.on_ns);
	}
	owed = owed < -2 * mean ? -2 * mean : owed > 4 * mean ? 4 * mean : owed;
	gap = (int64_t)(rnd(s) % (uint64_t)(2 * mean + 1)) + (int64_t)owed;
	return gap < 0 ? 0 : (uint64_t)gap;
}

/*
 * Switch the option to @on, counting the events and reading the clock on
 * both sides: *@c2 gets twice the count at the switch and *@t2 twice its
 * time (the sums of before and after), so that whatever happened while
 * the switch was being made (the thread or its vCPU held up: seen here
 * under load, hundreds of events) counts half on each side, not all on one.
 */
static int toggle(struct kmt_sampler *s, bool on, uint64_t *c2, uint64_t *t2)
{
	uint64_t c = counted(s), t = kmt_now_ns();
	int ret = set(s, on);

	*c2 = c + counted(s);
	*t2 = t + kmt_now_ns();
	return ret;
}

static void *sampler_main(void *arg)
{
	struct kmt_sampler *s = arg;
	uint64_t t0, t, t2_on, t2_off, c2_on, c2_off = 0;
	bool stop = false, measured = false;

	s->tid = (pid_t)gettid();
	pthread_setname_np(pthread_self(), "kmemtrace/smp");
	/* Slices of 50 us need a punctual wake-up: no timer slack, and real-time if allowed. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (s->rt_prio > 0) {
		struct sched_param sp = { .sched_priority = s->rt_prio };

		if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
			setpriority(PRIO_PROCESS, (id_t)s->tid, -20);
	}
	sem_post(&s->ready);
	t0 = t = kmt_now_ns();
	t2_off = 2 * t;
	while (!stop) {
		if (nap_until(s, t + next_gap(s)))
			break;
		if ((s->err = toggle(s, true, &c2_on, &t2_on)))
			break;
		if (measured) {		/* the gap just ended, on the same CPUs */
			s->ev_off += (c2_on - MIN(c2_on, c2_off)) / 2;
			s->ns_off += (t2_on - t2_off) / 2;
		}
		s->st.slices++;
		stop = nap_until(s, t2_on / 2 + s->slice_ns);
		s->err = toggle(s, false, &c2_off, &t2_off);
		t = t2_off / 2;
		/* Every event of a slice has a stack after it: two entries. */
		s->ev_on += (c2_off - MIN(c2_off, c2_on)) / 4;
		s->ns_on += (t2_off - t2_on) / 2;
		s->st.on_ns += (t2_off - t2_on) / 2;
		s->st.total_ns = t - t0;
		measured = s->st.slices % TURN != 0;
		if (!measured)
			s->first = (s->first + MEASURED) % MAX(s->nr_cpus, 1);
		if (s->err)
			break;
	}
	s->st.total_ns = kmt_now_ns() - t0;
	s->st.events_on = s->ev_on;
	s->st.events_off = s->ev_off;
	return NULL;
}

struct kmt_sampler *kmt_sampler_start(const struct kmt_sampler_opts *o, struct kmt_diag *d)
{
	struct kmt_sampler *s = calloc(1, sizeof(*s));
	int ret;

	if (!s) {
		kmt_diag_set(d, -ENOMEM, "out of memory");
		return NULL;
	}
	s->fd = s->stop_fd = -1;
	s->n = MAX(o->one_in, 2u);
	s->slice_ns = o->slice_us ? o->slice_us * 1000ULL : MAX(PERIOD_NS / s->n, MIN_SLICE_NS);
	s->rt_prio = o->rt_prio;
	s->rng = o->seed ? o->seed : kmt_now_ns() | 1;
	s->stat_fd = calloc((size_t)MAX(o->nr_cpus, 1), sizeof(*s->stat_fd));
	if (!s->stat_fd) {
		kmt_diag_set(d, -ENOMEM, "out of memory");
		goto fail;
	}
	for (s->nr_cpus = 0; s->nr_cpus < o->nr_cpus; s->nr_cpus++) {
		s->stat_fd[s->nr_cpus] = kmt_instance_open_cpu(o->instance_path, o->cpus[s->nr_cpus], "stats",
							       O_RDONLY, d);
		if (s->stat_fd[s->nr_cpus] < 0)
			goto fail;
	}
	s->fd = kmt_instance_open(o->instance_path, "options/stacktrace", O_WRONLY, d);
	if (s->fd < 0)
		goto fail;
	if ((ret = set(s, false))) {
		kmt_diag_set(d, ret, "cannot write %s/options/stacktrace: %s", o->instance_path, strerror(-ret));
		goto fail;
	}
	s->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (s->stop_fd < 0 || sem_init(&s->ready, 0, 0)) {
		kmt_diag_set(d, -errno, "cannot start the stack sampler: %s", strerror(errno));
		goto fail;
	}
	if ((ret = pthread_create(&s->th, NULL, sampler_main, s))) {
		kmt_diag_set(d, -ret, "cannot start the stack sampler: %s", strerror(ret));
		sem_destroy(&s->ready);
		goto fail;
	}
	s->started = true;
	sem_wait(&s->ready);
	return s;
fail:
	kmt_sampler_free(s);
	return NULL;
}

pid_t kmt_sampler_tid(const struct kmt_sampler *s)
{
	return s->tid;
}

int kmt_sampler_stop(struct kmt_sampler *s, struct kmt_sampler_stats *st)
{
	uint64_t one = 1;

	if (!s->stopped) {
		s->stopped = true;
		if (write(s->stop_fd, &one, sizeof(one)) != sizeof(one))
			s->err = s->err ?: -EIO;
		pthread_join(s->th, NULL);
		sem_destroy(&s->ready);
		/* A failed thread may have left it on. */
		if (s->err)
			set(s, false);
	}
	if (st)
		*st = s->st;
	return s->err;
}

void kmt_sampler_free(struct kmt_sampler *s)
{
	if (!s)
		return;
	if (s->started)
		kmt_sampler_stop(s, NULL);
	if (s->fd >= 0)
		close(s->fd);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	while (s->nr_cpus-- > 0)
		close(s->stat_fd[s->nr_cpus]);
	free(s->stat_fd);
	free(s);
}
