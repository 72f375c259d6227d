/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What an open trace file tells (include/kmemtrace/tracefile.h): its
 * description, event formats and page layout, the metadata texts, and its
 * buffers. Everything here was read and checked by tf-read.c at open.
 */
#include "tf-local.h"

void kmt_file_set_threads(struct kmt_file *f, int n)
{
	f->threads = n;
	f->inflaters = n > 1 ? n : 0;
}

void kmt_file_set_inflaters(struct kmt_file *f, int n)
{
	f->inflaters = MAX(n, 0);
}

void kmt_file_set_observer(struct kmt_file *f, const struct kmt_page_observer *ob)
{
	f->observer = ob ? *ob : (struct kmt_page_observer){ 0 };
}

void kmt_file_read_progress(const struct kmt_file *f, uint64_t *done, uint64_t *total)
{
	int b, i;

	*total = 0;
	for (b = 0; b < f->nr_buffers; b++)
		for (i = 0; i < f->buffers[b].nr_cpus; i++)
			*total += f->buffers[b].cpus[i].size;
	*done = __atomic_load_n(&f->data_read, __ATOMIC_RELAXED);
}

int kmt_file_threads(const struct kmt_file *f)
{
	return f->threads;
}

int kmt_file_inflate_threads(const struct kmt_file *f)
{
	return tf_pool_threads(f->pool);
}

uint64_t kmt_file_wait_ns(const struct kmt_file *f)
{
	return __atomic_load_n(&f->wait_ns, __ATOMIC_RELAXED);
}

uint64_t kmt_file_inflate_ns(const struct kmt_file *f, bool workers)
{
	return __atomic_load_n(&f->inflate_ns[!workers], __ATOMIC_RELAXED);
}

const struct kmt_file_info *kmt_file_info(const struct kmt_file *f)
{
	return &f->info;
}

const struct kmt_formats *kmt_file_formats(const struct kmt_file *f)
{
	return &f->formats;
}

const struct kmt_page_layout *kmt_file_page_layout(const struct kmt_file *f)
{
	return &f->layout;
}

static const char *blob(const struct sbuf *sb, size_t *len)
{
	if (len)
		*len = sb->len;
	return sb->buf ? sb->buf : "";
}

const char *kmt_file_header_page(const struct kmt_file *f, size_t *len)
{
	return blob(&f->header_page, len);
}

const char *kmt_file_header_event(const struct kmt_file *f, size_t *len)
{
	return blob(&f->header_event, len);
}

const char *kmt_file_kallsyms(const struct kmt_file *f, size_t *len)
{
	return blob(&f->kallsyms, len);
}

const char *kmt_file_printk(const struct kmt_file *f, size_t *len)
{
	return blob(&f->printk, len);
}

const char *kmt_file_cmdlines(const struct kmt_file *f, size_t *len)
{
	return blob(&f->cmdlines, len);
}

const char *kmt_file_trace_clock(const struct kmt_file *f)
{
	return f->trace_clock;
}

int kmt_file_nr_buffers(const struct kmt_file *f)
{
	return f->nr_buffers;
}

const struct kmt_buffer *kmt_file_buffer(const struct kmt_file *f, int i)
{
	return i >= 0 && i < f->nr_buffers ? &f->buffers[i] : NULL;
}

int kmt_file_main_buffer(const struct kmt_file *f)
{
	return f->main_buffer;
}

int kmt_file_find_buffer(const struct kmt_file *f, const char *name)
{
	int i;

	for (i = 0; i < f->nr_buffers; i++)
		if (!strcmp(f->buffers[i].name, name))
			return i;
	return -1;
}

int kmt_file_access_buffer(const struct kmt_file *f)
{
	return kmt_file_find_buffer(f, KMT_ACCESS_BUFFER);
}
