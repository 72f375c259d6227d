/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace top: the kernel's allocations, live. A recording (recording.c)
 * in live mode hands pages to memory (live.h); top takes them, decodes
 * them, merges the CPUs by time and feeds the model of report; every
 * interval it takes a snapshot of the model's tables and shows the change.
 *
 *   top-feed.c   pages -> the library's live pipeline (kmt_analyse_live_*): events in
 *                time order -> model (and, with -o, the spool); with -j 2 and more,
 *                pages -> events on a thread of their own; from -j 4, the model in shards
 *   top-snap.c   the model -> snapshot rows per call site, cache or process
 *   top-show.c   snapshots as text, JSON lines, or a full-screen terminal view
 *   top-tick.c   the interval's timer: a snapshot due stops the pump, on time
 *   cmd-top.c    options, the hooks into the recording, keys and the terminal
 */
#ifndef KMT_TOP_H
#define KMT_TOP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <termios.h>

#include <kmemtrace/event.h>
#include <kmemtrace/tracefile.h>
#include <kmemtrace/capture.h>
#include <kmemtrace/analyse.h>

#include "record/record.h"

enum top_view { VIEW_SITES, VIEW_CACHES, VIEW_PROCS, VIEW_CGROUPS, VIEW_NR };
enum top_sort { SORT_BYTES, SORT_ALLOCS, SORT_FREES, SORT_LIVE, SORT_GROWTH, SORT_WASTE, SORT_NAME,
		SORT_NR };

/* One CPU's pages waiting to be merged. */
struct feed_cpu {
	struct kmt_live_page *head, *tail;	/* taken, not yet read to the end */
	uint64_t npages;			/* in that list (atomic: snapshots read it) */
	bool reading;				/* the stream reads the head page */
	struct kmt_skip skip;			/* a page it could not load */
	uint64_t empty_ns;			/* the reader found the buffer empty then */
	uint64_t seen_ns;			/* time stamp of the newest page taken */
	int spool_fd;				/* -o: its data file, or -1 */
};

/* A row of a snapshot: one call site, cache or process, over the interval. */
struct top_row {
	char name[64];
	uint64_t allocs, frees, bytes_alloc, bytes_req;	/* in the interval */
	uint64_t live_objects, live_bytes;	/* now: allocated since top began, not gone */
	int64_t growth;				/* live bytes' change in the interval */
};

/* What the previous snapshot saw of a row, to take differences. */
struct top_prev {
	uint64_t allocs, frees, bytes_alloc, bytes_req, now_bytes;
};

struct top_snap {
	unsigned int number;
	double t;				/* seconds since top began */
	double interval;			/* seconds this snapshot covers */
	uint64_t events, allocs, frees, page_allocs;	/* in the interval */
	uint64_t live_objects, live_bytes;	/* now */
	int64_t growth;				/* live bytes' change in the interval */
	uint64_t lost_events, lost_gaps;	/* so far */
	uint64_t lost_now;			/* in the interval */
	double cpu_pct;				/* top's own CPU, % of one CPU */
	double feed_pct;			/* ... of it the feed thread's; < 0: none (-j 1) */
	unsigned int shards;			/* the model's (1: one model) */
	uint64_t queued;			/* bytes read, not yet analysed */
	struct top_row *rows[VIEW_NR];		/* every view's rows, sorted by the current key */
	size_t nrows[VIEW_NR], alloc[VIEW_NR];
};

struct top {
	struct recording rc;
	/* options */
	double interval;			/* -i, seconds */
	unsigned int count;			/* -n snapshots, 0: until stopped */
	bool batch, json;
	int rows;				/* rows shown (batch; the screen fits its height) */
	int prefault_mb;			/* --prefault, per CPU; -1: the default */
	const char *comm, *cache, *cgroup;	/* --comm, --cache, -G */
	char cache_name[64];			/* --cache as its events name it */
	struct kmt_slab_aliases *aliases;	/* merged slab caches */
	enum top_view view;
	enum top_sort sort;
	char filter[64];			/* / NAME: rows whose name has it */
	bool paused;
	/* analysis */
	struct kmt_formats formats;
	struct kmt_page_layout layout;
	struct kmt_decoder *dec;
	struct kmt_symbols *syms;
	struct kmt_comms *comms;		/* names of the tasks running when top began */
	struct kmt_cgroups *cgroups;		/* ... and their cgroups (NULL: none readable) */
	/* The cgroup view's rows by (cgroup, memcg) (the model's interned paths), in the order met. */
	struct top_cgroup { const char *cgroup, *memcg; } *cgkeys;
	size_t ncgkeys, cgkeys_alloc;
	struct kmt_model *m;			/* with shards: shard 0, on top's thread */
	struct kmt_analyse_live *live;		/* the stream -> the model, pump by pump */
	uint64_t held;				/* pages it holds, not yet back (atomic) */
	struct feed_cpu *cpu;
	struct kmt_stream *stream;		/* the pages merged by time, as from a file */
	bool draining;				/* the capture is over: no page will come */
	int jobs;				/* -j: 2 and more, the feed thread */
	int ncpu;
	uint32_t psize;
	bool pending;				/* the last pump stopped at its budget */
	double due;				/* a pump stops here (s since t0) at the latest */
	bool failed;				/* a page could not be read: said once */
	/* snapshots */
	struct top_prev *prev[VIEW_NR];
	size_t nprev[VIEW_NR];
	struct top_snap snap;
	struct top_prev prev_sum;
	uint64_t prev_events, prev_pages, prev_lost;
	double prev_t, prev_cpu, prev_feed;
	unsigned int shown;
	/* terminal */
	int tty_fd;
	struct termios saved;			/* as it was, to put back */
	bool saved_ok;
	bool screen;				/* the full-screen view is up */
	int width, height;
	bool editing;				/* typing a filter after / */
	char edit[64];
	FILE *out;
	const char *snapshots_path;		/* --snapshots */
	FILE *snapshots;			/* its stream; NULL: standard output */
	/* the loop */
	int pump_fd, winch_fd;			/* a timerfd, and SIGWINCH's signalfd */
	/* the ticker (top-tick.c) */
	int tick_fd;				/* an eventfd: a snapshot is due */
	int timer_fd, tick_stop_fd;		/* the interval's timer; the ticker's stop */
	atomic_bool tick_now;			/* a snapshot is due: the pump stops */
	pthread_t main, ticker;
	bool ticking;
	bool ended_by_count;			/* -n snapshots shown: no final one */
};

/* top-feed.c */
int feed_init(struct top *t, struct kmt_diag *d);
void feed_release(struct top *t);
/*
 * Take the pages read so far and feed every event up to the safe time
 * (@all: every one). Without @all it stops at t->due, or as soon as a
 * snapshot is due, and sets t->pending: the loop calls again at once.
 */
int feed_pump(struct top *t, bool all);
/* Bytes of pages taken and not yet fed to the model. */
uint64_t feed_queued(const struct top *t);
/* The feed thread's CPU so far, in seconds; < 0 without one (-j 1). */
double feed_cpu_seconds(const struct top *t);

/* top-tick.c */
/* A periodic CLOCK_MONOTONIC timerfd (non-blocking), or -1. */
int top_timer(double seconds);
int tick_start(struct top *t);
/* The snapshot is shown: the tick's flag down, the boost off. */
void tick_done(struct top *t);
void tick_stop(struct top *t);

/* top-snap.c */
void snap_take(struct top *t, double now, double cpu_s);
/* Sort every view's rows by t->sort (after a key changed it). */
void snap_sort(struct top *t);
/* Does @r show, under the filter (and --cache in the cache view)? */
bool snap_shown(const struct top *t, const struct top_row *r);
void snap_release(struct top *t);
/*
 * top's tables (top-snap.c), each the one owner of its names: the views
 * (--view, the keys c k p g), the sort keys (-s, the key s), and the columns
 * of a row (the screen's and the JSON line's).
 */
struct top_view_def {
	const char *key;			/* --view KEY (KEYs too; "process": processes) */
	const char *label;			/* in the header: "by call site" */
	char hotkey;				/* the key that shows it (in the footer) */
	const char *rows;			/* in the footer: "c call sites" */
};
extern const struct top_view_def top_views[VIEW_NR];

struct top_sort_key {
	const char *key;			/* -s KEY */
	const char *label;			/* in the header: "sort bytes/s" */
	int64_t (*value)(const struct top_row *r);	/* largest first; NULL: by name */
};
extern const struct top_sort_key top_sorts[SORT_NR];

struct top_col {
	const char *title;			/* on the screen (NULL: not there) */
	int width;
	const char *json;			/* in a JSON row (NULL: not there) */
	bool bytes, rate, sign;			/* how the screen shows it */
	int drop;				/* narrow screens drop 1 first, then 2, ...; 0 never */
	int64_t (*get)(const struct top_row *r);
};
extern const struct top_col top_cols[];		/* ends with { 0 } */

const char *view_name(enum top_view v);
const char *sort_name(enum top_sort s);
/* The -s keys, or the --view keys, comma-separated into @buf (help, messages, completion). */
const char *top_sort_keys(char *buf, size_t len);
const char *top_view_keys(char *buf, size_t len);

/* top-show.c */
/* The header's lines: title, rates, live slab bytes, a blank line, the table's heading. */
#define HEAD_FULL 5
#define HEAD_MIN 3			/* title, rates, heading: a short screen's */
void show_text(struct top *t, FILE *out, int max_rows, int width, int head);
void show_json(struct top *t, FILE *out);
int screen_open(struct top *t);
void screen_close(struct top *t);
void screen_draw(struct top *t);

#endif
