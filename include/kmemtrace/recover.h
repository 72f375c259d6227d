/*
 * What a dead recorder leaves in the kernel. A recorder that is SIGKILLed
 * cannot clean up: its instance goes on tracing, and its ring buffers hold
 * every event it had not read yet. They belong in its spool, after what
 * the spool has: kmemtrace record --recover takes them before writing the
 * file (the instance's note, instance.h, says it is the spool's).
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

#endif
