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
 * The model in shards, fed live (kmemtrace top): @m, not yet fed, becomes
 * shard 0, which takes each run of events on the caller's thread and
 * routes the others' to @n - 1 shards, each on a thread of its own. NULL
 * if @m cannot be sharded (kmt_model_shardable()) or on ENOMEM: feed @m
 * alone. Losses (kmt_model_lost()) go to @m, between runs, in order.
 */
struct kmt_model_shards;
struct kmt_model_shards *kmt_model_shards_new(struct kmt_model *m, unsigned int n);
unsigned int kmt_model_shards_n(const struct kmt_model_shards *s);
/*
 * A run of events, as kmt_model_events() would take it: the events (and
 * their strings and stacks) must stay valid until the shards have taken
 * them: kmt_model_shards_taken() of kmt_model_shards_posted() read after
 * this call. 0 or -ENOMEM (then, from any shard, the analysis stops).
 */
int kmt_model_shards_events(struct kmt_model_shards *s, const struct kmt_event *ev, size_t n);
uint64_t kmt_model_shards_posted(const struct kmt_model_shards *s);
/* Have all shards taken the runs up to @ticket? With @wait, once they have. */
bool kmt_model_shards_taken(struct kmt_model_shards *s, uint64_t ticket, bool wait);
/*
 * Wait until the shards have taken every run, then add up their call
 * sites, caches, tasks and summaries by key, as one model's are at this
 * point of the stream: what the accessors below return, until the next
 * call (an entry keeps its index from one call to the next). 0 or -ENOMEM.
 */
int kmt_model_shards_sync(struct kmt_model_shards *s);
const struct kmt_summary *kmt_model_shards_summary(const struct kmt_model_shards *s);
const struct kmt_site *kmt_model_shards_sites(const struct kmt_model_shards *s, size_t *n);
const struct kmt_cache *kmt_model_shards_caches(const struct kmt_model_shards *s, size_t *n);
const struct kmt_proc *kmt_model_shards_procs(const struct kmt_model_shards *s, size_t *n);
/* The shards' threads stopped, shards 1.. freed; @m then holds only shard 0's part (free it). */
void kmt_model_shards_free(struct kmt_model_shards *s);

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
