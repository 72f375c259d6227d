/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where a command's output file goes, decided before any work is done:
 * never a directory, never over a file of another kind; a trace file
 * already there is kept as FILE.old (as perf keeps perf.data.old). Every
 * file is mode 0600 (traces, reports and exports hold kernel addresses);
 * under sudo, every output is made with the invoking user's rights
 * (kmt_owner_set()): where they could not write, nothing is written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kmemtrace/base.h>

#include "util.h"

static bool is_trace_file(const char *path, bool *empty)
{
	static const char magic[] = "\x17\x08\x44tracing";
	char buf[10];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	*empty = false;
	if (fd < 0)
		return false;
	/* Only a regular file can be a trace: never read a pipe or a device. */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	*empty = n == 0;
	return n == (ssize_t)sizeof(buf) && !memcmp(buf, magic, sizeof(buf));
}

bool output_is_trace(const char *path)
{
	bool empty;

	return is_trace_file(path, &empty);
}

/* "alice" or "uid 1000": whom outputs are made as under sudo. */
static const char *owner_name(void)
{
	static char buf[64];
	struct passwd *pw = getpwuid(kmt_owner_uid());

	if (pw)
		snprintf(buf, sizeof(buf), "%s", pw->pw_name);
	else
		snprintf(buf, sizeof(buf), "uid %u", (unsigned)kmt_owner_uid());
	return buf;
}

static int prepare(const char *path, bool quiet, bool check_only)
{
	char *copy = strdup(path), *dir, old[4200];
	struct kmt_diag d = { 0 };
	struct stat st;
	bool empty;
	int ret = EXIT_OK;

	if (!copy)
		return error("out of memory");
	dir = dirname(copy);
	if (kmt_outfile_check(path, &d)) {
		ret = error("%s", d.msg);
	} else if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		ret = error("'%s' is a directory: give the output file's name (-o DIR/FILE)", path);
	} else if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS)) {
		if (kmt_owner_active())
			ret = error("cannot write in '%s' as %s, who ran sudo: %s", dir, owner_name(),
				    strerror(errno));
		else
			ret = error("cannot write in '%s': %s", dir, strerror(errno));
	} else if (!lstat(path, &st)) {
		if (!S_ISREG(st.st_mode)) {
			ret = error("'%s' exists and is not a regular file: not replacing it", path);
		} else if (is_trace_file(path, &empty)) {
			if (check_only)
				goto out;
			snprintf(old, sizeof(old), "%s.old", path);
			if (rename(path, old))
				ret = error("cannot keep the previous '%s' as '%s': %s", path, old, strerror(errno));
			else if (!quiet)
				fprintf(stderr, "%s: the previous %s is kept as %s\n", cmd_name, path, old);
		} else if (!empty) {
			ret = error("'%s' exists and is not a trace file: not overwriting it", path);
		}
	}
out:
	free(copy);
	return ret;
}

int output_prepare(const char *path, bool quiet, bool check_only)
{
	int ret;

	kmt_owner_enter();
	ret = prepare(path, quiet, check_only);
	kmt_owner_leave();
	return ret;
}

/* The invoking user of sudo, if we run as root under it. */
static bool sudo_user(uid_t *uid, gid_t *gid)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");
	char *end;
	unsigned long a, b;

	if (geteuid() || !u || !g)
		return false;
	a = strtoul(u, &end, 10);
	if (*end || !*u)
		return false;
	b = strtoul(g, &end, 10);
	if (*end || !*g)
		return false;
	*uid = (uid_t)a;
	*gid = (gid_t)b;
	return true;
}

int output_owner_sudo(void)
{
	struct kmt_diag d = { 0 };
	uid_t uid;
	gid_t gid;

	if (!sudo_user(&uid, &gid) || !uid)
		return EXIT_OK;
	return kmt_owner_set(uid, gid, &d) ? error("%s", d.msg) : EXIT_OK;
}

/*
 * A signal that ends the process while an output is written (^C, kill)
 * takes the temporary file with it: nothing half-written is left behind,
 * under any name. Only where the signal would end the process anyway
 * (its action the default): a command's own handler is left alone. The
 * files are the library's outfiles (kmt_outfile_watch()).
 */
#define GUARDS 2
static char guard_tmp[GUARDS][PATH_MAX];
static volatile sig_atomic_t guard_armed[GUARDS];
static const int guard_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void guard_signal(int sig)
{
	int i;

	kmt_owner_enter();
	for (i = 0; i < GUARDS; i++)
		if (guard_armed[i])
			unlink(guard_tmp[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Temporary file @tmp exists: a slot for it, and the handlers where the actions are the default. */
static void opened(const char *tmp)
{
	struct sigaction sa = { .sa_handler = guard_signal }, old;
	size_t i;
	int k;

	for (k = 0; k < GUARDS && guard_armed[k]; k++)
		;
	if (k == GUARDS || strlen(tmp) >= PATH_MAX)
		return;
	memcpy(guard_tmp[k], tmp, strlen(tmp) + 1);
	guard_armed[k] = 1;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(guard_sigs) / sizeof(guard_sigs[0]); i++)
		if (!sigaction(guard_sigs[i], NULL, &old) && old.sa_handler == SIG_DFL)
			sigaction(guard_sigs[i], &sa, NULL);
}

/* ... and is gone (renamed into place or removed). */
static void closed(const char *tmp)
{
	int k;

	for (k = 0; k < GUARDS; k++)
		if (guard_armed[k] && !strcmp(guard_tmp[k], tmp))
			guard_armed[k] = 0;
}

void output_guard_files(void)
{
	kmt_outfile_watch(opened, closed);
}

int output_to(const char *path, int (*print)(void *arg, FILE *out), void *arg)
{
	struct kmt_outfile of;
	struct kmt_diag d = { 0 };
	FILE *out;
	bool direct;
	int ret;

	if (!path || !strcmp(path, "-") || !strcmp(path, "/dev/stdout"))
		return print(arg, stdout);
	/* Another user's link is not even opened to see what it is. */
	if (kmt_outfile_check(path, &d))
		return error("%s", d.msg);
	if (output_is_trace(path))
		return error("'%s' is a trace file: not overwriting it", path);
	if (kmt_outfile_open_flags(&of, path, 0600, KMT_OUTFILE_NOSYNC, &d))
		return error("%s", d.msg);
	if (!(out = kmt_outfile_stream(&of))) {
		kmt_outfile_abort(&of);
		return error("%s: %s", path, strerror(errno));
	}
	ret = print(arg, out);
	if (ret) {
		kmt_outfile_abort(&of);
		return ret;
	}
	direct = of.direct;
	if (kmt_outfile_commit(&of, &d))
		return error("%s", d.msg);
	if (!direct)	/* a file made, as export says it; a pipe or a device is not */
		fprintf(stderr, "%s: wrote %s\n", cmd_name, path);
	return EXIT_OK;
}
