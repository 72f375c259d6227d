/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libkmemtrace, the analyse stage (src/lib/analyse/): a trace file's
 * stream decoded into the allocation model (model.h) on threads, the
 * model in shards, read in parts (kmt_analyse()); the model fed live in
 * shards (kmemtrace top); and a file's check.
 */
#ifndef KMEMTRACE_ANALYSE_H
#define KMEMTRACE_ANALYSE_H

#include <stdbool.h>
#include <stdint.h>

#include "tracefile.h"
#include "event.h"
#include "model.h"

/*
 * How many shards -j @jobs gives the model (1: one model): from 4 on,
 * @jobs less 2 (the thread that reads and the one that routes), at most
 * 32 (kmt_analyse_opts.shards says otherwise, up to 64).
 */
unsigned int kmt_model_shards_for(int jobs);

/*
 * The pipeline in steps, over a stream that grows (kmemtrace top): a
 * stream over a live page source (kmt_stream_open_source()) decoded into
 * a model as kmt_analyse() decodes a file's, as far as the stream can go
 * (its safe time: kmt_stream_set_safe()) at each kmt_analyse_live_pump().
 * With 2 jobs and more the stream is read and decoded on a thread of its
 * own, from 4 the model is in shards (kmt_model_shards_for()); after a
 * pump the model's summary, call sites, caches and tasks are the whole
 * stream's so far, in one model or in shards alike.
 */
struct kmt_analyse_live;
struct kmt_analyse_live_opts {
	int jobs;
	unsigned int shards;		/* 0: as @jobs says; 1: one model */
	/*
	 * At each pump's start, on the thread that reads the stream: take
	 * what the page source has and set the stream's safe time (@all:
	 * every page is there, none will come). 0, or an error in @d.
	 */
	int (*refill)(void *arg, bool all, struct kmt_diag *d);
	/* Stop the pump now? Asked every 256 events, and every 5 ms of waiting. */
	bool (*over)(void *arg);
	/*
	 * Every marker, after the model (kmt_model_marker()), in order with
	 * the events; a record that does not fit its format is one too
	 * (KMT_MARK_MISFIT). @skip: the page passed over, or NULL.
	 */
	void (*marker)(void *arg, const struct kmt_marker *mk, const struct kmt_skip *skip);
	/* A list kmt_analyse_live_hold() gave, its events in the model: what they pointed into may go. */
	void (*release)(void *arg, void *held);
	void *arg;
};
/* @s and @dec stay the caller's; @m, not yet fed, is fed (not finished). NULL and an error in @d. */
struct kmt_analyse_live *kmt_analyse_live_new(struct kmt_stream *s, const struct kmt_decoder *dec,
					      struct kmt_model *m, const struct kmt_analyse_live_opts *o,
					      struct kmt_diag *d);
/*
 * On the thread that reads the stream (the page source's next()): the
 * head of a list of the caller's that goes with the events decoded now,
 * handed back by opts->release() once they are in the model (a page read
 * to the end is linked in: the events point into it).
 */
void **kmt_analyse_live_hold(struct kmt_analyse_live *a);
/*
 * Every event up to the stream's safe time into the model (@all: to the
 * stream's end), unless opts->over() stops it first (then @pending). 0,
 * or an error in @d (the model ran out of memory, the page source failed).
 */
int kmt_analyse_live_pump(struct kmt_analyse_live *a, bool all, bool *pending, struct kmt_diag *d);
uint64_t kmt_analyse_live_events(const struct kmt_analyse_live *a);	/* into the model so far */
unsigned int kmt_analyse_live_shards(const struct kmt_analyse_live *a);
/* CPU seconds of the thread that reads the stream; < 0: none (one job). */
double kmt_analyse_live_reader_seconds(const struct kmt_analyse_live *a);
/* After a pump: the model can be read (with shards: their sums, through the model's getters). 0 or -ENOMEM. */
int kmt_analyse_live_sync(struct kmt_analyse_live *a);
/*
 * Stopped, its threads gone; lists still held are not handed back. With
 * shards, the model then holds only shard 0's part: free it.
 */
void kmt_analyse_live_free(struct kmt_analyse_live *a);

/*
 * The report pipeline in one call: a buffer's per-CPU streams, merged by
 * time, decoded with the file's formats, cut to a time window and fed to
 * an allocation model (loss markers included). kmemtrace report and
 * kmemtrace kmap are thin layers over this.
 */

/* The trace-clock time @s seconds after @t0: a window's end, to the nearest nanosecond. */
static inline uint64_t kmt_window_at(uint64_t t0, double s)
{
	return t0 + (uint64_t)(s * 1e9 + 0.5);
}

struct kmt_analyse_opts {
	double t_start, t_end;		/* seconds from the first event (kmt_window_at()); < 0: open */
	/*
	 * Called for every decoded event in the window, after the model took
	 * it (and no later event: the model can be asked of it, as
	 * kmt_model_stack_claim()), on one thread, in the stream's order.
	 */
	void (*each)(void *arg, const struct kmt_event *ev);
	/*
	 * Called for every marker in the window (kmt_marker_in()), after the
	 * model, in order with the events: what it is to the model, and the
	 * part of a damaged file passed over (NULL if none).
	 */
	void (*marker)(void *arg, const struct kmt_marker *mk, const struct kmt_skip *skip);
	void *arg;
	/* If set, receives the first record's time as soon as it is read. */
	uint64_t *t0;
	/* Measure the CPU time of each stage into the result's stats. */
	bool stats;
	/*
	 * The model in @shards shards (1 to 64) and the stream read in @parts
	 * parts (1: none, at most 16), where they can be; 0: as the file's
	 * threads say (kmt_model_shards_for()). For tests and benchmarks.
	 */
	unsigned int shards, parts;
};

/*
 * CPU time of each stage of one kmt_analyse(), in ns, with opts->stats.
 * Inflating and the model are timed whole; the producer's time is split
 * between the stream and decoding by timing one record in STATS_EVERY.
 */
struct kmt_analyse_stats {
	uint64_t inflate_ns;		/* reading and inflating chunks */
	uint64_t merge_ns;		/* the stream: pages, records, the merge by time */
	uint64_t decode_ns;		/* decoding records and queueing them for the model */
	uint64_t model_ns;		/* the model (and opts->each) */
	uint64_t route_ns;		/* ... of it, shard 0's, which routes the others' events */
	uint64_t write_ns;		/* writing out the shards' object records, in order (hooks.clone) */
	uint64_t wait_ns;		/* the stages asleep in hand-overs, in none of the above */
	int inflate_threads;		/* threads inflating the CPUs' data (0: inline) */
	bool model_thread;		/* the model ran on a thread apart from the producer */
	int model_shards;		/* ... in this many shards, a thread each */
	int decode_parts;		/* with shards: reading and decoding in this many parts, a thread
					   each (decode_ns), merged by the producer (merge_ns) */
};

struct kmt_analyse_result {
	uint64_t t0;			/* time of the first record in the file */
	uint64_t t_end;			/* where the model was finished */
	uint64_t records;		/* records read, in or out of the window */
	/*
	 * What could not be read in a damaged file and was passed over, in
	 * the order met; the model took each as a gap of unknown size. Owned
	 * by the result: kmt_analyse_result_release().
	 */
	struct kmt_skip *skipped;
	size_t nr_skipped;
	struct kmt_analyse_stats stats;	/* with opts->stats */
};

/*
 * What the file says about its own completeness (a recorder that filtered
 * allocations or frees, or sampled stacks, writes it into its VERSION
 * option): sets @mo->partial_allocs, @mo->partial_frees and
 * @mo->stack_sample.
 */
void kmt_model_opts_from_file(struct kmt_model_opts *mo, const struct kmt_file *f);

/*
 * Run @buffer of @f through @dec into @m and finish @m. Returns 0 (what a
 * damaged file lost is in @res->skipped: release @res), or a negative
 * error with file, CPU and offset in @d (nothing to release).
 */
int kmt_analyse(struct kmt_file *f, int buffer, const struct kmt_decoder *dec,
		struct kmt_model *m, const struct kmt_analyse_opts *o,
		struct kmt_analyse_result *res, struct kmt_diag *d);
/* Free what @res holds; it may be released again. */
void kmt_analyse_result_release(struct kmt_analyse_result *res);

/*
 * Checking a trace file, finding by finding: the section layout, every
 * per-CPU page (header, commit, event headers, padding, time extends),
 * per-CPU time order, lost-event markers, records that do not fit their
 * format, and the allocation model's contradictions (misuse, uncertainty).
 * Findings go to a callback as they are found; the walk goes on after a
 * bad page (the rest of that page is skipped) and after a chunk that does
 * not inflate, as the other readers do. Damage worked around when the file
 * was opened (a cut, an unreadable kallsyms section) is a finding too.
 */

struct kmt_finding {
	enum kmt_severity severity;
	int cpu;			/* -1: not about one CPU */
	uint64_t offset;		/* file offset (of the chunk, if compressed) */
	uint64_t in_chunk;		/* offset of the page inside the chunk, or 0 */
	bool compressed;
	uint64_t ts;			/* 0: no timestamp */
	char what[192];
};

typedef void (*kmt_finding_fn)(void *arg, const struct kmt_finding *f);

struct kmt_check_opts {
	bool model;			/* run the allocation model too */
	bool stats;			/* time its stages (kmt_check_result.stats) */
	unsigned int shards, parts;	/* the model's (kmt_analyse_opts) */
	kmt_finding_fn fn;
	/*
	 * Once, before the first finding: the time of the trace's first
	 * record (of the main buffer; 0 if none), which findings' times count
	 * from. With the model, known only once it has read the trace.
	 */
	void (*start)(void *arg, uint64_t t0);
	void *arg;
};

struct kmt_check_result {
	uint64_t pages, events, lost, lost_unknown;
	uint64_t skipped;		/* parts of the data that could not be read */
	uint64_t errors, warnings;
	int buffers, cpus;
	/* With opts.stats, the one pass's stages (the model's reading) if it ran, and its records. */
	bool timed;
	struct kmt_analyse_stats stats;
	uint64_t timed_records;
};

/*
 * Check @f (already opened: the header, options and metadata sections
 * passed). Returns 0 when the walk completed (findings or not), or a
 * negative error if the file could not be walked at all (message in @d).
 */
int kmt_check_file(struct kmt_file *f, const struct kmt_check_opts *o,
		   struct kmt_check_result *res, struct kmt_diag *d);

#endif
