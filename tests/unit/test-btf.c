/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests: the BTF reader, on a hand-built blob and on the running kernel's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kmemtrace/event.h>
#include "base/kmt-local.h"

/*
 * struct inner { int a; int b; };
 * struct outer {
 *	int hdr;
 *	int flag : 3;
 *	union { u64 x; struct inner in; };
 *	struct inner arr[2];
 *	u64_t last;
 * };
 */
static const char strs[] = "\0int\0u64\0inner\0a\0b\0x\0in\0outer\0hdr\0flag\0arr\0last\0u64_t";

static uint32_t so(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(strs); i += strlen(strs + i) + 1)
		if (!strcmp(strs + i, s))
			return (uint32_t)i;
	fail_msg("no string %s", s);
	return 0;
}

static void ty(struct sbuf *t, uint32_t name, int kind, int vlen, bool kf, uint32_t size)
{
	sbuf_add32(t, name);
	sbuf_add32(t, (uint32_t)vlen | (uint32_t)kind << 24 | (kf ? 1u << 31 : 0));
	sbuf_add32(t, size);
}

static void mem(struct sbuf *t, const char *name, uint32_t type, uint32_t off)
{
	sbuf_add32(t, name ? so(name) : 0);
	sbuf_add32(t, type);
	sbuf_add32(t, off);
}

static void build(struct sbuf *out)
{
	struct sbuf t = { 0 };

	ty(&t, so("int"), 1, 0, false, 4); sbuf_add32(&t, 32);			/* 1 */
	ty(&t, so("u64"), 1, 0, false, 8); sbuf_add32(&t, 64);			/* 2 */
	ty(&t, so("inner"), 4, 2, false, 8);					/* 3 */
	mem(&t, "a", 1, 0); mem(&t, "b", 1, 32);
	ty(&t, 0, 5, 2, false, 8);						/* 4 */
	mem(&t, "x", 2, 0); mem(&t, "in", 3, 0);
	ty(&t, 0, 3, 0, false, 0);						/* 5 */
	sbuf_add32(&t, 3); sbuf_add32(&t, 1); sbuf_add32(&t, 2);
	ty(&t, so("outer"), 4, 5, true, 40);					/* 6 */
	mem(&t, "hdr", 1, 0); mem(&t, "flag", 1, 32 | 3u << 24); mem(&t, NULL, 4, 64);
	mem(&t, "arr", 5, 128); mem(&t, "last", 7, 256);
	ty(&t, so("u64_t"), 8, 0, false, 2);					/* 7 */

	sbuf_add16(out, 0xeB9F);
	sbuf_add(out, "\1\0", 2);
	sbuf_add32(out, 24);
	sbuf_add32(out, 0);
	sbuf_add32(out, (uint32_t)t.len);
	sbuf_add32(out, (uint32_t)t.len);
	sbuf_add32(out, sizeof(strs));
	sbuf_add(out, t.buf, t.len);
	sbuf_add(out, strs, sizeof(strs));
	sbuf_release(&t);
}

static void expect_field(struct kmt_btf *b, const char *path, uint32_t off, uint32_t size,
			 uint32_t bits)
{
	struct kmt_btf_field f;
	struct kmt_diag d = { 0 };

	assert_int_equal(kmt_btf_field(b, path, &f, &d), 0);
	assert_int_equal(f.offset, off);
	assert_int_equal(f.size, size);
	assert_int_equal(f.bit_size, bits);
	assert_int_equal(f.struct_size, 40);
}

static void expect_name(struct kmt_btf *b, uint32_t off, const char *want)
{
	char buf[64];
	int n = kmt_btf_name_at(b, "outer", off, buf, sizeof(buf));

	assert_int_equal(n, (int)strlen(want));
	assert_string_equal(buf, want);
}

static void test_fields(void **state)
{
	struct sbuf blob = { 0 };
	struct kmt_diag d = { 0 };
	struct kmt_btf_field f;
	struct kmt_btf *b;
	char buf[8];

	build(&blob);
	b = kmt_btf_open_mem(blob.buf, blob.len, "test", &d);
	assert_non_null(b);
	expect_field(b, "outer", 0, 40, 0);
	expect_field(b, "outer.hdr", 0, 4, 0);
	expect_field(b, "outer.flag", 4, 1, 3);
	expect_field(b, "outer.x", 8, 8, 0);		/* through the anonymous union */
	expect_field(b, "outer.in.b", 12, 4, 0);
	expect_field(b, "outer.arr", 16, 16, 0);
	expect_field(b, "outer.last", 32, 8, 0);	/* through the typedef */
	expect_name(b, 0, "hdr");
	expect_name(b, 4, "flag");
	expect_name(b, 9, "x");			/* a union: its first member */
	expect_name(b, 20, "arr[0].b");
	expect_name(b, 24, "arr[1].a");
	expect_name(b, 39, "last");
	expect_name(b, 40, "");
	assert_int_equal(kmt_btf_field(b, "nope", &f, &d), -ENOENT);
	assert_non_null(strstr(d.msg, "nope"));
	assert_int_equal(kmt_btf_field(b, "outer.zz", &f, &d), -ENOENT);
	assert_non_null(strstr(d.msg, "'outer' has no member 'zz'"));
	assert_int_equal(kmt_btf_name_at(b, "nope", 0, buf, sizeof(buf)), -ENOENT);
	/* A small buffer is cut, never overrun. */
	assert_int_equal(kmt_btf_name_at(b, "outer", 20, buf, 5), 4);
	assert_string_equal(buf, "arr[");
	kmt_btf_close(b);
	sbuf_release(&blob);
}

/* Truncated and damaged blobs: a clean failure or consistent answers, never a crash. */
static void test_corrupt(void **state)
{
	struct sbuf blob = { 0 };
	struct kmt_diag d;
	struct kmt_btf_field f;
	size_t len, i;
	char buf[64];

	build(&blob);
	for (len = 0; len < blob.len; len++) {
		struct kmt_btf *b = kmt_btf_open_mem(blob.buf, len, "cut", &d);

		if (len < blob.len - sizeof(strs)) {
			assert_null(b);		/* the header promises more */
			assert_true(d.err == KMT_ETRUNC || d.err == KMT_EFORMAT);
		}
		kmt_btf_close(b);
	}
	for (i = 0; i < blob.len; i++) {
		uint8_t *p = (uint8_t *)blob.buf + i, save = *p;
		int bit;

		for (bit = 0; bit < 8; bit++) {
			struct kmt_btf *b;

			*p = save ^ (uint8_t)(1 << bit);
			b = kmt_btf_open_mem(blob.buf, blob.len, "flip", &d);
			if (b) {
				kmt_btf_field(b, "outer.in.b", &f, &d);
				kmt_btf_field(b, "outer.last", &f, &d);
				kmt_btf_name_at(b, "outer", 28, buf, sizeof(buf));
				kmt_btf_close(b);
			}
		}
		*p = save;
	}
	sbuf_release(&blob);
}

static void test_vmlinux(void **state)
{
	struct kmt_diag d = { 0 };
	struct kmt_btf_field f;
	struct kmt_btf *b;
	char buf[64];

	if (access(KMT_BTF_VMLINUX, R_OK)) {
		print_message("# SKIP: no readable " KMT_BTF_VMLINUX "\n");
		skip();
	}
	b = kmt_btf_open(NULL, &d);
	assert_non_null(b);
	assert_int_equal(kmt_btf_field(b, "eventfd_ctx.count", &f, &d), 0);
	assert_int_equal(f.size, 8);			/* __u64 count */
	assert_true(f.offset + f.size <= f.struct_size);
	assert_int_equal(kmt_btf_name_at(b, "eventfd_ctx", f.offset + 3, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "count");
	assert_int_equal(kmt_btf_field(b, "task_struct.comm", &f, &d), 0);
	assert_int_equal(f.size, 16);
	kmt_btf_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_vmlinux),
	};

	return cmocka_run_group_tests_name("btf", tests, NULL, NULL);
}
