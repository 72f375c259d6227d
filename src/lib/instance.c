/*
 * Private tracefs instances (include/kmemtrace/instance.h): created,
 * written, read and removed by name; those of dead recorders reaped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/instance.h>
#include "kmt-local.h"

int kmt_instance_create(struct kmt_instance *in, const char *root, const char *name,
			struct kmt_diag *d)
{
	memset(in, 0, sizeof(*in));
	snprintf(in->root, sizeof(in->root), "%s", root);
	snprintf(in->name, sizeof(in->name), "%s", name);
	snprintf(in->path, sizeof(in->path), "%s/instances/%s", root, name);
	if (mkdir(in->path, 0750)) {
		int err = -errno;

		return kmt_diag_set(d, err, "cannot create tracefs instance %s: %s", in->path,
				    strerror(-err));
	}
	in->created = true;
	return 0;
}

/* The last @lines lines of @buf, in place. */
static char *tail_lines(char *buf, int lines)
{
	char *p = buf + strlen(buf);

	while (p > buf && p[-1] == '\n')
		*--p = '\0';
	while (p > buf && lines) {
		p--;
		if (*p == '\n' && !--lines)
			return p + 1;
	}
	return buf;
}

int kmt_instance_write(const struct kmt_instance *in, const char *rel, const char *val,
		       struct kmt_diag *d)
{
	char path[640], log[4096] = "";
	const char *why = "";
	int ret;

	snprintf(path, sizeof(path), "%s/%s", in->path, rel);
	ret = write_str_file(path, val);
	if (!ret)
		return 0;
	/* The kernel explains rejected filters and triggers in error_log. */
	if (ret == -EINVAL && kmt_instance_read(in, "error_log", log, sizeof(log)) > 0)
		why = tail_lines(log, 3);
	return kmt_diag_set(d, ret, "cannot write '%s' to %s: %s%s%s", val, path,
			    strerror(-ret), *why ? "\n" : "", why);
}

int kmt_instance_read(const struct kmt_instance *in, const char *rel, char *buf, size_t len)
{
	char path[640];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", in->path, rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

bool kmt_instance_has(const struct kmt_instance *in, const char *rel)
{
	char path[640];

	snprintf(path, sizeof(path), "%s/%s", in->path, rel);
	return access(path, F_OK) == 0;
}

static int remove_path(const char *path)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	char on[512];
	int i;

	snprintf(on, sizeof(on), "%s/tracing_on", path);
	write_str_file(on, "0");
	snprintf(on, sizeof(on), "%s/events/enable", path);
	write_str_file(on, "0");
	for (i = 0; i < 100; i++) {
		if (!rmdir(path) || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		nanosleep(&ts, NULL);
	}
	return -EBUSY;
}

int kmt_instance_remove(struct kmt_instance *in)
{
	int ret;

	if (!in->created)
		return 0;
	ret = remove_path(in->path);
	if (!ret)
		in->created = false;
	return ret;
}

/* Is @pid a live process that is kmemtrace (not a recycled pid)? */
static bool live_kmemtrace(pid_t pid)
{
	char path[64], comm[32] = "";
	int fd;
	ssize_t n;

	if (kill(pid, 0) && errno == ESRCH)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (n <= 0)
		return false;
	comm[n] = '\0';
	return !strncmp(comm, "kmemtrace", 9);
}

int kmt_instance_reap(const char *root, char *removed, size_t len)
{
	char dir[512], path[768];
	struct dirent *de;
	int n = 0;
	DIR *dp;

	if (len)
		removed[0] = '\0';
	snprintf(dir, sizeof(dir), "%s/instances", root);
	dp = opendir(dir);
	if (!dp)
		return -errno;
	while ((de = readdir(dp))) {
		const char *s = de->d_name;
		char *end;
		long pid;

		if (strncmp(s, KMT_INSTANCE_PREFIX, strlen(KMT_INSTANCE_PREFIX)))
			continue;
		pid = strtol(s + strlen(KMT_INSTANCE_PREFIX), &end, 10);
		/* Names are kmemtrace-PID or kmemtrace-PID-TAG. */
		if (pid <= 0 || (*end && *end != '-') || live_kmemtrace((pid_t)pid))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, s);
		if (remove_path(path))
			continue;
		n++;
		if (len) {
			size_t l = strlen(removed);

			snprintf(removed + l, len - l, "%s%s", l ? " " : "", s);
		}
	}
	closedir(dp);
	return n;
}
