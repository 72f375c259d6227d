/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit test: the allocation model out of memory. This binary is linked
 * with --wrap=malloc,calloc,realloc (see the Makefile), so every
 * allocation made by the library can be made to fail: the N-th and all
 * after it, for every N up to what a whole analysis needs. Each run must
 * either fail with -ENOMEM and a message saying the results would be
 * incomplete, or succeed with exactly the results of a run that had all
 * the memory it wanted (a failure the model can do without, such as a
 * cache of hints). Never a partial result passed off as whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/analyse.h>
#include <kmemtrace/tracefile.h>
#include "tbuild.h"

#define MS 1000000ULL
#define SITE(i) (0xffffffff81100000ULL + (uint64_t)(i) * 0x40)
#define OBJ(i) (0xffff888100000000ULL + (uint64_t)(i) * 64)

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);

static long fail_at = -1;	/* allocation number from which all fail; -1: none */
static long count;
static bool failed;

static bool should_fail(void)
{
	if (fail_at < 0)
		return false;
	if (++count < fail_at)
		return false;
	failed = true;
	return true;
}

void *__wrap_malloc(size_t n)
{
	return should_fail() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	return should_fail() ? NULL : __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	return should_fail() ? NULL : __real_realloc(p, n);
}

struct result {
	int ret;
	char msg[512];
	struct kmt_summary sum;
	uint64_t site_allocs[64], site_frees[64], site_live[64];
	size_t nsites, ncaches, noutstanding;
};

/* Analyse @path, failing allocations from the @fail-th on (-1: none). */
static void run(const char *path, long fail, struct result *r, long *allocations)
{
	struct kmt_analyse_opts o = { .t_start = -1, .t_end = -1 };
	struct kmt_analyse_result ar;
	struct kmt_diag d = { 0 };
	struct kmt_file *f;
	struct kmt_decoder *dec;
	struct kmt_model *m;
	const struct kmt_site *v;
	size_t i;

	memset(r, 0, sizeof(*r));
	assert_int_equal(kmt_file_open(&f, path, &d), 0);
	dec = kmt_decoder_new(kmt_file_formats(f), false, 8);
	assert_non_null(dec);
	count = 0;
	failed = false;
	fail_at = fail;
	/* The model and its analysis: where the failures land. */
	m = kmt_model_new(NULL);
	if (m)
		r->ret = kmt_analyse(f, kmt_file_main_buffer(f), dec, m, &o, &ar, &d);
	else	/* a constructor says so with NULL; the commands print it */
		r->ret = kmt_diag_set(&d, -ENOMEM, "out of memory");
	fail_at = -1;
	*allocations = count;
	snprintf(r->msg, sizeof(r->msg), "%s", d.msg);
	if (m && !r->ret) {
		r->sum = *kmt_model_summary(m);
		r->sum.lost_by_cpu = r->sum.events_by_cpu = NULL;
		v = kmt_model_sites(m, &r->nsites);
		for (i = 0; i < r->nsites && i < 64; i++) {
			r->site_allocs[i] = v[i].allocs;
			r->site_frees[i] = v[i].frees;
			r->site_live[i] = v[i].live_objects;
		}
		kmt_model_caches(m, &r->ncaches);
		kmt_model_outstanding(m, &r->noutstanding);
	}
	kmt_model_free(m);
	kmt_decoder_free(dec);
	kmt_file_close(f);
}

static void test_every_failure(void **state)
{
	struct tb *tb = tb_new(2, 0);
	const char *path = tb_tmpname("oom");
	struct result ref, r;
	long needed, n, failures = 0, tolerated = 0, ignored;
	int i;

	/* Enough sites, caches and objects that every table grows a few times. */
	tb_formats_6_18(tb);
	for (i = 0; i < 3000; i++) {
		tb_kmalloc(tb, i % 2, (uint64_t)i * MS, 10 + i % 7, SITE(i % 40), OBJ(i), 100, 128);
		if (i % 3)
			tb_cache_alloc(tb, i % 2, (uint64_t)i * MS + 1, 20, SITE(40 + i % 20),
				       OBJ(100000 + i), i % 2 ? "filp" : "dentry", 184, 192);
		if (i % 5)
			tb_kfree(tb, 1 - i % 2, (uint64_t)i * MS + 2, 10, SITE(63), OBJ(i));
	}
	assert_int_equal(tb_write(tb, path, 7, KMT_Z_ZSTD), 0);
	tb_free(tb);
	run(path, -1, &ref, &ignored);
	assert_int_equal(ref.ret, 0);
	run(path, 1000000000L, &r, &needed);	/* counts, fails nothing */
	assert_false(failed);
	assert_true(needed > 20);
	for (n = 1; n <= needed; n++) {
		run(path, n, &r, &ignored);
		if (!failed)
			continue;
		if (r.ret) {
			failures++;
			if (r.ret != -ENOMEM || !strstr(r.msg, "out of memory"))
				fail_msg("allocation %ld failed: %d '%s'", n, r.ret, r.msg);
			continue;
		}
		/* It coped: then nothing may be missing. */
		tolerated++;
		if (memcmp(&r.sum, &ref.sum, sizeof(r.sum)) || r.nsites != ref.nsites ||
		    memcmp(r.site_allocs, ref.site_allocs, sizeof(r.site_allocs)) ||
		    memcmp(r.site_frees, ref.site_frees, sizeof(r.site_frees)) ||
		    memcmp(r.site_live, ref.site_live, sizeof(r.site_live)) ||
		    r.ncaches != ref.ncaches || r.noutstanding != ref.noutstanding)
			fail_msg("allocation %ld failed, and the analysis gave other results without an error", n);
	}
	print_message("# %ld allocations; failing from each: %ld runs refused, %ld coped exactly\n",
		      needed, failures, tolerated);
	assert_true(failures > needed / 2);
	tb_cleanup();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_failure),
	};

	return cmocka_run_group_tests_name("oom", tests, NULL, NULL);
}
