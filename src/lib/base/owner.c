/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whose rights the library's output files are made with
 * (include/kmemtrace/base.h). Under sudo the program runs as root for
 * tracefs, but what it writes must be what the invoking user could write:
 * otherwise `sudo kmemtrace record -o /etc/x` plants a file where they
 * cannot. Every create, rename, removal and read of an output or a spool
 * goes between kmt_owner_enter() and kmt_owner_leave(), which give the calling
 * thread the owner's file-system identity — fsuid, fsgid and supplementary
 * groups, the credentials the kernel checks paths and permissions with —
 * and take it back. Credentials are a thread's own in Linux; the raw
 * setgroups system call is used because glibc's changes every thread.
 * Taking root's file-system uid back returns the capabilities the switch
 * took away (CAP_DAC_OVERRIDE and the other file-system ones), as the
 * kernel does for setfsuid.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <kmemtrace/base.h>
#include "kmt-local.h"

#define GROUPS_MAX 256

/* Set once, before any thread is made; read-only after. */
static struct owner {
	bool on;
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[GROUPS_MAX];
	/* The process's own, taken back by kmt_owner_leave(). */
	uid_t self_uid;
	gid_t self_gid;
	int self_ngroups;
	gid_t self_groups[GROUPS_MAX];
} owner;

static __thread int owner_depth;

int kmt_owner_set(uid_t uid, gid_t gid, struct kmt_diag *d)
{
	struct passwd *pw = getpwuid(uid);
	int n = GROUPS_MAX, self;

	owner.on = false;
	if (geteuid() != 0 || uid == 0)
		return 0;	/* nothing to give up */
	if (!pw || getgrouplist(pw->pw_name, gid, owner.groups, &n) < 0) {
		/* A uid with no name (or too many groups): its own group only. */
		owner.groups[0] = gid;
		n = 1;
	}
	self = getgroups(GROUPS_MAX, owner.self_groups);
	if (self < 0)
		return kmt_diag_set(d, -errno, "cannot read the process's groups: %s", strerror(errno));
	owner.uid = uid;
	owner.gid = gid;
	owner.ngroups = n;
	owner.self_uid = geteuid();
	owner.self_gid = getegid();
	owner.self_ngroups = self;
	owner.on = true;
	return 0;
}

bool kmt_owner_active(void)
{
	return owner.on;
}

uid_t kmt_owner_uid(void)
{
	return owner.on ? owner.uid : geteuid();
}

void kmt_owner_enter(void)
{
	if (!owner.on || owner_depth++)
		return;
	/* Groups first: without CAP_SETGID (after setfsuid) they could not change. */
	syscall(SYS_setgroups, (size_t)owner.ngroups, owner.groups);
	setfsgid(owner.gid);
	setfsuid(owner.uid);
}

void kmt_owner_leave(void)
{
	int e = errno;

	if (!owner.on || --owner_depth)
		return;
	setfsuid(owner.self_uid);
	setfsgid(owner.self_gid);
	syscall(SYS_setgroups, (size_t)owner.self_ngroups, owner.self_groups);
	errno = e;
}

/* The system calls, made with the owner's rights; errno as they left it. */

int owner_open(const char *path, int flags, mode_t mode)
{
	int fd;

	kmt_owner_enter();
	fd = open(path, flags, mode);
	kmt_owner_leave();
	return fd;
}

int owner_mkdir(const char *path, mode_t mode)
{
	int ret;

	kmt_owner_enter();
	ret = mkdir(path, mode);
	kmt_owner_leave();
	return ret;
}

int owner_rename(const char *from, const char *to)
{
	int ret;

	kmt_owner_enter();
	ret = rename(from, to);
	kmt_owner_leave();
	return ret;
}

int owner_unlink(const char *path)
{
	int ret;

	kmt_owner_enter();
	ret = unlink(path);
	kmt_owner_leave();
	return ret;
}

int owner_rmdir(const char *path)
{
	int ret;

	kmt_owner_enter();
	ret = rmdir(path);
	kmt_owner_leave();
	return ret;
}

int owner_stat(const char *path, struct stat *st)
{
	int ret;

	kmt_owner_enter();
	ret = stat(path, st);
	kmt_owner_leave();
	return ret;
}

DIR *owner_opendir(const char *path)
{
	DIR *dp;

	kmt_owner_enter();
	dp = opendir(path);
	kmt_owner_leave();
	return dp;
}

int owner_read_file(const char *path, struct sbuf *out)
{
	int ret;

	kmt_owner_enter();
	ret = read_file(path, out);
	kmt_owner_leave();
	return ret;
}
