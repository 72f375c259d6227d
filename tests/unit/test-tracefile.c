/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests: write trace files with the test builder (v6, v7 with no,
 * zstd and zlib compression), read them back through the reader, the
 * stream merger and the decoder, and compare event by event. Then break
 * files in known ways and check the reader refuses them with a message
 * that names the file and the offset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kmemtrace/event.h>
#include <kmemtrace/tracefile.h>
#include "base/kmt-local.h"
#include "tbuild.h"

#define NEV 3000

/* A deterministic mix: kmalloc/kfree/cache events on 2 CPUs, long gaps. */
static void fill(struct tb *tb)
{
	uint64_t ts = 1000;
	int i;

	tb_formats_6_18(tb);
	tb_kallsyms(tb, "ffffffff81000000 T _stext\nffffffff81100000 T do_thing\n");
	tb_cmdlines(tb, "100 worker\n200 other\n");
	for (i = 0; i < NEV; i++) {
		int cpu = i % 2;

		ts += (i % 500 == 499) ? (1ULL << 28) : 10 + (uint64_t)(i % 7);
		switch (i % 4) {
		case 0:
			tb_kmalloc(tb, cpu, ts, 100 + cpu, 0xffffffff81100010, 0xffff888000000000 + (uint64_t)i * 64,
				   (uint64_t)(i % 100) + 1, 128);
			break;
		case 1:
			tb_kfree(tb, cpu, ts, 100 + cpu, 0xffffffff81100020, 0xffff888000000000 + (uint64_t)(i - 1) * 64);
			break;
		case 2:
			tb_cache_alloc(tb, cpu, ts, 100 + cpu, 0xffffffff81100030, 0xffff888100000000 + (uint64_t)i,
				       i % 3 ? "filp" : "a_rather_long_cache_name_for_the_test", 184, 192);
			break;
		default:
			tb_cache_free(tb, cpu, ts, 100 + cpu, 0xffffffff81100040, 0xffff888100000000 + (uint64_t)i - 1,
				      "filp");
			break;
		}
	}
}

static void check_readback(const char *path, int version, const char *zname)
{
	struct kmt_diag d = { 0 };
	struct kmt_file *f;
	struct kmt_decoder *dec;
	struct kmt_stream *s;
	struct kmt_srec sr;
	struct kmt_event ev;
	uint64_t last = 0, ts = 1000;
	int n = 0, ret;
	size_t len;

	ret = kmt_file_open(&f, path, &d);
	if (ret)
		fail_msg("%s", d.msg);
	assert_int_equal(kmt_file_info(f)->version, version);
	assert_string_equal(kmt_file_info(f)->compression, zname);
	assert_string_equal(kmt_file_info(f)->uname, "Linux test 6.18.0 x86_64");
	assert_string_equal(kmt_file_info(f)->clock, "local");
	assert_int_equal(kmt_file_info(f)->cpu_count, 2);
	assert_string_equal(kmt_file_cmdlines(f, &len), "100 worker\n200 other\n");
	assert_non_null(strstr(kmt_file_kallsyms(f, NULL), "do_thing"));
	assert_int_equal(kmt_file_formats(f)->nr, 17);	/* tb_formats_6_18() */
	assert_int_equal(kmt_file_main_buffer(f), 0);
	dec = kmt_decoder_new(kmt_file_formats(f), false, 8);
	assert_non_null(dec);
	assert_string_equal(kmt_decoder_skipped(dec), "");
	s = kmt_stream_open(f, kmt_file_main_buffer(f), &d);
	if (!s)
		fail_msg("%s", d.msg);
	while ((ret = kmt_stream_next(s, &sr, &d)) > 0) {
		int i = n;

		assert_false(sr.lost_marker);
		ts += (i % 500 == 499) ? (1ULL << 28) : 10 + (uint64_t)(i % 7);
		assert_true(sr.rec.ts >= last);
		last = sr.rec.ts;
		assert_int_equal(sr.rec.ts, ts);
		assert_int_equal(sr.cpu, i % 2);
		ret = kmt_decode(dec, &sr.rec, sr.cpu, &ev);
		assert_true(ret > 0);
		assert_int_equal(ev.pid, 100 + i % 2);
		switch (i % 4) {
		case 0:
			assert_int_equal(ev.kind, KMT_EV_KMALLOC);
			assert_int_equal(ev.call_site, 0xffffffff81100010);
			assert_int_equal(ev.ptr, 0xffff888000000000 + (uint64_t)i * 64);
			assert_int_equal(ev.bytes_req, (uint64_t)(i % 100) + 1);
			assert_int_equal(ev.bytes_alloc, 128);
			assert_int_equal(ev.gfp, 0xcc0);
			assert_int_equal(ev.node, -1);
			break;
		case 1:
			assert_int_equal(ev.kind, KMT_EV_KFREE);
			assert_int_equal(ev.ptr, 0xffff888000000000 + (uint64_t)(i - 1) * 64);
			break;
		case 2:
			assert_int_equal(ev.kind, KMT_EV_CACHE_ALLOC);
			assert_int_equal(ev.bytes_alloc, 192);
			if (i % 3)
				assert_memory_equal(ev.name, "filp", 4);
			else
				assert_int_equal(ev.name_len, strlen("a_rather_long_cache_name_for_the_test"));
			break;
		default:
			assert_int_equal(ev.kind, KMT_EV_CACHE_FREE);
			assert_int_equal(ev.name_len, 4);
			break;
		}
		n++;
	}
	if (ret < 0)
		fail_msg("%s", d.msg);
	assert_int_equal(n, NEV);
	kmt_stream_close(s);
	kmt_decoder_free(dec);
	kmt_file_close(f);
}

static void roundtrip(int version, enum kmt_zalg z, const char *zname)
{
	struct tb *tb = tb_new(2, 0);
	const char *path = tb_tmpname(zname);

	fill(tb);
	assert_int_equal(tb_write(tb, path, version, z), 0);
	check_readback(path, version, version >= 7 ? zname : "none");
	tb_free(tb);
}

static void test_v6(void **state) { roundtrip(6, KMT_Z_NONE, "none"); }
static void test_v7_none(void **state) { roundtrip(7, KMT_Z_NONE, "none"); }
static void test_v7_zstd(void **state) { roundtrip(7, KMT_Z_ZSTD, "zstd"); }
static void test_v7_zlib(void **state) { roundtrip(7, KMT_Z_ZLIB, "zlib"); }

/*
 * Many CPUs, some empty (first, between, last), each with several
 * compressed chunks: the writer compresses them in one run across CPUs
 * (zparallel.h); every CPU's records come back whole and in order, the empty
 * ones with no data, in every format.
 */
static void test_sparse_cpus(void **state)
{
	static const struct { int version; enum kmt_zalg z; const char *name; } f[] = {
		{ 7, KMT_Z_ZSTD, "zstd" }, { 7, KMT_Z_ZLIB, "zlib" }, { 7, KMT_Z_NONE, "none" },
		{ 6, KMT_Z_NONE, "none" },
	};
	enum { NCPU = 7, PER = 12000 };
	static const bool used[NCPU] = { false, true, false, true, true, false, false };
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
		struct tb *tb = tb_new(NCPU, 0);
		const char *path = tb_tmpname(f[k].name);
		struct kmt_diag d = { 0 };
		struct kmt_file *file;
		struct kmt_stream *st;
		struct kmt_srec sr;
		uint64_t ts = 1000, last[NCPU] = { 0 };
		int counts[NCPU] = { 0 }, i, c, ret;

		tb_formats_6_18(tb);
		for (i = 0; i < PER * 3; i++) {
			c = i % 3 == 0 ? 1 : i % 3 == 1 ? 3 : 4;
			tb_kmalloc(tb, c, ts += 7, 100, 0xffffffff81100010, 0xffff888000000000 + (uint64_t)i * 64,
				   (uint64_t)(i % 100) + 1, 128);
		}
		assert_int_equal(tb_write(tb, path, f[k].version, f[k].z), 0);
		if (kmt_file_open(&file, path, &d))
			fail_msg("%s", d.msg);
		assert_int_equal(kmt_file_buffer(file, 0)->nr_cpus, NCPU);
		st = kmt_stream_open(file, kmt_file_main_buffer(file), &d);
		if (!st)
			fail_msg("%s", d.msg);
		while ((ret = kmt_stream_next(st, &sr, &d)) > 0) {
			assert_false(sr.lost_marker);
			assert_true(used[sr.cpu]);
			assert_true(sr.rec.ts > last[sr.cpu]);
			last[sr.cpu] = sr.rec.ts;
			counts[sr.cpu]++;
		}
		if (ret < 0)
			fail_msg("%s", d.msg);
		for (c = 0; c < NCPU; c++)
			assert_int_equal(counts[c], used[c] ? PER : 0);
		kmt_stream_close(st);
		kmt_file_close(file);
		tb_free(tb);
	}
}

static void test_lost_markers(void **state)
{
	struct tb *tb = tb_new(2, 0);
	const char *path = tb_tmpname("lost");
	struct kmt_diag d = { 0 };
	struct kmt_file *f;
	struct kmt_stream *s;
	struct kmt_srec sr;
	int markers = 0, recs = 0;
	int64_t lost[4] = { 0 };

	tb_formats_6_18(tb);
	tb_kmalloc(tb, 0, 100, 1, 1, 0x1000, 8, 8);
	tb_lost(tb, 0, 42);
	tb_kmalloc(tb, 0, 200, 1, 1, 0x2000, 8, 8);
	tb_lost(tb, 1, -1);
	tb_kmalloc(tb, 1, 150, 1, 1, 0x3000, 8, 8);
	assert_int_equal(tb_write(tb, path, 7, KMT_Z_ZSTD), 0);
	assert_int_equal(kmt_file_open(&f, path, &d), 0);
	s = kmt_stream_open(f, 0, &d);
	assert_non_null(s);
	while (kmt_stream_next(s, &sr, &d) > 0) {
		if (sr.lost_marker)
			lost[markers++] = sr.lost;
		else
			recs++;
	}
	assert_int_equal(recs, 3);
	assert_int_equal(markers, 2);
	assert_int_equal(lost[0], -1);	/* CPU 1 at 150 comes first */
	assert_int_equal(lost[1], 42);
	kmt_stream_close(s);
	kmt_file_close(f);
	tb_free(tb);
}

static char *slurp(const char *path, size_t *len)
{
	struct sbuf sb = { 0 };

	assert_int_equal(read_file(path, &sb), 0);
	*len = sb.len;
	return sb.buf;
}

/* Every prefix of a valid file is refused or read without overrunning. */
static void test_truncations(void **state)
{
	struct tb *tb = tb_new(2, 0);
	const char *path = tb_tmpname("trunc");
	struct kmt_diag d;
	size_t len, cut;
	char *buf;

	fill(tb);
	assert_int_equal(tb_write(tb, path, 7, KMT_Z_ZSTD), 0);
	buf = slurp(path, &len);
	for (cut = 0; cut < len; cut += (cut < 4096 ? 1 : 997)) {
		struct kmt_file *f;
		char *copy = malloc(cut + 1);
		int ret;

		memcpy(copy, buf, cut);
		memset(&d, 0, sizeof(d));
		ret = kmt_file_open_mem(&f, copy, cut, "cut.dat", &d);
		if (ret == 0) {
			/* Metadata survived: the data must then fail cleanly or read. */
			struct kmt_stream *s = kmt_stream_open(f, 0, &d);
			struct kmt_srec sr;

			while (s && (ret = kmt_stream_next(s, &sr, &d)) > 0)
				;
			kmt_stream_close(s);
			kmt_file_close(f);
		} else {
			assert_non_null(strstr(d.msg, "cut.dat"));
			assert_true(strstr(d.msg, "offset") || strstr(d.msg, "truncated at byte"));
		}
		free(copy);
	}
	free(buf);
	tb_free(tb);
}

static void test_not_a_trace(void **state)
{
	struct kmt_diag d = { 0 };
	struct kmt_file *f;
	static const char junk[] = "hello, this is not a trace file at all";
	char ver[64] = "\x17\x08\x44tracing" "9";

	assert_int_equal(kmt_file_open_mem(&f, junk, sizeof(junk), "junk", &d), KMT_EFORMAT);
	assert_non_null(strstr(d.msg, "junk: file header at offset 0"));
	assert_non_null(strstr(d.msg, "bad magic"));
	assert_int_equal(kmt_file_open_mem(&f, ver, 12, "v9", &d), KMT_EVERSION);
	assert_int_equal(kmt_file_open(&f, "/nonexistent/x.dat", &d), -ENOENT);
	assert_non_null(strstr(d.msg, "/nonexistent/x.dat"));
}

static int teardown(void **state)
{
	tb_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v6),
		cmocka_unit_test(test_v7_none),
		cmocka_unit_test(test_v7_zstd),
		cmocka_unit_test(test_sparse_cpus),
		cmocka_unit_test(test_v7_zlib),
		cmocka_unit_test(test_lost_markers),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_not_a_trace),
	};

	return cmocka_run_group_tests_name("tracefile", tests, NULL, teardown);
}
