/*
 * kmemtrace top, the ticker: says when a snapshot is due (src/top.h).
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

#include "cmd.h"
#include "top.h"

static void boost(struct top *t, bool on)
{
	struct sched_param sp = { .sched_priority = on ? t->rc.o.rt_prio : 0 };

	if (t->rc.o.rt_prio > 0)
		pthread_setschedparam(t->main, on ? SCHED_FIFO : SCHED_OTHER, &sp);
}

static void *ticker(void *arg)
{
	struct top *t = arg;
	struct pollfd pf[2] = { { t->timer_fd, POLLIN, 0 }, { t->tick_stop_fd, POLLIN, 0 } };
	uint64_t n = 1;

	pthread_setname_np(pthread_self(), "kmt-tick");
	if (t->rc.o.rt_prio > 0) {
		struct sched_param sp = { .sched_priority = t->rc.o.rt_prio };

		pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	}
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
		boost(t, true);
		n = 1;
		if (write(t->tick_fd, &n, sizeof(n)) != sizeof(n))
			break;
	}
	return NULL;
}

int tick_start(struct top *t)
{
	struct itimerspec its = { 0 };
	int ret;

	t->main = pthread_self();
	t->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	t->tick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	t->tick_stop_fd = eventfd(0, EFD_CLOEXEC);
	if (t->timer_fd < 0 || t->tick_fd < 0 || t->tick_stop_fd < 0)
		return -errno;
	its.it_value.tv_sec = (time_t)t->interval;
	its.it_value.tv_nsec = (long)((t->interval - (double)(time_t)t->interval) * 1e9);
	its.it_interval = its.it_value;
	if (timerfd_settime(t->timer_fd, 0, &its, NULL))
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
	boost(t, false);
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
		boost(t, false);
	}
	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}
