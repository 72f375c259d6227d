/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A hand-over of slots in order (include/kmemtrace/base.h): one thread
 * fills slots of a ring the caller owns, and each of the takers takes
 * every slot, in order, on a thread of its own. A slot is free again once
 * every taker has taken it. The model's shards (model-shards.c), top's
 * feed (src/top/top-feed.c), export's writer of Perfetto events
 * (hookpipe.c), SQLite's inserter (export-sqlite.c) and the big output
 * file's writer (outfile-big.c) hand their slots over through it.
 *
 * One lock and one condition, both ways; a side is woken only when it
 * sleeps (waiting), and only once what it waits for is there: a taker
 * that found nothing sleeps until take_low slots are given (or the end),
 * a filler that found the ring full until fill_low slots are free
 * (kmt_handoff_wake()). So a hand-over costs a lock, not a wake-up, while
 * both sides have work, and one wake-up for several slots when one side
 * is faster (analyse measured the same policy: bench/results/stages.md).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "kmt-local.h"

struct kmt_handoff {
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* on CLOCK_MONOTONIC (kmt_handoff_next_by()) */
	uint64_t given;			/* slots handed over */
	uint64_t done;			/* ... taken by every taker */
	unsigned int slots, takers;
	unsigned int fill_low, take_low;
	unsigned int waiting;		/* threads asleep on cv */
	unsigned int hurry;		/* ... in kmt_handoff_taken(): takers take what there is */
	uint64_t give_wake;		/* a sleeping taker's: wake once given reaches it */
	uint64_t done_wake;		/* the sleeping filler's: wake once done reaches it */
	bool end;
	uint64_t taken[];		/* ... by each taker */
};

struct kmt_handoff *kmt_handoff_new(unsigned int slots, unsigned int takers)
{
	struct kmt_handoff *h;
	pthread_condattr_t ca;

	if (!slots || !takers) {
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h) + takers * sizeof(h->taken[0]));
	if (!h)
		return NULL;
	pthread_mutex_init(&h->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->cv, &ca);
	pthread_condattr_destroy(&ca);
	h->slots = slots;
	h->takers = takers;
	h->fill_low = h->take_low = 1;
	h->give_wake = h->done_wake = UINT64_MAX;
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

int kmt_handoff_wake(struct kmt_handoff *h, unsigned int fill_low, unsigned int take_low)
{
	/*
	 * A filler waits for the slowest taker; that one must not wait for
	 * more than the ring then holds: take_low <= slots - fill_low + 1.
	 */
	if (!fill_low || !take_low || fill_low > h->slots || take_low > h->slots - fill_low + 1)
		return -EINVAL;
	h->fill_low = fill_low;
	h->take_low = take_low;
	return 0;
}

/*
 * Sleep on the condition (with the lock), counted so that the other side
 * wakes it; until CLOCK_MONOTONIC @until ns if not 0. False: timed out.
 */
static bool sleep_on(struct kmt_handoff *h, uint64_t until)
{
	struct timespec ts = { (time_t)(until / 1000000000ULL), (long)(until % 1000000000ULL) };
	bool woke = true;

	h->waiting++;
	if (!until)
		kmt_cond_wait(&h->cv, &h->mu);
	else
		woke = pthread_cond_timedwait(&h->cv, &h->mu, &ts) != ETIMEDOUT;
	h->waiting--;
	return woke;
}

/* Wake the sleepers (with the lock), if what one waits for is there. */
static void wake(struct kmt_handoff *h)
{
	if (!h->waiting || (h->given < h->give_wake && h->done < h->done_wake && !h->end))
		return;
	h->give_wake = h->done_wake = UINT64_MAX;
	pthread_cond_broadcast(&h->cv);
}

uint64_t kmt_handoff_room(struct kmt_handoff *h)
{
	uint64_t n;

	kmt_lock(&h->mu);
	if (h->given - h->done >= h->slots) {
		/* Full: wait for room for fill_low, not one. */
		while (h->given - h->done > h->slots - h->fill_low) {
			h->done_wake = MIN(h->done_wake, h->given - (h->slots - h->fill_low));
			sleep_on(h, 0);
		}
	}
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
	if (wait && h->done < n) {
		h->hurry++;
		if (h->waiting)
			pthread_cond_broadcast(&h->cv);
		while (h->done < n) {
			h->done_wake = MIN(h->done_wake, n);
			sleep_on(h, 0);
		}
		h->hurry--;
	}
	taken = h->done >= n;
	pthread_mutex_unlock(&h->mu);
	return taken;
}

int kmt_handoff_next_by(struct kmt_handoff *h, unsigned int k, uint64_t *slot, uint64_t until)
{
	int got;

	kmt_lock(&h->mu);
	if (h->taken[k] == h->given && !h->end && until != KMT_HANDOFF_NOW) {
		/* Nothing: wait for take_low slots, not one. */
		while (h->given - h->taken[k] < (h->hurry ? 1 : h->take_low) && !h->end) {
			h->give_wake = MIN(h->give_wake, h->taken[k] + (h->hurry ? 1 : h->take_low));
			if (!sleep_on(h, until))
				break;
		}
	}
	got = h->taken[k] < h->given ? 1 : h->end ? 0 : -ETIMEDOUT;
	*slot = h->taken[k];
	pthread_mutex_unlock(&h->mu);
	return got;
}

bool kmt_handoff_next(struct kmt_handoff *h, unsigned int k, uint64_t *slot)
{
	return kmt_handoff_next_by(h, k, slot, 0) > 0;
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
