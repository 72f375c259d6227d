/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt-live: the library's live pipeline (kmt_analyse_live_*, what kmemtrace
 * top runs) with the model in shards, against one model, on a file's
 * events.
 *
 *   kmt-live FILE SHARDS EVERY
 *
 * Reads FILE's events and loss markers in stream order into memory, then
 * hands the file's pages to the live pipeline as a page source (each page
 * copied, as top's readers copy theirs, and held until the pipeline hands
 * it back), with its reader thread and SHARDS shards, moving the stream's
 * safe time on by EVERY items at a time (items of one time stay
 * together); after each pump, compares the shards' sums
 * (kmt_analyse_live_sync(), then the model's own getters) with one model
 * fed the same items: the summary's counts of events, objects and losses,
 * and every call site, cache and task, by key. Prints how many points it
 * compared; exit 0 if all were the same, 1 at the first difference
 * (said), 2 on bad use or input.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/event.h>
#include <kmemtrace/analyse.h>
#include <kmemtrace/tracefile.h>

struct item {
	struct kmt_event ev;		/* a marker: its cpu and ts */
	int64_t lost;			/* a marker's loss (-1: unknown) */
	bool marker;
};

static struct item *items;
static size_t nitems;
static struct kmt_file *file;		/* open until the models go: they use its symbols */
static struct kmt_decoder *dec;

/* A copy of @p that lives as long as the program. */
static const void *keep(const void *p, size_t len)
{
	void *to;

	if (!len)
		return NULL;
	if (!(to = malloc(len))) {
		fprintf(stderr, "kmt-live: out of memory\n");
		exit(2);
	}
	return memcpy(to, p, len);
}

static int load(const char *path, struct kmt_model_opts *mo)
{
	struct kmt_diag d = { 0 };
	struct kmt_file *f;
	struct kmt_stream *s;
	struct kmt_srec sr;
	size_t cap = 0;
	int ret;

	if (kmt_file_open(&f, path, &d)) {
		fprintf(stderr, "kmt-live: %s\n", d.msg);
		return -1;
	}
	file = f;
	dec = kmt_decoder_new(kmt_file_formats(f), kmt_file_info(f)->big_endian, kmt_file_info(f)->kernel_long_size);
	s = kmt_stream_open(f, kmt_file_main_buffer(f), &d);
	if (!dec || !s) {
		fprintf(stderr, "kmt-live: %s: %s\n", path, d.msg);
		return -1;
	}
	kmt_model_opts_from_file(mo, f);
	while ((ret = kmt_stream_next(s, &sr, &d)) > 0) {
		struct item *it;

		if (nitems == cap) {
			cap = cap ? cap * 2 : 4096;
			if (!(items = realloc(items, cap * sizeof(*items))))
				return -1;
		}
		it = &items[nitems];
		memset(it, 0, sizeof(*it));
		if (sr.lost_marker) {
			it->marker = true;
			it->ev.cpu = sr.cpu;
			it->ev.ts = sr.rec.ts;
			it->lost = sr.skip ? -1 : sr.lost;
			nitems++;
			continue;
		}
		if (kmt_decode(dec, &sr.rec, sr.cpu, &it->ev) <= 0)
			continue;
		it->ev.name = keep(it->ev.name, it->ev.name_len);
		it->ev.str2 = keep(it->ev.str2, it->ev.str2_len);
		it->ev.stack = keep(it->ev.stack, (size_t)it->ev.nr_stack * it->ev.stack_word);
		nitems++;
	}
	if (ret < 0) {
		fprintf(stderr, "kmt-live: %s: %s\n", path, d.msg);
		return -1;
	}
	kmt_stream_close(s);
	return 0;
}

static int fails;

#define SAME(what, key, a, b)									\
	do {											\
		if ((a) != (b) && !fails++)							\
			printf("differs at item %zu: %s %s: %" PRIu64 " (one model) vs %" PRIu64	\
			       " (shards)\n", at, what, key, (uint64_t)(a), (uint64_t)(b));		\
	} while (0)

static void same_summary(size_t at, const struct kmt_summary *a, const struct kmt_summary *b)
{
	int k;

	SAME("summary", "events", a->events, b->events);
	for (k = 0; k < KMT_EV_NR; k++)
		SAME("summary", "by_kind", a->by_kind[k], b->by_kind[k]);
	SAME("summary", "allocs", a->allocs, b->allocs);
	SAME("summary", "frees", a->frees, b->frees);
	SAME("summary", "bytes_req", a->bytes_req, b->bytes_req);
	SAME("summary", "bytes_alloc", a->bytes_alloc, b->bytes_alloc);
	SAME("summary", "bytes_freed", a->bytes_freed, b->bytes_freed);
	SAME("summary", "cross_cpu_frees", a->cross_cpu_frees, b->cross_cpu_frees);
	SAME("summary", "preexisting_frees", a->preexisting_frees, b->preexisting_frees);
	SAME("summary", "now_objects", a->now_objects, b->now_objects);
	SAME("summary", "now_bytes", a->now_bytes, b->now_bytes);
	SAME("summary", "unseen_frees", a->unseen_frees, b->unseen_frees);
	SAME("summary", "failures", a->failures, b->failures);
	SAME("summary", "page_allocs", a->page_allocs, b->page_allocs);
	SAME("summary", "pcpu_allocs", a->pcpu_allocs, b->pcpu_allocs);
	SAME("summary", "vmap_allocs", a->vmap_allocs, b->vmap_allocs);
	SAME("summary", "lost_events", a->lost_events, b->lost_events);
	SAME("summary", "lost_pages_unknown", a->lost_pages_unknown, b->lost_pages_unknown);
}

static int cmp_site(const void *a, const void *b)
{
	const struct kmt_site *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

static int cmp_cache(const void *a, const void *b)
{
	const struct kmt_cache *x = a, *y = b;

	if (x->is_kmalloc != y->is_kmalloc)
		return x->is_kmalloc - y->is_kmalloc;
	if (x->is_kmalloc && x->object_size != y->object_size)
		return (x->object_size > y->object_size) - (x->object_size < y->object_size);
	return strcmp(x->name, y->name);
}

static int cmp_proc(const void *a, const void *b)
{
	const struct kmt_proc *x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return strcmp(x->comm, y->comm);
}

/* @n entries of @size at @v, sorted by @cmp, in a copy (freed by the caller). */
static void *sorted(const void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	void *c = malloc(n * size + 1);

	if (!c) {
		fprintf(stderr, "kmt-live: out of memory\n");
		exit(2);
	}
	memcpy(c, v, n * size);
	qsort(c, n, size, cmp);
	return c;
}

/* @m, one model, and @s, shard 0 of a model in shards: through the same getters. */
static void same_rows(size_t at, struct kmt_model *m, struct kmt_model *s)
{
	size_t na, nb, i;
	const void *va, *vb;
	struct kmt_site *sa, *sb;
	struct kmt_cache *ca, *cb;
	struct kmt_proc *pa, *pb;
	char key[96];

	va = kmt_model_sites(m, &na);
	vb = kmt_model_sites(s, &nb);
	sa = sorted(va, na, sizeof(*sa), cmp_site);
	sb = sorted(vb, nb, sizeof(*sb), cmp_site);
	SAME("call sites", "count", na, nb);
	for (i = 0; !fails && i < na; i++) {
		snprintf(key, sizeof(key), "0x%" PRIx64, sa[i].addr);
		SAME("call site", key, sa[i].addr, sb[i].addr);
		SAME("call site allocs", key, sa[i].allocs, sb[i].allocs);
		SAME("call site frees", key, sa[i].frees, sb[i].frees);
		SAME("call site free_calls", key, sa[i].free_calls, sb[i].free_calls);
		SAME("call site bytes_req", key, sa[i].bytes_req, sb[i].bytes_req);
		SAME("call site bytes_alloc", key, sa[i].bytes_alloc, sb[i].bytes_alloc);
		SAME("call site bytes_freed", key, sa[i].bytes_freed, sb[i].bytes_freed);
		SAME("call site cross_cpu", key, sa[i].cross_cpu, sb[i].cross_cpu);
		SAME("call site unseen_frees", key, sa[i].unseen_frees, sb[i].unseen_frees);
		SAME("call site failures", key, sa[i].failures, sb[i].failures);
		SAME("call site now_objects", key, sa[i].now_objects, sb[i].now_objects);
		SAME("call site now_bytes", key, sa[i].now_bytes, sb[i].now_bytes);
		SAME("call site lifetimes", key, !memcmp(sa[i].life, sb[i].life, sizeof(sa[i].life)), 1);
	}
	free(sa);
	free(sb);
	va = kmt_model_caches(m, &na);
	vb = kmt_model_caches(s, &nb);
	ca = sorted(va, na, sizeof(*ca), cmp_cache);
	cb = sorted(vb, nb, sizeof(*cb), cmp_cache);
	SAME("caches", "count", na, nb);
	for (i = 0; !fails && i < na; i++) {
		snprintf(key, sizeof(key), "%s", kmt_cache_label(&ca[i]));
		SAME("cache name", key, strcmp(kmt_cache_label(&ca[i]), kmt_cache_label(&cb[i])), 0);
		SAME("cache allocs", key, ca[i].allocs, cb[i].allocs);
		SAME("cache frees", key, ca[i].frees, cb[i].frees);
		SAME("cache bytes_req", key, ca[i].bytes_req, cb[i].bytes_req);
		SAME("cache bytes_alloc", key, ca[i].bytes_alloc, cb[i].bytes_alloc);
		SAME("cache object_size", key, ca[i].object_size, cb[i].object_size);
		SAME("cache now_objects", key, ca[i].now_objects, cb[i].now_objects);
		SAME("cache now_bytes", key, ca[i].now_bytes, cb[i].now_bytes);
	}
	free(ca);
	free(cb);
	va = kmt_model_procs(m, &na);
	vb = kmt_model_procs(s, &nb);
	pa = sorted(va, na, sizeof(*pa), cmp_proc);
	pb = sorted(vb, nb, sizeof(*pb), cmp_proc);
	SAME("tasks", "count", na, nb);
	for (i = 0; !fails && i < na; i++) {
		snprintf(key, sizeof(key), "%s %d", pa[i].comm, pa[i].pid);
		SAME("task name", key, strcmp(pa[i].comm, pb[i].comm) || pa[i].pid != pb[i].pid, 0);
		SAME("task allocs", key, pa[i].allocs, pb[i].allocs);
		SAME("task frees", key, pa[i].frees, pb[i].frees);
		SAME("task bytes_alloc", key, pa[i].bytes_alloc, pb[i].bytes_alloc);
		SAME("task bytes_req", key, pa[i].bytes_req, pb[i].bytes_req);
		SAME("task page_allocs", key, pa[i].page_allocs, pb[i].page_allocs);
		SAME("task now_objects", key, pa[i].now_objects, pb[i].now_objects);
		SAME("task now_bytes", key, pa[i].now_bytes, pb[i].now_bytes);
	}
	free(pa);
	free(pb);
}

/* ---- the file's pages as a live page source ---- */

#define MAX_INPUTS 256

/* A page's copy, held by the pipeline while its events are in flight. */
struct copy {
	struct copy *next;
	uint8_t bytes[];
};

static struct kmt_cpu_reader *readers[MAX_INPUTS];
static struct copy *cur[MAX_INPUTS];	/* the page each input reads now */
static struct kmt_analyse_live *live;
static struct kmt_stream *stream;
static uint64_t safe;			/* the stream's safe time at the next pump */
static size_t held_now;			/* copies held, for the end's check */

static int src_next(void *arg, int i, struct kmt_page *pg, struct kmt_diag *d)
{
	struct kmt_page tmp;
	struct copy *c;
	int ret;

	if (cur[i]) {
		/* Done with: held with the events decoded now, until the model has them. */
		void **held = kmt_analyse_live_hold(live);

		cur[i]->next = *held;
		*held = cur[i];
		cur[i] = NULL;
	}
	ret = kmt_cpu_reader_next(readers[i], &tmp, d);
	if (ret <= 0)
		return ret;
	if (!(c = malloc(sizeof(*c) + tmp.size)))
		return -ENOMEM;
	memcpy(c->bytes, tmp.base, tmp.size);
	*pg = tmp;
	pg->base = c->bytes;
	pg->data = c->bytes + (tmp.data - tmp.base);
	cur[i] = c;
	held_now++;
	return 1;
}

static const struct kmt_skip *src_skipped(void *arg, int i)
{
	return kmt_cpu_reader_skipped(readers[i]);
}

static const char *src_where(void *arg, int i)
{
	return kmt_cpu_reader_where(readers[i]);
}

static uint64_t src_offset(void *arg, int i)
{
	return kmt_cpu_reader_offset(readers[i]);
}

static uint64_t src_in_chunk(void *arg, int i)
{
	return kmt_cpu_reader_in_chunk(readers[i]);
}

static int refill(void *arg, bool all, struct kmt_diag *d)
{
	kmt_stream_set_safe(stream, all ? UINT64_MAX : safe);
	return 0;
}

static bool never(void *arg)
{
	return false;
}

static void release(void *arg, void *held)
{
	struct copy *c, *next;

	for (c = held; c; c = next) {
		next = c->next;
		free(c);
		held_now--;
	}
}

/* The stream of the file's main buffer over copies of its pages. */
static int open_live(struct kmt_model *m, unsigned int n)
{
	const struct kmt_buffer *b = kmt_file_buffer(file, kmt_file_main_buffer(file));
	struct kmt_page_source src = { src_next, src_skipped, src_where, src_offset, src_in_chunk, NULL };
	struct kmt_analyse_live_opts lo = { .jobs = 2, .shards = n, .refill = refill, .over = never,
					    .release = release };
	int cpus[MAX_INPUTS], i;
	struct kmt_diag d = { 0 };

	if (!b || b->nr_cpus > MAX_INPUTS)
		return -1;
	for (i = 0; i < b->nr_cpus; i++) {
		if (kmt_cpu_reader_open(&readers[i], file, kmt_file_main_buffer(file), i, &d))
			goto fail;
		cpus[i] = kmt_cpu_reader_cpu(readers[i]);
	}
	if (!(stream = kmt_stream_open_source(&src, cpus, b->nr_cpus, &d)) ||
	    !(live = kmt_analyse_live_new(stream, dec, m, &lo, &d)))
		goto fail;
	return b->nr_cpus;
fail:
	fprintf(stderr, "kmt-live: %s\n", d.msg);
	return -1;
}

int main(int argc, char **argv)
{
	struct kmt_model_opts mo = { 0 };
	struct kmt_model *one, *m;
	unsigned int n = argc == 4 ? (unsigned int)atoi(argv[2]) : 0;
	size_t every = argc == 4 ? strtoul(argv[3], NULL, 0) : 0, i = 0, k, points = 0;
	struct kmt_diag d = { 0 };
	bool pending;
	int inputs;

	if (argc != 4 || n < 2 || n > 64 || !every) {
		fprintf(stderr, "usage: kmt-live FILE SHARDS (2-64) EVERY (items, > 0)\n");
		return 2;
	}
	if (load(argv[1], &mo))
		return 2;
	one = kmt_model_new(&mo);
	m = kmt_model_new(&mo);
	if (!one || !m || (inputs = open_live(m, n)) < 0) {
		fprintf(stderr, "kmt-live: cannot make the models\n");
		return 2;
	}
	if (kmt_analyse_live_shards(live) != n) {
		fprintf(stderr, "kmt-live: %u shards, not %u\n", kmt_analyse_live_shards(live), n);
		return 2;
	}
	while (i < nitems && !fails) {
		/* A run of @every items, and those of the same time after it. */
		k = i + every < nitems ? i + every : nitems;
		while (k < nitems && items[k].ev.ts == items[k - 1].ev.ts)
			k++;
		safe = items[k - 1].ev.ts;
		for (; i < k; i++)
			if (items[i].marker)
				kmt_model_lost(one, items[i].ev.cpu, items[i].lost, items[i].ev.ts);
			else if (kmt_model_event(one, &items[i].ev))
				break;
		if (i < k || kmt_model_sync(one) || kmt_analyse_live_pump(live, k == nitems, &pending, &d) ||
		    kmt_analyse_live_sync(live)) {
			fprintf(stderr, "kmt-live: %s\n", d.msg[0] ? d.msg : "out of memory");
			return 2;
		}
		if (pending) {
			fprintf(stderr, "kmt-live: a pump that nothing stops stopped early\n");
			return 2;
		}
		same_summary(i, kmt_model_summary(one), kmt_model_summary(m));
		same_rows(i, one, m);
		points++;
	}
	printf("%zu items, %u shards, runs of up to %zu: %zu points compared, %s\n", nitems, n, every, points,
	       fails ? "DIFFERENT" : "all the same");
	kmt_analyse_live_free(live);
	kmt_stream_close(stream);
	for (k = 0; k < (size_t)inputs; k++) {
		free(cur[k]);
		kmt_cpu_reader_close(readers[k]);
	}
	kmt_model_free(m);
	kmt_model_free(one);
	for (i = 0; i < nitems; i++) {
		free((void *)items[i].ev.name);
		free((void *)items[i].ev.str2);
		free((void *)items[i].ev.stack);
	}
	free(items);
	kmt_decoder_free(dec);
	kmt_file_close(file);
	return fails ? 1 : 0;
}
