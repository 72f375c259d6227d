/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Complete-or-absent output files (include/kmemtrace/base.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kmemtrace/base.h>
#include "kmt-local.h"

static void (*watch_opened)(const char *tmp), (*watch_closed)(const char *tmp);

void kmt_outfile_watch(void (*opened)(const char *tmp), void (*closed)(const char *tmp))
{
	watch_opened = opened;
	watch_closed = closed;
}

/* Its names freed; @made: the temporary file was made (the watch is told it is gone). */
static void of_drop(struct kmt_outfile *of, bool made)
{
	if (made && !of->direct && watch_closed)
		watch_closed(of->tmp);
	free(of->path);
	free(of->tmp);
	of->path = of->tmp = NULL;
	of->fd = -1;
	of->stream = NULL;
}

/*
 * The kernel's protected_symlinks rule (fs/namei.c, may_follow_link), kept
 * whatever fs.protected_symlinks says and in every directory: a link is
 * followed if its owner is the caller, or the directory's owner when the
 * directory is not sticky and world-writable (/tmp). Another user's link
 * there may point anywhere the caller can write.
 */
static int check(const char *path, struct kmt_diag *d)
{
	struct stat lst, dst;
	char *copy;
	bool shared;
	int ret;

	if (lstat(path, &lst) || !S_ISLNK(lst.st_mode) || lst.st_uid == kmt_owner_uid())
		return 0;
	copy = strdup(path);
	if (!copy)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	ret = stat(dirname(copy), &dst) ? -errno : 0;
	if (ret) {
		kmt_diag_set(d, ret, "cannot stat the directory of '%s': %s", path, strerror(-ret));
		free(copy);
		return ret;
	}
	free(copy);
	shared = (dst.st_mode & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH);
	if (!shared && lst.st_uid == dst.st_uid)
		return 0;
	return kmt_diag_set(d, -EPERM, "'%s' is a symbolic link of uid %u%s: not writing through it",
			    path, (unsigned)lst.st_uid,
			    shared ? " in a world-writable sticky directory" :
			    ", neither yours nor the directory owner's");
}

int kmt_outfile_check(const char *path, struct kmt_diag *d)
{
	int ret;

	kmt_owner_enter();
	ret = check(path, d);
	kmt_owner_leave();
	return ret;
}

int kmt_outfile_open(struct kmt_outfile *of, const char *path, mode_t mode, struct kmt_diag *d)
{
	return kmt_outfile_open_flags(of, path, mode, 0, d);
}

static int open_flags(struct kmt_outfile *of, const char *path, mode_t mode,
		      unsigned int flags, struct kmt_diag *d)
{
	struct stat st, lst;
	bool exists;
	size_t len;
	int ret;

	of->fd = -1;
	of->stream = NULL;
	of->path = of->tmp = NULL;
	ret = check(path, d);
	if (ret)
		return ret;
	exists = !stat(path, &st);
	of->nosync = flags & KMT_OUTFILE_NOSYNC;
	/*
	 * A pipe or a device (-o /dev/null, a FIFO) is written as it is:
	 * renaming a file over it would replace the device node. A link to a
	 * file (one kmt_outfile_check() lets us follow): the file is replaced,
	 * not the link.
	 */
	of->direct = exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
	of->big = (flags & KMT_OUTFILE_BIG) && !of->direct;
	if (!of->direct && exists && !lstat(path, &lst) && S_ISLNK(lst.st_mode))
		of->path = realpath(path, NULL);
	else
		of->path = strdup(path);
	len = of->path ? strlen(of->path) + 32 : 0;
	of->tmp = of->path ? malloc(len) : NULL;
	if (!of->path || !of->tmp) {
		of_drop(of, false);
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	}
	if (of->direct) {
		snprintf(of->tmp, len, "%s", of->path);
		of->fd = open(of->path, O_WRONLY | O_CLOEXEC);
	} else {
		snprintf(of->tmp, len, "%s.tmp-%d", of->path, (int)getpid());
		/* Told before it exists: a signal between the two would leave it behind. */
		if (watch_opened)
			watch_opened(of->tmp);
		of->fd = open(of->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	}
	if (of->fd < 0) {
		int err = -errno;

		kmt_diag_set(d, err, "cannot %s '%s': %s", of->direct ? "write" : "create", of->tmp,
			     strerror(-err));
		of_drop(of, !of->direct);
		return err;
	}
	return 0;
}

int kmt_outfile_open_flags(struct kmt_outfile *of, const char *path, mode_t mode,
			   unsigned int flags, struct kmt_diag *d)
{
	int ret;

	kmt_owner_enter();
	ret = open_flags(of, path, mode, flags, d);
	kmt_owner_leave();
	return ret;
}

FILE *kmt_outfile_stream(struct kmt_outfile *of)
{
	if (!of->stream && of->fd >= 0)
		of->stream = of->big ? kmt_bigw_open(of->fd) : fdopen(of->fd, "w");
	return of->stream;
}

int kmt_outfile_commit(struct kmt_outfile *of, struct kmt_diag *d)
{
	int ret = 0;

	if (!of->tmp)
		return kmt_diag_set(d, -EBADF, "no file to commit");
	if (of->stream && fflush(of->stream))
		ret = kmt_diag_set(d, -errno, "cannot write '%s': %s", of->path, strerror(errno));
	if (of->stream && of->big) {	/* its blocks out; the descriptor stays open */
		if (fclose(of->stream) && !ret)
			ret = kmt_diag_set(d, -errno, "cannot write '%s': %s", of->path, strerror(errno));
		of->stream = NULL;
	}
	if (!ret && !of->direct && !of->nosync && fsync(of->fd))
		ret = kmt_diag_set(d, -errno, "cannot sync '%s': %s", of->path, strerror(errno));
	if (of->stream ? fclose(of->stream) : close(of->fd))
		if (!ret)
			ret = kmt_diag_set(d, -errno, "cannot write '%s': %s", of->path, strerror(errno));
	of->stream = NULL;
	of->fd = -1;
	kmt_owner_enter();
	if (!ret && !of->direct && rename(of->tmp, of->path))
		ret = kmt_diag_set(d, -errno, "cannot rename '%s' to '%s': %s", of->tmp, of->path,
				   strerror(errno));
	if (ret && !of->direct)
		unlink(of->tmp);
	kmt_owner_leave();
	of_drop(of, true);
	return ret;
}

void kmt_outfile_abort(struct kmt_outfile *of)
{
	if (!of->tmp)
		return;
	if (of->stream)
		fclose(of->stream);
	if ((!of->stream || of->big) && of->fd >= 0)
		close(of->fd);
	if (!of->direct) {
		kmt_owner_enter();
		unlink(of->tmp);
		kmt_owner_leave();
	}
	of_drop(of, true);
}

int kmt_write_all(int fd, const void *buf, size_t len)
{
	return write_all(fd, buf, len);
}
