/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests of the capture stage without a recording: a spool built in a
 * private directory by the library's own writers (kmt_spool_*) with
 * ring-buffer pages from the test builder, finalised into a trace file
 * (kmt_spool_finalize) and read back through the reader. Its metadata,
 * each CPU's events, times and losses, a torn or damaged page, an empty
 * CPU, a truncated recording, the watch samples' buffer, the spool's
 * locking and its errors. Then, where this process is root and tracefs is
 * there, in private instances removed even when a test fails: a dead
 * recorder's instance taken into its spool (kmt_recover_take), a
 * recording's instance set up and its metadata captured (kmt_session_*),
 * and files made with another user's rights (kmt_owner_*); otherwise those
 * skip, saying why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kmemtrace/capture.h>
#include <kmemtrace/event.h>
#include <kmemtrace/tracefile.h>
#include <kmemtrace/tracefs.h>
#include "base/kmt-local.h"
#include "tbuild.h"
#include "tinst.h"

#define SITE 0xffffffff81100010ULL		/* in do_thing */
#define KALLSYMS "ffffffff81000000 T _stext\n" \
		 "ffffffff81100000 T do_thing\n" \
		 "ffffffff81200000 T other_fn\n" \
		 "ffffffff81300000 T unused_fn\n"
#define PER_PAGE 72	/* kmalloc records (52 bytes + a 4-byte header) in a 4080-byte page */

static char tmpdir[64];

/* Each test has a directory of its own, removed after it whatever happened. */
static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/kmt-unit-capture-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int teardown(void **state)
{
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

/* @name in the test's directory (four at a time). */
static const char *tpath(const char *name)
{
	static char buf[4][256];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, 256, "%s/%s", tmpdir, name);
	return p;
}

/* Bytes on disk of the files in directory @dir (one level). */
static uint64_t disk_bytes(const char *dir)
{
	struct dirent *de;
	struct stat st;
	char path[512];
	uint64_t sum = 0;
	DIR *dp = opendir(dir);

	assert_non_null(dp);
	while ((de = readdir(dp))) {
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_name[0] != '.' && !lstat(path, &st) && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_blocks * 512;
	}
	closedir(dp);
	return sum;
}

/* Entries of directory @dir other than . and .. */
static int dir_entries(const char *dir)
{
	struct dirent *de;
	int n = 0;
	DIR *dp = opendir(dir);

	assert_non_null(dp);
	while ((de = readdir(dp)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(dp);
	return n;
}

/* A pid that was this process's child and is gone (reaped). */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		/* Out of this image, and of valgrind's leak check of it. */
		execl("/bin/true", "true", (char *)NULL);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

static void put_file(struct kmt_spool *s, enum kmt_spool_blob b, const char *file)
{
	struct kmt_diag d = { 0 };
	struct sbuf sb = { 0 };

	assert_int_equal(read_file(tb_data_path(file), &sb), 0);
	if (kmt_spool_put(s, b, sb.buf, sb.len, &d))
		fail_msg("%s", d.msg);
	sbuf_release(&sb);
}

/* The formats of tb_formats_6_18(), as a recording adds them. */
static void add_formats_6_18(struct kmt_spool *s)
{
	static const char *const f[][2] = {
		{ "kmem", "kmalloc" }, { "kmem", "kfree" }, { "kmem", "kmem_cache_alloc" },
		{ "kmem", "kmem_cache_free" }, { "kmem", "mm_page_alloc" }, { "kmem", "mm_page_free" },
		{ "kmem", "mm_page_free_batched" }, { "percpu", "percpu_alloc_percpu" },
		{ "percpu", "percpu_free_percpu" }, { "sched", "sched_process_fork" },
		{ "sched", "sched_process_exec" }, { "sched", "sched_process_exit" },
		{ "task", "task_rename" }, { "task", "task_newtask" }, { "ftrace", "kernel_stack" },
		{ "vmalloc", "alloc_vmap_area" }, { "vmalloc", "free_vmap_area_noflush" },
	};
	struct kmt_diag d = { 0 };
	char file[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(f); i++) {
		struct sbuf sb = { 0 };

		snprintf(file, sizeof(file), "formats/6.18-%s_%s.format", f[i][0], f[i][1]);
		assert_int_equal(read_file(tb_data_path(file), &sb), 0);
		if (kmt_spool_add_format(s, f[i][0], f[i][1], sb.buf, sb.len, &d))
			fail_msg("%s", d.msg);
		sbuf_release(&sb);
	}
}

static void fill_meta(struct kmt_spool_meta *m, const int *cpus, int nr_cpus)
{
	int i;

	memset(m, 0, sizeof(*m));
	snprintf(m->version, sizeof(m->version), "9.9.9-unit");
	m->pid = (int32_t)getpid();
	snprintf(m->instance, sizeof(m->instance), "kmemtrace-4242");
	m->created = 1700000000;
	snprintf(m->uname, sizeof(m->uname), "Linux unit 6.18.0 x86_64");
	m->page_size = 4096;
	m->subbuf_size = 4096;
	m->long_size = 8;
	snprintf(m->clock, sizeof(m->clock), "local");
	m->partial = KMT_PARTIAL_FREES;
	snprintf(m->command, sizeof(m->command), "kmemtrace record -e kmem:kmalloc\nnot kept");
	snprintf(m->settings, sizeof(m->settings), "events kmem:kmalloc");
	m->nr_cpus = nr_cpus;
	for (i = 0; i < nr_cpus; i++)
		m->cpus[i] = cpus[i];
}

/* A spool at @dir as a recording leaves it set up: metadata, header pages, formats. */
static struct kmt_spool *spool_make(const char *dir, const int *cpus, int nr_cpus)
{
	struct kmt_spool_meta m;
	struct kmt_diag d = { 0 };
	struct kmt_spool *s = kmt_spool_create(dir, &d);

	if (!s)
		fail_msg("%s", d.msg);
	fill_meta(&m, cpus, nr_cpus);
	if (kmt_spool_set_meta(s, &m, &d))
		fail_msg("%s", d.msg);
	put_file(s, KMT_SPOOL_HEADER_PAGE, "formats/6.18-header_page");
	put_file(s, KMT_SPOOL_HEADER_EVENT, "formats/6.18-header_event");
	assert_int_equal(kmt_spool_put(s, KMT_SPOOL_TRACE_CLOCK, "[local] global\n", 15, &d), 0);
	assert_int_equal(kmt_spool_put(s, KMT_SPOOL_KALLSYMS, KALLSYMS, strlen(KALLSYMS), &d), 0);
	assert_int_equal(kmt_spool_put(s, KMT_SPOOL_CMDLINES, "1 init\n100 worker\n", 18, &d), 0);
	add_formats_6_18(s);
	return s;
}

/* CPU @cpu's data file in buffer @b, holding @size bytes of @data. */
static void put_cpu(struct kmt_spool *s, enum kmt_spool_buffer b, int cpu, const void *data,
		    uint64_t size)
{
	struct kmt_diag d = { 0 };
	int fd = kmt_spool_cpu_create(s, b, cpu, &d);

	if (fd < 0)
		fail_msg("%s", d.msg);
	assert_int_equal(write_all(fd, data, size), 0);
	assert_int_equal(close(fd), 0);
}

static void put_tb_cpu(struct kmt_spool *s, struct tb *tb, int idx, int cpu)
{
	const uint8_t *data;
	uint64_t size;

	tb_flush_page(tb, idx);
	data = tb_cpu_data(tb, idx, &size);
	put_cpu(s, KMT_SPOOL_MAIN, cpu, data, size);
}

static int finalize(struct kmt_spool *s, const char *out, const struct kmt_finalize_opts *o,
		    struct kmt_finalize_result *res)
{
	struct kmt_diag d = { 0 };
	int ret = kmt_spool_finalize(s, out, o, res, &d);

	if (ret)
		fail_msg("finalize: %s", d.msg);
	return ret;
}

/* What a trace file's main (or @access) buffer holds, by CPU number (< 8). */
struct readback {
	uint64_t events[8];
	uint64_t first_ts[8], last_ts[8];
	int markers[8];
	uint64_t marked_at[8];		/* the CPU's records before its first marker */
	int64_t lost[8][4];		/* the markers' counts, in order */
	bool truncated[8];		/* its last marker said so */
	uint64_t total;
	uint64_t first, last;		/* of the whole stream */
};

static void read_back(const char *path, bool access, struct readback *rb)
{
	struct kmt_diag d = { 0 };
	struct kmt_file *f;
	struct kmt_stream *st;
	struct kmt_srec sr;
	uint64_t prev = 0;
	int ret, b;

	memset(rb, 0, sizeof(*rb));
	if (kmt_file_open(&f, path, &d))
		fail_msg("%s", d.msg);
	b = access ? kmt_file_access_buffer(f) : 0;
	assert_true(b >= 0);
	st = kmt_stream_open(f, b, &d);
	if (!st)
		fail_msg("%s", d.msg);
	while ((ret = kmt_stream_next(st, &sr, &d)) > 0) {
		assert_true(sr.cpu >= 0 && sr.cpu < 8);
		if (sr.lost_marker) {
			if (!rb->markers[sr.cpu])
				rb->marked_at[sr.cpu] = rb->events[sr.cpu];
			if (rb->markers[sr.cpu] < 4)
				rb->lost[sr.cpu][rb->markers[sr.cpu]] = sr.lost;
			rb->markers[sr.cpu]++;
			rb->truncated[sr.cpu] = sr.truncated;
			continue;
		}
		assert_true(sr.rec.ts >= prev);
		prev = sr.rec.ts;
		if (!rb->total++)
			rb->first = sr.rec.ts;
		rb->last = sr.rec.ts;
		if (!rb->events[sr.cpu]++)
			rb->first_ts[sr.cpu] = sr.rec.ts;
		rb->last_ts[sr.cpu] = sr.rec.ts;
	}
	if (ret < 0)
		fail_msg("%s", d.msg);
	kmt_stream_close(st);
	kmt_file_close(f);
}

static void progress(void *arg, uint64_t done, uint64_t total)
{
	uint64_t *p = arg;

	p[0]++;
	p[1] = done;
	p[2] = total;
}

/*
 * A spool of four CPUs (0, 2, 5, 7: one with events across pages, one
 * whose file is empty, one with the process-naming events, one never
 * created) finalises into a v7 file whose header fields, process names,
 * symbols and per-CPU events are exactly the spool's: the counts and time
 * spans in the result agree with what the reader streams back, the names
 * are each pid's latest in time (not the last CPU scanned), kallsyms keeps
 * only the symbols the events name (and where they end), and the room set
 * aside is given back while the spool stays.
 */
static void test_finalize_roundtrip(void **state)
{
	static const int cpus[] = { 0, 2, 5, 7 };
	struct kmt_finalize_opts o = { .zalg = KMT_Z_ZSTD, .level = 1, .chunk_pages = 4,
				       .progress = progress };
	static const char stats0[] = "CPU: 0\nentries: 0\noverrun: 0\ncommit overrun: 0\n"
				     "bytes: 0\ndropped events: 0\nread events: 601\n";
	struct kmt_finalize_result res;
	struct kmt_diag d = { 0 };
	struct tb *tb = tb_new(3, 0);
	const char *spool = tpath("spool"), *out = tpath("out.dat");
	uint64_t calls[3] = { 0 }, size0, size5, before;
	const struct kmt_file_info *fi;
	const struct kmt_buffer *buf;
	struct kmt_spool *s;
	struct kmt_file *f;
	struct readback rb;
	struct stat st;
	size_t len;
	int i;

	o.progress_arg = calls;
	tb_formats_6_18(tb);
	for (i = 0; i < 600; i++)
		tb_kmalloc(tb, 0, 2000 + 10 * (uint64_t)i, 100, SITE,
			   0xffff888000000000 + (uint64_t)i * 64, 32, 32);
	tb_emit(tb, 0, 9000, "task", "task_rename", 100, (struct tb_val[]){
		{ "pid", 100 }, { "oldcomm", 0, "worker" }, { "newcomm", 0, "late-name" }, { NULL } });
	tb_emit(tb, 2, 1500, "task", "task_rename", 100, (struct tb_val[]){
		{ "pid", 100 }, { "oldcomm", 0, "worker" }, { "newcomm", 0, "early-name" }, { NULL } });
	tb_emit(tb, 2, 1600, "sched", "sched_process_fork", 100, (struct tb_val[]){
		{ "parent_comm", 0, "worker" }, { "parent_pid", 100 }, { "child_comm", 0, "child" },
		{ "child_pid", 300 }, { NULL } });
	tb_emit(tb, 2, 1700, "sched", "sched_process_exit", 400, (struct tb_val[]){
		{ "comm", 0, "exiting" }, { "pid", 400 }, { NULL } });
	for (i = 0; i < 200; i++)
		tb_cache_alloc(tb, 2, 3000 + 7 * (uint64_t)i, 300, SITE + 0x10,
			       0xffff888100000000 + (uint64_t)i * 192, "filp", 184, 192);

	s = spool_make(spool, cpus, 4);
	put_tb_cpu(s, tb, 0, 0);
	put_cpu(s, KMT_SPOOL_MAIN, 2, "", 0);
	put_tb_cpu(s, tb, 2, 5);
	tb_cpu_data(tb, 0, &size0);
	tb_cpu_data(tb, 2, &size5);
	assert_int_equal(size0, 9 * 4096);	/* 601 events: 8 pages of 72, and 25 */
	assert_int_equal(size5, 4 * 4096);	/* 203 events, most with a cache name */
	assert_int_equal(kmt_spool_put_stats(s, KMT_SPOOL_MAIN, 0, stats0, strlen(stats0), &d), 0);
	assert_int_equal(kmt_spool_size(s, KMT_SPOOL_KALLSYMS), strlen(KALLSYMS));
	assert_int_equal(kmt_spool_size(s, KMT_SPOOL_PRINTK), 0);
	before = disk_bytes(spool);
	assert_int_equal(kmt_spool_reserve(s, 1 << 20, &d), 0);
	assert_true(disk_bytes(spool) >= before + (1 << 20));

	finalize(s, out, &o, &res);
	assert_true(disk_bytes(spool) < before + (1 << 20));	/* the room went back */
	assert_int_equal(res.nr_cpus, 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(res.cpus[i].cpu, cpus[i]);
	assert_int_equal(res.cpus[0].events, 601);
	assert_int_equal(res.cpus[0].pages, 9);
	assert_int_equal(res.cpus[0].bytes, 9 * 4096);
	assert_int_equal(res.cpus[0].first_ts, 2000);
	assert_int_equal(res.cpus[0].last_ts, 9000);
	assert_true(res.cpus[0].has_stats);
	assert_int_equal(res.cpus[1].events, 0);
	assert_int_equal(res.cpus[1].pages, 0);
	assert_int_equal(res.cpus[1].bytes, 0);
	assert_int_equal(res.cpus[1].first_ts, 0);
	assert_false(res.cpus[1].has_stats);
	assert_int_equal(res.cpus[2].events, 203);
	assert_int_equal(res.cpus[2].pages, 4);
	assert_int_equal(res.cpus[2].first_ts, 1500);
	assert_int_equal(res.cpus[2].last_ts, 3000 + 7 * 199);
	assert_int_equal(res.cpus[3].events, 0);
	assert_int_equal(res.cpus[3].bytes, 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(res.cpus[i].lost, 0);
		assert_int_equal(res.cpus[i].lost_pages, 0);
		assert_int_equal(kmt_finalize_cpu_lost(&res.cpus[i]), 0);
	}
	assert_int_equal(res.events, 804);
	assert_int_equal(res.lost, 0);
	assert_int_equal(res.stacks, 0);
	assert_int_equal(res.first_ts, 1500);
	assert_int_equal(res.last_ts, 9000);
	assert_int_equal(res.raw_bytes, 13 * 4096);
	assert_int_equal(res.access_events, 0);
	assert_false(res.truncated);
	assert_int_equal(stat(out, &st), 0);
	assert_int_equal(res.file_bytes, st.st_size);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_true(calls[0] > 0);
	assert_int_equal(calls[1], calls[2]);
	assert_int_equal(calls[2], 13 * 4096);
	/* The spool stays: only its room went. */
	assert_int_equal(access(spool, F_OK), 0);
	kmt_spool_close(s);
	assert_int_equal(dir_entries(tmpdir), 2);	/* no temporary file left beside out.dat */

	if (kmt_file_open(&f, out, &d))
		fail_msg("%s", d.msg);
	fi = kmt_file_info(f);
	assert_int_equal(fi->version, 7);
	assert_string_equal(fi->compression, "zstd");
	assert_string_equal(fi->uname, "Linux unit 6.18.0 x86_64");
	assert_string_equal(fi->clock, "local");
	assert_int_equal(fi->page_size, 4096);
	assert_int_equal(fi->long_size, 8);
	assert_int_equal(fi->kernel_long_size, 8);
	assert_true(fi->recinfo.ours);
	assert_string_equal(fi->recinfo.recorder, "kmemtrace 9.9.9-unit");
	assert_int_equal(fi->recinfo.partial, KMT_PARTIAL_FREES);
	assert_string_equal(fi->recinfo.command, "kmemtrace record -e kmem:kmalloc");
	assert_string_equal(fi->recinfo.settings, "events kmem:kmalloc");
	assert_int_equal(fi->recinfo.created, 1700000000);
	assert_string_equal(kmt_file_trace_clock(f), "[local] global\n");
	assert_int_equal(kmt_file_formats(f)->nr, 17);
	assert_string_equal(kmt_file_cmdlines(f, &len),
			    "1 init\n100 late-name\n300 child\n400 exiting\n");
	assert_string_equal(kmt_file_kallsyms(f, &len),
			    "ffffffff81100000 T do_thing\nffffffff81200000 T other_fn\n");
	assert_int_equal(kmt_file_nr_buffers(f), 1);
	assert_int_equal(kmt_file_access_buffer(f), -1);
	buf = kmt_file_buffer(f, 0);
	assert_string_equal(buf->name, "");
	assert_int_equal(buf->page_size, 4096);
	assert_int_equal(buf->nr_cpus, 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(buf->cpus[i].cpu, cpus[i]);
	assert_int_equal(kmt_buffer_cpustat(buf, 0)->read, 601);
	assert_int_equal(kmt_buffer_cpustat(buf, 5)->cpu, 5);
	assert_int_equal(kmt_buffer_cpustat(buf, 5)->read, 0);
	kmt_file_close(f);

	read_back(out, false, &rb);
	assert_int_equal(rb.total, 804);
	assert_int_equal(rb.events[0], 601);
	assert_int_equal(rb.events[2], 0);
	assert_int_equal(rb.events[5], 203);
	assert_int_equal(rb.events[7], 0);
	assert_int_equal(rb.first_ts[0], 2000);
	assert_int_equal(rb.last_ts[0], 9000);
	assert_int_equal(rb.first_ts[5], 1500);
	assert_int_equal(rb.last_ts[5], 3000 + 7 * 199);
	assert_int_equal(rb.first, 1500);
	assert_int_equal(rb.last, 9000);
	for (i = 0; i < 8; i++)
		assert_int_equal(rb.markers[i], 0);
	tb_free(tb);
}

/*
 * Kept whole, kallsyms is the spool's text byte for byte; zlib and no
 * compression give the same events.
 */
static void test_finalize_full_kallsyms(void **state)
{
	static const int cpus[] = { 0 };
	static const struct { enum kmt_zalg z; const char *name; } zs[] = {
		{ KMT_Z_ZLIB, "zlib" }, { KMT_Z_NONE, "none" },
	};
	struct kmt_finalize_opts o = { .level = 1, .full_kallsyms = true };
	struct kmt_finalize_result res;
	struct tb *tb = tb_new(1, 0);
	struct kmt_diag d = { 0 };
	struct kmt_spool *s;
	struct kmt_file *f;
	struct readback rb;
	size_t k, len;
	int i;

	tb_formats_6_18(tb);
	for (i = 0; i < 100; i++)
		tb_kmalloc(tb, 0, 100 + (uint64_t)i, 1, SITE, 0x1000 + (uint64_t)i * 8, 8, 8);
	s = spool_make(tpath("spool"), cpus, 1);
	put_tb_cpu(s, tb, 0, 0);
	for (k = 0; k < ARRAY_SIZE(zs); k++) {
		o.zalg = zs[k].z;
		finalize(s, tpath(zs[k].name), &o, &res);
		assert_int_equal(res.events, 100);
		if (kmt_file_open(&f, tpath(zs[k].name), &d))
			fail_msg("%s", d.msg);
		assert_string_equal(kmt_file_info(f)->compression, zs[k].name);
		assert_string_equal(kmt_file_kallsyms(f, &len), KALLSYMS);
		assert_string_equal(kmt_file_cmdlines(f, &len), "1 init\n100 worker\n");
		kmt_file_close(f);
		read_back(tpath(zs[k].name), false, &rb);
		assert_int_equal(rb.events[0], 100);
		assert_int_equal(rb.first, 100);
		assert_int_equal(rb.last, 199);
	}
	kmt_spool_close(s);
	tb_free(tb);
}

/*
 * Losses the page headers count (42 and one of unknown size on CPU 0, 7
 * on CPU 1) and those the ring buffer's stats count (50 overrun + 3
 * dropped on CPU 1) give one figure per CPU, the larger, the same in the
 * result as in the file read back (census); the stream marks each gap
 * where it is.
 */
static void test_finalize_losses(void **state)
{
	static const int cpus[] = { 0, 1 };
	static const char stats1[] = "CPU: 1\nentries: 0\noverrun: 50\ncommit overrun: 0\n"
				     "dropped events: 3\nread events: 15\n";
	struct kmt_finalize_opts o = { .zalg = KMT_Z_ZSTD, .level = 1 };
	struct kmt_finalize_result res;
	struct tb *tb = tb_new(2, 0);
	struct kmt_diag d = { 0 };
	struct kmt_census c;
	struct kmt_spool *s;
	struct kmt_file *f;
	struct readback rb;
	uint64_t ts = 1000;
	int i;

	tb_formats_6_18(tb);
	for (i = 0; i < 30; i++) {
		if (i == 10)
			tb_lost(tb, 0, 42);
		if (i == 20)
			tb_lost(tb, 0, -1);
		tb_kmalloc(tb, 0, ts += 10, 1, SITE, 0x1000 + (uint64_t)i * 8, 8, 8);
	}
	for (i = 0; i < 5; i++) {
		if (i == 2)
			tb_lost(tb, 1, 7);
		tb_kmalloc(tb, 1, 5 + (uint64_t)i, 1, SITE, 0x9000 + (uint64_t)i * 8, 8, 8);
	}
	s = spool_make(tpath("spool"), cpus, 2);
	put_tb_cpu(s, tb, 0, 0);
	put_tb_cpu(s, tb, 1, 1);
	assert_int_equal(kmt_spool_put_stats(s, KMT_SPOOL_MAIN, 1, stats1, strlen(stats1), &d), 0);
	finalize(s, tpath("out.dat"), &o, &res);
	kmt_spool_close(s);

	assert_int_equal(res.cpus[0].events, 30);
	assert_int_equal(res.cpus[0].pages, 3);
	assert_int_equal(res.cpus[0].lost, 42);
	assert_int_equal(res.cpus[0].lost_unknown, 1);
	assert_int_equal(res.cpus[0].lost_pages, 2);
	assert_false(res.cpus[0].has_stats);
	assert_int_equal(kmt_finalize_cpu_lost(&res.cpus[0]), 42);
	assert_int_equal(res.cpus[1].events, 5);
	assert_int_equal(res.cpus[1].pages, 2);
	assert_int_equal(res.cpus[1].lost, 7);
	assert_int_equal(res.cpus[1].lost_pages, 1);
	assert_true(res.cpus[1].has_stats);
	assert_int_equal(res.cpus[1].overrun, 50);
	assert_int_equal(res.cpus[1].dropped, 3);
	assert_int_equal(kmt_finalize_cpu_lost(&res.cpus[1]), 53);
	assert_int_equal(res.lost, 95);
	assert_int_equal(res.events, 35);

	if (kmt_file_open(&f, tpath("out.dat"), &d))
		fail_msg("%s", d.msg);
	assert_int_equal(kmt_census_run(&c, f, 0, &d), 0);
	assert_int_equal(c.nr_cpus, 2);
	assert_int_equal(c.cpus[0].events, 30);
	assert_int_equal(c.cpus[0].lost_events, 42);
	assert_int_equal(c.cpus[0].lost_unknown, 1);
	assert_int_equal(c.cpus[0].lost_pages, 2);
	assert_int_equal(c.cpus[0].lost, kmt_finalize_cpu_lost(&res.cpus[0]));
	assert_int_equal(c.cpus[1].lost_events, 7);
	assert_int_equal(c.cpus[1].lost, kmt_finalize_cpu_lost(&res.cpus[1]));
	assert_int_equal(c.lost, res.lost);
	kmt_census_release(&c);
	kmt_file_close(f);

	read_back(tpath("out.dat"), false, &rb);
	assert_int_equal(rb.markers[0], 2);
	assert_int_equal(rb.lost[0][0], 42);
	assert_int_equal(rb.lost[0][1], -1);
	assert_int_equal(rb.markers[1], 1);
	assert_int_equal(rb.lost[1][0], 7);
	assert_int_equal(rb.events[0] + rb.events[1], 35);
	tb_free(tb);
}

/*
 * A recording stopped early says why: the reason in the result and in
 * every CPU's stats in the file, and a marker of unknown loss ending each
 * CPU's data. A recovered spool whose instance was not drained is
 * truncated for that reason; once drained (its data ends where tracing
 * stopped) it is not.
 */
static void test_finalize_truncated(void **state)
{
	static const int cpus[] = { 0, 1 };
	struct kmt_finalize_opts o = { .zalg = KMT_Z_ZSTD, .level = 1 };
	struct kmt_finalize_result res;
	struct kmt_spool_meta m;
	struct tb *tb = tb_new(2, 0);
	struct kmt_diag d = { 0 };
	struct kmt_spool *s, *r;
	struct kmt_file *f;
	struct readback rb;
	int i;

	tb_formats_6_18(tb);
	for (i = 0; i < 10; i++)
		tb_kmalloc(tb, i % 2, 100 + (uint64_t)i, 1, SITE, 0x1000 + (uint64_t)i * 8, 8, 8);
	s = spool_make(tpath("spool"), cpus, 2);
	put_tb_cpu(s, tb, 0, 0);
	put_tb_cpu(s, tb, 1, 1);
	r = spool_make(tpath("spool2"), cpus, 2);
	put_tb_cpu(r, tb, 0, 0);
	put_tb_cpu(r, tb, 1, 1);

	assert_int_equal(kmt_spool_set_truncated(s, "no space left on /var/tmp", &d), 0);
	finalize(s, tpath("out.dat"), &o, &res);
	assert_true(res.truncated);
	assert_string_equal(res.truncated_why, "no space left on /var/tmp");
	assert_int_equal(res.events, 10);
	if (kmt_file_open(&f, tpath("out.dat"), &d))
		fail_msg("%s", d.msg);
	for (i = 0; i < 2; i++) {
		const struct kmt_cpustat *cs = kmt_buffer_cpustat(kmt_file_buffer(f, 0), i);

		assert_non_null(cs);
		assert_true(cs->truncated);
		assert_string_equal(cs->note, "no space left on /var/tmp");
	}
	kmt_file_close(f);
	read_back(tpath("out.dat"), false, &rb);
	for (i = 0; i < 2; i++) {
		assert_int_equal(rb.events[i], 5);
		assert_int_equal(rb.markers[i], 1);
		assert_int_equal(rb.lost[i][0], -1);
		assert_true(rb.truncated[i]);
	}

	o.recovered = true;
	finalize(r, tpath("recovered.dat"), &o, &res);
	assert_true(res.truncated);
	assert_string_equal(res.truncated_why, "recovered from a recording whose recorder died");
	fill_meta(&m, cpus, 2);
	m.drained = 1700000100;
	assert_int_equal(kmt_spool_set_meta(r, &m, &d), 0);
	finalize(r, tpath("drained.dat"), &o, &res);
	assert_false(res.truncated);
	assert_string_equal(res.truncated_why, "");
	read_back(tpath("drained.dat"), false, &rb);
	assert_int_equal(rb.markers[0] + rb.markers[1], 0);
	assert_int_equal(rb.total, 10);
	kmt_spool_close(s);
	kmt_spool_close(r);
	tb_free(tb);
}

/*
 * kmemtrace watch's samples go to the spool's second buffer and become
 * the file's KMT_ACCESS_BUFFER: counted apart from the events, with their
 * losses, and streamed back in order.
 */
static void test_finalize_access(void **state)
{
	static const int cpus[] = { 0, 1 };
	struct kmt_finalize_opts o = { .zalg = KMT_Z_ZSTD, .level = 1 };
	struct kmt_finalize_result res;
	struct tb *tb = tb_new(2, 0);
	struct kmt_diag d = { 0 };
	struct kmt_spool *s;
	struct kmt_file *f;
	struct readback rb;
	const uint8_t *data;
	uint64_t size;
	int i;

	tb_formats_6_18(tb);
	for (i = 0; i < 20; i++)
		tb_kmalloc(tb, 0, 100 + (uint64_t)i, 1, SITE, 0x1000 + (uint64_t)i * 8, 8, 8);
	for (i = 0; i < 12; i++) {
		if (i == 6)
			tb_access_lost(tb, 1, 5);
		tb_access(tb, i < 4 ? 0 : 1, 200 + (uint64_t)i, 7, SITE, 0x1000, 8, true, "next");
	}
	s = spool_make(tpath("spool"), cpus, 2);
	assert_false(kmt_spool_has_buffer(s, KMT_SPOOL_ACCESS));
	assert_int_equal(kmt_spool_cpu_create(s, KMT_SPOOL_ACCESS, 0, &d), -EINVAL);
	assert_int_equal(kmt_spool_add_buffer(s, KMT_SPOOL_ACCESS, &d), 0);
	assert_true(kmt_spool_has_buffer(s, KMT_SPOOL_ACCESS));
	assert_int_equal(kmt_spool_add_format(s, KMT_ACCESS_SYSTEM, "access", kmt_access_format(),
					      strlen(kmt_access_format()), &d), 0);
	put_tb_cpu(s, tb, 0, 0);
	for (i = 0; i < 2; i++) {
		data = tb_access_data(tb, i, &size);
		assert_non_null(data);
		put_cpu(s, KMT_SPOOL_ACCESS, i, data, size);
	}
	/* Reopened, the spool still has the buffer. */
	kmt_spool_close(s);
	s = kmt_spool_open(tpath("spool"), &d);
	if (!s)
		fail_msg("%s", d.msg);
	assert_true(kmt_spool_has_buffer(s, KMT_SPOOL_ACCESS));
	finalize(s, tpath("out.dat"), &o, &res);
	kmt_spool_close(s);
	assert_int_equal(res.events, 20);
	assert_int_equal(res.access_events, 12);
	assert_int_equal(res.access_lost, 5);
	if (kmt_file_open(&f, tpath("out.dat"), &d))
		fail_msg("%s", d.msg);
	assert_int_equal(kmt_file_nr_buffers(f), 2);
	assert_int_equal(kmt_file_access_buffer(f), 1);
	assert_string_equal(kmt_file_buffer(f, 1)->name, KMT_ACCESS_BUFFER);
	assert_int_equal(kmt_file_buffer(f, 1)->nr_cpus, 2);
	assert_int_equal(kmt_file_formats(f)->nr, 18);
	kmt_file_close(f);
	read_back(tpath("out.dat"), true, &rb);
	assert_int_equal(rb.events[0], 4);
	assert_int_equal(rb.events[1], 8);
	assert_int_equal(rb.first, 200);
	assert_int_equal(rb.last, 211);
	assert_int_equal(rb.markers[1], 1);
	assert_int_equal(rb.lost[1][0], 5);
	tb_free(tb);
}

/* Ten pages of kmallocs (PER_PAGE each) for builder CPU @idx. */
static void ten_pages(struct tb *tb, int idx)
{
	int i;

	for (i = 0; i < 10 * PER_PAGE; i++)
		tb_kmalloc(tb, idx, 1000 + (uint64_t)i, 1, SITE, 0x1000 + (uint64_t)i * 8, 8, 8);
	tb_flush_page(tb, idx);
}

static void set_commit(uint8_t *page, uint64_t commit)
{
	memcpy(page + 8, &commit, 8);
}

/*
 * A recorder killed mid-write leaves a torn last page: it is cut off, at
 * finalising and when a recovery appends to the file. A page whose header
 * cannot be right (commit beyond the page) is a gap of unknown size where
 * it is, and only that: the pages after it are kept (the readers pass over
 * a bad page and go on), the file has it as an empty page flagged with
 * events lost and no count, timed at the CPU's last event before it (not
 * at its header's nonsense: the stream stays in order), and the result
 * counts what the file holds, the census and the stream alike.
 */
static void test_finalize_torn_and_damaged(void **state)
{
	static const int cpus[] = { 0, 1 };
	struct kmt_finalize_opts o = { .zalg = KMT_Z_ZSTD, .level = 1, .chunk_pages = 2 };
	struct kmt_finalize_result res;
	struct tb *tb = tb_new(2, 0);
	struct kmt_diag d = { 0 };
	struct kmt_census c;
	struct kmt_spool *s;
	struct kmt_file *f;
	struct readback rb;
	uint8_t *copy, junk[100];
	const uint8_t *data;
	struct stat st;
	uint64_t size;
	int fd;

	tb_formats_6_18(tb);
	ten_pages(tb, 0);
	ten_pages(tb, 1);
	s = spool_make(tpath("spool"), cpus, 2);
	copy = malloc(10 * 4096 + sizeof(junk));
	data = tb_cpu_data(tb, 0, &size);
	assert_int_equal(size, 10 * 4096);
	memcpy(copy, data, size);
	memset(junk, 0x5a, sizeof(junk));
	memcpy(copy + size, junk, sizeof(junk));
	put_cpu(s, KMT_SPOOL_MAIN, 0, copy, size + sizeof(junk));
	data = tb_cpu_data(tb, 1, &size);
	assert_int_equal(size, 10 * 4096);
	memcpy(copy, data, size);
	set_commit(copy + 3 * 4096, 5000);	/* page 4: commit past its 4080 data bytes, */
	memcpy(copy + 3 * 4096, &(uint64_t){ 1ULL << 50 }, 8);	/* its time nonsense */
	put_cpu(s, KMT_SPOOL_MAIN, 1, copy, size);
	free(copy);

	finalize(s, tpath("out.dat"), &o, &res);
	assert_int_equal(res.cpus[0].events, 10 * PER_PAGE);
	assert_int_equal(res.cpus[0].pages, 10);
	assert_int_equal(res.cpus[0].bytes, 10 * 4096);
	assert_int_equal(res.cpus[0].lost_pages, 0);
	assert_int_equal(res.cpus[1].events, 9 * PER_PAGE);	/* 648: all but page 4's */
	assert_int_equal(res.cpus[1].pages, 10);
	assert_int_equal(res.cpus[1].bytes, 10 * 4096);
	assert_int_equal(res.cpus[1].first_ts, 1000);
	assert_int_equal(res.cpus[1].last_ts, 1000 + 10 * PER_PAGE - 1);	/* 1719 */
	assert_int_equal(res.cpus[1].lost_pages, 1);
	assert_int_equal(res.cpus[1].lost_unknown, 1);
	assert_int_equal(res.cpus[1].lost, 0);
	assert_int_equal(res.events, 19 * PER_PAGE);
	assert_int_equal(res.raw_bytes, 20 * 4096);
	read_back(tpath("out.dat"), false, &rb);
	assert_int_equal(rb.events[0], 10 * PER_PAGE);
	assert_int_equal(rb.events[1], 9 * PER_PAGE);
	assert_int_equal(rb.last_ts[1], 1000 + 10 * PER_PAGE - 1);
	assert_int_equal(rb.markers[0], 0);
	assert_int_equal(rb.markers[1], 1);
	assert_int_equal(rb.lost[1][0], -1);
	assert_int_equal(rb.marked_at[1], 3 * PER_PAGE);	/* after page 3, where page 4 was */
	if (kmt_file_open(&f, tpath("out.dat"), &d))
		fail_msg("%s", d.msg);
	assert_int_equal(kmt_census_run(&c, f, 0, &d), 0);
	assert_int_equal(c.nr_skipped, 0);	/* nothing a reader must pass over */
	assert_int_equal(c.cpus[1].events, res.cpus[1].events);
	assert_int_equal(c.cpus[1].pages, res.cpus[1].pages);
	assert_int_equal(c.cpus[1].lost_pages, res.cpus[1].lost_pages);
	assert_int_equal(c.cpus[1].lost_unknown, res.cpus[1].lost_unknown);
	assert_int_equal(c.cpus[1].last_ts, res.cpus[1].last_ts);
	assert_int_equal(c.events, res.events);
	assert_int_equal(c.lost, res.lost);
	kmt_census_release(&c);
	kmt_file_close(f);

	/* Appending (a recovery) cuts the torn page off and goes on at the last whole one. */
	fd = kmt_spool_cpu_append(s, KMT_SPOOL_MAIN, 0, 4096, &d);
	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 10 * 4096);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 10 * 4096);
	close(fd);
	/* A file not there yet is made, empty. */
	fd = kmt_spool_cpu_append(s, KMT_SPOOL_MAIN, 3, 4096, &d);
	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 0);
	close(fd);
	assert_int_equal(kmt_spool_cpu_append(s, KMT_SPOOL_MAIN, 0, 0, &d), -EINVAL);
	assert_int_equal(kmt_spool_cpu_append(s, KMT_SPOOL_ACCESS, 0, 4096, &d), -EINVAL);
	/* A data file is created once. */
	assert_int_equal(kmt_spool_cpu_create(s, KMT_SPOOL_MAIN, 0, &d), -EEXIST);
	assert_non_null(strstr(d.msg, "cannot create"));
	kmt_spool_close(s);
	tb_free(tb);
}

/*
 * A page whose events go wrong part way (page 4 of 10: nine kmallocs, then
 * half an event header) keeps the events before the bad one, as the
 * readers do, and is a gap of unknown size: 3 x 72 + 9 + 6 x 72 = 657
 * events up to 1719, in the result as in the file (the stream, the
 * census), the gap marked where page 4 starts (after the 216th: a page's
 * flag says events were lost before it). The page is mended on its way
 * into the file: the spool stays as it was, and finalising it again
 * (uncompressed, freeing the spool as it goes) gives the same.
 */
static void test_finalize_bad_event(void **state)
{
	static const int cpus[] = { 0 };
	struct kmt_finalize_opts o = { .zalg = KMT_Z_ZSTD, .level = 1 };
	struct kmt_finalize_result res;
	struct tb *tb = tb_new(1, 0);
	struct kmt_diag d = { 0 };
	struct kmt_census c;
	struct kmt_spool *s;
	struct kmt_file *f;
	struct readback rb;
	const uint8_t *data;
	uint8_t *copy, *now;
	uint64_t size;
	char path[64];
	int k, fd, rfd;

	tb_formats_6_18(tb);
	ten_pages(tb, 0);
	s = spool_make(tpath("spool"), cpus, 1);
	data = tb_cpu_data(tb, 0, &size);
	copy = malloc(size);
	now = malloc(size);
	memcpy(copy, data, size);
	set_commit(copy + 3 * 4096, 9 * 56 + 2);	/* page 4: 9 events, then half a header */
	put_cpu(s, KMT_SPOOL_MAIN, 0, copy, size);
	for (k = 0; k < 2; k++) {
		const char *out = tpath(k ? "again.dat" : "out.dat");

		if (k) {
			o.zalg = KMT_Z_NONE;
			o.punch = true;
		}
		finalize(s, out, &o, &res);
		/* The spool's file as it was; or, freed, all hole. */
		fd = kmt_spool_cpu_append(s, KMT_SPOOL_MAIN, 0, 4096, &d);
		assert_true(fd >= 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);	/* @fd: write-only */
		rfd = open(path, O_RDONLY | O_CLOEXEC);
		assert_true(rfd >= 0);
		assert_int_equal(pread(rfd, now, size, 0), size);
		if (!k)
			assert_memory_equal(now, copy, size);
		else
			assert_int_equal(lseek(rfd, 0, SEEK_DATA), -1);
		close(rfd);
		close(fd);
		assert_int_equal(res.cpus[0].events, 3 * PER_PAGE + 9 + 6 * PER_PAGE);
		assert_int_equal(res.cpus[0].pages, 10);
		assert_int_equal(res.cpus[0].bytes, 10 * 4096);
		assert_int_equal(res.cpus[0].first_ts, 1000);
		assert_int_equal(res.cpus[0].last_ts, 1000 + 10 * PER_PAGE - 1);
		assert_int_equal(res.cpus[0].lost_pages, 1);
		assert_int_equal(res.cpus[0].lost_unknown, 1);
		assert_int_equal(res.events, 657);
		assert_int_equal(res.last_ts, 1719);
		assert_int_equal(res.lost, 0);

		read_back(out, false, &rb);
		assert_int_equal(rb.events[0], res.cpus[0].events);
		assert_int_equal(rb.last_ts[0], res.cpus[0].last_ts);
		assert_int_equal(rb.markers[0], 1);
		assert_int_equal(rb.lost[0][0], -1);
		assert_int_equal(rb.marked_at[0], 3 * PER_PAGE);
		if (kmt_file_open(&f, out, &d))
			fail_msg("%s", d.msg);
		assert_int_equal(kmt_census_run(&c, f, 0, &d), 0);
		assert_int_equal(c.nr_skipped, 0);
		assert_int_equal(c.events, res.events);
		assert_int_equal(c.cpus[0].pages, res.cpus[0].pages);
		assert_int_equal(c.cpus[0].last_ts, res.cpus[0].last_ts);
		assert_int_equal(c.cpus[0].lost_pages, res.cpus[0].lost_pages);
		assert_int_equal(c.cpus[0].lost_unknown, res.cpus[0].lost_unknown);
		assert_int_equal(c.lost, res.lost);
		kmt_census_release(&c);
		kmt_file_close(f);
	}
	kmt_spool_close(s);
	free(copy);
	free(now);
	tb_free(tb);
}

/*
 * Events that died with a recorder (a recovery's line in the stats) are
 * lost like those the ring buffer counted: 3 overrun + 7 died = 10 for
 * CPU 0, in the result as in the file's census (kmemtrace record --recover
 * and kmemtrace info say the same).
 */
static void test_finalize_died(void **state)
{
	static const int cpus[] = { 0 };
	static const char stats[] = "CPU: 0\nentries: 0\noverrun: 3\ncommit overrun: 0\nbytes: 0\n"
				    "dropped events: 0\nread events: 17\n"
				    "kmemtrace lost when the recorder died: 7\n";
	struct kmt_finalize_opts o = { .zalg = KMT_Z_ZSTD, .level = 1, .recovered = true };
	struct kmt_finalize_result res;
	struct tb *tb = tb_new(1, 0);
	struct kmt_diag d = { 0 };
	struct kmt_census c;
	struct kmt_spool *s;
	struct kmt_file *f;
	int i;

	tb_formats_6_18(tb);
	for (i = 0; i < 10; i++)
		tb_kmalloc(tb, 0, 100 + (uint64_t)i, 1, SITE, 0x1000 + (uint64_t)i * 8, 8, 8);
	s = spool_make(tpath("spool"), cpus, 1);
	put_tb_cpu(s, tb, 0, 0);
	assert_int_equal(kmt_spool_put_stats(s, KMT_SPOOL_MAIN, 0, stats, strlen(stats), &d), 0);
	finalize(s, tpath("out.dat"), &o, &res);
	kmt_spool_close(s);
	assert_int_equal(res.events, 10);
	assert_true(res.cpus[0].has_stats);
	assert_int_equal(kmt_finalize_cpu_lost(&res.cpus[0]), 10);
	assert_int_equal(res.lost, 10);

	if (kmt_file_open(&f, tpath("out.dat"), &d))
		fail_msg("%s", d.msg);
	assert_int_equal(kmt_buffer_cpustat(kmt_file_buffer(f, 0), 0)->died, 7);
	assert_int_equal(kmt_census_run(&c, f, 0, &d), 0);
	assert_int_equal(c.events, 10);
	assert_int_equal(c.cpus[0].lost, kmt_finalize_cpu_lost(&res.cpus[0]));
	assert_int_equal(c.lost, res.lost);
	kmt_census_release(&c);
	kmt_file_close(f);
	tb_free(tb);
}

/*
 * The spool is one process's at a time: a second create is refused while
 * its recorder lives ("in use", with its pid) and after it died (with the
 * way to recover it); an open is refused while another handle has it
 * (-EBUSY) and allowed once it is closed; what is not a spool is refused
 * with -ENOENT, -ENOTDIR or KMT_EFORMAT. The metadata is read back as
 * written (the command cut at its first line), and removing the spool
 * removes the directory, the watch buffer's too.
 */
static void test_spool_lifecycle(void **state)
{
	static const int cpus[] = { 0, 3 };
	const char *dir = tpath("spool");
	struct kmt_diag d = { 0 };
	struct kmt_spool_meta m;
	const struct kmt_spool_meta *got;
	struct kmt_spool *s, *t;
	char want[512];
	pid_t dead;
	int fd;

	s = spool_make(dir, cpus, 2);
	assert_string_equal(kmt_spool_dir(s), dir);
	assert_null(kmt_spool_create(dir, &d));
	assert_int_equal(d.err, -EEXIST);
	snprintf(want, sizeof(want), "'%s' is in use by kmemtrace (pid %d)", dir, (int)getpid());
	assert_string_equal(d.msg, want);
	assert_null(kmt_spool_open(dir, &d));
	assert_int_equal(d.err, -EBUSY);
	assert_non_null(strstr(d.msg, "is in use by another kmemtrace"));
	assert_int_equal(kmt_spool_put(s, KMT_SPOOL_NR_BLOBS, "x", 1, &d), -EINVAL);
	assert_int_equal(kmt_spool_add_buffer(s, KMT_SPOOL_ACCESS, &d), 0);
	fd = kmt_spool_cpu_create(s, KMT_SPOOL_ACCESS, 3, &d);
	assert_true(fd >= 0);
	close(fd);
	kmt_spool_close(s);

	s = kmt_spool_open(dir, &d);
	if (!s)
		fail_msg("%s", d.msg);
	got = kmt_spool_meta(s);
	fill_meta(&m, cpus, 2);
	assert_string_equal(got->version, "9.9.9-unit");
	assert_int_equal(got->pid, getpid());
	assert_string_equal(got->instance, "kmemtrace-4242");
	assert_int_equal(got->created, 1700000000);
	assert_int_equal(got->drained, 0);
	assert_string_equal(got->uname, m.uname);
	assert_int_equal(got->page_size, 4096);
	assert_int_equal(got->subbuf_size, 4096);
	assert_int_equal(got->long_size, 8);
	assert_string_equal(got->clock, "local");
	assert_int_equal(got->partial, KMT_PARTIAL_FREES);
	assert_string_equal(got->command, "kmemtrace record -e kmem:kmalloc");
	assert_string_equal(got->settings, "events kmem:kmalloc");
	assert_int_equal(got->nr_cpus, 2);
	assert_int_equal(got->cpus[0], 0);
	assert_int_equal(got->cpus[1], 3);
	assert_true(kmt_spool_has_buffer(s, KMT_SPOOL_ACCESS));
	/* Its recorder died. */
	dead = dead_pid();
	m.pid = dead;
	assert_int_equal(kmt_spool_set_meta(s, &m, &d), 0);
	kmt_spool_close(s);
	assert_null(kmt_spool_create(dir, &d));
	assert_int_equal(d.err, -EEXIST);
	snprintf(want, sizeof(want), "'%s' was left by a recording that did not finish (its recorder "
		 "died); turn it into a trace with 'kmemtrace record --recover %s', or remove it", dir, dir);
	assert_string_equal(d.msg, want);

	/* One handle at a time, closing gives it back. */
	s = kmt_spool_open(dir, &d);
	assert_non_null(s);
	assert_null(kmt_spool_open(dir, &d));
	assert_int_equal(d.err, -EBUSY);
	kmt_spool_close(s);
	t = kmt_spool_open(dir, &d);
	assert_non_null(t);
	assert_int_equal(kmt_spool_meta(t)->pid, dead);
	assert_int_equal(kmt_spool_remove(t), 0);
	assert_int_equal(access(dir, F_OK), -1);
	assert_int_equal(errno, ENOENT);

	assert_null(kmt_spool_open(dir, &d));
	assert_int_equal(d.err, -ENOENT);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_null(kmt_spool_open(dir, &d));
	assert_int_equal(d.err, KMT_EFORMAT);
	snprintf(want, sizeof(want), "'%s' is not a kmemtrace spool (it has no meta file)", dir);
	assert_string_equal(d.msg, want);
	fd = open(tpath("file"), O_WRONLY | O_CREAT, 0600);
	close(fd);
	assert_null(kmt_spool_open(tpath("file"), &d));
	assert_int_equal(d.err, -ENOTDIR);
	assert_null(kmt_spool_create(tpath("no/such/dir"), &d));
	assert_int_equal(d.err, -ENOENT);
	kmt_spool_close(NULL);
	assert_int_equal(kmt_spool_remove(NULL), 0);
}

/*
 * Finalising fails cleanly, naming the cause, on a spool it cannot build
 * a trace from: no header page, metadata without the page sizes, a format
 * that does not parse. The output is then absent, with no temporary file
 * left beside it.
 */
static void test_finalize_errors(void **state)
{
	static const int cpus[] = { 0 };
	static const char bad[] = "name: bogus\nID: 9\nformat:\n\tfield:nonsense\n";
	struct kmt_finalize_opts o = { .zalg = KMT_Z_ZSTD, .level = 1 };
	struct kmt_finalize_result res;
	struct kmt_spool_meta m;
	struct kmt_diag d = { 0 };
	struct kmt_spool *s;
	const char *out = tpath("out.dat");

	s = kmt_spool_create(tpath("bare"), &d);
	assert_non_null(s);
	fill_meta(&m, cpus, 1);
	assert_int_equal(kmt_spool_set_meta(s, &m, &d), 0);
	assert_int_equal(kmt_spool_finalize(s, out, &o, &res, &d), -ENOENT);
	assert_non_null(strstr(d.msg, "cannot read '"));
	assert_non_null(strstr(d.msg, "header_page"));
	kmt_spool_close(s);

	s = spool_make(tpath("nosizes"), cpus, 1);
	m.page_size = 0;
	assert_int_equal(kmt_spool_set_meta(s, &m, &d), 0);
	assert_int_equal(kmt_spool_finalize(s, out, &o, &res, &d), KMT_EFORMAT);
	assert_non_null(strstr(d.msg, "its metadata lacks the page size"));
	kmt_spool_close(s);

	s = spool_make(tpath("badformat"), cpus, 1);
	assert_int_equal(kmt_spool_add_format(s, "kmem", "bogus", bad, strlen(bad), &d), 0);
	assert_int_equal(kmt_spool_finalize(s, out, &o, &res, &d), KMT_EFORMAT);
	assert_non_null(strstr(d.msg, "format of kmem:bogus"));
	kmt_spool_close(s);

	assert_int_equal(access(out, F_OK), -1);
	assert_int_equal(dir_entries(tmpdir), 3);	/* the three spools, nothing else */
}

/* ---- a dead recorder's instance (root and tracefs) ---- */

static char troot[256];
/* What a test holds of tracefs, let go of by teardown whatever happened. */
static struct kmt_instance tin;		/* the test's instance, removed */
static pid_t tchild;			/* a child, killed */
static int tfd = -1;			/* a file of the instance, closed */
static struct kmt_recorder *trec;	/* capture threads, stopped */

/* tracefs if this process may write it; the test skips otherwise, saying why. */
static bool have_tracefs(void)
{
	struct kmt_diag d = { 0 };

	if (geteuid() != 0) {
		print_message("# skip: not root (tracefs instances need root)\n");
		return false;
	}
	if (kmt_tracefs_find(troot, sizeof(troot), NULL, false, &d)) {
		print_message("# skip: %s\n", d.msg);
		return false;
	}
	return true;
}

/* This kernel's ring-buffer page layout, from tracefs. */
static void this_layout(struct kmt_page_layout *pl)
{
	struct kmt_diag d = { 0 };
	struct sbuf hp = { 0 };
	char path[600];

	snprintf(path, sizeof(path), "%s/events/header_page", troot);
	assert_int_equal(read_file(path, &hp), 0);
	assert_int_equal(kmt_page_layout_parse(pl, hp.buf, hp.len, &d), 0);
	sbuf_release(&hp);
}

static int setup_instance(void **state)
{
	memset(&tin, 0, sizeof(tin));
	tchild = 0;
	tfd = -1;
	trec = NULL;
	return setup(state);
}

static int teardown_instance(void **state)
{
	cpu_set_t all;
	int i;

	/* An instance with a file open cannot be removed. */
	if (tfd >= 0)
		close(tfd);
	if (trec) {
		kmt_recorder_stop(trec, NULL);
		kmt_recorder_free(trec);
	}
	if (tin.created && kmt_instance_remove(&tin))
		print_message("# cannot remove tracefs instance %s\n", tin.path);
	if (tchild > 0) {
		kill(tchild, SIGKILL);
		waitpid(tchild, NULL, 0);
	}
	CPU_ZERO(&all);
	for (i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	sched_setaffinity(0, sizeof(all), &all);
	return teardown(state);
}

/* "kmemtrace-PID-unit": the name a recorder of pid @pid gives its instance, tagged. */
static void instance_name(char *buf, size_t len, pid_t pid)
{
	snprintf(buf, len, "%s%d-unit", KMT_INSTANCE_PREFIX, (int)pid);
}

/* Write @n lines "m%05d" from @first on to the instance's trace_marker. */
static void markers(const struct kmt_instance *in, int first, int n)
{
	char path[512], line[16];
	int i;

	snprintf(path, sizeof(path), "%s/trace_marker", in->path);
	tfd = open(path, O_WRONLY | O_CLOEXEC);
	assert_true(tfd >= 0);
	for (i = first; i < first + n; i++) {
		int len = snprintf(line, sizeof(line), "m%05d", i);

		assert_int_equal(write(tfd, line, (size_t)len), len);
	}
	close(tfd);
	tfd = -1;
}

/* Events in the @n bytes of pages at @buf. */
static uint64_t page_events(const uint8_t *buf, size_t n, const struct kmt_page_layout *pl)
{
	uint64_t events = 0;
	size_t off;

	for (off = 0; off + 4096 <= n; off += 4096) {
		struct kmt_page pg;
		struct kmt_page_iter it;
		struct kmt_rec rec;

		assert_int_equal(kmt_page_load(&pg, buf + off, 4096, pl, false, NULL), 0);
		kmt_page_iter_init(&it, &pg);
		while (kmt_page_next(&it, &rec, NULL) > 0)
			events++;
	}
	return events;
}

/* A spool for instance @name on this machine's CPUs, with its header pages and ftrace:print. */
static struct kmt_spool *recover_spool(const char *dir, const char *name, pid_t pid, const int *cpus,
				       int nr_cpus)
{
	struct kmt_spool_meta m;
	struct kmt_diag d = { 0 };
	struct sbuf sb = { 0 };
	struct kmt_spool *s = kmt_spool_create(dir, &d);
	char path[512];

	if (!s)
		fail_msg("%s", d.msg);
	fill_meta(&m, cpus, nr_cpus);
	m.pid = pid;
	snprintf(m.instance, sizeof(m.instance), "%s", name);
	m.page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	m.subbuf_size = 4096;
	m.long_size = (int)sizeof(long);
	assert_int_equal(kmt_spool_set_meta(s, &m, &d), 0);
	snprintf(path, sizeof(path), "%s/events/header_page", troot);
	assert_int_equal(read_file(path, &sb), 0);
	assert_int_equal(kmt_spool_put(s, KMT_SPOOL_HEADER_PAGE, sb.buf, sb.len, &d), 0);
	sbuf_release(&sb);
	snprintf(path, sizeof(path), "%s/events/header_event", troot);
	assert_int_equal(read_file(path, &sb), 0);
	assert_int_equal(kmt_spool_put(s, KMT_SPOOL_HEADER_EVENT, sb.buf, sb.len, &d), 0);
	sbuf_release(&sb);
	snprintf(path, sizeof(path), "%s/events/ftrace/print/format", troot);
	assert_int_equal(read_file(path, &sb), 0);
	assert_int_equal(kmt_spool_add_format(s, "ftrace", "print", sb.buf, sb.len, &d), 0);
	sbuf_release(&sb);
	return s;
}

/*
 * A recorder died: its spool holds the first page it read from CPU 0's
 * ring buffer; the second page it had read died with it; the rest is
 * still in its instance. kmt_recover_take() moves the rest into the spool
 * after the first page, marks the second page's events lost on the first
 * page moved, notes them in the stats, marks the spool drained and
 * removes the instance with its note. The file finalised from it has
 * every marker in order but the lost ones, the gap marked where it is,
 * and is not truncated.
 */
static void test_recover_take(void **state)
{
	struct kmt_finalize_opts o = { .zalg = KMT_Z_ZSTD, .level = 1, .recovered = true };
	struct kmt_finalize_result fres;
	struct kmt_recover_result res;
	struct kmt_page_layout pl;
	struct kmt_diag d = { 0 };
	struct kmt_spool *s;
	struct kmt_file *f;
	struct kmt_stream *st;
	struct kmt_srec sr;
	char name[64], path[512], note[4096];
	uint8_t page[4096];
	uint64_t kept, lost;
	int cpus[KMT_MAX_CPUS], nr_cpus, next = 0, ret, i;
	const struct kmt_format *print;
	const struct kmt_field *bf;
	cpu_set_t one;
	pid_t dead;
	bool gap = false;

	if (!have_tracefs())
		skip();
	nr_cpus = kmt_tracefs_cpus(cpus, KMT_MAX_CPUS);
	assert_true(nr_cpus > 0);
	this_layout(&pl);
	dead = dead_pid();
	instance_name(name, sizeof(name), dead);
	assert_true(kmt_instance_stale(name));

	s = recover_spool(tpath("spool"), name, dead, cpus, nr_cpus);
	/* No instance yet: nothing found, nothing done. */
	assert_int_equal(kmt_recover_take(s, troot, &res, &d), 0);
	assert_false(res.found);
	assert_false(res.other);
	assert_string_equal(res.instance, name);

	if (kmt_instance_create(&tin, troot, name, &d))
		fail_msg("%s", d.msg);
	/* An instance nothing says is this spool's is left alone. */
	assert_int_equal(kmt_recover_take(s, troot, &res, &d), 0);
	assert_false(res.found);
	assert_true(res.other);
	assert_true(kmt_instance_has(&tin, "trace_marker"));
	assert_int_equal(kmt_instance_note_spool(&tin, tpath("spool")), 0);
	if (kmt_instance_has(&tin, "buffer_subbuf_size_kb")) {
		char kb[16];

		assert_true(kmt_instance_read(&tin, "buffer_subbuf_size_kb", kb, sizeof(kb)) > 0);
		if (atoi(kb) != 4)
			skip();	/* the spool says 4096-byte sub-buffers */
	}

	/* The recording: 600 markers on the first CPU; the recorder reads two pages and dies. */
	CPU_ZERO(&one);
	CPU_SET(cpus[0], &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	markers(&tin, 0, 600);
	tfd = kmt_instance_open_cpu(tin.path, cpus[0], "trace_pipe_raw", O_RDONLY | O_NONBLOCK, &d);
	assert_true(tfd >= 0);
	assert_int_equal(read(tfd, page, sizeof(page)), sizeof(page));
	kept = page_events(page, sizeof(page), &pl);
	put_cpu(s, KMT_SPOOL_MAIN, cpus[0], page, sizeof(page));
	assert_int_equal(read(tfd, page, sizeof(page)), sizeof(page));
	lost = page_events(page, sizeof(page), &pl);
	close(tfd);
	tfd = -1;
	assert_true(kept > 50 && lost > 50);
	markers(&tin, 600, 100);
	assert_int_equal(kmt_instance_unread(&tin), 700 - kept - lost);

	assert_int_equal(kmt_recover_take(s, troot, &res, &d), 0);
	assert_true(res.found);
	assert_false(res.other);
	assert_string_equal(res.instance, name);
	assert_int_equal(res.unread, 700 - kept - lost);
	assert_int_equal(res.taken, 700 - kept - lost);
	assert_int_equal(res.lost, lost);
	assert_int_equal(res.lost_at_end, 0);
	assert_int_equal(res.dropped_after, 0);
	assert_true(res.removed);
	tin.created = false;
	snprintf(path, sizeof(path), "%s/instances/%s", troot, name);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(kmt_instance_noted_spool(name, note, sizeof(note)), -ENOENT);
	assert_true(kmt_spool_meta(s)->drained > 0);
	/* Taken once: the instance is gone now. */
	assert_int_equal(kmt_recover_take(s, troot, &res, &d), 0);
	assert_false(res.found);

	finalize(s, tpath("out.dat"), &o, &fres);
	kmt_spool_close(s);
	assert_false(fres.truncated);
	assert_int_equal(fres.events, 700 - lost);
	assert_int_equal(fres.cpus[0].events, 700 - lost);
	assert_int_equal(fres.cpus[0].lost, lost);
	assert_int_equal(fres.cpus[0].lost_pages, 1);
	for (i = 1; i < nr_cpus; i++)
		assert_int_equal(fres.cpus[i].events, 0);

	if (kmt_file_open(&f, tpath("out.dat"), &d))
		fail_msg("%s", d.msg);
	assert_int_equal(kmt_buffer_cpustat(kmt_file_buffer(f, 0), cpus[0])->died, lost);
	print = kmt_formats_find(kmt_file_formats(f), "ftrace", "print");
	assert_non_null(print);
	bf = kmt_format_field(print, "buf");
	assert_non_null(bf);
	st = kmt_stream_open(f, 0, &d);
	assert_non_null(st);
	while ((ret = kmt_stream_next(st, &sr, &d)) > 0) {
		assert_int_equal(sr.cpu, cpus[0]);
		if (sr.lost_marker) {
			assert_false(gap);
			assert_int_equal(next, kept);
			assert_int_equal(sr.lost, lost);
			next += (int)lost;
			gap = true;
			continue;
		}
		assert_int_equal(atoi((const char *)sr.rec.data + bf->offset + 1), next);
		next++;
	}
	assert_int_equal(ret, 0);
	assert_true(gap);
	assert_int_equal(next, 700);
	kmt_stream_close(st);
	kmt_file_close(f);
}

/* Cut page @page's data (layout @pl) after its @n-th record and 2 bytes: half a header. */
static void cut_after(uint8_t *page, const struct kmt_page_layout *pl, int n)
{
	struct kmt_page pg;
	struct kmt_page_iter it;
	struct kmt_rec rec;
	uint64_t commit;
	int i;

	assert_int_equal(kmt_page_load(&pg, page, 4096, pl, false, NULL), 0);
	kmt_page_iter_init(&it, &pg);
	for (i = 0; i < n; i++)
		assert_int_equal(kmt_page_next(&it, &rec, NULL), 1);
	commit = it.pos + 2;
	assert_true(pl->commit_size == 8 || pl->commit_size == 4);
	memcpy(page + pl->commit_offset, &commit, pl->commit_size);	/* little-endian */
}

/*
 * A recorder died with a damaged page in its spool: its first page read
 * (k1 markers) goes bad after 9, its second (k2) is whole, its third (l)
 * died with it. The damaged page is a gap of unknown size and the pages
 * after it count: kmt_recover_take() counts 9 + k2 kept, so k1 - 9 + l
 * lost, marked on the first page moved; the file finalised from it holds
 * 9 + k2 and all that was moved, the markers in order, its two gaps where
 * they are (the first before the damaged page's 9), the result, the
 * census and the stream agreeing.
 */
static void test_recover_damaged(void **state)
{
	struct kmt_finalize_opts o = { .zalg = KMT_Z_ZSTD, .level = 1, .recovered = true };
	struct kmt_finalize_result fres;
	struct kmt_recover_result res;
	struct kmt_page_layout pl;
	struct kmt_diag d = { 0 };
	struct kmt_census c;
	struct kmt_spool *s;
	struct kmt_file *f;
	struct kmt_stream *st;
	struct kmt_srec sr;
	char name[64];
	uint8_t page[3][4096];
	uint64_t k1, k2, l, got = 0;
	int cpus[KMT_MAX_CPUS], nr_cpus, fd, next = 0, nmark = 0, ret;
	const struct kmt_field *bf;
	cpu_set_t one;
	pid_t dead;

	if (!have_tracefs())
		skip();
	nr_cpus = kmt_tracefs_cpus(cpus, KMT_MAX_CPUS);
	assert_true(nr_cpus > 0);
	this_layout(&pl);
	dead = dead_pid();
	instance_name(name, sizeof(name), dead);
	s = recover_spool(tpath("spool"), name, dead, cpus, nr_cpus);
	if (kmt_instance_create(&tin, troot, name, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(kmt_instance_note_spool(&tin, tpath("spool")), 0);
	if (kmt_instance_has(&tin, "buffer_subbuf_size_kb")) {
		char kb[16];

		assert_true(kmt_instance_read(&tin, "buffer_subbuf_size_kb", kb, sizeof(kb)) > 0);
		if (atoi(kb) != 4)
			skip();
	}
	CPU_ZERO(&one);
	CPU_SET(cpus[0], &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	markers(&tin, 0, 600);
	fd = kmt_instance_open_cpu(tin.path, cpus[0], "trace_pipe_raw", O_RDONLY | O_NONBLOCK, &d);
	assert_true(fd >= 0);
	for (ret = 0; ret < 3; ret++)
		assert_int_equal(read(fd, page[ret], 4096), 4096);
	close(fd);
	k1 = page_events(page[0], 4096, &pl);
	k2 = page_events(page[1], 4096, &pl);
	l = page_events(page[2], 4096, &pl);
	assert_true(k1 > 9 && k2 > 0 && l > 0 && k1 + k2 + l < 600);
	cut_after(page[0], &pl, 9);
	put_cpu(s, KMT_SPOOL_MAIN, cpus[0], page, 2 * 4096);
	markers(&tin, 600, 100);

	assert_int_equal(kmt_recover_take(s, troot, &res, &d), 0);
	assert_true(res.found);
	assert_int_equal(res.taken, 700 - k1 - k2 - l);
	assert_int_equal(res.lost, k1 - 9 + l);
	assert_int_equal(res.lost_at_end, 0);
	assert_true(res.removed);
	tin.created = false;

	finalize(s, tpath("out.dat"), &o, &fres);
	kmt_spool_close(s);
	assert_false(fres.truncated);
	assert_int_equal(fres.cpus[0].events, 700 - (k1 - 9) - l);
	assert_int_equal(fres.cpus[0].lost, k1 - 9 + l);
	assert_int_equal(fres.cpus[0].lost_pages, 2);
	assert_int_equal(fres.cpus[0].lost_unknown, 1);
	assert_int_equal(kmt_finalize_cpu_lost(&fres.cpus[0]), k1 - 9 + l);
	assert_int_equal(fres.events, 700 - (k1 - 9) - l);

	if (kmt_file_open(&f, tpath("out.dat"), &d))
		fail_msg("%s", d.msg);
	assert_int_equal(kmt_buffer_cpustat(kmt_file_buffer(f, 0), cpus[0])->died, k1 - 9 + l);
	assert_int_equal(kmt_census_run(&c, f, 0, &d), 0);
	assert_int_equal(c.nr_skipped, 0);
	assert_int_equal(c.events, fres.events);
	assert_int_equal(c.cpus[0].lost_pages, 2);
	assert_int_equal(c.cpus[0].lost_unknown, 1);
	assert_int_equal(c.lost, fres.lost);
	kmt_census_release(&c);
	bf = kmt_format_field(kmt_formats_find(kmt_file_formats(f), "ftrace", "print"), "buf");
	assert_non_null(bf);
	st = kmt_stream_open(f, 0, &d);
	assert_non_null(st);
	while ((ret = kmt_stream_next(st, &sr, &d)) > 0) {
		assert_int_equal(sr.cpu, cpus[0]);
		if (sr.lost_marker) {
			/* Before the damaged page's first record; on the first page moved. */
			assert_int_equal(got, nmark ? 9 + k2 : 0);
			assert_int_equal(sr.lost, nmark ? (int64_t)(k1 - 9 + l) : -1);
			nmark++;
			continue;
		}
		if (got == 9)
			next = (int)k1;		/* the rest of the damaged page */
		if (got == 9 + k2)
			next = (int)(k1 + k2 + l);	/* the page that died */
		assert_int_equal(atoi((const char *)sr.rec.data + bf->offset + 1), next);
		next++;
		got++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(nmark, 2);
	assert_int_equal(next, 700);
	assert_int_equal(got, fres.events);
	kmt_stream_close(st);
	kmt_file_close(f);
}

static void released(void *arg)
{
	(*(int *)arg)++;
}

/*
 * The capture threads on a private instance, 3000 markers on one CPU:
 * written through to the spool, or held in memory (all of them, or past
 * a small hold some in the spool file too) and finalised from there: the
 * halted recorder's pages read in order after the spool file's, every
 * byte consumed, the recorder told once when it may go.
 * Either way the file has every marker once, in order, without a gap, and
 * each CPU's bytes are what its thread took in.
 */
static void test_recorder(void **state)
{
	static const size_t holds[] = { 0, 4 << 20, 32 << 10 };
	struct kmt_finalize_result res;
	struct kmt_diag d = { 0 };
	char name[64], dir[64];
	int cpus[KMT_MAX_CPUS], nr_cpus, k, i;
	pid_t tids[KMT_MAX_CPUS + 1];
	cpu_set_t one;

	if (!have_tracefs())
		skip();
	nr_cpus = kmt_tracefs_cpus(cpus, KMT_MAX_CPUS);
	snprintf(name, sizeof(name), "%sunit-%d", KMT_INSTANCE_PREFIX, (int)getpid());
	for (k = 0; k < (int)ARRAY_SIZE(holds); k++) {
		struct kmt_finalize_opts o = { .zalg = KMT_Z_ZSTD, .level = 1, .released = released };
		struct kmt_recorder_opts ro = { .cpus = cpus, .nr_cpus = nr_cpus, .subbuf_size = 4096,
						.hold_bytes = holds[k] };
		struct kmt_recorder *r;
		struct kmt_spool *s;
		struct kmt_file *f;
		struct kmt_stream *st;
		struct kmt_srec sr;
		const struct kmt_field *bf;
		uint64_t held = 0, bytes0;
		int calls = 0, next = 0, ret, n;

		snprintf(dir, sizeof(dir), "spool%d", k);
		if (kmt_instance_create(&tin, troot, name, &d))
			fail_msg("%s", d.msg);
		s = recover_spool(tpath(dir), name, getpid(), cpus, nr_cpus);
		ro.instance_path = tin.path;
		ro.spool = s;
		r = trec = kmt_recorder_start(&ro, &d);
		if (!r)
			fail_msg("%s", d.msg);
		n = kmt_recorder_tids(r, tids, KMT_MAX_CPUS + 1);
		assert_true(n >= nr_cpus);
		for (i = 0; i < n; i++)
			assert_true(tids[i] > 0 && tids[i] != getpid());
		CPU_ZERO(&one);
		CPU_SET(cpus[0], &one);
		assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
		markers(&tin, 0, 3000);
		assert_int_equal(kmt_instance_write(&tin, "tracing_on", "0", &d), 0);
		if (holds[k]) {
			assert_int_equal(kmt_recorder_halt(r, &d), 0);
			for (i = 0; i < nr_cpus; i++) {
				assert_int_equal(kmt_recorder_held_bytes(r, i) % 4096, 0);
				held += kmt_recorder_held_bytes(r, i);
			}
			assert_true(held > 0);
			/* 84 KiB of pages: past a 32 KiB hold, some went to the spool file. */
			if (holds[k] < (64 << 10))
				assert_true(kmt_recorder_bytes(r, 0) > held);
			o.held = r;
			o.released_arg = &calls;
			finalize(s, tpath("out.dat"), &o, &res);
			assert_int_equal(calls, 1);
			/* Read from memory, or freed from the spool once written (punched). */
			assert_int_equal(res.consumed, res.raw_bytes);
		}
		assert_int_equal(kmt_recorder_stop(r, &d), 0);
		bytes0 = kmt_recorder_bytes(r, 0);
		kmt_recorder_free(r);
		trec = NULL;
		if (!holds[k])
			finalize(s, tpath("out.dat"), &o, &res);
		kmt_spool_close(s);
		assert_int_equal(kmt_instance_remove(&tin), 0);

		assert_int_equal(res.events, 3000);
		assert_int_equal(res.cpus[0].events, 3000);
		assert_int_equal(res.cpus[0].bytes, bytes0);
		assert_int_equal(res.lost, 0);
		assert_false(res.truncated);
		if (kmt_file_open(&f, tpath("out.dat"), &d))
			fail_msg("%s", d.msg);
		bf = kmt_format_field(kmt_formats_find(kmt_file_formats(f), "ftrace", "print"), "buf");
		assert_non_null(bf);
		st = kmt_stream_open(f, 0, &d);
		assert_non_null(st);
		while ((ret = kmt_stream_next(st, &sr, &d)) > 0) {
			assert_false(sr.lost_marker);
			assert_int_equal(sr.cpu, cpus[0]);
			assert_int_equal(atoi((const char *)sr.rec.data + bf->offset + 1), next);
			next++;
		}
		assert_int_equal(ret, 0);
		assert_int_equal(next, 3000);
		kmt_stream_close(st);
		kmt_file_close(f);
		assert_int_equal(unlink(tpath("out.dat")), 0);
	}
}

/*
 * Finalising from held pages, a page of the spool file's part damaged
 * (its commit past the page; the recorder halted): the pages after it
 * are kept, the damaged one is a gap of unknown size where it was, and
 * the result counts what the file holds (census, stream), every byte
 * consumed as ever.
 */
static void test_finalize_held_damaged(void **state)
{
	struct kmt_finalize_opts o = { .zalg = KMT_Z_ZSTD, .level = 1, .chunk_pages = 4 };
	struct kmt_recorder_opts ro = { .subbuf_size = 4096, .hold_bytes = 32 << 10 };
	struct kmt_finalize_result res;
	struct kmt_page_layout pl;
	struct kmt_diag d = { 0 };
	struct kmt_census c;
	struct kmt_recorder *r;
	struct kmt_spool *s;
	struct kmt_file *f;
	struct readback rb;
	char name[64], path[512];
	uint8_t page[2][4096];
	uint64_t e0, e1, commit = 5000;
	int cpus[KMT_MAX_CPUS], nr_cpus, fd, rfd;
	cpu_set_t one;

	if (!have_tracefs())
		skip();
	nr_cpus = kmt_tracefs_cpus(cpus, KMT_MAX_CPUS);
	this_layout(&pl);
	snprintf(name, sizeof(name), "%sunit-%d", KMT_INSTANCE_PREFIX, (int)getpid());
	if (kmt_instance_create(&tin, troot, name, &d))
		fail_msg("%s", d.msg);
	s = recover_spool(tpath("spool"), name, getpid(), cpus, nr_cpus);
	ro.instance_path = tin.path;
	ro.spool = s;
	ro.cpus = cpus;
	ro.nr_cpus = nr_cpus;
	r = trec = kmt_recorder_start(&ro, &d);
	if (!r)
		fail_msg("%s", d.msg);
	CPU_ZERO(&one);
	CPU_SET(cpus[0], &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	markers(&tin, 0, 3000);
	assert_int_equal(kmt_instance_write(&tin, "tracing_on", "0", &d), 0);
	assert_int_equal(kmt_recorder_halt(r, &d), 0);
	/* Past the 32 KiB hold, pages went to the spool file: damage its second. */
	assert_true(kmt_recorder_bytes(r, 0) - kmt_recorder_held_bytes(r, 0) >= 2 * 4096);
	fd = kmt_spool_cpu_append(s, KMT_SPOOL_MAIN, cpus[0], 4096, &d);
	assert_true(fd >= 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);	/* @fd: write-only */
	rfd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(rfd >= 0);
	assert_int_equal(pread(rfd, page, sizeof(page), 0), sizeof(page));
	close(rfd);
	e0 = page_events(page[0], 4096, &pl);
	e1 = page_events(page[1], 4096, &pl);
	assert_true(e0 > 0 && e1 > 0);
	assert_int_equal(pwrite(fd, &commit, pl.commit_size, 4096 + pl.commit_offset),
			 pl.commit_size);
	close(fd);
	o.held = r;
	finalize(s, tpath("out.dat"), &o, &res);
	assert_int_equal(res.consumed, res.raw_bytes);
	assert_int_equal(kmt_recorder_stop(r, &d), 0);
	kmt_recorder_free(r);
	trec = NULL;
	kmt_spool_close(s);
	assert_int_equal(kmt_instance_remove(&tin), 0);

	assert_int_equal(res.cpus[0].events, 3000 - e1);
	assert_int_equal(res.cpus[0].lost_pages, 1);
	assert_int_equal(res.cpus[0].lost_unknown, 1);
	assert_int_equal(res.events, 3000 - e1);
	assert_int_equal(res.lost, 0);
	read_back(tpath("out.dat"), false, &rb);
	assert_int_equal(rb.events[cpus[0]], res.cpus[0].events);
	assert_int_equal(rb.last_ts[cpus[0]], res.cpus[0].last_ts);
	assert_int_equal(rb.markers[cpus[0]], 1);
	assert_int_equal(rb.lost[cpus[0]][0], -1);
	assert_int_equal(rb.marked_at[cpus[0]], e0);
	if (kmt_file_open(&f, tpath("out.dat"), &d))
		fail_msg("%s", d.msg);
	assert_int_equal(kmt_census_run(&c, f, 0, &d), 0);
	assert_int_equal(c.nr_skipped, 0);
	assert_int_equal(c.events, res.events);
	assert_int_equal(c.cpus[0].pages, res.cpus[0].pages);
	assert_int_equal(c.cpus[0].lost_unknown, 1);
	kmt_census_release(&c);
	kmt_file_close(f);
}

/*
 * An instance whose recorder is alive (a live process called kmemtrace)
 * is not taken: -EBUSY, and it stays.
 */
static void test_recover_busy(void **state)
{
	struct kmt_recover_result res;
	struct kmt_diag d = { 0 };
	struct kmt_spool *s;
	char name[64], want[128];
	int cpus[1] = { 0 }, sync[2];
	char c;

	if (!have_tracefs())
		skip();
	assert_int_equal(pipe(sync), 0);
	tchild = fork();
	assert_true(tchild >= 0);
	if (!tchild) {
		prctl(PR_SET_NAME, "kmemtrace-unit");
		close(sync[0]);
		if (write(sync[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(sync[1]);
	assert_int_equal(read(sync[0], &c, 1), 1);
	close(sync[0]);
	instance_name(name, sizeof(name), tchild);
	assert_false(kmt_instance_stale(name));
	s = recover_spool(tpath("spool"), name, tchild, cpus, 1);
	if (kmt_instance_create(&tin, troot, name, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(kmt_recover_take(s, troot, &res, &d), -EBUSY);
	snprintf(want, sizeof(want), "the recorder of instance %s is alive", name);
	assert_string_equal(d.msg, want);
	assert_false(res.found);
	assert_true(kmt_instance_has(&tin, "trace"));
	kmt_spool_close(s);
}

/*
 * A recording's instance set up for kmalloc, kfree and fork with a filter
 * and stacks: tracing off; the buffer size, watermark and clock asked
 * for; the filter where the event has its fields (kmalloc), said not
 * applied where it has not (kfree), never on a naming event (fork); the
 * stack trigger on the allocation only, under the filter; every event
 * enabled; the recorder's threads excluded. kmt_session_partial() calls
 * the allocations partial. What kmt_session_capture() and
 * kmt_session_save_stats() put in the spool finalises into a file with
 * this kernel's and machine's description and each CPU's stats.
 */
static void test_session(void **state)
{
	struct kmt_session_opts so = { .filter = "bytes_req > 100000000", .stack = true,
				       .buffer_kb = 1020, .buffer_percent = 30, .clock = "mono" };
	struct kmt_finalize_opts o = { .zalg = KMT_Z_ZSTD, .level = 1, .full_kallsyms = true };
	struct kmt_finalize_result res;
	struct kmt_events ev = { 0 };
	struct kmt_spool_meta m = { 0 };
	struct kmt_diag d = { 0 };
	struct kmt_spool *s;
	struct kmt_file *f;
	struct utsname u;
	char name[64], notes[512], want[512];
	const char *trig;
	pid_t self = getpid();
	int cpus[KMT_MAX_CPUS], nr_cpus, i;

	if (!have_tracefs())
		skip();
	nr_cpus = kmt_tracefs_cpus(cpus, KMT_MAX_CPUS);
	snprintf(name, sizeof(name), "%sunit-%d", KMT_INSTANCE_PREFIX, (int)getpid());
	if (kmt_events_expand(troot, "kmem:kmalloc,kmem:kfree,sched:sched_process_fork", false, &ev, &d))
		fail_msg("%s", d.msg);
	so.events = &ev;
	if (kmt_instance_create(&tin, troot, name, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(kmt_session_configure(&tin, &so, notes, sizeof(notes), &d), 0);
	assert_string_equal(notes, "filter not applied to kmem:kfree: it has no field it names, so all "
			    "its events are kept\n");
	assert_string_equal(inst_text(&tin, "tracing_on"), "0\n");
	/* 256 pages of 4080 bytes: what the kernel shows is what was asked. */
	assert_string_equal(inst_text(&tin, "buffer_size_kb"), "1020\n");
	assert_string_equal(inst_text(&tin, "buffer_percent"), "30\n");
	assert_non_null(strstr(inst_text(&tin, "trace_clock"), "[mono]"));
	assert_string_equal(inst_text(&tin, "events/kmem/kmalloc/filter"), "bytes_req > 100000000\n");
	assert_string_equal(inst_text(&tin, "events/kmem/kfree/filter"), "none\n");
	assert_string_equal(inst_text(&tin, "events/sched/sched_process_fork/filter"), "none\n");
	trig = inst_text(&tin, "events/kmem/kmalloc/trigger");
	assert_int_equal(live_lines(trig), 1);
	assert_memory_equal(trig, "stacktrace", 10);
	assert_non_null(strstr(trig, "if bytes_req > 100000000"));
	assert_int_equal(live_lines(inst_text(&tin, "events/kmem/kfree/trigger")), 0);
	assert_int_equal(inst_text(&tin, "events/kmem/kmalloc/enable")[0], '1');
	assert_string_equal(inst_text(&tin, "events/kmem/kfree/enable"), "1\n");
	assert_string_equal(inst_text(&tin, "events/sched/sched_process_fork/enable"), "1\n");
	assert_int_equal(kmt_session_partial(troot, &so), KMT_PARTIAL_ALLOCS | KMT_PARTIAL_FREES);
	if (kmt_instance_has(&tin, "set_event_notrace_pid")) {
		assert_int_equal(kmt_session_exclude(&tin, &self, 1, &d), 0);
		snprintf(want, sizeof(want), "%d\n", (int)self);
		assert_string_equal(inst_text(&tin, "set_event_notrace_pid"), want);
	}
	/* A filter no event can take is refused (the triggers removed first: not twice). */
	assert_int_equal(kmt_instance_quiesce(&tin), 0);
	so.filter = "no_such_field > 1";
	assert_int_equal(kmt_session_configure(&tin, &so, notes, sizeof(notes), &d), -EINVAL);
	assert_string_equal(d.msg, "filter 'no_such_field > 1' names fields that none of the recorded "
			    "events has");
	assert_int_equal(kmt_instance_quiesce(&tin), 0);

	s = kmt_spool_create(tpath("spool"), &d);
	assert_non_null(s);
	if (kmt_session_capture(&tin, &ev, s, &m, &d))
		fail_msg("%s", d.msg);
	assert_string_equal(m.version, KMT_VERSION);
	assert_int_equal(m.pid, getpid());
	assert_string_equal(m.instance, name);
	assert_true(m.created > 0);
	assert_int_equal(uname(&u), 0);
	assert_non_null(strstr(m.uname, u.release));
	assert_int_equal(m.page_size, sysconf(_SC_PAGESIZE));
	assert_int_equal(m.long_size, sizeof(long));
	assert_string_equal(m.clock, "mono");
	assert_true(kmt_spool_size(s, KMT_SPOOL_HEADER_PAGE) > 0);
	assert_true(kmt_spool_size(s, KMT_SPOOL_KALLSYMS) > 0);
	assert_true(kmt_spool_size(s, KMT_SPOOL_CMDLINES) > 0);
	m.subbuf_size = 4096;
	m.nr_cpus = nr_cpus;
	for (i = 0; i < nr_cpus; i++)
		m.cpus[i] = cpus[i];
	assert_int_equal(kmt_spool_set_meta(s, &m, &d), 0);
	assert_int_equal(kmt_session_save_stats(&tin, s, KMT_SPOOL_MAIN, cpus, nr_cpus, &d), 0);
	finalize(s, tpath("out.dat"), &o, &res);
	kmt_spool_close(s);
	assert_int_equal(res.events, 0);
	assert_int_equal(res.nr_cpus, nr_cpus);
	for (i = 0; i < nr_cpus; i++)
		assert_true(res.cpus[i].has_stats);
	if (kmt_file_open(&f, tpath("out.dat"), &d))
		fail_msg("%s", d.msg);
	assert_string_equal(kmt_file_info(f)->clock, "mono");
	assert_string_equal(kmt_file_info(f)->uname, m.uname);
	assert_non_null(kmt_formats_find(kmt_file_formats(f), "kmem", "kmalloc"));
	assert_non_null(kmt_formats_find(kmt_file_formats(f), "kmem", "kfree"));
	assert_non_null(kmt_formats_find(kmt_file_formats(f), "sched", "sched_process_fork"));
	assert_non_null(kmt_formats_find(kmt_file_formats(f), "ftrace", "kernel_stack"));
	assert_null(kmt_formats_find(kmt_file_formats(f), "kmem", "mm_page_alloc"));
	kmt_file_close(f);
	kmt_events_release(&ev);
}

/* ---- another user's rights (root) ---- */

/*
 * With an owner set, the spool is made with that user's rights: refused
 * where the user may not write (EACCES), made and owned by the user where
 * they may; entering twice counts as once, leaving keeps errno, and this
 * process is root again afterwards. kmt_owner_set(0) turns it off.
 */
static void test_owner(void **state)
{
	const uid_t nobody = 65534;
	struct kmt_diag d = { 0 };
	struct kmt_spool *s;
	struct stat st;
	int fd;

	if (geteuid() != 0) {
		print_message("# skip: not root (files made as another user need root)\n");
		skip();
	}
	assert_false(kmt_owner_active());
	assert_int_equal(kmt_owner_uid(), 0);
	assert_int_equal(mkdir(tpath("theirs"), 0700), 0);
	assert_int_equal(chown(tpath("theirs"), nobody, nobody), 0);
	assert_int_equal(kmt_owner_set(nobody, nobody, &d), 0);
	assert_true(kmt_owner_active());
	assert_int_equal(kmt_owner_uid(), nobody);

	/* The user may pass through tmpdir, root's, but not write there. */
	assert_int_equal(chmod(tmpdir, 0711), 0);
	assert_null(kmt_spool_create(tpath("spool"), &d));
	assert_int_equal(d.err, -EACCES);
	assert_int_equal(access(tpath("spool"), F_OK), -1);
	s = kmt_spool_create(tpath("theirs/spool"), &d);
	if (!s)
		fail_msg("%s", d.msg);
	assert_int_equal(stat(tpath("theirs/spool"), &st), 0);
	assert_int_equal(st.st_uid, nobody);
	assert_int_equal(st.st_gid, nobody);
	assert_int_equal(st.st_mode & 0777, 0700);
	fd = kmt_spool_cpu_create(s, KMT_SPOOL_MAIN, 0, &d);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_uid, nobody);
	close(fd);

	kmt_owner_enter();
	kmt_owner_enter();
	kmt_owner_leave();
	/* Still the owner. */
	assert_int_equal(open(tpath("root-only"), O_WRONLY | O_CREAT, 0600), -1);
	assert_int_equal(errno, EACCES);
	errno = EXDEV;
	kmt_owner_leave();
	assert_int_equal(errno, EXDEV);
	fd = open(tpath("root-only"), O_WRONLY | O_CREAT, 0600);	/* root again */
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_uid, 0);
	close(fd);
	assert_int_equal(kmt_spool_remove(s), 0);
	assert_int_equal(access(tpath("theirs/spool"), F_OK), -1);

	assert_int_equal(kmt_owner_set(0, 0, &d), 0);
	assert_false(kmt_owner_active());
	assert_int_equal(kmt_owner_uid(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_finalize_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finalize_full_kallsyms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finalize_losses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finalize_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finalize_access, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finalize_torn_and_damaged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finalize_bad_event, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finalize_died, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spool_lifecycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finalize_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recover_take, setup_instance, teardown_instance),
		cmocka_unit_test_setup_teardown(test_recover_damaged, setup_instance, teardown_instance),
		cmocka_unit_test_setup_teardown(test_recorder, setup_instance, teardown_instance),
		cmocka_unit_test_setup_teardown(test_finalize_held_damaged, setup_instance, teardown_instance),
		cmocka_unit_test_setup_teardown(test_recover_busy, setup_instance, teardown_instance),
		cmocka_unit_test_setup_teardown(test_session, setup_instance, teardown_instance),
		cmocka_unit_test_setup_teardown(test_owner, setup, teardown),
	};

	return cmocka_run_group_tests_name("capture", tests, NULL, NULL);
}
