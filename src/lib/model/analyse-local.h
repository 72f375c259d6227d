/*
 * kmt_analyse()'s pipeline (analyse.c, analyse-stages.c): the batches
 * and the job they go round in, shared by the producer (analyse.c) and
 * the stages after it (analyse-stages.c).
 */
#ifndef ANALYSE_LOCAL_H
#define ANALYSE_LOCAL_H

#include <pthread.h>

#include <kmemtrace/model.h>
#include <kmemtrace/tracefile.h>
#include "model-local.h"

#pragma GCC visibility push(hidden)

#define BATCH 1024		/* events per batch */
#define NB 8			/* batches in the ring */
#define MAX_SHARDS 64		/* model shards (and their threads) at most */
/* A side that waits sleeps until the ring is half full (consumer) or half empty (producer). */
#define LOW (NB / 2)
/*
 * ... but a stage after another wakes for half that: a shard waits for
 * shard 0, which waits for the decoder or the producer, which waits for
 * the slowest shard; with less than LOW ahead of the slowest in all, the
 * producer never waits on a stage that is itself waiting (no deadlock).
 */
#define LOW_CHAIN (LOW / 2)

/*
 * What an item of a batch is: an event for the model, a marker, or (with
 * a decoder thread) a record still to decode — in the window, or before it
 * (then only task names matter) — or one that decoded to nothing.
 */
enum item { IT_EVENT, IT_LOST, IT_TRUNCATED, IT_ACCESS_LOST, IT_NAME, IT_GAP, IT_RAW, IT_RAW_EARLY, IT_SKIP };

/* A record still to decode (raw): its bytes are in the batch's arena. */
struct raw_rec {
	uint64_t ts;
	const uint8_t *data;
	uint32_t len;
	int32_t cpu;
};

struct batch {
	/*
	 * markers: cpu, ts, lost in bytes_req; a gap's end in bytes_alloc;
	 * raw records: decoded into ev from raw (the producer writes 24 bytes
	 * an item, not two lines of an event the decoder's core has last)
	 */
	struct kmt_event ev[BATCH];
	struct raw_rec raw[BATCH];
	uint8_t what[BATCH];
	/* sharded: where shard 0 sent each item (a shard, or ROUTE_ALL), and what it decided */
	uint8_t to[BATCH];
	struct model_route route[BATCH];
	unsigned int n;
	uint64_t rec0;			/* raw records: the first one's number (they follow) */
	char *arena;			/* the events' strings and stacks (raw: records) */
	size_t used, cap;
};

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
	return kind >= KMT_EV_FORK && kind <= KMT_EV_NEWTASK ? IT_NAME : IT_SKIP;
}

/* The stages that wait for batches: the decoder thread, shard 0, the other shards. */
enum { W_DECODER, W_ZERO, W_REST, W_NR };

struct job {
	struct kmt_file *f;
	int buffer;
	const struct kmt_decoder *dec;
	struct kmt_model *m;
	/* the model's shards: ms[0] is m; one consumer each */
	struct kmt_model *ms[MAX_SHARDS];
	unsigned int nms;
	const struct kmt_analyse_opts *o;
	struct kmt_analyse_result res;
	struct kmt_diag d;		/* the producer's */
	int ret;			/* the producer's: 0 or an error */
	uint64_t lo, hi, seen;		/* the window; the last record's time */
	bool started, past_hi;
	/*
	 * With shards, records are decoded on a thread of their own (raw):
	 * the producer only merges and copies them. A record that does not
	 * fit its format stops it there: its number, and decode's error.
	 */
	bool raw;
	unsigned int decoded;		/* batches decoded */
	bool dec_done, dec_failed;
	uint64_t dec_rec;
	int dec_ret;
	uint64_t dec_ns;		/* the decoder thread's CPU, with stats */
	/* consumer */
	int mret;			/* -ENOMEM once the model failed */
	uint64_t fed;			/* events the model took */
	/* with o->stats */
	bool stats;
	uint64_t model_ns;		/* in consume(), all shards */
	uint64_t route_ns;		/* ... of it, shard 0's (which routes the others') */
	uint64_t prod_ns;		/* the producer's thread in produce() */
	uint64_t smp_merge, smp_decode;	/* sampled records: in the stream, after it */
	uint64_t nr_smp, tick;
	/* the ring */
	struct batch b[NB];
	unsigned int prod;		/* batches handed over */
	unsigned int cons[MAX_SHARDS];	/* ... taken, by each shard */
	bool threaded, done, stop;
	bool prod_waits;		/* asleep on cv */
	bool zero_done;			/* shard 0 took every batch: the others' producer */
	/* Stages asleep on cv (W_*), and when the first of each wants waking. */
	unsigned int waits[W_NR];
	uint64_t wake_at[W_NR];
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/* analyse-stages.c: the stages after the producer. */
void consume(struct job *j, struct kmt_model *m, struct batch *b);
/* Batches taken by the slowest consumer (with the lock). */
unsigned int cons_min(const struct job *j);
/* Wake stage @w's sleepers if @count got where the first wants (with the lock). */
void stage_wake(struct job *j, int w, unsigned int count);
/* The shards (kmt_model_shard()): how many; j->ms filled. */
unsigned int make_shards(struct job *j);
/* Shard @k's loop; a thread's (arg: struct shard_arg). */
void consume_all(struct job *j, unsigned int k);
struct shard_arg {
	struct job *j;
	unsigned int k;
};
void *consume_main(void *arg);
/* The decoder thread (arg: the job). */
void *decode_main(void *arg);

#pragma GCC visibility pop

#endif
