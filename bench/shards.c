/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt-shards: the allocation model alone, in 1 to N shards, on events
 * decoded beforehand (no reading, no decoding: what the model's stage
 * costs and how it scales with threads, on this machine's cores).
 *   kmt-shards FILE [EVENTS] [ROUNDS] [MAXSHARDS] [route]
 * Decodes the first EVENTS events of FILE (default 4,000,000) into memory,
 * then, ROUNDS times (default 7), runs them through the model with 1, 2,
 * ... MAXSHARDS shards (default: the CPUs online), in turn, each shard on
 * a thread as kmemtrace does (model-merge.c): shard 0 takes every batch
 * and routes the others' events, shard k takes a batch once shard 0 has
 * (waiting with sched_yield: with fewer cores than shards they contend).
 * With "route", shard 0 runs alone: what it costs per event with N
 * shards, the part no number of shards spreads (the others' work is left
 * undone, so nothing is merged). Prints per shard count the median wall
 * time, events/s, the CPU of all shards and of shard 0 per event, and
 * the speed-up over one model.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/event.h>
#include <kmemtrace/analyse.h>
#include <kmemtrace/tracefile.h>
#include "model/model-local.h"

#define BATCH 1024
#define MAX_SH 64

struct batch {
	struct kmt_event ev[BATCH];
	const struct kmt_event *evp[BATCH];	/* &ev[i], as the model's shards take them */
	uint8_t to[BATCH];
	struct model_route r[BATCH];
	unsigned int n;
};

static struct batch *batches;
static size_t nbatches, nevents;
static char *arena;			/* the events' strings and stacks, in order */
static size_t arena_used, arena_cap;

/* A copy of @p in the arena (in order, as kmemtrace's batches keep them). */
static const void *keep(const void *p, size_t len)
{
	char *to;

	if (!len)
		return NULL;
	if (arena_used + len > arena_cap) {
		/* A new block: the strings before keep their addresses. */
		arena_cap = 64u << 20;
		arena = malloc(arena_cap);
		arena_used = 0;
		if (!arena)
			exit(1);
	}
	to = arena + arena_used;
	memcpy(to, p, len);
	arena_used += len;
	return to;
}

struct run {
	struct kmt_model *sh[MAX_SH];
	unsigned int n, threads;	/* shards, and of them run (route: 1) */
	size_t done0;			/* batches shard 0 has taken (atomic) */
	uint64_t cpu[MAX_SH];
};

struct arg {
	struct run *r;
	unsigned int k;
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t thread_cpu(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static void *shard_main(void *p)
{
	struct arg *a = p;
	struct run *r = a->r;
	uint64_t c0 = thread_cpu();
	size_t b;

	for (b = 0; b < nbatches; b++) {
		struct batch *x = &batches[b];

		if (r->n == 1) {
			kmt_model_events(r->sh[0], x->ev, x->n);
		} else if (!a->k) {
			model_route_events(r->sh[0], x->evp, x->n, x->to, x->r, false);
			__atomic_store_n(&r->done0, b + 1, __ATOMIC_RELEASE);
		} else {
			while (__atomic_load_n(&r->done0, __ATOMIC_ACQUIRE) <= b)
				sched_yield();
			model_routed_events(r->sh[a->k], x->evp, x->n, x->to, x->r,
					    kmt_model_summary(r->sh[0])->first_ts);
		}
	}
	r->cpu[a->k] = thread_cpu() - c0;
	return NULL;
}

/* One run with @n shards: wall seconds; the shards' CPU ns into @cpu, shard 0's into @cpu0. */
static double run(const struct kmt_model_opts *mo, unsigned int n, bool route_only, uint64_t last_ts, double *cpu,
		  double *cpu0)
{
	struct run r = { .n = n, .threads = route_only ? 1 : n };
	struct arg a[MAX_SH];
	pthread_t th[MAX_SH];
	unsigned int k;
	double t0, t1;

	r.sh[0] = kmt_model_new(mo);
	for (k = 1; k < n; k++)
		r.sh[k] = kmt_model_shard(r.sh[0], k, n);
	if (n > 1)
		kmt_model_shard(r.sh[0], 0, n);
	t0 = now();
	for (k = 0; k < r.threads; k++) {
		a[k] = (struct arg){ &r, k };
		if (pthread_create(&th[k], NULL, shard_main, &a[k]))
			exit(1);
	}
	for (k = 0; k < r.threads; k++)
		pthread_join(th[k], NULL);
	if (!route_only) {
		if (n > 1 && kmt_model_merge(r.sh, n))
			exit(1);
		kmt_model_finish(r.sh[0], last_ts);
	}
	t1 = now();
	*cpu = 0;
	for (k = 0; k < r.threads; k++)
		*cpu += (double)r.cpu[k];
	*cpu0 = (double)r.cpu[0];
	for (k = 0; k < n; k++)
		kmt_model_free(r.sh[k]);
	return t1 - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* The first @max events of @path, decoded, into batches (their strings and stacks copied). */
static int load(const char *path, size_t max, struct kmt_model_opts *mo, uint64_t *last_ts)
{
	struct kmt_diag d = { 0 };
	struct kmt_decoder *dec;
	struct kmt_stream *s;
	struct kmt_file *f;
	struct kmt_srec sr;

	if (kmt_file_open(&f, path, &d)) {
		fprintf(stderr, "kmt-shards: %s\n", d.msg);
		return -1;
	}
	dec = kmt_decoder_new(kmt_file_formats(f), kmt_file_info(f)->big_endian, kmt_file_info(f)->kernel_long_size);
	s = kmt_stream_open(f, kmt_file_main_buffer(f), &d);
	if (!dec || !s) {
		fprintf(stderr, "kmt-shards: %s: %s\n", path, d.msg);
		return -1;
	}
	kmt_model_opts_from_file(mo, f);
	batches = calloc(max / BATCH + 1, sizeof(*batches));
	if (!batches)
		return -1;
	while (nevents < max && kmt_stream_next(s, &sr, &d) > 0) {
		struct batch *b = &batches[nevents / BATCH];
		struct kmt_event *ev = &b->ev[b->n];
		size_t sl;

		if (sr.lost_marker || sr.skip || kmt_decode(dec, &sr.rec, sr.cpu, ev) <= 0)
			continue;
		sl = (size_t)ev->nr_stack * ev->stack_word;
		ev->name = keep(ev->name, ev->name_len);
		ev->str2 = keep(ev->str2, ev->str2_len);
		ev->stack = keep(ev->stack, sl);
		*last_ts = ev->ts;
		b->evp[b->n] = ev;
		b->n++;
		nevents++;
	}
	nbatches = (nevents + BATCH - 1) / BATCH;
	kmt_stream_close(s);
	return nevents ? 0 : -1;
}

int main(int argc, char **argv)
{
	size_t max = argc > 2 ? strtoul(argv[2], NULL, 0) : 4000000;
	int rounds = argc > 3 ? atoi(argv[3]) : 7, i;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int maxsh = argc > 4 ? (unsigned int)atoi(argv[4]) : (unsigned int)(cpus > 0 ? cpus : 1), n;
	bool route_only = argc > 5 && !strcmp(argv[5], "route");
	struct kmt_model_opts mo = { 0 };
	double wall[MAX_SH + 1][64], cpu[MAX_SH + 1][64], cpu0[MAX_SH + 1][64], one = 0;
	uint64_t last_ts = 0;

	if (argc < 2 || rounds < 1 || rounds > 64 || maxsh < 1 || maxsh > MAX_SH || (argc > 5 && !route_only)) {
		fprintf(stderr, "usage: kmt-shards FILE [EVENTS] [ROUNDS (1-64)] [MAXSHARDS (1-64)] [route]\n");
		return 2;
	}
	if (load(argv[1], max, &mo, &last_ts))
		return 1;
	/* Shard counts in turn within each round: paired, the same machine state for each. */
	for (i = 0; i < rounds; i++)
		for (n = 1; n <= maxsh; n++)
			wall[n][i] = run(&mo, n, route_only, last_ts, &cpu[n][i], &cpu0[n][i]);
	printf("%zu events, %d rounds, %ld CPUs online: %s (medians)\n", nevents, rounds, cpus,
	       route_only ? "shard 0 alone (routing every event, and its share of the objects)" : "the model alone");
	printf("%7s %9s %12s %14s %16s %9s\n", "shards", "wall s", "M events/s", "CPU ns/event",
	       "shard 0 ns/event", "speed-up");
	for (n = 1; n <= maxsh; n++) {
		double w = median(wall[n], rounds), c = median(cpu[n], rounds), c0 = median(cpu0[n], rounds);

		if (n == 1)
			one = w;
		printf("%7u %9.3f %12.2f %14.1f %16.1f %8.2fx\n", n, w, (double)nevents / w / 1e6,
		       c / (double)nevents, c0 / (double)nevents, one / w);
	}
	return 0;
}
