/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A recording's life, shared by kmemtrace record and kmemtrace watch:
 * fork the command (held) -> private instance, events, filters -> metadata
 * into the spool -> per-CPU capture threads -> tracing on, command
 * released -> wait (signals, command exit, -d, a capture error, or a hook
 * saying so) -> tracing off, drain, stats -> instance removed -> spool
 * finalised into the trace file. Every exit path after the instance exists
 * goes through recording_teardown(), so the kernel is left as it was found.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/event.h>
#include <kmemtrace/tracefile.h>

#include "util/util.h"
#include "util/opt.h"
#include "record.h"

int recording_add_pids(struct recording_opts *o, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long v = strtol(tok, &end, 10);

		if (*end || v <= 0 || v > INT32_MAX || o->nr_pids >= 64) {
			free(copy);
			return -1;
		}
		if (kill((pid_t)v, 0) && errno == ESRCH) {
			free(copy);
			return -ESRCH;
		}
		o->pids[o->nr_pids++] = (pid_t)v;
	}
	free(copy);
	return 0;
}

int recording_opt_pids(const struct cmd_help *h, struct recording_opts *o, const char *arg)
{
	switch (recording_add_pids(o, arg)) {
	case 0:
		return -1;
	case -ESRCH:
		return error("-p %s: no such process", arg);
	default:
		return usage_error(h, "bad pid list '%s'", arg);
	}
}

void recording_opts_defaults(struct recording_opts *o)
{
	struct budget b;

	o->output = "kmemtrace.dat";
	o->compress = true;
	o->level = 1;
	budget_here(&b);
	o->buffer_kb = b.buffer_kb;
	o->hold_mb = (size_t)(b.hold >> 20);
	o->live_max_bytes = (size_t)b.hold;
	o->live_prefault = (size_t)b.prefault;
}

static int recording_opt(const struct cmd_help *h, void *values, int id, const char *value)
{
	struct recording_opts *o = values;

	switch (id) {
	case 'p':
		return recording_opt_pids(h, o, value);
	case 'd':
		if (!parse_duration(value, &o->duration) || o->duration <= 0)
			return usage_error(h, "bad duration '%s'", value);
		break;
	}
	return -1;
}

/* In the order of the REC_ bits. */
static const struct opt recording_opts[] = {
	{ 'p', 'p', "pid", "PID[,PID]", "only these processes and their children" },
	{ 'F', 'F', "follow", NULL, "only COMMAND and its children", .type = OT_FLAG,
	  .off = offsetof(struct recording_opts, follow) },
	{ 'd', 'd', "duration", "TIME", "stop after TIME (10, 2.5s, 500ms, 1m)" },
	{ 'b', 'b', "buffer-size", "KB", "ring buffer per CPU (default: half the memory\n"
	  "budget over the CPUs, 64 to 16384; see above)", .type = OT_UINT, .min = 4, .max = 64 << 20,
	  .what = "buffer size", .off = offsetof(struct recording_opts, buffer_kb) },
	{ 0x1101, 0, "buffer-percent", "N", "wake the capture threads when a CPU's buffer is\nthis full",
	  .type = OT_UINT, .min = 0, .max = 100, .what = "buffer percent", .def = "25",
	  .off = offsetof(struct recording_opts, buffer_percent) },
	{ 0x1102, 0, "filter", "EXPR", "kernel filter, e.g. 'bytes_req > 4096', applied to\n"
	  "the events that have its fields", .type = OT_STR, .off = offsetof(struct recording_opts, filter) },
	{ 0x1103, 0, "rt-prio", "N", "capture threads' SCHED_FIFO priority; 0: ordinary\nscheduling",
	  .type = OT_INT, .min = 0, .max = 99, .what = "priority", .def = "1",
	  .off = offsetof(struct recording_opts, rt_prio) },
	{ 0x1104, 0, "user", "USER", "run COMMAND as USER (default under sudo: the\ninvoking user)",
	  .type = OT_STR, .off = offsetof(struct recording_opts, user) },
	{ 0x1105, 0, "cgroup", "PATH", "only tasks in this cgroup or below it (0::/a/b,\n"
	  "memory:/a/b or /a/b): those in it at the start,\ntheir children, and those moved in later",
	  .type = OT_STR, .off = offsetof(struct recording_opts, cgroup) },
	{ 0 },
};

const struct opt_group recording_group = { recording_opts, recording_opt };

double recording_now_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * KMT_TIMES=1 (after git's GIT_TRACE_PERFORMANCE): each step's wall time
 * since the previous one on stderr, for bench/percpu.sh.
 */
static void recording_mark(struct recording *rc, const char *step)
{
	const char *env = getenv("KMT_TIMES");

	if (!env || !*env || !strcmp(env, "0"))
		return;
	if (rc->mark.tv_sec)
		fprintf(stderr, "%s: time: %-10s %9.3f ms\n", cmd_name, step, recording_now_since(&rc->mark) * 1e3);
	clock_gettime(CLOCK_MONOTONIC, &rc->mark);
}

static void *remove_main(void *arg)
{
	struct recording *rc = arg;

	kmt_instance_remove(&rc->in);	/* on failure, recording_teardown() tries again and says why */
	return NULL;
}

/* The instance goes on a thread (the kernel freeing the ring buffers, ~0.1 s). */
static void remove_async(struct recording *rc)
{
	if (rc->rm_started) {	/* its ring buffers were being shrunk */
		pthread_join(rc->rm_th, NULL);
		rc->rm_started = false;
	}
	if (rc->in.created && !pthread_create(&rc->rm_th, NULL, remove_main, rc))
		rc->rm_started = true;
}

static void *shrink_main(void *arg)
{
	struct recording *rc = arg;

	kmt_instance_set_buffer_kb(&rc->in, 4, NULL);
	return NULL;
}

/*
 * Tracing is off and the held pages are out of the ring buffers (a page
 * spliced into a pipe is the pipe's): the buffers can be freed while
 * the file is written, leaving the instance's removal little to do.
 */
static void shrink_async(struct recording *rc)
{
	if (rc->in.created && !rc->rm_started && !pthread_create(&rc->rm_th, NULL, shrink_main, rc))
		rc->rm_started = true;
}

/*
 * Stop tracing, drain the buffers, keep the stats, remove the instance.
 * With @async and a spool, the pages the recorder holds in memory stay
 * there for recording_finalize() to read, and the instance stays while they do
 * (a held page goes back to its ring buffer when read; the buffer must
 * still be there): recording_released() frees the recorder and removes the instance on
 * a thread while the rest of the file is written. The next call waits for
 * that thread, and drains and removes whatever is left.
 */
static int recording_teardown(struct recording *rc, bool async, struct kmt_diag *d)
{
	struct kmt_diag dd = { 0 };
	int ret = 0, err;

	if (rc->rm_started) {
		pthread_join(rc->rm_th, NULL);
		rc->rm_started = false;
	}

	if (rc->sampler) {
		kmt_sampler_stop(rc->sampler, &rc->sampled);
		kmt_sampler_free(rc->sampler);
		rc->sampler = NULL;
	}
	record_cgroups_end(rc);
	if (rc->tracing) {
		kmt_session_tracing(&rc->in, false, &dd);
		rc->tracing = false;
	}
	if (rc->live) {
		err = kmt_live_stop(rc->live, &dd);
		if (err) {
			rc->capture_err = err;
			snprintf(rc->capture_why, sizeof(rc->capture_why), "%s", dd.msg);
		}
		/* The pages still queued are the hooks' to take (drained). */
		if (rc->spool && rc->in.created)
			kmt_session_save_stats(&rc->in, rc->spool, KMT_SPOOL_MAIN, rc->cpus, rc->nr_cpus,
					       &dd);
	}
	if (rc->r) {
		bool keep = async && rc->spool;

		err = keep ? kmt_recorder_halt(rc->r, &dd) : kmt_recorder_stop(rc->r, &dd);
		if (err) {
			rc->capture_err = err;
			snprintf(rc->capture_why, sizeof(rc->capture_why), "%s", dd.msg);
		}
		if (err == -ENOSPC)
			kmt_spool_unreserve(rc->spool);	/* the disk is full: the room is needed now */
		if (rc->in.created)
			kmt_session_save_stats(&rc->in, rc->spool, KMT_SPOOL_MAIN, rc->cpus, rc->nr_cpus,
					       &dd);
		if (keep) {
			shrink_async(rc);
			return 0;
		}
		kmt_recorder_free(rc->r);
		rc->r = NULL;
	}
	if (async)
		remove_async(rc);
	if (!rc->rm_started && rc->in.created) {	/* created: the remover thread's once started */
		err = kmt_instance_remove(&rc->in);
		if (err)
			ret = kmt_diag_set(d, err, "cannot remove tracefs instance %s: %s",
					   rc->in.path, strerror(-err));
	}
	return ret;
}

/* "kmemtrace record -F -- ./app 'a b'": how the recording was asked for. */
static void describe_command(const struct recording_opts *o, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "kmemtrace");
	int i;

	for (i = 0; i < o->cmdline_n && n < len; i++) {
		const char *a = o->cmdline[i];
		bool plain = *a && !a[strcspn(a, " \t\n'\"\\$`*?[]{}()<>|&;!#~")];

		n += (size_t)snprintf(buf + n, len - n, plain ? " %s" : " '%s'", a);
	}
	if (n >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
}

/* Did the recording ask for vmalloc events (the default) and the kernel have none (before 6.2)? */
static bool no_vmalloc(const struct recording *rc)
{
	int i;

	if (rc->o.events_spec)
		return false;
	for (i = 0; i < rc->events.n; i++)
		if (!strncmp(rc->events.v[i], "vmalloc:", 8))
			return false;
	return true;
}

/* What this kernel cannot trace that 6.18 does, said once before recording (kmt_decode_lacks()). */
static void say_lacks(const struct recording *rc)
{
	static const char *const evs[] = { "kmem:kmem_cache_alloc", "kmem:kmem_cache_alloc_node",
					   "kmem:kmem_cache_free", "percpu:percpu_alloc_percpu" };
	struct kmt_slab_aliases *sl = kmt_slab_aliases_read();
	struct kmt_formats fs;
	struct kmt_diag d = { 0 };
	const char *why[4];
	size_t i, n;
	int k;

	kmt_formats_init(&fs);
	for (i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		for (k = 0; k < rc->events.n; k++)
			if (!strcmp(rc->events.v[k], evs[i]))
				kmt_tracefs_add_format(rc->root, evs[i], &fs, &d);
	n = kmt_decode_lacks(&fs, kmt_slab_caches_count(sl) > 0, no_vmalloc(rc), why, 4);
	for (i = 0; i < n; i++)
		fprintf(stderr, "%s: note: this kernel: %s\n", cmd_name, why[i]);
	kmt_formats_release(&fs);
	kmt_slab_aliases_free(sl);
}

/* What is recorded and how, for kmemtrace info. */
static void describe_settings(const struct recording *rc, const struct kmt_session_opts *so, char *buf,
			      size_t len)
{
	char who[160], stacks[40];

	if (rc->o.stack && rc->o.stack_sample > 1)
		snprintf(stacks, sizeof(stacks), "1 in %u" KMT_RECINFO_SLICES, rc->o.stack_sample);
	else
		snprintf(stacks, sizeof(stacks), "%s", rc->o.stack ? "yes" : "no");
	ui_scope(&rc->o, who, sizeof(who));
	/* top keeps no hold: its pages queue for the analysis, up to the same rest. */
	snprintf(buf, len, "%d events; tasks: %s; buffer %u KiB per CPU; %s %zu MiB; clock %s; "
		 "stacks %s; filter %s", rc->events.n, who, rc->o.buffer_kb, rc->o.live ? "queue" : "hold",
		 rc->o.live ? rc->o.live_max_bytes >> 20 : rc->o.hold_mb, so->clock, stacks,
		 rc->o.filter ? rc->o.filter : "none");
	if (no_vmalloc(rc) && strlen(buf) + 40 < len)
		strcat(buf, "; " KMT_RECINFO_NO_VMALLOC);
}

/*
 * The ring buffers are sized on a thread while the metadata is read: the
 * kernel allocates them a page at a time (8 ms and ~0.3 ms a MiB here,
 * bench/percpu.sh: 162 ms for the 512 MiB of a 64-CPU machine's budget).
 * After the configuration, whose trace_clock write resets the buffers (a
 * resize during a reset fails with EBUSY); before the readers open them.
 */
struct sizing {
	const struct kmt_instance *in;
	unsigned int kb;
	struct kmt_diag d;
	int ret;
	pthread_t th;
	bool started;
};

static void *sizing_main(void *arg)
{
	struct sizing *s = arg;

	s->ret = kmt_instance_set_buffer_kb(s->in, s->kb, &s->d);
	return NULL;
}

static void sizing_start(struct sizing *s, const struct kmt_instance *in, unsigned int kb)
{
	s->in = in;
	s->kb = kb;
	s->started = !pthread_create(&s->th, NULL, sizing_main, s);
	if (!s->started)
		sizing_main(s);
}

static int sizing_join(struct sizing *s, struct kmt_diag *d)
{
	if (s->started)
		pthread_join(s->th, NULL);
	s->started = false;
	return s->ret ? kmt_diag_set(d, s->ret, "%s", s->d.msg) : 0;
}

static int recording_setup(struct recording *rc, struct kmt_diag *d)
{
	struct kmt_session_opts so = {
		.events = &rc->events,
		.pids = rc->o.nr_pids ? rc->o.pids : rc->o.follow ? &rc->child.pid : NULL,
		.nr_pids = rc->o.nr_pids ? rc->o.nr_pids : rc->o.follow ? 1 : 0,
		.filter = rc->o.filter,
		.stack = rc->o.stack,
		.stack_sample = rc->o.stack_sample,
		.buffer_kb = 0,		/* sized on a thread (struct sizing) */
		.buffer_percent = rc->o.buffer_percent,
		.clock = rc->clock ? rc->clock : "local",
		.event_filters = rc->event_filters, .nr_event_filters = rc->nr_event_filters,
	};
	struct kmt_recorder_opts ro = {
		.spool = rc->spool, .cpus = rc->cpus, .nr_cpus = rc->nr_cpus,
		.subbuf_size = (uint32_t)sysconf(_SC_PAGESIZE), .rt_prio = rc->o.rt_prio,
		.hold_bytes = rc->o.hold_mb << 20,
		/* -m 0: what is recorded reaches the spool within half a second. */
		.sync_ms = rc->o.hold_mb ? 0 : 500,
	};
	struct kmt_spool_meta *meta = calloc(1, sizeof(*meta));
	struct sizing sz = { 0 };
	char name[64], notes[2048], sub[32];
	pid_t tids[KMT_MAX_CPUS + 2];
	int n, ret;

	if (!meta)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	if (rc->o.cgroup && (ret = record_cgroup_filter(rc, &so.pids, &so.nr_pids, d))) {
		free(meta);
		return ret;
	}

	snprintf(name, sizeof(name), KMT_INSTANCE_PREFIX "%d", (int)getpid());
	ret = kmt_instance_create(&rc->in, rc->root, name, d);
	recording_mark(rc, "mkdir");
	/* Before any thread opens a file: killed, we leave no kernel tracing for nobody. */
	if (!ret && !(rc->dog = kmt_watchdog_start(rc->root, d)))
		ret = d->err ? d->err : -EIO;
	ret = ret ?: kmt_watchdog_guard(rc->dog, rc->in.name);
	/* Killed, this recorder leaves its events to the spool noted here. */
	if (!ret && rc->spool && (n = kmt_instance_note_spool(&rc->in, kmt_spool_dir(rc->spool))) &&
	    !rc->o.quiet)
		fprintf(stderr, "%s: note: cannot note the spool in %s (%s): if this recorder is killed, "
			"a new one cannot save what its instance holds\n", cmd_name, KMT_INSTANCE_NOTES,
			strerror(-n));
	ret = ret ?: kmt_session_configure(&rc->in, &so, notes, sizeof(notes), d);
	if (ret) {
		free(meta);
		return ret;
	}
	recording_mark(rc, "configure");
	if (rc->o.buffer_kb)
		sizing_start(&sz, &rc->in, rc->o.buffer_kb);
	if (*notes && !rc->o.quiet)
		fprintf(stderr, "%s: note: %s", cmd_name, notes);
	if (!rc->o.quiet)
		say_lacks(rc);
	if (kmt_instance_read(&rc->in, "buffer_subbuf_size_kb", sub, sizeof(sub)) > 0)
		ro.subbuf_size = (uint32_t)strtoul(sub, NULL, 10) * 1024;
	meta->partial = kmt_session_partial(rc->root, &so);
	describe_command(&rc->o, meta->command, sizeof(meta->command));
	describe_settings(rc, &so, meta->settings, sizeof(meta->settings));
	meta->subbuf_size = ro.subbuf_size;
	meta->nr_cpus = rc->nr_cpus;
	memcpy(meta->cpus, rc->cpus, (size_t)rc->nr_cpus * sizeof(*rc->cpus));
	ret = rc->spool ? kmt_session_capture(&rc->in, &rc->events, rc->spool, meta, d) : 0;
	free(meta);
	recording_mark(rc, "metadata");
	n = sizing_join(&sz, ret ? NULL : d);
	ret = ret ?: n;
	recording_mark(rc, "sized");
	if (ret)
		return ret;
	/* Room to finalise on a full disk: the compressed metadata and a chunk. */
	if (rc->spool)
		ret = kmt_spool_reserve(rc->spool, (2u << 20) + kmt_spool_size(rc->spool, KMT_SPOOL_KALLSYMS) / 4, d);
	if (ret)
		return ret;
	ro.instance_path = rc->in.path;
	tids[0] = (pid_t)gettid();
	if (rc->o.live) {
		struct kmt_live_opts lo = {
			.instance_path = rc->in.path, .cpus = rc->cpus, .nr_cpus = rc->nr_cpus,
			.subbuf_size = ro.subbuf_size, .rt_prio = rc->o.rt_prio,
			.period_ms = rc->o.live_period_ms, .max_bytes = rc->o.live_max_bytes,
			.prefault_bytes = rc->o.live_prefault * (size_t)rc->nr_cpus,
		};

		rc->live = kmt_live_start(&lo, d);
		if (!rc->live)
			return d->err ? d->err : -EIO;
		n = kmt_live_tids(rc->live, tids + 1, KMT_MAX_CPUS);
	} else {
		rc->r = kmt_recorder_start(&ro, d);
		if (!rc->r)
			return d->err ? d->err : -EIO;
		n = kmt_recorder_tids(rc->r, tids + 1, KMT_MAX_CPUS);
	}
	if (rc->o.stack && rc->o.stack_sample > 1) {
		struct kmt_sampler_opts sm = {
			.instance_path = rc->in.path, .cpus = rc->cpus, .nr_cpus = rc->nr_cpus,
			.one_in = rc->o.stack_sample, .rt_prio = rc->o.rt_prio,
		};

		rc->sampler = kmt_sampler_start(&sm, d);
		if (!rc->sampler)
			return d->err ? d->err : -EIO;
		tids[++n] = kmt_sampler_tid(rc->sampler);
	}
	if (rc->o.cgroup)
		tids[++n] = rc->cg.tid;
	recording_mark(rc, "readers");
	ret = kmt_session_exclude(&rc->in, tids, n + 1, d);
	if (ret)
		return ret;
	ret = kmt_session_tracing(&rc->in, true, d);
	rc->tracing = !ret;
	recording_mark(rc, "tracing-on");
	/* Where each task is, now that any move or birth after shows in the trace. */
	if (!ret && rc->spool)
		ret = record_cgroups_save(rc, d);
	recording_mark(rc, "cgroups");
	return ret;
}

/* Wait for the end: the command, a signal, -d, a capture error, or the hook. */
static int recording_wait(struct recording *rc, const struct recording_hooks *h)
{
	int errfd = rc->live ? kmt_live_error_fd(rc->live) : kmt_recorder_error_fd(rc->r), stop_sig = 0;
	double shown = -1;

	if (rc->o.status && rc->r)
		ui_hint(&rc->o);
	for (;;) {
		struct pollfd pf[2 + REC_HOOK_FDS] = { { rc->sigfd, POLLIN, 0 }, { errfd, POLLIN, 0 } };
		double el = recording_now_since(&rc->t0), left = rc->o.duration ? rc->o.duration - el : 1.0;
		int timeout = (int)(MIN(left, 1.0) * 1000) + 1, n = 2, ht = -1;

		if (rc->o.duration && left <= 0)
			break;
		if (h && h->fds)
			n += h->fds(rc, h->arg, pf + 2, REC_HOOK_FDS, &ht);
		if (ht >= 0 && ht < timeout)
			timeout = ht;
		if (rc->o.status && rc->r && el - shown >= 1.0) {
			ui_status(&rc->in, rc->cpus, rc->nr_cpus, rc->r, &rc->o, el);
			shown = el;
		}
		if (poll(pf, (nfds_t)n, timeout) < 0 && errno != EINTR)
			break;
		if (pf[1].revents)
			break;		/* a capture thread failed: stop */
		if (h && h->ready && h->ready(rc, h->arg, pf + 2, n - 2))
			break;
		if (pf[0].revents) {
			struct signalfd_siginfo si;

			if (read(rc->sigfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo != SIGCHLD) {
				stop_sig = (int)si.ssi_signo;
				break;
			}
			if (rc->child.pid > 0 && waitpid(rc->child.pid, &rc->child.status, WNOHANG) == rc->child.pid) {
				rc->child.exited = true;
				break;
			}
		}
	}
	if (rc->o.status)
		ui_status_clear();
	return stop_sig;
}

/* Every held page is read: the recorder and then the instance can go. */
static void recording_released(void *arg)
{
	struct recording *rc = arg;

	kmt_recorder_free(rc->r);
	rc->r = NULL;
	remove_async(rc);
}

/*
 * The file could not be written: what the recorder still holds goes to
 * the spool for --recover, and the spool says what is missing from it.
 */
static void recording_keep_rest(struct recording *rc, struct kmt_spool *spool, uint64_t lost)
{
	struct kmt_diag d = { 0 };
	char why[200];

	if (rc->r) {
		if (kmt_recorder_stop(rc->r, &d))
			error("the pages still held are not all in the spool: %s", d.msg);
		kmt_recorder_free(rc->r);
		rc->r = NULL;
	}
	if (lost) {
		snprintf(why, sizeof(why), "%.1f MiB of pages were read and freed when "
			 "writing the file failed, and are not in the spool", (double)lost / 1048576);
		kmt_spool_set_truncated(spool, why, &d);
		error("%s", why);
	}
}

int recording_finalize(struct recording *rc, struct kmt_spool *spool, const char *output, bool recovered,
		 const struct recording_hooks *h)
{
	struct kmt_finalize_opts fo = {
		.zalg = rc->o.compress ? KMT_Z_ZSTD : KMT_Z_NONE, .level = rc->o.level,
		.chunk_pages = 64, .recovered = recovered, .punch = rc->capture_err == -ENOSPC,
		.full_kallsyms = rc->o.full_kallsyms,
		.progress = rc->o.status ? ui_progress : NULL, .progress_arg = (void *)output,
		.held = recovered ? NULL : rc->r, .released = recording_released, .released_arg = rc,
	};
	struct kmt_finalize_result *res = calloc(1, sizeof(*res));
	struct kmt_diag d = { 0 };
	int ret;

	if (!res)
		return error("out of memory");
	ret = kmt_spool_finalize(spool, output, &fo, res, &d);
	recording_mark(rc, "file");
	if (rc->o.status)
		ui_status_clear();
	if (ret) {
		error("%s", d.msg);
		if (fo.held)
			recording_keep_rest(rc, spool, res->consumed);
		free(res);
		if (recovered)
			error("the spool '%s' is kept", kmt_spool_dir(spool));
		else
			error("the recorded data is kept in '%s'; retry with 'kmemtrace record --recover %s'",
			      kmt_spool_dir(spool), kmt_spool_dir(spool));
		kmt_spool_close(spool);
		return EXIT_FAIL;
	}
	kmt_spool_remove(spool);
	if (!rc->o.quiet)
		ui_summary(&rc->o, res, rc->sampled.slices ? &rc->sampled : NULL, rc->elapsed, output, recovered);
	if (h && h->done)
		h->done(rc, h->arg, res);
	free(res);
	return EXIT_OK;
}

static void say_stale(void *arg, const struct kmt_stale *st)
{
	const struct recording *rc = arg;

	ui_stale(st, rc->o.quiet);
}

int recording_prepare(struct recording *rc, struct kmt_diag *d)
{
	int ret;

	/* A cgroup that does not exist: refused before anything is made. */
	if (rc->o.cgroup && (rc->o.nr_pids || rc->o.follow))
		return kmt_diag_set(d, -EINVAL, "--cgroup and %s exclude each other", rc->o.follow ? "-F" : "-p");
	if (rc->o.cgroup && (ret = record_cgroup_open(&rc->cg, rc->o.cgroup, d)))
		return ret;
	ret = kmt_tracefs_find(rc->root, sizeof(rc->root), getenv("KMT_TRACEFS"), true, d);
	if (ret)
		return ret;
	/* A dead recorder's instance: its events go to its spool, tracing stops, it goes. */
	kmt_recover_stale(rc->root, say_stale, rc);
	if (rc->o.events_spec)
		ret = kmt_events_expand(rc->root, rc->o.events_spec, false, &rc->events, d);
	else
		ret = kmt_events_expand(rc->root, kmt_events_default, true, &rc->events, d);
	ret = ret ?: kmt_events_expand(rc->root, kmt_events_naming, true, &rc->events, d);
	if (ret)
		return ret;
	rc->nr_cpus = kmt_tracefs_cpus(rc->cpus, KMT_MAX_CPUS);
	if (!rc->o.output)
		return 0;	/* live, nothing kept: no spool */
	if (kmt_spool_name(rc->o.output, rc->spool_dir, sizeof(rc->spool_dir)))
		return kmt_diag_set(d, -ENAMETOOLONG, "output name too long: %s", rc->o.output);
	rc->spool = kmt_spool_create(rc->spool_dir, d);
	return rc->spool ? 0 : d->err;
}

int recording_run(struct recording *rc, const struct recording_hooks *h)
{
	bool spooled = false, started = false;
	struct kmt_diag d = { 0 };
	sigset_t mask, old;
	int ret, code = EXIT_FAIL, stop_sig = 0;

	rc->child.pid = -1;
	rc->sigfd = -1;
	recording_mark(rc, "start");
	/* The output's place, checked before anything is created or recorded. */
	if (rc->o.output && output_prepare(rc->o.output, rc->o.quiet, true))
		return EXIT_FAIL;
	if (recording_prepare(rc, &d)) {
		kmt_events_release(&rc->events);
		record_cgroup_release(&rc->cg);
		return error("%s", d.msg);
	}
	recording_mark(rc, "prepare");
	if (rc->o.output && output_prepare(rc->o.output, rc->o.quiet, false)) {
		kmt_spool_remove(rc->spool);
		rc->spool = NULL;
		kmt_events_release(&rc->events);
		return EXIT_FAIL;
	}
	spooled = true;
	/* Signals are taken synchronously from a signalfd, in this thread only. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &old);
	signal(SIGPIPE, SIG_IGN);
	rc->sigfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (rc->o.argv && (ret = child_spawn(&rc->child, rc->o.argv, rc->o.user))) {
		code = ret == -ESRCH ? 1 : error("cannot start '%s': %s", rc->o.argv[0], strerror(-ret));
		goto out;
	}
	ret = recording_setup(rc, &d);
	if (!ret && h && h->start) {
		ret = h->start(rc, h->arg, &d);
		started = !ret;
	}
	if (ret) {
		code = error("%s", d.msg);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &rc->t0);
	if (rc->o.argv) {
		ret = child_release(&rc->child);
		if (ret) {
			error("cannot run '%s': %s", rc->o.argv[0], strerror(-ret));
			code = child_exec_code(-ret);
			rc->child.exited = waitpid(rc->child.pid, &rc->child.status, 0) > 0;
			goto out;
		}
	}
	stop_sig = recording_wait(rc, h);
	rc->elapsed = recording_now_since(&rc->t0);
	recording_mark(rc, "workload");
	if (started && h->stop)
		h->stop(rc, h->arg);
	started = false;
	ret = recording_teardown(rc, true, &d);
	recording_mark(rc, "drain");
	if (ret)
		error("%s", d.msg);
	if (h && h->drained)
		h->drained(rc, h->arg);
	if (rc->capture_err) {
		error("recording stopped: %s", rc->capture_why);
		if (rc->spool)
			kmt_spool_set_truncated(rc->spool, rc->capture_why, &d);
	}
	if (rc->spool) {
		code = recording_finalize(rc, rc->spool, rc->o.output, false, h);
	} else {
		code = EXIT_OK;
		if (h && h->done)
			h->done(rc, h->arg, NULL);
	}
	rc->spool = NULL;	/* removed, or kept on purpose for --recover */
	spooled = false;
	if (!ret && (ret = recording_teardown(rc, false, &d)))
		error("%s", d.msg);
	recording_mark(rc, "teardown");
	if (code == EXIT_OK && (ret || rc->capture_err))
		code = EXIT_FAIL;
out:
	if (started && h->stop)
		h->stop(rc, h->arg);
	recording_teardown(rc, false, &d);
	kmt_watchdog_stop(rc->dog);
	rc->dog = NULL;
	/* A command still running when recording stopped gets our signal. */
	if (rc->child.pid > 0 && rc->child.released && !rc->child.exited) {
		kill(rc->child.pid, stop_sig ? stop_sig : SIGTERM);
		rc->child.exited = waitpid(rc->child.pid, &rc->child.status, 0) > 0;
	}
	child_abort(&rc->child);
	kmt_live_free(rc->live);
	rc->live = NULL;
	record_cgroup_release(&rc->cg);
	kmt_cgroups_free(rc->cgroups);
	rc->cgroups = NULL;
	if (spooled)
		kmt_spool_remove(rc->spool);
	else
		kmt_spool_close(rc->spool);
	rc->spool = NULL;
	if (rc->sigfd >= 0)
		close(rc->sigfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (code == EXIT_OK && rc->o.argv)
		code = child_exit_code(&rc->child);
	kmt_events_release(&rc->events);
	recording_mark(rc, "exit");
	return code;
}
