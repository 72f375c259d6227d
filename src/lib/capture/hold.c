/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * In-memory page queues for the recorder (see hold.h).
 *
 * Each CPU has a FIFO of pipes. The reader splices pages into the tail
 * pipe, which only it touches, until it is full, then seals it and starts
 * another; sealed pipes are spliced into the spool file, in order, by
 * whoever holds the CPU's file lock: the idle-priority flusher normally,
 * the reader itself when the memory limit is reached. The queue lock is
 * held only for bookkeeping. Both locks inherit priority, so a reader
 * waiting for the flusher lends it its real-time priority instead of
 * waiting for the machine to go idle. Pipe capacity is raised with
 * F_SETPIPE_SZ (root may exceed pipe-max-size); if the kernel refuses a
 * size, smaller ones are tried.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "hold.h"
#include "base/kmt-local.h"

#define PIPE_BYTES_MAX (16u << 20)
#define PIPE_BYTES_MIN (64u << 10)
#define PAGE 4096u

struct hpipe {
	int r, w;
	size_t cap, bytes;
};

struct hcpu {
	pthread_mutex_t lock;		/* the queue's indices and spares */
	pthread_mutex_t file;		/* writes to out_fd, in queue order */
	struct hpipe *q;		/* ring of pipes: head .. tail */
	int qcap, head, len;		/* len: pipes in the queue, tail open */
	struct hpipe *spare;		/* emptied pipes for reuse */
	int nspare;
	int out_fd;
	_Atomic uint64_t in;
	int err;
	char why[160];
};

struct hold {
	int n;
	struct hcpu *c;
	size_t limit;
	_Atomic uint64_t held;
	pthread_t flusher;
	bool running;
	_Atomic int flusher_tid;
	pthread_mutex_t wake_lock;
	pthread_cond_t wake;
	bool stop, kick;
};

/* The first error of @c's queue, kept for whoever asks next. */
static void set_err(struct hcpu *c, int err, const char *what)
{
	if (!c->err) {
		c->err = err;
		snprintf(c->why, sizeof(c->why), "%s: %s", what, strerror(-err));
	}
}

static int pipe_new(struct hpipe *p, size_t want)
{
	size_t sz;
	int fds[2];

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	p->r = fds[0];
	p->w = fds[1];
	for (sz = want; sz >= PIPE_BYTES_MIN; sz /= 2) {
		int got = fcntl(p->w, F_SETPIPE_SZ, (int)sz);

		if (got > 0) {
			p->cap = (size_t)got;
			p->bytes = 0;
			return 0;
		}
	}
	p->cap = 65536;		/* the default pipe */
	p->bytes = 0;
	return 0;
}

static void pipe_close(struct hpipe *p)
{
	close(p->r);
	close(p->w);
}

struct hold *hold_new(int n, const int *out_fds, size_t limit)
{
	struct hold *h = calloc(1, sizeof(*h));
	pthread_mutexattr_t pi;
	int i;

	if (!h)
		return NULL;
	h->n = n;
	h->limit = limit;
	h->c = calloc((size_t)n + 1, sizeof(*h->c));
	if (!h->c) {
		free(h);
		return NULL;
	}
	pthread_mutex_init(&h->wake_lock, NULL);
	pthread_cond_init(&h->wake, NULL);
	pthread_mutexattr_init(&pi);
	pthread_mutexattr_setprotocol(&pi, PTHREAD_PRIO_INHERIT);
	for (i = 0; i < n; i++) {
		struct hcpu *c = &h->c[i];

		pthread_mutex_init(&c->lock, &pi);
		pthread_mutex_init(&c->file, &pi);
		c->out_fd = out_fds[i];
		c->qcap = 8;
		c->q = calloc((size_t)c->qcap, sizeof(*c->q));
		c->spare = calloc((size_t)c->qcap, sizeof(*c->spare));
		if (!c->q || !c->spare) {
			hold_free(h);
			errno = ENOMEM;
			return NULL;
		}
	}
	return h;
}

/*
 * Write the head pipe of @c to its file and recycle it. @all: the open
 * tail too (at the end). Returns 1 if a pipe was written, 0 if none was
 * ready, or an error. Takes the locks itself.
 */
/* The head pipe @p is empty: off the queue, kept as a spare. Under c->lock. */
static void pop_head(struct hcpu *c, struct hpipe *p)
{
	c->head = (c->head + 1) % c->qcap;
	c->len--;
	if (c->nspare < c->qcap)
		c->spare[c->nspare++] = *p;
	else
		pipe_close(p);
}

static int flush_head(struct hold *h, struct hcpu *c, bool all)
{
	struct hpipe p;
	int ret = 1;

	pthread_mutex_lock(&c->file);
	pthread_mutex_lock(&c->lock);
	if (c->err || c->len < (all ? 1 : 2)) {
		ret = c->err ? c->err : 0;
		pthread_mutex_unlock(&c->lock);
		pthread_mutex_unlock(&c->file);
		return ret;
	}
	p = c->q[c->head];
	pthread_mutex_unlock(&c->lock);
	while (p.bytes) {
		ssize_t m = splice(p.r, NULL, c->out_fd, NULL, p.bytes, SPLICE_F_MOVE);

		if (m < 0 && errno == EINTR)
			continue;
		if (m <= 0) {
			pthread_mutex_lock(&c->lock);
			c->q[c->head].bytes = p.bytes;	/* what the pipe still has */
			set_err(c, m < 0 ? -errno : -EIO, "writing the spool file");
			ret = c->err;
			pthread_mutex_unlock(&c->lock);
			pthread_mutex_unlock(&c->file);
			return ret;
		}
		p.bytes -= (size_t)m;
		atomic_fetch_sub(&h->held, (uint64_t)m);
	}
	pthread_mutex_lock(&c->lock);
	pop_head(c, &p);
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_unlock(&c->file);
	return ret;
}

/* Wake the flusher: a pipe was sealed. */
static void kick(struct hold *h)
{
	pthread_mutex_lock(&h->wake_lock);
	h->kick = true;
	pthread_cond_signal(&h->wake);
	pthread_mutex_unlock(&h->wake_lock);
}

/*
 * The open tail pipe of @c, sealing a full one and adding another if
 * needed. Only the reader calls this, so the pointer stays valid until
 * its next call. NULL + errno on failure.
 */
static struct hpipe *tail_pipe(struct hold *h, struct hcpu *c)
{
	struct hpipe *t = NULL, np;
	bool sealed = false;
	int ret;

	pthread_mutex_lock(&c->lock);
	if (c->len) {
		t = &c->q[(c->head + c->len - 1) % c->qcap];
		if (t->cap - t->bytes >= PAGE) {
			pthread_mutex_unlock(&c->lock);
			return t;
		}
		sealed = true;
	}
	if (c->nspare) {
		np = c->spare[--c->nspare];
		np.bytes = 0;
	} else {
		pthread_mutex_unlock(&c->lock);
		ret = pipe_new(&np, h->limit ? MIN((size_t)PIPE_BYTES_MAX, h->limit / (size_t)h->n) : 1u << 20);
		if (ret) {
			errno = -ret;
			return NULL;
		}
		pthread_mutex_lock(&c->lock);
	}
	if (c->len == c->qcap) {
		int nc = c->qcap * 2, k;
		struct hpipe *nq = calloc((size_t)nc, sizeof(*nq)), *ns = NULL;

		if (nq)
			ns = realloc(c->spare, sizeof(*ns) * (size_t)nc);
		if (!nq || !ns) {
			free(nq);
			pthread_mutex_unlock(&c->lock);
			pipe_close(&np);
			errno = ENOMEM;
			return NULL;
		}
		for (k = 0; k < c->len; k++)
			nq[k] = c->q[(c->head + k) % c->qcap];
		free(c->q);
		c->q = nq;
		c->spare = ns;
		c->head = 0;
		c->qcap = nc;
	}
	t = &c->q[(c->head + c->len) % c->qcap];
	*t = np;
	c->len++;
	pthread_mutex_unlock(&c->lock);
	if (sealed && h->limit)
		kick(h);
	return t;
}

/* Over the limit? Then the reader writes out its own sealed pipes. */
static int make_room(struct hold *h, struct hcpu *c)
{
	int ret = 1;

	if (!h->limit) {
		/* Write-through: everything goes out now, the open pipe too. */
		while ((ret = flush_head(h, c, true)) > 0)
			;
		return ret;
	}
	while (atomic_load(&h->held) >= h->limit && (ret = flush_head(h, c, false)) > 0)
		;
	return ret < 0 ? ret : 0;
}

long hold_splice_in(struct hold *h, int i, int in_fd, struct kmt_diag *d)
{
	struct hcpu *c = &h->c[i];
	long total = 0;
	int ret = 0;

	for (;;) {
		struct hpipe *t = tail_pipe(h, c);
		ssize_t n;

		if (!t) {
			ret = kmt_diag_set(d, -errno, "creating a pipe: %s", strerror(errno));
			break;
		}
		n = splice(in_fd, NULL, t->w, NULL, t->cap - t->bytes, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) {
			ret = kmt_diag_set(d, -errno, "reading trace_pipe_raw: %s", strerror(errno));
			break;
		}
		if (n == 0)
			break;
		t->bytes += (size_t)n;
		total += n;
		atomic_fetch_add(&c->in, (uint64_t)n);
		atomic_fetch_add(&h->held, (uint64_t)n);
		ret = make_room(h, c);
		if (ret < 0) {
			kmt_diag_set(d, ret, "%s", c->why);
			break;
		}
	}
	return ret < 0 ? ret : total;
}

int hold_write_in(struct hold *h, int i, const void *buf, size_t len, struct kmt_diag *d)
{
	struct hcpu *c = &h->c[i];
	const char *p = buf;
	int ret = 0;

	while (len && !ret) {
		struct hpipe *t = tail_pipe(h, c);
		ssize_t n;

		if (!t) {
			ret = kmt_diag_set(d, -errno, "creating a pipe: %s", strerror(errno));
			break;
		}
		n = write(t->w, p, MIN(len, t->cap - t->bytes));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			kmt_diag_set(d, ret, "queueing a page: %s", strerror(-ret));
			break;
		}
		t->bytes += (size_t)n;
		p += n;
		len -= (size_t)n;
		atomic_fetch_add(&c->in, (uint64_t)n);
		atomic_fetch_add(&h->held, (uint64_t)n);
		ret = make_room(h, c);
		if (ret < 0)
			kmt_diag_set(d, ret, "%s", c->why);
	}
	return ret < 0 ? ret : 0;
}

static void *flusher_main(void *arg)
{
	struct hold *h = arg;
	struct sched_param sp = { 0 };

	h->flusher_tid = (int)gettid();
	pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	pthread_setname_np(pthread_self(), "kmemtrace/flush");
	for (;;) {
		bool worked = false;
		int i;

		/* A pipe per CPU in turn: a full disk cuts every CPU alike. */
		for (i = 0; i < h->n; i++)
			if (flush_head(h, &h->c[i], false) > 0)
				worked = true;
		pthread_mutex_lock(&h->wake_lock);
		if (h->stop) {
			pthread_mutex_unlock(&h->wake_lock);
			break;
		}
		if (!worked && !h->kick)
			pthread_cond_wait(&h->wake, &h->wake_lock);
		h->kick = false;
		pthread_mutex_unlock(&h->wake_lock);
	}
	return NULL;
}

int hold_start(struct hold *h)
{
	int ret;

	if (!h->limit)
		return 0;
	ret = pthread_create(&h->flusher, NULL, flusher_main, h);
	if (ret)
		return -ret;
	h->running = true;
	while (!atomic_load(&h->flusher_tid))
		sched_yield();
	return 0;
}

struct drain {
	struct hold *h;
	struct hcpu *c;
	pthread_t th;
	bool started;
};

static void *drain_main(void *arg)
{
	struct drain *dr = arg;

	while (flush_head(dr->h, dr->c, true) > 0)
		;
	return NULL;
}

void hold_seal(struct hold *h)
{
	if (h->running) {
		pthread_mutex_lock(&h->wake_lock);
		h->stop = true;
		pthread_cond_signal(&h->wake);
		pthread_mutex_unlock(&h->wake_lock);
		pthread_join(h->flusher, NULL);
		h->running = false;
	}
}

uint64_t hold_queued(struct hold *h, int i)
{
	struct hcpu *c = &h->c[i];
	uint64_t n = 0;
	int k;

	pthread_mutex_lock(&c->lock);
	for (k = 0; k < c->len; k++)
		n += c->q[(c->head + k) % c->qcap].bytes;
	pthread_mutex_unlock(&c->lock);
	return n;
}

/* Copy out of the head pipes, in order; each page goes back as it is read. */
int hold_read(struct hold *h, int i, void *buf, size_t len, struct kmt_diag *d)
{
	struct hcpu *c = &h->c[i];
	char *p = buf;

	pthread_mutex_lock(&c->file);
	while (len) {
		struct hpipe *hp = c->len ? &c->q[c->head] : NULL;
		ssize_t n;
		int avail;

		if (!hp) {
			pthread_mutex_unlock(&c->file);
			return kmt_diag_set(d, -EIO, "CPU index %d: the held pages ended early", i);
		}
		if (!hp->bytes) {
			pthread_mutex_lock(&c->lock);
			pop_head(c, hp);
			pthread_mutex_unlock(&c->lock);
			continue;
		}
		/* The count must be right: a read past it would wait forever. */
		if (ioctl(hp->r, FIONREAD, &avail) || (size_t)avail < MIN(len, hp->bytes)) {
			pthread_mutex_unlock(&c->file);
			return kmt_diag_set(d, -EIO, "CPU index %d: a held pipe has less than counted", i);
		}
		n = read(hp->r, p, MIN(len, hp->bytes));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? -errno : -EIO;

			pthread_mutex_unlock(&c->file);
			return kmt_diag_set(d, err, "reading held pages: %s", strerror(-err));
		}
		hp->bytes -= (size_t)n;
		atomic_fetch_sub(&h->held, (uint64_t)n);
		p += n;
		len -= (size_t)n;
	}
	pthread_mutex_unlock(&c->file);
	return 0;
}

/*
 * Everything still held goes to the files, every CPU's queue on its own
 * thread: at the end of a busy run this is most of the data, and the
 * writes into the page cache are CPU work that scales with the cores.
 */
int hold_finish(struct hold *h, struct kmt_diag *d)
{
	struct drain *dr = calloc((size_t)h->n, sizeof(*dr));
	int i, ret = 0;

	hold_seal(h);
	for (i = 0; dr && i < h->n; i++) {
		dr[i] = (struct drain){ .h = h, .c = &h->c[i] };
		dr[i].started = !pthread_create(&dr[i].th, NULL, drain_main, &dr[i]);
	}
	for (i = 0; i < h->n; i++) {
		struct hcpu *c = &h->c[i];

		if (dr && dr[i].started)
			pthread_join(dr[i].th, NULL);
		else
			while (flush_head(h, c, true) > 0)
				;
		if (c->err && !ret)
			ret = kmt_diag_set(d, c->err, "%s", c->why);
	}
	free(dr);
	return ret;
}

uint64_t hold_bytes_in(const struct hold *h, int i)
{
	return atomic_load(&h->c[i].in);
}

uint64_t hold_held(const struct hold *h)
{
	return atomic_load(&h->held);
}

int hold_flusher_tid(const struct hold *h)
{
	return atomic_load(&h->flusher_tid);
}

void hold_free(struct hold *h)
{
	int i, k;

	if (!h)
		return;
	for (i = 0; i < h->n; i++) {
		struct hcpu *c = &h->c[i];

		for (k = 0; c->q && k < c->len; k++)
			pipe_close(&c->q[(c->head + k) % c->qcap]);
		for (k = 0; k < c->nspare; k++)
			pipe_close(&c->spare[k]);
		free(c->q);
		free(c->spare);
		pthread_mutex_destroy(&c->lock);
		pthread_mutex_destroy(&c->file);
	}
	pthread_mutex_destroy(&h->wake_lock);
	pthread_cond_destroy(&h->wake);
	free(h->c);
	free(h);
}
