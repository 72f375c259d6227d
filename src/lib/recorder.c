/*
 * The capture threads (include/kmemtrace/record.h). One thread per CPU:
 *
 *	poll(trace_pipe_raw, stop) -> splice(trace_pipe_raw -> pipe)
 *	                           -> splice(pipe -> spool/cpuN)
 *
 * poll() returns when the CPU's buffer passes the instance's buffer_percent
 * watermark, so a thread wakes a few times per buffer-full, not per event,
 * and moves pages, not events. splice() only hands over full pages; at the
 * end the partial last page is fetched with a non-blocking read().
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/record.h>
#include "kmt-local.h"

struct rcpu {
	struct kmt_recorder *r;
	int cpu;
	int in_fd, out_fd;
	int pipe[2];
	size_t pipe_size;
	pthread_t th;
	bool started;
	pid_t tid;
	_Atomic uint64_t bytes;
	int err;
	char why[160];
};

struct kmt_recorder {
	int n;
	struct rcpu *c;
	int stop_fd, err_fd;
	uint32_t psize;
	int rt_prio;
	sem_t ready;
};

static void rcpu_fail(struct rcpu *c, int err, const char *what)
{
	uint64_t one = 1;

	if (c->err)
		return;
	c->err = err;
	snprintf(c->why, sizeof(c->why), "CPU %d: %s: %s", c->cpu, what, strerror(-err));
	if (write(c->r->err_fd, &one, 8) < 0)
		c->err = err;	/* nothing more we can do */
}

/* Move whole pages until the kernel has none; bytes moved or -errno. */
static long drain(struct rcpu *c)
{
	long total = 0;

	for (;;) {
		ssize_t n = splice(c->in_fd, NULL, c->pipe[1], NULL, c->pipe_size,
				   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return total;
		if (n < 0) {
			rcpu_fail(c, -errno, "reading trace_pipe_raw");
			return -errno;
		}
		if (n == 0)
			return total;
		while (n > 0) {
			ssize_t m = splice(c->pipe[0], NULL, c->out_fd, NULL, (size_t)n, SPLICE_F_MOVE);

			if (m < 0 && errno == EINTR)
				continue;
			if (m <= 0) {
				int err = m < 0 ? -errno : -EIO;

				rcpu_fail(c, err, "writing the spool file");
				return err;
			}
			n -= m;
			total += m;
			atomic_fetch_add_explicit(&c->bytes, (uint64_t)m, memory_order_relaxed);
		}
	}
}

/* The last, partial page: read() hands it over, splice() does not. */
static void flush_partial(struct rcpu *c)
{
	uint32_t psize = c->r->psize;
	char *page = malloc(psize);
	int i;

	if (!page) {
		rcpu_fail(c, -ENOMEM, "flushing");
		return;
	}
	for (i = 0; i < 1 << 20; i++) {
		ssize_t n = read(c->in_fd, page, psize);
		int ret;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if ((size_t)n < psize)
			memset(page + n, 0, psize - (size_t)n);
		ret = write_all(c->out_fd, page, psize);
		if (ret) {
			rcpu_fail(c, ret, "writing the spool file");
			break;
		}
		atomic_fetch_add_explicit(&c->bytes, psize, memory_order_relaxed);
	}
	free(page);
}

static void *rcpu_main(void *arg)
{
	struct rcpu *c = arg;
	struct kmt_recorder *r = c->r;
	struct pollfd pf[2] = { { c->in_fd, POLLIN, 0 }, { r->stop_fd, POLLIN, 0 } };
	struct timespec nap = { 0, 5 * 1000 * 1000 };
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
	while (!c->err) {
		long moved;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			rcpu_fail(c, -errno, "poll");
			break;
		}
		if (pf[1].revents)
			break;
		moved = drain(c);
		/* poll and splice may disagree on "full": do not spin. */
		if (moved == 0)
			nanosleep(&nap, NULL);
	}
	if (!c->err && drain(c) >= 0)
		flush_partial(c);
	return NULL;
}

static size_t pipe_size(void)
{
	struct sbuf sb = { 0 };
	size_t max = 1 << 20;

	if (!read_file("/proc/sys/fs/pipe-max-size", &sb)) {
		size_t v = strtoul(sb.buf, NULL, 10);

		if (v >= 65536 && v < max)
			max = v;
	}
	sbuf_release(&sb);
	return max;
}

static int rcpu_open(struct rcpu *c, const struct kmt_recorder_opts *o, struct kmt_diag *d)
{
	char path[512];
	int sz;

	snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw", o->instance_path, c->cpu);
	c->in_fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (c->in_fd < 0)
		return kmt_diag_set(d, -errno, "cannot open %s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/cpu%d", o->spool_dir, c->cpu);
	c->out_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (c->out_fd < 0)
		return kmt_diag_set(d, -errno, "cannot create %s: %s", path, strerror(errno));
	if (pipe2(c->pipe, O_CLOEXEC))
		return kmt_diag_set(d, -errno, "pipe: %s", strerror(errno));
	sz = fcntl(c->pipe[1], F_SETPIPE_SZ, (int)pipe_size());
	c->pipe_size = sz > 0 ? (size_t)sz : 65536;
	return 0;
}

struct kmt_recorder *kmt_recorder_start(const struct kmt_recorder_opts *o,
					struct kmt_diag *d)
{
	struct kmt_recorder *r = calloc(1, sizeof(*r));
	int i;

	if (!r) {
		kmt_diag_set(d, -ENOMEM, "out of memory");
		return NULL;
	}
	r->n = o->nr_cpus;
	r->psize = o->subbuf_size;
	r->rt_prio = o->rt_prio;
	r->stop_fd = eventfd(0, EFD_CLOEXEC);
	r->err_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->c = calloc((size_t)r->n + 1, sizeof(*r->c));
	sem_init(&r->ready, 0, 0);
	if (!r->c || r->stop_fd < 0 || r->err_fd < 0) {
		kmt_diag_set(d, -ENOMEM, "cannot set up the recorder");
		goto fail;
	}
	for (i = 0; i < r->n; i++) {
		struct rcpu *c = &r->c[i];

		c->r = r;
		c->cpu = o->cpus[i];
		c->in_fd = c->out_fd = c->pipe[0] = c->pipe[1] = -1;
	}
	for (i = 0; i < r->n; i++)
		if (rcpu_open(&r->c[i], o, d))
			goto fail;
	for (i = 0; i < r->n; i++) {
		int ret = pthread_create(&r->c[i].th, NULL, rcpu_main, &r->c[i]);

		if (ret) {
			kmt_diag_set(d, -ret, "cannot start a recorder thread: %s", strerror(ret));
			goto fail;
		}
		r->c[i].started = true;
		sem_wait(&r->ready);
	}
	return r;
fail:
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
	return n;
}

int kmt_recorder_error_fd(const struct kmt_recorder *r)
{
	return r->err_fd;
}

uint64_t kmt_recorder_bytes(const struct kmt_recorder *r, int i)
{
	return atomic_load_explicit(&r->c[i].bytes, memory_order_relaxed);
}

int kmt_recorder_stop(struct kmt_recorder *r, struct kmt_diag *d)
{
	uint64_t one = 1;
	int i, err = 0;

	if (r->stop_fd >= 0 && write(r->stop_fd, &one, 8) < 0)
		err = -errno;
	for (i = 0; r->c && i < r->n; i++) {
		struct rcpu *c = &r->c[i];

		if (c->started) {
			pthread_join(c->th, NULL);
			c->started = false;
		}
		if (c->err && !err) {
			err = c->err;
			kmt_diag_set(d, err, "%s", c->why);
		}
	}
	return err;
}

void kmt_recorder_free(struct kmt_recorder *r)
{
	int i;

	if (!r)
		return;
	for (i = 0; r->c && i < r->n; i++) {
		struct rcpu *c = &r->c[i];

		if (c->in_fd >= 0)
			close(c->in_fd);
		if (c->out_fd >= 0)
			close(c->out_fd);
		if (c->pipe[0] >= 0)
			close(c->pipe[0]);
		if (c->pipe[1] >= 0)
			close(c->pipe[1]);
	}
	if (r->stop_fd >= 0)
		close(r->stop_fd);
	if (r->err_fd >= 0)
		close(r->err_fd);
	sem_destroy(&r->ready);
	free(r->c);
	free(r);
}
