/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace top, the ticker: says when a snapshot is due (src/top/top.h).
 *
 * On a saturated machine the analysis thread takes its fair share of a
 * CPU among the workload's tasks; with hackbench's 160 of them on two
 * CPUs a time slice can be 0.1-0.3 s away, so a snapshot it takes when it
 * next looks at a timer comes late, and later again for each slice it
 * still needs. The ticker, a thread asleep on the interval's timer, says
 * at once that a snapshot is due: it raises a flag the pump looks at
 * every few hundred events, gives the analysis thread the readers'
 * SCHED_FIFO priority until the snapshot is shown (tick_done), and wakes
 * the main loop through t->tick_fd. The boost lasts one short pump and
 * the snapshot; the rest of the interval the analysis runs at its share.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>

#include "util/util.h"
#include "top.h"

/* @th at the readers' SCHED_FIFO priority, or back to normal (with --rt-prio 0: neither). */
static void fifo(const struct top *t, pthread_t th, bool on)
{
	struct sched_param sp = { .sched_priority = on ? t->rc.o.rt_prio : 0 };

	if (t->rc.o.rt_prio > 0)
		pthread_setschedparam(th, on ? SCHED_FIFO : SCHED_OTHER, &sp);
}

static void *ticker(void *arg)
{
	struct top *t = arg;
	struct pollfd pf[2] = { { t->timer_fd, POLLIN, 0 }, { t->tick_stop_fd, POLLIN, 0 } };
	uint64_t n = 1;

	pthread_setname_np(pthread_self(), "kmt-tick");
	fifo(t, pthread_self(), true);
	for (;;) {
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			break;
		if (!pf[0].revents || read(t->timer_fd, &n, sizeof(n)) != sizeof(n))
			continue;
		atomic_store(&t->tick_now, true);
		fifo(t, t->main, true);
		n = 1;
		if (write(t->tick_fd, &n, sizeof(n)) != sizeof(n))
			break;
	}
	return NULL;
}

int top_timer(double seconds)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec its;

	if (fd < 0)
		return -1;
	its.it_value.tv_sec = (time_t)seconds;
	its.it_value.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9);
	its.it_interval = its.it_value;
	timerfd_settime(fd, 0, &its, NULL);
	return fd;
}

int tick_start(struct top *t)
{
	int ret;

	t->main = pthread_self();
	t->timer_fd = top_timer(t->interval);
	t->tick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	t->tick_stop_fd = eventfd(0, EFD_CLOEXEC);
	if (t->timer_fd < 0 || t->tick_fd < 0 || t->tick_stop_fd < 0)
		return -errno;
	ret = pthread_create(&t->ticker, NULL, ticker, t);
	if (ret)
		return -ret;
	t->ticking = true;
	return 0;
}

void tick_done(struct top *t)
{
	uint64_t n;

	while (read(t->tick_fd, &n, sizeof(n)) > 0)
		;
	atomic_store(&t->tick_now, false);
	fifo(t, t->main, false);
}

void tick_stop(struct top *t)
{
	uint64_t one = 1;
	int *fds[] = { &t->timer_fd, &t->tick_fd, &t->tick_stop_fd };
	size_t i;

	if (t->ticking) {
		if (write(t->tick_stop_fd, &one, sizeof(one)) == sizeof(one))
			pthread_join(t->ticker, NULL);
		t->ticking = false;
		fifo(t, t->main, false);
	}
	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}
