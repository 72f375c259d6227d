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
#ifndef KMEMTRACE_TRACEFILE_H
#define KMEMTRACE_TRACEFILE_H

#include <stdbool.h>
#include <stdint.h>
#include "format.h"
#include "page.h"
#include "recinfo.h"

/* Section and option ids of trace.dat v7 (trace-cmd.dat.v7(5)). */
enum {
	KMT_OPT_DONE = 0,
	KMT_OPT_DATE = 1,
	KMT_OPT_CPUSTAT = 2,
	KMT_OPT_BUFFER = 3,
	KMT_OPT_TRACECLOCK = 4,
	KMT_OPT_UNAME = 5,
	KMT_OPT_HOOK = 6,
	KMT_OPT_OFFSET = 7,
	KMT_OPT_CPUCOUNT = 8,
	KMT_OPT_VERSION = 9,
	KMT_OPT_PROCMAPS = 10,
	KMT_OPT_TRACEID = 11,
	KMT_OPT_TIME_SHIFT = 12,
	KMT_OPT_GUEST = 13,
	KMT_OPT_TSC2NSEC = 14,
	KMT_OPT_STRINGS = 15,
	KMT_OPT_HEADER_INFO = 16,
	KMT_OPT_FTRACE_EVENTS = 17,
	KMT_OPT_EVENT_FORMATS = 18,
	KMT_OPT_KALLSYMS = 19,
	KMT_OPT_PRINTK = 20,
	KMT_OPT_CMDLINES = 21,
	KMT_OPT_BUFFER_TEXT = 22,
	/*
	 * kmemtrace's own, from 0x4b00 ('K'), which other readers skip as
	 * unknown: the merged slab caches (slabnames.h), text.
	 */
	KMT_OPT_SLAB_ALIASES = 0x4b01,
};

/* Section ids beyond the options above (trace-cmd 3.x). */
#define KMT_SEC_BTF 23
#define KMT_SEC_MODULES 25
#define KMT_SEC_LAST_ID 25		/* the highest id a section may have */
#define KMT_SEC_COMPRESSED 1		/* flags: the payload is compressed */
#define KMT_SECTION_HEADER 16		/* u16 id, u16 flags, u32 string id, u64 size */

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
 * Inflate compressed per-CPU data on worker threads, a few chunks ahead of
 * the readers opened after this call (default off).
 */
void kmt_file_set_prefetch(struct kmt_file *f, bool on);
/* Whether it is on; kmt_analyse() then decodes on a thread of its own too. */
bool kmt_file_prefetch(const struct kmt_file *f);

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

/*
 * v7 files are a sequence of sections from the end of the file header to
 * the end of the file; checkers walk them with these (v6 has none).
 */
struct kmt_section {
	uint64_t offset;		/* of its header */
	uint16_t id, flags;
	uint64_t size;			/* payload bytes (KMT_ETRUNC: bytes left) */
	bool known;			/* an id trace-cmd defines */
	bool past_end;			/* the payload runs past the end of the file */
	const char *name;		/* "kallsyms", "flyrecord", ... or NULL */
};

struct kmt_section_iter {
	const struct kmt_file *f;
	uint64_t off;
};

void kmt_section_iter_init(struct kmt_section_iter *it, const struct kmt_file *f);
/*
 * The next section into @s: 1, or 0 after the last. KMT_ETRUNC if the
 * bytes left are too few for a section header (@s->offset, @s->size say
 * where and how many); after a section that runs past the end
 * (@s->past_end), the walk is over.
 */
int kmt_section_next(struct kmt_section_iter *it, struct kmt_section *s);

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
/* Prefix the message in @d with file, CPU and offset of the current page;
 * returns d->err. For errors found while walking the page's events. */
int kmt_cpu_reader_fail(struct kmt_cpu_reader *r, struct kmt_diag *d);
void kmt_cpu_reader_close(struct kmt_cpu_reader *r);

#endif
