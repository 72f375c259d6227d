/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A small BTF reader (include/kmemtrace/event.h), from the kernel's
 * Documentation/bpf/btf.rst: a header, a type section (struct btf_type
 * records, each followed by kind-specific data) and a string section. On
 * open every record is checked to lie inside the type section and an
 * index id -> record is built; names and type ids are checked on use.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmemtrace/event.h>
#include "base/kmt-local.h"

#define BTF_MAGIC 0xeB9F
#define MAX_DEPTH 32

enum {
	K_INT = 1, K_PTR, K_ARRAY, K_STRUCT, K_UNION, K_ENUM, K_FWD, K_TYPEDEF,
	K_VOLATILE, K_CONST, K_RESTRICT, K_FUNC, K_FUNC_PROTO, K_VAR, K_DATASEC,
	K_FLOAT, K_DECL_TAG, K_TYPE_TAG, K_ENUM64,
};

struct kmt_btf {
	uint8_t *data;
	size_t len;
	const uint8_t *types, *strs;
	uint32_t types_len, strs_len;
	uint32_t *off;			/* id -> offset in types; [0] unused */
	uint32_t n;			/* ids 1 .. n-1 */
	bool be;
	/* The last struct looked up by name (lookups repeat: a linear scan each). */
	char memo_name[64];
	uint32_t memo_id;
};

struct btype {
	uint32_t name_off, info, size_type;
	const uint8_t *extra;
};

static inline uint32_t b32(const struct kmt_btf *b, const uint8_t *p)
{
	return ld32(p, b->be);
}

static inline int kind_of(uint32_t info) { return (int)((info >> 24) & 0x1f); }
static inline uint32_t vlen_of(uint32_t info) { return info & 0xffff; }
static inline bool kflag(uint32_t info) { return info >> 31; }

/* Bytes of kind-specific data after a btf_type; -1 for an unknown kind. */
static long extra_len(int kind, uint32_t vlen)
{
	switch (kind) {
	case K_INT: case K_VAR: case K_DECL_TAG: return 4;
	case K_ARRAY: return 12;
	case K_STRUCT: case K_UNION: case K_DATASEC: case K_ENUM64: return 12L * vlen;
	case K_ENUM: case K_FUNC_PROTO: return 8L * vlen;
	case K_PTR: case K_FWD: case K_TYPEDEF: case K_VOLATILE: case K_CONST:
	case K_RESTRICT: case K_FUNC: case K_FLOAT: case K_TYPE_TAG: return 0;
	}
	return -1;
}

static bool get_type(const struct kmt_btf *b, uint32_t id, struct btype *t)
{
	const uint8_t *p;

	if (!id || id >= b->n)
		return false;
	p = b->types + b->off[id];
	t->name_off = b32(b, p);
	t->info = b32(b, p + 4);
	t->size_type = b32(b, p + 8);
	t->extra = p + 12;
	return true;
}

static const char *str_at(const struct kmt_btf *b, uint32_t off)
{
	if (off >= b->strs_len || !memchr(b->strs + off, 0, b->strs_len - off))
		return NULL;
	return (const char *)b->strs + off;
}

static int parse(struct kmt_btf *b, const char *name, struct kmt_diag *d)
{
	uint32_t hdr_len, type_off, type_len, str_off, str_len, pos, cap = 1024;
	uint16_t magic;

	if (b->len < 24)
		return kmt_diag_set(d, KMT_ETRUNC, "%s: %zu bytes, too short for a BTF header", name, b->len);
	memcpy(&magic, b->data, 2);
	if (magic == __builtin_bswap16(BTF_MAGIC))
		b->be = true;
	else if (magic != BTF_MAGIC)
		return kmt_diag_set(d, KMT_EFORMAT, "%s: not BTF (magic 0x%04x at offset 0)", name, magic);
	hdr_len = b32(b, b->data + 4);
	type_off = b32(b, b->data + 8);
	type_len = b32(b, b->data + 12);
	str_off = b32(b, b->data + 16);
	str_len = b32(b, b->data + 20);
	if (hdr_len < 24 || hdr_len > b->len ||
	    (uint64_t)hdr_len + type_off + type_len > b->len ||
	    (uint64_t)hdr_len + str_off + str_len > b->len || (type_len & 3))
		return kmt_diag_set(d, KMT_EFORMAT, "%s: header at offset 0: sections (types %u+%u, "
				    "strings %u+%u) do not fit %zu bytes", name, type_off, type_len,
				    str_off, str_len, b->len);
	b->types = b->data + hdr_len + type_off;
	b->types_len = type_len;
	b->strs = b->data + hdr_len + str_off;
	b->strs_len = str_len;
	b->off = malloc(cap * sizeof(*b->off));
	if (!b->off)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	b->n = 1;
	for (pos = 0; pos < type_len;) {
		uint32_t info;
		long extra;

		if (type_len - pos < 12)
			return kmt_diag_set(d, KMT_ETRUNC, "%s: type %u at offset %u: truncated",
					    name, b->n, hdr_len + type_off + pos);
		info = b32(b, b->types + pos + 4);
		extra = extra_len(kind_of(info), vlen_of(info));
		if (extra < 0 || (uint64_t)pos + 12 + (uint64_t)extra > type_len)
			return kmt_diag_set(d, KMT_EFORMAT, "%s: type %u at offset %u: %s",
					    name, b->n, hdr_len + type_off + pos,
					    extra < 0 ? "unknown kind" : "runs past the type section");
		if (ALLOC_GROW(b->off, (size_t)b->n + 1, cap, 1024))
			return kmt_diag_set(d, -ENOMEM, "out of memory");
		b->off[b->n++] = pos;
		pos += 12 + (uint32_t)extra;
	}
	return 0;
}

struct kmt_btf *kmt_btf_open_mem(const void *data, size_t len, const char *name,
				 struct kmt_diag *d)
{
	struct kmt_btf *b = calloc(1, sizeof(*b));

	if (!b || !(b->data = malloc(len ? len : 1))) {
		free(b);
		kmt_diag_set(d, -ENOMEM, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	memcpy(b->data, data, len);
	b->len = len;
	if (parse(b, name, d)) {
		kmt_btf_close(b);
		errno = EINVAL;
		return NULL;
	}
	return b;
}

struct kmt_btf *kmt_btf_open(const char *path, struct kmt_diag *d)
{
	struct sbuf sb = { 0 };
	struct kmt_btf *b;
	int ret;

	if (!path)
		path = KMT_BTF_VMLINUX;
	ret = read_file(path, &sb);
	if (ret) {
		kmt_diag_set(d, ret, "cannot read '%s': %s%s", path, strerror(-ret),
			     ret == -ENOENT ? " (a kernel built without CONFIG_DEBUG_INFO_BTF?)" : "");
		errno = -ret;
		return NULL;
	}
	b = kmt_btf_open_mem(sb.buf, sb.len, path, d);
	sbuf_release(&sb);
	return b;
}

void kmt_btf_close(struct kmt_btf *b)
{
	if (!b)
		return;
	free(b->off);
	free(b->data);
	free(b);
}

/* Follow typedefs and qualifiers; 0 if the chain is broken or too long. */
static uint32_t resolve(const struct kmt_btf *b, uint32_t id)
{
	struct btype t;
	int i;

	for (i = 0; i < MAX_DEPTH && get_type(b, id, &t); i++) {
		switch (kind_of(t.info)) {
		case K_TYPEDEF: case K_VOLATILE: case K_CONST: case K_RESTRICT: case K_TYPE_TAG:
			id = t.size_type;
			continue;
		}
		return id;
	}
	return 0;
}

/* Size in bytes of type @id; 0 if unknown. */
static uint64_t type_size(const struct kmt_btf *b, uint32_t id, int depth)
{
	struct btype t;

	id = resolve(b, id);
	if (depth > MAX_DEPTH || !get_type(b, id, &t))
		return 0;
	switch (kind_of(t.info)) {
	case K_INT: case K_STRUCT: case K_UNION: case K_ENUM: case K_ENUM64: case K_FLOAT:
		return t.size_type;
	case K_PTR:
		return 8;
	case K_ARRAY:
		return (uint64_t)b32(b, t.extra + 8) * type_size(b, b32(b, t.extra), depth + 1);
	}
	return 0;
}

static bool is_aggregate(const struct kmt_btf *b, uint32_t id, struct btype *t)
{
	return get_type(b, id, t) && (kind_of(t->info) == K_STRUCT || kind_of(t->info) == K_UNION);
}

static uint32_t find_struct(const struct kmt_btf *cb, const char *name, size_t len)
{
	struct kmt_btf *b = (struct kmt_btf *)cb;	/* the memo only */
	uint32_t id;
	struct btype t;

	if (b->memo_id && len < sizeof(b->memo_name) && !strncmp(b->memo_name, name, len) &&
	    !b->memo_name[len])
		return b->memo_id;
	for (id = 1; id < b->n; id++) {
		const char *s;

		if (!is_aggregate(b, id, &t) || !t.name_off)
			continue;
		s = str_at(b, t.name_off);
		if (s && strlen(s) == len && !memcmp(s, name, len)) {
			if (len < sizeof(b->memo_name)) {
				memcpy(b->memo_name, name, len);
				b->memo_name[len] = 0;
				b->memo_id = id;
			}
			return id;
		}
	}
	return 0;
}

/* Member @m (0-based) of aggregate @t: name, type, bit offset, bit size. */
static void member(const struct kmt_btf *b, const struct btype *t, uint32_t m,
		   uint32_t *name_off, uint32_t *type, uint32_t *bit_off, uint32_t *bit_size)
{
	const uint8_t *p = t->extra + 12 * m;
	uint32_t o = b32(b, p + 8);

	*name_off = b32(b, p);
	*type = b32(b, p + 4);
	*bit_off = kflag(t->info) ? o & 0xffffff : o;
	*bit_size = kflag(t->info) ? o >> 24 : 0;
}

/* Find member @name in aggregate @id, looking into anonymous members. */
static bool find_member(const struct kmt_btf *b, uint32_t id, const char *name, size_t len,
			uint64_t base, uint64_t *bit_off, uint32_t *type, uint32_t *bit_size,
			int depth)
{
	struct btype t;
	uint32_t i;

	if (depth > MAX_DEPTH || !is_aggregate(b, id, &t))
		return false;
	for (i = 0; i < vlen_of(t.info); i++) {
		uint32_t no, ty, bo, bs;
		const char *s;

		member(b, &t, i, &no, &ty, &bo, &bs);
		if (!no) {
			if (find_member(b, resolve(b, ty), name, len, base + bo, bit_off, type,
					bit_size, depth + 1))
				return true;
			continue;
		}
		s = str_at(b, no);
		if (s && strlen(s) == len && !memcmp(s, name, len)) {
			*bit_off = base + bo;
			*type = ty;
			*bit_size = bs;
			return true;
		}
	}
	return false;
}

int kmt_btf_field(const struct kmt_btf *b, const char *path, struct kmt_btf_field *out,
		  struct kmt_diag *d)
{
	const char *p = path, *dot = strchr(path, '.');
	size_t len = dot ? (size_t)(dot - path) : strlen(path);
	uint32_t id = find_struct(b, path, len), type, bit_size = 0;
	uint64_t bit_off = 0;

	memset(out, 0, sizeof(*out));
	if (!id)
		return kmt_diag_set(d, -ENOENT, "the kernel has no struct or union '%.*s'", (int)len, path);
	out->struct_size = (uint32_t)type_size(b, id, 0);
	type = id;
	while (dot) {
		p = dot + 1;
		dot = strchr(p, '.');
		len = dot ? (size_t)(dot - p) : strlen(p);
		if (!find_member(b, resolve(b, type), p, len, bit_off, &bit_off, &type, &bit_size, 0))
			return kmt_diag_set(d, -ENOENT, "'%.*s' has no member '%.*s'",
					    (int)(p - 1 - path), path, (int)len, p);
	}
	out->offset = (uint32_t)(bit_off / 8);
	out->bit_size = bit_size;
	out->size = bit_size ? (uint32_t)((bit_off % 8 + bit_size + 7) / 8) : (uint32_t)type_size(b, type, 0);
	return 0;
}

/* Append ".name" (or "name" at the start) to @buf. */
static void path_add(char *buf, size_t len, size_t *at, const char *name)
{
	int n;

	if (*at >= len)
		return;
	n = snprintf(buf + *at, len - *at, "%s%s", *at ? "." : "", name);
	if (n > 0)
		*at = MIN(*at + (size_t)n, len - 1);
}

/* The member of aggregate @id covering byte @off, appended to @buf. */
static bool name_in(const struct kmt_btf *b, uint32_t id, uint64_t off, char *buf, size_t len,
		    size_t *at, int depth)
{
	struct btype t;
	uint32_t i;

	if (depth > MAX_DEPTH || !is_aggregate(b, id, &t))
		return false;
	for (i = 0; i < vlen_of(t.info); i++) {
		uint32_t no, ty, bo, bs, rt;
		uint64_t start, size;
		struct btype mt;
		const char *s;
		size_t save = *at;

		member(b, &t, i, &no, &ty, &bo, &bs);
		start = bo / 8;
		size = bs ? (bo % 8 + bs + 7) / 8 : type_size(b, ty, 0);
		if (off < start || off >= start + size)
			continue;
		s = no ? str_at(b, no) : NULL;
		if (s)
			path_add(buf, len, at, s);
		rt = resolve(b, ty);
		if (is_aggregate(b, rt, &mt)) {
			if (name_in(b, rt, off - start, buf, len, at, depth + 1))
				return true;
		} else if (get_type(b, rt, &mt) && kind_of(mt.info) == K_ARRAY) {
			uint32_t et = b32(b, mt.extra);
			uint64_t es = type_size(b, et, 0);

			if (es && *at < len) {
				int n = snprintf(buf + *at, len - *at, "[%" PRIu64 "]", (off - start) / es);

				if (n > 0)
					*at = MIN(*at + (size_t)n, len - 1);
				if (is_aggregate(b, resolve(b, et), &mt))
					name_in(b, resolve(b, et), (off - start) % es, buf, len, at, depth + 1);
			}
			return true;
		} else {
			return s != NULL;
		}
		if (s)
			return true;
		*at = save;	/* an anonymous member with nothing at @off */
		buf[*at] = 0;
	}
	return false;
}

int kmt_btf_name_at(const struct kmt_btf *b, const char *name, uint32_t offset,
		    char *buf, size_t len)
{
	uint32_t id = find_struct(b, name, strlen(name));
	size_t at = 0;

	if (!len)
		return 0;
	buf[0] = 0;
	if (!id)
		return -ENOENT;
	if (!name_in(b, id, offset, buf, len, &at, 0)) {
		buf[0] = 0;
		return 0;
	}
	return (int)at;
}
