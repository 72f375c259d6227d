/*
 * A recording's instance: events (events.h), filters, stack triggers, pid
 * filtering, buffer size and clock set up in a private instance
 * (instance.h); and the metadata a trace file needs besides the pages
 * (formats, kallsyms, process names, uname) captured into the spool.
 */
#ifndef KMEMTRACE_SESSION_H
#define KMEMTRACE_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "format.h"
#include "kmemtrace.h"
#include "events.h"
#include "instance.h"
#include "recinfo.h"
#include "spool.h"

/* A filter for one event ("kmem:kmalloc"). */
struct kmt_event_filter {
	const char *event;
	const char *filter;
};

struct kmt_session_opts {
	const struct kmt_events *events;
	const pid_t *pids;		/* set_event_pid, following forks */
	int nr_pids;
	const char *filter;		/* applied where its fields exist */
	const struct kmt_event_filter *event_filters;	/* before @filter */
	int nr_event_filters;
	bool stack;			/* stacktrace trigger on allocations */
	unsigned int stack_sample;	/* > 1: no trigger, the sampler switches stacks (sampler.h) */
	unsigned int buffer_kb;		/* per CPU */
	unsigned int buffer_percent;	/* reader wake-up watermark */
	const char *clock;
};

/*
 * Configure @in (tracing off) for @o and enable the events. @notes gets
 * one line naming the events the filter does not apply to. Returns 0 or -errno/
 * KMT_E* with the tracefs file and the kernel's explanation in @d.
 */
int kmt_session_configure(const struct kmt_instance *in, const struct kmt_session_opts *o,
			  char *notes, size_t notes_len, struct kmt_diag *d);
/*
 * Does @o record only part of the slab allocations or frees (pid or event
 * filters, free events left out)? KMT_PARTIAL_* bits. A reader must not
 * call an object freed twice when allocations were filtered, nor call an
 * object leaked when frees were.
 */
unsigned int kmt_session_partial(const char *root, const struct kmt_session_opts *o);

/* Exclude @tids from tracing (set_event_notrace_pid). */
int kmt_session_exclude(const struct kmt_instance *in, const pid_t *tids, int n,
			struct kmt_diag *d);
/* tracing_on 1 / 0 in the instance. */
int kmt_session_tracing(const struct kmt_instance *in, bool on, struct kmt_diag *d);

/*
 * Save what a trace file needs besides the pages into the spool @sp:
 * header_page/event, formats of @events and of ftrace's own events,
 * kallsyms, printk formats, trace_clock, the names of running processes;
 * and @m, completed with what the kernel and machine say (version, pid,
 * instance, time, uname, page and long size, clock) — the caller fills
 * the CPUs, sub-buffer size and partial bits.
 */
int kmt_session_capture(const struct kmt_instance *in, const struct kmt_events *events,
			struct kmt_spool *sp, struct kmt_spool_meta *m, struct kmt_diag *d);
/* Save per_cpu/cpuN/stats into buffer @b of the spool. */
int kmt_session_save_stats(const struct kmt_instance *in, struct kmt_spool *sp,
			   enum kmt_spool_buffer b, const int *cpus, int nr_cpus, struct kmt_diag *d);

#endif
