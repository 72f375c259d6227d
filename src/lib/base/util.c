/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small helpers: a growable buffer and whole-file I/O that copes with
 * /proc and tracefs files (size 0 in stat, short reads, EINTR).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kmt-local.h"

int sbuf_grow(struct sbuf *sb, size_t extra)
{
	size_t want;
	char *p;

	if (extra > SIZE_MAX / 2 - sb->len)
		return -ENOMEM;
	want = sb->len + extra + 1;
	if (want <= sb->alloc)
		return 0;
	if (want < sb->alloc * 2)
		want = sb->alloc * 2;
	if (want < 64)
		want = 64;
	p = realloc(sb->buf, want);
	if (!p)
		return -ENOMEM;
	sb->buf = p;
	sb->alloc = want;
	return 0;
}

int sbuf_add(struct sbuf *sb, const void *data, size_t len)
{
	int ret = sbuf_grow(sb, len);

	if (ret)
		return ret;
	if (len)
		memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
	return 0;
}

int sbuf_addstr(struct sbuf *sb, const char *s)
{
	return sbuf_add(sb, s, strlen(s) + 1);
}

int sbuf_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n, ret;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	ret = sbuf_grow(sb, (size_t)n);
	if (ret)
		return ret;
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
	return 0;
}

int sbuf_add16(struct sbuf *sb, uint16_t v)
{
	return sbuf_add(sb, &v, 2);
}

int sbuf_add32(struct sbuf *sb, uint32_t v)
{
	return sbuf_add(sb, &v, 4);
}

int sbuf_add64(struct sbuf *sb, uint64_t v)
{
	return sbuf_add(sb, &v, 8);
}

void sbuf_release(struct sbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
}

int read_file(const char *path, struct sbuf *out)
{
	int fd, ret = 0;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	out->len = 0;
	for (;;) {
		ret = sbuf_grow(out, 65536);
		if (ret)
			break;
		n = read(fd, out->buf + out->len, out->alloc - out->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (n == 0)
			break;
		out->len += (size_t)n;
	}
	if (!ret)
		out->buf[out->len] = '\0';
	close(fd);
	return ret;
}

enum io { IO_WRITE, IO_PWRITE, IO_PREAD };

/* All of @len bytes, through short transfers and EINTR; -EIO if none move. */
static int io_all(enum io how, int fd, void *buf, size_t len, off_t off)
{
	char *p = buf;

	while (len) {
		ssize_t n = how == IO_WRITE ? write(fd, p, len) :
			    how == IO_PWRITE ? pwrite(fd, p, len, off) : pread(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		off += n;
		len -= (size_t)n;
	}
	return 0;
}

int write_all(int fd, const void *buf, size_t len)
{
	return io_all(IO_WRITE, fd, (void *)buf, len, 0);
}

int pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	return io_all(IO_PWRITE, fd, (void *)buf, len, off);
}

int pread_all(int fd, void *buf, size_t len, off_t off)
{
	return io_all(IO_PREAD, fd, buf, len, off);
}

int write_str_file(const char *path, const char *s)
{
	int fd, ret;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = write_all(fd, s, strlen(s));
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static __thread bool wait_counting;
static __thread uint64_t waited;

void kmt_cond_wait(pthread_cond_t *cv, pthread_mutex_t *mu)
{
	uint64_t c0;

	if (!wait_counting) {
		pthread_cond_wait(cv, mu);
		return;
	}
	c0 = kmt_thread_cpu_ns();
	pthread_cond_wait(cv, mu);
	waited += kmt_thread_cpu_ns() - c0;
}

void kmt_lock(pthread_mutex_t *mu)
{
	uint64_t c0;

	if (!wait_counting) {
		pthread_mutex_lock(mu);
		return;
	}
	if (!pthread_mutex_trylock(mu))
		return;
	c0 = kmt_thread_cpu_ns();
	pthread_mutex_lock(mu);
	waited += kmt_thread_cpu_ns() - c0;
}

void kmt_wait_count(bool on)
{
	wait_counting = on;
}

uint64_t kmt_waited_ns(void)
{
	return waited;
}
