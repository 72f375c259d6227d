/*
 * What a dead recorder leaves in the kernel. A recorder that is SIGKILLed
 * cannot clean up: its instance goes on tracing, and its ring buffers hold
 * every event it had not read yet. They belong in its spool, after what
 * the spool has: kmemtrace record --recover takes them before writing the
 * file, and the next recorder to find the instance takes them too (its
 * spool is known from the instance's note, instance.h), so that removing
 * the instance loses nothing.
 */
#ifndef KMEMTRACE_RECOVER_H
#define KMEMTRACE_RECOVER_H

#include <stdbool.h>
#include <stdint.h>
#include "instance.h"
#include "kmemtrace.h"
#include "spool.h"

struct kmt_recover_result {
	char instance[64];
	bool found;			/* the instance was there, and the spool's */
	bool other;			/* there, but nothing says it is the spool's */
	uint64_t unread;		/* events its ring buffers held */
	uint64_t taken;			/* events moved into the spool */
	/*
	 * Events the recorder had read that its spool does not have (held in
	 * its memory, or on their way to the spool, when it died): marked
	 * lost on the first page moved after them, as the kernel marks the
	 * events it drops; @lost_at_end of them had no page after them, and
	 * the spool says it is truncated instead.
	 */
	uint64_t lost, lost_at_end;
	bool removed;			/* the instance is gone */
};

/*
 * Move what the instance of @s's recording (its metadata names it) still
 * holds into @s: tracing stopped; each CPU's pages, full and partial,
 * appended to its spool file; the gap before them marked; the ring
 * buffers' stats saved; the spool marked drained (its data ends where
 * tracing stopped: not truncated); the instance removed. @root: tracefs.
 * 0 with @res->found false if there is no such instance, or it is not
 * noted as @s's; -EBUSY if its recorder is alive; another -errno with @d
 * (the instance is then left, tracing off, for another try).
 */
int kmt_recover_take(struct kmt_spool *s, const char *root, struct kmt_recover_result *res,
		     struct kmt_diag *d);

/* What became of a dead recorder's instance. */
enum kmt_stale_fate {
	KMT_STALE_MOVED,		/* its events are in its spool now */
	KMT_STALE_NO_SPOOL,		/* no spool was noted: removed, events and all */
	KMT_STALE_SPOOL_GONE,		/* its spool is not there: removed likewise */
	KMT_STALE_BUSY,			/* its spool is in use (being recovered): left */
	KMT_STALE_FAILED,		/* moving failed (@why): left, tracing off */
};

struct kmt_stale {
	const char *name;
	uint64_t unread;		/* events it held, tracing stopped */
	const char *spool;		/* its spool as noted, or NULL */
	enum kmt_stale_fate fate;
	struct kmt_recover_result took;	/* KMT_STALE_MOVED */
	bool removed;
	int err;			/* KMT_STALE_FAILED, or why it could not be removed */
	const char *why;
};

/*
 * Every instance of a dead recorder under @root (kmt_instance_find_stale):
 * tracing stopped, its unread events counted, moved into its spool when
 * that is noted and there (kmt_recover_take), and removed unless its
 * events could not be moved. @each is told what became of each one (the
 * struct is valid during the call). Returns how many were found, or -errno.
 */
int kmt_recover_stale(const char *root, void (*each)(void *arg, const struct kmt_stale *st),
		      void *arg);

#endif
