/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private tracefs instances (include/kmemtrace/tracefs.h): created,
 * written, read and removed by name; those of dead recorders found, with
 * the spool each was noted for (a symlink in KMT_INSTANCE_NOTES).
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

#include <kmemtrace/tracefs.h>
#include <kmemtrace/tracefile.h>
#include "base/kmt-local.h"

/* The text of file @path into @buf (NUL-terminated, cut to @len): its length, or -errno. */
static ssize_t read_text(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	n = n < 0 ? -errno : n;
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

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

int kmt_instance_event_write(const struct kmt_instance *in, const char *ev, const char *file,
			     const char *val, struct kmt_diag *d)
{
	const char *colon = strchr(ev, ':');
	char rel[512];

	if (!colon)
		return kmt_diag_set(d, -EINVAL, "'%s' is no event name (system:name)", ev);
	snprintf(rel, sizeof(rel), "events/%.*s/%s/%s", (int)(colon - ev), ev, colon + 1, file);
	return kmt_instance_write(in, rel, val, d);
}

int kmt_instance_set_buffer_kb(const struct kmt_instance *in, unsigned int kb, struct kmt_diag *d)
{
	char val[16];

	snprintf(val, sizeof(val), "%u", kb);
	return kmt_instance_write(in, "buffer_size_kb", val, d);
}

int kmt_instance_read(const struct kmt_instance *in, const char *rel, char *buf, size_t len)
{
	char path[640];

	snprintf(path, sizeof(path), "%s/%s", in->path, rel);
	return (int)read_text(path, buf, len);
}

bool kmt_instance_has(const struct kmt_instance *in, const char *rel)
{
	char path[640];

	snprintf(path, sizeof(path), "%s/%s", in->path, rel);
	return access(path, F_OK) == 0;
}

/* The note of instance @name, for its spool. */
static void note_path(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", KMT_INSTANCE_NOTES, name);
}

int kmt_instance_note_spool(const struct kmt_instance *in, const char *spool_dir)
{
	char *abs = realpath(spool_dir, NULL), path[512];
	int ret = 0;

	if (!abs)
		return -errno;
	note_path(in->name, path, sizeof(path));
	if (mkdir(KMT_INSTANCE_NOTES, 0700) && errno != EEXIST)
		ret = -errno;
	if (!ret && unlink(path) && errno != ENOENT)
		ret = -errno;
	if (!ret && symlink(abs, path))
		ret = -errno;
	free(abs);
	return ret;
}

int kmt_instance_noted_spool(const char *name, char *buf, size_t len)
{
	char path[512];
	ssize_t n;

	note_path(name, path, sizeof(path));
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

static void forget_note(const char *name)
{
	char path[512];

	note_path(name, path, sizeof(path));
	unlink(path);
	strncat(path, ".died", sizeof(path) - strlen(path) - 1);
	unlink(path);
}

void kmt_instance_note_death(const char *name, uint64_t ns)
{
	char path[512], text[64];
	int fd, n;

	note_path(name, path, sizeof(path));
	strncat(path, ".died", sizeof(path) - strlen(path) - 1);
	mkdir(KMT_INSTANCE_NOTES, 0700);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	n = snprintf(text, sizeof(text), "%llu\n", (unsigned long long)ns);
	if (write(fd, text, (size_t)n) != n)
		unlink(path);
	close(fd);
}

uint64_t kmt_instance_noted_death(const char *name)
{
	char path[512], text[64];

	note_path(name, path, sizeof(path));
	strncat(path, ".died", sizeof(path) - strlen(path) - 1);
	return read_text(path, text, sizeof(text)) > 0 ? strtoull(text, NULL, 10) : 0;
}

/* Remove every trigger of event directory @dir ("!name" for each "name[:n] [if ...]" line). */
static int untrigger(const char *dir)
{
	char path[1500], text[4096], cmd[80];
	int ret = 0;
	char *line, *save = NULL;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/trigger", dir);
	if (read_text(path, text, sizeof(text)) <= 0)
		return 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t w = strcspn(line, ": \t");

		if (line[0] == '#' || !w || w >= sizeof(cmd) - 2)
			continue;
		snprintf(cmd, sizeof(cmd), "!%.*s", (int)w, line);
		if ((n = write_str_file(path, cmd)) && !ret)
			ret = (int)n;
	}
	return ret;
}

/*
 * Does event directory @dir stay on for triggers ("0*" in its enable file:
 * soft mode), or system @dir have such events ("X": its events differ)?
 */
static bool soft_enabled(const char *dir)
{
	char path[1500], text[16];

	snprintf(path, sizeof(path), "%s/enable", dir);
	/* Cannot tell: look. */
	return read_text(path, text, sizeof(text)) <= 0 || strchr(text, '*') || strchr(text, 'X');
}

int kmt_instance_quiesce(const struct kmt_instance *in)
{
	char path[768], sys[1100];
	struct dirent *s, *e;
	DIR *ds, *de;
	int ret, r;

	/* First what stops the cost at once; then the triggers, of systems that still have some. */
	ret = kmt_instance_write(in, "tracing_on", "0", NULL);
	if ((r = kmt_instance_write(in, "events/enable", "0", NULL)) && !ret)
		ret = r;
	if (kmt_instance_has(in, "options/stacktrace") &&
	    (r = kmt_instance_write(in, "options/stacktrace", "0", NULL)) && !ret)
		ret = r;
	snprintf(path, sizeof(path), "%s/events", in->path);
	ds = opendir(path);
	while (ds && (s = readdir(ds))) {
		if (s->d_name[0] == '.' || (s->d_type != DT_DIR && s->d_type != DT_UNKNOWN))
			continue;
		snprintf(sys, sizeof(sys), "%s/%s", path, s->d_name);
		if (!soft_enabled(sys))
			continue;
		de = opendir(sys);
		while (de && (e = readdir(de))) {
			char ev[1400];

			if (e->d_name[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
				continue;
			snprintf(ev, sizeof(ev), "%s/%s", sys, e->d_name);
			if (soft_enabled(ev) && (r = untrigger(ev)) && !ret)
				ret = r;
		}
		if (de)
			closedir(de);
	}
	if (ds)
		closedir(ds);
	return ret;
}

/* rmdir @path (instance @name), which stops its tracing first; its note goes with it. */
static int remove_path(const char *path, const char *name)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	char on[512];
	int i;

	snprintf(on, sizeof(on), "%s/tracing_on", path);
	write_str_file(on, "0");
	snprintf(on, sizeof(on), "%s/events/enable", path);
	write_str_file(on, "0");
	for (i = 0; i < 100; i++) {
		if (!rmdir(path) || errno == ENOENT) {
			forget_note(name);
			return 0;
		}
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
	ret = remove_path(in->path, in->name);
	if (!ret)
		in->created = false;
	return ret;
}

/* Is @pid a zombie (dead, its parent not told yet)? */
static bool zombie(pid_t pid)
{
	char path[64], text[512], *r;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_text(path, text, sizeof(text)) <= 0)
		return false;
	r = strrchr(text, ')');		/* the name may hold anything */
	return r && r[1] == ' ' && (r[2] == 'Z' || r[2] == 'X');
}

/* Is @pid a live process that is kmemtrace (not a recycled pid, not this one, not a zombie)? */
static bool live_kmemtrace(pid_t pid)
{
	char path[64], comm[32] = "";

	if (pid == getpid() || (kill(pid, 0) && errno == ESRCH) || zombie(pid))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	return read_text(path, comm, sizeof(comm)) > 0 && !strncmp(comm, "kmemtrace", 9);
}

bool kmt_instance_stale(const char *name)
{
	size_t plen = strlen(KMT_INSTANCE_PREFIX);
	char *end;
	long pid;

	if (strncmp(name, KMT_INSTANCE_PREFIX, plen))
		return false;
	pid = strtol(name + plen, &end, 10);
	/* Names are kmemtrace-PID or kmemtrace-PID-TAG. */
	if (pid <= 0 || pid > INT32_MAX || (*end && *end != '-'))
		return false;
	return !live_kmemtrace((pid_t)pid);
}

int kmt_instance_attach(struct kmt_instance *in, const char *root, const char *name)
{
	struct stat st;

	memset(in, 0, sizeof(*in));
	snprintf(in->root, sizeof(in->root), "%s", root);
	snprintf(in->name, sizeof(in->name), "%s", name);
	snprintf(in->path, sizeof(in->path), "%s/instances/%s", root, name);
	if (stat(in->path, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	in->created = true;
	return 0;
}

int kmt_instance_open(const char *path, const char *rel, int flags, struct kmt_diag *d)
{
	char full[640];
	int fd;

	snprintf(full, sizeof(full), "%s/%s", path, rel);
	fd = open(full, flags | O_CLOEXEC);
	if (fd < 0)
		return kmt_diag_set(d, -errno, "cannot open %s: %s", full, strerror(errno));
	return fd;
}

int kmt_instance_open_cpu(const char *path, int cpu, const char *rel, int flags, struct kmt_diag *d)
{
	char cpu_rel[128];

	snprintf(cpu_rel, sizeof(cpu_rel), "per_cpu/cpu%d/%s", cpu, rel);
	return kmt_instance_open(path, cpu_rel, flags, d);
}

int kmt_instance_read_cpu(const struct kmt_instance *in, int cpu, const char *rel, char *buf, size_t len)
{
	char cpu_rel[128];

	snprintf(cpu_rel, sizeof(cpu_rel), "per_cpu/cpu%d/%s", cpu, rel);
	return kmt_instance_read(in, cpu_rel, buf, len);
}

int kmt_instance_stat(const struct kmt_instance *in, int cpu, struct kmt_cpustat *st)
{
	char buf[2048];
	int n;

	n = kmt_instance_read_cpu(in, cpu, "stats", buf, sizeof(buf));
	if (n < 0)
		return n;
	kmt_cpustat_parse(st, buf, (size_t)n);
	return 0;
}

uint64_t kmt_instance_unread(const struct kmt_instance *in)
{
	char dir[512];
	struct dirent *de;
	struct kmt_cpustat st;
	uint64_t sum = 0;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/per_cpu", in->path);
	dp = opendir(dir);
	while (dp && (de = readdir(dp))) {
		if (!strncmp(de->d_name, "cpu", 3) &&
		    !kmt_instance_stat(in, atoi(de->d_name + 3), &st))
			sum += st.entries;
	}
	if (dp)
		closedir(dp);
	return sum;
}

/* Notes of instances that are gone (removed by a kmemtrace without notes, or by hand). */
static void forget_gone_notes(const char *root)
{
	char path[768];
	struct dirent *de;
	DIR *dp = opendir(KMT_INSTANCE_NOTES);

	while (dp && (de = readdir(dp))) {
		char name[256];
		size_t len = strlen(de->d_name);

		/* A spool's note is the instance's name, a death's that and ".died". */
		if (len > 5 && !strcmp(de->d_name + len - 5, ".died"))
			len -= 5;
		snprintf(name, sizeof(name), "%.*s", (int)len, de->d_name);
		if (!kmt_instance_stale(name))
			continue;
		snprintf(path, sizeof(path), "%s/instances/%s", root, name);
		if (access(path, F_OK) && errno == ENOENT)
			forget_note(name);
	}
	if (dp)
		closedir(dp);
}

int kmt_instance_find_stale(const char *root, char (*names)[64], int max)
{
	char dir[512];
	struct dirent *de;
	int n = 0;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/instances", root);
	dp = opendir(dir);
	if (!dp)
		return -errno;
	while ((de = readdir(dp)) && n < max) {
		if (strlen(de->d_name) < 64 && kmt_instance_stale(de->d_name))
			snprintf(names[n++], 64, "%s", de->d_name);
	}
	closedir(dp);
	forget_gone_notes(root);
	return n;
}
