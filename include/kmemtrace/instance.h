/*
 * Private tracefs instances.
 *
 * kmemtrace records only in instances of its own, instances/kmemtrace-PID
 * (and kmemtrace-PID-TAG), and never writes a file of the top-level
 * instance or of the function tracer. An instance is removed on every exit
 * path; instances left by a recorder that was killed are found by name by
 * the next one, which moves their events into their spools (recover.h).
 */
#ifndef KMEMTRACE_INSTANCE_H
#define KMEMTRACE_INSTANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "kmemtrace.h"

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

#endif
