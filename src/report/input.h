/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A command's input: a trace opened for reading, shared by every command
 * that reads one (report, diff, export, kmap, dump, check, info, and
 * watch's summary; top takes its -j default from here). The file, its
 * symbols and task names, a decoder for its formats, and one run of a
 * buffer (merged with kmemtrace watch's samples) through a model by
 * kmt_analyse(); the options that choose what is read (input_group), what
 * a damaged file lost, the progress line and --stats.
 */
#ifndef KMT_INPUT_H
#define KMT_INPUT_H

#include <kmemtrace/analyse.h>
#include <kmemtrace/event.h>
#include <kmemtrace/tracefile.h>
#include "util/opt.h"

struct input {
	const char *path;
	struct kmt_file *f;
	struct kmt_symbols *syms;
	struct kmt_comms *comms;
	struct kmt_decoder *dec;
	struct kmt_model *m;
	struct kmt_slab_aliases *aliases;	/* merged slab caches, if the file says */
	struct kmt_cgroups *cgroups;	/* the tasks' cgroups at the start, NULL: not recorded */
	uint64_t t0;			/* time of the first record, set once it is read */
	const char *skipped;		/* events the decoder could not map */
	struct kmt_analyse_result res;	/* what was read, and what was passed over */
	bool stats;			/* time the stages (set before input_run) */
	uint64_t writer_ns;		/* a format's hooks on a thread of their own: its CPU */
	uint64_t wall0;			/* CLOCK_MONOTONIC ns at input_open() */
};

/*
 * The input options, one group for the commands that read a trace
 * (report, export, kmap, dump, diff; check takes -j): which events and
 * objects, of which buffer.
 *   OPT_GROUP(input_group, struct x, in, INPUT_TIME | ..., "allocations by")
 * in a command's table; the noun ends "only ... this task".
 */
struct input_opts {
	double window[2];		/* --time: seconds from the first event, < 0 open */
	const char *buffer;		/* -B: a trace-cmd instance buffer; NULL: the main one */
	struct kmt_model_opts mo;	/* -p, --comm, --cache, --stack-depth */
	int jobs;			/* -j: threads; 0: input_jobs()'s default */
};
#define INPUT_OPTS_INIT { .window = { -1, -1 } }
enum { INPUT_TIME = 1, INPUT_PID = 2, INPUT_COMM = 4, INPUT_CACHE = 8, INPUT_DEPTH = 16, INPUT_BUFFER = 32,
       INPUT_JOBS = 64, INPUT_CGROUP = 128 };
extern const struct opt_group input_group;

/*
 * The threads to read with for -j @jobs: @jobs, or if 0 the CPUs it may
 * run on (kmt_cpus_usable(), at most INPUT_MAX_JOBS); 1 with
 * KMT_NO_THREADS in the environment.
 */
#define INPUT_MAX_JOBS 64
int input_jobs(int jobs);
/*
 * Open @path, to be read with input_jobs(@jobs) threads; EXIT_OK, or
 * EXIT_FAIL with the message printed.
 */
int input_open(struct input *a, const char *path, int jobs);
/* -p or --comm (@mo) matched no task of the trace (its @window): say so, once. */
void input_unmatched(const char *path, const struct kmt_model_opts *mo, bool window);
/*
 * Build the model from @mo (and @hooks, may be NULL) and run @buffer (NULL:
 * the main one) through it within [t_start, t_end] seconds (< 0: open).
 * EXIT_OK, or EXIT_FAIL with the message printed.
 */
int input_run(struct input *a, const char *buffer, struct kmt_model_opts *mo,
		 const struct kmt_model_hooks *hooks, double t_start, double t_end);
/*
 * After the output: what a damaged file lost, one warning each (the damage
 * found at open, lines of kallsyms that are not symbols, the parts of the
 * data passed over), then one line saying the output leaves it out.
 * EXIT_FAIL if there was any, else EXIT_OK.
 */
int input_damage(const struct input *a);
/* The same for @f and the @n parts of its data a reading passed over. */
int file_damage(struct kmt_file *f, const struct kmt_symbols *syms,
		const struct kmt_skip *skipped, size_t n);
void input_close(struct input *a);
/*
 * Reading a large file: after a second, "reading FILE: 45%" on stderr,
 * redrawn four times a second, erased when done; only where stderr is a
 * terminal. NULL where there is nothing to show (not a terminal, out of
 * memory). KMT_PROGRESS_AFTER_MS sets the second (tests).
 */
struct progress;
struct progress *progress_start(const char *path, const struct kmt_file *f);
void progress_stop(struct progress *p);
/* The calling thread's CPU time in ns, to time an output with. */
uint64_t input_thread_cpu_ns(void);
/*
 * --stats: the CPU time of each stage of the run, per event too, and where
 * it ran, to stderr. @output_ns: the CPU time of printing. The wall time is
 * from input_open(); the rest of the process's CPU time is "other".
 */
void input_print_stats(const struct input *a, uint64_t output_ns);
/*
 * The same from the stages @st of @n records, the wall time from @wall0
 * (input_wall_ns()), a format's @writer_ns: for a command that times its
 * own analysis (check).
 */
void input_print_stages(const struct kmt_analyse_stats *st, uint64_t n, uint64_t wall0,
			   uint64_t writer_ns, uint64_t output_ns);
uint64_t input_wall_ns(void);


#endif
