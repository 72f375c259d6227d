/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests of the allocation model through the whole pipeline: a trace
 * is synthesised event by event (tbuild), written, read back, decoded and
 * analysed; each case checks exact numbers. One case per misuse kind, the
 * pre-existing and uncertain cases, time windows, old event layouts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/analyse.h>
#include <kmemtrace/event.h>
#include <kmemtrace/tracefile.h>
#include "tbuild.h"

#define SITE_A 0xffffffff81100010ULL
#define SITE_B 0xffffffff81200020ULL
#define FREE_A 0xffffffff81100090ULL
#define OBJ(n) (0xffff888100000000ULL + (uint64_t)(n) * 0x100)
#define MS 1000000ULL

struct run {
	struct kmt_file *f;
	struct kmt_decoder *dec;
	struct kmt_model *m;
	struct kmt_analyse_result res;
};

/* Hooks and options for the next analyse(), if any. */
static const struct kmt_model_hooks *next_hooks;
static const struct kmt_model_opts *next_opts;

static void analyse(struct run *r, struct tb *tb, double t_start, double t_end)
{
	const char *path = tb_tmpname("model");
	struct kmt_analyse_opts o = { .t_start = t_start, .t_end = t_end };
	struct kmt_diag d = { 0 };

	assert_int_equal(tb_write(tb, path, 7, KMT_Z_ZSTD), 0);
	if (kmt_file_open(&r->f, path, &d))
		fail_msg("%s", d.msg);
	r->dec = kmt_decoder_new(kmt_file_formats(r->f), false, 8);
	r->m = kmt_model_new(next_opts);
	next_opts = NULL;
	assert_non_null(r->dec);
	assert_non_null(r->m);
	if (next_hooks)
		kmt_model_set_hooks(r->m, next_hooks);
	next_hooks = NULL;
	if (kmt_analyse(r->f, kmt_file_main_buffer(r->f), r->dec, r->m, &o, &r->res, &d))
		fail_msg("%s", d.msg);
	tb_free(tb);
}

static void done(struct run *r)
{
	kmt_model_free(r->m);
	kmt_decoder_free(r->dec);
	kmt_file_close(r->f);
	tb_cleanup();
}

static const struct kmt_site *site(struct run *r, uint64_t addr)
{
	size_t n, i;
	const struct kmt_site *v = kmt_model_sites(r->m, &n);

	for (i = 0; i < n; i++)
		if (v[i].addr == addr)
			return &v[i];
	fail_msg("no site %#llx", (unsigned long long)addr);
	return NULL;
}

static uint64_t misuse(struct run *r, enum kmt_misuse_kind k, uint64_t *alloc_site)
{
	size_t n, i;
	const struct kmt_misuse *v = kmt_model_misuse(r->m, &n);
	const struct kmt_untraced *u;
	uint64_t c = 0;

	/* The kernel's untraced traffic is counted per cache, apart from misuse. */
	if (k == KMT_MISUSE_ALLOC_LIVE || k == KMT_MISUSE_UNTRACED_ALLOC) {
		for (i = 0; i < n; i++)
			assert_int_not_equal(v[i].kind, k);
		u = kmt_model_untraced(r->m, &n);
		for (i = 0; i < n; i++) {
			c += k == KMT_MISUSE_ALLOC_LIVE ? u[i].alloc_over_live : u[i].untraced_alloc;
			if (alloc_site)
				*alloc_site = u[i].first_alloc_site;
		}
		return c;
	}

	for (i = 0; i < n; i++)
		if (v[i].kind == k) {
			c += v[i].count;
			if (alloc_site)
				*alloc_site = v[i].alloc_site;
		}
	return c;
}

static uint64_t errors(struct run *r)
{
	uint64_t c = 0;
	int k;

	for (k = 0; k < KMT_MISUSE_NR; k++)
		if (kmt_misuse_severity(k) == KMT_SEV_ERROR)
			c += misuse(r, k, NULL);
	return c;
}

static struct tb *new_tb(void)
{
	struct tb *tb = tb_new(2, 0);

	tb_formats_6_18(tb);
	return tb;
}

static void test_sites_and_bytes(void **state)
{
	struct tb *tb = new_tb();
	const struct kmt_summary *s;
	const struct kmt_site *a;
	struct run r;

	tb_kmalloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), 100, 128);
	tb_kmalloc(tb, 0, 2 * MS, 10, SITE_A, OBJ(2), 100, 128);
	tb_kmalloc(tb, 1, 3 * MS, 11, SITE_A, OBJ(3), 60, 64);
	tb_kfree(tb, 0, 4 * MS, 10, FREE_A, OBJ(1));	/* same CPU, 3 ms */
	tb_kfree(tb, 1, 5 * MS, 11, FREE_A, OBJ(2));	/* other CPU */
	tb_kfree(tb, 1, 5 * MS + 50, 11, FREE_A, OBJ(3));
	analyse(&r, tb, -1, -1);
	a = site(&r, SITE_A);
	assert_int_equal(a->allocs, 3);
	assert_int_equal(a->frees, 3);
	assert_int_equal(a->bytes_req, 260);
	assert_int_equal(a->bytes_alloc, 320);
	assert_int_equal(a->cross_cpu, 1);
	assert_int_equal(a->live_objects, 0);
	assert_int_equal(site(&r, FREE_A)->free_calls, 3);
	assert_int_equal(site(&r, FREE_A)->allocs, 0);
	assert_int_equal(a->life_min, 2 * MS + 50);
	assert_int_equal(a->life_max, 3 * MS);
	s = kmt_model_summary(r.m);
	assert_int_equal(s->allocs, 3);
	assert_int_equal(s->frees, 3);
	assert_int_equal(s->bytes_freed, 320);
	assert_int_equal(s->cross_cpu_frees, 1);
	assert_int_equal(s->preexisting_frees, 0);
	assert_int_equal(s->live_objects, 0);
	assert_int_equal(errors(&r), 0);
	done(&r);
}

static void test_outstanding_and_preexisting(void **state)
{
	struct tb *tb = new_tb();
	const struct kmt_outstanding *o;
	const struct kmt_summary *s;
	struct run r;
	size_t n;
	int i;

	for (i = 0; i < 5; i++)
		tb_kmalloc(tb, 0, (uint64_t)(i + 1) * MS, 10, SITE_A, OBJ(i), 1337, 2048);
	tb_kfree(tb, 0, 10 * MS, 10, FREE_A, OBJ(0));
	tb_kfree(tb, 0, 11 * MS, 10, FREE_A, OBJ(1));
	tb_kfree(tb, 1, 12 * MS, 10, FREE_A, OBJ(99));	/* allocated before the trace */
	tb_cache_free(tb, 1, 13 * MS, 10, FREE_A, OBJ(98), "filp");
	analyse(&r, tb, -1, -1);
	s = kmt_model_summary(r.m);
	assert_int_equal(s->live_objects, 3);
	assert_int_equal(s->live_bytes, 3 * 2048);
	assert_int_equal(s->preexisting_frees, 2);
	assert_int_equal(s->uncertain_objects, 0);
	o = kmt_model_outstanding(r.m, &n);
	assert_int_equal(n, 1);
	assert_int_equal(o->site, SITE_A);
	assert_int_equal(o->objects, 3);
	assert_int_equal(o->bytes_alloc, 3 * 2048);
	assert_int_equal(o->bytes_req, 3 * 1337);
	assert_int_equal(o->age_min, 13 * MS - 5 * MS);	/* the trace ends at 13 ms */
	assert_int_equal(o->age_max, 13 * MS - 3 * MS);
	assert_int_equal(errors(&r), 0);
	done(&r);
}

static void test_double_free(void **state)
{
	struct tb *tb = new_tb();
	uint64_t from = 0;
	struct run r;

	tb_kmalloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), 32, 32);
	tb_kfree(tb, 0, 2 * MS, 10, FREE_A, OBJ(1));
	tb_kfree(tb, 1, 3 * MS, 12, FREE_A, OBJ(1));
	/* Reallocated, then freed once: fine. */
	tb_kmalloc(tb, 0, 4 * MS, 10, SITE_B, OBJ(1), 32, 32);
	tb_kfree(tb, 0, 5 * MS, 10, FREE_A, OBJ(1));
	analyse(&r, tb, -1, -1);
	assert_int_equal(misuse(&r, KMT_MISUSE_DOUBLE_FREE, &from), 1);
	assert_int_equal(from, SITE_A);
	assert_int_equal(errors(&r), 1);
	assert_int_equal(kmt_model_summary(r.m)->frees, 2);
	done(&r);
}

/*
 * An object never seen allocated, freed twice: its allocations are not in
 * this trace (before it, or by a task it leaves out), so the second free
 * follows one more of them: an untraced allocation (a warning), not a
 * double free (an error).
 */
static void test_double_free_of_unseen_object(void **state)
{
	struct tb *tb = new_tb();
	struct run r;

	tb_kfree(tb, 0, 1 * MS, 10, FREE_A, OBJ(1));
	tb_kfree(tb, 1, 2 * MS, 12, FREE_A, OBJ(1));
	analyse(&r, tb, -1, -1);
	assert_int_equal(misuse(&r, KMT_MISUSE_DOUBLE_FREE, NULL), 0);
	assert_int_equal(misuse(&r, KMT_MISUSE_UNTRACED_ALLOC, NULL), 1);
	assert_int_equal(errors(&r), 0);
	assert_int_equal(kmt_model_summary(r.m)->untraced_evidence, 1);
	assert_int_equal(kmt_model_summary(r.m)->preexisting_frees, 1);
	done(&r);
}

static void test_double_free_in_bulk_filled_cache(void **state)
{
	struct tb *tb = new_tb();
	struct run r;

	/* skbuff_head_cache is refilled by kmem_cache_alloc_bulk: no event. */
	tb_cache_alloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), "skbuff_head_cache", 224, 256);
	tb_cache_free(tb, 0, 2 * MS, 10, FREE_A, OBJ(1), "skbuff_head_cache");
	tb_cache_free(tb, 1, 3 * MS, 12, FREE_A, OBJ(1), "skbuff_head_cache");
	/* The same pattern in an ordinary cache stays a double free. */
	tb_cache_alloc(tb, 0, 4 * MS, 10, SITE_B, OBJ(2), "filp", 184, 192);
	tb_cache_free(tb, 0, 5 * MS, 10, FREE_A, OBJ(2), "filp");
	tb_cache_free(tb, 1, 6 * MS, 12, FREE_A, OBJ(2), "filp");
	analyse(&r, tb, -1, -1);
	assert_int_equal(misuse(&r, KMT_MISUSE_UNTRACED_ALLOC, NULL), 1);
	assert_int_equal(misuse(&r, KMT_MISUSE_DOUBLE_FREE, NULL), 1);
	assert_int_equal(errors(&r), 1);
	assert_int_equal(kmt_model_summary(r.m)->untraced_evidence, 1);
	done(&r);
}

static void test_alloc_over_live(void **state)
{
	struct tb *tb = new_tb();
	uint64_t from = 0;
	struct run r;

	tb_kmalloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), 32, 32);
	tb_kmalloc(tb, 1, 2 * MS, 10, SITE_B, OBJ(1), 64, 64);	/* a free was missed */
	analyse(&r, tb, -1, -1);
	assert_int_equal(misuse(&r, KMT_MISUSE_ALLOC_LIVE, &from), 1);
	assert_int_equal(from, SITE_A);
	assert_int_equal(kmt_model_summary(r.m)->live_objects, 1);
	done(&r);
}

static void test_kmalloc_large_twin(void **state)
{
	struct tb *tb = new_tb();
	struct run r;

	/* The kernel traces a large kmalloc twice, back to back, same CPU. */
	tb_kmalloc(tb, 0, 1 * MS, 10, SITE_B, OBJ(7), 20000, 32768);
	tb_kmalloc(tb, 0, 1 * MS + 100, 10, SITE_A, OBJ(7), 20000, 32768);
	tb_kfree(tb, 0, 2 * MS, 10, FREE_A, OBJ(7));
	analyse(&r, tb, -1, -1);
	assert_int_equal(errors(&r), 0);
	assert_int_equal(kmt_model_summary(r.m)->kmalloc_large_merged, 1);
	assert_int_equal(kmt_model_summary(r.m)->allocs, 1);
	assert_int_equal(site(&r, SITE_A)->allocs, 1);
	assert_int_equal(site(&r, SITE_A)->frees, 1);
	assert_int_equal(site(&r, SITE_B)->allocs, 0);
	done(&r);
}

static void test_cache_misuse(void **state)
{
	struct tb *tb = new_tb();
	struct run r;
	size_t n, i;
	const struct kmt_misuse *v;
	bool detail = false;

	tb_kmalloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), 32, 32);
	tb_cache_free(tb, 0, 2 * MS, 10, FREE_A, OBJ(1), "filp");	/* cache_free of kmalloc */
	tb_cache_alloc(tb, 0, 3 * MS, 10, SITE_B, OBJ(2), "filp", 184, 192);
	tb_cache_free(tb, 0, 4 * MS, 10, FREE_A, OBJ(2), "dentry");	/* wrong cache */
	tb_cache_alloc(tb, 0, 5 * MS, 10, SITE_B, OBJ(3), "filp", 184, 192);
	tb_kfree(tb, 0, 6 * MS, 10, FREE_A, OBJ(3));			/* legal: information */
	tb_cache_alloc(tb, 0, 7 * MS, 10, SITE_B, OBJ(4), "filp", 184, 192);
	tb_cache_free(tb, 0, 8 * MS, 10, FREE_A, OBJ(4), "filp");	/* right */
	analyse(&r, tb, -1, -1);
	assert_int_equal(misuse(&r, KMT_MISUSE_CACHE_FREE_KMALLOC, NULL), 1);
	assert_int_equal(misuse(&r, KMT_MISUSE_CACHE_MISMATCH, NULL), 1);
	assert_int_equal(misuse(&r, KMT_MISUSE_KFREE_CACHE, NULL), 1);
	assert_int_equal(kmt_misuse_severity(KMT_MISUSE_KFREE_CACHE), KMT_SEV_INFO);
	assert_int_equal(errors(&r), 2);
	v = kmt_model_misuse(r.m, &n);
	for (i = 0; i < n; i++)
		if (v[i].kind == KMT_MISUSE_CACHE_MISMATCH)
			detail = strstr(v[i].detail, "dentry") && strstr(v[i].detail, "filp");
	assert_true(detail);
	assert_int_equal(kmt_model_summary(r.m)->frees, 4);
	done(&r);
}

static const struct kmt_cache *cache(struct run *r, const char *name)
{
	size_t n, i;
	const struct kmt_cache *v = kmt_model_caches(r->m, &n);

	for (i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	fail_msg("no cache %s", name);
	return NULL;
}

/*
 * Caches by the names their events carry: the object size from an
 * allocation even when a free named the cache first; a merged cache by
 * all its names; --cache by any of them, or by a kmalloc class spelt
 * either way, and nothing else.
 */
static void test_cache_names(void **state)
{
	static const char groups[] = "pool_workqueue sgpool-16 skbuff_fclone_cache\n";
	struct kmt_slab_aliases *al = kmt_slab_aliases_parse(groups, strlen(groups));
	struct kmt_model_opts mo = { .slab_aliases = al };
	const char *const pick[] = { "skbuff_fclone_cache", "kmalloc-2048" };
	struct run r;
	int k;

	for (k = -1; k < 2; k++) {
		struct tb *tb = new_tb();

		tb_cache_free(tb, 0, 1 * MS, 10, FREE_A, OBJ(1), "dentry");	/* older than the trace */
		tb_cache_alloc(tb, 0, 2 * MS, 10, SITE_B, OBJ(2), "dentry", 192, 192);
		tb_cache_alloc(tb, 0, 3 * MS, 10, SITE_B, OBJ(3), "pool_workqueue", 400, 512);
		tb_cache_free(tb, 0, 4 * MS, 10, FREE_A, OBJ(3), "pool_workqueue");
		tb_cache_free(tb, 0, 5 * MS, 10, FREE_A, OBJ(4), "pool_workqueue");	/* older */
		tb_kmalloc(tb, 1, 6 * MS, 11, SITE_A, OBJ(5), 1337, 2048);
		tb_kfree(tb, 1, 7 * MS, 11, FREE_A, OBJ(6));				/* older, kmalloc */
		tb_emit(tb, 1, 8 * MS, "kmem", "mm_page_alloc", 11, (struct tb_val[]){
			{ "pfn", 0x1000 }, { "order", 0 }, { "gfp_flags", 0xcc0 }, { "migratetype", 0 }, { NULL } });
		mo.cache = k < 0 ? NULL : pick[k];
		next_opts = &mo;
		analyse(&r, tb, -1, -1);
		if (k < 0) {
			assert_int_equal(cache(&r, "dentry")->object_size, 192);
			assert_null(cache(&r, "dentry")->merged);
			assert_string_equal(kmt_cache_label(cache(&r, "dentry")), "dentry");
			assert_string_equal(kmt_cache_label(cache(&r, "pool_workqueue")),
					    "pool_workqueue (+sgpool-16, skbuff_fclone_cache)");
			assert_int_equal(kmt_model_summary(r.m)->allocs, 3);
			assert_int_equal(kmt_model_summary(r.m)->preexisting_frees, 3);
			assert_int_equal(kmt_model_summary(r.m)->page_allocs, 1);
			assert_false(kmt_model_summary(r.m)->cache_filtered);
		} else if (k == 0) {
			/* Only the merged cache's objects: its allocation, its free, its older object. */
			assert_true(kmt_model_summary(r.m)->cache_filtered);
			assert_true(kmt_model_summary(r.m)->cache_matched);
			assert_int_equal(kmt_model_summary(r.m)->allocs, 1);
			assert_int_equal(kmt_model_summary(r.m)->frees, 1);
			assert_int_equal(kmt_model_summary(r.m)->preexisting_frees, 1);
			assert_int_equal(kmt_model_summary(r.m)->page_allocs, 0);
			assert_int_equal(kmt_model_summary(r.m)->events, 3);
			assert_int_equal(site(&r, SITE_B)->allocs, 1);
		} else {
			assert_int_equal(kmt_model_summary(r.m)->allocs, 1);
			assert_int_equal(kmt_model_summary(r.m)->bytes_alloc, 2048);
			assert_int_equal(kmt_model_summary(r.m)->preexisting_frees, 0);	/* a kfree says no cache */
			assert_int_equal(kmt_model_summary(r.m)->events, 1);
		}
		done(&r);
	}
	kmt_slab_aliases_free(al);
}

static void test_loss_makes_uncertain(void **state)
{
	struct tb *tb = new_tb();
	const struct kmt_summary *s;
	struct run r;
	size_t n;

	tb_kmalloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), 32, 32);	/* before the gap */
	tb_kmalloc(tb, 0, 2 * MS, 10, SITE_A, OBJ(2), 32, 32);
	tb_kfree(tb, 0, 3 * MS, 10, FREE_A, OBJ(2));
	tb_lost(tb, 1, 500);
	tb_kfree(tb, 1, 4 * MS, 10, FREE_A, OBJ(9));			/* unknown: maybe in the gap */
	tb_kfree(tb, 1, 5 * MS, 10, FREE_A, OBJ(2));			/* "double": maybe realloc'd in the gap */
	tb_kmalloc(tb, 1, 6 * MS, 10, SITE_A, OBJ(3), 32, 32);	/* after the gap: certain */
	analyse(&r, tb, -1, -1);
	s = kmt_model_summary(r.m);
	assert_true(s->affected_by_loss);
	assert_int_equal(s->lost_events, 500);
	assert_int_equal(s->lost_by_cpu[1], 500);
	assert_int_equal(s->uncertain_objects, 2);	/* OBJ(1) live, OBJ(9) freed */
	assert_int_equal(s->uncertain_misuse, 1);
	assert_int_equal(s->preexisting_frees, 0);
	assert_int_equal(s->live_objects, 1);		/* OBJ(3) only */
	assert_int_equal(errors(&r), 0);
	kmt_model_outstanding(r.m, &n);
	assert_int_equal(n, 1);
	assert_int_equal(site(&r, SITE_A)->uncertain, 1);
	done(&r);
}

/* An event for the model, without a trace file. */
static void feed(struct kmt_model *m, int kind, int cpu, uint64_t ts, uint64_t site, uint64_t ptr)
{
	struct kmt_event ev = { .ts = ts, .cpu = cpu, .pid = 10, .kind = (uint16_t)kind,
				.call_site = site, .ptr = ptr, .bytes_req = 32, .bytes_alloc = 32,
				.node = -1, .migratetype = -1 };

	assert_int_equal(kmt_model_event(m, &ev), 0);
}

/*
 * A part of CPU 1's data could not be read (a damaged file): its events
 * from 0.5 to 5 ms are missing. Until 5 ms, every event is judged as after
 * a loss: X's second free and Y, live at the end, are uncertain, not a
 * double free and a leak. W, allocated after the gap, is live for sure.
 */
static void test_damaged_gap_stays_open(void **state)
{
	struct kmt_model *m = kmt_model_new(NULL);
	const struct kmt_summary *s;
	const struct kmt_misuse *v;
	size_t n, i;

	feed(m, KMT_EV_KMALLOC, 1, MS / 2, SITE_A, OBJ(1));		/* Z, CPU 1's last */
	kmt_model_gap(m, 1, MS / 2, 5 * MS);
	feed(m, KMT_EV_KMALLOC, 0, 1 * MS, SITE_A, OBJ(2));		/* X */
	feed(m, KMT_EV_KFREE, 0, 2 * MS, FREE_A, OBJ(2));
	/* CPU 1 may have allocated X again in the gap. */
	feed(m, KMT_EV_KFREE, 0, 3 * MS, FREE_A, OBJ(2));
	feed(m, KMT_EV_KMALLOC, 0, 4 * MS, SITE_A, OBJ(3));		/* Y: CPU 1 may free it */
	feed(m, KMT_EV_KMALLOC, 1, 5 * MS, SITE_A, OBJ(4));		/* the gap ends */
	feed(m, KMT_EV_KFREE, 1, 5 * MS + 1, FREE_A, OBJ(4));
	feed(m, KMT_EV_KMALLOC, 0, 6 * MS, SITE_A, OBJ(5));		/* W */
	assert_int_equal(kmt_model_finish(m, 7 * MS), 0);
	s = kmt_model_summary(m);
	v = kmt_model_misuse(m, &n);
	for (i = 0; i < n; i++)
		assert_int_not_equal(kmt_misuse_severity(v[i].kind), KMT_SEV_ERROR);
	assert_int_equal(s->uncertain_misuse, 1);
	assert_int_equal(s->uncertain_objects, 2);	/* Z and Y */
	assert_int_equal(s->live_objects, 1);		/* W */
	assert_int_equal(s->damaged_gaps, 1);
	assert_int_equal(s->lost_pages_unknown, 0);	/* not a ring-buffer loss */
	assert_true(s->affected_by_loss);
	kmt_model_free(m);
}

static void test_truncated_cpu_makes_uncertain(void **state)
{
	struct tb *tb = new_tb();
	const struct kmt_summary *s;
	struct run r;
	const char *stat0 = "CPU: 0\nentries: 0\noverrun: 0\nkmemtrace truncated: writing the spool file: No space left on device\n";
	const char *stat1 = "CPU: 1\nentries: 0\noverrun: 0\nkmemtrace truncated: writing the spool file: No space left on device\n";

	/* Both CPUs complete until CPU 1 stops at 2 ms. */
	tb_kmalloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), 32, 32);
	tb_cache_free(tb, 0, 1 * MS + 1, 10, FREE_A, OBJ(1), "filp");	/* certain misuse */
	tb_kmalloc(tb, 0, 1 * MS + 2, 10, SITE_A, OBJ(2), 32, 32);
	tb_cache_alloc(tb, 0, 1 * MS + 3, 10, SITE_B, OBJ(3), "filp", 184, 192);
	tb_kmalloc(tb, 1, 2 * MS, 10, SITE_A, OBJ(4), 64, 64);		/* CPU 1's last event */
	/* CPU 0 goes on; what CPU 1 did after 2 ms is unknown. */
	tb_cache_free(tb, 0, 3 * MS, 10, FREE_A, OBJ(2), "filp");	/* uncertain */
	tb_kfree(tb, 0, 4 * MS, 10, FREE_A, OBJ(3));			/* uncertain */
	tb_kfree(tb, 0, 5 * MS, 10, FREE_A, OBJ(4));			/* a cross-CPU free, fine */
	/* Allocated after CPU 1 stopped: CPU 1 may have freed and reused it. */
	tb_kmalloc(tb, 0, 6 * MS, 10, SITE_A, OBJ(5), 32, 32);
	tb_cache_free(tb, 0, 7 * MS, 10, FREE_A, OBJ(5), "filp");	/* uncertain */
	tb_kmalloc(tb, 0, 8 * MS, 10, SITE_A, OBJ(6), 32, 32);		/* live: uncertain */
	tb_cpustat(tb, 0, stat0);
	tb_cpustat(tb, 1, stat1);
	analyse(&r, tb, -1, -1);
	s = kmt_model_summary(r.m);
	assert_int_equal(s->truncated_cpus, 2);
	assert_int_equal(s->truncated_ts, 2 * MS);
	assert_true(s->affected_by_loss);
	assert_int_equal(s->lost_events, 0);
	assert_int_equal(s->lost_pages_unknown, 0);
	assert_int_equal(misuse(&r, KMT_MISUSE_CACHE_FREE_KMALLOC, NULL), 1);
	assert_int_equal(misuse(&r, KMT_MISUSE_KFREE_CACHE, NULL), 0);
	assert_int_equal(s->uncertain_misuse, 3);
	assert_int_equal(s->frees, 5);
	assert_int_equal(s->cross_cpu_frees, 1);
	assert_int_equal(s->live_objects, 0);
	done(&r);
}

static void test_time_window(void **state)
{
	struct tb *tb = new_tb();
	const struct kmt_summary *s;
	struct run r;
	int i;

	/* One allocation per second, freed 0.5 s later on the other CPU. */
	for (i = 0; i < 10; i++) {
		tb_kmalloc(tb, i % 2, (uint64_t)i * 1000 * MS, 10, SITE_A, OBJ(i), 8, 8);
		tb_kfree(tb, 1 - i % 2, (uint64_t)i * 1000 * MS + 500 * MS, 10, FREE_A, OBJ(i));
	}
	analyse(&r, tb, 2.0, 4.2);	/* allocations at 2, 3, 4 s; frees at 2.5, 3.5 */
	s = kmt_model_summary(r.m);
	assert_int_equal(s->allocs, 3);
	assert_int_equal(s->frees, 2);
	assert_int_equal(s->live_objects, 1);
	assert_int_equal(s->preexisting_frees, 0);
	done(&r);

	tb = new_tb();
	for (i = 0; i < 10; i++) {
		tb_kmalloc(tb, 0, (uint64_t)i * 1000 * MS, 10, SITE_A, OBJ(i), 8, 8);
		tb_kfree(tb, 1, (uint64_t)i * 1000 * MS + 500 * MS, 10, FREE_A, OBJ(i));
	}
	analyse(&r, tb, 2.6, -1);	/* cut: the free at 2.5 is gone, at 3.5.. stay */
	s = kmt_model_summary(r.m);
	assert_int_equal(s->allocs, 7);	/* 3 .. 9 */
	assert_int_equal(s->frees, 7);
	assert_int_equal(s->preexisting_frees, 0);
	done(&r);
}

static void test_old_kernel_layout(void **state)
{
	struct tb *tb = tb_new(1, 0);
	const struct kmt_summary *s;
	const struct kmt_cache *c;
	struct run r;
	size_t n, i;
	bool sized = false;

	tb_format_file(tb, "kmem", "old-kmem_kmalloc.format");
	tb_format_file(tb, "kmem", "old-kmem_kmalloc_node.format");
	tb_format_file(tb, "kmem", "old-kmem_kmem_cache_alloc.format");
	tb_format_file(tb, "kmem", "old-kmem_kfree.format");
	tb_format_file(tb, "kmem", "old-kmem_kmem_cache_free.format");
	tb_format_file(tb, "kmem", "old-kmem_mm_page_alloc.format");
	tb_format_file(tb, "kmem", "old-kmem_mm_page_free_direct.format");
	tb_emit(tb, 0, 1 * MS, "kmem", "kmalloc_node", 10, (struct tb_val[]){
		{ "call_site", SITE_A }, { "ptr", OBJ(1) }, { "bytes_req", 100 }, { "bytes_alloc", 128 },
		{ "gfp_flags", 0xcc0 }, { "node", 1 }, { NULL } });
	tb_emit(tb, 0, 2 * MS, "kmem", "kmem_cache_alloc", 10, (struct tb_val[]){
		{ "call_site", SITE_B }, { "ptr", OBJ(2) }, { "bytes_req", 184 }, { "bytes_alloc", 192 },
		{ NULL } });
	tb_emit(tb, 0, 3 * MS, "kmem", "kmem_cache_free", 10, (struct tb_val[]){
		{ "call_site", FREE_A }, { "ptr", OBJ(2) }, { NULL } });
	tb_emit(tb, 0, 4 * MS, "kmem", "kfree", 10, (struct tb_val[]){
		{ "call_site", FREE_A }, { "ptr", OBJ(1) }, { NULL } });
	tb_emit(tb, 0, 5 * MS, "kmem", "mm_page_alloc", 10, (struct tb_val[]){
		{ "page", 0xffffea0000400000ULL }, { "order", 2 }, { "gfp_flags", 0xcc0 },
		{ "migratetype", 1 }, { NULL } });
	tb_emit(tb, 0, 6 * MS, "kmem", "mm_page_free_direct", 10, (struct tb_val[]){
		{ "page", 0xffffea0000400000ULL }, { "order", 2 }, { NULL } });
	analyse(&r, tb, -1, -1);
	assert_string_equal(kmt_decoder_skipped(r.dec), "");
	s = kmt_model_summary(r.m);
	assert_int_equal(s->allocs, 2);
	assert_int_equal(s->frees, 2);
	assert_int_equal(s->bytes_alloc, 320);
	assert_int_equal(s->page_allocs, 1);
	assert_int_equal(s->pages_allocated, 4);
	assert_int_equal(s->page_frees, 1);
	assert_int_equal(s->order_mt[2][1], 1);
	assert_int_equal(errors(&r), 0);
	c = kmt_model_caches(r.m, &n);
	for (i = 0; i < n; i++)
		if (!strcmp(c[i].name, "cache(size=192)"))
			sized = c[i].allocs == 1 && c[i].frees == 1;
	assert_true(sized);	/* no cache name in old kernels: by size */
	done(&r);
}

static void test_process_names(void **state)
{
	struct tb *tb = new_tb();
	const struct kmt_proc *p;
	struct run r;
	size_t n, i;
	int before = -1, after = -1;

	tb_emit(tb, 0, 1 * MS, "sched", "sched_process_fork", 100, (struct tb_val[]){
		{ "parent_comm", 0, "bash" }, { "parent_pid", 100 }, { "child_comm", 0, "bash" },
		{ "child_pid", 200 }, { NULL } });
	tb_kmalloc(tb, 0, 2 * MS, 200, SITE_A, OBJ(1), 8, 8);
	tb_emit(tb, 0, 3 * MS, "sched", "sched_process_exec", 200, (struct tb_val[]){
		{ "filename", 0, "/usr/bin/short-lived-tool" }, { "pid", 200 }, { "old_pid", 200 },
		{ NULL } });
	tb_kmalloc(tb, 0, 4 * MS, 200, SITE_A, OBJ(2), 8, 8);
	tb_kmalloc(tb, 0, 5 * MS, 200, SITE_A, OBJ(3), 8, 8);
	analyse(&r, tb, -1, -1);
	p = kmt_model_procs(r.m, &n);
	for (i = 0; i < n; i++) {
		if (p[i].pid == 200 && !strcmp(p[i].comm, "bash"))
			before = (int)p[i].allocs;
		if (p[i].pid == 200 && !strcmp(p[i].comm, "short-lived-too"))
			after = (int)p[i].allocs;
	}
	assert_int_equal(before, 1);
	assert_int_equal(after, 2);
	done(&r);
}

/*
 * Tasks' cgroups: the start (the file's record), forks inheriting, moves
 * (each a row of its own, named as before), and what each allocation asked
 * of accounting. Many tasks moved one after another: every move makes a
 * row while the task's old row is read (the rows' vector grows under it).
 */
static void test_cgroup_moves(void **state)
{
	static const char snap[] = "kmemtrace-cgroups 1\nmemory 4\nv2 1\n"
				   "100\t-\t/a\t/ma\n2\tk\t/\t/\n";
	struct kmt_cgroups *cg = kmt_cgroups_new();
	struct kmt_comms *comms = kmt_comms_new();
	struct kmt_model_opts o = { 0 };
	struct kmt_event ev = { .cpu = 0, .kind = KMT_EV_KMALLOC, .node = -1, .migratetype = -1,
				.call_site = SITE_A, .bytes_req = 8, .bytes_alloc = 8 };
	const struct kmt_proc *p;
	struct kmt_model *m;
	size_t n, i, moved = 0;
	int32_t pid;

	/* Freed memory overwritten (glibc): a name read from a row that moved reads as garbage. */
	mallopt(M_PERTURB, 0x5a);
	assert_non_null(cg);
	assert_int_equal(kmt_cgroups_parse(cg, snap, strlen(snap)), 0);
	assert_int_equal(kmt_comms_set(comms, 100, "worker", 6), 0);
	o.cgroups = cg;
	o.cmdlines = comms;
	m = kmt_model_new(&o);
	assert_non_null(m);
	/* pid 100 from the record: /a, memory /ma; it asks for a charge, then not. */
	ev.pid = 100, ev.ts = 1, ev.ptr = OBJ(1), ev.flags = KMT_EVF_ACCOUNTED;
	assert_int_equal(kmt_model_event(m, &ev), 0);
	ev.ts = 2, ev.ptr = OBJ(2), ev.flags = KMT_EVF_IRQ;
	assert_int_equal(kmt_model_event(m, &ev), 0);
	/* 2000 tasks each allocate, then move to /b (v2) one by one. */
	for (pid = 1000; pid < 3000; pid++) {
		ev.pid = pid, ev.ts = 10 + (uint64_t)pid, ev.ptr = OBJ(pid), ev.flags = 0;
		assert_int_equal(kmt_model_event(m, &ev), 0);
	}
	for (pid = 1000; pid < 3000; pid++)
		kmt_model_set_cgroup(m, pid, 0, "/b", 2);
	/* A fork of 100 starts where its parent is; a move of v1 memory; another hierarchy is ignored. */
	ev = (struct kmt_event){ .cpu = 0, .kind = KMT_EV_FORK, .ts = 5000, .pid = 100, .pid2 = 101,
				 .str2 = "worker", .str2_len = 6, .node = -1, .migratetype = -1 };
	kmt_model_name_event(m, &ev);
	kmt_model_set_cgroup(m, 101, 4, "/mb", 3);
	kmt_model_set_cgroup(m, 101, 7, "/other", 6);
	ev = (struct kmt_event){ .cpu = 0, .kind = KMT_EV_KMALLOC, .ts = 6000, .pid = 101, .call_site = SITE_B,
				 .ptr = OBJ(9000), .bytes_req = 16, .bytes_alloc = 16, .node = -1, .migratetype = -1,
				 .flags = KMT_EVF_ACCT_UNKNOWN };
	assert_int_equal(kmt_model_event(m, &ev), 0);
	assert_int_equal(kmt_model_finish(m, 7000), 0);
	p = kmt_model_procs(m, &n);
	for (i = 0; i < n; i++) {
		if (p[i].pid >= 1000 && p[i].pid < 3000 && p[i].cgroup && !strcmp(p[i].cgroup, "/b")) {
			assert_string_equal(p[i].comm, "<...>");
			moved++;
		}
		if (p[i].pid == 100) {
			assert_string_equal(p[i].comm, "worker");
			assert_string_equal(p[i].cgroup, "/a");
			assert_string_equal(p[i].memcg, "/ma");
			assert_int_equal(p[i].acct_bytes, 8);
			assert_int_equal(p[i].irq_bytes, 8);
			assert_int_equal(p[i].bytes_alloc, 16);
		}
		if (p[i].pid == 101 && p[i].allocs) {
			assert_string_equal(p[i].comm, "worker");
			assert_string_equal(p[i].cgroup, "/a");
			assert_string_equal(p[i].memcg, "/mb");
			assert_int_equal(p[i].unknown_bytes, 16);
		}
	}
	assert_int_equal(moved, 2000);
	kmt_model_free(m);
	kmt_comms_free(comms);
	kmt_cgroups_free(cg);
	mallopt(M_PERTURB, 0);
}

/* What the hooks saw. */
struct seen {
	struct kmt_object obj[16];
	char cache[16][48];
	int nobj;
	struct { uint64_t obj_ts, ip; uint32_t offset; bool write; char field[16]; } acc[16];
	int nacc;
};

static void on_object(void *arg, const struct kmt_object *o)
{
	struct seen *s = arg;

	assert_true(s->nobj < 16);
	s->obj[s->nobj] = *o;
	snprintf(s->cache[s->nobj], 48, "%s", o->cache ? o->cache : "");
	s->obj[s->nobj].cache = s->cache[s->nobj];
	s->obj[s->nobj++].comm = NULL;
}

static void on_access(void *arg, const struct kmt_object *o, const struct kmt_event *ev)
{
	struct seen *s = arg;

	assert_true(s->nacc < 16);
	s->acc[s->nacc].obj_ts = o->alloc_ts;
	s->acc[s->nacc].ip = ev->call_site;
	s->acc[s->nacc].offset = ev->offset;
	s->acc[s->nacc].write = ev->flags & KMT_EVF_WRITE;
	snprintf(s->acc[s->nacc].field, 16, "%.*s", (int)ev->str2_len, ev->str2);
	s->nacc++;
}

#define IP_W 0xffffffff81300040ULL
#define IP_R 0xffffffff81300080ULL

/*
 * Objects and watchpoint samples: every object's record (freed, live,
 * allocated over, pre-existing), and samples in a second buffer merged by
 * time and attributed to the object live at the address then; a sample
 * after the free is dropped, a loss of samples is not a loss of events.
 */
static void test_objects_and_accesses(void **state)
{
	static struct seen seen;
	struct kmt_model_hooks h = { .object = on_object, .access = on_access, .arg = &seen };
	const struct kmt_access_stat *st;
	const struct kmt_summary *s;
	struct tb *tb = new_tb();
	struct run r;
	size_t n;

	memset(&seen, 0, sizeof(seen));
	tb_kmalloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), 40, 64);
	tb_access(tb, 1, 2 * MS, 10, IP_W, OBJ(1), 32, true, "count");
	tb_access(tb, 0, 2 * MS + 5, 11, IP_R, OBJ(1), 32, false, "count");
	tb_access(tb, 0, 2 * MS + 9, 11, IP_R, OBJ(1), 40, false, "flags");
	tb_kfree(tb, 1, 3 * MS, 11, FREE_A, OBJ(1));
	tb_access(tb, 1, 3 * MS + 1, 11, IP_W, OBJ(1), 32, true, "count");	/* after the free */
	tb_cache_alloc(tb, 1, 4 * MS, 12, SITE_B, OBJ(2), "filp", 232, 256);
	tb_access_lost(tb, 0, 7);
	tb_access(tb, 0, 5 * MS, 12, IP_W, OBJ(2), 0, true, NULL);
	tb_kmalloc(tb, 0, 6 * MS, 10, SITE_A, OBJ(3), 8, 8);
	tb_kmalloc(tb, 0, 7 * MS, 10, SITE_A, OBJ(3), 16, 16);	/* over a live one */
	tb_kfree(tb, 1, 8 * MS, 11, FREE_A, OBJ(9));		/* allocated before */
	next_hooks = &h;
	analyse(&r, tb, -1, -1);
	s = kmt_model_summary(r.m);
	assert_int_equal(s->access_hits, 5);
	assert_int_equal(s->access_writes, 2);
	assert_int_equal(s->access_reads, 2);
	assert_int_equal(s->access_dropped, 1);
	assert_int_equal(s->access_lost, 7);
	assert_int_equal(s->access_objects, 2);
	assert_false(s->affected_by_loss);	/* losing samples loses no allocation */
	assert_int_equal(s->lost_events, 0);

	/* In order: OBJ(1) freed, OBJ(3) allocated over, OBJ(9) pre-existing, then the live. */
	assert_int_equal(seen.nobj, 5);
	assert_int_equal(seen.obj[0].ptr, OBJ(1));
	assert_int_equal(seen.obj[0].fate, KMT_FATE_FREED);
	assert_int_equal(seen.obj[0].alloc_site, SITE_A);
	assert_int_equal(seen.obj[0].free_site, FREE_A);
	assert_int_equal(seen.obj[0].alloc_pid, 10);
	assert_int_equal(seen.obj[0].free_pid, 11);
	assert_int_equal(seen.obj[0].alloc_ts, 1 * MS);
	assert_int_equal(seen.obj[0].free_ts, 3 * MS);
	assert_int_equal(seen.obj[0].bytes_req, 40);
	assert_int_equal(seen.obj[0].bytes_alloc, 64);
	assert_string_equal(seen.obj[0].cache, "kmalloc-64");
	assert_int_equal(seen.obj[1].ptr, OBJ(3));
	assert_int_equal(seen.obj[1].fate, KMT_FATE_UNSEEN_FREE);
	assert_int_equal(seen.obj[1].bytes_alloc, 8);
	assert_int_equal(seen.obj[2].ptr, OBJ(9));
	assert_int_equal(seen.obj[2].fate, KMT_FATE_PREEXISTING);
	assert_int_equal(seen.obj[2].free_ts, 8 * MS);
	assert_int_equal(seen.obj[3].ptr, OBJ(2));		/* live, oldest first */
	assert_int_equal(seen.obj[3].fate, KMT_FATE_LIVE);
	assert_string_equal(seen.obj[3].cache, "filp");
	assert_int_equal(seen.obj[3].free_ts, 0);
	assert_int_equal(seen.obj[4].ptr, OBJ(3));
	assert_int_equal(seen.obj[4].bytes_alloc, 16);

	assert_int_equal(seen.nacc, 4);
	assert_int_equal(seen.acc[0].ip, IP_W);
	assert_true(seen.acc[0].write);
	assert_string_equal(seen.acc[0].field, "count");
	assert_int_equal(seen.acc[0].obj_ts, 1 * MS);
	assert_int_equal(seen.acc[2].offset, 40);
	assert_int_equal(seen.acc[3].obj_ts, 4 * MS);	/* the filp object */

	st = kmt_model_access(r.m, &n);
	assert_int_equal(n, 4);		/* (A,32,W) (A,32,R) (A,40,R) (B,0,W) */
	assert_int_equal(st[0].site, SITE_A);
	assert_int_equal(st[0].offset, 32);
	assert_int_equal(st[0].ip, IP_W);
	assert_int_equal(st[0].writes, 1);
	assert_int_equal(st[0].reads, 0);
	assert_string_equal(st[0].field, "count");
	assert_int_equal(st[1].ip, IP_R);
	assert_int_equal(st[1].reads, 1);
	assert_int_equal(st[2].offset, 40);
	assert_string_equal(st[2].field, "flags");
	assert_int_equal(st[3].site, SITE_B);
	assert_int_equal(st[3].writes, 1);
	done(&r);
}

/* Frees (pid 10, the interrupted task) of objects not seen allocated: an RCU callback's batch. */
static void rcu_batch(struct tb *tb, uint64_t ts, int n)
{
	int i;

	for (i = 0; i < n; i++)
		tb_kfree(tb, 0, ts, 10, FREE_A, OBJ(1000 + i));
}

/*
 * --stack: a kernel stack right after a page allocation on the same CPU
 * names the function that asked for the pages (the first frame outside the
 * allocator); so does one after an interrupt's frees in the same task. A
 * stack after another allocation, or in another task, is not the page's.
 */
static void test_page_sites(void **state)
{
	static const char ks[] = "ffffffff81000000 T __alloc_pages_noprof\n"
				 "ffffffff81100000 T my_page_user\n"
				 "ffffffff81200000 T other_fn\n"
				 "ffffffff81300000 T zzz_end\n";
	const uint64_t st[] = { 0xffffffff81000010ULL, 0xffffffff81100020ULL, 0xffffffff81200030ULL };
	const uint64_t st2[] = { 0xffffffff81200040ULL };
	struct kmt_symbols *syms = kmt_symbols_parse(ks, strlen(ks));
	struct kmt_model_opts mo = { .syms = syms };
	const struct kmt_site *ps;
	struct tb *tb = new_tb();
	struct run r;
	size_t n;

	tb_kallsyms(tb, ks);
	tb_emit(tb, 0, 1 * MS, "kmem", "mm_page_alloc", 10, (struct tb_val[]){
		{ "pfn", 0x1000 }, { "order", 2 }, { "gfp_flags", 0xcc0 }, { "migratetype", 0 }, { NULL } });
	tb_emit(tb, 0, 1 * MS, "ftrace", "kernel_stack", 10, (struct tb_val[]){
		{ "size", 3 }, { "caller", 0, NULL, st, 3 }, { NULL } });
	tb_emit(tb, 1, 2 * MS, "kmem", "mm_page_alloc", 10, (struct tb_val[]){
		{ "pfn", 0x2000 }, { "order", 0 }, { "gfp_flags", 0xcc0 }, { "migratetype", 0 }, { NULL } });
	tb_kmalloc(tb, 1, 3 * MS, 10, SITE_A, OBJ(1), 32, 32);	/* the stack below is not the page's */
	tb_emit(tb, 1, 3 * MS, "ftrace", "kernel_stack", 10, (struct tb_val[]){
		{ "size", 1 }, { "caller", 0, NULL, st2, 1 }, { NULL } });
	/* An RCU callback's kfree(NULL) between: still the page's. */
	tb_emit(tb, 0, 4 * MS, "kmem", "mm_page_alloc", 10, (struct tb_val[]){
		{ "pfn", 0x3000 }, { "order", 0 }, { "gfp_flags", 0xcc0 }, { "migratetype", 0 }, { NULL } });
	tb_kfree(tb, 0, 4 * MS, 10, FREE_A, 0);
	tb_emit(tb, 0, 4 * MS, "ftrace", "kernel_stack", 10, (struct tb_val[]){
		{ "size", 3 }, { "caller", 0, NULL, st, 3 }, { NULL } });
	/* Another task's stack after a free: not the page's. */
	tb_emit(tb, 0, 5 * MS, "kmem", "mm_page_alloc", 10, (struct tb_val[]){
		{ "pfn", 0x4000 }, { "order", 0 }, { "gfp_flags", 0xcc0 }, { "migratetype", 0 }, { NULL } });
	tb_kfree(tb, 0, 5 * MS, 11, FREE_A, 0);
	tb_emit(tb, 0, 5 * MS, "ftrace", "kernel_stack", 11, (struct tb_val[]){
		{ "size", 1 }, { "caller", 0, NULL, st2, 1 }, { NULL } });
	/* An RCU callback's batch of 64 frees between, or 300: still the page's. */
	tb_emit(tb, 0, 6 * MS, "kmem", "mm_page_alloc", 10, (struct tb_val[]){
		{ "pfn", 0x5000 }, { "order", 0 }, { "gfp_flags", 0xcc0 }, { "migratetype", 0 }, { NULL } });
	rcu_batch(tb, 6 * MS, 64);
	tb_emit(tb, 0, 6 * MS, "ftrace", "kernel_stack", 10, (struct tb_val[]){
		{ "size", 3 }, { "caller", 0, NULL, st, 3 }, { NULL } });
	tb_emit(tb, 0, 7 * MS, "kmem", "mm_page_alloc", 10, (struct tb_val[]){
		{ "pfn", 0x6000 }, { "order", 0 }, { "gfp_flags", 0xcc0 }, { "migratetype", 0 }, { NULL } });
	rcu_batch(tb, 7 * MS, 300);
	tb_emit(tb, 0, 7 * MS, "ftrace", "kernel_stack", 10, (struct tb_val[]){
		{ "size", 3 }, { "caller", 0, NULL, st, 3 }, { NULL } });
	next_opts = &mo;
	analyse(&r, tb, -1, -1);
	ps = kmt_model_page_sites(r.m, &n);
	assert_int_equal(n, 1);
	assert_int_equal(ps[0].addr, 0xffffffff81100000ULL);
	assert_int_equal(ps[0].allocs, 4);
	assert_int_equal(ps[0].bytes_alloc, 16384 + 3 * 4096);
	done(&r);
	kmt_symbols_free(syms);
}

/*
 * What the kernel's design or the recording's own filter explains is not
 * misuse: a free naming another cache, of an object whose cache the kernel
 * frees untraced, is reuse (one row per cache, with why); a recording that
 * left frees out (-F, -p, --filter) makes allocations over live objects and
 * frees naming another cache unseen frees, no finding at all.
 */
static void test_untraced_and_filters(void **state)
{
	struct kmt_model_opts mo = { .partial_frees = true };
	const struct kmt_untraced *u;
	struct run r;
	size_t n, nc;
	int partial;

	for (partial = 0; partial < 2; partial++) {
		struct tb *tb = new_tb();

		tb_cache_alloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), "maple_node", 256, 256);
		tb_cache_alloc(tb, 0, 2 * MS, 10, SITE_A, OBJ(1), "maple_node", 256, 256);	/* over live */
		tb_cache_free(tb, 0, 3 * MS, 10, FREE_A, OBJ(1), "lsm_inode_cache");	/* reused */
		tb_kmalloc(tb, 1, 4 * MS, 11, SITE_B, OBJ(2), 32, 32);
		tb_cache_free(tb, 1, 5 * MS, 11, FREE_A, OBJ(2), "filp");		/* cache free of kmalloc */
		next_opts = partial ? &mo : NULL;
		analyse(&r, tb, -1, -1);
		u = kmt_model_untraced(r.m, &n);
		if (!partial) {
			assert_int_equal(n, 1);
			assert_string_equal(kmt_model_caches(r.m, &nc)[u[0].cache].name, "maple_node");
			assert_int_equal(u[0].alloc_over_live, 1);
			assert_int_equal(u[0].reused, 1);
			assert_int_equal(u[0].count, 2);
			assert_non_null(strstr(u[0].why, "sheaves"));
			assert_int_equal(errors(&r), 1);	/* the kmalloc object freed as filp */
		} else {
			assert_int_equal(n, 0);
			assert_int_equal(errors(&r), 0);
			assert_int_equal(kmt_model_misuse(r.m, &n) ? n : n, 0);
			assert_int_equal(kmt_model_summary(r.m)->unseen_frees, 3);
			assert_int_equal(kmt_model_summary(r.m)->allocs, kmt_model_summary(r.m)->frees +
					 kmt_model_summary(r.m)->live_objects + kmt_model_summary(r.m)->unseen_frees);
		}
		done(&r);
	}
}

/* Misuse comes grouped by kind, site and cache; errors first, then by count. */
static void test_misuse_grouped(void **state)
{
	struct tb *tb = new_tb();
	const struct kmt_misuse *v;
	const struct kmt_untraced *u;
	struct run r;
	size_t n, nc;
	int i;

	/* Three objects of kmalloc-32 from two sites, each allocated over at SITE_B. */
	for (i = 0; i < 3; i++) {
		tb_kmalloc(tb, 0, (uint64_t)(10 * i + 1) * MS, 10, i ? SITE_A : FREE_A, OBJ(i), 32, 32);
		/* On the other CPU: not the kernel's doubled large kmalloc. */
		tb_kmalloc(tb, 1, (uint64_t)(10 * i + 2) * MS, 11, SITE_B, OBJ(i), 32, 32);
	}
	/* One error, after them in time: a kmalloc object freed as a cache object. */
	tb_kmalloc(tb, 0, 50 * MS, 10, SITE_A, OBJ(9), 32, 32);
	tb_cache_free(tb, 0, 51 * MS, 12, FREE_A, OBJ(9), "filp");
	analyse(&r, tb, -1, -1);
	v = kmt_model_misuse(r.m, &n);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].kind, KMT_MISUSE_CACHE_FREE_KMALLOC);
	/* The allocations over live objects: the kernel's untraced frees, one row for the cache. */
	u = kmt_model_untraced(r.m, &n);
	assert_int_equal(n, 1);
	assert_string_equal(kmt_model_caches(r.m, &nc)[u[0].cache].name, "kmalloc-32");
	assert_int_equal(u[0].alloc_over_live, 3);
	assert_int_equal(u[0].count, 3);
	assert_int_equal(u[0].first_site, SITE_B);
	assert_int_equal(u[0].first_alloc_site, FREE_A);	/* the first occurrence's */
	assert_int_equal(u[0].first_ts, 2 * MS);
	assert_non_null(strstr(u[0].why, "kfree_bulk"));
	/* allocs = frees + live + uncertain + unseen frees, per site */
	assert_int_equal(site(&r, SITE_A)->unseen_frees, 2);
	assert_int_equal(site(&r, SITE_A)->allocs, site(&r, SITE_A)->frees +
			 site(&r, SITE_A)->live_objects + site(&r, SITE_A)->uncertain +
			 site(&r, SITE_A)->unseen_frees);
	done(&r);
}

/* With a task filter, every count concerns the chosen task only. */
static void test_task_filter_scope(void **state)
{
	struct kmt_model_opts mo = { .pid = 10 };
	const struct kmt_summary *s;
	struct tb *tb = new_tb();
	struct run r;

	tb_kmalloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), 32, 32);
	tb_kfree(tb, 1, 2 * MS, 20, FREE_A, OBJ(1));		/* another frees ours: counted */
	tb_kmalloc(tb, 0, 3 * MS, 20, SITE_A, OBJ(2), 32, 32);	/* not ours */
	tb_kfree(tb, 0, 4 * MS, 20, FREE_A, OBJ(2));
	tb_emit(tb, 0, 5 * MS, "kmem", "mm_page_alloc", 10, (struct tb_val[]){
		{ "pfn", 0x1000 }, { "order", 0 }, { "gfp_flags", 0xcc0 }, { "migratetype", 0 }, { NULL } });
	tb_emit(tb, 1, 6 * MS, "kmem", "mm_page_free", 30, (struct tb_val[]){
		{ "pfn", 0x1000 }, { "order", 0 }, { NULL } });		/* our page: counted */
	tb_emit(tb, 1, 7 * MS, "kmem", "mm_page_free", 30, (struct tb_val[]){
		{ "pfn", 0x2000 }, { "order", 0 }, { NULL } });		/* not ours */
	tb_emit(tb, 0, 8 * MS, "percpu", "percpu_alloc_percpu", 20, (struct tb_val[]){
		{ "ptr", 0x100 }, { "size", 8 }, { "bytes_alloc", 16 }, { NULL } });
	next_opts = &mo;
	analyse(&r, tb, -1, -1);
	s = kmt_model_summary(r.m);
	assert_int_equal(s->allocs, 1);
	assert_int_equal(s->frees, 1);
	assert_int_equal(s->page_allocs, 1);
	assert_int_equal(s->page_frees, 1);
	assert_int_equal(s->pcpu_allocs, 0);
	assert_int_equal(s->events, 4);
	assert_int_equal(s->by_kind[KMT_EV_KFREE], 1);
	assert_int_equal(s->by_kind[KMT_EV_PAGE_FREE], 1);
	assert_true(s->filter_matched);
	done(&r);
	mo.pid = 99;
	tb = new_tb();
	tb_kmalloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), 32, 32);
	next_opts = &mo;
	analyse(&r, tb, -1, -1);
	assert_false(kmt_model_summary(r.m)->filter_matched);
	assert_int_equal(kmt_model_summary(r.m)->events, 0);
	done(&r);
}

/* vmalloc areas: by address whoever frees, sizes, live areas, allocating functions. */
static void test_vmalloc(void **state)
{
	static const char ks[] = "ffffffff81000000 T alloc_vmap_area\n"
				 "ffffffff81080000 T __vmalloc_node_range_noprof\n"
				 "ffffffff81100000 T array_map_alloc\n"
				 "ffffffff81300000 T zzz_end\n";
	const uint64_t st[] = { 0xffffffff81000010ULL, 0xffffffff81080010ULL, 0xffffffff81100020ULL };
	const uint64_t cut[] = { 0xffffffff81000010ULL };
	struct kmt_symbols *syms = kmt_symbols_parse(ks, strlen(ks));
	struct kmt_model_opts mo = { .syms = syms };
	const struct kmt_summary *s;
	const struct kmt_vmap_size *z;
	const struct kmt_vmap_area *a;
	const struct kmt_site *f;
	struct tb *tb = new_tb();
	struct run r;
	size_t n;

	tb_kallsyms(tb, ks);
	/* An area whose stack names its caller, freed by a kworker. */
	tb_emit(tb, 0, 1 * MS, "vmalloc", "alloc_vmap_area", 10, (struct tb_val[]){
		{ "addr", 0xffffc90000100000ULL }, { "size", 139264 }, { NULL } });
	tb_emit(tb, 0, 1 * MS, "ftrace", "kernel_stack", 10, (struct tb_val[]){
		{ "size", 3 }, { "caller", 0, NULL, st, 3 }, { NULL } });
	tb_emit(tb, 1, 2 * MS, "vmalloc", "free_vmap_area_noflush", 77, (struct tb_val[]){
		{ "va_start", 0xffffc90000100000ULL }, { NULL } });
	/* One whose own stack stops in the allocator: its vmap_area allocation's names it. */
	tb_cache_alloc(tb, 0, 3 * MS, 10, 0xffffffff81000020ULL, OBJ(5), "vmap_area", 72, 72);
	tb_emit(tb, 0, 3 * MS, "ftrace", "kernel_stack", 10, (struct tb_val[]){
		{ "size", 3 }, { "caller", 0, NULL, st, 3 }, { NULL } });
	tb_emit(tb, 0, 4 * MS, "vmalloc", "alloc_vmap_area", 10, (struct tb_val[]){
		{ "addr", 0xffffc90000200000ULL }, { "size", 139264 }, { NULL } });
	tb_emit(tb, 0, 4 * MS, "ftrace", "kernel_stack", 10, (struct tb_val[]){
		{ "size", 1 }, { "caller", 0, NULL, cut, 1 }, { NULL } });
	/* A failure, and a free of an area from before the trace. */
	tb_emit(tb, 0, 5 * MS, "vmalloc", "alloc_vmap_area", 10, (struct tb_val[]){
		{ "addr", 0 }, { "size", 8192 }, { "failed", 1 }, { NULL } });
	tb_emit(tb, 1, 6 * MS, "vmalloc", "free_vmap_area_noflush", 77, (struct tb_val[]){
		{ "va_start", 0xffffc90000900000ULL }, { NULL } });
	next_opts = &mo;
	analyse(&r, tb, -1, -1);
	s = kmt_model_summary(r.m);
	assert_int_equal(s->vmap_allocs, 2);
	assert_int_equal(s->vmap_frees, 2);
	assert_int_equal(s->vmap_preexisting_frees, 1);
	assert_int_equal(s->vmap_failures, 1);
	assert_int_equal(s->vmap_live, 1);
	assert_int_equal(s->vmap_live_bytes, 139264);
	z = kmt_model_vmap_sizes(r.m, &n);
	assert_int_equal(n, 1);
	assert_int_equal(z[0].size, 139264);
	assert_int_equal(z[0].allocs, 2);
	assert_int_equal(z[0].frees, 1);
	assert_int_equal(z[0].live, 1);
	f = kmt_model_vmap_sites(r.m, &n);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].addr, 0xffffffff81100000ULL);
	assert_int_equal(f[0].allocs, 2);
	assert_int_equal(f[0].frees, 1);
	a = kmt_model_vmap_live(r.m, &n);
	assert_int_equal(n, 1);
	assert_int_equal(a[0].addr, 0xffffc90000200000ULL);
	assert_int_equal(a[0].age, 2 * MS);
	assert_int_equal(a[0].function, 0xffffffff81100000ULL);
	done(&r);
	kmt_symbols_free(syms);
}

/*
 * A recording that filtered allocations (watch, -p, --filter): an address
 * freed twice was allocated again where the recording did not look — not a
 * double free.
 */
static void test_partial_allocations(void **state)
{
	struct kmt_model_opts mo = { .partial_allocs = true };
	const struct kmt_summary *s;
	struct tb *tb = new_tb();
	struct run r;

	tb_kmalloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), 8, 8);
	tb_kfree(tb, 0, 2 * MS, 10, FREE_A, OBJ(1));
	tb_kfree(tb, 0, 3 * MS, 10, FREE_A, OBJ(1));	/* allocated unseen in between */
	tb_kfree(tb, 0, 4 * MS, 10, FREE_A, OBJ(1));
	next_opts = &mo;
	analyse(&r, tb, -1, -1);
	s = kmt_model_summary(r.m);
	assert_true(s->partial_allocs);
	assert_int_equal(s->unseen_allocs, 2);
	assert_int_equal(misuse(&r, KMT_MISUSE_DOUBLE_FREE, NULL), 0);
	assert_int_equal(misuse(&r, KMT_MISUSE_UNTRACED_ALLOC, NULL), 0);
	assert_int_equal(s->frees, 1);
	done(&r);

	/* The same trace from a complete recording: two double frees (as untraced allocations). */
	tb = new_tb();
	tb_kmalloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), 8, 8);
	tb_kfree(tb, 0, 2 * MS, 10, FREE_A, OBJ(1));
	tb_kfree(tb, 0, 3 * MS, 10, FREE_A, OBJ(1));
	tb_kfree(tb, 0, 4 * MS, 10, FREE_A, OBJ(1));
	analyse(&r, tb, -1, -1);
	assert_int_equal(misuse(&r, KMT_MISUSE_UNTRACED_ALLOC, NULL), 2);
	done(&r);
}

/* A stack event with frames @f after the last event on @cpu. */
static void stack(struct tb *tb, int cpu, uint64_t ts, const uint64_t *f, int n)
{
	tb_emit(tb, cpu, ts, "ftrace", "kernel_stack", 10, (struct tb_val[]){
		{ "size", (uint64_t)n }, { "caller", 0, NULL, f, n }, { NULL } });
}

/* Slab allocations by call site and the callers above it in their stacks. */
static void test_slab_stacks(void **state)
{
	static const char ks[] = "ffffffff81000000 T trace_event_raw_event_kmalloc\n"
				 "ffffffff81010000 T __kmalloc_noprof\n"
				 "ffffffff81020000 T __kvmalloc_node_noprof\n"
				 "ffffffff81100000 T site_fn\n"
				 "ffffffff81400000 T caller_one\n"
				 "ffffffff81500000 T caller_two\n"
				 "ffffffff81600000 T syscall_fn\n"
				 "ffffffff81700000 T zzz_end\n";
	const uint64_t tr = 0xffffffff81000010ULL, km = 0xffffffff81010010ULL, kv = 0xffffffff81020010ULL;
	const uint64_t c1 = 0xffffffff81400010ULL, c2 = 0xffffffff81500010ULL, sys = 0xffffffff81600010ULL;
	const uint64_t one[] = { tr, km, SITE_A, c1, sys }, two[] = { tr, km, SITE_A, c2, sys };
	const uint64_t b2[] = { tr, km, SITE_B, c2, sys }, nobody[] = { tr, km, c2, sys };
	/* Inlined: the call site's own frame is not in the stack. */
	const uint64_t inl[] = { tr, km, 0xffffffff81100040ULL, c2, sys };
	const uint64_t big[] = { tr, kv, 0xffffffff81100050ULL, c1, sys };
	struct kmt_symbols *syms = kmt_symbols_parse(ks, strlen(ks));
	struct kmt_model_opts mo = { .syms = syms };
	const struct kmt_site_stack *v;
	const uint64_t *f;
	struct run r;
	size_t n, nf;
	int depth;

	for (depth = 0; depth <= 1; depth++) {
		struct tb *tb = new_tb();

		tb_kallsyms(tb, ks);
		tb_kmalloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), 100, 128);
		stack(tb, 0, 1 * MS, one, 5);
		tb_kmalloc(tb, 0, 2 * MS, 10, SITE_A, OBJ(2), 100, 128);
		stack(tb, 0, 2 * MS, one, 5);
		tb_kmalloc(tb, 0, 3 * MS, 10, SITE_A, OBJ(3), 100, 128);
		stack(tb, 0, 3 * MS, two, 5);
		tb_kmalloc(tb, 0, 4 * MS, 10, SITE_A, OBJ(4), 100, 128);
		stack(tb, 0, 4 * MS, inl, 5);
		tb_kmalloc(tb, 0, 5 * MS, 10, SITE_A, OBJ(5), 100, 128);	/* no stack */
		tb_kfree(tb, 0, 6 * MS, 10, FREE_A, OBJ(1));
		stack(tb, 0, 6 * MS, nobody, 4);			/* names no waiting call site */
		tb_kfree(tb, 1, 7 * MS, 10, FREE_A, OBJ(3));
		/* A large kmalloc traced twice: the first (and its stack) undone. */
		tb_kmalloc(tb, 0, 8 * MS, 10, SITE_B, OBJ(9), 20000, 32768);
		stack(tb, 0, 8 * MS, big, 5);
		tb_kmalloc(tb, 0, 8 * MS, 10, SITE_A, OBJ(9), 20000, 32768);
		stack(tb, 0, 8 * MS, big, 5);
		/*
		 * An interrupt between an allocation and its stack: an RCU
		 * callback's kfree(NULL), or an allocation with its own stack
		 * first. The stack is still the allocation's.
		 */
		tb_kmalloc(tb, 0, 9 * MS, 10, SITE_A, OBJ(6), 100, 128);
		tb_kfree(tb, 0, 9 * MS, 0, FREE_A, 0);
		stack(tb, 0, 9 * MS, one, 5);
		tb_kmalloc(tb, 0, 10 * MS, 10, SITE_A, OBJ(7), 100, 128);
		tb_kmalloc(tb, 0, 10 * MS, 0, SITE_B, OBJ(8), 100, 128);
		stack(tb, 0, 10 * MS, b2, 5);
		stack(tb, 0, 10 * MS, one, 5);
		mo.stack_depth = (uint32_t)depth;
		next_opts = &mo;
		analyse(&r, tb, -1, -1);
		assert_int_equal(site(&r, SITE_A)->allocs, 8);
		/* SITE_B: the large kmalloc's first event undone; the interrupt's. */
		v = kmt_model_site_stacks(r.m, SITE_B, &n);
		assert_int_equal(n, 1);
		assert_int_equal(v[0].allocs, 1);
		v = kmt_model_site_stacks(r.m, SITE_A, &n);
		assert_int_equal(n, 2);
		/* Most bytes first: caller_one (4 x 128 + 32768), then caller_two. */
		assert_int_equal(v[0].allocs, 5);
		assert_int_equal(v[0].frees, 1);
		assert_int_equal(v[0].bytes_req, 20400);
		assert_int_equal(v[0].bytes_alloc, 33280);
		assert_int_equal(v[0].live_objects, 4);
		assert_int_equal(v[0].live_bytes, 33152);
		assert_int_equal(v[1].allocs, 2);
		assert_int_equal(v[1].frees, 1);
		assert_int_equal(v[1].live_objects, 1);
		assert_int_equal(v[1].live_bytes, 128);
		f = kmt_model_stack(r.m, v[0].stack, &nf);
		assert_int_equal(nf, depth ? 1 : 2);
		assert_int_equal(f[0], c1);
		if (!depth)
			assert_int_equal(f[1], sys);
		f = kmt_model_stack(r.m, v[1].stack, &nf);
		assert_int_equal(nf, depth ? 1 : 2);
		assert_int_equal(f[0], c2);
		kmt_model_stacks(r.m, &n);
		assert_int_equal(n, 3);		/* rows: SITE_A's two, SITE_B's one */
		done(&r);
	}
	kmt_symbols_free(syms);
}

/*
 * An interrupt's RCU callbacks free a batch between an allocation and its
 * stack (17 to 120 events seen on 6.18): the stack is still the
 * allocation's, however far back, if nothing was allocated between.
 */
static void test_stack_after_rcu_batch(void **state)
{
	static const char ks[] = "ffffffff81000000 T trace_event_raw_event_kmalloc\n"
				 "ffffffff81010000 T __kmalloc_noprof\n"
				 "ffffffff81100000 T site_fn\n"
				 "ffffffff81400000 T caller_one\n"
				 "ffffffff81700000 T zzz_end\n";
	const uint64_t one[] = { 0xffffffff81000010ULL, 0xffffffff81010010ULL, SITE_A, 0xffffffff81400010ULL };
	struct kmt_symbols *syms = kmt_symbols_parse(ks, strlen(ks));
	struct kmt_model_opts mo = { .syms = syms };
	const struct kmt_site_stack *v;
	struct tb *tb = new_tb();
	struct run r;
	size_t n;

	tb_kallsyms(tb, ks);
	/* Claimed: 17 frees between. */
	tb_kmalloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), 100, 128);
	rcu_batch(tb, 1 * MS, 17);
	stack(tb, 0, 1 * MS, one, 4);
	/* Not: an allocation without a stack between, and 20 events back. */
	tb_kmalloc(tb, 0, 2 * MS, 10, SITE_A, OBJ(2), 100, 128);
	rcu_batch(tb, 2 * MS, 10);
	tb_kmalloc(tb, 0, 2 * MS, 10, SITE_B, OBJ(3), 100, 128);
	rcu_batch(tb, 2 * MS, 10);
	stack(tb, 0, 2 * MS, one, 4);
	/* Claimed: 300 frees between. */
	tb_kmalloc(tb, 0, 3 * MS, 10, SITE_A, OBJ(4), 100, 128);
	rcu_batch(tb, 3 * MS, 300);
	stack(tb, 0, 3 * MS, one, 4);
	/* Not: another task's stack after the frees. */
	tb_kmalloc(tb, 0, 4 * MS, 10, SITE_A, OBJ(5), 100, 128);
	rcu_batch(tb, 4 * MS, 20);
	tb_emit(tb, 0, 4 * MS, "ftrace", "kernel_stack", 11, (struct tb_val[]){
		{ "size", 4 }, { "caller", 0, NULL, one, 4 }, { NULL } });
	next_opts = &mo;
	analyse(&r, tb, -1, -1);
	assert_int_equal(site(&r, SITE_A)->allocs, 4);
	v = kmt_model_site_stacks(r.m, SITE_A, &n);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].allocs, 2);		/* OBJ(1)'s and OBJ(4)'s */
	assert_int_equal(v[0].live_objects, 2);
	done(&r);
	kmt_symbols_free(syms);
}

/*
 * A stack right after a per-CPU area's allocation is that area's (dump says
 * so), not a waiting slab allocation's whose call site is among its frames.
 */
static void test_pcpu_stack(void **state)
{
	static const char ks[] = "ffffffff81000000 T pcpu_alloc_noprof\n"
				 "ffffffff81100000 T site_fn\n"
				 "ffffffff81300000 T zzz_end\n";
	const uint64_t st[] = { 0xffffffff81000010ULL, SITE_A };
	struct kmt_symbols *syms = kmt_symbols_parse(ks, strlen(ks));
	struct kmt_model_opts mo = { .syms = syms };
	struct tb *tb = new_tb();
	struct run r;
	uint64_t ptr = 0;
	size_t n;

	tb_kallsyms(tb, ks);
	tb_kmalloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), 100, 128);	/* its stack lost */
	tb_emit(tb, 0, 1 * MS, "percpu", "percpu_alloc_percpu", 10, (struct tb_val[]){
		{ "ptr", 0x100 }, { "size", 8 }, { "bytes_alloc", 16 }, { NULL } });
	stack(tb, 0, 1 * MS, st, 2);
	next_opts = &mo;
	analyse(&r, tb, -1, -1);
	assert_int_equal(kmt_model_stack_claim(r.m, &ptr), KMT_EV_PCPU_ALLOC);
	assert_int_equal(ptr, 0x100);
	kmt_model_site_stacks(r.m, SITE_A, &n);
	assert_int_equal(n, 0);
	done(&r);
	kmt_symbols_free(syms);
}

/*
 * Sampled by time (record --stack-sample): while stacks are on, every event
 * has one, frees too. A stack right after an event that allocates nothing
 * is that event's, even where it names a waiting allocation's call site or
 * follows a page allocation that has none.
 */
static void test_sliced_stacks(void **state)
{
	static const char ks[] = "ffffffff81000000 T __alloc_pages_noprof\n"
				 "ffffffff81100000 T site_fn\n"
				 "ffffffff81400000 T caller_one\n"
				 "ffffffff81600000 T syscall_fn\n"
				 "ffffffff81700000 T zzz_end\n";
	const uint64_t c1 = 0xffffffff81400010ULL, sys = 0xffffffff81600010ULL;
	const uint64_t one[] = { SITE_A, c1, sys }, page[] = { 0xffffffff81000010ULL, c1, sys };
	struct kmt_symbols *syms = kmt_symbols_parse(ks, strlen(ks));
	struct kmt_model_opts mo = { .syms = syms, .stack_sample = 16, .stack_slices = true };
	const struct kmt_site_stack *v;
	const struct kmt_site *ps;
	struct tb *tb = new_tb();
	struct run r;
	size_t n;

	tb_kallsyms(tb, ks);
	/* Before a slice: an allocation without a stack; in it, a free with one. */
	tb_kmalloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), 100, 128);
	tb_kfree(tb, 0, 1 * MS, 10, FREE_A, OBJ(9));
	stack(tb, 0, 1 * MS, one, 3);
	/* A page without a stack, then a free with one, in the same task. */
	tb_emit(tb, 0, 2 * MS, "kmem", "mm_page_alloc", 10, (struct tb_val[]){
		{ "pfn", 0x1000 }, { "order", 0 }, { "gfp_flags", 0xcc0 }, { "migratetype", 0 }, { NULL } });
	tb_kfree(tb, 0, 2 * MS, 10, FREE_A, OBJ(8));
	stack(tb, 0, 2 * MS, page, 3);
	/* An allocation and its stack, with an interrupt's free and its stack between. */
	tb_kmalloc(tb, 0, 3 * MS, 10, SITE_A, OBJ(2), 100, 128);
	tb_kfree(tb, 0, 3 * MS, 10, FREE_A, OBJ(7));
	stack(tb, 0, 3 * MS, page, 3);
	stack(tb, 0, 3 * MS, one, 3);
	/* A page and its own stack. */
	tb_emit(tb, 0, 4 * MS, "kmem", "mm_page_alloc", 10, (struct tb_val[]){
		{ "pfn", 0x2000 }, { "order", 0 }, { "gfp_flags", 0xcc0 }, { "migratetype", 0 }, { NULL } });
	stack(tb, 0, 4 * MS, page, 3);
	next_opts = &mo;
	analyse(&r, tb, -1, -1);
	assert_int_equal(kmt_model_summary(r.m)->stack_sample, 16);
	assert_true(kmt_model_summary(r.m)->stack_slices);
	assert_int_equal(site(&r, SITE_A)->allocs, 2);
	v = kmt_model_site_stacks(r.m, SITE_A, &n);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].allocs, 1);		/* OBJ(2)'s, not OBJ(1)'s */
	ps = kmt_model_page_sites(r.m, &n);
	assert_int_equal(n, 1);
	assert_int_equal(ps[0].allocs, 1);		/* pfn 0x2000's, not 0x1000's */
	done(&r);
	kmt_symbols_free(syms);
}

/* The time series and the other details a picture needs add up to the summary. */
static void test_detail(void **state)
{
	struct kmt_model_opts mo = { .detail = true };
	const struct kmt_timeline *t;
	const struct kmt_summary *s;
	const struct kmt_group *g;
	const struct kmt_size_count *z;
	const struct kmt_cache *c;
	struct tb *tb = new_tb();
	uint64_t allocs = 0, frees = 0, pages = 0, forks = 0, ba = 0, bf = 0;
	int64_t live = 0, filp = 0, site_a = 0;
	struct run r;
	size_t n, i, k;

	tb_kmalloc(tb, 0, 1 * MS, 10, SITE_A, OBJ(1), 100, 128);
	tb_cache_alloc(tb, 0, 2 * MS, 10, SITE_B, OBJ(2), "filp", 64, 64);
	tb_kfree(tb, 1, 3 * MS, 10, FREE_A, OBJ(1));
	tb_kfree(tb, 1, 3 * MS, 10, FREE_A, OBJ(7));		/* from before the trace */
	tb_emit(tb, 0, 4 * MS, "kmem", "mm_page_alloc", 10, (struct tb_val[]){
		{ "pfn", 0x1000 }, { "order", 2 }, { "gfp_flags", 0xcc0 }, { "migratetype", 0 }, { NULL } });
	tb_emit(tb, 0, 5 * MS, "sched", "sched_process_fork", 10, (struct tb_val[]){
		{ "parent_comm", 0, "sh" }, { "parent_pid", 10 }, { "child_comm", 0, "sh" },
		{ "child_pid", 11 }, { NULL } });
	tb_kmalloc(tb, 0, 6 * MS, 11, SITE_A, OBJ(3), 100, 128);
	tb_kmalloc(tb, 1, 7 * MS, 11, SITE_A, OBJ(3), 100, 128);	/* OBJ(3) freed unseen */
	tb_lost(tb, 1, 5);
	tb_kmalloc(tb, 1, 1000 * MS, 11, SITE_A, OBJ(4), 100, 128);	/* widens the intervals */
	next_opts = &mo;
	analyse(&r, tb, -1, -1);
	s = kmt_model_summary(r.m);
	t = kmt_model_timeline(r.m);
	assert_non_null(t);
	assert_int_equal(t->start, 1 * MS);
	assert_true(t->n <= KMT_TL_BUCKETS && t->n * t->width > 999 * MS);
	assert_true((t->n - 1) * t->width <= 999 * MS);
	for (i = 0; i < t->n; i++) {
		allocs += t->allocs[i];
		frees += t->frees[i];
		ba += t->bytes_alloc[i];
		bf += t->bytes_freed[i];
		live += t->net[i];
		pages += t->page_allocs[2][i];
		forks += t->forks[i];
	}
	assert_int_equal(allocs, s->allocs);
	assert_int_equal(allocs, 5);
	assert_int_equal(frees, s->frees);
	assert_int_equal(ba, s->bytes_alloc);
	assert_int_equal(bf, s->bytes_freed);
	assert_int_equal(live, (int64_t)(s->live_bytes + s->uncertain_bytes));
	assert_int_equal(s->uncertain_bytes, 192);		/* OBJ(2), OBJ(3) again: a loss followed */
	assert_int_equal(pages, 1);
	assert_int_equal(forks, 1);
	assert_int_equal(t->nr_gaps, 1);
	assert_int_equal(t->gaps[0].cpu, 1);
	assert_int_equal(t->gaps[0].lost, 5);
	c = kmt_model_caches(r.m, &n);
	assert_int_equal(t->nr_caches, n);
	for (k = 0; k < n; k++)
		if (!strcmp(c[k].name, "filp"))
			for (i = 0; i < t->n; i++)
				filp += t->cache_net[k][i];
	assert_int_equal(filp, 64);
	for (k = 0; k < t->nr_sites; k++)
		if (kmt_model_sites(r.m, &n)[k].addr == SITE_A && t->site_net[k])
			for (i = 0; i < (t->n + KMT_TL_COARSE - 1) / KMT_TL_COARSE; i++)
				site_a += t->site_net[k][i];
	assert_int_equal(site_a, 256);				/* OBJ(3) and OBJ(4) */
	/* What kmemtrace top shows as live as it goes: live and uncertain, per site too. */
	assert_int_equal(s->now_bytes, s->live_bytes + s->uncertain_bytes);
	assert_int_equal(s->now_objects, s->live_objects + s->uncertain_objects);
	{
		const struct kmt_site *st = kmt_model_sites(r.m, &n);

		for (k = 0, site_a = 0; k < n; k++) {
			site_a += (int64_t)st[k].now_bytes;
			if (st[k].addr == SITE_A)
				assert_int_equal(st[k].now_bytes, 256);
		}
	}
	assert_int_equal(site_a, (int64_t)s->now_bytes);
	g = kmt_model_groups(r.m, &n);
	for (i = 0, allocs = 0, live = 0; i < n; i++) {
		allocs += g[i].allocs;
		live += (int64_t)g[i].live_bytes;
	}
	assert_int_equal(allocs, 5);
	assert_int_equal(live, (int64_t)s->live_bytes);
	z = kmt_model_sizes(r.m, &n);
	assert_int_equal(n, 2);
	assert_int_equal(z[0].req, 64);
	assert_int_equal(z[0].count, 1);
	assert_int_equal(z[1].req, 100);
	assert_int_equal(z[1].alloc, 128);
	assert_int_equal(z[1].count, 4);
	done(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sites_and_bytes),
		cmocka_unit_test(test_outstanding_and_preexisting),
		cmocka_unit_test(test_double_free),
		cmocka_unit_test(test_double_free_of_unseen_object),
		cmocka_unit_test(test_double_free_in_bulk_filled_cache),
		cmocka_unit_test(test_alloc_over_live),
		cmocka_unit_test(test_kmalloc_large_twin),
		cmocka_unit_test(test_cache_misuse),
		cmocka_unit_test(test_cache_names),
		cmocka_unit_test(test_loss_makes_uncertain),
		cmocka_unit_test(test_truncated_cpu_makes_uncertain),
		cmocka_unit_test(test_damaged_gap_stays_open),
		cmocka_unit_test(test_time_window),
		cmocka_unit_test(test_old_kernel_layout),
		cmocka_unit_test(test_process_names),
		cmocka_unit_test(test_objects_and_accesses),
		cmocka_unit_test(test_partial_allocations),
		cmocka_unit_test(test_page_sites),
		cmocka_unit_test(test_misuse_grouped),
		cmocka_unit_test(test_untraced_and_filters),
		cmocka_unit_test(test_task_filter_scope),
		cmocka_unit_test(test_vmalloc),
		cmocka_unit_test(test_slab_stacks),
		cmocka_unit_test(test_sliced_stacks),
		cmocka_unit_test(test_stack_after_rcu_batch),
		cmocka_unit_test(test_pcpu_stack),
		cmocka_unit_test(test_detail),
		cmocka_unit_test(test_cgroup_moves),
	};

	return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
