/*
 * Event formats: the kernel's self-description of each tracepoint record
 * (events/<system>/<event>/format) and of the ring-buffer page header
 * (events/header_page). Parsed from the text stored in a trace file, so a
 * file from another kernel decodes with its own layout.
 */
#ifndef KMEMTRACE_FORMAT_H
#define KMEMTRACE_FORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include "kmemtrace.h"

enum {
	KMT_FIELD_SIGNED = 1 << 0,
	KMT_FIELD_ARRAY = 1 << 1,	/* "type name[N]" */
	KMT_FIELD_DATALOC = 1 << 2,	/* "__data_loc type[] name": u32 len<<16|off */
	KMT_FIELD_STRING = 1 << 3,	/* char array or __data_loc char[] */
};

struct kmt_field {
	char *name;
	char *type;
	uint32_t offset;
	uint32_t size;
	uint32_t flags;
	uint32_t array_len;		/* elements, for KMT_FIELD_ARRAY */
};

struct kmt_format {
	char *system;
	char *name;
	uint32_t id;
	struct kmt_field *fields;	/* common_* fields first, as in the text */
	int nr_fields;
	char *text;			/* the original text, NUL-terminated */
	size_t text_len;
};

/*
 * Parse one format file's @text (@len bytes, need not be NUL-terminated)
 * into @fmt; @system names the directory it came from (NULL: "ftrace").
 * On failure returns KMT_EFORMAT with the reason in @d, and @fmt holds
 * nothing to release. On success release with kmt_format_release().
 */
int kmt_format_parse(struct kmt_format *fmt, const char *system,
		     const char *text, size_t len, struct kmt_diag *d);
void kmt_format_release(struct kmt_format *fmt);

/* The field called @name, or NULL. */
const struct kmt_field *kmt_format_field(const struct kmt_format *fmt,
					 const char *name);

/* All formats of a trace, looked up by event id. */
struct kmt_formats {
	struct kmt_format *v;
	int nr;
	int alloc;
	struct kmt_format **by_id;	/* dense, max_id + 1 entries */
	uint32_t max_id;
};

void kmt_formats_init(struct kmt_formats *fs);
/* Take ownership of *@fmt (which is cleared); -EEXIST on a duplicate id. */
int kmt_formats_add(struct kmt_formats *fs, struct kmt_format *fmt);
void kmt_formats_release(struct kmt_formats *fs);
const struct kmt_format *kmt_formats_by_id(const struct kmt_formats *fs,
					   uint32_t id);
const struct kmt_format *kmt_formats_find(const struct kmt_formats *fs,
					  const char *system, const char *name);

/*
 * The ring-buffer sub-buffer header, from events/header_page: where the
 * page timestamp, the commit word (data length plus missed-events flags)
 * and the data start. Sizes are the kernel's (commit is a kernel long).
 */
struct kmt_page_layout {
	uint32_t ts_offset, ts_size;
	uint32_t commit_offset, commit_size;
	uint32_t data_offset;
};

int kmt_page_layout_parse(struct kmt_page_layout *pl, const char *text,
			  size_t len, struct kmt_diag *d);
/* The layout of every kernel since 2.6.31 with a @long_size-byte long. */
void kmt_page_layout_default(struct kmt_page_layout *pl, int long_size);

#endif
