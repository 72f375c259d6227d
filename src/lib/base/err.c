/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Error strings for -errno and our own KMT_E* codes, and diagnostics (with
 * the file's own bytes escaped before they are quoted).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <kmemtrace/base.h>

static const char *const kmt_errors[] = {
	[KMT_EFORMAT - KMT_EFIRST] = "corrupt or unrecognised trace file",
	[KMT_ETRUNC - KMT_EFIRST] = "trace file is truncated",
	[KMT_EVERSION - KMT_EFIRST] = "unsupported trace file version",
	[KMT_ECOMPRESS - KMT_EFIRST] = "unsupported compression or corrupt compressed data",
	[KMT_ENOEVENT - KMT_EFIRST] = "no such event on this kernel",
	[KMT_ENOTRACEFS - KMT_EFIRST] = "tracefs is not available",
	[KMT_ENOFIRE - KMT_EFIRST] = "hardware watchpoints never fire on this machine",
};

const char *kmt_strerror(int err)
{
	if (err >= KMT_EFIRST && err < KMT_ELAST)
		return kmt_errors[err - KMT_EFIRST];
	if (err < 0 && err > -4096)
		return strerror(-err);
	return "unknown error";
}

int kmt_diag_set(struct kmt_diag *d, int err, const char *fmt, ...)
{
	char msg[sizeof(d->msg)];
	va_list ap;

	if (!d)
		return err;
	d->err = err;
	/* Through a copy: callers may add to the message already there. */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memcpy(d->msg, msg, sizeof(msg));
	return err;
}

/* Bytes @c takes escaped. */
static size_t escaped_len(unsigned char c)
{
	return c == '\\' ? 2 : c >= 0x20 && c < 0x7f ? 1 : 4;
}

const char *kmt_escape(char *buf, size_t size, const void *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = s;
	size_t i, o = 0, all = 0;

	for (i = 0; i < len && p[i]; i++)
		all += escaped_len(p[i]);
	/* What does not fit whole is cut where "..." still fits after it. */
	for (i = 0; i < len && p[i]; i++) {
		unsigned char c = p[i];
		size_t need = escaped_len(c);

		if (all + 1 > size && o + need + 4 > size) {
			memcpy(buf + o, "...", 4);
			return buf;
		}
		if (need == 1) {
			buf[o++] = (char)c;
		} else if (need == 2) {
			buf[o++] = '\\';
			buf[o++] = '\\';
		} else {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 15];
		}
	}
	buf[o] = '\0';
	return buf;
}
