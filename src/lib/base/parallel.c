/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-CPU work on every core (kmt-local.h): kmt_parallel() runs one job
 * per index on a few threads, so that work done once per traced CPU at a
 * recording's start or end (opening its files, reading its stats) takes
 * the time of one CPU's work times CPUs over workers, not times CPUs.
 * Workers take the next index in turn; the first error by index wins, so
 * the result does not depend on who ran what.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "kmt-local.h"

#define MAX_WORKERS 16

struct par {
	int n;
	int (*fn)(void *arg, int i);
	void *arg;
	int *ret;
	atomic_int next;
};

static void *par_main(void *arg)
{
	struct par *p = arg;
	int i;

	while ((i = atomic_fetch_add(&p->next, 1)) < p->n)
		p->ret[i] = p->fn(p->arg, i);
	return NULL;
}

int kmt_cpus_usable(void)
{
	cpu_set_t set;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int n;

	if (!sched_getaffinity(0, sizeof(set), &set) && (n = CPU_COUNT(&set)) > 0)
		return online > 0 && n > online ? (int)online : n;
	return online < 1 ? 1 : online > INT32_MAX ? INT32_MAX : (int)online;
}

int kmt_parallel_workers(int n)
{
	int cpus = kmt_cpus_usable();
	int w = cpus > MAX_WORKERS ? MAX_WORKERS : cpus;

	return n < w ? (n < 1 ? 1 : n) : w;
}

int kmt_parallel(int n, int (*fn)(void *arg, int i), void *arg)
{
	struct par p = { .n = n, .fn = fn, .arg = arg };
	pthread_t th[MAX_WORKERS];
	int w = kmt_parallel_workers(n), started = 0, i, ret = 0;

	if (n <= 0)
		return 0;
	p.ret = calloc((size_t)n, sizeof(*p.ret));
	if (!p.ret)
		return -ENOMEM;
	atomic_init(&p.next, 0);
	/* This thread is one of the workers. */
	for (i = 1; i < w; i++) {
		if (pthread_create(&th[started], NULL, par_main, &p))
			break;
		started++;
	}
	par_main(&p);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < n && !ret; i++)
		ret = p.ret[i];
	free(p.ret);
	return ret;
}
