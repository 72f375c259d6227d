/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests: the memory budget of record, top and watch (src/record/
 * budget.c): exact values for machines from a 1 GiB box to a 512 GiB
 * server, and the rule's promise, under 1/32 of RAM and 1 GiB in all,
 * over a range of RAM and CPU counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "record/budget.c"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

/* The kernel's bytes for a ring buffer of @kb KiB: 4080 data bytes a page, and the reader's page. */
static uint64_t kernel_bytes(unsigned int kb)
{
	return ((uint64_t)kb * 1024 + 4079) / 4080 * 4096 + 4096;
}

static void test_machines(void **state)
{
	static const struct {
		uint64_t ram;
		int cpus;
		uint64_t total;
		unsigned int kb;
		uint64_t hold_mib;
	} m[] = {
		{ 24105 * MiB, 2, 789872640, 16384, 721 },	/* this project's VM */
		{ 8 * GiB, 8, 256 * MiB, 16384, 127 },		/* a laptop */
		{ 64 * GiB, 16, GiB, 16384, 766 },		/* a workstation */
		{ 16 * GiB, 64, 512 * MiB, 4096, 254 },
		{ 256 * GiB, 128, GiB, 4096, 509 },		/* a server: was 8 GiB of ring buffers */
		{ 512 * GiB, 64, GiB, 8192, 509 },
		{ GiB, 64, 32 * MiB, 256, 15 },
		{ 4 * GiB, 4096, 128 * MiB, 64, 0 },		/* the floor: 64 KiB a CPU, no hold */
	};
	struct budget b;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		budget_for(&b, m[i].ram, m[i].cpus);
		assert_int_equal(b.total, m[i].total);
		assert_int_equal(b.buffer_kb, m[i].kb);
		assert_int_equal(b.rings, kernel_bytes(m[i].kb) * (uint64_t)m[i].cpus);
		assert_int_equal(b.hold >> 20, m[i].hold_mib);
		assert_int_equal(b.prefault, b.hold / 2 / (uint64_t)m[i].cpus);
		assert_int_equal(b.watch_ctl_kb, MIN(MAX(m[i].kb / 16, 64u), 1024u));
		assert_int_equal(b.hold - b.watch_hold, MIN(b.hold, (kernel_bytes(b.watch_ctl_kb) + 65 * 4096) *
								  (uint64_t)m[i].cpus));
	}
}

/* Wherever 64 KiB a CPU fits in half the budget: under 1/32 of RAM and 1 GiB in all. */
static void test_promise(void **state)
{
	struct budget b;
	uint64_t ram;
	int cpus;

	(void)state;
	for (ram = 256 * MiB; ram <= 4096 * GiB; ram = ram * 3 / 2)
		for (cpus = 1; cpus <= 8192; cpus += cpus < 8 ? 1 : cpus / 4) {
			budget_for(&b, ram, cpus);
			assert_true(b.buffer_kb >= 64 && b.buffer_kb <= 16384 && b.buffer_kb % 4 == 0);
			if ((uint64_t)cpus * kernel_bytes(64) > b.total / 2)
				continue;
			assert_true(b.rings + b.hold <= ram / 32);
			assert_true(b.rings + b.hold <= GiB);
			assert_true(b.rings + b.prefault * (uint64_t)cpus <= b.total);
			assert_true(b.rings + (kernel_bytes(b.watch_ctl_kb) + 65 * 4096) * (uint64_t)cpus +
				    b.watch_hold <= b.total || !b.watch_hold);
			/* Half, in nominal KiB: the kernel adds its page headers and the reader page. */
			assert_true(b.rings <= b.total / 2 / 4080 * 4096 + (uint64_t)cpus * 8192);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_machines),
		cmocka_unit_test(test_promise),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
