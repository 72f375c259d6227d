/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Do hardware watchpoints fire here? (include/kmemtrace/watch.h)
 *
 * Some hypervisors accept perf_event_open(PERF_TYPE_BREAKPOINT) but never
 * program the debug registers: the event opens, counts nothing, and a
 * watcher built on it records nothing while looking healthy (seen on VMs
 * over AMD EPYC hosts). The probe asks the hardware directly: a counting
 * write watchpoint on a word of this thread's, which the thread writes a
 * known number of times on each CPU in turn. A few hundred microseconds.
 */
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <kmemtrace/watch.h>
#include "base/kmt-local.h"

#define PROBE_WRITES 64

/* Kept apart so a watchpoint on one is not hit by writes to the other. */
static volatile uint64_t probe_word __attribute__((aligned(64)));
static volatile uint64_t decoy_word __attribute__((aligned(64)));

static int count_read(int fd, uint64_t *v)
{
	return read(fd, v, sizeof(*v)) == (ssize_t)sizeof(*v) ? 0 : -(errno ? errno : EIO);
}

int kmt_hwbp_probe(const int *cpus, int nr_cpus, unsigned int flags, struct kmt_hwbp_probe *res,
		   struct kmt_diag *d)
{
	struct perf_event_attr a;
	cpu_set_t old, one;
	int fd, i, ret = 0;

	memset(res, 0, sizeof(*res));
	res->silent_cpu = -1;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (uint64_t)(uintptr_t)(flags & KMT_HWBP_PROBE_DECOY ? &decoy_word : &probe_word);
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		if (ret == -ENOENT || ret == -EOPNOTSUPP || ret == -ENODEV || ret == -EINVAL)
			return kmt_diag_set(d, ret, "this kernel or machine has no hardware watchpoints (%s)",
					    strerror(-ret));
		return kmt_diag_set(d, ret, "cannot open a hardware watchpoint: %s", strerror(-ret));
	}
	if (sched_getaffinity(0, sizeof(old), &old)) {
		ret = kmt_diag_set(d, -errno, "cannot read this thread's CPU affinity: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < nr_cpus; i++) {
		uint64_t before, after;
		int k;

		CPU_ZERO(&one);
		CPU_SET(cpus[i], &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;	/* not allowed to run there: cannot tell */
		if ((ret = count_read(fd, &before)))
			break;
		for (k = 0; k < PROBE_WRITES; k++)
			probe_word = (uint64_t)k;
		if ((ret = count_read(fd, &after)))
			break;
		res->cpus++;
		res->writes += PROBE_WRITES;
		res->counted += after - before;
		if (after - before < PROBE_WRITES && res->silent_cpu < 0) {
			res->silent_cpu = cpus[i];
			res->silent_counted = after - before;
		}
	}
	sched_setaffinity(0, sizeof(old), &old);
	if (ret) {
		kmt_diag_set(d, ret, "cannot read a watchpoint's count: %s", strerror(-ret));
	} else if (!res->cpus) {
		ret = kmt_diag_set(d, -EPERM, "cannot run on any of the CPUs to test watchpoints on");
	} else if (res->silent_cpu >= 0) {
		ret = kmt_diag_set(d, KMT_ENOFIRE,
				   "hardware watchpoints are accepted here but never fire (CPU %d "
				   "counted %llu of %d writes to a watched word: typically the "
				   "hypervisor does not pass the debug registers through)",
				   res->silent_cpu, (unsigned long long)res->silent_counted, PROBE_WRITES);
	}
out:
	close(fd);
	return ret;
}
