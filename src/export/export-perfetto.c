/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * export --format perfetto: a Perfetto trace (proto/perfetto_trace.proto,
 * from Perfetto's published protos) that ui.perfetto.dev and
 * trace_processor open. The memory events go out as Perfetto's own ftrace
 * event messages (kmalloc, kfree, kmem_cache_alloc/free, mm_page_alloc/
 * free, the task events; percpu, vmalloc and watchpoint samples as generic
 * ftrace events), streamed in per-CPU bundles as the analysis meets them,
 * and again as track events on their tasks' tracks, named by function
 * and cache (export-perfetto-names.c); then the tasks as processes and
 * threads, and counter tracks from the model's time series: live slab
 * bytes (total, per top cache, per top task) and the allocation rate.
 * Timestamps are the trace's own clock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "export-perfetto.h"
#include "hookpipe.h"

#define TOP 8				/* caches and tasks with a counter track of their own */
#define BUNDLE_BYTES (256 * 1024)	/* a CPU's events are written in bundles of about this */
#define COUNTER_SEQ 1000		/* the counters' packet sequence; CPUs use 1 + cpu */

/* Field numbers: proto/perfetto_trace.proto (TracePacket's and TrackDescriptor's in export-perfetto.h). */
enum {
	BUNDLE_CPU = 1, BUNDLE_EVENT = 2,
	EVENT_TIMESTAMP = 1, EVENT_PID = 2,
	EV_TASK_NEWTASK = 235, EV_TASK_RENAME = 236, EV_SCHED_PROCESS_EXEC = 237,
	EV_SCHED_PROCESS_EXIT = 238, EV_SCHED_PROCESS_FORK = 239, EV_KFREE = 298, EV_KMALLOC = 299,
	EV_KMEM_CACHE_ALLOC = 301, EV_KMEM_CACHE_FREE = 303, EV_MM_PAGE_ALLOC = 307,
	EV_MM_PAGE_FREE = 310, EV_MM_PAGE_FREE_BATCHED = 311, EV_GENERIC = 327,
	GENERIC_EVENT_NAME = 1, GENERIC_FIELD = 2, FIELD_NAME = 1, FIELD_STR = 3, FIELD_INT = 4,
	FIELD_UINT = 5,
	TREE_PROCESSES = 1, TREE_THREADS = 2, PROCESS_PID = 1, PROCESS_CMDLINE = 3,
	PROCESS_CMDLINE_IS_COMM = 9, TREE_THREAD_TID = 1, TREE_THREAD_NAME = 2,
	COUNTER_UNIT = 3, COUNTER_UNIT_NAME = 6, UNIT_COUNT = 2, UNIT_SIZE_BYTES = 3,
	TRACKEVENT_TYPE = 9, TRACKEVENT_TRACK_UUID = 11, TRACKEVENT_COUNTER_VALUE = 30,
	TYPE_COUNTER = 4,
};

struct perfetto {
	struct pb *cpu;			/* a bundle being filled per CPU */
	size_t *mark;			/* its open bundle message, or SIZE_MAX */
	int ncpu;
	struct pb pkt;			/* one packet at a time */
	struct perfetto_names *names;	/* the events again, by name */
	struct hookpipe *pipe;		/* -j 3 and more: the events written on a thread of their own */
};

/* CPU @c's bundle of events, as a packet. */
static void flush_cpu(struct export *x, int c)
{
	struct perfetto *f = x->priv;
	struct pb *b = &f->cpu[c];

	if (f->mark[c] == SIZE_MAX)
		return;
	pb_end_long(b, f->mark[c]);
	pb_uint(b, PACKET_SEQUENCE_ID, 1 + (uint64_t)c);
	perfetto_packet(x, b);
	pb_reset(b);
	f->mark[c] = SIZE_MAX;
}

static struct pb *bundle(struct export *x, int c)
{
	struct perfetto *f = x->priv;

	if (c >= f->ncpu) {
		int n = c + 1, i;
		struct pb *nb = realloc(f->cpu, (size_t)n * sizeof(*nb));
		size_t *nm = nb ? realloc(f->mark, (size_t)n * sizeof(*nm)) : NULL;

		if (nb)
			f->cpu = nb;
		if (!nm) {
			x->failed = true;
			return NULL;
		}
		f->mark = nm;
		for (i = f->ncpu; i < n; i++) {
			memset(&f->cpu[i], 0, sizeof(f->cpu[i]));
			f->mark[i] = SIZE_MAX;
		}
		f->ncpu = n;
	}
	if (f->mark[c] == SIZE_MAX) {
		f->mark[c] = pb_begin_long(&f->cpu[c], PACKET_FTRACE_EVENTS);
		pb_uint(&f->cpu[c], BUNDLE_CPU, (uint64_t)c);
	}
	return &f->cpu[c];
}

static void field_u(struct pb *b, const char *name, uint64_t v)
{
	size_t m = pb_begin(b, GENERIC_FIELD);

	pb_str(b, FIELD_NAME, name);
	pb_uint(b, FIELD_UINT, v);
	pb_end(b, m);
}

static void field_s(struct pb *b, const char *name, const char *s, size_t len)
{
	size_t m = pb_begin(b, GENERIC_FIELD);

	pb_str(b, FIELD_NAME, name);
	pb_bytes(b, FIELD_STR, s, len);
	pb_end(b, m);
}

static void str_n(struct pb *b, uint32_t field, const char *s, uint32_t len)
{
	pb_bytes(b, field, s, strnlen(s, len));
}

/*
 * The slab and page events, nearly all of a trace, written in place: each
 * is under 80 bytes (five 10-byte varints at most), so every length is one
 * byte, and nothing is checked between the fields. False for the others.
 */
static bool event_in_place(const struct export *x, struct pb *b, const struct kmt_event *ev)
{
	uint64_t site = export_addr(x, ev->call_site), ptr = export_addr(x, ev->ptr);
	uint8_t *p, *e, *m;
	bool page_ptr = ev->flags & KMT_EVF_PAGE_PTR;

	switch (ev->kind) {
	case KMT_EV_KMALLOC: case KMT_EV_CACHE_ALLOC: case KMT_EV_KFREE: case KMT_EV_CACHE_FREE:
	case KMT_EV_PAGE_ALLOC: case KMT_EV_PAGE_FREE: case KMT_EV_PAGE_FREE_BATCHED:
		break;
	default:
		return false;
	}
	if (!(p = pb_reserve(b, 96)))
		return true;		/* out of memory: b->oom fails the export */
	e = pb_put_begin(&p, BUNDLE_EVENT);
	p = pb_put_uint(p, EVENT_TIMESTAMP, ev->ts);
	p = pb_put_uint(p, EVENT_PID, (uint32_t)ev->pid);
	switch (ev->kind) {
	case KMT_EV_KMALLOC:
	case KMT_EV_CACHE_ALLOC:
		m = pb_put_begin(&p, ev->kind == KMT_EV_KMALLOC ? EV_KMALLOC : EV_KMEM_CACHE_ALLOC);
		p = pb_put_uint(p, 1, ev->bytes_alloc);
		p = pb_put_uint(p, 2, ev->bytes_req);
		p = pb_put_uint(p, 3, site);
		p = pb_put_uint(p, 4, (uint32_t)ev->gfp);
		p = pb_put_uint(p, 5, ptr);
		break;
	case KMT_EV_KFREE:
	case KMT_EV_CACHE_FREE:
		m = pb_put_begin(&p, ev->kind == KMT_EV_KFREE ? EV_KFREE : EV_KMEM_CACHE_FREE);
		p = pb_put_uint(p, 1, site);
		p = pb_put_uint(p, 2, ptr);
		break;
	case KMT_EV_PAGE_ALLOC:
		m = pb_put_begin(&p, EV_MM_PAGE_ALLOC);
		p = pb_put_uint(p, 1, (uint32_t)ev->gfp);
		p = pb_put_uint(p, 2, (uint64_t)(int64_t)ev->migratetype);
		p = pb_put_uint(p, 3, ev->order);
		p = pb_put_uint(p, page_ptr ? 4 : 5, ptr);
		break;
	case KMT_EV_PAGE_FREE:
		m = pb_put_begin(&p, EV_MM_PAGE_FREE);
		p = pb_put_uint(p, 1, ev->order);
		p = pb_put_uint(p, page_ptr ? 2 : 3, ptr);
		break;
	default:	/* KMT_EV_PAGE_FREE_BATCHED */
		m = pb_put_begin(&p, EV_MM_PAGE_FREE_BATCHED);
		p = pb_put_uint(p, page_ptr ? 2 : 3, ptr);
		break;
	}
	pb_put_end(m, p);
	pb_put_end(e, p);
	pb_commit(b, p);
	return true;
}

/* One event into its CPU's bundle, as Perfetto's message for it. */
static void on_event(void *arg, const struct kmt_event *ev)
{
	struct export *x = arg;
	struct pb *b;
	size_t e, m;

	if (ev->kind == KMT_EV_STACK || ev->cpu < 0 || ev->cpu >= KMT_MAX_CPUS ||
	    !(b = bundle(x, ev->cpu)))
		return;
	perfetto_names_event(((struct perfetto *)x->priv)->names, ev);
	if (event_in_place(x, b, ev))
		goto out;
	e = pb_begin(b, BUNDLE_EVENT);
	pb_uint(b, EVENT_TIMESTAMP, ev->ts);
	pb_uint(b, EVENT_PID, (uint32_t)ev->pid);
	switch (ev->kind) {
	case KMT_EV_FORK:
		m = pb_begin(b, EV_SCHED_PROCESS_FORK);
		pb_int(b, 2, ev->pid);
		if (ev->str2_len)
			str_n(b, 3, ev->str2, ev->str2_len);
		pb_int(b, 4, ev->pid2);
		pb_end(b, m);
		break;
	case KMT_EV_EXEC:
		m = pb_begin(b, EV_SCHED_PROCESS_EXEC);
		if (ev->str2_len)
			str_n(b, 1, ev->str2, ev->str2_len);
		pb_int(b, 2, ev->pid2);
		pb_end(b, m);
		break;
	case KMT_EV_EXIT:
		m = pb_begin(b, EV_SCHED_PROCESS_EXIT);
		if (ev->str2_len)
			str_n(b, 1, ev->str2, ev->str2_len);
		pb_int(b, 2, ev->pid2);
		pb_end(b, m);
		break;
	case KMT_EV_NEWTASK:
		m = pb_begin(b, EV_TASK_NEWTASK);
		pb_int(b, 1, ev->pid2);
		if (ev->str2_len)
			str_n(b, 2, ev->str2, ev->str2_len);
		pb_end(b, m);
		break;
	case KMT_EV_RENAME:
		m = pb_begin(b, EV_TASK_RENAME);
		pb_int(b, 1, ev->pid2);
		if (ev->str2_len)
			str_n(b, 3, ev->str2, ev->str2_len);
		pb_end(b, m);
		break;
	case KMT_EV_CGROUP:
		/* A move to a cgroup: the task and where (a generic event; the view's args show them). */
		m = pb_begin(b, EV_GENERIC);
		pb_str(b, GENERIC_EVENT_NAME, kmt_kind_name(ev->kind));
		field_u(b, "pid", (uint64_t)(uint32_t)ev->pid2);
		field_u(b, "dst_root", (uint64_t)(uint32_t)ev->node);
		field_s(b, "dst_path", ev->str2, ev->str2_len);
		pb_end(b, m);
		break;
	default:
		/* No message of Perfetto's own: a generic event with the fields we have. */
		m = pb_begin(b, EV_GENERIC);
		pb_str(b, GENERIC_EVENT_NAME, kmt_kind_name(ev->kind));
		if (ev->call_site)
			field_u(b, ev->kind == KMT_EV_ACCESS ? "ip" : "call_site", export_addr(x, ev->call_site));
		field_u(b, ev->kind == KMT_EV_VMAP_ALLOC || ev->kind == KMT_EV_VMAP_FREE ? "addr" : "ptr",
			export_addr(x, ev->ptr));
		if (ev->bytes_alloc)
			field_u(b, ev->kind == KMT_EV_VMAP_ALLOC ? "size" : "bytes_alloc", ev->bytes_alloc);
		if (ev->bytes_req && ev->kind != KMT_EV_VMAP_ALLOC)
			field_u(b, ev->kind == KMT_EV_ACCESS ? "len" : "bytes_req", ev->bytes_req);
		if (ev->kind == KMT_EV_ACCESS) {
			field_u(b, "offset", ev->offset);
			field_u(b, "write", !!(ev->flags & KMT_EVF_WRITE));
			if (ev->str2_len)
				field_s(b, "field", ev->str2, ev->str2_len);
		}
		pb_end(b, m);
		break;
	}
	pb_end(b, e);
out:
	if (b->len > BUNDLE_BYTES)
		flush_cpu(x, ev->cpu);
}

static void on_object(void *arg, const struct kmt_object *o)
{
	struct export *x = arg;

	perfetto_names_object(((struct perfetto *)x->priv)->names, o);
}

/* -j 3 and more: the model's thread hands the events and objects over (hookpipe.h). */
static void queue_event(void *arg, const struct kmt_event *ev)
{
	struct export *x = arg;

	if (ev->kind != KMT_EV_STACK && ev->cpu >= 0 && ev->cpu < KMT_MAX_CPUS)
		hookpipe_event(((struct perfetto *)x->priv)->pipe, ev);
}

static void queue_object(void *arg, const struct kmt_object *o)
{
	struct export *x = arg;

	perfetto_freed_of(hookpipe_note(((struct perfetto *)x->priv)->pipe), o);
}

static void write_freed(void *arg, const void *fr)
{
	struct export *x = arg;

	perfetto_names_freed(((struct perfetto *)x->priv)->names, fr);
}

/*
 * Writing the events costs about twice the model (on hackbench, 85 ns an
 * event against 50): with a third thread to spare, they are written on it.
 */
#define PIPE_JOBS 3

static int begin(struct export *x)
{
	struct perfetto *f = x->priv;

	if (!(f->names = perfetto_names_new(x)))
		return error("out of memory");
	x->hooks.event = on_event;
	x->hooks.object = on_object;
	x->hooks.arg = x;
	if (kmt_file_threads(x->a.f) >= PIPE_JOBS &&
	    (f->pipe = hookpipe_new(on_event, write_freed, sizeof(struct perfetto_freed), x))) {
		x->hooks.event = queue_event;
		x->hooks.object = queue_object;
	}
	return EXIT_OK;
}

/* Tasks: each pid a process named by its comm, and a thread of it. */
static void tasks(struct export *x, uint64_t ts)
{
	struct perfetto *f = x->priv;
	struct pb *p = &f->pkt;
	size_t n, i, t, m;
	const struct kmt_proc *v = kmt_model_procs(x->a.m, &n);

	pb_reset(p);
	pb_uint(p, PACKET_TIMESTAMP, ts);
	t = pb_begin(p, PACKET_PROCESS_TREE);
	for (i = 0; i < n; i++) {
		/* A pid renamed has several entries: its last name is the one to show. */
		if (i + 1 < n && v[i + 1].pid == v[i].pid)
			continue;
		m = pb_begin(p, TREE_PROCESSES);
		pb_int(p, PROCESS_PID, v[i].pid);
		pb_str(p, PROCESS_CMDLINE, v[i].comm);
		pb_uint(p, PROCESS_CMDLINE_IS_COMM, 1);
		pb_end(p, m);
		m = pb_begin(p, TREE_THREADS);
		pb_int(p, TREE_THREAD_TID, v[i].pid);
		pb_str(p, TREE_THREAD_NAME, v[i].comm);
		pb_end(p, m);
	}
	pb_end(p, t);
	perfetto_packet(x, p);
}

static void track(struct export *x, uint64_t uuid, const char *name, const char *desc, int unit,
		  const char *unit_name)
{
	struct perfetto *f = x->priv;
	struct pb *p = &f->pkt;
	size_t t, c;

	pb_reset(p);
	t = pb_begin(p, PACKET_TRACK_DESCRIPTOR);
	pb_uint(p, TRACK_UUID, uuid);
	pb_str(p, TRACK_NAME, name);
	pb_str(p, TRACK_DESCRIPTION, desc);
	c = pb_begin(p, TRACK_COUNTER);
	pb_uint(p, COUNTER_UNIT, (uint64_t)unit);
	if (unit_name)
		pb_str(p, COUNTER_UNIT_NAME, unit_name);
	pb_end(p, c);
	pb_end(p, t);
	perfetto_packet(x, p);
}

/* A counter track's values, at the end of each interval: @v[0..n) of @width ns from @start. */
static void values(struct export *x, uint64_t uuid, const int64_t *v, size_t n, uint64_t start,
		   uint64_t width, bool *first)
{
	struct perfetto *f = x->priv;
	struct pb *p = &f->pkt;
	size_t i, e;

	for (i = 0; i < n; i++) {
		/* A counter holds its value until the next: only changes are written. */
		if (i && i + 1 < n && v[i] == v[i - 1])
			continue;
		pb_reset(p);
		pb_uint(p, PACKET_TIMESTAMP, start + (i + 1) * width);
		pb_uint(p, PACKET_SEQUENCE_ID, COUNTER_SEQ);
		if (*first)
			pb_uint(p, PACKET_SEQUENCE_FLAGS, 1);	/* SEQ_INCREMENTAL_STATE_CLEARED */
		*first = false;
		e = pb_begin(p, PACKET_TRACK_EVENT);
		pb_uint(p, TRACKEVENT_TYPE, TYPE_COUNTER);
		pb_uint(p, TRACKEVENT_TRACK_UUID, uuid);
		pb_int(p, TRACKEVENT_COUNTER_VALUE, v[i]);
		pb_end(p, e);
		perfetto_packet(x, p);
	}
}


/* The @nr series of @tab with the highest peaks, as tracks from @uuid on. */
static void top_tracks(struct export *x, const int64_t *const *tab, size_t nr, size_t n, uint64_t width,
		       uint64_t uuid, const char *what, bool tasks_, int64_t *live, bool *first)
{
	const struct kmt_timeline *t = kmt_model_timeline(x->a.m);
	size_t np, i, k;
	const struct kmt_proc *procs = kmt_model_procs(x->a.m, &np);
	int64_t best[TOP] = { 0 };
	size_t idx[TOP];
	int nb = 0, j;
	char name[96], desc[160];

	for (i = 0; i < nr; i++) {
		int64_t peak;

		if (!tab[i])
			continue;
		peak = running_sum(tab[i], n, live);
		if (peak <= 0 || (nb == TOP && peak <= best[TOP - 1]))
			continue;
		for (j = nb < TOP ? nb++ : TOP - 1; j > 0 && best[j - 1] < peak; j--) {
			best[j] = best[j - 1];
			idx[j] = idx[j - 1];
		}
		best[j] = peak;
		idx[j] = i;
	}
	for (k = 0; k < (size_t)nb; k++) {
		if (tasks_)
			snprintf(name, sizeof(name), "live slab bytes: %s %d", procs[idx[k]].comm, procs[idx[k]].pid);
		else
			snprintf(name, sizeof(name), "live slab bytes: %s", cache_name(&x->r, (uint32_t)idx[k]));
		snprintf(desc, sizeof(desc), "bytes allocated in the trace by %s and not freed yet", what);
		track(x, uuid + k, name, desc, UNIT_SIZE_BYTES, NULL);
		running_sum(tab[idx[k]], n, live);
		values(x, uuid + k, live, n, t->start, width, first);
	}
}

static void counters(struct export *x)
{
	const struct kmt_timeline *t = kmt_model_timeline(x->a.m);
	int64_t *live;
	size_t i, nc;
	bool first = true;

	if (!t || !(live = calloc(t->n + 1, sizeof(*live)))) {
		x->failed = !!t;
		return;
	}
	track(x, 1, "live slab bytes", "bytes allocated in the trace and not freed yet (kmemtrace)",
	      UNIT_SIZE_BYTES, NULL);
	running_sum(t->net, t->n, live);
	values(x, 1, live, t->n, t->start, t->width, &first);
	track(x, 2, "slab allocations/s", "slab allocations per second, per interval (kmemtrace)",
	      UNIT_COUNT, "allocs/s");
	for (i = 0; i < t->n; i++)
		live[i] = (int64_t)(t->allocs[i] * 1000000000ULL / t->width);
	values(x, 2, live, t->n, t->start, t->width, &first);
	top_tracks(x, t->cache_net, t->nr_caches, t->n, t->width, 100, "the cache", false, live, &first);
	nc = (t->n + KMT_TL_COARSE - 1) / KMT_TL_COARSE;
	top_tracks(x, t->proc_net, t->nr_procs, nc, t->width * KMT_TL_COARSE, 200, "the task", true, live,
		   &first);
	free(live);
}

static int end(struct export *x)
{
	struct perfetto *f = x->priv;
	const struct kmt_summary *s = kmt_model_summary(x->a.m);
	int c;

	hookpipe_finish(f->pipe);
	if (hookpipe_failed(f->pipe))
		x->failed = true;
	x->a.writer_ns = hookpipe_cpu_ns(f->pipe);
	for (c = 0; c < f->ncpu; c++)
		flush_cpu(x, c);
	tasks(x, s->first_ts);
	counters(x);
	if (x->failed || f->pkt.oom || perfetto_names_failed(f->names))
		return error("cannot write %s: %s", x->path, errno ? strerror(errno) : "out of memory");
	return EXIT_OK;
}

static void release(struct export *x)
{
	struct perfetto *f = x->priv;
	int c;

	hookpipe_free(f->pipe);		/* its thread gone before what it writes with */
	for (c = 0; c < f->ncpu; c++)
		pb_release(&f->cpu[c]);
	free(f->cpu);
	free(f->mark);
	pb_release(&f->pkt);
	perfetto_names_free(f->names);
}

const struct export_format export_perfetto = {
	.name = "perfetto", .ext = ".perfetto-trace",
	.about = "a Perfetto trace: the memory events as Perfetto's ftrace events,\n"
		 "processes and threads, counters of live bytes (ui.perfetto.dev,\n"
		 "trace_processor)",
	.binary = true, .stream = true, .detail = true, .priv_size = sizeof(struct perfetto),
	.begin = begin, .end = end, .release = release,
};
