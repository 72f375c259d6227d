/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace record and watch, shared between their files: the running
 * recording's state and life (recording.c), the child command, and what is
 * printed while and after recording.
 */
#ifndef KMT_RECORD_H
#define KMT_RECORD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <poll.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include <kmemtrace/capture.h>
#include <kmemtrace/tracefs.h>
#include "util/opt.h"


struct recording_opts {
	const char *output;
	char *events_spec;		/* -e, comma-joined; NULL: defaults */
	pid_t pids[64];
	int nr_pids;
	bool follow;			/* -F: only the command and its children */
	unsigned int buffer_kb;
	unsigned int buffer_percent;
	double duration;		/* -d, 0: none */
	bool stack;
	unsigned int stack_sample;	/* --stack-sample N: 1 in N; 0 or 1: every */
	const char *filter;
	bool compress;
	int level;
	bool full_kallsyms;		/* keep /proc/kallsyms whole in the file */
	int rt_prio;
	size_t hold_mb;			/* -m */
	bool quiet;
	bool status;			/* status line (stderr is a terminal) */
	char **argv;			/* -- COMMAND */
	const char *user;		/* --user */
	const char *cgroup;		/* --cgroup: only its tasks (record-cgroup.c) */
	char *const *cmdline;		/* kmemtrace's own arguments, from the subcommand on */
	int cmdline_n;
	/*
	 * Live (kmemtrace top): pages go to memory (live.h), for the hooks to
	 * take, instead of the recorder's spool; with no output there is no
	 * spool and no file at all.
	 */
	bool live;
	unsigned int live_period_ms;
	size_t live_max_bytes;
	size_t live_prefault;		/* per CPU: memory faulted in before tracing */
};

struct child {
	pid_t pid;			/* -1: none */
	int go_fd;			/* write to let it exec */
	int err_fd;			/* exec errno, or EOF on success */
	bool released, exited;
	int status;
};

/*
 * record --cgroup (record-cgroup.c): the cgroup's directory, the tasks
 * known to be in it (sorted), and the thread that finds those moved in.
 */
#define RECORD_CGROUP_SCAN_MS 20
struct record_cgroup {
	const char *spec;		/* as given */
	char dir[4096];
	bool v1;			/* the v1 memory controller's (tasks), else v2 (cgroup.threads) */
	bool opened, running, go, stop;
	pid_t tid;			/* the scan's thread (left out of the recording) */
	pid_t *tids;
	size_t n, alloc, at_start;	/* at_start: of @n, found before tracing */
	uint64_t added;			/* found moved in since */
	uint64_t failed;		/* ... that could not be added to the filter */
	const struct kmt_instance *in;
	struct kmt_cgroups *cgroups;	/* where each found task is, for the file */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};
/* Resolve @spec (0::/a/b, memory:/a/b, /a/b) to its directory; an error names it if it does not exist. */
int record_cgroup_open(struct record_cgroup *g, const char *spec, struct kmt_diag *d);
/* The threads in it and below it now (g->tids). */
int record_cgroup_tids(struct record_cgroup *g, struct kmt_diag *d);
/*
 * The scan's thread, waiting (its tid in g->tid once this returns); from
 * record_cgroup_go() on it scans every RECORD_CGROUP_SCAN_MS, adding a task
 * moved in to @in's pid filter and to @c.
 */
int record_cgroup_start(struct record_cgroup *g, const struct kmt_instance *in, struct kmt_diag *d);
void record_cgroup_go(struct record_cgroup *g, struct kmt_cgroups *c);
/* Add @tid to the known tasks (the filter's list at the start): 0 or -ENOMEM. */
int record_cgroup_add(struct record_cgroup *g, pid_t tid);
void record_cgroup_stop(struct record_cgroup *g);
void record_cgroup_release(struct record_cgroup *g);

struct recording {
	struct recording_opts o;
	struct record_cgroup cg;	/* --cgroup */
	struct kmt_cgroups *cgroups;	/* every task's cgroups at the start (and --cgroup's found since) */
	const char *clock;		/* trace clock (default "local") */
	const struct kmt_event_filter *event_filters;	/* per-event filters */
	int nr_event_filters;
	char root[256];
	char spool_dir[4096];		/* OUTPUT.spool */
	struct kmt_spool *spool;
	int cpus[KMT_MAX_CPUS];
	int nr_cpus;
	struct kmt_events events;
	struct kmt_instance in;
	struct kmt_recorder *r;
	struct kmt_live *live;		/* instead of @r, with o.live */
	struct kmt_sampler *sampler;	/* --stack-sample: stacks on in slices of time */
	struct kmt_sampler_stats sampled;	/* what it did, once stopped */
	struct child child;
	struct kmt_watchdog *dog;	/* stops the instances' tracing if we are killed */
	int sigfd;
	bool tracing;
	struct timespec t0;
	double elapsed;
	int capture_err;
	char capture_why[512];
	pthread_t rm_th;		/* shrinking the ring buffers, then removing the
				   instance, while the file is written */
	bool rm_started;
	struct timespec mark;		/* KMT_TIMES: the previous step's end */
};

/*
 * What kmemtrace watch and top add to a recording. @start runs once the
 * instance records, before the command is released; @stop runs exactly
 * once after a successful @start, on every path, before the instance goes;
 * @fds and @ready join the wait loop (@ready returning 1 ends the
 * recording); @drained runs once capture has stopped, before the file is
 * written; @done after it is (with NULL when there is no file).
 */
#define REC_HOOK_FDS 300
struct recording_hooks {
	int (*start)(struct recording *rc, void *arg, struct kmt_diag *d);
	int (*fds)(struct recording *rc, void *arg, struct pollfd *pf, int max, int *timeout_ms);
	int (*ready)(struct recording *rc, void *arg, const struct pollfd *pf, int n);
	void (*stop)(struct recording *rc, void *arg);
	void (*done)(struct recording *rc, void *arg, const struct kmt_finalize_result *res);
	/* Live: the capture has stopped and the instance is going; the last pages wait. */
	void (*drained)(struct recording *rc, void *arg);
	void *arg;
};

/* budget.c: what record, top and watch take of the memory by default. */
#define REC_BUDGET_RULE \
	"kmemtrace takes at most 1/32 of RAM and 1 GiB in all:\n" \
	"half of it for the ring buffers, over the CPUs (64 KiB to 16 MiB each),\n" \
	"the rest for pages captured and not yet written (record: -m; watch)\n" \
	"or not yet analysed (top: half of that faulted in first, --prefault)"
struct budget {
	uint64_t ram;			/* bytes */
	int nr_cpus;
	uint64_t total;			/* RAM / 32, at most 1 GiB */
	unsigned int buffer_kb;		/* ring buffer per CPU (-b) */
	uint64_t rings;			/* all of them, bytes, as the kernel takes them */
	uint64_t hold;			/* the rest: -m, top's queue */
	uint64_t prefault;		/* top: half of the rest, over the CPUs */
	unsigned int watch_ctl_kb;	/* watch: its control instance's ring buffer per CPU */
	uint64_t watch_hold;		/* watch: the rest less that and its sample rings */
};
#define REC_WATCH_RING_PAGES 64		/* watch's perf sample ring per CPU, pages */
/* The rule for @ram bytes and @nr_cpus CPUs. */
void budget_for(struct budget *b, uint64_t ram, int nr_cpus);
/* For this machine: its RAM and online CPUs. */
void budget_here(struct budget *b);
/* The rule and what it gives here, for a command's --help. */
void budget_help(FILE *out);

/* recording.c */
/* Defaults: kmemtrace.dat, the memory budget's ring buffer and hold, zstd 1, SCHED_FIFO 1. */
void recording_opts_defaults(struct recording_opts *o);
/*
 * The recording options, one group for record, top and watch:
 * OPT_GROUP_AT(recording_group, struct x, o, REC_..., NULL) where o points
 * to the struct recording_opts. Their defaults are the group's.
 */
enum { REC_PID = 1, REC_FOLLOW = 2, REC_DURATION = 4, REC_BUFFER = 8, REC_PERCENT = 16,
       REC_FILTER = 32, REC_RTPRIO = 64, REC_USER = 128, REC_CGROUP = 256 };
extern const struct opt_group recording_group;
/*
 * Add "PID[,PID]" to @o's pids; -1 if malformed or too many, -ESRCH if a
 * process does not exist.
 */
int recording_add_pids(struct recording_opts *o, const char *arg);
struct cmd_help;
/* The same for an option parser: -1 to go on, or the exit code after saying why. */
int recording_opt_pids(const struct cmd_help *h, struct recording_opts *o, const char *arg);
/*
 * Find tracefs, move dead recorders' instances into their spools and
 * remove them, expand the events, create the spool.
 */
int recording_prepare(struct recording *rc, struct kmt_diag *d);
/* The whole recording, from recording_prepare() to the file; returns the exit code. */
int recording_run(struct recording *rc, const struct recording_hooks *h);
/*
 * record-cgroup.c, --cgroup and the tasks' cgroups of a recording: the
 * cgroup's threads as the pid filter's list (*@pids, *@n) and the scan's
 * thread waiting; every task's cgroups saved into the spool once tracing
 * is on (the scan then goes); at the end, the scan stopped and the tasks
 * it found saved with the others.
 */
int record_cgroup_filter(struct recording *rc, const pid_t **pids, int *n, struct kmt_diag *d);
int record_cgroups_save(struct recording *rc, struct kmt_diag *d);
void record_cgroups_end(struct recording *rc);
/*
 * Turn @spool into the trace file, remove it, and print the summary. The
 * handle is consumed: on failure the files stay, for --recover.
 */
int recording_finalize(struct recording *rc, struct kmt_spool *spool, const char *output, bool recovered,
		 const struct recording_hooks *h);
double recording_now_since(const struct timespec *t0);

/* record-child.c */
int child_spawn(struct child *c, char **argv, const char *user);
int child_release(struct child *c);	/* 0, or -errno if exec failed */
void child_abort(struct child *c);	/* never released: let it exit, reap it */
int child_exit_code(const struct child *c);
/* What a shell exits with when it cannot run a command (exec's @err): 127 not found, else 126. */
int child_exec_code(int err);

/* record-ui.c */
/* Whose events are recorded: "system-wide (use -F for only make and its children)", into @buf. */
const char *ui_scope(const struct recording_opts *o, char *buf, size_t len);
/* Once, before the status line: how to stop, when nothing else will (no command, no -d). */
void ui_hint(const struct recording_opts *o);
/*
 * The status line on stderr (a terminal), cut to its width: time, whose
 * events, events, bytes written, losses.
 */
void ui_status(const struct kmt_instance *in, const int *cpus, int nr_cpus,
	       const struct kmt_recorder *r, const struct recording_opts *o, double elapsed);
void ui_status_clear(void);
void ui_progress(void *arg, uint64_t done, uint64_t total);
void ui_summary(const struct recording_opts *o, const struct kmt_finalize_result *res,
		const struct kmt_sampler_stats *sampled, double elapsed, const char *output, bool recovered);
/* What became of a dead recorder's instance (with @quiet, only losses and leftovers). */
void ui_stale(const struct kmt_stale *st, bool quiet);
/* What --recover took from the recording's instance. */
void ui_took(const struct kmt_recover_result *rr, bool quiet);
int ui_list(const char *root, bool verbose);

struct kmt_hwbp_probe;
/*
 * Do hardware watchpoints fire on every online CPU (kmt_hwbp_probe)? For
 * the tests, after git's GIT_TEST_*: KMT_TEST_HWBP=decoy makes the probe
 * watch a word nobody writes, so the refusal can be tested on any machine;
 * KMT_TEST_HWBP=skip lets kmemtrace watch run without the probe (set-up,
 * signals and clean-up on machines where watchpoints never fire).
 */
int hwbp_check(struct kmt_hwbp_probe *res, struct kmt_diag *d);

#endif
