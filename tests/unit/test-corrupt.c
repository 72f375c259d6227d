/*
 * Corrupt files: real small recordings (fuzz/corpus/file: v6, v7 without,
 * with zstd and with zlib compression, and a trace-cmd extract) truncated
 * at every section boundary and with bytes flipped in every section. Every
 * reader path runs on each (open, stream, decode, model, census, check):
 * nothing may crash or read out of bounds (this suite also runs under
 * ASan/UBSan), and a refusal must name the file and the offset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/census.h>
#include <kmemtrace/check.h>
#include <kmemtrace/event.h>
#include <kmemtrace/model.h>
#include <kmemtrace/stream.h>
#include <kmemtrace/tracefile.h>
#include "kmt-local.h"

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
	const char *dir = getenv("KMT_CORPUS") ? getenv("KMT_CORPUS") : "fuzz/corpus/file";
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
	const char *dir = getenv("KMT_CORPUS") ? getenv("KMT_CORPUS") : "fuzz/corpus/file";
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_sections),
	};

	return cmocka_run_group_tests_name("corrupt", tests, NULL, NULL);
}
