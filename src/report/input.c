/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A command's input: opening a trace and running it through a model
 * (src/report/input.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/analyse.h>
#include "input.h"
#include "util/util.h"
#include "util/term.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

uint64_t input_thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

int input_jobs(int jobs)
{
	int cpus = kmt_cpus_usable();

	if (getenv("KMT_NO_THREADS"))
		return 1;
	if (jobs > 0)
		return jobs;
	return cpus > INPUT_MAX_JOBS ? INPUT_MAX_JOBS : cpus;
}

static int input_cgroups(struct input *a, const struct kmt_file_info *fi);

int input_open(struct input *a, const char *path, int jobs)
{
	const struct kmt_file_info *fi;
	struct kmt_diag d = { 0 };
	const char *text;
	size_t len;

	memset(a, 0, sizeof(*a));
	a->path = path;
	a->wall0 = clock_ns(CLOCK_MONOTONIC);
	if (kmt_file_open(&a->f, path, &d))
		return error("%s", d.msg);
	kmt_file_set_threads(a->f, input_jobs(jobs));
	fi = kmt_file_info(a->f);
	text = kmt_file_kallsyms(a->f, &len);
	a->syms = kmt_symbols_parse(text, len);
	a->comms = kmt_comms_new();
	a->dec = kmt_decoder_new(kmt_file_formats(a->f), fi->big_endian, fi->kernel_long_size);
	if (!a->syms || !a->comms || !a->dec)
		return error("out of memory");
	text = kmt_file_cmdlines(a->f, &len);
	kmt_comms_parse(a->comms, text, len);
	if (!(a->aliases = kmt_slab_aliases_of_file(a->f)))
		return error("out of memory");
	a->skipped = kmt_decoder_skipped(a->dec);
	return input_cgroups(a, fi);
}

/* The file's cgroups (kmt_file_info.cgroups); a damaged list is left out, with a warning. */
static int input_cgroups(struct input *a, const struct kmt_file_info *fi)
{
	int ret;

	if (!fi->cgroups)
		return EXIT_OK;
	if (!(a->cgroups = kmt_cgroups_new()))
		return error("out of memory");
	ret = kmt_cgroups_parse(a->cgroups, fi->cgroups, strlen(fi->cgroups));
	if (ret == -ENOMEM)
		return error("out of memory");
	if (ret) {
		warning("%s: its list of the tasks' cgroups is damaged: cgroups are shown as not recorded",
			a->path);
		kmt_cgroups_free(a->cgroups);
		a->cgroups = NULL;
	}
	return EXIT_OK;
}

/* --cache NAME: say what it selects when that is not NAME alone. */
static void cache_note(const struct input *a, const char *name)
{
	const struct kmt_slab_group *g = kmt_slab_group_of(a->aliases, name, strlen(name));
	char canon[64];

	if (g)
		note("cache '%.60s' is merged: the kernel reports %s as '%s', so this selects them all",
		     name, g->label, g->name);
	else if (kmt_kmalloc_class(name) && strcmp(kmt_slab_event_name(NULL, name, canon, sizeof(canon)), name))
		note("cache '%.60s' is the kernel's '%s'", name, canon);
}

int input_run(struct input *a, const char *buffer, struct kmt_model_opts *mo,
		 const struct kmt_model_hooks *hooks, double t_start, double t_end)
{
	struct kmt_analyse_opts ao = { .t_start = t_start, .t_end = t_end, .t0 = &a->t0, .stats = a->stats };
	struct kmt_diag d = { 0 };
	int b = buffer ? kmt_file_find_buffer(a->f, buffer) : kmt_file_main_buffer(a->f), ret;
	struct progress *pr;

	if (buffer && b < 0)
		return error("%s: no buffer '%s'", a->path, buffer);
	tuning_from_env(&ao.shards, &ao.parts);
	mo->cmdlines = a->comms;
	mo->syms = a->syms;
	mo->slab_aliases = a->aliases;
	mo->cgroups = a->cgroups;
	if (mo->cgroup && !a->cgroups)
		return error("%s: the file has no record of the tasks' cgroups (recorded by another "
			     "tool, or by an older kmemtrace): -G cannot choose by cgroup", a->path);
	if (mo->cache)
		cache_note(a, mo->cache);
	kmt_model_opts_from_file(mo, a->f);
	a->m = kmt_model_new(mo);
	if (!a->m)
		return error("out of memory");
	if (hooks)
		kmt_model_set_hooks(a->m, hooks);
	if (b < 0) {
		kmt_model_finish(a->m, 0);	/* no events at all: empty results */
		return EXIT_OK;
	}
	pr = progress_start(a->path, a->f);
	ret = kmt_analyse(a->f, b, a->dec, a->m, &ao, &a->res, &d);
	progress_stop(pr);
	if (ret)
		return error("%s", d.msg);
	if (mo->cache && !kmt_model_summary(a->m)->cache_matched)
		warning("%s: no object of cache '%.60s' is in the trace%s: nothing to report", a->path,
			mo->cache, t_start > 0 || t_end >= 0 ? " window" : "");
	if ((mo->pid || mo->comm || mo->cgroup) && !kmt_model_summary(a->m)->filter_matched)
		input_unmatched(a->path, mo, t_start > 0 || t_end >= 0);
	return EXIT_OK;
}

void input_unmatched(const char *path, const struct kmt_model_opts *mo, bool window)
{
	char what[64];

	if (mo->pid)
		snprintf(what, sizeof(what), "with pid %d", (int)mo->pid);
	else if (mo->comm)
		snprintf(what, sizeof(what), "named '%.40s'", mo->comm);
	else
		snprintf(what, sizeof(what), "in cgroup '%.40s'", mo->cgroup);
	warning("%s: no task %s is in the trace%s: nothing to report", path, what, window ? " window" : "");
}

struct progress {
	const char *path;
	const struct kmt_file *f;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop, shown;
};

/* Sleep @ms unless stopped; true if stopped. */
static bool progress_wait(struct progress *p, long ms)
{
	struct timespec t;
	bool stop;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&p->mu);
	while (!p->stop && pthread_cond_timedwait(&p->cv, &p->mu, &t) != ETIMEDOUT)
		;
	stop = p->stop;
	pthread_mutex_unlock(&p->mu);
	return stop;
}

static void *progress_main(void *arg)
{
	struct progress *p = arg;
	const char *after = getenv("KMT_PROGRESS_AFTER_MS");
	uint64_t done, total;
	char buf[256];
	const char *name;
	int w;

	if (progress_wait(p, after ? atol(after) : 1000))
		return NULL;
	/* One line, whatever the path: "kmemtrace report: reading " and " 100%" around it. */
	w = term_width(STDERR_FILENO);
	w = (w > 0 ? w : 80) - 1 - (int)strlen(cmd_name) - 17;
	name = term_cut(p->path, MAX(w, 8), false, buf, sizeof(buf));
	do {
		kmt_file_read_progress(p->f, &done, &total);
		fprintf(stderr, "\r%s: reading %s: %d%%", cmd_name, name,
			total ? (int)(MIN(done, total) * 100 / total) : 0);
		fflush(stderr);
		p->shown = true;
	} while (!progress_wait(p, 250));
	return NULL;
}

/* One line at a time on the terminal (diff reads two files at once). */
static int progress_shown;

struct progress *progress_start(const char *path, const struct kmt_file *f)
{
	struct progress *p;

	if (!isatty(STDERR_FILENO) || __atomic_exchange_n(&progress_shown, 1, __ATOMIC_ACQ_REL))
		return NULL;
	if (!(p = calloc(1, sizeof(*p)))) {
		__atomic_store_n(&progress_shown, 0, __ATOMIC_RELEASE);
		return NULL;
	}
	p->path = path;
	p->f = f;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pthread_create(&p->th, NULL, progress_main, p)) {
		free(p);
		__atomic_store_n(&progress_shown, 0, __ATOMIC_RELEASE);
		return NULL;
	}
	return p;
}

void progress_stop(struct progress *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->th, NULL);
	if (p->shown) {
		fputs("\r\033[K", stderr);	/* the line is gone: what follows starts clean */
		fflush(stderr);
	}
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
	__atomic_store_n(&progress_shown, 0, __ATOMIC_RELEASE);
}

#define MAX_SKIP_LINES 20

/* One part of the data passed over, as a warning. */
static void skip_warning(const char *path, const struct kmt_skip *g)
{
	char cpu[32] = "", what[64] = "";

	if (g->cpu >= 0)
		snprintf(cpu, sizeof(cpu), "CPU %d data: ", g->cpu);
	if (g->cut && g->cpu < 0) {
		warning("%s: the data of any CPU after byte %" PRIu64 " is missing", path, g->from);
		return;
	}
	if (g->cut) {
		warning("%s: %s%s", path, cpu, g->why);
		return;
	}
	if (g->chunks)
		snprintf(what, sizeof(what), "%u chunk%s", g->chunks, g->chunks == 1 ? "" : "s");
	else if (g->pages)
		snprintf(what, sizeof(what), "%u page%s", g->pages, g->pages == 1 ? "" : "s");
	else
		snprintf(what, sizeof(what), "data");
	warning("%s: %sskipped %s at bytes %" PRIu64 "-%" PRIu64 " (0x%" PRIx64 "-0x%" PRIx64 ")%s: %s",
		path, cpu, what, g->from, g->to, g->from, g->to, g->to_end ? ", to its end" : "", g->why);
}

int file_damage(struct kmt_file *f, const struct kmt_symbols *syms,
		const struct kmt_skip *skipped, size_t n)
{
	const char *path = kmt_file_info(f)->path, *first;
	const struct kmt_damage *dm;
	size_t i, bad, off;
	int nd, k;

	dm = kmt_file_damage(f, &nd);
	for (k = 0; k < nd; k++)
		warning("%s: %s", path, dm[k].what);
	bad = kmt_symbols_bad_lines(syms, &off, &first);
	if (bad)
		warning("%s: kallsyms: %zu %s (the first, at byte %zu of its text: '%s'): call "
			"sites near them are shown as raw addresses", path, bad,
			bad == 1 ? "line is not a symbol" : "lines are not symbols", off, first);
	for (i = 0; i < n && i < MAX_SKIP_LINES; i++)
		skip_warning(path, &skipped[i]);
	if (n > MAX_SKIP_LINES)
		warning("%s: and %zu more parts of the data skipped (kmemtrace check lists them all)",
			path, n - MAX_SKIP_LINES);
	if (!nd && !bad && !n)
		return EXIT_OK;
	return error("%s is damaged: the output above leaves out what could not be read", path);
}

int input_damage(const struct input *a)
{
	return a->f ? file_damage(a->f, a->syms, a->res.skipped, a->res.nr_skipped) : EXIT_OK;
}

void input_close(struct input *a)
{
	kmt_analyse_result_release(&a->res);
	kmt_model_free(a->m);
	kmt_slab_aliases_free(a->aliases);
	kmt_cgroups_free(a->cgroups);
	kmt_decoder_free(a->dec);
	kmt_comms_free(a->comms);
	kmt_symbols_free(a->syms);
	kmt_file_close(a->f);
	memset(a, 0, sizeof(*a));
}

/* In the order of the INPUT_ bits. */
static const struct opt input_opts[] = {
	{ 0x1001, 0, "time", "START,END", "only events in this window, seconds from the first\n"
	  "event (either may be empty)", .type = OT_WINDOW, .what = "time window",
	  .off = offsetof(struct input_opts, window) },
	{ 'p', 'p', "pid", "PID", "only %s this task", .type = OT_INT, .min = 1, .max = INT32_MAX,
	  .what = "pid", .off = offsetof(struct input_opts, mo.pid) },
	{ 0x1002, 0, "comm", "NAME", "only %s tasks with this name", .type = OT_STR,
	  .off = offsetof(struct input_opts, mo.comm) },
	{ 0x1003, 0, "cache", "NAME", "only objects of this slab cache (kmalloc-64: a\n"
	  "kmalloc size; any name of a merged cache)", .type = OT_STR,
	  .off = offsetof(struct input_opts, mo.cache) },
	{ 0x1004, 0, "stack-depth", "N", "slab allocation stacks (--stack recordings): group\n"
	  "by the first N callers of the call site (default: all)", .type = OT_UINT, .min = 1,
	  .max = 1024, .what = "stack depth", .off = offsetof(struct input_opts, mo.stack_depth) },
	{ 'B', 'B', "buffer", "NAME", "the trace-cmd instance buffer to read (default: the\nmain one)",
	  .type = OT_STR, .off = offsetof(struct input_opts, buffer) },
	{ 'j', 'j', "jobs", "N", "threads to read with: N inflate the CPUs' data,\n"
	  "decoding and the model get one each, and from 4 the\n"
	  "model runs in N-2 shards; 1: all on one\n"
	  "(default: the CPUs it may run on, as nproc counts,\nat most 64)",
	  .type = OT_INT, .min = 1, .max = 1024, .what = "number of jobs",
	  .off = offsetof(struct input_opts, jobs) },
	{ 'G', 'G', "cgroup", "PATH", "only %s tasks in this cgroup or below it, as\n"
	  "/proc/PID/cgroup shows it: 0::/a/b (cgroup v2),\n"
	  "memory:/a/b (v1 memory), or /a/b (v2 where mounted)", .type = OT_STR,
	  .off = offsetof(struct input_opts, mo.cgroup) },
	{ 0 },
};

const struct opt_group input_group = { input_opts, NULL };

static uint64_t process_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

static void stats_line(const char *stage, uint64_t ns, uint64_t events, const char *where)
{
	fprintf(stderr, "  %-13s %8.3f %9.1f   %s\n", stage, (double)ns / 1e9,
		events ? (double)ns / (double)events : 0.0, where);
}

void input_print_stats(const struct input *a, uint64_t output_ns)
{
	input_print_stages(&a->res.stats, a->res.records, a->wall0, a->writer_ns, output_ns);
}

uint64_t input_wall_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

void input_print_stages(const struct kmt_analyse_stats *st, uint64_t n, uint64_t wall0,
			   uint64_t writer_ns, uint64_t output_ns)
{
	uint64_t wall_ns = clock_ns(CLOCK_MONOTONIC) - wall0;
	uint64_t cpu = process_cpu_ns();
	uint64_t sum = st->inflate_ns + st->merge_ns + st->decode_ns + st->model_ns + st->write_ns + output_ns +
		       st->wait_ns + writer_ns;
	char events[32], where[48];

	fprintf(stderr, "stats: %s event%s in %.3f s, %.3f s CPU (%.2f CPUs busy): %.2f M events/s\n",
		fmt_count((double)n, false, events, sizeof(events)), n == 1 ? "" : "s", (double)wall_ns / 1e9, (double)cpu / 1e9, wall_ns ? (double)cpu / (double)wall_ns : 0.0,
		wall_ns ? (double)n / ((double)wall_ns / 1e9) / 1e6 : 0.0);
	fprintf(stderr, "  %-13s %8s %9s   %s\n", "stage", "CPU s", "ns/event", "where");
	snprintf(where, sizeof(where), "%d thread%s (-j): parallel", st->inflate_threads,
		 st->inflate_threads == 1 ? "" : "s");
	stats_line("read+inflate", st->inflate_ns, n, st->inflate_threads ? where :
		   "in the stream's thread: serial");
	if (st->decode_parts) {
		/* The parts' CPU is their stream's and decoding's, not to be told apart cheaply. */
		snprintf(where, sizeof(where), "%d part threads (-j): parallel", st->decode_parts);
		stats_line("read+decode", st->decode_ns, n, where);
		stats_line("merge", st->merge_ns, n, "producer thread, of the parts: serial");
	} else {
		stats_line("stream merge", st->merge_ns, n, "producer thread: serial");
		stats_line("decode", st->decode_ns, n, "producer thread: serial");
	}
	snprintf(where, sizeof(where), "%d shards on threads (-j): parallel", st->model_shards);
	stats_line("model", st->model_ns, n, st->model_shards > 1 ? where : st->model_thread ?
		   "model thread: serial" : "producer thread: serial");
	if (st->model_shards > 1)
		stats_line("  shard 0", st->route_ns, n, "routes every event: serial");
	if (st->write_ns)
		stats_line("write out", st->write_ns, n, "the shards' records in order: serial");
	if (writer_ns)
		stats_line("writer", writer_ns, n, "the format's events, writer thread: serial");
	stats_line("output", output_ns, n, "main thread: serial");
	stats_line("waiting", st->wait_ns, n, "asleep in hand-overs, nothing to do: in no stage");
	stats_line("other", cpu > sum ? cpu - sum : 0, n, "open, symbols, setup, --stats itself");
}
