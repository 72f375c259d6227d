/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A format's hooks on a thread of their own (-j 3 and more): the model's
 * thread hands each event (copied, its strings with it) and each note a
 * format takes of an object over in batches, and a writer thread makes
 * the same calls in the same order, so the output is the same bytes as
 * when the hooks ran on the model's thread. For a format whose writing
 * costs more than the model (export --format perfetto).
 */
#ifndef KMT_HOOKPIPE_H
#define KMT_HOOKPIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kmemtrace/event.h>

struct hookpipe;

/*
 * @event(arg, ev) for each event handed over, @note(arg, blob) for each
 * note of @note_size bytes, on the writer thread. NULL: no memory or no
 * thread (then call the hooks directly).
 */
struct hookpipe *hookpipe_new(void (*event)(void *arg, const struct kmt_event *ev),
			      void (*note)(void *arg, const void *blob), size_t note_size, void *arg);
/* An event, copied with its name and second string (not its stack). */
void hookpipe_event(struct hookpipe *p, const struct kmt_event *ev);
/* Room for the next note, in order with the events: filled by the caller before its next call. */
void *hookpipe_note(struct hookpipe *p);
/* Everything handed over is written, and the thread gone: before the format writes more. */
void hookpipe_finish(struct hookpipe *p);
/* A string could not be kept (no memory): the output is incomplete. */
bool hookpipe_failed(const struct hookpipe *p);
/* The writer thread's CPU ns (after hookpipe_finish()). */
uint64_t hookpipe_cpu_ns(const struct hookpipe *p);
void hookpipe_free(struct hookpipe *p);

#endif
