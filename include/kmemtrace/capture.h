/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 *  * libkmemtrace, the capture stage (src/lib/capture/): a recording: per-
 * CPU capture, the spool, holding pages in memory, the session's set-up,
 * finalising, recovering, stack sampling.
 */
#ifndef KMEMTRACE_CAPTURE_H
#define KMEMTRACE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base.h"
#include "tracefile.h"
#include "tracefs.h"

/*
 * The spool: a recording on disk while it runs, as plain files a killed
 * recorder leaves behind intact, so that they are always enough to build a
 * valid trace (kmemtrace record --recover). Only spool.c knows the file
 * names; everyone else goes through this handle:
 *
 *   recording start   kmt_spool_create, kmt_spool_set_meta, kmt_spool_put
 *                     (header pages, kallsyms, ...), kmt_spool_add_format,
 *                     kmt_spool_reserve
 *   capture threads   kmt_spool_cpu_create (one data file per CPU and buffer)
 *   recording end     kmt_spool_put_stats, kmt_spool_set_truncated
 *   afterwards        kmt_spool_open (a spool left behind); a dead
 *                     recorder's instance taken in (recover.h, with
 *                     kmt_spool_cpu_append); kmt_spool_finalize
 *                     (finalize.c) and kmt_spool_remove
 *
 * A spool has one or two buffers of per-CPU pages: the recording's, and
 * kmemtrace watch's watchpoint samples (kmemtrace:access events), which
 * become the trace file's second buffer, KMT_ACCESS_BUFFER.
 */

enum kmt_spool_buffer { KMT_SPOOL_MAIN, KMT_SPOOL_ACCESS, KMT_SPOOL_NR_BUFFERS };

/* Metadata the kernel gives as text, kept as is. */
enum kmt_spool_blob {
	KMT_SPOOL_HEADER_PAGE,		/* events/header_page */
	KMT_SPOOL_HEADER_EVENT,		/* events/header_event */
	KMT_SPOOL_KALLSYMS,		/* /proc/kallsyms */
	KMT_SPOOL_PRINTK,		/* printk_formats */
	KMT_SPOOL_TRACE_CLOCK,		/* the instance's trace_clock */
	KMT_SPOOL_CMDLINES,		/* "pid comm" lines of the running tasks */
	KMT_SPOOL_SLAB_ALIASES,		/* merged slab caches (slabnames.h) */
	KMT_SPOOL_SLAB_CACHES,		/* the kernel's caches and sizes (event.h) */
	KMT_SPOOL_CGROUPS,		/* the tasks' cgroups at the start (event.h) */
	KMT_SPOOL_NR_BLOBS,
};

/* What the recording is, written once it is set up. */
struct kmt_spool_meta {
	char version[32];		/* of the kmemtrace that recorded */
	int32_t pid;			/* the recorder */
	char instance[64];		/* its tracefs instance */
	int64_t created;		/* time(2) */
	int64_t drained;		/* time(2) its instance was drained into
					   the spool after the recorder died
					   (recover.h); 0: never */
	char uname[256];		/* "Linux host 6.18.0 x86_64" */
	uint32_t page_size;		/* the machine's */
	uint32_t subbuf_size;		/* the ring buffer's pages */
	int long_size;			/* the kernel's */
	char clock[32];			/* the trace clock */
	unsigned int partial;		/* KMT_PARTIAL_* (recinfo.h) */
	char command[1024];		/* the command line that records */
	char settings[512];		/* what it records and how, one line */
	int nr_cpus;
	int cpus[KMT_MAX_CPUS];
};

struct kmt_spool;

/*
 * The spool's name, the one rule: a recording into OUTPUT spools into
 * OUTPUT.spool (kmt_spool_name()), and a spool DIR becomes DIR without
 * .spool, or DIR.dat if it has no such end (kmt_spool_output_name(),
 * trailing slashes ignored). Into @buf; 0, or -ENAMETOOLONG if it does
 * not fit @len.
 */
int kmt_spool_name(const char *output, char *buf, size_t len);
int kmt_spool_output_name(const char *dir, char *buf, size_t len);
/*
 * Create the spool directory @dir (0700) for a recording by this process.
 * NULL with -EEXIST and an explanation in @d if it exists (in use by a
 * live recorder, or left by one that died: then --recover is suggested).
 */
struct kmt_spool *kmt_spool_create(const char *dir, struct kmt_diag *d);
/*
 * Open a spool left behind (or just recorded) and read its metadata.
 * NULL with -ENOENT, -ENOTDIR or KMT_EFORMAT and the reason in @d, or
 * -EBUSY if another process has it (its recorder, alive, or another
 * kmt_spool_open()): a spool has one user at a time, until its handle is
 * closed or its process ends.
 */
struct kmt_spool *kmt_spool_open(const char *dir, struct kmt_diag *d);
/* Forget the handle; the files stay. NULL is fine. */
void kmt_spool_close(struct kmt_spool *s);
/* Remove the directory and everything in it, and the handle. NULL is fine. */
int kmt_spool_remove(struct kmt_spool *s);

const char *kmt_spool_dir(const struct kmt_spool *s);
/* The metadata (zeroed until set or opened). */
const struct kmt_spool_meta *kmt_spool_meta(const struct kmt_spool *s);
int kmt_spool_set_meta(struct kmt_spool *s, const struct kmt_spool_meta *m, struct kmt_diag *d);

/* Keep @len bytes of kernel metadata @b. */
int kmt_spool_put(struct kmt_spool *s, enum kmt_spool_blob b, const void *data, size_t len,
		  struct kmt_diag *d);
/* The bytes kept of @b (0 if none). */
uint64_t kmt_spool_size(const struct kmt_spool *s, enum kmt_spool_blob b);
/* Add one event format (the text of its tracefs format file). */
int kmt_spool_add_format(struct kmt_spool *s, const char *system, const char *name,
			 const char *text, size_t len, struct kmt_diag *d);

/* Make room for buffer @b (KMT_SPOOL_MAIN always has it). */
int kmt_spool_add_buffer(struct kmt_spool *s, enum kmt_spool_buffer b, struct kmt_diag *d);
bool kmt_spool_has_buffer(const struct kmt_spool *s, enum kmt_spool_buffer b);
/* Create the data file of @cpu in buffer @b: an fd (0600, the caller closes it). */
int kmt_spool_cpu_create(struct kmt_spool *s, enum kmt_spool_buffer b, int cpu,
			 struct kmt_diag *d);
/*
 * Open the data file of @cpu in buffer @b to add pages after those it has
 * (created if absent; a torn last page of @subbuf_size is cut off): an
 * fd positioned at its end (the caller closes it).
 */
int kmt_spool_cpu_append(struct kmt_spool *s, enum kmt_spool_buffer b, int cpu,
			 uint32_t subbuf_size, struct kmt_diag *d);
/* The ring buffer's stats of @cpu in @b at the end ("CPU: N\n" first). */
int kmt_spool_put_stats(struct kmt_spool *s, enum kmt_spool_buffer b, int cpu,
			const char *text, size_t len, struct kmt_diag *d);
/* The recording stopped early (a full disk): why, one line. */
int kmt_spool_set_truncated(struct kmt_spool *s, const char *why, struct kmt_diag *d);

/*
 * Set aside @bytes of disk: if the disk fills while recording, finalising
 * gives it back first and has room to write the trace's metadata. -ENOSPC
 * if there is not even that much room.
 */
int kmt_spool_reserve(struct kmt_spool *s, uint64_t bytes, struct kmt_diag *d);
/* Give the room back (the disk is full, or the file is being written). */
void kmt_spool_unreserve(struct kmt_spool *s);

/* ---- the trace file (finalize.c) ---- */

struct kmt_recorder;

struct kmt_finalize_opts {
	enum kmt_zalg zalg;
	int level;
	uint32_t chunk_pages;
	bool recovered;			/* the recorder died: truncated, unless
					   its instance was drained (recover.h) */
	bool punch;			/* free spool space while writing (disk full) */
	/*
	 * Keep /proc/kallsyms whole; by default only the symbols the events
	 * name are kept (kmt_symkeep_*), which name them all the same.
	 */
	bool full_kallsyms;
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
	/*
	 * A halted recorder (record.h) whose held pages follow each CPU's
	 * spool file: they are read, counted and compressed straight from
	 * memory, never written to the spool, and each spool file's room is
	 * freed as it is written. @released runs once every buffer is
	 * written (the pages are read; the recorder may go).
	 */
	struct kmt_recorder *held;
	void (*released)(void *arg);
	void *released_arg;
};

struct kmt_finalize_cpu {
	int cpu;
	uint64_t events, pages, bytes;
	uint64_t lost;			/* counts from page headers */
	uint64_t lost_unknown;		/* flagged pages without a count */
	uint64_t lost_pages;		/* flagged pages: the gaps */
	uint64_t stacks;		/* kernel_stack records among the events */
	uint64_t first_ts, last_ts;	/* of its events (counted from the spool), 0: none */
	uint64_t overrun, dropped;	/* from the ring buffer's stats */
	bool has_stats;
};

/* The events @fc's CPU lost, the one figure (kmt_cpustat_lost()). */
uint64_t kmt_finalize_cpu_lost(const struct kmt_finalize_cpu *fc);

struct kmt_finalize_result {
	int nr_cpus;
	struct kmt_finalize_cpu cpus[KMT_MAX_CPUS];
	uint64_t events, lost, raw_bytes, file_bytes;
	uint64_t stacks;		/* kernel_stack records among the events */
	uint64_t first_ts, last_ts;	/* the span of the events counted from the spool (0: not counted) */
	/*
	 * Finalising from held pages: the bytes gone from memory and spool
	 * alike (held pages read; the spool's part freed once written), all
	 * or up to a failure.
	 */
	uint64_t consumed;
	uint64_t access_events, access_lost;	/* kmemtrace watch's samples */
	bool truncated;
	char truncated_why[128];
};

/*
 * Build @output from spool @s: written to a temporary name in the same
 * directory, synced, then renamed, so @output is either absent or
 * complete. The spool is left in place (remove it on success).
 */
int kmt_spool_finalize(struct kmt_spool *s, const char *output,
		       const struct kmt_finalize_opts *o, struct kmt_finalize_result *res,
		       struct kmt_diag *d);

/*
 * The capture threads: tracefs instance -> per-CPU spool files.
 *
 * While the workload runs, one thread per CPU moves whole ring-buffer
 * pages from per_cpu/cpuN/trace_pipe_raw into the spool (spool.h) with
 * splice(), sleeping in poll() until the kernel's buffer_percent watermark
 * wakes it: no per-event work, no wake-up per event. After the workload,
 * kmt_spool_finalize() turns the spool into trace.dat v7, compressing
 * then, never on the recording path.
 */

/* ---- the capture threads ---- */

struct kmt_recorder_opts {
	const char *instance_path;	/* tracefs instance directory */
	struct kmt_spool *spool;	/* where the pages go (not owned) */
	const int *cpus;
	int nr_cpus;
	uint32_t subbuf_size;
	int rt_prio;			/* > 0: SCHED_FIFO at this priority (or
					   nice -20 if not allowed); 0: as is */
	size_t hold_bytes;		/* pages held in memory before they are
					   written (0: write through) */
	unsigned int sync_ms;		/* > 0: also take what each ring buffer
					   has, its partial page too, this often
					   (with hold_bytes 0: the spool is never
					   further behind); 0: at the watermark */
	bool append;			/* add to the spool's data files (a dead
					   recorder's, recover.h) */
};

struct kmt_recorder;

/*
 * Open every CPU's trace_pipe_raw and spool file and start the threads.
 * They run (and move data) until kmt_recorder_stop(). NULL + reason in @d.
 */
struct kmt_recorder *kmt_recorder_start(const struct kmt_recorder_opts *o,
					struct kmt_diag *d);
/* The threads' tids (to exclude from tracing); returns how many. */
int kmt_recorder_tids(const struct kmt_recorder *r, pid_t *tids, int max);
/* An fd that becomes readable when a thread stops on an error. */
int kmt_recorder_error_fd(const struct kmt_recorder *r);
/* Bytes captured so far for CPU index @i, and bytes held in memory now. */
uint64_t kmt_recorder_bytes(const struct kmt_recorder *r, int i);
uint64_t kmt_recorder_held(const struct kmt_recorder *r);
/*
 * Drain what the ring buffers still hold (full pages, then the partial
 * last page) and join the threads. Call after tracing is switched off.
 * Returns 0 or the first thread error (message in @d; -ENOSPC for a full
 * disk, in which case the spool holds everything up to that point).
 */
int kmt_recorder_stop(struct kmt_recorder *r, struct kmt_diag *d);
/*
 * As kmt_recorder_stop(), but the pages held in memory stay there, to be
 * read in order with kmt_recorder_read_held() (finalising straight from
 * memory, never through the spool files). kmt_recorder_stop() afterwards
 * writes whatever is left to the spool, returning only its own error (the
 * capture's came from this call). The instance must outlive the held
 * pages: remove it only after kmt_recorder_free().
 */
int kmt_recorder_halt(struct kmt_recorder *r, struct kmt_diag *d);
/* Bytes held in memory for CPU index @i, after the spool file's. */
uint64_t kmt_recorder_held_bytes(struct kmt_recorder *r, int i);
/* The next @len of them; 0, or -errno with @d. */
int kmt_recorder_read_held(struct kmt_recorder *r, int i, void *buf, size_t len,
			   struct kmt_diag *d);
/* Close the trace_pipe_raw files (the instance can then be removed). */
void kmt_recorder_free(struct kmt_recorder *r);

/*
 * Live capture, for kmemtrace top: one thread per CPU reads ring-buffer
 * pages from trace_pipe_raw as they fill (the instance's buffer_percent
 * watermark), and the partial page too at least every period, into a
 * queue in memory that the analysis takes from. Unlike the recorder's
 * (record.h), nothing goes to a file here; the threads are the same kind
 * (real-time priority, excluded from tracing by the caller).
 */

struct kmt_live_opts {
	const char *instance_path;	/* tracefs instance directory */
	const int *cpus;
	int nr_cpus;
	uint32_t subbuf_size;
	int rt_prio;			/* > 0: SCHED_FIFO, else as is */
	unsigned int period_ms;		/* partial pages handed over at least this often */
	size_t max_bytes;		/* queued pages beyond which the readers wait */
	size_t prefault_bytes;		/* pages faulted in before the readers start */
};

/* A page as read: @len bytes (the rest of @data up to the page size is zero). */
struct kmt_live_page {
	struct kmt_live_page *next;
	uint32_t len;
	uint8_t data[];
};

struct kmt_live;

/* Open every CPU's trace_pipe_raw and start the threads. NULL + reason in @d. */
struct kmt_live *kmt_live_start(const struct kmt_live_opts *o, struct kmt_diag *d);
int kmt_live_tids(const struct kmt_live *l, pid_t *tids, int max);
/* Readable when a thread stopped on an error. */
int kmt_live_error_fd(const struct kmt_live *l);
/*
 * The pages of CPU index @i read so far, oldest first (NULL if none), and
 * in *@empty_ns the CLOCK_MONOTONIC time just before the thread last found
 * that CPU's buffer empty: with the "mono" trace clock, every event older
 * than that (less what is still being written) has been handed over.
 */
struct kmt_live_page *kmt_live_take(struct kmt_live *l, int i, uint64_t *empty_ns);
/* Give pages back for reuse (the list from kmt_live_take, or part of it). */
void kmt_live_put(struct kmt_live *l, struct kmt_live_page *list);
/* Bytes of pages waiting to be taken. */
uint64_t kmt_live_queued(const struct kmt_live *l);
/*
 * Read what the buffers still hold, stop the threads and close the
 * trace_pipe_raw files (tracing switched off first; the instance can go
 * then). The pages stay to be taken. 0 or the first thread error, message
 * in @d.
 */
int kmt_live_stop(struct kmt_live *l, struct kmt_diag *d);
/* Close the trace_pipe_raw files and free every page, taken or not. */
void kmt_live_free(struct kmt_live *l);

/*
 * A recording's instance: events (events.h), filters, stack triggers, pid
 * filtering, buffer size and clock set up in a private instance
 * (instance.h); and the metadata a trace file needs besides the pages
 * (formats, kallsyms, process names, uname) captured into the spool.
 */

/* A filter for one event ("kmem:kmalloc"). */
struct kmt_event_filter {
	const char *event;
	const char *filter;
};

struct kmt_session_opts {
	const struct kmt_events *events;
	const pid_t *pids;		/* set_event_pid, following forks */
	int nr_pids;
	const char *filter;		/* applied where its fields exist */
	const struct kmt_event_filter *event_filters;	/* before @filter */
	int nr_event_filters;
	bool stack;			/* stacktrace trigger on allocations */
	unsigned int stack_sample;	/* > 1: no trigger, the sampler switches stacks (sampler.h) */
	unsigned int buffer_kb;		/* per CPU */
	unsigned int buffer_percent;	/* reader wake-up watermark */
	const char *clock;
};

/*
 * Configure @in (tracing off) for @o and enable the events. @notes gets
 * one line naming the events the filter does not apply to. Returns 0 or -errno/
 * KMT_E* with the tracefs file and the kernel's explanation in @d.
 */
int kmt_session_configure(const struct kmt_instance *in, const struct kmt_session_opts *o,
			  char *notes, size_t notes_len, struct kmt_diag *d);
/*
 * Does @o record only part of the slab allocations or frees (pid or event
 * filters, free events left out)? KMT_PARTIAL_* bits. A reader must not
 * call an object freed twice when allocations were filtered, nor call an
 * object leaked when frees were.
 */
unsigned int kmt_session_partial(const char *root, const struct kmt_session_opts *o);

/* Exclude @tids from tracing (set_event_notrace_pid). */
int kmt_session_exclude(const struct kmt_instance *in, const pid_t *tids, int n,
			struct kmt_diag *d);
/* tracing_on 1 / 0 in the instance. */
int kmt_session_tracing(const struct kmt_instance *in, bool on, struct kmt_diag *d);

/*
 * Save what a trace file needs besides the pages into the spool @sp:
 * header_page/event, formats of @events and of ftrace's own events,
 * kallsyms, printk formats, trace_clock, the names of running processes;
 * and @m, completed with what the kernel and machine say (version, pid,
 * instance, time, uname, page and long size, clock) — the caller fills
 * the CPUs, sub-buffer size and partial bits.
 */
int kmt_session_capture(const struct kmt_instance *in, const struct kmt_events *events,
			struct kmt_spool *sp, struct kmt_spool_meta *m, struct kmt_diag *d);
/*
 * Save the tasks' cgroups @c (kmt_cgroups_from_proc() once tracing is on:
 * a task that moves or is born after it, the trace shows) into @sp
 * (KMT_SPOOL_CGROUPS), replacing what was there. 0, or a negative error
 * with the reason in @d.
 */
struct kmt_cgroups;
int kmt_session_save_cgroups(struct kmt_spool *sp, const struct kmt_cgroups *c, struct kmt_diag *d);
/* Save per_cpu/cpuN/stats into buffer @b of the spool. */
int kmt_session_save_stats(const struct kmt_instance *in, struct kmt_spool *sp,
			   enum kmt_spool_buffer b, const int *cpus, int nr_cpus, struct kmt_diag *d);

/*
 * What a dead recorder leaves in the kernel. A recorder that is SIGKILLed
 * cannot clean up: its instance goes on tracing, and its ring buffers hold
 * every event it had not read yet. They belong in its spool, after what
 * the spool has: kmemtrace record --recover takes them before writing the
 * file, and the next recorder to find the instance takes them too (its
 * spool is known from the instance's note, instance.h), so that removing
 * the instance loses nothing.
 */

/*
 * A recorder's watchdog (watchdog.c): a process of its own that, if the
 * recorder dies without kmt_watchdog_stop() (SIGKILL, a crash), stops the
 * tracing of every instance it was told of at once — tracing off,
 * triggers and events off, what the ring buffers hold kept for record
 * --recover — and notes the time of death (kmt_instance_noted_death()).
 * Start it before the threads that open trace_pipe_raw or a spool (it
 * closes what it inherits, but a thread may open a file as it forks). NULL
 * with @d on failure.
 */
struct kmt_watchdog;
struct kmt_watchdog *kmt_watchdog_start(const char *root, struct kmt_diag *d);
/* Guard instance @name of @root too; 0 or -errno. @w may be NULL (none). */
int kmt_watchdog_guard(struct kmt_watchdog *w, const char *name);
/* The recorder ends as it should: the watchdog exits, doing nothing. @w may be NULL. */
void kmt_watchdog_stop(struct kmt_watchdog *w);

struct kmt_recover_result {
	char instance[64];
	bool found;			/* the instance was there, and the spool's */
	bool other;			/* there, but nothing says it is the spool's */
	uint64_t unread;		/* events its ring buffers held */
	uint64_t taken;			/* events moved into the spool */
	/*
	 * Events the recorder had read that its spool does not have (held in
	 * its memory, or on their way to the spool, when it died): marked
	 * lost on the first page moved after them, as the kernel marks the
	 * events it drops; @lost_at_end of them had no page after them, and
	 * the spool says it is truncated instead.
	 */
	uint64_t lost, lost_at_end;
	/*
	 * Events the kernel dropped on the instance's pages taken here: its
	 * buffers filled with nobody reading them, after the recorder died
	 * (and before its watchdog, if any, stopped the tracing) — not the
	 * recording's losses.
	 */
	uint64_t dropped_after;
	uint64_t died_ns;		/* when the recorder died (CLOCK_REALTIME), if noted */
	bool removed;			/* the instance is gone */
};

/*
 * Move what the instance of @s's recording (its metadata names it) still
 * holds into @s: tracing stopped; each CPU's pages, full and partial,
 * appended to its spool file; the gap before them marked; the ring
 * buffers' stats saved; the spool marked drained (its data ends where
 * tracing stopped: not truncated); the instance removed. @root: tracefs.
 * 0 with @res->found false if there is no such instance, or it is not
 * noted as @s's; -EBUSY if its recorder is alive; another -errno with @d
 * (the instance is then left, tracing off, for another try).
 */
int kmt_recover_take(struct kmt_spool *s, const char *root, struct kmt_recover_result *res,
		     struct kmt_diag *d);

/* What became of a dead recorder's instance. */
enum kmt_stale_fate {
	KMT_STALE_MOVED,		/* its events are in its spool now */
	KMT_STALE_NO_SPOOL,		/* no spool was noted: removed, events and all */
	KMT_STALE_SPOOL_GONE,		/* its spool is not there: removed likewise */
	KMT_STALE_BUSY,			/* its spool is in use (being recovered): left */
	KMT_STALE_FAILED,		/* moving failed (@why): left, tracing off */
};

struct kmt_stale {
	const char *name;
	uint64_t unread;		/* events it held, tracing stopped */
	const char *spool;		/* its spool as noted, or NULL */
	enum kmt_stale_fate fate;
	struct kmt_recover_result took;	/* KMT_STALE_MOVED */
	bool removed;
	int err;			/* KMT_STALE_FAILED, or why it could not be removed */
	const char *why;
};

/*
 * Every instance of a dead recorder under @root (kmt_instance_find_stale):
 * tracing stopped, its unread events counted, moved into its spool when
 * that is noted and there (kmt_recover_take), and removed unless its
 * events could not be moved. @each is told what became of each one (the
 * struct is valid during the call). Returns how many were found, or -errno.
 */
int kmt_recover_stale(const char *root, void (*each)(void *arg, const struct kmt_stale *st),
		      void *arg);

/*
 * Fair stack sampling (record --stack-sample N).
 *
 * A stack for 1 allocation in N, chosen so that every call site gets its
 * share: a thread switches the instance's "stacktrace" option on for
 * short slices of time at random moments, as many events off as N - 1
 * times the events on. While it is on, the kernel puts a stack after
 * every event it records (frees too; the model keeps only the
 * allocations'). A call site that reuses the same few objects is sampled
 * as often as any other: the choice depends on when an allocation
 * happens, never on its address. It is fair to call sites whose
 * allocations spread over many slices (2 ms / N long, at least 50 us,
 * and about N times that apart); a burst shorter than that is sampled
 * all or nothing, and a call site whose code runs slower under stacks
 * than the rest is sampled a little less. The counts it steers by come
 * from the ring buffers' stats while it switches; on a machine saturated
 * by other work they go wrong (seen: 1 event in 23 to 1 in 72 with stacks
 * for 1 in 16 asked, two hackbench recordings running beside; the call
 * sites still got equal shares), so record prints what the file holds.
 *
 * Switching the stacktrace trigger instead costs a synchronize_rcu per
 * removal (~70 ms on 6.18); the option is one flag (~15 us a write).
 */

struct kmt_sampler_opts {
	const char *instance_path;	/* tracefs instance directory */
	const int *cpus;		/* its CPUs, whose events it counts */
	int nr_cpus;
	unsigned int one_in;		/* N >= 2: on 1/N of the time */
	int rt_prio;			/* > 0: SCHED_FIFO at this priority */
	uint32_t slice_us;		/* length of an "on" slice; 0: 2 ms / N, 50 us at least */
	uint64_t seed;			/* of the random gaps; 0: from the clock */
};

/* What the sampler did, for the record's summary and tests. */
struct kmt_sampler_stats {
	uint64_t on_ns, total_ns;	/* time stacks were on, time it ran */
	uint64_t slices;		/* times it was switched on */
	uint64_t events_on, events_off;	/* events counted while on, off */
};

struct kmt_sampler;

/*
 * Start the thread; the option is off until its first slice. NULL and the
 * reason in @d (the option file cannot be opened or written).
 */
struct kmt_sampler *kmt_sampler_start(const struct kmt_sampler_opts *o, struct kmt_diag *d);
/* The thread's tid (to exclude from tracing). */
pid_t kmt_sampler_tid(const struct kmt_sampler *s);
/*
 * Stop the thread and leave the option off; fills @st (may be NULL).
 * Returns 0, or the error of a write that failed (the option may be on).
 * Safe to call twice.
 */
int kmt_sampler_stop(struct kmt_sampler *s, struct kmt_sampler_stats *st);
/* Stop if running, and free. Takes NULL. */
void kmt_sampler_free(struct kmt_sampler *s);

#endif
