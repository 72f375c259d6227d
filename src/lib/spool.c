/*
 * The spool directory of a recording: plain files a killed recorder leaves
 * behind intact (include/kmemtrace/record.h).
 *
 *	meta		"key value" lines: pid, page and sub-buffer size, CPUs...
 *	header_page, header_event, kallsyms, printk, trace_clock, cmdlines
 *	formats		"FORMAT system name length" lines, each followed by the text
 *	cpuN		raw ring-buffer pages of CPU N
 *	statsN		per_cpu/cpuN/stats at the end of the recording
 *	truncated	why the recording stopped early, if it did
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kmemtrace/record.h>
#include "kmt-local.h"

static long spool_owner(const char *dir)
{
	struct sbuf sb = { 0 };
	char path[4096];
	const char *p;
	long pid = 0;

	snprintf(path, sizeof(path), "%s/meta", dir);
	if (read_file(path, &sb))
		return 0;
	p = strstr(sb.buf, "\npid ");
	if (p)
		pid = strtol(p + 5, NULL, 10);
	sbuf_release(&sb);
	return pid;
}

int kmt_spool_create(const char *dir, struct kmt_diag *d)
{
	long pid;

	if (!mkdir(dir, 0700))
		return 0;
	if (errno != EEXIST)
		return kmt_diag_set(d, -errno, "cannot create '%s': %s", dir, strerror(errno));
	pid = spool_owner(dir);
	if (pid > 0 && !(kill((pid_t)pid, 0) && errno == ESRCH))
		return kmt_diag_set(d, -EEXIST, "'%s' is in use by kmemtrace (pid %ld)", dir, pid);
	return kmt_diag_set(d, -EEXIST, "'%s' was left by a recording that did not finish%s; "
			    "turn it into a trace with 'kmemtrace record --recover %s', or remove it",
			    dir, pid > 0 ? " (its recorder died)" : "", dir);
}

int kmt_spool_put(const char *dir, const char *name, const void *data, size_t len,
		  struct kmt_diag *d)
{
	char path[4096];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return kmt_diag_set(d, -errno, "cannot create '%s': %s", path, strerror(errno));
	ret = write_all(fd, data, len);
	if (close(fd) && !ret)
		ret = -errno;
	if (ret)
		return kmt_diag_set(d, ret, "cannot write '%s': %s", path, strerror(-ret));
	return 0;
}

static int spool_append(const char *dir, const char *name, const void *a, size_t alen,
			const void *b, size_t blen)
{
	char path[4096];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	ret = write_all(fd, a, alen);
	if (!ret && blen)
		ret = write_all(fd, b, blen);
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

int kmt_spool_meta(const char *dir, const char *key, const char *fmt, ...)
{
	char line[4096];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "%s ", key);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	return spool_append(dir, "meta", line, (size_t)n, NULL, 0);
}

int kmt_spool_add_format(const char *dir, const char *system, const char *name,
			 const char *text, size_t len, struct kmt_diag *d)
{
	char head[512];
	int n, ret;

	n = snprintf(head, sizeof(head), "FORMAT %s %s %zu\n", system, name, len);
	ret = spool_append(dir, "formats", head, (size_t)n, text, len);
	if (ret)
		return kmt_diag_set(d, ret, "cannot write '%s/formats': %s", dir, strerror(-ret));
	return 0;
}

int kmt_spool_reserve(const char *dir, uint64_t bytes, struct kmt_diag *d)
{
	char path[4096];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/reserve", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return kmt_diag_set(d, -errno, "cannot create '%s': %s", path, strerror(errno));
	ret = posix_fallocate(fd, 0, (off_t)bytes);
	close(fd);
	if (ret) {
		unlink(path);
		return kmt_diag_set(d, -ret, "no room in '%s' for %llu MiB of trace metadata: %s", dir,
				    (unsigned long long)(bytes >> 20), strerror(ret));
	}
	return 0;
}

int kmt_spool_remove(const char *dir)
{
	struct dirent *de;
	char path[4096];
	DIR *dp = opendir(dir);

	if (!dp)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(dp))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) && errno == EISDIR)
			kmt_spool_remove(path);	/* access/, one level down */
	}
	closedir(dp);
	return rmdir(dir) ? -errno : 0;
}
