/*
 * Kernel type information from BTF (/sys/kernel/btf/vmlinux): where a
 * member of a kernel struct lies, and which member covers a byte offset.
 * kmemtrace watch uses it so a user can say "eventfd_ctx.count" instead of
 * an offset, and to name the fields its samples hit. Read directly (no
 * libbpf, bpftool or pahole); every length and type id is checked against
 * the blob before use.
 */
#ifndef KMEMTRACE_BTF_H
#define KMEMTRACE_BTF_H

#include <stddef.h>
#include <stdint.h>
#include "kmemtrace.h"

#define KMT_BTF_VMLINUX "/sys/kernel/btf/vmlinux"

struct kmt_btf;

/* Open @path (NULL: the running kernel's). NULL + errno/@d on failure. */
struct kmt_btf *kmt_btf_open(const char *path, struct kmt_diag *d);
/* The same over @len bytes, copied. */
struct kmt_btf *kmt_btf_open_mem(const void *data, size_t len, const char *name,
				 struct kmt_diag *d);
void kmt_btf_close(struct kmt_btf *b);

struct kmt_btf_field {
	uint32_t offset;		/* bytes from the start of the struct */
	uint32_t size;			/* bytes (bit-fields: the bytes they span) */
	uint32_t bit_size;		/* 0 unless a bit-field */
	uint32_t struct_size;		/* the outer struct's size */
};

/*
 * Resolve "STRUCT" or "STRUCT.MEMBER[.MEMBER...]" (members of anonymous
 * unions and structs are found through them; a union works too). 0, or
 * -ENOENT with what was not found in @d.
 */
int kmt_btf_field(const struct kmt_btf *b, const char *path, struct kmt_btf_field *out,
		  struct kmt_diag *d);

/*
 * The innermost member of struct @name covering byte @offset, as a dotted
 * path ("wqh.lock"), into @buf. Returns its length, 0 if the byte is
 * padding or beyond the struct, -ENOENT if there is no such struct.
 */
int kmt_btf_name_at(const struct kmt_btf *b, const char *name, uint32_t offset,
		    char *buf, size_t len);

#endif
