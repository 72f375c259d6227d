/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests: the hash map and the interner, keyed address hashes, symbols, process names, gfp flag names,
 * compression on several threads, big output files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kmemtrace/event.h>
#include <kmemtrace/tracefile.h>
#include <kmemtrace/base.h>
#include "base/kmt-local.h"
#include "base/zparallel.h"

/* Keys that collide on purpose: every value shares one of four keys. */
static bool same_val(const void *ctx, uint32_t val)
{
	return val == *(const uint32_t *)ctx;
}

static void test_map(void **state)
{
	enum { N = 5000 };
	static uint32_t ref[N];		/* key i -> value, or KMT_MAP_NONE */
	struct kmt_map m = { 0 }, c = { 0 };
	struct kmt_intern t = { 0 };
	uint64_t rng = 88172645463325252ULL;
	uint32_t i, v;
	int round;

	memset(ref, 0xff, sizeof(ref));
	assert_int_equal(kmt_map_get(&m, 7), KMT_MAP_NONE);	/* never initialised */
	for (round = 0; round < 60000; round++) {
		uint64_t key;

		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		key = rng % N;
		if (rng >> 62) {
			assert_int_equal(kmt_map_put(&m, key * 0x1000, (uint32_t)round), 0);
			ref[key] = (uint32_t)round;
		} else if (ref[key] != KMT_MAP_NONE) {
			kmt_map_del(&m, key * 0x1000, ref[key]);
			ref[key] = KMT_MAP_NONE;
		}
	}
	for (i = 0, v = 0; i < N; i++) {
		assert_int_equal(kmt_map_get(&m, (uint64_t)i * 0x1000), ref[i]);
		v += ref[i] != KMT_MAP_NONE;
	}
	assert_int_equal(m.n, v);
	/* Several values under one key: each found by the caller's test, each removable. */
	for (i = 0; i < 400; i++)
		assert_int_equal(kmt_map_add(&c, i % 4, i), 0);
	for (i = 0; i < 400; i++)
		assert_int_equal(kmt_map_find(&c, i % 4, same_val, &i), i);
	for (i = 0; i < 400; i += 2)
		kmt_map_del(&c, i % 4, i);
	for (i = 0; i < 400; i++)
		assert_int_equal(kmt_map_find(&c, i % 4, same_val, &i), i % 2 ? i : KMT_MAP_NONE);
	assert_int_equal(c.n, 200);
	/* Strings numbered in the order first seen, scoped by their tag. */
	assert_int_equal(kmt_intern_id(&t, 0, "kmalloc-64"), 0);
	assert_int_equal(kmt_intern_id(&t, 0, "dentry"), 1);
	assert_int_equal(kmt_intern_id(&t, 5, "dentry"), 2);
	assert_int_equal(kmt_intern_id(&t, 0, "dentry"), 1);
	assert_int_equal(kmt_intern_find(&t, 5, "dentry"), 2);
	assert_int_equal(kmt_intern_find(&t, 6, "dentry"), -1);
	for (i = 0; i < 3000; i++) {
		char name[32];

		snprintf(name, sizeof(name), "s%u", i);
		assert_int_equal(kmt_intern_id(&t, i & 1, name), 3 + i);
	}
	assert_int_equal(kmt_intern_find(&t, 1, "s2999"), 3002);
	assert_string_equal(t.str[3002], "s2999");
	assert_int_equal(kmt_hash_str("abc", SIZE_MAX), kmt_hash_str("abcdef", 3));
	kmt_map_release(&m);
	kmt_map_release(&c);
	kmt_intern_release(&t);
}

static void test_siphash(void **state)
{
	uint8_t m[15];
	struct kmt_hashptr a, b, off = { 0 };
	char x[32], y[32];
	int i;

	for (i = 0; i < 15; i++)
		m[i] = (uint8_t)i;
	/* The reference vector of the SipHash paper. */
	assert_int_equal(kmt_siphash(0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL, m, 15),
			 0xa129ca6149be45e5ULL);
	assert_int_equal(kmt_hashptr_init(&a, "team-key"), 0);
	assert_int_equal(kmt_hashptr_init(&b, "team-key"), 0);
	assert_string_equal(kmt_hashptr_fmt(&a, 0xffff888100d83800ULL, x, sizeof(x)),
			    kmt_hashptr_fmt(&b, 0xffff888100d83800ULL, y, sizeof(y)));
	assert_memory_equal(x, "h:", 2);
	assert_int_equal(strlen(x), 18);
	assert_null(strstr(x, "ffff8881"));
	assert_int_equal(kmt_hashptr_init(&b, "other-key"), 0);
	assert_string_not_equal(x, kmt_hashptr_fmt(&b, 0xffff888100d83800ULL, y, sizeof(y)));
	assert_string_equal(kmt_hashptr_fmt(&off, 0x1234, x, sizeof(x)), "0x1234");
}

static void test_symbols(void **state)
{
	const char *ks = "0000000000000000 A fixed_percpu_data\n"
			 "ffffffff81000000 T _stext\n"
			 "ffffffff81100000 t do_thing\n"
			 "ffffffff81100100 D some_data\n"
			 "ffffffff81100200 T other_thing\t[mod]\n"
			 "garbage line\n";
	struct kmt_symbols *s = kmt_symbols_parse(ks, strlen(ks));
	uint64_t off;
	char buf[64];

	assert_non_null(s);
	assert_int_equal(kmt_symbols_count(s), 3);
	assert_string_equal(kmt_symbols_lookup(s, 0xffffffff81100155ULL, &off), "do_thing");
	assert_int_equal(off, 0x155);
	assert_string_equal(kmt_symbols_lookup(s, 0xffffffff81100200ULL, &off), "other_thing");
	assert_null(kmt_symbols_lookup(s, 0x1000, &off));
	assert_null(kmt_symbols_lookup(s, 0xffffffff91000000ULL, &off));	/* too far */
	assert_string_equal(kmt_symbols_format(s, 0xffffffff81100010ULL, buf, sizeof(buf)), "do_thing+0x10");
	assert_string_equal(kmt_symbols_format(s, 0x42, buf, sizeof(buf)), "0x42");
	kmt_symbols_free(s);
}

/*
 * kallsyms with a damaged line (a damaged file): it may have been the
 * function at an address after do_thing, so those are not called
 * do_thing+0x...; the line is counted and quoted escaped.
 */
static void test_symbols_damaged_line(void **state)
{
	const char ks[] = "ffffffff81000000 T _stext\n"
			  "ffffffff81100000 T do_thing\n"
			  "ffffffff8120\x01\x1b[2J T garbled\n"
			  "ffffffff81300000 T after\n";
	struct kmt_symbols *s = kmt_symbols_parse(ks, sizeof(ks) - 1);
	const char *first;
	size_t off;
	uint64_t o;

	assert_non_null(s);
	assert_int_equal(kmt_symbols_bad_lines(s, &off, &first), 1);
	assert_int_equal(off, strchr(ks, '\x01') - ks - 12);
	assert_string_equal(first, "ffffffff8120\\x01\\x1b[2J T garbled");
	assert_string_equal(kmt_symbols_lookup(s, 0xffffffff81000010ULL, &o), "_stext");
	assert_string_equal(kmt_symbols_lookup(s, 0xffffffff81100000ULL, &o), "do_thing");
	assert_null(kmt_symbols_lookup(s, 0xffffffff81200010ULL, &o));
	assert_null(kmt_symbols_lookup(s, 0xffffffff81100010ULL, &o));
	assert_string_equal(kmt_symbols_lookup(s, 0xffffffff81300010ULL, &o), "after");
	kmt_symbols_free(s);
}

/*
 * A module's local label may hold a control byte (".L14472\x021" in the
 * ext4 module of Debian's arm64 6.12): a kallsyms line all the same, not
 * damage; outside a module's line such a byte still is.
 */
static void test_symbols_module_label(void **state)
{
	const char ks[] = "ffffffff81000000 T _stext\n"
			  "ffffffffc0000000 r .L14472\x02" "1\t[ext4]\n"
			  "ffffffffc0001000 t ext4_thing\t[ext4]\n";
	const char bad[] = "ffffffff81000000 T _stext\n"
			   "ffffffff81001000 t x\x01y\n";
	struct kmt_symbols *s = kmt_symbols_parse(ks, sizeof(ks) - 1);
	const char *first;
	size_t off;
	uint64_t o;

	assert_non_null(s);
	assert_int_equal(kmt_symbols_bad_lines(s, &off, &first), 0);
	assert_string_equal(kmt_symbols_lookup(s, 0xffffffffc0001010ULL, &o), "ext4_thing");
	kmt_symbols_free(s);
	s = kmt_symbols_parse(bad, sizeof(bad) - 1);
	assert_non_null(s);
	assert_int_equal(kmt_symbols_bad_lines(s, &off, &first), 1);
	kmt_symbols_free(s);
}

/*
 * kallsyms cut down to some addresses' functions: each with its aliases
 * and the symbol after it, its namesakes too, module lines as they were;
 * every lookup and find of theirs gives what the whole text gives. The
 * set the events fill (symkeep) cuts the same.
 */
static void test_symbols_cut(void **state)
{
	const char ks[] = "0000000000000000 A fixed_percpu_data\n"
			  "ffffffff81000000 T _stext\n"
			  "ffffffff81100000 t do_thing\n"
			  "ffffffff81100000 T do_thing_alias\n"
			  "ffffffff81100100 D some_data\n"
			  "ffffffff81100200 t helper\n"
			  "ffffffff81100300 T other_thing\n"
			  "ffffffff81100400 t helper\n"
			  "ffffffff81100500 T unused\n"
			  "ffffffff81100600 T last_one\n"
			  "ffffffffc0000000 t mod_fn\t[mod]\n"
			  "ffffffffc0000100 t mod_next\t[mod]\n";
	const char want[] = "ffffffff81100000 t do_thing\n"
			    "ffffffff81100000 T do_thing_alias\n"
			    "ffffffff81100200 t helper\n"
			    "ffffffff81100300 T other_thing\n"
			    "ffffffff81100400 t helper\n"
			    "ffffffff81100500 T unused\n"
			    "ffffffffc0000000 t mod_fn\t[mod]\n"
			    "ffffffffc0000100 t mod_next\t[mod]\n";
	const uint64_t addrs[] = { 0xffffffff81100010ULL, 0xffffffff81100450ULL, 0xffffffffc0000004ULL,
				   0x1000, 0xffffffff91000000ULL };
	/* Not "unused": kept only where helper ends, its own end is not. */
	const char *names[] = { "do_thing", "do_thing_alias", "helper", "mod_fn" };
	uint8_t stack[16];
	struct kmt_event ev = { .call_site = addrs[0], .stack = stack, .nr_stack = 2, .stack_word = 8 };
	struct kmt_symkeep *k = kmt_symkeep_new(), *k2 = kmt_symkeep_new();
	struct kmt_symbols *whole = kmt_symbols_parse(ks, sizeof(ks) - 1), *cut;
	size_t len, i;
	char *text, *text2;

	text = kmt_symbols_cut(ks, sizeof(ks) - 1, addrs, ARRAY_SIZE(addrs), &len);
	assert_non_null(text);
	assert_string_equal(text, want);
	assert_int_equal(len, sizeof(want) - 1);
	cut = kmt_symbols_parse(text, len);
	for (i = 0; i < ARRAY_SIZE(addrs); i++) {
		uint64_t o1 = 0, o2 = 0;
		const char *a = kmt_symbols_lookup(whole, addrs[i], &o1), *b = kmt_symbols_lookup(cut, addrs[i], &o2);

		assert_true(a == b || (a && b && !strcmp(a, b)));
		assert_int_equal(o1, o2);
	}
	assert_string_equal(kmt_symbols_lookup(cut, addrs[0], NULL), "do_thing_alias");
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		uint64_t lo1, hi1, lo2, hi2;

		assert_int_equal(kmt_symbols_find(whole, names[i], &lo1, &hi1),
				 kmt_symbols_find(cut, names[i], &lo2, &hi2));
		assert_int_equal(lo1, lo2);
		assert_int_equal(hi1, hi2);
	}
	/* The events' addresses: call site, stack frames, merged from two sets. */
	for (i = 0; i < 8; i++) {
		stack[i] = (uint8_t)(addrs[1] >> (8 * i));
		stack[8 + i] = (uint8_t)(addrs[3] >> (8 * i));
	}
	kmt_symkeep_event(k, &ev);
	kmt_symkeep_addr(k2, addrs[2]);
	kmt_symkeep_addr(k2, addrs[4]);
	kmt_symkeep_addr(k2, 0);
	kmt_symkeep_merge(k, k2);
	assert_int_equal(kmt_symkeep_count(k), 5);
	assert_int_equal(kmt_symkeep_cut(k, ks, sizeof(ks) - 1, &text2, &len), 0);
	assert_string_equal(text2, want);
	/* A damaged text cannot be cut exactly: kept whole. */
	free(text2);
	text2 = kmt_symbols_cut("ffffffff81000000 T a\n\x01\n", 23, addrs, 1, &len);
	assert_non_null(text2);
	assert_int_equal(len, 23);
	free(text2);
	free(text);
	kmt_symbols_free(cut);
	kmt_symbols_free(whole);
	kmt_symkeep_free(k);
	kmt_symkeep_free(k2);
}

/* A file's bytes in a message: printable as they are, the rest \xHH, cut with "...". */
static void test_escape(void **state)
{
	char b[16];

	assert_string_equal(kmt_escape(b, sizeof(b), "ok", 2), "ok");
	assert_string_equal(kmt_escape(b, sizeof(b), "a\\b\x01\x7f", 5), "a\\\\b\\x01\\x7f");
	assert_string_equal(kmt_escape(b, sizeof(b), "stops\0here", 10), "stops");
	assert_string_equal(kmt_escape(b, sizeof(b), "0123456789abcdefghij", 20), "0123456789ab...");
	assert_string_equal(kmt_escape(b, 8, "\x1b\x1b\x1b", 3), "\\x1b...");
	assert_string_equal(kmt_escape(b, sizeof(b), "0123456789abcde", 15), "0123456789abcde");
}

static void test_comms(void **state)
{
	struct kmt_comms *c = kmt_comms_new();
	const char *text = "1 systemd\n0 swapper\nbad\n42 a-very-long-process-name\n-7 negative\n";
	char name[KMT_COMM_LEN], *out;
	size_t len;
	int i;

	assert_int_equal(kmt_comms_parse(c, text, strlen(text)), 0);
	assert_string_equal(kmt_comms_get(c, 1), "systemd");
	assert_string_equal(kmt_comms_get(c, 0), "swapper");
	assert_string_equal(kmt_comms_get(c, 42), "a-very-long-pro");
	assert_null(kmt_comms_get(c, 2));
	for (i = 100; i < 5000; i++)
		kmt_comms_set(c, i, "worker", 6);
	assert_string_equal(kmt_comms_get(c, 4999), "worker");
	out = kmt_comms_format(c, &len);
	assert_non_null(strstr(out, "0 swapper\n1 systemd\n"));
	free(out);
	kmt_comm_from_exec("/usr/bin/short-lived-tool-name", 30, name);
	assert_string_equal(name, "short-lived-too");
	kmt_comm_from_exec("kmt-gt", 6, name);
	assert_string_equal(name, "kmt-gt");
	kmt_comms_free(c);
	/* Names collected one CPU after another: the latest in time wins, merged too. */
	{
		struct kmt_comms *cpu0 = kmt_comms_new(), *cpu1 = kmt_comms_new(), *all = kmt_comms_new();

		kmt_comms_set_at(cpu0, 7, "kmt-gt", 6, 300);	/* exec, on CPU 0 */
		kmt_comms_set_at(cpu1, 7, "sh", 2, 100);	/* fork, on CPU 1 */
		kmt_comms_set_at(cpu1, 7, "taskset", 7, 200);	/* exec, on CPU 1 */
		kmt_comms_set_at(cpu1, 0, "swapper/1", 9, 50);
		kmt_comms_set(all, 7, "bash", 4);		/* from /proc, before the trace */
		assert_int_equal(kmt_comms_merge(all, cpu0), 0);
		assert_int_equal(kmt_comms_merge(all, cpu1), 0);
		assert_string_equal(kmt_comms_get(all, 7), "kmt-gt");
		assert_string_equal(kmt_comms_get(all, 0), "swapper/1");
		kmt_comms_set_at(cpu1, 7, "late", 4, 400);
		assert_int_equal(kmt_comms_merge(all, cpu1), 0);
		assert_string_equal(kmt_comms_get(all, 7), "late");
		kmt_comms_free(cpu0);
		kmt_comms_free(cpu1);
		kmt_comms_free(all);
	}
}

static void test_gfp_names(void **state)
{
	struct sbuf sb = { 0 };
	struct kmt_format fmt;
	struct kmt_flags *fl;
	struct kmt_diag d;
	char buf[256];

	assert_int_equal(read_file("tests/data/formats/6.18-kmem_kmalloc.format", &sb), 0);
	assert_int_equal(kmt_format_parse(&fmt, "kmem", sb.buf, sb.len, &d), 0);
	fl = kmt_flags_from_format(&fmt, "gfp_flags");
	assert_non_null(fl);
	assert_true(kmt_flags_count(fl) > 20);
	assert_string_equal(kmt_flags_format(fl, 0xcc0, buf, sizeof(buf)), "GFP_KERNEL");
	assert_string_equal(kmt_flags_format(fl, 0xdc0, buf, sizeof(buf)), "GFP_KERNEL|__GFP_ZERO");
	assert_string_equal(kmt_flags_format(fl, 0x400cc0, buf, sizeof(buf)), "GFP_KERNEL_ACCOUNT");
	assert_string_equal(kmt_flags_format(fl, 0x2800, buf, sizeof(buf)), "GFP_NOWAIT");
	assert_string_equal(kmt_flags_format(fl, 0, buf, sizeof(buf)), "none");
	assert_non_null(strstr(kmt_flags_format(fl, 0x80000000ULL, buf, sizeof(buf)), "0x80000000"));
	kmt_flags_free(fl);
	assert_null(kmt_flags_from_format(&fmt, "no_such_field"));
	kmt_format_release(&fmt);
	sbuf_release(&sb);
}

/* A file's formats @names (tests/data/formats/6.18-kmem_NAME.format) into @fs. */
static void formats_of(struct kmt_formats *fs, const char *const *names)
{
	char path[128];

	kmt_formats_init(fs);
	for (; *names; names++) {
		struct sbuf sb = { 0 };
		struct kmt_format fmt;
		struct kmt_diag d;

		snprintf(path, sizeof(path), "tests/data/formats/6.18-kmem_%s.format", *names);
		assert_int_equal(read_file(path, &sb), 0);
		assert_int_equal(kmt_format_parse(&fmt, "kmem", sb.buf, sb.len, &d), 0);
		assert_int_equal(kmt_formats_add(fs, &fmt), 0);
		sbuf_release(&sb);
	}
}

/* kmt_flags_gfp(): mm_page_alloc's names, else kmalloc's, else none. */
static void test_gfp_of_file(void **state)
{
	static const char *const both[] = { "kmalloc", "mm_page_alloc", NULL };
	static const char *const slab[] = { "kmalloc", NULL }, *const none[] = { "kfree", NULL };
	const char *const *files[] = { both, slab, none };
	struct kmt_formats fs;
	struct kmt_flags *fl;
	char buf[256];
	int i;

	for (i = 0; i < 3; i++) {
		formats_of(&fs, files[i]);
		fl = kmt_flags_gfp(&fs);
		if (files[i] == none) {
			assert_null(fl);
		} else {
			assert_non_null(fl);
			assert_string_equal(kmt_flags_format(fl, 0xdc0, buf, sizeof(buf)),
					    "GFP_KERNEL|__GFP_ZERO");
		}
		kmt_flags_free(fl);
		kmt_formats_release(&fs);
	}
}

/* The source of the zparallel test: a pattern that differs in every chunk. */
struct zsrc {
	const uint8_t *data;		/* every segment reads the same bytes */
	uint64_t fail_at;		/* read error at this offset, or never */
	struct sbuf out;		/* what came back, decompressed, in order */
	int seg;			/* the segment of the last chunk out */
	uint64_t next_off;
	struct kmt_zctx *dz;
	int order_errors;
};

static int zsrc_read(void *arg, int seg, void *buf, size_t len, uint64_t off)
{
	struct zsrc *z = arg;

	if (off == z->fail_at)
		return -EIO;
	memcpy(buf, z->data + off, len);
	return 0;
}

static int zsrc_out(void *arg, int seg, const void *raw, const void *zb, size_t n, size_t len,
		    uint64_t off)
{
	struct zsrc *z = arg;

	if (memcmp(raw, z->data + off, len))
		z->order_errors++;	/* the chunk itself comes with it */
	if (seg != z->seg) {		/* a segment begins at 0, after the one before */
		if (seg < z->seg || off)
			z->order_errors++;
		z->seg = seg;
		z->next_off = 0;
	}
	if (off != z->next_off)
		z->order_errors++;
	z->next_off = off + len;
	if (sbuf_grow(&z->out, len) ||
	    kmt_zdecompress(z->dz, z->out.buf + z->out.len, len, zb, n))
		return -EINVAL;
	z->out.len += len;
	return 0;
}

/* This process's threads, from /proc/self/task. */
static int task_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * The thread count once it is @want, or what it still is after 2 s: a
 * joined thread has cleared its tid but may be listed in /proc/self/task
 * for a moment more while the kernel finishes its exit.
 */
static int task_count_is(int want)
{
	int n, tries;

	for (tries = 0; (n = task_count()) != want && tries < 200; tries++)
		usleep(10000);
	return n;
}

static void test_zparallel(void **state)
{
	size_t total = (5u << 20) + 1234, i;	/* 80 chunks and a short one */
	uint8_t *data = malloc(total);
	int threads;

	(void)state;
	assert_non_null(data);
	for (i = 0; i < total; i++)
		data[i] = (uint8_t)((i * 2654435761u) >> (i % 7 + 8));
	for (threads = 1; threads <= 3; threads++) {
		struct kmt_zparallel *p = kmt_zparallel_new(KMT_Z_ZSTD, 1, 65536, threads);
		struct zsrc z = { .data = data, .fail_at = UINT64_MAX };
		uint64_t one[1] = { total };

		assert_non_null(p);
		z.dz = kmt_zctx_new(KMT_Z_ZSTD, 0);
		assert_int_equal(kmt_zparallel_run(p, 1, one, zsrc_read, zsrc_out, &z), 0);
		assert_int_equal(z.order_errors, 0);
		assert_int_equal(z.out.len, total);
		assert_memory_equal(z.out.buf, data, total);
		/* A read error stops the run with it, after the chunks before it. */
		z.out.len = 0;
		z.next_off = 0;
		z.fail_at = 40 * 65536;
		assert_int_equal(kmt_zparallel_run(p, 1, one, zsrc_read, zsrc_out, &z), -EIO);
		assert_int_equal(z.out.len, 40 * 65536);
		assert_int_equal(z.order_errors, 0);
		/*
		 * Runs after it, as a trace file's CPUs follow one another:
		 * whole, one chunk, none, a short one, each in order, and the
		 * workers started once, kept between runs (not one set per CPU).
		 */
		z.fail_at = UINT64_MAX;
		for (i = 0; i < 5; i++) {
			uint64_t len = i == 0 ? total : i == 1 ? 65536 : i == 2 ? 0 : i == 3 ? 1000 : 3 * 65536 + 7;
			int want = 1 + (threads > 1 ? threads : 0);

			z.out.len = 0;
			z.next_off = 0;
			assert_int_equal(kmt_zparallel_run(p, 1, &len, zsrc_read, zsrc_out, &z), 0);
			assert_int_equal(z.order_errors, 0);
			assert_int_equal(z.out.len, len);
			assert_memory_equal(z.out.buf, data, len);
			assert_int_equal(task_count_is(want), want);
		}
		/*
		 * The same in one run, one segment each (empty ones too, first
		 * and between): every chunk in order, each segment's from 0.
		 */
		{
			uint64_t segs[8] = { 0, total, 65536, 0, 1000, 3 * 65536 + 7, 0, 5 };
			uint64_t want = 0, at = 0;
			int k;

			for (k = 0; k < 8; k++)
				want += segs[k];
			z.out.len = 0;
			z.seg = -1;
			assert_int_equal(kmt_zparallel_run(p, 8, segs, zsrc_read, zsrc_out, &z), 0);
			assert_int_equal(z.order_errors, 0);
			assert_int_equal(z.seg, 7);
			assert_int_equal(z.out.len, want);
			for (k = 0; k < 8; k++) {
				assert_memory_equal(z.out.buf + at, data, segs[k]);
				at += segs[k];
			}
		}
		kmt_zctx_free(z.dz);
		sbuf_release(&z.out);
		kmt_zparallel_free(p);
	}
	free(data);
}

struct par_test {
	int runs[200];
	int fail_from;			/* indices from here fail, with -(index) */
};

static int par_one(void *arg, int i)
{
	struct par_test *t = arg;

	__atomic_fetch_add(&t->runs[i], 1, __ATOMIC_RELAXED);
	return i >= t->fail_from ? -(i + 1) : 0;
}

/*
 * kmt_parallel: every index runs exactly once, on no more workers than
 * the CPUs online (at most 16), and the error returned is the lowest
 * index's, whichever worker got there first.
 */
static void test_parallel(void **state)
{
	static const int ns[] = { 0, 1, 2, 3, 64, 200 };
	struct par_test t;
	size_t k;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int i;

	(void)state;
	for (k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
		memset(&t, 0, sizeof(t));
		t.fail_from = 1000;
		assert_int_equal(kmt_parallel(ns[k], par_one, &t), 0);
		for (i = 0; i < 200; i++)
			assert_int_equal(t.runs[i], i < ns[k] ? 1 : 0);
		assert_int_equal(kmt_parallel_workers(ns[k]),
				 ns[k] < 1 ? 1 : MIN(ns[k], (int)MIN(MAX(cpus, 1), 16)));
	}
	memset(&t, 0, sizeof(t));
	t.fail_from = 37;
	assert_int_equal(kmt_parallel(200, par_one, &t), -38);
	for (i = 0; i < 200; i++)
		assert_int_equal(t.runs[i], 1);
	assert_int_equal(task_count_is(1), 1);	/* no worker left behind */
}

/*
 * kmt_handoff: a filler writes slot numbers into a ring of 3 slots, 4
 * takers each read every one in order; a slot is never filled again
 * before every taker has taken it (a taker would then read a later
 * number), and kmt_handoff_taken() waits for all of them.
 */
#define HO_SLOTS 3
#define HO_TAKERS 4
#define HO_N 20000
static struct ho_test {
	struct kmt_handoff *h;
	uint64_t ring[HO_SLOTS];
	uint64_t seen[HO_TAKERS], bad[HO_TAKERS];
	unsigned int k[HO_TAKERS];
} ho;

static void *ho_taker(void *arg)
{
	unsigned int *k = arg;
	struct ho_test *t = &ho;
	uint64_t n;

	while (kmt_handoff_next(t->h, *k, &n)) {
		if (n != t->seen[*k] || __atomic_load_n(&t->ring[n % HO_SLOTS], __ATOMIC_ACQUIRE) != n)
			t->bad[*k]++;
		t->seen[*k]++;
		kmt_handoff_took(t->h, *k);
	}
	return NULL;
}

/* ... with sides that wake for @fill_low free slots and @take_low given ones. */
static void handoff_run(unsigned int fill_low, unsigned int take_low)
{
	struct ho_test *tp = &ho;
	pthread_t th[HO_TAKERS];
	uint64_t i, n;
	unsigned int k;

	memset(tp, 0, sizeof(*tp));
	tp->h = kmt_handoff_new(HO_SLOTS, HO_TAKERS);
	assert_non_null(tp->h);
	assert_int_equal(kmt_handoff_wake(tp->h, fill_low, take_low), 0);
	for (k = 0; k < HO_TAKERS; k++) {
		tp->k[k] = k;
		assert_int_equal(pthread_create(&th[k], NULL, ho_taker, &tp->k[k]), 0);
	}
	for (i = 0; i < HO_N; i++) {
		n = kmt_handoff_room(tp->h);
		assert_int_equal(n, i);
		__atomic_store_n(&tp->ring[n % HO_SLOTS], n, __ATOMIC_RELEASE);
		kmt_handoff_give(tp->h);
		if (i % 1000 == 999) {
			kmt_handoff_hurry(tp->h, true);	/* takers that wait for several take what there is */
			assert_true(kmt_handoff_taken(tp->h, i + 1, true));
			kmt_handoff_hurry(tp->h, false);
			for (k = 0; k < HO_TAKERS; k++)
				assert_int_equal(__atomic_load_n(&tp->seen[k], __ATOMIC_RELAXED), i + 1);
		}
	}
	assert_int_equal(kmt_handoff_given(tp->h), HO_N);
	kmt_handoff_end(tp->h);
	for (k = 0; k < HO_TAKERS; k++) {
		pthread_join(th[k], NULL);
		assert_int_equal(tp->seen[k], HO_N);
		assert_int_equal(tp->bad[k], 0);
	}
	assert_true(kmt_handoff_taken(tp->h, HO_N, false));
	assert_false(kmt_handoff_taken(tp->h, HO_N + 1, false));
	kmt_handoff_free(tp->h);
}

static void test_handoff(void **state)
{
	struct kmt_handoff *h;

	(void)state;
	assert_null(kmt_handoff_new(0, 1));
	assert_null(kmt_handoff_new(1, 0));
	h = kmt_handoff_new(HO_SLOTS, 1);
	assert_int_equal(kmt_handoff_wake(h, 0, 1), -EINVAL);
	assert_int_equal(kmt_handoff_wake(h, 1, HO_SLOTS + 1), -EINVAL);
	assert_int_equal(kmt_handoff_wake(h, 2, 3), -EINVAL);	/* takers would wait for more than a full ring */
	kmt_handoff_free(h);
	handoff_run(1, 1);
	handoff_run(HO_SLOTS, 1);	/* the filler waits for an empty ring */
	handoff_run(2, 2);
	handoff_run(1, HO_SLOTS);	/* takers wait for a full one */
}

/*
 * Takers in stages: taker 0 (stage 0) -> takers 1 and 2 (stage 1, waiting
 * for 2) -> taker 3 (stage 2). Each marks a slot done before it says so;
 * a taker checks that every taker of the stage before has marked it.
 */
static struct stage_test {
	struct kmt_handoff *h;
	uint64_t mark[HO_TAKERS][HO_SLOTS];
	uint64_t bad[HO_TAKERS], seen[HO_TAKERS];
	unsigned int k[HO_TAKERS];
} stg;

static void *st_taker(void *arg)
{
	static const unsigned int before[HO_TAKERS][2] = { { 9, 9 }, { 0, 9 }, { 0, 9 }, { 1, 2 } };
	unsigned int k = *(unsigned int *)arg, i;
	uint64_t n;

	while (kmt_handoff_next(stg.h, k, &n)) {
		for (i = 0; i < 2; i++)
			if (before[k][i] != 9 &&
			    __atomic_load_n(&stg.mark[before[k][i]][n % HO_SLOTS], __ATOMIC_ACQUIRE) != n + 1)
				stg.bad[k]++;
		__atomic_store_n(&stg.mark[k][n % HO_SLOTS], n + 1, __ATOMIC_RELEASE);
		stg.seen[k]++;
		kmt_handoff_took(stg.h, k);
	}
	return NULL;
}

static void test_handoff_stages(void **state)
{
	pthread_t th[HO_TAKERS];
	unsigned int k;
	uint64_t i;

	(void)state;
	memset(&stg, 0, sizeof(stg));
	stg.h = kmt_handoff_new(HO_SLOTS, HO_TAKERS);
	assert_non_null(stg.h);
	assert_int_equal(kmt_handoff_stage(stg.h, 1, 1, 2), 0);
	assert_int_equal(kmt_handoff_stage(stg.h, 2, 1, 2), 0);
	assert_int_equal(kmt_handoff_stage(stg.h, 3, 2, 1), 0);
	assert_int_equal(kmt_handoff_stage(stg.h, 4, 1, 1), -EINVAL);
	assert_int_equal(kmt_handoff_stage(stg.h, 1, 1, HO_SLOTS + 1), -EINVAL);
	for (k = 0; k < HO_TAKERS; k++) {
		stg.k[k] = k;
		assert_int_equal(pthread_create(&th[k], NULL, st_taker, &stg.k[k]), 0);
	}
	for (i = 0; i < HO_N; i++) {
		assert_int_equal(kmt_handoff_room(stg.h), i);
		kmt_handoff_give(stg.h);
	}
	kmt_handoff_end(stg.h);
	for (k = 0; k < HO_TAKERS; k++) {
		pthread_join(th[k], NULL);
		assert_int_equal(stg.seen[k], HO_N);
		assert_int_equal(stg.bad[k], 0);
	}
	kmt_handoff_free(stg.h);
}

/*
 * kmt_handoff_stop(): a filler waiting for room and a taker waiting for a
 * slot both return; takers end.
 */
static void *stop_taker(void *arg)
{
	uint64_t n;

	return (void *)(uintptr_t)kmt_handoff_next(arg, 0, &n);
}

static void test_handoff_stop(void **state)
{
	struct kmt_handoff *h = kmt_handoff_new(2, 1);
	pthread_t th;
	void *got;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, stop_taker, h), 0);
	usleep(20000);
	kmt_handoff_stop(h);
	pthread_join(th, &got);
	assert_null(got);
	assert_true(kmt_handoff_stopped(h));
	kmt_handoff_give(h);
	kmt_handoff_give(h);
	assert_int_equal(kmt_handoff_room(h), 2);	/* full, yet it returns */
	assert_false(kmt_handoff_taken(h, 1, true));
	kmt_handoff_free(h);
}

/*
 * kmt_handoff_next_by(): nothing given yet times out (at once with
 * KMT_HANDOFF_NOW, else not before the time given); a slot given is taken
 * even if fewer than take_low are; the end says so.
 */
static void test_handoff_by(void **state)
{
	struct kmt_handoff *h = kmt_handoff_new(4, 1);
	uint64_t n = 99, t0;

	(void)state;
	assert_non_null(h);
	assert_int_equal(kmt_handoff_wake(h, 1, 3), 0);
	assert_int_equal(kmt_handoff_next_by(h, 0, &n, KMT_HANDOFF_NOW), -ETIMEDOUT);
	assert_int_equal(n, 0);
	t0 = kmt_now_ns();
	assert_int_equal(kmt_handoff_next_by(h, 0, &n, t0 + 20000000), -ETIMEDOUT);
	assert_true(kmt_now_ns() - t0 >= 20000000);
	assert_int_equal(kmt_handoff_room(h), 0);
	kmt_handoff_give(h);
	t0 = kmt_now_ns();
	assert_int_equal(kmt_handoff_next_by(h, 0, &n, t0 + 20000000), 1);	/* one, after waiting for three */
	assert_int_equal(n, 0);
	assert_int_equal(kmt_handoff_next_by(h, 0, &n, KMT_HANDOFF_NOW), 1);	/* not taken yet: the same */
	kmt_handoff_took(h, 0);
	kmt_handoff_end(h);
	assert_int_equal(kmt_handoff_next_by(h, 0, &n, 0), 0);
	assert_int_equal(n, 1);
	kmt_handoff_free(h);
}

/*
 * A KMT_OUTFILE_BIG stream in @dir: 13 MiB and a bit in writes of odd
 * sizes (blocks of 4 MiB go out on the writer thread, the tail at the end)
 * reads back the same; an aborted one leaves nothing.
 */
static void big_in(const char *dir)
{
	struct kmt_outfile of;
	struct kmt_diag d = { 0 };
	char path[256];
	size_t total = (13u << 20) + 4321, off = 0, n;
	uint8_t *buf = malloc(total), *back = malloc(total);
	struct stat st;
	FILE *f;

	assert_non_null(buf);
	assert_non_null(back);
	for (n = 0; n < total; n++)
		buf[n] = (uint8_t)(n * 2654435761u >> 13);
	snprintf(path, sizeof(path), "%s/kmt-big-test-%d", dir, (int)getpid());
	assert_int_equal(kmt_outfile_open_flags(&of, path, 0644, KMT_OUTFILE_BIG, &d), 0);
	assert_non_null(f = kmt_outfile_stream(&of));
	for (n = 1; off < total; n = n * 7 % 1000003 + 1) {
		size_t k = MIN(n, total - off);

		assert_int_equal(fwrite(buf + off, 1, k, f), k);
		off += k;
	}
	assert_int_equal(kmt_outfile_commit(&of, &d), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal((size_t)st.st_size, total);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(back, 1, total, f), total);
	fclose(f);
	assert_memory_equal(buf, back, total);
	unlink(path);

	assert_int_equal(kmt_outfile_open_flags(&of, path, 0644, KMT_OUTFILE_BIG, &d), 0);
	assert_non_null(f = kmt_outfile_stream(&of));
	assert_int_equal(fwrite(buf, 1, 5u << 20, f), 5u << 20);
	kmt_outfile_abort(&of);
	assert_int_not_equal(stat(path, &st), 0);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), ".tmp-%d", (int)getpid());
	assert_int_not_equal(stat(path, &st), 0);
	free(buf);
	free(back);
}

/*
 * Merged slab caches from a slab directory of links and a slabinfo that
 * lists the name the kernel reports; the text a recording keeps, back.
 */
static void test_slab_aliases(void **state)
{
	char dir[] = "/tmp/kmt-slab.XXXXXX", path[300], info[300], buf[64];
	static const char *const links[][2] = {
		{ "pid", ":A-0000128" }, { "cred", ":A-0000128" }, { "zeta", ":A-0000128" },
		{ "filp_alone", ":0000192" }, { "a_first", ":0000512" }, { "b_second", ":0000512" },
	};
	const struct kmt_slab_group *g;
	struct kmt_slab_aliases *a, *b;
	char *text, *again;
	size_t len, len2, i;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, links[i][0]);
		assert_int_equal(symlink(links[i][1], path), 0);
	}
	snprintf(path, sizeof(path), "%s/:0000512", dir);	/* a directory: not a name */
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(info, sizeof(info), "%s.slabinfo", dir);
	f = fopen(info, "w");
	assert_non_null(f);
	fputs("slabinfo - version: 2.1\ncred 1 1 1\nb_second 1 1 1\nfilp_alone 1 1 1\n", f);
	fclose(f);
	a = kmt_slab_aliases_read_from(dir, info);
	assert_non_null(a);
	assert_int_equal(kmt_slab_aliases_count(a), 2);	/* filp_alone is merged with nothing */
	g = kmt_slab_group_of(a, "zeta", 4);
	assert_non_null(g);
	assert_string_equal(g->name, "cred");		/* the one slabinfo lists */
	assert_int_equal(g->nr_aliases, 2);
	assert_string_equal(g->aliases[0], "pid");
	assert_string_equal(g->aliases[1], "zeta");
	assert_string_equal(g->label, "cred (+pid, zeta)");
	assert_ptr_equal(kmt_slab_group_of(a, "cred", 4), g);
	assert_ptr_equal(kmt_slab_group_of(a, "cre", 3), NULL);
	assert_null(kmt_slab_group_of(a, "filp_alone", 10));
	assert_string_equal(kmt_slab_event_name(a, "pid", buf, sizeof(buf)), "cred");
	assert_string_equal(kmt_slab_event_name(a, "b_second", buf, sizeof(buf)), "b_second");
	assert_string_equal(kmt_slab_event_name(a, "a_first", buf, sizeof(buf)), "b_second");
	assert_string_equal(kmt_slab_event_name(a, "kmalloc-2048", buf, sizeof(buf)), "kmalloc-2k");
	assert_string_equal(kmt_slab_event_name(a, "kmalloc-96", buf, sizeof(buf)), "kmalloc-96");
	assert_string_equal(kmt_slab_event_name(a, "nosuch", buf, sizeof(buf)), "nosuch");
	text = kmt_slab_aliases_format(a, &len);
	assert_string_equal(text, "b_second a_first\ncred pid zeta\n");
	b = kmt_slab_aliases_parse(text, len);
	again = kmt_slab_aliases_format(b, &len2);
	assert_string_equal(again, text);
	free(again);
	free(text);
	kmt_slab_aliases_free(b);
	kmt_slab_aliases_free(a);
	/* Lines of one name, or empty, are no groups. */
	b = kmt_slab_aliases_parse("alone\n\n  x   y \n", strlen("alone\n\n  x   y \n"));
	assert_int_equal(kmt_slab_aliases_count(b), 1);
	assert_string_equal(kmt_slab_group_of(b, "y", 1)->label, "x (+y)");
	kmt_slab_aliases_free(b);
	assert_int_equal(kmt_kmalloc_class("kmalloc-2k"), 2048);
	assert_int_equal(kmt_kmalloc_class("kmalloc-2048"), 2048);
	assert_int_equal(kmt_kmalloc_class("kmalloc-large"), 0);
	assert_int_equal(kmt_kmalloc_class("kmalloc-64x"), 0);
	assert_int_equal(kmt_kmalloc_class("filp"), 0);
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, links[i][0]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/:0000512", dir);
	rmdir(path);
	rmdir(dir);
	unlink(info);
}

static void test_outfile_big(void **state)
{
	struct stat st;

	big_in(".");		/* the build's disk: O_DIRECT where it is taken */
	if (!stat("/dev/shm", &st) && S_ISDIR(st.st_mode))
		big_in("/dev/shm");	/* tmpfs refuses O_DIRECT: written as usual */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map),
		cmocka_unit_test(test_siphash),
		cmocka_unit_test(test_symbols),
		cmocka_unit_test(test_symbols_damaged_line),
		cmocka_unit_test(test_symbols_module_label),
		cmocka_unit_test(test_symbols_cut),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_comms),
		cmocka_unit_test(test_gfp_names),
		cmocka_unit_test(test_gfp_of_file),
		cmocka_unit_test(test_zparallel),
		cmocka_unit_test(test_parallel),
		cmocka_unit_test(test_handoff),
		cmocka_unit_test(test_handoff_by),
		cmocka_unit_test(test_handoff_stages),
		cmocka_unit_test(test_handoff_stop),
		cmocka_unit_test(test_slab_aliases),
		cmocka_unit_test(test_outfile_big),
	};

	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
