/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The spool directory of a recording (include/kmemtrace/capture.h), and the
 * only place its layout is written down:
 *
 *	meta		"key value" lines: the struct kmt_spool_meta
 *	header_page, header_event, kallsyms, printk, trace_clock, cmdlines
 *	formats		"FORMAT system name length" lines, each followed by the text
 *	cpuN		raw ring-buffer pages of CPU N
 *	statsN		per_cpu/cpuN/stats at the end of the recording
 *	access/cpuN, access/statsN	kmemtrace watch's samples, likewise
 *	truncated	why the recording stopped early, if it did
 *	reserve		disk set aside for finalising on a full disk
 *
 * The meta file is written at creation with the recorder's pid (so a
 * second recorder can tell a live spool from a dead one's), then replaced
 * whole by kmt_spool_set_meta(). Whoever has a spool open holds a lock on
 * its directory (flock, gone with the process however it ends): a spool
 * is recorded, taken into or recovered by one process at a time.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kmemtrace/tracefile.h>
#include <kmemtrace/capture.h>
#include "base/kmt-local.h"
#include "spool-local.h"

struct kmt_spool {
	char *dir;
	int lock_fd;			/* the directory, flock()ed */
	struct kmt_spool_meta meta;
	bool has_access;
};

static const char *const blob_names[KMT_SPOOL_NR_BLOBS] = {
	[KMT_SPOOL_HEADER_PAGE] = "header_page", [KMT_SPOOL_HEADER_EVENT] = "header_event",
	[KMT_SPOOL_KALLSYMS] = "kallsyms", [KMT_SPOOL_PRINTK] = "printk",
	[KMT_SPOOL_TRACE_CLOCK] = "trace_clock", [KMT_SPOOL_CMDLINES] = "cmdlines",
	[KMT_SPOOL_SLAB_ALIASES] = "slab_aliases", [KMT_SPOOL_SLAB_CACHES] = "slab_caches",
	[KMT_SPOOL_CGROUPS] = "cgroups",
};

/* Blobs a trace cannot be built without. */
static const bool blob_required[KMT_SPOOL_NR_BLOBS] = {
	[KMT_SPOOL_HEADER_PAGE] = true, [KMT_SPOOL_HEADER_EVENT] = true,
};

static const char *const buffer_dirs[KMT_SPOOL_NR_BUFFERS] = {
	[KMT_SPOOL_MAIN] = "", [KMT_SPOOL_ACCESS] = "access/",
};

static void path_of(const struct kmt_spool *s, char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", s->dir, name);
}

static int put_file(const struct kmt_spool *s, const char *name, const void *a, size_t alen,
		    const void *b, size_t blen, bool append, struct kmt_diag *d)
{
	char path[4200];
	int fd, ret;

	path_of(s, path, sizeof(path), name);
	fd = owner_open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0600);
	if (fd < 0)
		return kmt_diag_set(d, -errno, "cannot create '%s': %s", path, strerror(errno));
	ret = write_all(fd, a, alen);
	if (!ret && blen)
		ret = write_all(fd, b, blen);
	if (close(fd) && !ret)
		ret = -errno;
	if (ret)
		return kmt_diag_set(d, ret, "cannot write '%s': %s", path, strerror(-ret));
	return 0;
}

static struct kmt_spool *spool_new(const char *dir)
{
	struct kmt_spool *s = calloc(1, sizeof(*s));

	if (s && !(s->dir = strdup(dir))) {
		free(s);
		s = NULL;
	}
	if (s)
		s->lock_fd = -1;
	return s;
}

/* The spool is ours alone: 0, or -EBUSY if another process has it open. */
static int spool_lock(struct kmt_spool *s)
{
	s->lock_fd = owner_open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (s->lock_fd < 0)
		return -errno;
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB))
		return errno == EWOULDBLOCK ? -EBUSY : -errno;
	return 0;
}

/* ---- meta ---- */

static int meta_write(struct kmt_spool *s, const struct kmt_spool_meta *m, struct kmt_diag *d)
{
	struct sbuf sb = { 0 };
	char tmp[4200], path[4200];
	int i, ret;

	sbuf_printf(&sb, "kmemtrace %s\npid %d\n", *m->version ? m->version : KMT_VERSION, (int)m->pid);
	if (*m->instance)
		sbuf_printf(&sb, "instance %s\n", m->instance);
	if (m->created)
		sbuf_printf(&sb, "created %" PRId64 "\n", m->created);
	if (m->drained)
		sbuf_printf(&sb, "drained %" PRId64 "\n", m->drained);
	if (*m->uname)
		sbuf_printf(&sb, "uname %s\n", m->uname);
	if (m->page_size)
		sbuf_printf(&sb, "page_size %u\nlong_size %d\nsubbuf_size %u\n", m->page_size,
			    m->long_size, m->subbuf_size);
	if (m->nr_cpus) {
		sbuf_printf(&sb, "cpus");
		for (i = 0; i < m->nr_cpus; i++)
			sbuf_printf(&sb, " %d", m->cpus[i]);
		sbuf_printf(&sb, "\n");
	}
	if (*m->clock)
		sbuf_printf(&sb, "clock %s\n", m->clock);
	if (m->partial)
		sbuf_printf(&sb, "partial %s\n", kmt_partial_words(m->partial));
	if (*m->command)
		sbuf_printf(&sb, "command %.*s\n", (int)strcspn(m->command, "\n"), m->command);
	if (*m->settings)
		sbuf_printf(&sb, "settings %.*s\n", (int)strcspn(m->settings, "\n"), m->settings);
	if (!sb.buf)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	/* Whole or not at all: a reader never sees half of it. */
	ret = put_file(s, "meta.new", sb.buf, sb.len, NULL, 0, false, d);
	sbuf_release(&sb);
	path_of(s, tmp, sizeof(tmp), "meta.new");
	path_of(s, path, sizeof(path), "meta");
	if (!ret && owner_rename(tmp, path))
		ret = kmt_diag_set(d, -errno, "cannot rename '%s': %s", tmp, strerror(errno));
	if (!ret && m != &s->meta)
		s->meta = *m;
	return ret;
}

/* The value of @key in the meta text, up to the end of its line, or NULL. */
static const char *meta_value(const char *text, const char *key, size_t *len)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == ' ') {
			p += klen + 1;
			*len = strcspn(p, "\n");
			return p;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

static void meta_str(const char *text, const char *key, char *out, size_t size)
{
	size_t len = 0;
	const char *v = meta_value(text, key, &len);

	snprintf(out, size, "%.*s", v ? (int)len : 0, v ? v : "");
}

static long long meta_num(const char *text, const char *key)
{
	size_t len;
	const char *v = meta_value(text, key, &len);

	return v ? strtoll(v, NULL, 10) : 0;
}

static int meta_read(struct kmt_spool *s, struct kmt_diag *d)
{
	struct kmt_spool_meta *m = &s->meta;
	struct sbuf sb = { 0 };
	char path[4200];
	const char *v;
	size_t len;
	int ret;

	path_of(s, path, sizeof(path), "meta");
	ret = owner_read_file(path, &sb);
	if (ret) {
		sbuf_release(&sb);
		return kmt_diag_set(d, ret, "cannot read '%s': %s", path, strerror(-ret));
	}
	memset(m, 0, sizeof(*m));
	meta_str(sb.buf, "kmemtrace", m->version, sizeof(m->version));
	m->pid = (int32_t)meta_num(sb.buf, "pid");
	meta_str(sb.buf, "instance", m->instance, sizeof(m->instance));
	m->created = meta_num(sb.buf, "created");
	m->drained = meta_num(sb.buf, "drained");
	meta_str(sb.buf, "uname", m->uname, sizeof(m->uname));
	m->page_size = (uint32_t)meta_num(sb.buf, "page_size");
	m->subbuf_size = (uint32_t)meta_num(sb.buf, "subbuf_size");
	m->long_size = (int)meta_num(sb.buf, "long_size");
	meta_str(sb.buf, "clock", m->clock, sizeof(m->clock));
	meta_str(sb.buf, "command", m->command, sizeof(m->command));
	meta_str(sb.buf, "settings", m->settings, sizeof(m->settings));
	if ((v = meta_value(sb.buf, "partial", &len)))
		m->partial = kmt_partial_parse(v, len);
	if ((v = meta_value(sb.buf, "cpus", &len))) {
		const char *end = v + len;
		char *next;

		while (v < end && m->nr_cpus < KMT_MAX_CPUS) {
			long c = strtol(v, &next, 10);

			if (next == v)
				break;
			if (c >= 0 && c < KMT_MAX_CPUS)
				m->cpus[m->nr_cpus++] = (int)c;
			v = next;
		}
	}
	sbuf_release(&sb);
	return 0;
}

const struct kmt_spool_meta *kmt_spool_meta(const struct kmt_spool *s)
{
	return &s->meta;
}

int kmt_spool_set_meta(struct kmt_spool *s, const struct kmt_spool_meta *m, struct kmt_diag *d)
{
	return meta_write(s, m, d);
}

/* ---- life ---- */

struct kmt_spool *kmt_spool_create(const char *dir, struct kmt_diag *d)
{
	struct kmt_spool *s = spool_new(dir);
	long pid;

	if (!s) {
		kmt_diag_set(d, -ENOMEM, "out of memory");
		return NULL;
	}
	if (!owner_mkdir(dir, 0700)) {
		s->meta.pid = (int32_t)getpid();
		int ret = spool_lock(s);

		if (ret)
			kmt_diag_set(d, ret, "cannot lock '%s': %s", dir, strerror(-ret));
		else if (!meta_write(s, &s->meta, d))
			return s;
		kmt_spool_remove(s);
		return NULL;
	}
	if (errno != EEXIST) {
		kmt_diag_set(d, -errno, "cannot create '%s': %s", dir, strerror(errno));
	} else {
		pid = meta_read(s, NULL) ? 0 : s->meta.pid;
		if (pid > 0 && !(kill((pid_t)pid, 0) && errno == ESRCH))
			kmt_diag_set(d, -EEXIST, "'%s' is in use by kmemtrace (pid %ld)", dir, pid);
		else
			kmt_diag_set(d, -EEXIST, "'%s' was left by a recording that did not finish%s; "
				     "turn it into a trace with 'kmemtrace record --recover %s', or remove it",
				     dir, pid > 0 ? " (its recorder died)" : "", dir);
	}
	kmt_spool_close(s);
	return NULL;
}

struct kmt_spool *kmt_spool_open(const char *dir, struct kmt_diag *d)
{
	struct kmt_spool *s;
	struct stat st;
	char path[4200];
	int ret;

	if (owner_stat(dir, &st)) {
		kmt_diag_set(d, -errno, "cannot open spool '%s': %s", dir, strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(st.st_mode)) {
		kmt_diag_set(d, -ENOTDIR, "'%s' is not a spool directory", dir);
		return NULL;
	}
	s = spool_new(dir);
	if (!s) {
		kmt_diag_set(d, -ENOMEM, "out of memory");
		return NULL;
	}
	path_of(s, path, sizeof(path), "meta");
	if (owner_stat(path, &st)) {
		kmt_diag_set(d, KMT_EFORMAT, "'%s' is not a kmemtrace spool (it has no meta file)", dir);
		kmt_spool_close(s);
		return NULL;
	}
	if (meta_read(s, d)) {
		kmt_spool_close(s);
		return NULL;
	}
	ret = spool_lock(s);
	if (ret) {
		if (ret == -EBUSY)
			kmt_diag_set(d, ret, "'%s' is in use by another kmemtrace (the recorder, pid %d, "
				     "is alive, or it is being recovered)", dir, (int)s->meta.pid);
		else
			kmt_diag_set(d, ret, "cannot lock '%s': %s", dir, strerror(-ret));
		kmt_spool_close(s);
		return NULL;
	}
	path_of(s, path, sizeof(path), "access");
	s->has_access = !owner_stat(path, &st) && S_ISDIR(st.st_mode);
	return s;
}

void kmt_spool_close(struct kmt_spool *s)
{
	if (!s)
		return;
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	free(s->dir);
	free(s);
}

static int remove_dir(const char *dir)
{
	struct dirent *de;
	char path[4200];
	DIR *dp = owner_opendir(dir);

	if (!dp)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(dp))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (owner_unlink(path) && errno == EISDIR)
			remove_dir(path);	/* access/, one level down */
	}
	closedir(dp);
	return owner_rmdir(dir) ? -errno : 0;
}

int kmt_spool_remove(struct kmt_spool *s)
{
	int ret;

	if (!s)
		return 0;
	ret = remove_dir(s->dir);
	kmt_spool_close(s);
	return ret;
}

const char *kmt_spool_dir(const struct kmt_spool *s)
{
	return s->dir;
}

#define SPOOL_END ".spool"

int kmt_spool_name(const char *output, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%s" SPOOL_END, output);

	return n < len ? 0 : -ENAMETOOLONG;
}

int kmt_spool_output_name(const char *dir, char *buf, size_t len)
{
	size_t n = strlen(dir), end = strlen(SPOOL_END);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n > end && !strncmp(dir + n - end, SPOOL_END, end))
		n = (size_t)snprintf(buf, len, "%.*s", (int)(n - end), dir);
	else
		n = (size_t)snprintf(buf, len, "%.*s.dat", (int)n, dir);
	return n < len ? 0 : -ENAMETOOLONG;
}

/* ---- contents ---- */

int kmt_spool_put(struct kmt_spool *s, enum kmt_spool_blob b, const void *data, size_t len,
		  struct kmt_diag *d)
{
	if ((unsigned int)b >= KMT_SPOOL_NR_BLOBS)
		return kmt_diag_set(d, -EINVAL, "no such spool item %d", (int)b);
	return put_file(s, blob_names[b], data, len, NULL, 0, false, d);
}

uint64_t kmt_spool_size(const struct kmt_spool *s, enum kmt_spool_blob b)
{
	char path[4200];
	struct stat st;

	if ((unsigned int)b >= KMT_SPOOL_NR_BLOBS)
		return 0;
	path_of(s, path, sizeof(path), blob_names[b]);
	return owner_stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

int kmt_spool_add_format(struct kmt_spool *s, const char *system, const char *name,
			 const char *text, size_t len, struct kmt_diag *d)
{
	char head[512];
	int n = snprintf(head, sizeof(head), "FORMAT %s %s %zu\n", system, name, len);

	return put_file(s, "formats", head, (size_t)n, text, len, true, d);
}

int kmt_spool_add_buffer(struct kmt_spool *s, enum kmt_spool_buffer b, struct kmt_diag *d)
{
	char path[4200];

	if (b != KMT_SPOOL_ACCESS)
		return 0;
	path_of(s, path, sizeof(path), "access");
	if (owner_mkdir(path, 0700) && errno != EEXIST)
		return kmt_diag_set(d, -errno, "cannot create '%s': %s", path, strerror(errno));
	s->has_access = true;
	return 0;
}

bool kmt_spool_has_buffer(const struct kmt_spool *s, enum kmt_spool_buffer b)
{
	return b == KMT_SPOOL_MAIN || (b == KMT_SPOOL_ACCESS && s->has_access);
}

static void cpu_path(const struct kmt_spool *s, enum kmt_spool_buffer b, const char *what,
		     int cpu, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s%s%d", s->dir, buffer_dirs[b], what, cpu);
}

int kmt_spool_cpu_create(struct kmt_spool *s, enum kmt_spool_buffer b, int cpu,
			 struct kmt_diag *d)
{
	char path[4200];
	int fd;

	if (!kmt_spool_has_buffer(s, b))
		return kmt_diag_set(d, -EINVAL, "the spool has no buffer %d", (int)b);
	cpu_path(s, b, "cpu", cpu, path, sizeof(path));
	fd = owner_open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return kmt_diag_set(d, -errno, "cannot create %s: %s", path, strerror(errno));
	return fd;
}

int kmt_spool_cpu_append(struct kmt_spool *s, enum kmt_spool_buffer b, int cpu,
			 uint32_t subbuf_size, struct kmt_diag *d)
{
	char path[4200];
	struct stat st;
	off_t end;
	int fd, ret;

	if (!kmt_spool_has_buffer(s, b) || !subbuf_size)
		return kmt_diag_set(d, -EINVAL, "the spool has no buffer %d", (int)b);
	cpu_path(s, b, "cpu", cpu, path, sizeof(path));
	/* Not O_APPEND: splice() refuses to write to such a file. */
	fd = owner_open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return kmt_diag_set(d, -errno, "cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, &st))
		goto fail;
	end = st.st_size / subbuf_size * subbuf_size;
	if ((end != st.st_size && ftruncate(fd, end)) || lseek(fd, end, SEEK_SET) < 0)
		goto fail;
	return fd;
fail:
	ret = kmt_diag_set(d, -errno, "cannot continue %s: %s", path, strerror(errno));
	close(fd);
	return ret;
}

int kmt_spool_put_stats(struct kmt_spool *s, enum kmt_spool_buffer b, int cpu,
			const char *text, size_t len, struct kmt_diag *d)
{
	char name[64];

	snprintf(name, sizeof(name), "%sstats%d", buffer_dirs[b], cpu);
	return put_file(s, name, text, len, NULL, 0, false, d);
}

int kmt_spool_set_truncated(struct kmt_spool *s, const char *why, struct kmt_diag *d)
{
	return put_file(s, "truncated", why, strlen(why), "\n", 1, false, d);
}

int kmt_spool_reserve(struct kmt_spool *s, uint64_t bytes, struct kmt_diag *d)
{
	char path[4200];
	int fd, ret;

	path_of(s, path, sizeof(path), "reserve");
	fd = owner_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return kmt_diag_set(d, -errno, "cannot create '%s': %s", path, strerror(errno));
	ret = posix_fallocate(fd, 0, (off_t)bytes);
	close(fd);
	if (ret) {
		owner_unlink(path);
		return kmt_diag_set(d, -ret, "no room in '%s' for %llu MiB of trace metadata: %s", s->dir,
				    (unsigned long long)(bytes >> 20), strerror(ret));
	}
	return 0;
}

void kmt_spool_unreserve(struct kmt_spool *s)
{
	char path[4200];

	path_of(s, path, sizeof(path), "reserve");
	owner_unlink(path);
}

/* ---- reading back, for finalize.c (spool-local.h) ---- */

int spool_get(const struct kmt_spool *s, enum kmt_spool_blob b, struct sbuf *out,
	      struct kmt_diag *d)
{
	char path[4200];
	int ret;

	path_of(s, path, sizeof(path), blob_names[b]);
	ret = owner_read_file(path, out);
	if (ret == -ENOENT && !blob_required[b])
		return sbuf_add(out, "", 0);
	if (ret)
		return kmt_diag_set(d, ret, "cannot read '%s': %s", path, strerror(-ret));
	return 0;
}

int spool_get_formats(const struct kmt_spool *s, struct sbuf *out, struct kmt_diag *d)
{
	char path[4200];
	int ret;

	path_of(s, path, sizeof(path), "formats");
	ret = owner_read_file(path, out);
	if (ret)
		return kmt_diag_set(d, ret, "cannot read '%s': %s", path, strerror(-ret));
	return 0;
}

int spool_next_format(const struct kmt_spool *s, const struct sbuf *all, size_t *pos,
		      struct spool_format *f, struct kmt_diag *d)
{
	const char *p = all->buf + *pos, *end = all->buf + all->len, *nl;

	if (p >= end)
		return 0;
	nl = memchr(p, '\n', (size_t)(end - p));
	if (!nl || sscanf(p, "FORMAT %127s %127s %zu", f->system, f->name, &f->len) != 3 ||
	    f->len > (size_t)(end - nl - 1))
		return kmt_diag_set(d, KMT_EFORMAT, "%s/formats: bad entry at byte %zu", s->dir, *pos);
	f->text = nl + 1;
	*pos = (size_t)(nl + 1 + f->len - all->buf);
	return 1;
}

int spool_cpu_open(const struct kmt_spool *s, enum kmt_spool_buffer b, int cpu,
		   struct kmt_diag *d)
{
	char path[4200];
	int fd;

	cpu_path(s, b, "cpu", cpu, path, sizeof(path));
	fd = owner_open(path, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0 && errno != ENOENT)
		return kmt_diag_set(d, -errno, "cannot open '%s': %s", path, strerror(errno));
	return fd < 0 ? -ENOENT : fd;
}

int spool_cpu_name(const struct kmt_spool *s, enum kmt_spool_buffer b, int cpu, char *buf,
		   size_t len)
{
	cpu_path(s, b, "cpu", cpu, buf, len);
	return 0;
}

int spool_get_stats(const struct kmt_spool *s, enum kmt_spool_buffer b, int cpu,
		    struct sbuf *out)
{
	char path[4200];
	int ret;

	cpu_path(s, b, "stats", cpu, path, sizeof(path));
	ret = owner_read_file(path, out);
	if (ret == -ENOENT)
		return sbuf_add(out, "", 0);
	return ret;
}

int spool_get_truncated(const struct kmt_spool *s, struct sbuf *out)
{
	char path[4200];
	int ret;

	path_of(s, path, sizeof(path), "truncated");
	ret = owner_read_file(path, out);
	if (ret == -ENOENT)
		return sbuf_add(out, "", 0);
	return ret;
}
