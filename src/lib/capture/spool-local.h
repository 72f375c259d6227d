/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading a spool back, for finalize.c: the items kmt_spool_* wrote, by
 * what they are, never by file name (spool.c owns the names).
 */
#ifndef SPOOL_LOCAL_H
#define SPOOL_LOCAL_H

#include <kmemtrace/capture.h>
#include "base/kmt-local.h"

/* Private to the library: hidden from its users (see the Makefile). */
#pragma GCC visibility push(hidden)

/* Blob @b into @out; an optional one that is absent reads as "". */
int spool_get(const struct kmt_spool *s, enum kmt_spool_blob b, struct sbuf *out,
	      struct kmt_diag *d);

/* Every format added, as one text; walk it with spool_next_format(). */
int spool_get_formats(const struct kmt_spool *s, struct sbuf *out, struct kmt_diag *d);

struct spool_format {
	char system[128], name[128];
	const char *text;		/* inside the formats text */
	size_t len;
};

/* The format at *@pos of @all, moving *@pos on: 1, 0 at the end, or KMT_EFORMAT. */
int spool_next_format(const struct kmt_spool *s, const struct sbuf *all, size_t *pos,
		      struct spool_format *f, struct kmt_diag *d);

/*
 * The data file of @cpu in buffer @b, read-write (finalising may punch
 * holes in it): an fd, -ENOENT if the recorder never created it, or
 * another -errno with @d.
 */
int spool_cpu_open(const struct kmt_spool *s, enum kmt_spool_buffer b, int cpu,
		   struct kmt_diag *d);
/* Its path, for messages. */
int spool_cpu_name(const struct kmt_spool *s, enum kmt_spool_buffer b, int cpu, char *buf,
		   size_t len);
/* The stats of @cpu in @b ("" if none were saved). */
int spool_get_stats(const struct kmt_spool *s, enum kmt_spool_buffer b, int cpu,
		    struct sbuf *out);
/* Why the recording was truncated ("" if it was not). */
int spool_get_truncated(const struct kmt_spool *s, struct sbuf *out);

#pragma GCC visibility pop

#endif
