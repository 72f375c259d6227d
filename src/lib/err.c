/*
 * Error strings for -errno and our own KMT_E* codes, and diagnostics.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <kmemtrace/kmemtrace.h>

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
