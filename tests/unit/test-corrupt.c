/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Corrupt files: real small recordings (tests/data/traces: v6, v7 without,
 * with zstd and with zlib compression, and a trace-cmd extract) truncated
 * at every section boundary and with bytes flipped in every section. Every
 * reader path runs on each (open, stream, decode, model, census, check):
 * nothing may crash or read out of bounds (this suite also runs under
 * ASan/UBSan), and a refusal must name the file and the offset.
 * Then damaged files, which give what can be read: cut short, a chunk that
 * does not inflate, an unreadable kallsyms section, bytes that must not
 * reach a message raw.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/analyse.h>
#include <kmemtrace/tracefile.h>
#include <kmemtrace/event.h>
#include "base/kmt-local.h"
#include "tracefile/section.h"
#include "tracefile/tf-local.h"
#include "tbuild.h"

struct stats {
	int opened, refused, tries;
};

static void no_finding(void *arg, const struct kmt_finding *f)
{
	(void)arg;
	(void)f;
}

/* Everything a command would do with a file that opened. */
static void exercise(struct kmt_file *f)
{
	const struct kmt_file_info *fi = kmt_file_info(f);
	struct kmt_decoder *dec = kmt_decoder_new(kmt_file_formats(f), fi->big_endian,
						  fi->kernel_long_size);
	struct kmt_check_opts co = { .model = true, .fn = no_finding };
	struct kmt_check_result cr;
	struct kmt_census cen;
	struct kmt_diag d;
	int b;

	assert_non_null(dec);
	for (b = 0; b < kmt_file_nr_buffers(f); b++) {
		struct kmt_stream *s = kmt_stream_open(f, b, &d);
		struct kmt_model *m = kmt_model_new(NULL);
		struct kmt_srec sr;
		struct kmt_event ev;

		while (s && kmt_stream_next(s, &sr, &d) > 0) {
			if (sr.lost_marker)
				kmt_model_lost(m, sr.cpu, sr.lost, sr.rec.ts);
			else if (kmt_decode(dec, &sr.rec, sr.cpu, &ev) > 0)
				kmt_model_event(m, &ev);
		}
		kmt_model_finish(m, 0);
		kmt_model_free(m);
		kmt_stream_close(s);
		kmt_census_run(&cen, f, b, &d);
		kmt_census_release(&cen);
	}
	kmt_check_file(f, &co, &cr, &d);
	kmt_decoder_free(dec);
}

static void try(const char *name, const uint8_t *data, size_t len, struct stats *st)
{
	struct kmt_diag d = { 0 };
	struct kmt_file *f;
	uint8_t *copy = malloc(len ? len : 1);	/* exact size: ASan sees overreads */

	memcpy(copy, data, len);
	st->tries++;
	if (kmt_file_open_mem(&f, copy, len, name, &d) == 0) {
		st->opened++;
		exercise(f);
		kmt_file_close(f);
	} else {
		st->refused++;
		/* "offset N", or for a file cut short "truncated at byte N". */
		if (!strstr(d.msg, name) || (!strstr(d.msg, "offset") && !strstr(d.msg, "at byte")))
			fail_msg("message without file or offset: %s", d.msg);
	}
	free(copy);
}

/* Offsets where something starts: section headers (v7), CPU data, chunks. */
static size_t boundaries(const uint8_t *p, size_t len, size_t *out, size_t max)
{
	struct kmt_diag d;
	struct kmt_file *f;
	size_t n = 0;
	int b, c;

	if (kmt_file_open_mem(&f, p, len, "b", &d))
		return 0;
	for (b = 0; b < kmt_file_nr_buffers(f); b++) {
		const struct kmt_buffer *buf = kmt_file_buffer(f, b);

		if (buf->section_offset && n < max)
			out[n++] = buf->section_offset;
		for (c = 0; c < buf->nr_cpus && n + 2 < max; c++) {
			out[n++] = buf->cpus[c].offset;
			out[n++] = buf->cpus[c].offset + buf->cpus[c].size / 2;
		}
	}
	kmt_file_close(f);
	/* The header byte by byte, then every 509 bytes of the metadata. */
	for (size_t o = 0; o < len && o < 64 && n < max; o++)
		out[n++] = o;
	for (size_t o = 64; o < len && o < 32768 && n < max; o += 509)
		out[n++] = o;
	return n;
}

static void corrupt_one(const char *path)
{
	static const uint8_t flips[] = { 0x00, 0xff, 0x80, 0x7f };
	struct sbuf sb = { 0 };
	struct stats st = { 0 };
	size_t cuts[4096], n, i, k;
	uint8_t *p;

	assert_int_equal(read_file(path, &sb), 0);
	p = (uint8_t *)sb.buf;
	n = boundaries(p, sb.len, cuts, 4096);
	assert_true(n > 8);
	for (i = 0; i < n; i++) {
		size_t at = cuts[i];

		if (at >= sb.len)
			continue;
		/* Truncated right here, and just after. */
		try("cut.dat", p, at, &st);
		try("cut.dat", p, at + 1, &st);
		/* The byte here, and a few after it, flipped. */
		for (k = 0; k < sizeof(flips); k++) {
			size_t o = at + (k * 7) % 24;
			uint8_t keep;

			if (o >= sb.len)
				continue;
			keep = p[o];
			p[o] = (uint8_t)(keep ^ flips[k] ^ (k ? 0 : 0x5a));
			try("flip.dat", p, sb.len, &st);
			p[o] = keep;
		}
	}
	print_message("%s: %d variants, %d opened, %d refused cleanly\n", path, st.tries, st.opened,
		      st.refused);
	assert_true(st.refused > 0);
	sbuf_release(&sb);
}

static void test_corpus(void **state)
{
	const char *dir = getenv("KMT_CORPUS") ? getenv("KMT_CORPUS") : "tests/data/traces";
	struct dirent *de;
	DIR *dp = opendir(dir);
	int files = 0;

	assert_non_null(dp);
	while ((de = readdir(dp))) {
		char path[512];

		if (!strstr(de->d_name, ".dat"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		corrupt_one(path);
		files++;
	}
	closedir(dp);
	assert_true(files >= 4);
}

struct findings {
	char text[4096];
	int errors, warnings;
};

static void collect(void *arg, const struct kmt_finding *fd)
{
	struct findings *fs = arg;
	size_t n = strlen(fs->text);

	snprintf(fs->text + n, sizeof(fs->text) - n, "%s@%llu\n", fd->what,
		 (unsigned long long)fd->offset);
	fs->errors += fd->severity == KMT_SEV_ERROR;
	fs->warnings += fd->severity == KMT_SEV_WARNING;
}

/* Check a real v7 file with @tail appended after its last section. */
static void check_with_tail(const uint8_t *file, size_t len, const uint8_t *tail, size_t tlen,
			    struct findings *fs, int *nsec)
{
	struct kmt_check_opts co = { .model = false, .fn = collect, .arg = fs };
	struct kmt_check_result cr;
	struct kmt_section_iter it;
	struct kmt_section sec;
	struct kmt_diag d = { 0 };
	struct kmt_file *f;
	uint8_t *p = malloc(len + tlen);

	memcpy(p, file, len);
	if (tlen)
		memcpy(p + len, tail, tlen);
	memset(fs, 0, sizeof(*fs));
	assert_int_equal(kmt_file_open_mem(&f, p, len + tlen, "tail.dat", &d), 0);
	*nsec = 0;
	kmt_section_iter_init(&it, f);
	while (kmt_section_next(&it, &sec) > 0)
		(*nsec)++;
	assert_int_equal(kmt_check_file(f, &co, &cr, &d), 0);
	kmt_file_close(f);
	free(p);
}

/* The section walk the checker relies on: what follows the last section. */
static void test_sections(void **state)
{
	const char *dir = getenv("KMT_CORPUS") ? getenv("KMT_CORPUS") : "tests/data/traces";
	uint8_t unknown[16] = { 99, 0 }, past[16] = { 21, 0 }, odd[5] = { 1, 2, 3, 4, 5 };
	struct findings fs;
	struct sbuf sb = { 0 };
	char path[512], want[128];
	int clean, n;

	snprintf(path, sizeof(path), "%s/real-v7-zstd.dat", dir);
	assert_int_equal(read_file(path, &sb), 0);
	check_with_tail((uint8_t *)sb.buf, sb.len, NULL, 0, &fs, &clean);
	assert_true(clean >= 8);	/* options, strings, headers, ..., flyrecord */
	assert_int_equal(fs.errors + fs.warnings, 0);
	/* An unknown section id: a warning, and it still counts as a section. */
	check_with_tail((uint8_t *)sb.buf, sb.len, unknown, sizeof(unknown), &fs, &n);
	snprintf(want, sizeof(want), "section of unknown id 99@%zu", sb.len);
	assert_non_null(strstr(fs.text, want));
	assert_int_equal(n, clean + 1);
	/* A section whose size runs past the end: an error, and the file is cut short. */
	past[8] = 200;
	check_with_tail((uint8_t *)sb.buf, sb.len, past, sizeof(past), &fs, &n);
	assert_non_null(strstr(fs.text, "section 21 of 200 bytes runs past the end of the file"));
	snprintf(want, sizeof(want), "truncated at byte %zu of %zu (section 'cmdlines')", sb.len + 16,
		 sb.len + 16 + 200);
	assert_non_null(strstr(fs.text, want));
	assert_int_equal(fs.errors, 2);
	/* Bytes too few for a section header: a warning naming how many. */
	check_with_tail((uint8_t *)sb.buf, sb.len, odd, sizeof(odd), &fs, &n);
	snprintf(want, sizeof(want), "5 bytes after the last section are not a section@%zu", sb.len);
	assert_non_null(strstr(fs.text, want));
	assert_int_equal(n, clean);
	sbuf_release(&sb);
}

/*
 * Damaged files give what can be read. One synthetic recording, zstd in
 * chunks of 4 pages: on each CPU a kmalloc and its kfree every 20 ns, and
 * in the middle two objects whose stories cross CPU 1's data there:
 *   X, allocated and freed on CPU 0, allocated again on CPU 1 and freed
 *     on CPU 0 (a double free if CPU 1's allocation is not seen);
 *   Y, allocated on CPU 0 and freed on CPU 1 (a leak if the free is not).
 * Every object is freed by the end: the clean trace has no live object
 * and no misuse.
 */
#define DN 1000
#define OBJ_X 0xffff8881deadb000ULL
#define OBJ_Y 0xffff8881deadc000ULL
#define TS(cpu, i) (1000 + (uint64_t)(i) * 20 + (uint64_t)(cpu) * 7)

struct damaged {
	uint8_t *p;			/* the clean file */
	size_t len;
	uint64_t mid_ts;		/* CPU 1's allocation of X */
};

static void damaged_trace(struct damaged *t)
{
	struct tb *tb = tb_new(2, 0);
	const char *path = tb_tmpname("damaged");
	struct sbuf sb = { 0 };
	int i, c;

	tb_formats_6_18(tb);
	tb_kallsyms(tb, "ffffffff81000000 T _stext\nffffffff81100000 T do_thing\n"
		    "ffffffff81200000 T do_other\n");
	for (c = 0; c < 2; c++)
		for (i = 0; i < DN; i++) {
			uint64_t ts = TS(c, i), obj = 0xffff888000000000ULL + ((uint64_t)c << 24) + (uint64_t)i * 64;

			tb_kmalloc(tb, c, ts, 100 + c, 0xffffffff81100010, obj, 40, 64);
			if (c == 0 && i == DN / 2 - 10) {
				tb_kmalloc(tb, 0, ts + 1, 100, 0xffffffff81100020, OBJ_X, 100, 128);
				tb_kfree(tb, 0, ts + 2, 100, 0xffffffff81200030, OBJ_X);
			}
			if (c == 1 && i == DN / 2)
				tb_kmalloc(tb, 1, ts + 1, 101, 0xffffffff81100020, OBJ_X, 100, 128);
			tb_kfree(tb, c, ts + 3, 100 + c, 0xffffffff81200010, obj);
			if (c == 1 && i == DN / 2)
				tb_kfree(tb, 1, ts + 5, 101, 0xffffffff81200020, OBJ_Y);
			if (c == 0 && i == DN / 2) {
				tb_kfree(tb, 0, ts + 9, 100, 0xffffffff81200030, OBJ_X);
				tb_kmalloc(tb, 0, ts + 10, 100, 0xffffffff81100030, OBJ_Y, 200, 256);
			}
		}
	assert_int_equal(tb_write(tb, path, 7, KMT_Z_ZSTD), 0);
	tb_free(tb);
	assert_int_equal(read_file(path, &sb), 0);
	t->p = (uint8_t *)sb.buf;
	t->len = sb.len;
	t->mid_ts = TS(1, DN / 2) + 1;
}

/* A private copy of @len bytes of @p, of exactly that size (ASan sees overreads). */
static uint8_t *copy_of(const uint8_t *p, size_t len)
{
	uint8_t *c = malloc(len ? len : 1);

	memcpy(c, p, len);
	return c;
}

/* The section (v7) holding byte @at: its name and where it should end. */
static void section_at(const uint8_t *p, size_t len, uint64_t at, char *name, uint64_t *end)
{
	struct kmt_section_iter it;
	struct kmt_section sec;
	struct kmt_diag d;
	struct kmt_file *f;

	assert_int_equal(kmt_file_open_mem(&f, p, len, "whole", &d), 0);
	kmt_section_iter_init(&it, f);
	while (kmt_section_next(&it, &sec) > 0)
		if (at >= sec.offset && at < sec.offset + KMT_SECTION_HEADER + sec.size) {
			snprintf(name, 32, "%s", sec.name);
			*end = sec.offset + KMT_SECTION_HEADER + sec.size;
			break;
		}
	kmt_file_close(f);
}

/* What kmemtrace check finds in @f, in one text. */
static void check_text(struct kmt_file *f, struct findings *fs, struct kmt_check_result *cr)
{
	struct kmt_check_opts co = { .model = true, .fn = collect, .arg = fs };
	struct kmt_diag d;

	memset(fs, 0, sizeof(*fs));
	assert_int_equal(kmt_check_file(f, &co, cr, &d), 0);
}

/* Records of the main buffer's stream, and the last one's time on @cpu. */
static uint64_t stream_records(struct kmt_file *f, int cpu, uint64_t *last, int *markers)
{
	struct kmt_stream *s = kmt_stream_open(f, kmt_file_main_buffer(f), NULL);
	struct kmt_srec sr;
	uint64_t n = 0;

	assert_non_null(s);
	*last = 0;
	*markers = 0;
	while (kmt_stream_next(s, &sr, NULL) > 0) {
		if (sr.lost_marker) {
			(*markers)++;
			continue;
		}
		n++;
		if (sr.cpu == cpu)
			*last = sr.rec.ts;
	}
	kmt_stream_close(s);
	return n;
}

/*
 * A file cut at 99.4% (in the strings here), 90% and 50% (in the data) and
 * after 100 bytes says where: "truncated at byte N of M (section S)", M
 * where the section holding byte N should end. What is before the cut is
 * read.
 */
static void test_cut_says_where(void **state)
{
	static const double cuts[] = { 0.994, 0.9, 0.5, 0 };
	struct damaged t;
	size_t k;

	damaged_trace(&t);
	for (k = 0; k < ARRAY_SIZE(cuts); k++) {
		size_t n = cuts[k] ? (size_t)((double)t.len * cuts[k]) : 100;
		uint8_t *p = copy_of(t.p, n);
		char name[32] = "", want[160];
		uint64_t end = 0, last;
		struct kmt_diag d = { 0 };
		struct kmt_file *f;
		int markers;

		section_at(t.p, t.len, n, name, &end);
		assert_true(end > n);
		snprintf(want, sizeof(want), "truncated at byte %zu of %" PRIu64 " (section '%s')", n, end,
			 name);
		if (kmt_file_open_mem(&f, p, n, "cut.dat", &d)) {
			/* Nothing of the events left: refused, saying where. */
			print_message("cut at %zu: %s\n", n, d.msg);
			assert_non_null(strstr(d.msg, "cut.dat: "));
			assert_non_null(strstr(d.msg, want));
			assert_true(n < t.len / 4);
		} else {
			struct findings fs;
			struct kmt_check_result cr;

			check_text(f, &fs, &cr);
			print_message("cut at %zu:\n%s", n, fs.text);
			assert_non_null(strstr(fs.text, want));
			/* What is before the cut is read; a cut in the data is marked. */
			assert_true(stream_records(f, 0, &last, &markers) > 0);
			assert_true(markers > 0 || strcmp(name, "flyrecord"));
			assert_true(cr.events > 0);
			kmt_file_close(f);
		}
		free(p);
	}
	free(t.p);
}

/* The file offset of the chunk holding CPU 1's record at @ts. */
static uint64_t chunk_of(const uint8_t *p, size_t len, uint64_t ts)
{
	struct kmt_cpu_reader *r;
	struct kmt_diag d;
	struct kmt_file *f;
	struct kmt_page pg;
	uint64_t off = 0;
	int b, i;

	assert_int_equal(kmt_file_open_mem(&f, p, len, "whole", &d), 0);
	b = kmt_file_main_buffer(f);
	for (i = 0; kmt_file_buffer(f, b)->cpus[i].cpu != 1; i++)
		;
	assert_int_equal(kmt_cpu_reader_open(&r, f, b, i, &d), 0);
	while (!off && kmt_cpu_reader_next(r, &pg, &d) > 0) {
		struct kmt_page_iter it;
		struct kmt_rec rec;

		kmt_page_iter_init(&it, &pg);
		while (kmt_page_next(&it, &rec, &d) > 0)
			if (rec.ts == ts)
				off = kmt_cpu_reader_offset(r);
	}
	kmt_cpu_reader_close(r);
	kmt_file_close(f);
	return off;
}

/*
 * One chunk of CPU 1 that does not inflate: the stream goes on at the
 * next chunk, check and the analysis read the same, and the gap makes X's
 * second free and Y's life uncertain: no misuse, no leak.
 */
static void test_bad_chunk_skipped(void **state)
{
	struct damaged t;
	uint64_t chunk, clean_n, clean_last, n, last;
	int markers, threads;
	uint8_t *p;

	damaged_trace(&t);
	chunk = chunk_of(t.p, t.len, t.mid_ts);
	assert_true(chunk > 0);
	/* Y's free is in the same chunk. */
	assert_int_equal(chunk_of(t.p, t.len, TS(1, DN / 2) + 5), chunk);
	p = copy_of(t.p, t.len);
	for (n = 0; n < 16; n++)
		p[chunk + 8 + ld32(p + chunk, false) / 2 + n] ^= 0x5a;
	for (threads = 0; threads < 2; threads++) {
		struct kmt_analyse_opts ao = { .t_start = -1, .t_end = -1 };
		struct kmt_analyse_result ar;
		struct kmt_check_result cr;
		struct kmt_diag d = { 0 };
		struct findings fs;
		struct kmt_file *f, *clean;
		struct kmt_decoder *dec;
		const struct kmt_misuse *v;
		const struct kmt_summary *s;
		struct kmt_model *m;
		size_t nv, i;

		assert_int_equal(kmt_file_open_mem(&clean, t.p, t.len, "clean.dat", &d), 0);
		clean_n = stream_records(clean, 1, &clean_last, &markers);
		kmt_file_close(clean);
		assert_int_equal(kmt_file_open_mem(&f, p, t.len, "chunk.dat", &d), 0);
		kmt_file_set_threads(f, threads ? 2 : 1);
		n = stream_records(f, 1, &last, &markers);
		/* Fewer records, CPU 1 read to its end, one marker for the gap. */
		assert_true(n < clean_n && n > clean_n / 2);
		assert_int_equal(last, clean_last);
		assert_int_equal(markers, 1);
		check_text(f, &fs, &cr);
		print_message("%s", fs.text);
		assert_non_null(strstr(fs.text, "does not inflate"));
		assert_int_equal(cr.events, n);
		dec = kmt_decoder_new(kmt_file_formats(f), false, 8);
		m = kmt_model_new(NULL);
		assert_int_equal(kmt_analyse(f, kmt_file_main_buffer(f), dec, m, &ao, &ar, &d), 0);
		assert_int_equal(ar.records, n);
		v = kmt_model_misuse(m, &nv);
		for (i = 0; i < nv; i++)
			assert_int_not_equal(kmt_misuse_severity(v[i].kind), KMT_SEV_ERROR);
		s = kmt_model_summary(m);
		assert_int_equal(s->live_objects, 0);
		assert_true(s->uncertain_objects >= 1);
		assert_true(s->affected_by_loss);
		kmt_analyse_result_release(&ar);
		kmt_model_free(m);
		kmt_decoder_free(dec);
		kmt_file_close(f);
	}
	free(p);
	free(t.p);
}

/* The v7 section of id @id: where its header is, and its size. */
static uint64_t section_of(const uint8_t *p, size_t len, uint16_t id, uint64_t *size)
{
	struct kmt_section_iter it;
	struct kmt_section sec;
	struct kmt_diag d;
	struct kmt_file *f;
	uint64_t off = 0;

	assert_int_equal(kmt_file_open_mem(&f, p, len, "whole", &d), 0);
	kmt_section_iter_init(&it, f);
	while (kmt_section_next(&it, &sec) > 0)
		if (sec.id == id && !off) {
			off = sec.offset;
			*size = sec.size;
		}
	kmt_file_close(f);
	return off;
}

/* A kallsyms section that does not inflate: the events are read, names not. */
static void test_kallsyms_damaged(void **state)
{
	struct kmt_check_result cr;
	struct kmt_diag d = { 0 };
	struct findings fs;
	struct damaged t;
	struct kmt_file *f;
	uint64_t off, size = 0, last;
	size_t len = 1, k;
	int markers;
	uint8_t *p;

	damaged_trace(&t);
	off = section_of(t.p, t.len, KMT_OPT_KALLSYMS, &size);
	assert_true(off > 0 && size > 16);
	p = copy_of(t.p, t.len);
	/* After the section header and "u32 csize, u32 usize": the zstd frame. */
	for (k = 0; k < 8; k++)
		p[off + 16 + 8 + 4 + k] ^= 0x5a;
	assert_int_equal(kmt_file_open_mem(&f, p, t.len, "syms.dat", &d), 0);
	kmt_file_kallsyms(f, &len);
	assert_int_equal(len, 0);
	assert_true(stream_records(f, 0, &last, &markers) > DN);
	check_text(f, &fs, &cr);
	print_message("%s", fs.text);
	assert_non_null(strstr(fs.text, "section 'kallsyms'"));
	assert_non_null(strstr(fs.text, "raw addresses"));
	kmt_file_close(f);
	free(p);
	free(t.p);
}

/* Bytes of the file quoted in a message come escaped, never raw. */
static void test_quoted_bytes_escaped(void **state)
{
	struct kmt_diag d = { 0 };
	struct damaged t;
	struct kmt_file *f;
	uint8_t *p, *z;
	size_t i;

	damaged_trace(&t);
	p = copy_of(t.p, t.len);
	z = memmem(p, 64, "zstd", 5);
	assert_non_null(z);
	memcpy(z, "\x01\x1b[2", 4);
	assert_int_not_equal(kmt_file_open_mem(&f, p, t.len, "esc.dat", &d), 0);
	print_message("%s\n", d.msg);
	assert_non_null(strstr(d.msg, "unsupported compression '\\x01\\x1b[2'"));
	for (i = 0; d.msg[i]; i++)
		assert_true((unsigned char)d.msg[i] >= 0x20 && (unsigned char)d.msg[i] < 0x7f);
	free(p);
	free(t.p);
}

static int teardown(void **state)
{
	tb_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_sections),
		cmocka_unit_test(test_cut_says_where),
		cmocka_unit_test(test_bad_chunk_skipped),
		cmocka_unit_test(test_kallsyms_damaged),
		cmocka_unit_test(test_quoted_bytes_escaped),
	};

	return cmocka_run_group_tests_name("corrupt", tests, NULL, teardown);
}
