/*
 * tracefs and what it says about this kernel: finding (or mounting) it,
 * the format of an event, the ring-buffer page layout, and the CPUs whose
 * buffers a recording reads. Writing is done in private instances only
 * (instance.h); kmemtrace never writes a file of the top-level instance or
 * of the function tracer.
 */
#ifndef KMEMTRACE_TRACEFS_H
#define KMEMTRACE_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include "format.h"
#include "kmemtrace.h"

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

#endif
