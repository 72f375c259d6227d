/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tracefs and what it says about this kernel (include/kmemtrace/tracefs.h):
 * finding or mounting it, event formats, the ring-buffer page layout, and
 * the CPUs whose buffers a recording reads.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/tracefile.h>
#include <kmemtrace/tracefs.h>
#include "base/kmt-local.h"

#define TRACEFS_MAGIC 0x74726163
#define DEBUGFS_MAGIC 0x64626720

static bool is_tracefs(const char *path)
{
	struct statfs st;
	char inst[512];

	if (statfs(path, &st) || (st.f_type != TRACEFS_MAGIC && st.f_type != DEBUGFS_MAGIC))
		return false;
	snprintf(inst, sizeof(inst), "%s/instances", path);
	return access(inst, F_OK) == 0;
}

int kmt_tracefs_find_readable(char *root, size_t len, const char *want, struct kmt_diag *d)
{
	static const char *const places[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(places) + 1; i++) {
		const char *p = want ? want : i < ARRAY_SIZE(places) ? places[i] : NULL;

		if (!p)
			break;
		if (access(p, R_OK | X_OK) && errno == EACCES)
			return kmt_diag_set(d, -EACCES, "%s is readable by root only: run with sudo", p);
		if (is_tracefs(p)) {
			snprintf(root, len, "%s", p);
			return 0;
		}
		if (want)
			break;
	}
	return kmt_diag_set(d, KMT_ENOTRACEFS, "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
}

int kmt_tracefs_find(char *root, size_t len, const char *want, bool mount_it, struct kmt_diag *d)
{
	static const char *const places[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	size_t i;

	if (want) {
		if (!is_tracefs(want))
			return kmt_diag_set(d, KMT_ENOTRACEFS, "%s is not a tracefs mount", want);
		snprintf(root, len, "%s", want);
		if (access(want, W_OK))
			return kmt_diag_set(d, -EACCES, "%s is not writable: tracing needs root "
					    "(or CAP_SYS_ADMIN with write access to tracefs)", want);
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(places); i++) {
		if (is_tracefs(places[i])) {
			snprintf(root, len, "%s", places[i]);
			if (access(places[i], W_OK))
				return kmt_diag_set(d, -EACCES, "%s is not writable: tracing needs root "
						    "(or CAP_SYS_ADMIN with write access to tracefs)", places[i]);
			return 0;
		}
	}
	if (!mount_it)
		return kmt_diag_set(d, KMT_ENOTRACEFS, "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
	if (access("/sys/kernel/tracing", F_OK))
		return kmt_diag_set(d, KMT_ENOTRACEFS, "this kernel has no tracefs (/sys/kernel/tracing is missing; CONFIG_TRACING?)");
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL)) {
		int err = -errno;

		if ((err == -EPERM || err == -EACCES) && geteuid())
			return kmt_diag_set(d, err, "tracing needs root: tracefs is not mounted or not "
					    "accessible to uid %u", (unsigned)geteuid());
		if (err == -EPERM || err == -EACCES)
			return kmt_diag_set(d, err, "tracefs is not mounted and mounting it needs root");
		return kmt_diag_set(d, KMT_ENOTRACEFS, "cannot mount tracefs on /sys/kernel/tracing: %s",
				    strerror(-err));
	}
	if (!is_tracefs("/sys/kernel/tracing"))
		return kmt_diag_set(d, KMT_ENOTRACEFS, "mounted tracefs has no instances directory");
	snprintf(root, len, "/sys/kernel/tracing");
	return 0;
}

int tracefs_format_text(const char *root, const char *ev, struct sbuf *out)
{
	char path[1024];
	const char *colon = strchr(ev, ':');

	if (!colon)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/events/%.*s/%s/format", root, (int)(colon - ev), ev,
		 colon + 1);
	return read_file(path, out);
}

int kmt_tracefs_format(const char *root, const char *ev, struct kmt_format *fmt,
		       struct kmt_diag *d)
{
	const char *colon = strchr(ev, ':');
	char sys[128];
	struct sbuf sb = { 0 };
	int ret;

	if (!colon)
		return kmt_diag_set(d, -EINVAL, "bad event name '%s'", ev);
	snprintf(sys, sizeof(sys), "%.*s", (int)(colon - ev), ev);
	ret = tracefs_format_text(root, ev, &sb);
	if (ret) {
		sbuf_release(&sb);
		return kmt_diag_set(d, ret, "cannot read the format of %s: %s", ev, strerror(-ret));
	}
	ret = kmt_format_parse(fmt, sys, sb.buf, sb.len, d);
	sbuf_release(&sb);
	return ret;
}

int kmt_tracefs_add_format(const char *root, const char *ev, struct kmt_formats *fs,
			   struct kmt_diag *d)
{
	struct kmt_format fmt;
	int ret = kmt_tracefs_format(root, ev, &fmt, d);

	if (ret)
		return ret;
	ret = kmt_formats_add(fs, &fmt);
	kmt_format_release(&fmt);
	return ret ? kmt_diag_set(d, ret, "out of memory") : 0;
}

int kmt_tracefs_page_layout(const char *root, struct kmt_page_layout *pl, struct kmt_diag *d)
{
	char path[512];
	struct sbuf sb = { 0 };
	int ret;

	snprintf(path, sizeof(path), "%s/events/header_page", root);
	ret = read_file(path, &sb);
	if (ret)
		ret = kmt_diag_set(d, ret, "cannot read '%s': %s", path, strerror(-ret));
	else
		ret = kmt_page_layout_parse(pl, sb.buf, sb.len, d);
	sbuf_release(&sb);
	return ret;
}

int kmt_tracefs_cpus(int *cpus, int max)
{
	struct sbuf sb = { 0 };
	const char *p;
	int n = 0;

	if (read_file("/sys/devices/system/cpu/online", &sb)) {
		long i, nc = sysconf(_SC_NPROCESSORS_ONLN);

		for (i = 0; i < nc && n < max; i++)
			cpus[n++] = (int)i;
		return n;
	}
	for (p = sb.buf; *p && n < max;) {
		char *end;
		long a = strtol(p, &end, 10), b = a, i;

		if (end == p)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (i = a; i <= b && n < max; i++)
			cpus[n++] = (int)i;
		p = *end == ',' ? end + 1 : end;
		if (*p == '\n')
			break;
	}
	sbuf_release(&sb);
	return n;
}
