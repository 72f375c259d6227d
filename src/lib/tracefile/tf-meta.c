/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Metadata payloads of trace.dat, common to v6 and v7: header_page and
 * header_event, ftrace and event formats, length-prefixed texts, CPUSTAT
 * texts and BUFFER options. Each parser works on a bounded cursor and
 * reports what it could not accept in @d; the caller adds file, section
 * and offset.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "tf-local.h"

#define MAX_FORMATS 100000

int tf_parse_blob(struct cur *c, unsigned int lensize, struct sbuf *out,
		  struct kmt_diag *d)
{
	uint64_t len = cur_num(c, lensize);
	const uint8_t *p;

	if (c->bad)
		return kmt_diag_set(d, KMT_ETRUNC, "length field cut short");
	p = cur_bytes(c, len);
	if (!p)
		return kmt_diag_set(d, KMT_ETRUNC, "length %" PRIu64 " runs past the end (%zu bytes left)",
				    len, cur_left(c));
	out->len = 0;
	return sbuf_add(out, p, (size_t)len);
}

static int expect_tag(struct cur *c, const char *tag, struct kmt_diag *d)
{
	const char *s = cur_str(c);

	if (!s || strcmp(s, tag))
		return kmt_diag_set(d, KMT_EFORMAT, "expected \"%s\"", tag);
	return 0;
}

int tf_parse_header_info(struct kmt_file *f, struct cur *c, struct kmt_diag *d)
{
	int ret;

	ret = expect_tag(c, "header_page", d);
	if (!ret)
		ret = tf_parse_blob(c, 8, &f->header_page, d);
	if (!ret)
		ret = expect_tag(c, "header_event", d);
	if (!ret)
		ret = tf_parse_blob(c, 8, &f->header_event, d);
	if (!ret)
		ret = kmt_page_layout_parse(&f->layout, f->header_page.buf,
					    f->header_page.len, d);
	if (!ret)
		f->info.kernel_long_size = (int)f->layout.commit_size;
	return ret;
}

/* Parse and keep one format; a format we cannot parse is an error. */
static int add_format(struct kmt_file *f, const char *system, const uint8_t *text,
		      uint64_t len, struct kmt_diag *d)
{
	struct kmt_format fmt;
	int ret;

	ret = kmt_format_parse(&fmt, system, (const char *)text, (size_t)len, d);
	if (ret) {
		char why[sizeof(d->msg)], q[64];

		snprintf(why, sizeof(why), "%s", d->msg);
		return kmt_diag_set(d, ret, "format #%d of system '%s': %s",
				    f->formats.nr, system ? ESC(q, system) : "ftrace", why);
	}
	ret = kmt_formats_add(&f->formats, &fmt);
	if (ret == -EEXIST) {
		/* trace-cmd tolerates this; keep the first, like it does. */
		kmt_format_release(&fmt);
		return 0;
	}
	if (ret) {
		kmt_format_release(&fmt);
		return kmt_diag_set(d, ret, "out of memory");
	}
	return 0;
}

static int parse_format_list(struct kmt_file *f, struct cur *c, const char *system,
			     struct kmt_diag *d)
{
	uint32_t n = (uint32_t)cur_num(c, 4), i;

	if (c->bad)
		return kmt_diag_set(d, KMT_ETRUNC, "format count cut short");
	if (n > MAX_FORMATS || n > cur_left(c) / 8)
		return kmt_diag_set(d, KMT_EFORMAT, "format count %u cannot fit in %zu bytes",
				    n, cur_left(c));
	for (i = 0; i < n; i++) {
		uint64_t len = cur_num(c, 8);
		const uint8_t *text = cur_bytes(c, len);
		int ret;

		if (!text)
			return kmt_diag_set(d, KMT_ETRUNC, "format %u of %u: length %" PRIu64
					    " runs past the end", i, n, len);
		ret = add_format(f, system, text, len, d);
		if (ret)
			return ret;
	}
	return 0;
}

int tf_parse_ftrace_events(struct kmt_file *f, struct cur *c, struct kmt_diag *d)
{
	return parse_format_list(f, c, NULL, d);
}

int tf_parse_event_formats(struct kmt_file *f, struct cur *c, struct kmt_diag *d)
{
	uint32_t nsys = (uint32_t)cur_num(c, 4), i;

	if (c->bad)
		return kmt_diag_set(d, KMT_ETRUNC, "system count cut short");
	if (nsys > MAX_FORMATS || nsys > cur_left(c) / 5)
		return kmt_diag_set(d, KMT_EFORMAT, "system count %u cannot fit in %zu bytes",
				    nsys, cur_left(c));
	for (i = 0; i < nsys; i++) {
		const char *sys = cur_str(c);
		int ret;

		if (!sys)
			return kmt_diag_set(d, KMT_ETRUNC, "system %u of %u: name cut short", i, nsys);
		ret = parse_format_list(f, c, sys, d);
		if (ret)
			return ret;
	}
	return 0;
}

struct kmt_buffer *tf_buffer_get(struct kmt_file *f, const char *name)
{
	struct kmt_buffer *b;
	int i;

	for (i = 0; i < f->nr_buffers; i++)
		if (!strcmp(f->buffers[i].name, name))
			return &f->buffers[i];
	b = realloc(f->buffers, sizeof(*b) * (size_t)(f->nr_buffers + 1));
	if (!b)
		return NULL;
	f->buffers = b;
	b = &f->buffers[f->nr_buffers];
	memset(b, 0, sizeof(*b));
	b->name = strdup(name);
	if (!b->name)
		return NULL;
	f->nr_buffers++;
	return b;
}

const struct kmt_cpustat *kmt_buffer_cpustat(const struct kmt_buffer *b, int cpu)
{
	int i;

	for (i = 0; b && i < b->nr_stats; i++)
		if (b->stats[i].valid && b->stats[i].cpu == cpu)
			return &b->stats[i];
	return NULL;
}

/*
 * One CPUSTAT option: either "CPU: N\nentries: ...\n..." for the buffer
 * currently selected, or trace-cmd's "\nBuffer: NAME\n\n" marker that
 * selects the buffer the following CPUSTATs belong to.
 */
int tf_add_cpustat(struct kmt_file *f, const char *text, size_t len)
{
	struct kmt_cpustat st = { 0 }, *v;
	struct kmt_buffer *b;
	const char *mark;
	char name[256];

	mark = memmem(text, len, "Buffer: ", 8);
	if (mark && !memmem(text, len, "CPU:", 4)) {
		const char *s = mark + 8, *end = text + len;
		size_t n = 0;

		while (s + n < end && s[n] != '\n' && s[n] != '\0' && n < sizeof(name) - 1)
			n++;
		memcpy(name, s, n);
		name[n] = '\0';
		b = tf_buffer_get(f, name);
		if (!b)
			return -ENOMEM;
		f->stat_buffer = b->name;
		return sbuf_add(&f->cpustat_text, text, strnlen(text, len));
	}
	if (!kmt_cpustat_parse(&st, text, len) || st.cpu < 0 || st.cpu > 65535)
		return sbuf_add(&f->cpustat_text, text, strnlen(text, len));
	st.text = xstrndup(text, strnlen(text, len));
	b = tf_buffer_get(f, f->stat_buffer ? f->stat_buffer : "");
	if (!b || !st.text) {
		free(st.text);
		return -ENOMEM;
	}
	v = realloc(b->stats, sizeof(*v) * (size_t)(b->nr_stats + 1));
	if (!v) {
		free(st.text);
		return -ENOMEM;
	}
	b->stats = v;
	b->stats[b->nr_stats++] = st;
	return sbuf_add(&f->cpustat_text, text, strnlen(text, len));
}

int tf_parse_buffer_option(struct kmt_file *f, struct cur *c, bool v7,
			   bool latency, struct kmt_diag *d)
{
	uint64_t off = cur_num(c, 8);
	const char *name = cur_str(c), *clock = NULL;
	struct kmt_buffer *b;
	uint32_t n, i;
	char q[64];

	if (c->bad)
		return kmt_diag_set(d, KMT_EFORMAT, "BUFFER option cut short");
	if (v7) {
		clock = cur_str(c);
		if (!clock)
			return kmt_diag_set(d, KMT_EFORMAT, "BUFFER option without a clock");
	}
	if (latency)
		return 0;	/* text buffers carry no events we decode */
	b = tf_buffer_get(f, name);
	if (!b)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	if (b->cpus)
		return kmt_diag_set(d, KMT_EFORMAT, "buffer '%s' described twice", ESC(q, name));
	b->section_offset = off;
	if (clock) {
		b->clock = strdup(clock);
		if (!b->clock)
			return kmt_diag_set(d, -ENOMEM, "out of memory");
	}
	if (!v7)
		return 0;
	b->page_size = (uint32_t)cur_num(c, 4);
	n = (uint32_t)cur_num(c, 4);
	if (c->bad)
		return kmt_diag_set(d, KMT_EFORMAT, "BUFFER option '%s' cut short", ESC(q, name));
	if (n > cur_left(c) / 20)
		return kmt_diag_set(d, KMT_EFORMAT, "BUFFER option '%s': %u CPUs cannot fit in %zu bytes",
				    ESC(q, name), n, cur_left(c));
	b->cpus = calloc(n ? n : 1, sizeof(*b->cpus));
	if (!b->cpus)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		b->cpus[i].cpu = (int)cur_num(c, 4);
		b->cpus[i].offset = cur_num(c, 8);
		b->cpus[i].size = cur_num(c, 8);
	}
	b->nr_cpus = (int)n;
	return 0;
}
