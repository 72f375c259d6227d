/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests: the watchpoint probe (kmt_hwbp_probe). Where perf events
 * cannot be opened (not root, no breakpoints) the tests skip. The decoy
 * probe must report KMT_ENOFIRE on every machine; the real one must agree
 * with its own counts, whichever way this machine's hardware goes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include <kmemtrace/watch.h>
#include <kmemtrace/tracefs.h>

static int cpus[256], nr_cpus;

static int setup(void **state)
{
	nr_cpus = kmt_tracefs_cpus(cpus, 256);
	return nr_cpus > 0 ? 0 : -1;
}

static void test_probe_decoy(void **state)
{
	struct kmt_hwbp_probe res;
	struct kmt_diag d = { 0 };
	int ret = kmt_hwbp_probe(cpus, nr_cpus, KMT_HWBP_PROBE_DECOY, &res, &d);

	if (ret != KMT_ENOFIRE && ret < 0 && ret > -4096)
		skip();		/* no perf events or breakpoints here */
	assert_int_equal(ret, KMT_ENOFIRE);
	assert_int_equal(res.cpus, nr_cpus);
	assert_int_equal(res.counted, 0);
	assert_int_equal(res.silent_cpu, cpus[0]);
	assert_non_null(strstr(d.msg, "never fire"));
}

static void test_probe_real(void **state)
{
	struct kmt_hwbp_probe res;
	struct kmt_diag d = { 0 };
	int ret = kmt_hwbp_probe(cpus, nr_cpus, 0, &res, &d);

	if (ret != KMT_ENOFIRE && ret < 0 && ret > -4096)
		skip();
	print_message("# watchpoints %s: %llu of %llu writes counted on %d CPUs\n",
		      ret ? "never fire" : "fire", (unsigned long long)res.counted,
		      (unsigned long long)res.writes, res.cpus);
	assert_int_equal(res.cpus, nr_cpus);
	assert_int_equal(res.writes, (uint64_t)nr_cpus * 64);
	if (ret == 0) {
		assert_int_equal(res.silent_cpu, -1);
		assert_true(res.counted >= res.writes);
	} else {
		assert_int_equal(ret, KMT_ENOFIRE);
		assert_true(res.silent_cpu >= 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_decoy),
		cmocka_unit_test(test_probe_real),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
