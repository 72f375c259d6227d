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
#ifndef KMEMTRACE_SPOOL_H
#define KMEMTRACE_SPOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "compress.h"
#include "kmemtrace.h"

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
	 * name are kept (symkeep.h), which name them all the same.
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
	uint64_t overrun, dropped;	/* from the ring buffer's stats */
	bool has_stats;
};

/* The events @fc's CPU lost, the one figure (kmt_cpustat_lost()). */
uint64_t kmt_finalize_cpu_lost(const struct kmt_finalize_cpu *fc);

struct kmt_finalize_result {
	int nr_cpus;
	struct kmt_finalize_cpu cpus[KMT_MAX_CPUS];
	uint64_t events, lost, raw_bytes, file_bytes;
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

#endif
