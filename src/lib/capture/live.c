/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Live capture (include/kmemtrace/capture.h). Each CPU's thread:
 *
 *	poll(trace_pipe_raw, stop, period) -> read() pages until the buffer
 *	is empty (a partial page included) -> the CPU's queue
 *
 * read() copies, where the recorder's splice() moves page references: the
 * pages are wanted in memory here, to be decoded, and a partial page can
 * only be had with read(). When the queue holds max_bytes the thread stops
 * reading until the analysis catches up; the kernel's buffer absorbs the
 * wait, and counts what it cannot.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/tracefs.h>
#include <kmemtrace/capture.h>
#include "base/kmt-local.h"

struct lcpu {
	struct kmt_live *l;
	int cpu, fd;
	pthread_t th;
	bool started;
	pid_t tid;
	int err;
	struct kmt_diag diag;
	/* The queue, under l->lock. */
	struct kmt_live_page *head, *tail;
	uint64_t bytes;				/* in the queue */
	uint64_t empty_ns;
};

struct block {
	struct block *next;
	size_t size;
	_Alignas(64) unsigned char mem[];
};

struct kmt_live {
	int n;
	struct lcpu *c;
	uint32_t psize;
	int rt_prio;
	unsigned int period_ms;
	size_t max_bytes;
	int stop_fd, err_fd;
	bool stopping;
	sem_t ready;
	pthread_mutex_t lock;
	pthread_cond_t room;		/* signalled when pages are taken */
	uint64_t queued;		/* bytes in every queue */
	struct kmt_live_page *spare;	/* pages given back, for reuse */
	struct block *blocks;		/* where every page lives, newest first */
	int carved;			/* pages handed out of the newest block */
};

static void lcpu_fail(struct lcpu *c, int err)
{
	uint64_t one = 1;

	if (c->err)
		return;
	c->err = err;
	if (write(c->l->err_fd, &one, 8) < 0)
		c->err = err;
}

/*
 * A page to read into: a spare one, or one of a new block of them. Pages
 * are never freed before kmt_live_free(): reused, they cost no malloc and
 * no page faults on the readers' hot path.
 */
#define BLOCK_PAGES 1024

/* Bytes from one page of a block to the next. */
static size_t page_stride(const struct kmt_live *l)
{
	return ALIGN_UP(sizeof(struct kmt_live_page) + l->psize, 64);
}

/* A new block of BLOCK_PAGES pages, not yet touched; NULL if none. */
static struct block *block_map(const struct kmt_live *l)
{
	size_t size = sizeof(struct block) + BLOCK_PAGES * page_stride(l);
	struct block *b = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (b == MAP_FAILED)
		return NULL;
	/* Huge pages where the system allows: a TLB miss per page costs the analysis (and a VM) dearly. */
	madvise(b, size, MADV_HUGEPAGE);
	b->size = size;
	return b;
}

static struct kmt_live_page *page_get(struct kmt_live *l)
{
	size_t each = page_stride(l);
	struct kmt_live_page *p = NULL;
	struct block *b;

	pthread_mutex_lock(&l->lock);
	if (l->spare) {
		p = l->spare;
		l->spare = p->next;
	} else if (l->blocks && l->carved < BLOCK_PAGES) {
		/* Carved as needed: a page is first touched by the read into it. */
		p = (struct kmt_live_page *)(void *)(l->blocks->mem + (size_t)l->carved++ * each);
	}
	pthread_mutex_unlock(&l->lock);
	if (p) {
		p->next = NULL;
		return p;
	}
	if (!(b = block_map(l)))
		return NULL;
	pthread_mutex_lock(&l->lock);
	/* The rest of the block carved before is lost to no one: it is used up first. */
	if (l->blocks && l->carved < BLOCK_PAGES) {
		p = (struct kmt_live_page *)(void *)(l->blocks->mem + (size_t)l->carved++ * each);
		pthread_mutex_unlock(&l->lock);
		munmap(b, b->size);
		p->next = NULL;
		return p;
	}
	b->next = l->blocks;
	l->blocks = b;
	l->carved = 1;
	pthread_mutex_unlock(&l->lock);
	p = (struct kmt_live_page *)(void *)b->mem;
	p->next = NULL;
	return p;
}

/*
 * Pages for @bytes, faulted in now and put on the spare list, before the
 * readers start: while the analysis falls behind on a busy machine the
 * queue grows, and a reader faulting in fresh memory (zeroed by the
 * kernel, on a VM often first touched on the host too) takes CPU from the
 * workload when it can least spare it. 0 or -ENOMEM.
 */
static int prefault(struct kmt_live *l, size_t bytes)
{
	size_t each = page_stride(l), done, k;

	for (done = 0; done < bytes; done += BLOCK_PAGES * each) {
		struct block *b = block_map(l);

		if (!b)
			return -ENOMEM;
		/* Touched page by page: MADV_POPULATE_WRITE is not in every kernel. */
		for (k = 0; k < b->size; k += 4096)
			((volatile unsigned char *)b)[k] = 0;
		b->next = l->blocks;
		l->blocks = b;
		for (k = 0; k < BLOCK_PAGES; k++) {
			struct kmt_live_page *p = (struct kmt_live_page *)(void *)(b->mem + k * each);

			p->next = l->spare;
			l->spare = p;
		}
		l->carved = BLOCK_PAGES;
	}
	return 0;
}

/* Queue @p (@len bytes read); waits while the queues are full, unless stopping. */
static void queue(struct lcpu *c, struct kmt_live_page *p, uint32_t len, uint64_t empty_ns)
{
	struct kmt_live *l = c->l;

	p->next = NULL;
	p->len = len;
	if (len < l->psize)
		memset(p->data + len, 0, l->psize - len);
	pthread_mutex_lock(&l->lock);
	while (l->max_bytes && l->queued >= l->max_bytes && !l->stopping)
		pthread_cond_wait(&l->room, &l->lock);
	if (c->tail)
		c->tail->next = p;
	else
		c->head = p;
	c->tail = p;
	c->bytes += l->psize;
	/* Written under the lock; read without it (kmt_live_queued): atomic. */
	__atomic_store_n(&l->queued, l->queued + l->psize, __ATOMIC_RELAXED);
	if (empty_ns)
		c->empty_ns = empty_ns;
	pthread_mutex_unlock(&l->lock);
}

/*
 * Is @p (@n bytes read) a page the writer had not filled: the header's
 * commit (after the u64 time stamp, a long; flags in bits 30 and 31) well
 * short of the page? A full page ends short only by the event that did
 * not fit, far less than the margin.
 */
static bool partial(const struct kmt_live *l, const struct kmt_live_page *p, size_t n)
{
	size_t hdr = 8 + sizeof(long);
	unsigned long commit;

	if (n < hdr)
		return true;
	memcpy(&commit, p->data + 8, sizeof(commit));
	commit &= (1UL << 27) - 1;
	return commit + 1024 < l->psize - hdr;
}

/*
 * Read the pages there are, up to the writer's: a partial page read right
 * after another partial one is the writer's (the first may be only the
 * rest of a page partly read before), and the buffer was caught up at
 * the time of that read. During the run, stop there or after a few MiB
 * (a stop is seen between them); at the end (@final, tracing off), read
 * until the buffer is empty. Returns pages read or -errno.
 */
#define DRAIN_CAP 1024
static long drain(struct lcpu *c, bool final)
{
	struct kmt_live *l = c->l;
	bool was_partial = false;
	long got = 0;

	while (final || got < DRAIN_CAP) {
		struct kmt_live_page *p = page_get(l);
		uint64_t t = kmt_now_ns();
		ssize_t n;

		if (!p)
			return kmt_diag_set(&c->diag, -ENOMEM, "CPU %d: out of memory", c->cpu);
		n = read(c->fd, p->data, l->psize);
		if (n < 0 && errno == EINTR) {
			kmt_live_put(l, p);
			continue;
		}
		if (n <= 0) {
			int err = n < 0 && errno != EAGAIN ? -errno : 0;

			kmt_live_put(l, p);
			if (err)
				return kmt_diag_set(&c->diag, err, "CPU %d: read: %s", c->cpu, strerror(-err));
			/* Empty: everything older than @t has been read. */
			pthread_mutex_lock(&l->lock);
			c->empty_ns = t;
			pthread_mutex_unlock(&l->lock);
			return got;
		}
		got++;
		if (partial(l, p, (size_t)n)) {
			if (was_partial && !final) {
				queue(c, p, (uint32_t)n, t);
				return got;
			}
			was_partial = true;
		} else {
			was_partial = false;
		}
		queue(c, p, (uint32_t)n, 0);
	}
	return got;
}

static void *lcpu_main(void *arg)
{
	struct lcpu *c = arg;
	struct kmt_live *l = c->l;
	struct pollfd pf[2] = { { c->fd, POLLIN, 0 }, { l->stop_fd, POLLIN, 0 } };
	char name[16];
	long r;

	c->tid = (pid_t)gettid();
	snprintf(name, sizeof(name), "kmt-live/%d", c->cpu);
	pthread_setname_np(pthread_self(), name);
	if (l->rt_prio > 0) {
		struct sched_param sp = { .sched_priority = l->rt_prio };

		if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
			setpriority(PRIO_PROCESS, (id_t)c->tid, -20);
	}
	sem_post(&l->ready);
	r = 0;
	while (!c->err) {
		/* Behind (the last drain stopped at its cap): only look for a stop. */
		int ret = poll(pf, 2, r >= DRAIN_CAP ? 0 : (int)l->period_ms);

		if (ret < 0 && errno != EINTR) {
			lcpu_fail(c, kmt_diag_set(&c->diag, -errno, "CPU %d: poll: %s", c->cpu, strerror(errno)));
			break;
		}
		if (pf[1].revents)
			break;
		if ((r = drain(c, false)) < 0)
			lcpu_fail(c, (int)r);
	}
	if (!c->err && (r = drain(c, true)) < 0)
		lcpu_fail(c, (int)r);
	return NULL;
}

struct open_job {
	struct kmt_live *l;
	const char *path;
};

static int open_one(void *arg, int i)
{
	struct open_job *j = arg;
	struct lcpu *c = &j->l->c[i];

	c->fd = kmt_instance_open_cpu(j->path, c->cpu, "trace_pipe_raw", O_RDONLY | O_NONBLOCK, &c->diag);
	return c->fd < 0 ? c->fd : 0;
}

/* Every CPU's trace_pipe_raw, on the CPUs at hand (kmt_parallel). */
static int open_all(struct kmt_live *l, const char *path, struct kmt_diag *d)
{
	struct open_job j = { l, path };
	int ret = kmt_parallel(l->n, open_one, &j), i;

	for (i = 0; ret && i < l->n; i++)
		if (l->c[i].diag.err)
			return kmt_diag_set(d, l->c[i].diag.err, "%s", l->c[i].diag.msg);
	return ret ? kmt_diag_set(d, ret, "cannot open the ring buffers: %s", strerror(-ret)) : 0;
}

struct kmt_live *kmt_live_start(const struct kmt_live_opts *o, struct kmt_diag *d)
{
	struct kmt_live *l = calloc(1, sizeof(*l));
	pthread_mutexattr_t ma;
	int i, k, ret;

	if (!l) {
		kmt_diag_set(d, -ENOMEM, "out of memory");
		return NULL;
	}
	l->n = o->nr_cpus;
	l->psize = o->subbuf_size;
	l->rt_prio = o->rt_prio;
	l->period_ms = o->period_ms ? o->period_ms : 200;
	l->max_bytes = o->max_bytes;
	l->stop_fd = eventfd(0, EFD_CLOEXEC);
	l->err_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	l->c = calloc((size_t)l->n + 1, sizeof(*l->c));
	sem_init(&l->ready, 0, 0);
	/*
	 * Priority inheritance: the readers run real-time, the analysis
	 * does not, and on a busy machine it can be preempted for seconds
	 * while it holds the lock (the readers then stall and the kernel
	 * overwrites what they did not read).
	 */
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&l->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	pthread_cond_init(&l->room, NULL);
	if (!l->c || l->stop_fd < 0 || l->err_fd < 0) {
		kmt_diag_set(d, -ENOMEM, "cannot set up the live readers");
		goto fail;
	}
	for (i = 0; i < l->n; i++)
		l->c[i].fd = -1;
	if (prefault(l, o->prefault_bytes)) {
		kmt_diag_set(d, -ENOMEM, "cannot set up the live readers' memory: %s", strerror(ENOMEM));
		goto fail;
	}
	for (i = 0; i < l->n; i++) {
		l->c[i].l = l;
		l->c[i].cpu = o->cpus[i];
	}
	if (open_all(l, o->instance_path, d))
		goto fail;
	/* All started, then all waited for: they set themselves up side by side. */
	for (i = 0; i < l->n; i++) {
		ret = pthread_create(&l->c[i].th, NULL, lcpu_main, &l->c[i]);
		if (ret) {
			kmt_diag_set(d, -ret, "cannot start a reader thread: %s", strerror(ret));
			break;
		}
		l->c[i].started = true;
	}
	for (k = 0; k < i; k++)
		sem_wait(&l->ready);
	if (i < l->n)
		goto fail;
	return l;
fail:
	kmt_live_stop(l, NULL);
	kmt_live_free(l);
	return NULL;
}

int kmt_live_tids(const struct kmt_live *l, pid_t *tids, int max)
{
	int i, n = 0;

	for (i = 0; i < l->n && n < max; i++)
		if (l->c[i].started)
			tids[n++] = l->c[i].tid;
	return n;
}

int kmt_live_error_fd(const struct kmt_live *l)
{
	return l->err_fd;
}

struct kmt_live_page *kmt_live_take(struct kmt_live *l, int i, uint64_t *empty_ns)
{
	struct lcpu *c = &l->c[i];
	struct kmt_live_page *p;

	pthread_mutex_lock(&l->lock);
	p = c->head;
	c->head = c->tail = NULL;
	__atomic_store_n(&l->queued, l->queued - MIN(c->bytes, l->queued), __ATOMIC_RELAXED);
	c->bytes = 0;
	*empty_ns = c->empty_ns;
	if (p)
		pthread_cond_broadcast(&l->room);
	pthread_mutex_unlock(&l->lock);
	return p;
}

void kmt_live_put(struct kmt_live *l, struct kmt_live_page *list)
{
	struct kmt_live_page *last = list;

	if (!list)
		return;
	while (last->next)
		last = last->next;
	pthread_mutex_lock(&l->lock);
	last->next = l->spare;
	l->spare = list;
	pthread_mutex_unlock(&l->lock);
}

uint64_t kmt_live_queued(const struct kmt_live *l)
{
	return __atomic_load_n(&l->queued, __ATOMIC_RELAXED);
}

int kmt_live_stop(struct kmt_live *l, struct kmt_diag *d)
{
	uint64_t one = 1;
	int i, err = 0;

	if (l->stop_fd >= 0 && write(l->stop_fd, &one, 8) < 0)
		err = -errno;
	pthread_mutex_lock(&l->lock);
	l->stopping = true;	/* the final drain must not wait for room */
	pthread_cond_broadcast(&l->room);
	pthread_mutex_unlock(&l->lock);
	for (i = 0; l->c && i < l->n; i++) {
		struct lcpu *c = &l->c[i];

		if (c->started) {
			pthread_join(c->th, NULL);
			c->started = false;
		}
		if (c->err && !err)
			err = kmt_diag_set(d, c->err, "%s", c->diag.msg);
		/* Closed now: the instance cannot go while they are open. */
		if (c->fd >= 0)
			close(c->fd);
		c->fd = -1;
	}
	return err;
}

void kmt_live_free(struct kmt_live *l)
{
	int i;

	if (!l)
		return;
	for (i = 0; l->c && i < l->n; i++)
		if (l->c[i].fd >= 0)
			close(l->c[i].fd);
	while (l->blocks) {
		struct block *b = l->blocks;

		l->blocks = b->next;
		munmap(b, b->size);
	}
	if (l->stop_fd >= 0)
		close(l->stop_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	sem_destroy(&l->ready);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->room);
	free(l->c);
	free(l);
}
