/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 *  * libkmemtrace, the tracefs stage (src/lib/tracefs/): the kernel's
 * tracefs: its formats and CPUs, private instances, which events to
 * record.
 */
#ifndef KMEMTRACE_TRACEFS_H
#define KMEMTRACE_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base.h"
#include "tracefile.h"

/*
 * tracefs and what it says about this kernel: finding (or mounting) it,
 * the format of an event, the ring-buffer page layout, and the CPUs whose
 * buffers a recording reads. Writing is done in private instances only
 * (instance.h); kmemtrace never writes a file of the top-level instance or
 * of the function tracer.
 */

/*
 * Find tracefs; mount it at /sys/kernel/tracing if it is not mounted and
 * @mount is set. With @want, only that directory will do. Fills @root.
 * KMT_ENOTRACEFS, -EACCES or -EPERM with a one-line explanation in @d.
 */
int kmt_tracefs_find(char *root, size_t len, const char *want, bool mount, struct kmt_diag *d);
/*
 * The same for reading only (listing events): no mount, no write access
 * needed. -EACCES if tracefs is there but readable by root only.
 */
int kmt_tracefs_find_readable(char *root, size_t len, const char *want, struct kmt_diag *d);

/*
 * Parse the format of @ev ("system:name") from tracefs at @root into @fmt
 * (release with kmt_format_release()); -errno or KMT_EFORMAT with @d.
 */
int kmt_tracefs_format(const char *root, const char *ev, struct kmt_format *fmt,
		       struct kmt_diag *d);
/* The same, added to the set @fs. */
int kmt_tracefs_add_format(const char *root, const char *ev, struct kmt_formats *fs,
			   struct kmt_diag *d);
/* The ring-buffer page layout of this kernel (events/header_page). */
int kmt_tracefs_page_layout(const char *root, struct kmt_page_layout *pl, struct kmt_diag *d);
/* The CPUs whose buffers to read (those online), into @cpus; returns the count. */
int kmt_tracefs_cpus(int *cpus, int max);

/*
 * Private tracefs instances.
 *
 * kmemtrace records only in instances of its own, instances/kmemtrace-PID
 * (and kmemtrace-PID-TAG), and never writes a file of the top-level
 * instance or of the function tracer. An instance is removed on every exit
 * path; instances left by a recorder that was killed are found by name by
 * the next one, which moves their events into their spools (recover.h).
 */

struct kmt_cpustat;

#define KMT_INSTANCE_PREFIX "kmemtrace-"

struct kmt_instance {
	char root[256];			/* tracefs */
	char name[64];
	char path[384];			/* root/instances/name */
	bool created;
};

/* mkdir instances/@name; -EEXIST if it exists. */
int kmt_instance_create(struct kmt_instance *in, const char *root, const char *name,
			struct kmt_diag *d);
/* Write @val to the instance file @rel (e.g. "events/kmem/kmalloc/enable"). */
int kmt_instance_write(const struct kmt_instance *in, const char *rel, const char *val,
		       struct kmt_diag *d);
/*
 * Write @val to @file ("enable", "filter", "trigger") of event @ev
 * ("kmem:kmalloc") in the instance, as kmt_instance_write() does: the one
 * place that knows where an instance keeps its events' files.
 */
int kmt_instance_event_write(const struct kmt_instance *in, const char *ev, const char *file,
			     const char *val, struct kmt_diag *d);
/* Size every CPU's ring buffer of the instance to @kb KiB (buffer_size_kb); 0 or -errno with @d. */
int kmt_instance_set_buffer_kb(const struct kmt_instance *in, unsigned int kb, struct kmt_diag *d);
/* Read the instance file @rel into @buf (NUL-terminated, truncated to @len). */
int kmt_instance_read(const struct kmt_instance *in, const char *rel, char *buf, size_t len);
/* Does the instance have the file or directory @rel? */
bool kmt_instance_has(const struct kmt_instance *in, const char *rel);
/*
 * Stop tracing in the instance and remove it, retrying while the kernel
 * reports it busy. Safe to call twice. Returns 0 or -errno.
 */
int kmt_instance_remove(struct kmt_instance *in);

/*
 * An instance's spool: a recording notes it, so that whoever finds the
 * instance after its recorder died knows where its events belong. A note
 * is a symlink KMT_INSTANCE_NOTES/NAME -> the spool's absolute path; like
 * the instance it does not outlive a boot (/run is a tmpfs), and it goes
 * when the instance is removed. 0 or -errno.
 */
#define KMT_INSTANCE_NOTES "/run/kmemtrace"
int kmt_instance_note_spool(const struct kmt_instance *in, const char *spool_dir);
/* The spool noted for instance @name, into @buf: its length, or -errno (-ENOENT: none). */
int kmt_instance_noted_spool(const char *name, char *buf, size_t len);
/*
 * Its recorder died (kmt_watchdog): when, as CLOCK_REALTIME ns, in
 * KMT_INSTANCE_NOTES/NAME.died, which goes with the instance's note.
 * Noting is for a process that is about to exit (no errors); the time, or
 * 0 if none was noted.
 */
void kmt_instance_note_death(const char *name, uint64_t ns);
uint64_t kmt_instance_noted_death(const char *name);
/*
 * Stop everything the instance costs the kernel while keeping what its
 * ring buffers hold: tracing off, every event's triggers removed (a
 * stacktrace trigger still unwinds a stack for each event with tracing
 * off), the stacktrace option off, the events disabled. For an instance
 * whose recorder died; 0, or the first -errno (it goes on past failures).
 */
int kmt_instance_quiesce(const struct kmt_instance *in);

/*
 * Is @name the instance of a dead recorder: kmemtrace-PID or
 * kmemtrace-PID-TAG with PID no live kmemtrace (nor this process: the pid
 * was reused)?
 */
bool kmt_instance_stale(const char *name);
/*
 * The instances under @root of dead recorders: up to @max names into
 * @names. Returns how many, or -errno. Notes of instances that are gone
 * are forgotten on the way.
 */
int kmt_instance_find_stale(const char *root, char (*names)[64], int max);
/* @in for the existing instance @name (another process's); -ENOENT if there is none. */
int kmt_instance_attach(struct kmt_instance *in, const char *root, const char *name);
/*
 * Open @rel ("options/stacktrace") of the instance at @path, or CPU @cpu's
 * per-CPU file @rel ("trace_pipe_raw", "stats") with kmt_instance_open_cpu():
 * an fd, or -errno with the reason in @d. The one place that knows the
 * instance's layout; the recorders hold only its path.
 */
int kmt_instance_open(const char *path, const char *rel, int flags, struct kmt_diag *d);
int kmt_instance_open_cpu(const char *path, int cpu, const char *rel, int flags, struct kmt_diag *d);
/* Read CPU @cpu's per-CPU file @rel as kmt_instance_read() does. */
int kmt_instance_read_cpu(const struct kmt_instance *in, int cpu, const char *rel, char *buf, size_t len);
/* CPU @cpu's ring-buffer statistics (per_cpu/cpuN/stats) into @st; 0 or -errno. */
int kmt_instance_stat(const struct kmt_instance *in, int cpu, struct kmt_cpustat *st);
/* Events the instance's ring buffers hold unread ("entries", every CPU's). */
uint64_t kmt_instance_unread(const struct kmt_instance *in);

/*
 * Which events a recording asks for: names and patterns ("kmem:kmalloc",
 * "kmem:*", "kmem", "kmalloc") expanded against the events this kernel
 * has, the default memory events, the events that name processes, and the
 * kinds of events a recording treats specially.
 */

#define KMT_MAX_EVENTS 512

/* A list of concrete events, "system:name". */
struct kmt_events {
	char *v[KMT_MAX_EVENTS];
	int n;
};

void kmt_events_release(struct kmt_events *l);
bool kmt_events_has(const struct kmt_events *l, const char *ev);

/*
 * Expand @spec ("kmem:kmalloc", "kmem:*", "kmem", "kmalloc", comma-separated)
 * against the events tracefs at @root offers, appending to @l. With
 * @optional, events this kernel lacks are skipped silently; otherwise they
 * are KMT_ENOEVENT with the name in @d.
 */
int kmt_events_expand(const char *root, const char *spec, bool optional,
		      struct kmt_events *l, struct kmt_diag *d);

/* The default memory events, and the events that name processes. */
extern const char kmt_events_default[];
extern const char kmt_events_naming[];

/* Allocation events (they get the stacktrace trigger with --stack). */
bool kmt_events_is_alloc(const char *ev);
/* kfree and kmem_cache_free. */
bool kmt_events_is_slab_free(const char *ev);
/* Process naming events (never filtered). */
bool kmt_events_is_naming(const char *ev);

#endif
