/*
 * An output file that is either complete or absent: written under a
 * temporary name beside its final one, synced, and renamed into place only
 * when the writer says it is done. Trace files, exports and pages all go
 * through it, so an interrupted or failed run never leaves a file that
 * looks complete.
 */
#ifndef KMEMTRACE_OUTFILE_H
#define KMEMTRACE_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "kmemtrace.h"

struct kmt_outfile {
	char *path;			/* the final name */
	char *tmp;			/* PATH.tmp-PID while writing */
	int fd;				/* -1 when closed */
	FILE *stream;			/* kmt_outfile_stream(), or NULL */
	bool direct;			/* a pipe or device: written in place */
	bool nosync;			/* KMT_OUTFILE_NOSYNC */
	bool big;			/* KMT_OUTFILE_BIG */
};

/*
 * Renamed into place without an fsync first: for what can be made again
 * from a trace (exports, pages). Recordings are synced: they cannot.
 */
#define KMT_OUTFILE_NOSYNC 1u
/*
 * Its stream is written out by a thread of its own in large aligned
 * blocks, bypassing the page cache where the file system allows: for
 * outputs of hundreds of MB.
 */
#define KMT_OUTFILE_BIG 2u

/*
 * May @path be written through, if it is a symbolic link? The kernel's
 * protected_symlinks rule, whatever the sysctl says, in every directory:
 * only a link of the caller's (effective uid), or of the directory's owner
 * in a directory that is not sticky and world-writable. 0, or -EPERM with
 * a one-line reason in @d (-errno if the directory cannot be read). A path
 * that is not a link is 0.
 */
int kmt_outfile_check(const char *path, struct kmt_diag *d);
/*
 * Create the temporary file for @path with @mode (0600 for traces). -errno with @d on failure (nothing is left
 * behind); a link kmt_outfile_check() refuses is not followed. A @path
 * that is a pipe or a device is opened and written in place (nothing to
 * rename); a symbolic link's file is replaced, not the link.
 */
int kmt_outfile_open(struct kmt_outfile *of, const char *path, mode_t mode, struct kmt_diag *d);
/* The same with KMT_OUTFILE_* @flags. */
int kmt_outfile_open_flags(struct kmt_outfile *of, const char *path, mode_t mode,
			   unsigned int flags, struct kmt_diag *d);
/* A stdio stream on it (owned by @of); NULL + errno on failure. */
FILE *kmt_outfile_stream(struct kmt_outfile *of);
/*
 * Flush, sync (unless KMT_OUTFILE_NOSYNC), close and rename into place. On
 * failure the temporary file is removed and -errno returned with @d. @of is
 * closed either way.
 */
int kmt_outfile_commit(struct kmt_outfile *of, struct kmt_diag *d);
/* Close and remove the temporary file (after a failure). Safe to repeat. */
void kmt_outfile_abort(struct kmt_outfile *of);

/* Write all of @len bytes to @fd, through short writes and EINTR; 0 or -errno. */
int kmt_write_all(int fd, const void *buf, size_t len);

#endif
