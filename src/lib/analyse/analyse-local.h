/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kmt_analyse()'s pipeline (analyse.c, analyse-stages.c): the batches
 * and the job they go round in, shared by the producer (analyse.c) and
 * the stages after it (analyse-stages.c).
 */
#ifndef ANALYSE_LOCAL_H
#define ANALYSE_LOCAL_H

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <kmemtrace/analyse.h>
#include <kmemtrace/tracefile.h>
#include "model/model-local.h"

#pragma GCC visibility push(hidden)

#define BATCH 1024		/* events per batch */
#define MAX_SHARDS MODEL_SHARDS_MAX
/*
 * The ring: job.nb batches (a power of 2, at most NB), handed over by
 * kmt_handoff in stages: the producer -> shard 0 -> the other shards ->
 * the writer of their object records (analyse-sink.c). A side that waits
 * sleeps until the ring has job.low batches (shard 0) or has only that
 * many left (producer): fewer wake-ups than at every batch. The one model
 * takes 16 and 2: at -j 2 on two cores 0.90-0.94x the wall time of 8 and
 * 4, a stage seldom idle for long (bench/results/stages.md); in shards, whose
 * batches stay in flight longer, 8 and 4 (16 cost them 2-5%).
 */
#define NB 16
#define LOW_ONE 2
#define NB_SHARDED 8
#define LOW_SHARDED 4
/*
 * A shard after shard 0 wakes for LOW_CHAIN: a shard waits for shard 0,
 * which waits for the producer, which waits for the slowest shard; the
 * slowest, when the producer waits on it, has a full ring less low
 * before it, at least LOW_CHAIN (kmt_handoff_stage(): no deadlock).
 */
#define LOW_CHAIN 2

/*
 * What an item of a batch is: an event for the model, a task's name
 * before the window (only names matter there), nothing, or a marker
 * (IT_MARK + its enum kmt_marker_kind: batch_marker()).
 */
enum item { IT_EVENT, IT_NAME, IT_SKIP, IT_MARK };

/* The bytes a batch's events point to: their strings and stacks, copied out of the records. */
struct arena {
	char *p;
	size_t used, cap;
};

/* The bytes @ev points to. */
static inline size_t ev_bytes(const struct kmt_event *ev)
{
	return ev->name_len + ev->str2_len + (size_t)ev->nr_stack * ev->stack_word;
}

struct batch {
	/* markers: cpu, ts, lost in bytes_req, a gap's end in bytes_alloc (batch_marker()) */
	struct kmt_event ev[BATCH];
	/*
	 * item i's event: &ev[i], or (in parts) the part's own, which the
	 * producer does not copy: the stages after it read it where it is
	 */
	const struct kmt_event *evp[BATCH];
	uint8_t what[BATCH];
	/* sharded: where shard 0 sent each item (a shard, or ROUTE_ALL), and what it decided */
	uint8_t to[BATCH];
	struct model_route route[BATCH];
	unsigned int n;
	struct arena ar;		/* (in parts: the parts' arenas) */
};

/*
 * Item @i of @b, a marker (b->what[i] >= IT_MARK), and the part of a
 * damaged file it passed over (a copy in the batch's arena), or NULL.
 */
static inline struct kmt_marker batch_marker(const struct batch *b, unsigned int i,
					     const struct kmt_skip **skip)
{
	const struct kmt_event *ev = b->evp[i];

	*skip = (const struct kmt_skip *)(const void *)ev->str2;
	return (struct kmt_marker){ .kind = (enum kmt_marker_kind)(b->what[i] - IT_MARK), .cpu = ev->cpu,
				    .lost = (int64_t)ev->bytes_req, .ts = ev->ts, .to = ev->bytes_alloc };
}

/*
 * @mk (and @skip, copied into the arena, which has room for it and 7
 * bytes of alignment) as @b's next item: what batch_marker() reads back.
 * analyse-ring.c.
 */
void batch_put_marker(struct batch *b, const struct kmt_marker *mk, const struct kmt_skip *skip);

/* @b empty, to be filled again. */
static inline struct batch *batch_reset(struct batch *b)
{
	b->n = 0;
	b->ar.used = 0;
	return b;
}

/*
 * What a record kmt_decode() returned @ret for is to the model: nothing
 * (IT_SKIP: not an event of ours, or before the window, @early, where only
 * task names matter), a name, or an event.
 */
static inline enum item decoded_as(int ret, bool early, enum kmt_kind kind)
{
	if (!ret)
		return IT_SKIP;
	if (!early)
		return IT_EVENT;
	return kind >= KMT_EV_FORK && kind <= KMT_EV_CGROUP ? IT_NAME : IT_SKIP;
}

/* What taking an item of the stream tells the producer's loop. */
enum { T_FAIL = -1, T_STOP, T_GO };

/*
 * The producer in parts (analyse-parts.c): part threads each read, merge
 * and decode a share of the CPUs into batches of their own, of items
 * keyed by (time, the whole stream's input index).
 */
#define PB 1024			/* items per part batch */
#define NBP 8			/* part batches in each part's ring */
#define MAX_PARTS 16
enum pitem { P_EVENT, P_NONE, P_MISFIT, P_LOST, P_SKIP, P_END };
/*
 * 16 bytes: what the producer reads of every item, from another core. A
 * marker's CPU, count and part passed over are in its event slot (cpu,
 * bytes_req, name).
 */
struct part_item {
	uint64_t ts;
	uint32_t input;
	uint8_t what;			/* enum pitem */
	uint8_t to;			/* P_EVENT: its shard (model_route_of()) */
	bool truncated;			/* P_LOST */
	bool other;			/* not of the job's buffer */
};
struct pbatch {
	struct model_slot s[PB];	/* P_EVENT: decoded, strings in the arena (and its verdict) */
	struct part_item it[PB];
	unsigned int n;
	struct arena ar;
};
/*
 * What the part's thread writes and what the merge writes are a cache line
 * apart (LINE): the merge moves cur at every item, and a part reading its
 * prod or cpu in the same line would take the line back at every event
 * (allocated on a line: line_alloc()).
 */
#define LINE __attribute__((aligned(64)))
/*
 * Zeroed memory on a cache line of its own, and more: pages, mapped as
 * they are touched (the job's ring and the parts' batches are megabytes,
 * not all used); line_free() it. NULL: none.
 */
static inline void *line_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}
static inline void line_free(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}

struct part {
	struct job *j;
	struct kmt_stream *s;
	struct pbatch b[NBP];
	LINE unsigned int prod;		/* batches handed to the merge */
	bool done;			/* handed its last */
	LINE unsigned int taken;	/* ... that the merge is done with */
	uint64_t fin[NBP];		/* the job's batches that must be taken before it is free */
	unsigned int seen;		/* prod, as the merge last looked */
	unsigned int cur;		/* the merge's next item in batch taken */
	LINE struct kmt_diag d;		/* P_MISFIT, P_END: why */
	int ret;
	struct cpu_state *cpu;		/* seq_in_parts: each of its CPUs' sequence */
	uint64_t ns;			/* its thread's CPU less its waits, with stats */
	pthread_t th;
	bool running;
};

/*
 * Who sleeps on which condition (job.cv), besides the ring's: the parts
 * for the merge to be done with their batches, the merge for a part's
 * next. A change wakes only those whose wait it can end (wake()).
 */
enum { CV_PARTS, CV_MERGE, CV_NR };
#define CV_ALL ((1u << CV_NR) - 1)

struct job;
struct shard_arg {
	struct job *j;
	unsigned int k;
};

struct job {
	struct kmt_file *f;			/* NULL: live (analyse-live.c) */
	int buffer;
	const struct kmt_decoder *dec;
	struct kmt_model *m;
	/* the model's shards (model-shards.c): ms[0] is m; one consumer each, 1.. on threads */
	struct kmt_model *ms[MAX_SHARDS];
	unsigned int nms;
	pthread_t sth[MAX_SHARDS];
	struct shard_arg sa[MAX_SHARDS];
	unsigned int threads_up;		/* shards 1.. on threads: 1 to threads_up */
	struct model_reg_sum sums[MODEL_REG_NR];	/* live: their sums (shards_sum()) */
	struct kmt_summary sum;
	const struct kmt_analyse_opts *o;
	/* the producer's (res.records and seen at every record), a line apart from the consumers' */
	LINE struct kmt_analyse_result res;
	struct kmt_diag d;		/* the producer's */
	int ret;			/* the producer's: 0 or an error */
	uint64_t lo, hi, seen;		/* the window; the last record's time */
	bool started, past_hi;
	/* consumer (mret read at every run of events) */
	LINE int mret;			/* -ENOMEM once the model failed */
	uint64_t fed;			/* events the model took */
	/* with o->stats */
	bool stats;
	uint64_t model_ns;		/* in consume(), all shards */
	uint64_t route_ns;		/* ... of it, shard 0's (which routes the others') */
	uint64_t prod_ns;		/* the producer's thread in produce(), less its waits */
	uint64_t wait_ns;		/* every stage's thread asleep in kmt_cond_wait() */
	uint64_t pool_waited;		/* the file's inflating threads asleep, before */
	uint64_t smp_merge, smp_decode;	/* sampled records: in the stream, after it */
	uint64_t nr_smp, tick;
	/* the ring */
	struct batch b[NB];
	unsigned int nb, low;		/* its batches in use, and when a side that waits wakes */
	uint64_t prod;			/* batches handed over: the one being filled */
	/* takers: the shards (0 .. nms - 1), then the writer (analyse-sink.c) if there is one */
	struct kmt_handoff *h;
	bool threaded, stop;
	/* the producer in parts (analyse-parts.c) */
	struct part *parts;
	unsigned int nparts;
	bool merge_waits;		/* the merge waits for a part: take what there is */
	/*
	 * The parts decide each CPU's sequence (model_claim_event()), each for
	 * its own CPUs, and shard 0 reads only its own events: without a
	 * filter (which needs the task names in stream order), a window
	 * (events before it do not count) or stack slices.
	 */
	bool seq_in_parts;
	bool parts_quit;
	uint64_t parts_ns;
	unsigned int parts_wait;	/* parts asleep on cv, for the merge to be done with a batch */
	/*
	 * An object hook run in shards (analyse-sink.c): each shard's writings
	 * by batch; batches written out, in order, by whichever shard ends
	 * one last; the producer refills a batch once it is written.
	 */
	struct sink *sinks;
	struct kmt_model_hooks hooks;	/* the consumer's own, put back at the end */
	pthread_mutex_t write_mu;	/* the one writing them (the writer taker) */
	uint64_t nr_writings;		/* calls' writings written, for the separator */
	uint64_t write_ns;		/* with stats: writing them out */
	pthread_mutex_t mu;
	pthread_cond_t cv[CV_NR];
};

/* Wake (with the lock) those asleep on each condition in @mask (1 << CV_*). */
static inline void wake(struct job *j, unsigned int mask)
{
	unsigned int k;

	for (k = 0; k < CV_NR; k++)
		if (mask & (1u << k))
			pthread_cond_broadcast(&j->cv[k]);
}

/* The producer's batch being filled. */
static inline struct batch *filling(struct job *j)
{
	return &j->b[j->prod & (j->nb - 1)];
}

/* analyse-ring.c: an empty arena with room for @need (at least @min); false: no memory. */
bool arena_grow(struct arena *a, size_t need, size_t min);
/* @ev's strings and stack copied into @a (which has room), @ev pointing at them. */
void arena_keep_event(struct arena *a, struct kmt_event *ev);
const void *arena_keep(struct arena *a, const void *p, size_t len);

/* analyse-ring.c: the producer's side of the ring, and what it does with the stream's items. */
bool hand(struct job *j);
struct batch *room(struct job *j, size_t need);
/* @ev (and copies of what it points to) as @what; false: stop. */
bool put_event(struct job *j, const struct kmt_event *ev, enum item what);
/* A marker of the stream (a part of a damaged file passed over is also kept in the result). */
int take_marker(struct job *j, const struct kmt_srec *sr);
int take_record(struct job *j, uint64_t ts);
int analyse_misfit(const struct job *j, struct kmt_diag *d, int ret, const struct kmt_stream *s,
		   const struct kmt_srec *sr);
/* The stream of the job's buffer (and its watchpoint samples), or part @k of @n of it. */
struct kmt_stream *analyse_stream(const struct job *j, int k, int n, struct kmt_diag *d);

/*
 * analyse-sink.c: an object hook in shards (kmt_model_hooks.clone). Each
 * shard's clone writes to a memory stream of its own; what each call
 * wrote is kept by batch with the stream position of its event, and the
 * batches, once every shard is done with them, are written out with the
 * shards' writings merged by position: the one model's order.
 */
/* Set up the @n shards' hooks (make_shards()); false: no memory, run as one model. */
bool sink_start(struct job *j, unsigned int n);
/* Shard @m begins batch @b / is done with it. */
void sink_begin(struct job *j, struct kmt_model *m, const struct batch *b);
void sink_done(struct job *j, struct kmt_model *m);
/* Write out the batches every shard is done with, unless another thread is at it. */
void sink_write(struct job *j);
/* After the stages: write the rest, and give the consumer back its hooks. */
void sink_end(struct job *j);
/* After the merge (or instead): fold the clones into the consumer, and free the sinks. */
void sink_fold(struct job *j);

/* analyse-parts.c: how many parts (0: none), and the producer in them. */
unsigned int parts_wanted(const struct job *j);
void produce_parts(struct job *j);
void parts_free(struct job *j);

/* analyse.c: a job for @m, no file, no thread, one model yet (zeroed: live, analyse-live.c); freed. */
struct job *job_alloc(const struct kmt_decoder *dec, struct kmt_model *m, const struct kmt_analyse_opts *o);
void job_free(struct job *j);

/* analyse-stages.c: a batch into a shard of the model (or the one model). */
void consume(struct job *j, struct kmt_model *m, struct batch *b);

/* model-shards.c, the one shard driver: @n shards of j->m (1: none, or it cannot be sharded); how many. */
unsigned int shards_make(struct job *j, unsigned int n);
/* ... for a file, as its threads and options say. */
unsigned int make_shards(struct job *j);
/*
 * The ring's hand-over: the shards, then the writer if there is one, then
 * (@last) one more taker after all of them, in stages; the producer wakes
 * for @fill_low free batches, shard 0 for j->low, the others for
 * @chain_low. False: no memory.
 */
bool ring_start(struct job *j, unsigned int fill_low, unsigned int chain_low, bool last);
/* Shard @k's loop over the ring (shard 0's on the caller's thread). */
void consume_all(struct job *j, unsigned int k);
/* Shards 1.. on threads of their own (j->mret on failure), and joined once the ring ends or stops. */
void shards_start(struct job *j);
void shards_join(struct job *j);
/* Live: once every shard has taken every batch, their sums, which j->m's getters give. 0 or -ENOMEM. */
int shards_sum(struct job *j);
/* Shards 1.. freed, the sums too: j->m is one model again, holding shard 0's part. */
void shards_free(struct job *j);

#pragma GCC visibility pop

#endif
