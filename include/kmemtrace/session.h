/*
 * Setting up a private instance for recording memory events: which events
 * (validated against this kernel), filters, stack triggers, pid filtering,
 * buffer size; and capturing the metadata a trace file needs into the
 * spool (formats, kallsyms, process names, uname).
 */
#ifndef KMEMTRACE_SESSION_H
#define KMEMTRACE_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "format.h"
#include "kmemtrace.h"
#include "tracefs.h"

#define KMT_MAX_EVENTS 512

/* A list of concrete events, "system:name". */
struct kmt_event_list {
	char *v[KMT_MAX_EVENTS];
	int n;
};

void kmt_event_list_release(struct kmt_event_list *l);
bool kmt_event_list_has(const struct kmt_event_list *l, const char *ev);

/*
 * Expand @spec ("kmem:kmalloc", "kmem:*", "kmem", "kmalloc", comma-separated)
 * against the events tracefs at @root offers, appending to @l. With
 * @optional, events this kernel lacks are skipped silently; otherwise they
 * are KMT_ENOEVENT with the name in @d.
 */
int kmt_events_expand(const char *root, const char *spec, bool optional,
		      struct kmt_event_list *l, struct kmt_diag *d);

/* The default memory events, and the events that name processes. */
extern const char kmt_default_events[];
extern const char kmt_naming_events[];

/* A filter for one event ("kmem:kmalloc"). */
struct kmt_event_filter {
	const char *event;
	const char *filter;
};

struct kmt_session_opts {
	const struct kmt_event_list *events;
	const pid_t *pids;		/* set_event_pid, following forks */
	int nr_pids;
	const char *filter;		/* applied where its fields exist */
	const struct kmt_event_filter *event_filters;	/* before @filter */
	int nr_event_filters;
	bool stack;			/* stacktrace trigger on allocations */
	unsigned int buffer_kb;		/* per CPU */
	unsigned int buffer_percent;	/* reader wake-up watermark */
	const char *clock;
};

/*
 * Configure @in (tracing off) for @o and enable the events. @notes gets
 * a line per event the filter does not apply to. Returns 0 or -errno/
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
#define KMT_PARTIAL_ALLOCS 1u
#define KMT_PARTIAL_FREES 2u
unsigned int kmt_session_partial(const char *root, const struct kmt_session_opts *o);

/* Exclude @tids from tracing (set_event_notrace_pid). */
int kmt_session_exclude(const struct kmt_instance *in, const pid_t *tids, int n,
			struct kmt_diag *d);
/* tracing_on 1 / 0 in the instance. */
int kmt_session_tracing(const struct kmt_instance *in, bool on, struct kmt_diag *d);

/*
 * Save what a trace file needs besides the pages into the spool @dir:
 * header_page/event, formats of @events and of ftrace's own events,
 * kallsyms, printk formats, trace_clock, the names of running processes
 * and the meta file.
 */
int kmt_session_capture(const struct kmt_instance *in, const struct kmt_event_list *events,
			const char *dir, const int *cpus, int nr_cpus, uint32_t subbuf,
			struct kmt_diag *d);
/* Save per_cpu/cpuN/stats into the spool as statsN. */
int kmt_session_save_stats(const struct kmt_instance *in, const char *dir, const int *cpus,
			   int nr_cpus, struct kmt_diag *d);

/* Parse the format of @ev ("system:name") from tracefs at @root into @fs. */
int kmt_tracefs_load_format(const char *root, const char *ev, struct kmt_formats *fs,
			    struct kmt_diag *d);
/* The ring-buffer page layout of this kernel (events/header_page). */
int kmt_tracefs_page_layout(const char *root, struct kmt_page_layout *pl, struct kmt_diag *d);

/* The CPUs that are online, into @cpus (max @max); returns the count. */
int kmt_online_cpus(int *cpus, int max);

#endif
