/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Hardware data watchpoints (include/kmemtrace/watch.h), after
 * perf_event_open(2): per CPU a dummy software event owns an mmap'd ring;
 * each slot has a write and a read-write breakpoint per CPU whose samples
 * are redirected there (PERF_EVENT_IOC_SET_OUTPUT), identified by
 * PERF_SAMPLE_IDENTIFIER.
 */
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/watch.h>
#include "base/kmt-local.h"

#define SAMPLE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU)

struct bp {
	int fd;				/* -1: not open */
	uint64_t id;
	struct perf_event_attr attr;
};

struct ring {
	int fd;				/* the dummy event */
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t size;
	struct kmt_hwbp_hit pending;	/* a sample waiting for its pair */
	bool has_pending;
	bool pending_w;			/* it came from the write breakpoint */
	uint64_t lost;
};

struct kmt_hwbp {
	int nr_cpus, slots;
	int *cpus;
	struct ring *ring;
	struct bp (*bp)[KMT_HWBP_MAX_SLOTS][2];	/* [cpu][slot][0 = W, 1 = RW] */
	unsigned int pages;
};

static int peo(struct perf_event_attr *a, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void base_attr(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->sample_period = 1;
	a->sample_type = SAMPLE;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->exclude_user = 1;
	a->wakeup_events = 1;
}

static int open_error(struct kmt_diag *d, int err, const char *what)
{
	const char *hint = "";

	if (err == -EACCES || err == -EPERM)
		hint = " (needs root or CAP_PERFMON, and perf_event_paranoid allowing kernel events)";
	else if (err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV)
		hint = " (this kernel or machine has no hardware breakpoints)";
	else if (err == -ENOSPC)
		hint = " (the CPU's debug registers are taken, e.g. by a debugger)";
	return kmt_diag_set(d, err, "cannot open %s: %s%s", what, strerror(-err), hint);
}

struct kmt_hwbp *kmt_hwbp_open(const int *cpus, int nr_cpus, int slots, unsigned int ring_pages,
			       struct kmt_diag *d)
{
	struct kmt_hwbp *h;
	long psize = sysconf(_SC_PAGESIZE);
	int i, s, k;

	if (nr_cpus < 1 || nr_cpus > KMT_MAX_CPUS || slots < 1 || slots > KMT_HWBP_MAX_SLOTS ||
	    !ring_pages || (ring_pages & (ring_pages - 1))) {
		kmt_diag_set(d, -EINVAL, "bad watchpoint set-up (%d CPUs, %d slots, %u pages)",
			     nr_cpus, slots, ring_pages);
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (h) {
		h->cpus = calloc((size_t)nr_cpus, sizeof(*h->cpus));
		h->ring = calloc((size_t)nr_cpus, sizeof(*h->ring));
		h->bp = calloc((size_t)nr_cpus, sizeof(*h->bp));
	}
	if (!h || !h->cpus || !h->ring || !h->bp) {
		kmt_hwbp_close(h);
		kmt_diag_set(d, -ENOMEM, "out of memory");
		return NULL;
	}
	h->nr_cpus = nr_cpus;
	h->slots = slots;
	h->pages = ring_pages;
	for (i = 0; i < nr_cpus; i++) {
		h->cpus[i] = cpus[i];
		h->ring[i].fd = -1;
		for (s = 0; s < KMT_HWBP_MAX_SLOTS; s++)
			for (k = 0; k < 2; k++)
				h->bp[i][s][k].fd = -1;
	}
	for (i = 0; i < nr_cpus; i++) {
		struct ring *r = &h->ring[i];
		struct perf_event_attr a;
		void *m;

		base_attr(&a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_DUMMY;
		a.sample_period = 0;
		r->fd = peo(&a, cpus[i]);
		if (r->fd < 0) {
			char what[64];

			snprintf(what, sizeof(what), "the sample ring of CPU %d", cpus[i]);
			open_error(d, -errno, what);
			goto fail;
		}
		m = mmap(NULL, (size_t)(ring_pages + 1) * (size_t)psize, PROT_READ | PROT_WRITE,
			 MAP_SHARED, r->fd, 0);
		if (m == MAP_FAILED) {
			kmt_diag_set(d, -errno, "cannot map the sample ring of CPU %d: %s", cpus[i],
				     strerror(errno));
			goto fail;
		}
		r->meta = m;
		r->data = (uint8_t *)m + psize;
		r->size = (uint64_t)ring_pages * (uint64_t)psize;
	}
	return h;
fail:
	kmt_hwbp_close(h);
	return NULL;
}

int kmt_hwbp_slots(const struct kmt_hwbp *h)
{
	return h->slots;
}

static int len_code(unsigned int len)
{
	switch (len) {
	case 1: return HW_BREAKPOINT_LEN_1;
	case 2: return HW_BREAKPOINT_LEN_2;
	case 4: return HW_BREAKPOINT_LEN_4;
	case 8: return HW_BREAKPOINT_LEN_8;
	}
	return -1;
}

/* Open the breakpoint @k of @slot on CPU index @i at @addr, enabled. */
static int bp_open(struct kmt_hwbp *h, int i, int slot, int k, uint64_t addr, unsigned int len,
		   struct kmt_diag *d)
{
	struct bp *b = &h->bp[i][slot][k];
	char what[96];
	int err;

	base_attr(&b->attr);
	b->attr.type = PERF_TYPE_BREAKPOINT;
	b->attr.bp_type = k ? HW_BREAKPOINT_RW : HW_BREAKPOINT_W;
	b->attr.bp_addr = addr;
	b->attr.bp_len = (uint64_t)len_code(len);
	b->fd = peo(&b->attr, h->cpus[i]);
	if (b->fd < 0) {
		err = -errno;
		snprintf(what, sizeof(what), "a hardware watchpoint on CPU %d", h->cpus[i]);
		return open_error(d, err, what);
	}
	if (ioctl(b->fd, PERF_EVENT_IOC_SET_OUTPUT, h->ring[i].fd) ||
	    ioctl(b->fd, PERF_EVENT_IOC_ID, &b->id)) {
		err = -errno;
		close(b->fd);
		b->fd = -1;
		return kmt_diag_set(d, err, "cannot attach a watchpoint to its ring: %s", strerror(-err));
	}
	return 0;
}

int kmt_hwbp_arm(struct kmt_hwbp *h, int slot, uint64_t addr, unsigned int len,
		 struct kmt_diag *d)
{
	int i, k, ret;

	if (slot < 0 || slot >= h->slots || len_code(len) < 0 || (addr & (len - 1)))
		return kmt_diag_set(d, -EINVAL, "bad watchpoint: slot %d, %u bytes at %#llx", slot, len,
				    (unsigned long long)addr);
	for (i = 0; i < h->nr_cpus; i++)
		for (k = 0; k < 2; k++) {
			struct bp *b = &h->bp[i][slot][k];

			if (b->fd < 0) {
				ret = bp_open(h, i, slot, k, addr, len, d);
				if (ret)
					return ret;
				continue;
			}
			b->attr.bp_addr = addr;
			b->attr.bp_len = (uint64_t)len_code(len);
			b->attr.disabled = 0;
			if (ioctl(b->fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &b->attr))
				return kmt_diag_set(d, -errno, "cannot move a watchpoint to %#llx: %s",
						    (unsigned long long)addr, strerror(errno));
		}
	return 0;
}

int kmt_hwbp_disarm(struct kmt_hwbp *h, int slot)
{
	int i, k, ret = 0;

	if (slot < 0 || slot >= h->slots)
		return -EINVAL;
	for (i = 0; i < h->nr_cpus; i++)
		for (k = 0; k < 2; k++) {
			struct bp *b = &h->bp[i][slot][k];

			if (b->fd >= 0 && ioctl(b->fd, PERF_EVENT_IOC_DISABLE, 0))
				ret = -errno;
			b->attr.disabled = 1;
		}
	return ret;
}

int kmt_hwbp_fds(const struct kmt_hwbp *h, int *fds, int max)
{
	int i;

	for (i = 0; i < h->nr_cpus && i < max; i++)
		fds[i] = h->ring[i].fd;
	return i;
}

/* Which breakpoint an id belongs to: slot and kind, or -1. */
static int lookup(const struct kmt_hwbp *h, int i, uint64_t id, bool *w)
{
	int s, k;

	for (s = 0; s < h->slots; s++)
		for (k = 0; k < 2; k++)
			if (h->bp[i][s][k].fd >= 0 && h->bp[i][s][k].id == id) {
				*w = k == 0;
				return s;
			}
	return -1;
}

static bool same_access(const struct kmt_hwbp_hit *a, const struct kmt_hwbp_hit *b)
{
	return a->slot == b->slot && a->ip == b->ip && a->tid == b->tid && a->addr == b->addr;
}

/* One sample: pair it with the pending one, or hand the pending one out. */
static int take(struct ring *r, struct kmt_hwbp_hit *hit, bool w,
		void (*fn)(void *arg, const struct kmt_hwbp_hit *hit), void *arg)
{
	int n = 0;

	if (r->has_pending) {
		if (r->pending_w != w && same_access(&r->pending, hit)) {
			/* The two halves of one write. */
			r->pending.write = true;
			fn(arg, &r->pending);
			r->has_pending = false;
			return 1;
		}
		fn(arg, &r->pending);
		n++;
	}
	hit->write = w;
	r->pending = *hit;
	r->pending_w = w;
	r->has_pending = true;
	return n;
}

int kmt_hwbp_read(struct kmt_hwbp *h, bool final,
		  void (*fn)(void *arg, const struct kmt_hwbp_hit *hit), void *arg)
{
	int i, n = 0;

	for (i = 0; i < h->nr_cpus; i++) {
		struct ring *r = &h->ring[i];
		uint64_t head, tail;

		if (!r->meta)
			continue;
		head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
		tail = r->meta->data_tail;
		while (tail < head) {
			struct perf_event_header eh;
			uint8_t rec[256];
			uint64_t off = tail % r->size, j;

			for (j = 0; j < sizeof(eh); j++)
				((uint8_t *)&eh)[j] = r->data[(off + j) % r->size];
			if (eh.size < sizeof(eh) || tail + eh.size > head)
				break;
			for (j = 0; j < MIN((uint64_t)eh.size, sizeof(rec)); j++)
				rec[j] = r->data[(off + j) % r->size];
			tail += eh.size;
			if (eh.type == PERF_RECORD_SAMPLE && eh.size >= sizeof(eh) + 48) {
				const uint8_t *p = rec + sizeof(eh);
				struct kmt_hwbp_hit hit = { 0 };
				uint64_t id = ld64(p, false);
				bool w;

				hit.slot = lookup(h, i, id, &w);
				if (hit.slot < 0)
					continue;
				hit.ip = ld64(p + 8, false);
				hit.pid = (int32_t)ld32(p + 16, false);
				hit.tid = (int32_t)ld32(p + 20, false);
				hit.ts = ld64(p + 24, false);
				hit.addr = ld64(p + 32, false);
				hit.cpu = (int)ld32(p + 40, false);
				n += take(r, &hit, w, fn, arg);
			} else if (eh.type == PERF_RECORD_LOST && eh.size >= sizeof(eh) + 16) {
				r->lost += ld64(rec + sizeof(eh) + 8, false);
			} else if (eh.type == PERF_RECORD_THROTTLE) {
				r->lost++;	/* samples are being skipped from here */
			}
		}
		__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
		if (final && r->has_pending) {
			fn(arg, &r->pending);
			r->has_pending = false;
			n++;
		}
	}
	return n;
}

uint64_t kmt_hwbp_lost(const struct kmt_hwbp *h, int i)
{
	return i >= 0 && i < h->nr_cpus ? h->ring[i].lost : 0;
}

void kmt_hwbp_close(struct kmt_hwbp *h)
{
	long psize = sysconf(_SC_PAGESIZE);
	int i, s, k;

	if (!h)
		return;
	for (i = 0; h->ring && h->bp && i < h->nr_cpus; i++) {
		for (s = 0; s < KMT_HWBP_MAX_SLOTS; s++)
			for (k = 0; k < 2; k++)
				if (h->bp[i][s][k].fd >= 0)
					close(h->bp[i][s][k].fd);
		if (h->ring[i].meta)
			munmap(h->ring[i].meta, (size_t)(h->pages + 1) * (size_t)psize);
		if (h->ring[i].fd >= 0)
			close(h->ring[i].fd);
	}
	free(h->cpus);
	free(h->ring);
	free(h->bp);
	free(h);
}
