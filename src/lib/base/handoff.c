/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A hand-over of slots in order (include/kmemtrace/base.h): one thread
 * fills slots of a ring the caller owns, and each of the takers takes
 * every slot, in order, on a thread of its own; takers may come in stages,
 * a taker of stage s taking a slot once every taker of stage s - 1 has
 * taken it (the producer -> shard 0 -> the other shards -> the writer of
 * kmt_analyse(), analyse-stages.c). A slot is free again once every taker
 * has taken it. kmt_analyse()'s batches, the live pipeline's
 * (analyse-live.c), the model's live shards (model-shards.c), export's
 * writer of Perfetto events (hookpipe.c), SQLite's inserter
 * (export-sqlite.c) and the big output file's writer (outfile-big.c) go
 * through it.
 *
 * One lock and one condition, both ways; a side is woken only when it
 * sleeps (waiting), and only once what it waits for is there: a taker
 * that found nothing sleeps until its low slots are there (or the end), a
 * filler that found the ring full until fill_low slots are free
 * (kmt_handoff_wake(), kmt_handoff_stage()). So a hand-over costs a lock,
 * not a wake-up, while both sides have work, and one wake-up for several
 * slots when one side is faster (bench/results/stages.md).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "kmt-local.h"

enum { W_FILL, W_TAKEN };	/* who waits for done */

struct taker {
	uint64_t taken;
	unsigned int stage, low;
	bool sleeps;
	pthread_cond_t cv;		/* it sleeps on its own: woken alone */
};

struct kmt_handoff {
	pthread_mutex_t mu;
	pthread_cond_t cv[2];		/* for done: the filler's (W_FILL), kmt_handoff_taken()'s (W_TAKEN) */
	uint64_t given;			/* slots handed over */
	uint64_t done;			/* ... taken by every taker */
	unsigned int slots, takers;
	unsigned int fill_low;
	unsigned int waiting[2];	/* threads asleep on each */
	uint64_t done_wake[2];		/* ... the first of them wakes once done gets here */
	unsigned int sleepers;		/* takers asleep on theirs */
	bool staged;			/* a taker after stage 0 */
	bool end, stop, hurry;
	struct taker t[];
};

struct kmt_handoff *kmt_handoff_new(unsigned int slots, unsigned int takers)
{
	struct kmt_handoff *h;
	pthread_condattr_t ca;
	unsigned int k;

	if (!slots || !takers) {
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h) + takers * sizeof(h->t[0]));
	if (!h)
		return NULL;
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv[W_FILL], NULL);
	pthread_cond_init(&h->cv[W_TAKEN], NULL);
	/* A taker's waits may be timed: on CLOCK_MONOTONIC (kmt_handoff_next_by()). */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	for (k = 0; k < takers; k++) {
		h->t[k].low = 1;
		pthread_cond_init(&h->t[k].cv, &ca);
	}
	pthread_condattr_destroy(&ca);
	h->slots = slots;
	h->takers = takers;
	h->fill_low = 1;
	h->done_wake[W_FILL] = h->done_wake[W_TAKEN] = UINT64_MAX;
	return h;
}

void kmt_handoff_free(struct kmt_handoff *h)
{
	unsigned int k;

	if (!h)
		return;
	for (k = 0; k < h->takers; k++)
		pthread_cond_destroy(&h->t[k].cv);
	pthread_cond_destroy(&h->cv[W_FILL]);
	pthread_cond_destroy(&h->cv[W_TAKEN]);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

/* The most any taker can wait for while the filler waits on it: a full ring less what the filler wants free. */
static bool lows_fit(const struct kmt_handoff *h, unsigned int fill_low, unsigned int low)
{
	return fill_low && low && fill_low <= h->slots && low <= h->slots - fill_low + 1;
}

int kmt_handoff_wake(struct kmt_handoff *h, unsigned int fill_low, unsigned int take_low)
{
	unsigned int k;

	/* The filler waits for the slowest taker; that one must not wait for more than the ring then holds. */
	if (!lows_fit(h, fill_low, take_low))
		return -EINVAL;
	for (k = 0; k < h->takers; k++)
		if (!lows_fit(h, fill_low, h->t[k].low))
			return -EINVAL;
	h->fill_low = fill_low;
	for (k = 0; k < h->takers; k++)
		if (!h->t[k].stage)
			h->t[k].low = take_low;
	return 0;
}

int kmt_handoff_stage(struct kmt_handoff *h, unsigned int k, unsigned int stage, unsigned int low)
{
	if (k >= h->takers || stage >= h->takers || !lows_fit(h, h->fill_low, low))
		return -EINVAL;
	h->t[k].stage = stage;
	h->t[k].low = low;
	h->staged |= stage > 0;
	return 0;
}

/* What taker @k may take up to: every slot given, or taken by every taker of the stage before. */
static uint64_t avail(const struct kmt_handoff *h, unsigned int k)
{
	uint64_t a = UINT64_MAX;
	unsigned int i;

	if (!h->t[k].stage)
		return h->given;
	for (i = 0; i < h->takers; i++)
		if (h->t[i].stage + 1 == h->t[k].stage)
			a = MIN(a, h->t[i].taken);
	return a == UINT64_MAX ? h->given : a;
}

/* Has taker @k what it waits for: its low slots, any with hurry, the last of them, or the end? */
static bool ready(const struct kmt_handoff *h, unsigned int k)
{
	uint64_t a = avail(h, k), n = a - h->t[k].taken;

	return h->stop || n >= (h->hurry ? 1 : h->t[k].low) || (h->end && a == h->given);
}

/* Sleep until done reaches @done (with the lock), counted so that a taker wakes it. */
static void sleep_on(struct kmt_handoff *h, int w, uint64_t done)
{
	h->done_wake[w] = MIN(h->done_wake[w], done);
	h->waiting[w]++;
	kmt_cond_wait(&h->cv[w], &h->mu);
	h->waiting[w]--;
}

/* Taker @k sleeps on its own condition; until CLOCK_MONOTONIC @until ns if not 0. False: timed out. */
static bool taker_sleep(struct kmt_handoff *h, unsigned int k, uint64_t until)
{
	struct timespec ts = { (time_t)(until / 1000000000ULL), (long)(until % 1000000000ULL) };
	bool woke = true;

	h->sleepers++;
	if (!until)
		kmt_cond_wait(&h->t[k].cv, &h->mu);
	else
		woke = pthread_cond_timedwait(&h->t[k].cv, &h->mu, &ts) != ETIMEDOUT;
	h->sleepers--;
	return woke;
}

/* Wake (with the lock) the sleepers that have what they wait for: each alone. */
static void wake(struct kmt_handoff *h)
{
	unsigned int k;
	int w;

	for (w = W_FILL; w <= W_TAKEN; w++)
		if (h->waiting[w] && (h->done >= h->done_wake[w] || h->stop)) {
			h->done_wake[w] = UINT64_MAX;
			pthread_cond_broadcast(&h->cv[w]);
		}
	for (k = 0; h->sleepers && k < h->takers; k++)
		if (h->t[k].sleeps && ready(h, k))
			pthread_cond_signal(&h->t[k].cv);
}

uint64_t kmt_handoff_room(struct kmt_handoff *h)
{
	uint64_t n;

	kmt_lock(&h->mu);
	if (h->given - h->done >= h->slots) {
		/* Full: wait for room for fill_low, not one. */
		while (h->given - h->done > h->slots - h->fill_low && !h->stop) {
			sleep_on(h, W_FILL, h->given - (h->slots - h->fill_low));
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

/* Set a flag that ends waits (with the lock), and wake the sleepers it is for. */
static void flag(struct kmt_handoff *h, bool *f, bool on)
{
	kmt_lock(&h->mu);
	*f = on;
	if (on)
		wake(h);
	pthread_mutex_unlock(&h->mu);
}

void kmt_handoff_end(struct kmt_handoff *h)
{
	flag(h, &h->end, true);
}

void kmt_handoff_stop(struct kmt_handoff *h)
{
	flag(h, &h->stop, true);
}

bool kmt_handoff_stopped(struct kmt_handoff *h)
{
	bool s;

	kmt_lock(&h->mu);
	s = h->stop;
	pthread_mutex_unlock(&h->mu);
	return s;
}

void kmt_handoff_hurry(struct kmt_handoff *h, bool on)
{
	flag(h, &h->hurry, on);
}

uint64_t kmt_handoff_given(const struct kmt_handoff *h)
{
	return h->given;	/* the filler's own count */
}

bool kmt_handoff_taken(struct kmt_handoff *h, uint64_t n, bool wait)
{
	bool taken;

	kmt_lock(&h->mu);
	while (wait && h->done < n && !h->stop) {
		sleep_on(h, W_TAKEN, n);
	}
	taken = h->done >= n;
	pthread_mutex_unlock(&h->mu);
	return taken;
}

int kmt_handoff_next_by(struct kmt_handoff *h, unsigned int k, uint64_t *slot, uint64_t until)
{
	struct taker *t = &h->t[k];
	int got;

	kmt_lock(&h->mu);
	if (avail(h, k) == t->taken && until != KMT_HANDOFF_NOW) {
		/* Nothing: wait for its low slots, not one. */
		t->sleeps = true;
		while (!ready(h, k))
			if (!taker_sleep(h, k, until))
				break;
		t->sleeps = false;
	}
	got = h->stop ? 0 : t->taken < avail(h, k) ? 1 : h->end && avail(h, k) == h->given ? 0 : -ETIMEDOUT;
	*slot = t->taken;
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
	h->t[k].taken++;
	for (least = h->t[0].taken, i = 1; i < h->takers; i++)
		least = MIN(least, h->t[i].taken);
	/* A taker of the next stage may have what it waits for now, or the filler. */
	if (least != h->done || h->staged) {
		h->done = least;
		wake(h);
	}
	pthread_mutex_unlock(&h->mu);
}
