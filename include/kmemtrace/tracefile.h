/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libkmemtrace, the tracefile stage (src/lib/tracefile/): trace.dat read
 * and written: event formats, ring-buffer pages, per-CPU data, one
 * time-ordered stream, the census. The file format's internals (the
 * section walk, the page writer, most of the ring-buffer encoding) are
 * the library's own, in private headers beside its sources.
 */
#ifndef KMEMTRACE_TRACEFILE_H
#define KMEMTRACE_TRACEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"

/*
 * Event formats: the kernel's self-description of each tracepoint record
 * (events/<system>/<event>/format) and of the ring-buffer page header
 * (events/header_page). Parsed from the text stored in a trace file, so a
 * file from another kernel decodes with its own layout.
 */

enum {
	KMT_FIELD_SIGNED = 1 << 0,
	KMT_FIELD_ARRAY = 1 << 1,	/* "type name[N]" */
	KMT_FIELD_DATALOC = 1 << 2,	/* "__data_loc type[] name": u32 len<<16|off */
	KMT_FIELD_STRING = 1 << 3,	/* char array or __data_loc char[] */
};

struct kmt_field {
	char *name;
	char *type;
	uint32_t offset;
	uint32_t size;
	uint32_t flags;
	uint32_t array_len;		/* elements, for KMT_FIELD_ARRAY */
};

struct kmt_format {
	char *system;
	char *name;
	uint32_t id;
	struct kmt_field *fields;	/* common_* fields first, as in the text */
	int nr_fields;
	char *text;			/* the original text, NUL-terminated */
	size_t text_len;
};

/*
 * Parse one format file's @text (@len bytes, need not be NUL-terminated)
 * into @fmt; @system names the directory it came from (NULL: "ftrace").
 * On failure returns KMT_EFORMAT with the reason in @d, and @fmt holds
 * nothing to release. On success release with kmt_format_release().
 */
int kmt_format_parse(struct kmt_format *fmt, const char *system,
		     const char *text, size_t len, struct kmt_diag *d);
void kmt_format_release(struct kmt_format *fmt);

/* The field called @name, or NULL. */
const struct kmt_field *kmt_format_field(const struct kmt_format *fmt,
					 const char *name);

/* All formats of a trace, looked up by event id. */
struct kmt_formats {
	struct kmt_format *v;
	int nr;
	int alloc;
	struct kmt_format **by_id;	/* dense, max_id + 1 entries */
	uint32_t max_id;
};

void kmt_formats_init(struct kmt_formats *fs);
/* Take ownership of *@fmt (which is cleared); -EEXIST on a duplicate id. */
int kmt_formats_add(struct kmt_formats *fs, struct kmt_format *fmt);
void kmt_formats_release(struct kmt_formats *fs);
const struct kmt_format *kmt_formats_by_id(const struct kmt_formats *fs,
					   uint32_t id);
const struct kmt_format *kmt_formats_find(const struct kmt_formats *fs,
					  const char *system, const char *name);

/*
 * The ring-buffer sub-buffer header, from events/header_page: where the
 * page timestamp, the commit word (data length plus missed-events flags)
 * and the data start. Sizes are the kernel's (commit is a kernel long).
 */
struct kmt_page_layout {
	uint32_t ts_offset, ts_size;
	uint32_t commit_offset, commit_size;
	uint32_t data_offset;
};

int kmt_page_layout_parse(struct kmt_page_layout *pl, const char *text,
			  size_t len, struct kmt_diag *d);
/* The layout of every kernel since 2.6.31 with a @long_size-byte long. */
void kmt_page_layout_default(struct kmt_page_layout *pl, int long_size);

/*
 * The ftrace ring-buffer sub-buffer ("page"), as read from trace_pipe_raw
 * and stored unchanged in trace.dat:
 *
 *	u64 timestamp | long commit (length | MISSED_EVENTS | MISSED_STORED)
 *	| events... | [long lost-count if MISSED_STORED]
 *
 * Each event starts with a 32-bit header (type_len:5, time_delta:27);
 * type_len 29/30/31 are padding, time extend and absolute time stamp.
 * Iteration is bounds-checked against the commit length and never reads
 * outside the page.
 */

/*
 * The event header: type_len in the low KMT_RB_TYPE_LEN_BITS bits and the
 * time delta above them (little-endian; a big-endian file has type_len in
 * the top bits). type_len 1 .. KMT_RB_TYPE_DATA_MAX is a data event of
 * type_len * 4 bytes, the case kmt_page_next() reads inline; the rest of
 * the encoding (the commit word's flags, padding, time extend and stamp)
 * is the library's own (src/lib/tracefile/page-local.h).
 */
#define KMT_RB_TYPE_LEN_BITS 5
#define KMT_RB_TYPE_LEN_MASK ((1U << KMT_RB_TYPE_LEN_BITS) - 1)
#define KMT_RB_TYPE_DATA_MAX 28

struct kmt_page {
	const uint8_t *base;		/* the whole sub-buffer */
	uint32_t size;			/* sub-buffer size */
	const uint8_t *data;		/* first event */
	uint32_t data_len;		/* bytes of events (commit & mask) */
	uint64_t ts;			/* page start time */
	bool missed;			/* events were lost before this page */
	int64_t lost;			/* how many: > 0, or -1 if unknown */
	bool be;			/* big-endian file */
};

/*
 * Load the sub-buffer at @base (@size bytes). Returns 0, or KMT_EFORMAT
 * with the reason in @d when the header cannot be right (commit beyond
 * the page, lost count beyond the page).
 */
int kmt_page_load(struct kmt_page *pg, const void *base, uint32_t size,
		  const struct kmt_page_layout *pl, bool be, struct kmt_diag *d);

/* One data event of a page. */
struct kmt_rec {
	uint64_t ts;
	const uint8_t *data;
	uint32_t len;			/* payload bytes (4-byte rounded) */
	uint32_t offset;		/* of the event header, from page start */
};

struct kmt_page_iter {
	const struct kmt_page *pg;
	uint32_t pos;			/* offset into pg->data */
	uint64_t ts;
	uint32_t nr_pad, nr_ext, nr_abs; /* counts of non-data events seen */
	uint64_t last_delta;		/* delta of the last event */
};

static inline void kmt_page_iter_init(struct kmt_page_iter *it,
				      const struct kmt_page *pg)
{
	it->pg = pg;
	it->pos = 0;
	it->ts = pg->ts;
	it->nr_pad = it->nr_ext = it->nr_abs = 0;
	it->last_delta = 0;
}

/* The general case of kmt_page_next(): every event type, both byte orders. */
int kmt_page_next_slow(struct kmt_page_iter *it, struct kmt_rec *rec,
		       struct kmt_diag *d);

/*
 * Next data event into @rec. Returns 1 for an event, 0 at the end of the
 * page, KMT_EFORMAT (reason in @d, may be NULL) when an event header points
 * outside the committed data. Inline for the common case: a little-endian
 * page and a small data event (type_len 1 .. KMT_RB_TYPE_DATA_MAX).
 */
static inline int kmt_page_next(struct kmt_page_iter *it, struct kmt_rec *rec,
				struct kmt_diag *d)
{
	const struct kmt_page *pg = it->pg;
	uint32_t pos = it->pos, hdr, tl, len;

	if (pos + 4 <= pg->data_len && !pg->be) {
		__builtin_memcpy(&hdr, pg->data + pos, 4);
		tl = hdr & KMT_RB_TYPE_LEN_MASK;
		len = tl * 4;
		if (tl - 1 < KMT_RB_TYPE_DATA_MAX && len <= pg->data_len - pos - 4) {
			it->ts += hdr >> KMT_RB_TYPE_LEN_BITS;
			it->last_delta = hdr >> KMT_RB_TYPE_LEN_BITS;
			it->pos = pos + 4 + len;
			rec->ts = it->ts;
			rec->data = pg->data + pos + 4;
			rec->len = len;
			rec->offset = pos;
			return 1;
		}
	}
	return kmt_page_next_slow(it, rec, d);
}

/*
 * A CPU's ring-buffer statistics: the kernel's per_cpu/cpuN/stats, live or
 * as a file's CPUSTAT option keeps them.
 */
struct kmt_cpustat {
	int cpu;
	bool valid;
	uint64_t entries, overrun, commit_overrun, bytes, dropped, read;
	/* Lines kmemtrace adds after the kernel's (absent in other files). */
	bool truncated;			/* recording stopped early (e.g. ENOSPC) */
	char note[128];			/* why, if truncated */
	uint64_t died;			/* events lost with a recorder that was
					   killed (recovered, recover.h) */
	uint64_t after_death;		/* of the ring buffer's losses, those after
					   the recorder died (nobody read it) */
	char *text;			/* the CPUSTAT text itself */
};

/*
 * Parse the kernel's per_cpu/cpuN/stats text ("entries: N" lines, and
 * kmemtrace's own "CPU:" and "kmemtrace truncated:" lines) into @st; @st->text
 * is left NULL. The one reader of that text. Returns whether a "CPU:" line was there.
 */
bool kmt_cpustat_parse(struct kmt_cpustat *st, const char *text, size_t len);
/* The line a recovery adds: "kmemtrace dropped after the recorder died: N". */
#define KMT_CPUSTAT_AFTER_DEATH "kmemtrace dropped after the recorder died"
/*
 * The events a CPU lost, one figure everywhere (record, info, check,
 * report): what its ring buffer counted (overrun + dropped events), or what
 * its page headers counted (@counted) if more; with the events a dead
 * recorder took with it (--recover). @st may be NULL (no stats).
 */
uint64_t kmt_cpustat_lost(const struct kmt_cpustat *st, uint64_t counted);

/*
 * What a recording says about itself, typed: which recorder made it and
 * whether it kept only part of the slab allocations or frees (pid or event
 * filters), so a reader does not call an object freed twice when
 * allocations were filtered, nor leaked when frees were.
 *
 * In a trace file it is the VERSION option, text trace-cmd shows as is: its
 * first line "kmemtrace 0.1.0 (partial: allocations frees)", then
 * "command: ...", "settings: ..." and "recorded: 2026-11-23T10:00:00Z"
 * lines. That text is written and parsed here and nowhere else; the spool
 * keeps the same words.
 */

#define KMT_PARTIAL_ALLOCS 1u
#define KMT_PARTIAL_FREES 2u

struct kmt_recinfo {
	char recorder[64];		/* "kmemtrace 0.1.0", another tool's VERSION, or "" */
	bool ours;			/* recorded by kmemtrace */
	unsigned int partial;		/* KMT_PARTIAL_* */
	char command[1024];		/* the command line that recorded, or "" */
	char settings[512];		/* what it recorded and how, one line, or "" */
	int64_t created;		/* when recording started (time(2)), or 0 */
	unsigned int stack_sample;	/* stacks kept for 1 in N allocations (settings
					   "stacks 1 in N"), or 0 */
	bool stack_slices;		/* ... in slices of time, after every event
					   ("stacks 1 in N (time slices)"); else
					   1 slab page in N, allocations only */
};

/* In the settings: the default events were asked for, and the kernel had no vmalloc ones. */
#define KMT_RECINFO_NO_VMALLOC "no vmalloc events in this kernel"

/* After "stacks 1 in N" in the settings: sampled by time (sampler.h). */
#define KMT_RECINFO_SLICES " (time slices)"

/* The VERSION text of @ri into @buf (always NUL-terminated); returns @buf. */
const char *kmt_recinfo_format(const struct kmt_recinfo *ri, char *buf, size_t len);

/* KMT_PARTIAL_* bits as words ("allocations frees", "" for none), and back. */
const char *kmt_partial_words(unsigned int partial);
unsigned int kmt_partial_parse(const char *words, size_t len);

/*
 * Reading trace.dat files, versions 6 and 7 (trace-cmd's format; v7 with
 * zstd or zlib compressed sections and flyrecord chunks).
 *
 * kmt_file_open() validates the header, the options and every metadata
 * section against the file's size before anything is used; per-CPU data is
 * read page by page through a kmt_cpu_reader, which validates chunk
 * headers and pages as it goes. Every failure names the file, the section
 * and the offset in a struct kmt_diag.
 *
 * A damaged file gives what can be read: a file that ends early is opened
 * with what it holds ("truncated at byte N of M (section S)": N its size,
 * M where section S should end), a kallsyms, printk or cmdlines section
 * that cannot be read is left empty, and a reader passes over a chunk or
 * page it cannot read and goes on with the next. What was worked around
 * is said: kmt_file_damage() at open, struct kmt_skip while reading.
 */

struct kmt_cpu_data {
	int cpu;			/* -1: unknown (a salvaged file's missing data) */
	uint64_t offset;		/* file offset of the data */
	uint64_t size;			/* bytes in the file (compressed if so) */
	uint64_t want;			/* bytes there should be: size, unless cut */
	bool cut;			/* the file ends inside this data */
};

struct kmt_buffer {
	char *name;			/* "" for the top-level buffer */
	char *clock;
	uint32_t page_size;		/* sub-buffer size */
	bool compressed;
	uint64_t section_offset;	/* v7: offset of its flyrecord section */
	int nr_cpus;
	struct kmt_cpu_data *cpus;
	int nr_stats;
	struct kmt_cpustat *stats;	/* per-CPU stats of this buffer */
};

/* The stats of CPU @cpu of @b, or NULL (@b may be NULL). */
const struct kmt_cpustat *kmt_buffer_cpustat(const struct kmt_buffer *b, int cpu);

struct kmt_file_info {
	const char *path;
	int version;			/* 6 or 7 */
	bool big_endian;
	int long_size;			/* user space long */
	int kernel_long_size;		/* from header_page's commit field */
	uint32_t page_size;
	const char *compression;	/* "none", "zstd", "zlib" */
	const char *compression_version;
	const char *uname;		/* may be NULL */
	const char *clock;		/* selected trace clock, may be NULL */
	const char *recorder;		/* VERSION option, may be NULL */
	const char *slab_aliases;	/* merged slab caches (slabnames.h), may be NULL */
	const char *slab_caches;	/* the kernel's caches and sizes (event.h), may be NULL */
	const char *cgroups;		/* the tasks' cgroups at the start (event.h), may be NULL */
	struct kmt_recinfo recinfo;	/* what it says, typed */
	int cpu_count;			/* CPUCOUNT option, or CPUs with data */
	uint64_t trace_id;
	uint64_t file_size;
	/*
	 * The options were lost with the end of the file: the buffers were
	 * rebuilt from the data (CPUs numbered in file order), the ring
	 * buffers' stats and the recording's settings are unknown.
	 */
	bool salvaged;
};

struct kmt_file;

/*
 * Open and validate @path. On success *@fp owns the file (close with
 * kmt_file_close()); on failure returns a negative error with the message
 * in @d ("FILE: section 'kallsyms' at offset N: ...").
 */
int kmt_file_open(struct kmt_file **fp, const char *path, struct kmt_diag *d);
/* The same over @len bytes in memory (not copied; must outlive the file). */
int kmt_file_open_mem(struct kmt_file **fp, const void *data, size_t len,
		      const char *name, struct kmt_diag *d);
void kmt_file_close(struct kmt_file *f);
/*
 * Inflate compressed per-CPU data on up to @n threads shared by the
 * readers opened after this call, a few chunks ahead of each (-j N); 1 or
 * less, the default: in the readers' own threads.
 */
void kmt_file_set_threads(struct kmt_file *f, int n);
/* ... of which only @n inflate (0: the readers' own threads), for readers opened from now on. */
void kmt_file_set_inflaters(struct kmt_file *f, int n);
/* What was set; above 1, kmt_analyse() decodes on a thread of its own too. */
int kmt_file_threads(const struct kmt_file *f);
/* The inflating threads started so far (never more than readers or set). */
int kmt_file_inflate_threads(const struct kmt_file *f);
/*
 * How far the file's readers are, from any thread: bytes of per-CPU data
 * read so far (inflated or walked) and in all, of every buffer.
 */
void kmt_file_read_progress(const struct kmt_file *f, uint64_t *done, uint64_t *total);
/* CPU ns so far reading and inflating chunks: on the inflating threads (@workers) or the readers'. */
uint64_t kmt_file_inflate_ns(const struct kmt_file *f, bool workers);
/* ... and the inflating threads' CPU ns asleep with nothing to inflate (kmt_cond_wait()). */
uint64_t kmt_file_wait_ns(const struct kmt_file *f);

const struct kmt_file_info *kmt_file_info(const struct kmt_file *f);
const struct kmt_formats *kmt_file_formats(const struct kmt_file *f);
const struct kmt_page_layout *kmt_file_page_layout(const struct kmt_file *f);
/* Raw metadata texts (NUL-terminated, owned by the file, maybe empty). */
const char *kmt_file_header_page(const struct kmt_file *f, size_t *len);
const char *kmt_file_header_event(const struct kmt_file *f, size_t *len);
const char *kmt_file_kallsyms(const struct kmt_file *f, size_t *len);
const char *kmt_file_printk(const struct kmt_file *f, size_t *len);
const char *kmt_file_cmdlines(const struct kmt_file *f, size_t *len);
/* The TRACECLOCK option as stored ("[local] global ..."), or NULL. */
const char *kmt_file_trace_clock(const struct kmt_file *f);

/*
 * Damage found at open and worked around: the file ends early, a section
 * not needed for the events could not be read (kallsyms: call sites are
 * then raw addresses), the options were lost (info->salvaged).
 */
struct kmt_damage {
	int err;			/* KMT_ETRUNC, KMT_ECOMPRESS, KMT_EFORMAT */
	int cpu;			/* -1: not about one CPU's data */
	uint64_t offset;		/* where in the file */
	char what[256];			/* one line without the file's name; the
					 * file's own bytes in it escaped */
};

/* The damage found at open, *@n entries (owned by the file); NULL if none. */
const struct kmt_damage *kmt_file_damage(const struct kmt_file *f, int *n);

int kmt_file_nr_buffers(const struct kmt_file *f);
const struct kmt_buffer *kmt_file_buffer(const struct kmt_file *f, int i);
/*
 * The buffer a report analyses: the top-level buffer if it holds data,
 * else the first instance buffer that does (trace-cmd extract -B). -1 if
 * no buffer holds data.
 */
int kmt_file_main_buffer(const struct kmt_file *f);
/* The buffer called @name, or -1. */
int kmt_file_find_buffer(const struct kmt_file *f, const char *name);
/*
 * kmemtrace watch stores its watchpoint samples (kmemtrace:access events)
 * in a buffer of their own beside the allocation events; readers merge it
 * into the main buffer's stream. Its index, or -1.
 */
#define KMT_ACCESS_BUFFER "kmemtrace-access"
int kmt_file_access_buffer(const struct kmt_file *f);

/*
 * Page-by-page reading of one CPU's data of one buffer. Compressed data
 * is inflated one chunk at a time into a private buffer.
 */
struct kmt_cpu_reader;

/*
 * A part of one CPU's data that could not be read and was passed over: a
 * chunk that does not inflate (or whose header is bad: the reader looks
 * for the next chunk that starts well), a bad page, or the end of a file
 * cut inside the data.
 */
struct kmt_skip {
	int buffer, cpu;
	uint64_t from, to;		/* file bytes passed over, [from, to) */
	uint32_t chunks;		/* compressed chunks passed over */
	uint32_t pages;			/* pages passed over, where known */
	bool to_end;			/* nothing after it can be read */
	bool cut;			/* ... because the file ends there */
	/* Filled by the stream: the CPU's last record before the gap and its
	 * first after it (UINT64_MAX if none), 0 if none before. */
	uint64_t ts_from, ts_to;
	int err;
	char why[192];			/* the first reason, without the file's name */
};

int kmt_cpu_reader_open(struct kmt_cpu_reader **rp, struct kmt_file *f,
			int buffer, int idx, struct kmt_diag *d);
/*
 * Load the next page into @pg. Returns 1 with a page, 0 at the end, or a
 * negative error (message in @d) for a chunk or page that cannot be read,
 * or the end of a cut file. After an error other than -ENOMEM the reader
 * has passed over what it could not read (kmt_cpu_reader_skipped() says what)
 * and the next call goes on with the next intact chunk or page, or
 * returns 0; -ENOMEM ends the reading.
 */
int kmt_cpu_reader_next(struct kmt_cpu_reader *r, struct kmt_page *pg,
			struct kmt_diag *d);
/* After an error from kmt_cpu_reader_next(): what it passed over. */
const struct kmt_skip *kmt_cpu_reader_skipped(const struct kmt_cpu_reader *r);
/* Where the current page came from, for messages: "offset 0x1000" or
 * "chunk 3 (offset 0x2000) + 0x1000". */
const char *kmt_cpu_reader_where(struct kmt_cpu_reader *r);
/* File offset of the current page (of its chunk if compressed). */
uint64_t kmt_cpu_reader_offset(const struct kmt_cpu_reader *r);
/* Offset of the current page inside its chunk (0 if not compressed). */
uint64_t kmt_cpu_reader_in_chunk(const struct kmt_cpu_reader *r);
int kmt_cpu_reader_cpu(const struct kmt_cpu_reader *r);
/* Its buffer's index in the file, and the CPU's index in the buffer. */
void kmt_cpu_reader_index(const struct kmt_cpu_reader *r, int *buffer, int *idx);
void kmt_cpu_reader_close(struct kmt_cpu_reader *r);

/*
 * Writing trace.dat files, from trace-cmd's published format description
 * (trace-cmd.dat.v7(5), trace-cmd.dat.v6(5)). Version 7 is what we record:
 * metadata sections, one flyrecord section per buffer with its per-CPU data
 * in page-aligned runs (optionally zstd/zlib chunks), one OPTIONS section
 * and a STRINGS section. Version 6 (one top-level buffer, no compression)
 * exists for tests of the reader.
 */

struct kmt_blob {
	const char *data;
	size_t len;
};

struct kmt_wformat {
	const char *system;		/* "ftrace" goes to the ftrace section */
	const char *text;
	size_t len;
};

struct kmt_trace_meta {
	struct kmt_blob header_page, header_event;
	const struct kmt_wformat *formats;	/* same-system formats adjacent */
	int nr_formats;
	struct kmt_blob kallsyms, printk, cmdlines;
	const char *uname;		/* NULL: not written */
	const char *trace_clock;	/* content of trace_clock, NULL: none */
	const char *version;		/* recorder, e.g. "kmemtrace 0.1.0" */
	const char *slab_aliases;	/* merged slab caches (slabnames.h), NULL: none */
	const char *slab_caches;	/* the kernel's caches and sizes (event.h), NULL: none */
	const char *cgroups;		/* the tasks' cgroups at the start (event.h), NULL: none */
	int cpu_count;
	uint64_t trace_id;
	/*
	 * v7: if set, called once every buffer's CPU data is written, to
	 * give @cmdlines then (what the data says of process names); the
	 * CMDLINES section then follows the buffers. 0 or -errno.
	 */
	int (*late_cmdlines)(void *arg, struct kmt_blob *cmdlines);
	/*
	 * v7: the same for @kallsyms (the symbols the data names, known once
	 * it is read), called before late_cmdlines; KALLSYMS then follows the
	 * buffers too.
	 */
	int (*late_kallsyms)(void *arg, struct kmt_blob *kallsyms);
	void *late_arg;
};

/*
 * Per-CPU data: @size bytes from @fd at offset 0, or from @mem, or from
 * @read, which is called strictly in order of @off (a stream). @seen, if
 * set, gets every chunk of the data in order once it is written.
 */
struct kmt_wcpu {
	int cpu;
	int fd;
	const void *mem;
	uint64_t start;			/* where the data begins in fd or mem */
	uint64_t size;			/* whole sub-buffers */
	const char *stats;		/* the CPU's stats text, or NULL */
	int (*read)(void *arg, void *buf, size_t len, uint64_t off);	/* 0 or -errno */
	void (*seen)(void *arg, const void *buf, size_t len, uint64_t off);
	void *arg;
};

struct kmt_wbuffer {
	const char *name;		/* "" for the top-level buffer */
	const char *clock;		/* e.g. "local" */
	uint32_t subbuf_size;
	int nr_cpus;
	const struct kmt_wcpu *cpus;
};

struct kmt_writer_opts {
	int version;			/* 6 or 7 */
	enum kmt_zalg zalg;		/* v7 only */
	int level;			/* compression level (zstd: 1) */
	uint32_t chunk_pages;		/* sub-buffers per compressed chunk */
	uint32_t page_size;		/* the traced machine's page size */
	int long_size;			/* its user-space long, 4 or 8 */
	bool punch;			/* free source ranges once copied (disk full) */
	/* Called now and then with bytes of CPU data done and in all. */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
	int threads;			/* compressing threads; 0: one per online CPU */
};

/*
 * Write a complete trace file to @fd (a new, empty, seekable file) from
 * @m and @nr_bufs buffers. Returns 0, or a negative error with the reason
 * in @d; on failure the content of @fd is unspecified, and callers write
 * to a temporary name and rename only on success.
 */
int kmt_write_trace(int fd, const struct kmt_writer_opts *o,
		    const struct kmt_trace_meta *m, const struct kmt_wbuffer *bufs,
		    int nr_bufs, struct kmt_diag *d);
/*
 * The same into the file @path, complete or absent (outfile.h), mode 0600;
 * its size in *@bytes if not NULL. Errors name @path.
 */
int kmt_write_trace_file(const char *path, const struct kmt_writer_opts *o,
			 const struct kmt_trace_meta *m, const struct kmt_wbuffer *bufs,
			 int nr_bufs, uint64_t *bytes, struct kmt_diag *d);

/*
 * One time-ordered stream of records from a buffer's per-CPU data (or
 * several buffers'): each CPU's pages in order, merged by timestamp (ties:
 * lower index first).
 * Losses the ring buffer reported in a page header come out as a marker
 * before that page's first record, so a consumer knows a CPU has a gap.
 * Where a CPU's recording was cut short (its CPUSTAT says "kmemtrace
 * truncated"), a marker of unknown loss ends its data, flagged truncated.
 * What could not be read in a damaged file (chunks, pages, a cut end) is
 * passed over: a marker of unknown loss at the CPU's last record before
 * it says what (@skip), flagged truncated if nothing of the CPU follows.
 */
struct kmt_srec {
	struct kmt_rec rec;
	int cpu;			/* CPU number */
	int buffer;			/* the buffer it came from */
	int idx;			/* index of the (buffer, CPU) in the stream */
	bool lost_marker;		/* no record: events were lost on @cpu */
	int64_t lost;			/* for a marker: count, or -1 unknown */
	bool truncated;			/* ... where @cpu's recording stopped early: -1 */
	/* A marker of damaged data passed over: what (ts_from, ts_to), until the next call. */
	const struct kmt_skip *skip;
};

struct kmt_stream;

/* NULL on failure, with the reason in @d. */
struct kmt_stream *kmt_stream_open(struct kmt_file *f, int buffer, struct kmt_diag *d);
/*
 * The same over several buffers' CPUs at once (a watch file's samples),
 * and part @part of @nparts of them (all: 0, 1): the inputs (buffer by
 * buffer, CPU by CPU) whose index i has i % @nparts == @part, for a merge
 * in parts on threads of their own (kmt_analyse()). By (time,
 * kmt_stream_input()) the parts' records merge into the whole stream's
 * order. Before any kmt_stream_next(), kmt_stream_set_start() on each
 * with the least kmt_stream_start_ts() of all places the markers before
 * a CPU's first record. Once all are open, each may be read on a thread.
 */
struct kmt_stream *kmt_stream_open_buffers(struct kmt_file *f, const int *buffers, int nr, int part,
					   int nparts, struct kmt_diag *d);
uint64_t kmt_stream_start_ts(const struct kmt_stream *s);
void kmt_stream_set_start(struct kmt_stream *s, uint64_t start);
/* The whole stream's index of the part's input @idx (kmt_srec.idx). */
int kmt_stream_input(const struct kmt_stream *s, int idx);
/*
 * Where a stream's pages come from: a file's per-CPU data (the streams
 * above), or pages handed over live (kmemtrace top). @next loads input
 * @i's next page into @pg (the page before it is done with): 1, 0 at its
 * end, -EAGAIN when it has none yet (live), -ENOMEM, or another error for a
 * page passed over (@skipped says what, and the next call goes on).
 */
struct kmt_page_source {
	int (*next)(void *arg, int i, struct kmt_page *pg, struct kmt_diag *d);
	const struct kmt_skip *(*skipped)(void *arg, int i);
	const char *(*where)(void *arg, int i);		/* for messages */
	uint64_t (*offset)(void *arg, int i);
	uint64_t (*in_chunk)(void *arg, int i);
	void *arg;
};

/* The stream of @n inputs of @src, input i being CPU @cpus[i]; NULL with @d. */
struct kmt_stream *kmt_stream_open_source(const struct kmt_page_source *src, const int *cpus, int n,
					  struct kmt_diag *d);
/* Live: no record after @ts yet (another CPU may still hand over an older
 * one); UINT64_MAX (the default): all. */
void kmt_stream_set_safe(struct kmt_stream *s, uint64_t ts);
/*
 * Next record (or loss marker). Returns 1, 0 at the end of all CPUs,
 * -EAGAIN (live) when the next one is not known yet, or a negative error
 * (out of memory) with the reason in @d.
 */
int kmt_stream_next(struct kmt_stream *s, struct kmt_srec *out, struct kmt_diag *d);
/* The file offset of the page the last record came from, and its CPU. */
uint64_t kmt_stream_offset(const struct kmt_stream *s, int idx);
void kmt_stream_close(struct kmt_stream *s);

/*
 * A census of a trace file's buffer: per CPU, how many pages, events and
 * bytes, how many events the ring buffer reported lost, and per event id
 * how many records. A page walk only; no event is decoded.
 */

struct kmt_census_cpu {
	int cpu;
	uint64_t pages, events, bytes;	/* bytes: pages x sub-buffer size */
	uint64_t lost_events;		/* sum of the counts pages carry */
	uint64_t lost_pages;		/* pages flagged "events missed" */
	uint64_t lost_unknown;		/* ... whose count did not fit */
	uint64_t lost;			/* the one figure: kmt_cpustat_lost() */
	uint64_t first_ts, last_ts;
};

struct kmt_census {
	int nr_cpus;
	struct kmt_census_cpu *cpus;
	uint32_t nr_ids;
	uint64_t *per_id;		/* records per event id, nr_ids entries */
	uint64_t events, lost_events, lost_unknown;
	uint64_t lost, lost_pages;	/* the one figure, and the gaps, over all CPUs */
	/* Parts of a damaged file's data passed over, in file order per CPU. */
	struct kmt_skip *skipped;
	size_t nr_skipped;
};

/*
 * Walk every page of @buffer of @f, passing over what cannot be read (in
 * @c->skipped). Returns 0, or a negative error (out of memory) with the
 * reason in @d. Release @c with kmt_census_release() either way.
 */
int kmt_census_run(struct kmt_census *c, struct kmt_file *f, int buffer, struct kmt_diag *d);
void kmt_census_release(struct kmt_census *c);

#endif
