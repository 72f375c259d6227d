/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests: event format and header_page parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <kmemtrace/tracefile.h>
#include "base/kmt-local.h"

static void parse_file(struct kmt_format *fmt, const char *sys, const char *file)
{
	struct sbuf sb = { 0 };
	struct kmt_diag d = { 0 };
	char path[256];

	snprintf(path, sizeof(path), "tests/data/formats/%s", file);
	assert_int_equal(read_file(path, &sb), 0);
	assert_int_equal(kmt_format_parse(fmt, sys, sb.buf, sb.len, &d), 0);
	sbuf_release(&sb);
}

static void test_kmalloc_6_18(void **state)
{
	struct kmt_format fmt;
	const struct kmt_field *f;

	parse_file(&fmt, "kmem", "6.18-kmem_kmalloc.format");
	assert_string_equal(fmt.name, "kmalloc");
	assert_string_equal(fmt.system, "kmem");
	assert_int_equal(fmt.id, 658);
	assert_int_equal(fmt.nr_fields, 10);
	f = kmt_format_field(&fmt, "bytes_alloc");
	assert_non_null(f);
	assert_int_equal(f->offset, 32);
	assert_int_equal(f->size, 8);
	assert_string_equal(f->type, "size_t");
	f = kmt_format_field(&fmt, "node");
	assert_int_equal(f->offset, 48);
	assert_true(f->flags & KMT_FIELD_SIGNED);
	f = kmt_format_field(&fmt, "ptr");
	assert_string_equal(f->type, "const void *");
	assert_null(kmt_format_field(&fmt, "name"));
	kmt_format_release(&fmt);
}

static void test_dataloc_and_arrays(void **state)
{
	struct kmt_format fmt;
	const struct kmt_field *f;

	parse_file(&fmt, "kmem", "6.18-kmem_kmem_cache_alloc.format");
	f = kmt_format_field(&fmt, "name");
	assert_non_null(f);
	assert_true(f->flags & KMT_FIELD_DATALOC);
	assert_true(f->flags & KMT_FIELD_STRING);
	assert_int_equal(f->offset, 24);
	kmt_format_release(&fmt);

	parse_file(&fmt, "task", "6.18-task_task_rename.format");
	f = kmt_format_field(&fmt, "newcomm");
	assert_true(f->flags & KMT_FIELD_ARRAY);
	assert_true(f->flags & KMT_FIELD_STRING);
	assert_int_equal(f->array_len, 16);
	assert_int_equal(f->offset, 28);
	kmt_format_release(&fmt);

	parse_file(&fmt, NULL, "6.18-ftrace_kernel_stack.format");
	assert_string_equal(fmt.system, "ftrace");
	f = kmt_format_field(&fmt, "caller");
	assert_int_equal(f->array_len, 8);
	assert_int_equal(f->offset, 16);
	kmt_format_release(&fmt);
}

static void test_bad_formats(void **state)
{
	static const char *const bad[] = {
		"",
		"name: x\n",					/* no ID */
		"ID: 5\nformat:\n",				/* no name */
		"name: x\nID: 99999999\n",			/* ID out of range */
		"name: x\nID: 1\nformat:\n\tfield:int a;\toffset:0;\n", /* no size */
		"name: x\nID: 1\nformat:\n\tfield:int a;\toffset:999999;\tsize:4;\n",
		"name: x\nID: 1\nformat:\n\tfield:;\toffset:0;\tsize:4;\n",
		"name: x\nID: 1\nformat:\n\tfield:int a\n",
	};
	struct kmt_format fmt;
	struct kmt_diag d = { 0 };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		d.msg[0] = '\0';
		assert_int_equal(kmt_format_parse(&fmt, "x", bad[i], strlen(bad[i]), &d), KMT_EFORMAT);
		assert_true(strlen(d.msg) > 0);
	}
}

static void test_formats_by_id(void **state)
{
	struct kmt_formats fs;
	struct kmt_format a, b, dup;
	struct kmt_diag d;
	const char *ta = "name: a\nID: 7\nformat:\n\tfield:int x;\toffset:8;\tsize:4;\tsigned:1;\n";
	const char *tb = "name: b\nID: 300\nformat:\n";

	kmt_formats_init(&fs);
	assert_int_equal(kmt_format_parse(&a, "s", ta, strlen(ta), &d), 0);
	assert_int_equal(kmt_format_parse(&b, "s", tb, strlen(tb), &d), 0);
	assert_int_equal(kmt_format_parse(&dup, "t", ta, strlen(ta), &d), 0);
	assert_int_equal(kmt_formats_add(&fs, &a), 0);
	assert_int_equal(kmt_formats_add(&fs, &b), 0);
	assert_int_equal(kmt_formats_add(&fs, &dup), -EEXIST);
	kmt_format_release(&dup);
	assert_string_equal(kmt_formats_by_id(&fs, 7)->name, "a");
	assert_string_equal(kmt_formats_by_id(&fs, 300)->name, "b");
	assert_null(kmt_formats_by_id(&fs, 8));
	assert_null(kmt_formats_by_id(&fs, 100000));
	assert_string_equal(kmt_formats_find(&fs, "s", "b")->name, "b");
	assert_null(kmt_formats_find(&fs, "t", "b"));
	kmt_formats_release(&fs);
}

static void test_header_page(void **state)
{
	struct sbuf sb = { 0 };
	struct kmt_page_layout pl;
	struct kmt_diag d;
	const char *bad = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n";

	assert_int_equal(read_file("tests/data/formats/6.18-header_page", &sb), 0);
	assert_int_equal(kmt_page_layout_parse(&pl, sb.buf, sb.len, &d), 0);
	assert_int_equal(pl.ts_offset, 0);
	assert_int_equal(pl.commit_offset, 8);
	assert_int_equal(pl.commit_size, 8);
	assert_int_equal(pl.data_offset, 16);
	assert_int_equal(kmt_page_layout_parse(&pl, bad, strlen(bad), &d), KMT_EFORMAT);
	sbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kmalloc_6_18),
		cmocka_unit_test(test_dataloc_and_arrays),
		cmocka_unit_test(test_bad_formats),
		cmocka_unit_test(test_formats_by_id),
		cmocka_unit_test(test_header_page),
	};

	return cmocka_run_group_tests_name("format", tests, NULL, NULL);
}
