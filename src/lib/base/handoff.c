/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A hand-over of slots in order (include/kmemtrace/base.h): one thread
 * fills slots of a ring the caller owns, and each of the takers takes
 * every slot, in order, on a thread of its own. A slot is free again once
 * every taker has taken it. The model's shards (model-shards.c), export's
 * writer of Perfetto events (hookpipe.c) and SQLite's inserter
 * (export-sqlite.c) hand their batches over through it.
 *
 * One lock and one condition, both ways; a side is woken only when it
 * sleeps (waiting), so a hand-over costs a lock, not a wake-up, while both
 * sides have work.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "kmt-local.h"

struct kmt_handoff {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t given;			/* slots handed over */
	uint64_t done;			/* ... taken by every taker */
	unsigned int slots, takers;
	unsigned int waiting;		/* threads asleep on cv */
	bool end;
	uint64_t taken[];		/* ... by each taker */
};

struct kmt_handoff *kmt_handoff_new(unsigned int slots, unsigned int takers)
{
	struct kmt_handoff *h;

	if (!slots || !takers) {
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h) + takers * sizeof(h->taken[0]));
	if (!h)
		return NULL;
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	h->slots = slots;
	h->takers = takers;
	return h;
}

void kmt_handoff_free(struct kmt_handoff *h)
{
	if (!h)
		return;
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

/* Sleep on the condition (with the lock), counted so that the other side wakes it. */
static void sleep_on(struct kmt_handoff *h)
{
	h->waiting++;
	kmt_cond_wait(&h->cv, &h->mu);
	h->waiting--;
}

static void wake(struct kmt_handoff *h)
{
	if (h->waiting)
		pthread_cond_broadcast(&h->cv);
}

uint64_t kmt_handoff_room(struct kmt_handoff *h)
{
	uint64_t n;

	kmt_lock(&h->mu);
	while (h->given - h->done >= h->slots)
		sleep_on(h);
	n = h->given;
	pthread_mutex_unlock(&h->mu);
	return n;
}

void kmt_handoff_give(struct kmt_handoff *h)
{
	kmt_lock(&h->mu);
	h->given++;
	wake(h);
	pthread_mutex_unlock(&h->mu);
}

void kmt_handoff_end(struct kmt_handoff *h)
{
	kmt_lock(&h->mu);
	h->end = true;
	wake(h);
	pthread_mutex_unlock(&h->mu);
}

uint64_t kmt_handoff_given(const struct kmt_handoff *h)
{
	return h->given;	/* the filler's own count */
}

bool kmt_handoff_taken(struct kmt_handoff *h, uint64_t n, bool wait)
{
	bool taken;

	kmt_lock(&h->mu);
	while (wait && h->done < n)
		sleep_on(h);
	taken = h->done >= n;
	pthread_mutex_unlock(&h->mu);
	return taken;
}

bool kmt_handoff_next(struct kmt_handoff *h, unsigned int k, uint64_t *slot)
{
	bool got;

	kmt_lock(&h->mu);
	while (h->taken[k] == h->given && !h->end)
		sleep_on(h);
	got = h->taken[k] < h->given;
	*slot = h->taken[k];
	pthread_mutex_unlock(&h->mu);
	return got;
}

void kmt_handoff_took(struct kmt_handoff *h, unsigned int k)
{
	uint64_t least;
	unsigned int i;

	kmt_lock(&h->mu);
	h->taken[k]++;
	for (least = h->taken[0], i = 1; i < h->takers; i++)
		least = MIN(least, h->taken[i]);
	if (least != h->done) {
		h->done = least;
		wake(h);
	}
	pthread_mutex_unlock(&h->mu);
}
