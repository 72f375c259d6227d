/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parser for the kernel's event format text:
 *
 *	name: kmalloc
 *	ID: 658
 *	format:
 *		field:unsigned long call_site;	offset:8;	size:8;	signed:0;
 *		...
 *	print fmt: "..."
 *
 * Only what decoding needs is kept (name, id, field layout); the text itself
 * is kept verbatim so it can be written into another trace file. The input
 * may be hostile: every number is range-checked, nothing is trusted.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include <kmemtrace/tracefile.h>
#include "base/kmt-local.h"

#define FIELD_MAX_OFFSET 65536u		/* a record never exceeds a page */
#define FORMAT_MAX_FIELDS 4096

struct line {
	const char *s;
	size_t len;
};

static bool next_line(const char **p, const char *end, struct line *l)
{
	const char *nl;

	if (*p >= end)
		return false;
	nl = memchr(*p, '\n', (size_t)(end - *p));
	l->s = *p;
	l->len = nl ? (size_t)(nl - *p) : (size_t)(end - *p);
	*p = nl ? nl + 1 : end;
	return true;
}

static void trim(struct line *l)
{
	while (l->len && isspace((unsigned char)l->s[0])) {
		l->s++;
		l->len--;
	}
	while (l->len && isspace((unsigned char)l->s[l->len - 1]))
		l->len--;
}

static bool starts(const struct line *l, const char *prefix)
{
	size_t n = strlen(prefix);

	return l->len >= n && !memcmp(l->s, prefix, n);
}

/* Parse an unsigned decimal at @s (up to @end); -1 on failure. */
static long parse_num(const char *s, const char *end)
{
	long v = 0;

	if (s >= end || !isdigit((unsigned char)*s))
		return -1;
	while (s < end && isdigit((unsigned char)*s)) {
		v = v * 10 + (*s - '0');
		if (v > 0x7fffffff)
			return -1;
		s++;
	}
	return v;
}

/* Find "key:" inside @l and parse the number after it; -1 if absent. */
static long field_attr(const struct line *l, const char *key)
{
	size_t klen = strlen(key);
	const char *end = l->s + l->len;
	const char *p;

	for (p = l->s; p + klen <= end; p++) {
		if (memcmp(p, key, klen))
			continue;
		if (p != l->s && p[-1] != '\t' && p[-1] != ' ' && p[-1] != ';')
			continue;
		return parse_num(p + klen, end);
	}
	return -1;
}

/*
 * Split a declaration "unsigned long caller[8]" into type, name and array
 * length. Returns false if there is no identifier to call a name.
 */
static bool split_decl(const char *s, size_t len, struct kmt_field *f)
{
	size_t end = len, nstart;
	long arr = -1;

	while (end && isspace((unsigned char)s[end - 1]))
		end--;
	if (end && s[end - 1] == ']') {
		size_t lb = end - 1;

		while (lb && s[lb] != '[')
			lb--;
		if (s[lb] != '[')
			return false;
		arr = parse_num(s + lb + 1, s + end - 1);
		if (arr < 0)
			arr = 0;		/* "[]" or a symbolic length */
		end = lb;
		while (end && isspace((unsigned char)s[end - 1]))
			end--;
	}
	nstart = end;
	while (nstart && (isalnum((unsigned char)s[nstart - 1]) || s[nstart - 1] == '_'))
		nstart--;
	if (nstart == end)
		return false;
	f->name = xstrndup(s + nstart, end - nstart);
	while (nstart && isspace((unsigned char)s[nstart - 1]))
		nstart--;
	f->type = xstrndup(s, nstart);
	if (!f->name || !f->type)
		return false;
	if (arr >= 0) {
		f->flags |= KMT_FIELD_ARRAY;
		f->array_len = (uint32_t)arr;
	}
	if (!strncmp(f->type, "__data_loc", 10) || !strncmp(f->type, "__rel_loc", 9))
		f->flags |= KMT_FIELD_DATALOC;
	if (strstr(f->type, "char") && (f->flags & (KMT_FIELD_ARRAY | KMT_FIELD_DATALOC)))
		f->flags |= KMT_FIELD_STRING;
	return true;
}

static void field_release(struct kmt_field *f)
{
	free(f->name);
	free(f->type);
}

void kmt_format_release(struct kmt_format *fmt)
{
	int i;

	for (i = 0; i < fmt->nr_fields; i++)
		field_release(&fmt->fields[i]);
	free(fmt->fields);
	free(fmt->system);
	free(fmt->name);
	free(fmt->text);
	memset(fmt, 0, sizeof(*fmt));
}

static int parse_field(struct kmt_format *fmt, const struct line *l,
		       struct kmt_diag *d)
{
	struct kmt_field f = { 0 };
	const char *decl, *semi;
	long off, size, sgn;
	struct kmt_field *nf;

	decl = (const char *)memchr(l->s, ':', l->len) + 1;
	semi = memchr(decl, ';', (size_t)(l->s + l->len - decl));
	if (!semi)
		return kmt_diag_set(d, KMT_EFORMAT, "field without ';'");
	off = field_attr(l, "offset:");
	size = field_attr(l, "size:");
	sgn = field_attr(l, "signed:");
	if (off < 0 || size < 0)
		return kmt_diag_set(d, KMT_EFORMAT, "field without offset or size");
	if ((unsigned long)off > FIELD_MAX_OFFSET || (unsigned long)size > FIELD_MAX_OFFSET)
		return kmt_diag_set(d, KMT_EFORMAT, "field offset %ld size %ld out of range",
				    off, size);
	if (fmt->nr_fields >= FORMAT_MAX_FIELDS)
		return kmt_diag_set(d, KMT_EFORMAT, "too many fields");
	if (!split_decl(decl, (size_t)(semi - decl), &f)) {
		field_release(&f);
		return kmt_diag_set(d, KMT_EFORMAT, "field declaration has no name");
	}
	f.offset = (uint32_t)off;
	f.size = (uint32_t)size;
	if (sgn > 0)
		f.flags |= KMT_FIELD_SIGNED;
	nf = realloc(fmt->fields, sizeof(*nf) * (size_t)(fmt->nr_fields + 1));
	if (!nf) {
		field_release(&f);
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	}
	fmt->fields = nf;
	fmt->fields[fmt->nr_fields++] = f;
	return 0;
}

int kmt_format_parse(struct kmt_format *fmt, const char *system,
		     const char *text, size_t len, struct kmt_diag *d)
{
	const char *p = text, *end = text + len;
	bool have_id = false, in_fields = false;
	struct line l;
	int ret;

	memset(fmt, 0, sizeof(*fmt));
	while (next_line(&p, end, &l)) {
		trim(&l);
		if (starts(&l, "name:")) {
			struct line v = { l.s + 5, l.len - 5 };

			trim(&v);
			free(fmt->name);
			fmt->name = xstrndup(v.s, v.len);
			if (!fmt->name) {
				ret = kmt_diag_set(d, -ENOMEM, "out of memory");
				goto fail;
			}
		} else if (starts(&l, "ID:")) {
			const char *s = l.s + 3;
			long id;

			while (s < l.s + l.len && isspace((unsigned char)*s))
				s++;
			id = parse_num(s, l.s + l.len);
			if (id < 0 || id > 0xffff) {
				ret = kmt_diag_set(d, KMT_EFORMAT, "bad event ID");
				goto fail;
			}
			fmt->id = (uint32_t)id;
			have_id = true;
		} else if (starts(&l, "format:")) {
			in_fields = true;
		} else if (in_fields && (starts(&l, "field:") || starts(&l, "field special:"))) {
			ret = parse_field(fmt, &l, d);
			if (ret)
				goto fail;
		} else if (starts(&l, "print fmt:")) {
			break;
		}
	}
	if (!fmt->name || !*fmt->name || !have_id) {
		ret = kmt_diag_set(d, KMT_EFORMAT, "format without name or ID");
		goto fail;
	}
	fmt->system = strdup(system ? system : "ftrace");
	fmt->text = xstrndup(text, len);
	if (!fmt->system || !fmt->text) {
		ret = kmt_diag_set(d, -ENOMEM, "out of memory");
		goto fail;
	}
	fmt->text_len = len;
	return 0;
fail:
	kmt_format_release(fmt);
	return ret;
}

const struct kmt_field *kmt_format_field(const struct kmt_format *fmt,
					 const char *name)
{
	int i;

	for (i = 0; i < fmt->nr_fields; i++)
		if (!strcmp(fmt->fields[i].name, name))
			return &fmt->fields[i];
	return NULL;
}

void kmt_formats_init(struct kmt_formats *fs)
{
	memset(fs, 0, sizeof(*fs));
}

void kmt_formats_release(struct kmt_formats *fs)
{
	int i;

	for (i = 0; i < fs->nr; i++)
		kmt_format_release(&fs->v[i]);
	free(fs->v);
	free(fs->by_id);
	memset(fs, 0, sizeof(*fs));
}

static int formats_reindex(struct kmt_formats *fs)
{
	struct kmt_format **by_id;
	uint32_t max = 0;
	int i;

	for (i = 0; i < fs->nr; i++)
		max = MAX(max, fs->v[i].id);
	by_id = calloc((size_t)max + 1, sizeof(*by_id));
	if (!by_id)
		return -ENOMEM;
	for (i = 0; i < fs->nr; i++)
		by_id[fs->v[i].id] = &fs->v[i];
	free(fs->by_id);
	fs->by_id = by_id;
	fs->max_id = max;
	return 0;
}

int kmt_formats_add(struct kmt_formats *fs, struct kmt_format *fmt)
{
	if (kmt_formats_by_id(fs, fmt->id))
		return -EEXIST;
	if (ALLOC_GROW(fs->v, (size_t)fs->nr + 1, fs->alloc, 32))
		return -ENOMEM;
	fs->v[fs->nr++] = *fmt;
	memset(fmt, 0, sizeof(*fmt));
	/* by_id points into v, which may have moved: rebuild it. */
	return formats_reindex(fs);
}

const struct kmt_format *kmt_formats_by_id(const struct kmt_formats *fs,
					   uint32_t id)
{
	if (!fs->by_id || id > fs->max_id)
		return NULL;
	return fs->by_id[id];
}

const struct kmt_format *kmt_formats_find(const struct kmt_formats *fs,
					  const char *system, const char *name)
{
	int i;

	for (i = 0; i < fs->nr; i++)
		if (!strcmp(fs->v[i].name, name) &&
		    (!system || !strcmp(fs->v[i].system, system)))
			return &fs->v[i];
	return NULL;
}

void kmt_page_layout_default(struct kmt_page_layout *pl, int long_size)
{
	pl->ts_offset = 0;
	pl->ts_size = 8;
	pl->commit_offset = 8;
	pl->commit_size = (uint32_t)long_size;
	pl->data_offset = 8 + (uint32_t)long_size;
}

int kmt_page_layout_parse(struct kmt_page_layout *pl, const char *text,
			  size_t len, struct kmt_diag *d)
{
	struct kmt_format tmp = { 0 };
	const char *p = text, *end = text + len;
	bool ts = false, commit = false, data = false;
	struct line l;
	int ret = 0, i;

	/* header_page has no name/ID/format lines: only field lines. */
	while (next_line(&p, end, &l)) {
		trim(&l);
		if (starts(&l, "field:") || starts(&l, "field special:")) {
			ret = parse_field(&tmp, &l, d);
			if (ret)
				goto out;
		}
	}
	for (i = 0; i < tmp.nr_fields; i++) {
		const struct kmt_field *f = &tmp.fields[i];

		if (!strcmp(f->name, "timestamp")) {
			pl->ts_offset = f->offset;
			pl->ts_size = f->size;
			ts = true;
		} else if (!strcmp(f->name, "commit")) {
			pl->commit_offset = f->offset;
			pl->commit_size = f->size;
			commit = true;
		} else if (!strcmp(f->name, "data")) {
			pl->data_offset = f->offset;
			data = true;
		}
	}
	if (!ts || !commit || !data || pl->ts_size != 8 ||
	    (pl->commit_size != 4 && pl->commit_size != 8) ||
	    pl->ts_offset + 8 > pl->data_offset ||
	    pl->commit_offset + pl->commit_size > pl->data_offset || pl->data_offset > 64)
		ret = kmt_diag_set(d, KMT_EFORMAT, "header_page lacks a usable timestamp/commit/data layout");
out:
	kmt_format_release(&tmp);
	return ret;
}
