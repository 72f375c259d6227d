/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A format's hooks on a thread of their own (src/export/hookpipe.h). A
 * ring of NB batches handed over in order (kmt_handoff): the model's
 * thread fills one, the writer thread empties them. An item is an event
 * (its strings in the batch's arena, by offset: the arena grows) or a
 * note of the format's own size. The model's thread waits only when all
 * NB batches are the writer's.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/base.h>

#include "report/input.h"
#include "hookpipe.h"

#define ITEMS 1024			/* items a batch */
#define NB 4				/* batches in the ring */

struct hook_call {
	struct kmt_event ev;		/* name and str2: offsets into the arena (as uintptr_t) */
	uint32_t note;			/* a note: its index + 1 in the batch's notes; 0: an event */
};

/* A slot of the ring: hook calls, queued for the writer thread. */
struct hook_calls {
	struct hook_call it[ITEMS];
	unsigned int n;
	char *ar;			/* the events' strings */
	size_t used, cap;
	unsigned char *notes;		/* ITEMS notes of note_size bytes */
	unsigned int nnotes;
};

struct hookpipe {
	void (*event)(void *arg, const struct kmt_event *ev);
	void (*note)(void *arg, const void *blob);
	size_t note_size;
	void *arg;
	pthread_t th;
	struct kmt_handoff *h;		/* the batches, to the writer */
	uint64_t cur;			/* the batch being filled (its number) */
	bool started, failed;
	uint64_t cpu_ns;
	struct hook_calls b[NB];
};

static void write_batch(struct hookpipe *p, struct hook_calls *b)
{
	unsigned int i;

	for (i = 0; i < b->n; i++) {
		struct hook_call *it = &b->it[i];
		struct kmt_event ev;

		if (it->note) {
			p->note(p->arg, b->notes + (size_t)(it->note - 1) * p->note_size);
			continue;
		}
		ev = it->ev;
		ev.name = ev.name_len ? b->ar + (uintptr_t)ev.name : NULL;
		ev.str2 = ev.str2_len ? b->ar + (uintptr_t)ev.str2 : NULL;
		p->event(p->arg, &ev);
	}
}

static void *writer(void *arg)
{
	struct hookpipe *p = arg;

	uint64_t n;

	pthread_setname_np(pthread_self(), "kmt-writer");
	while (kmt_handoff_next(p->h, 0, &n)) {
		write_batch(p, &p->b[n % NB]);
		kmt_handoff_took(p->h, 0);
	}
	p->cpu_ns = input_thread_cpu_ns();
	return NULL;
}

struct hookpipe *hookpipe_new(void (*event)(void *arg, const struct kmt_event *ev),
			      void (*note)(void *arg, const void *blob), size_t note_size, void *arg)
{
	struct hookpipe *p = calloc(1, sizeof(*p));
	int i;

	if (!p)
		return NULL;
	*p = (struct hookpipe){ .event = event, .note = note, .note_size = note_size, .arg = arg };
	for (i = 0; i < NB; i++)
		if (!(p->b[i].notes = malloc(ITEMS * (note_size ? note_size : 1))))
			goto fail;
	if (!(p->h = kmt_handoff_new(NB, 1)))
		goto fail;
	if (!pthread_create(&p->th, NULL, writer, p)) {
		p->started = true;
		return p;
	}
	kmt_handoff_free(p->h);
fail:
	for (i = 0; i < NB; i++)
		free(p->b[i].notes);
	free(p);
	return NULL;
}

/* The batch being filled, handed over first if it is full. */
static struct hook_calls *filling(struct hookpipe *p)
{
	struct hook_calls *b = &p->b[p->cur % NB];

	if (b->n < ITEMS)
		return b;
	kmt_handoff_give(p->h);
	p->cur = kmt_handoff_room(p->h);
	b = &p->b[p->cur % NB];
	b->n = b->nnotes = 0;
	b->used = 0;
	return b;
}

/* @len bytes of @s into the batch's arena: their offset (0 if none or no memory: p->failed). */
static uintptr_t keep(struct hookpipe *p, struct hook_calls *b, const char *s, uint32_t len)
{
	uintptr_t off;

	if (!len)
		return 0;
	if (b->used + len > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		char *n;

		while (cap < b->used + len)
			cap *= 2;
		if (!(n = realloc(b->ar, cap))) {
			p->failed = true;
			return 0;
		}
		b->ar = n;
		b->cap = cap;
	}
	memcpy(b->ar + b->used, s, len);
	off = b->used;
	b->used += len;
	return off;
}

void hookpipe_event(struct hookpipe *p, const struct kmt_event *ev)
{
	struct hook_calls *b = filling(p);
	struct hook_call *it = &b->it[b->n++];

	it->note = 0;
	it->ev = *ev;
	it->ev.name = (const char *)keep(p, b, ev->name, ev->name_len);
	it->ev.str2 = (const char *)keep(p, b, ev->str2, ev->str2_len);
	it->ev.stack = NULL;
	it->ev.nr_stack = 0;
}

void *hookpipe_note(struct hookpipe *p)
{
	struct hook_calls *b = filling(p);
	struct hook_call *it = &b->it[b->n++];

	it->note = ++b->nnotes;
	return b->notes + (size_t)(it->note - 1) * p->note_size;
}

void hookpipe_finish(struct hookpipe *p)
{
	if (!p || !p->started)
		return;
	if (p->b[p->cur % NB].n)
		kmt_handoff_give(p->h);
	kmt_handoff_end(p->h);
	pthread_join(p->th, NULL);
	p->started = false;
}

uint64_t hookpipe_cpu_ns(const struct hookpipe *p)
{
	return p ? p->cpu_ns : 0;
}

bool hookpipe_failed(const struct hookpipe *p)
{
	return p && p->failed;
}

void hookpipe_free(struct hookpipe *p)
{
	int i;

	if (!p)
		return;
	hookpipe_finish(p);
	kmt_handoff_free(p->h);
	for (i = 0; i < NB; i++) {
		free(p->b[i].ar);
		free(p->b[i].notes);
	}
	free(p);
}
