/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private state of an open trace file, shared by the reader's modules and
 * the writer: trace.dat's section and option ids, the byte cursor, struct
 * kmt_file and the helpers between tf-*.c and cpu-reader.c. The rest of
 * tracefile/'s private side has headers of its own, for the library's
 * other stages: observe.h (the readers' observer), section.h (the section
 * walk), page-local.h (ring-buffer pages: encoding, writer, spooled runs).
 */
#ifndef TF_LOCAL_H
#define TF_LOCAL_H

#include <kmemtrace/base.h>
#include <kmemtrace/tracefile.h>
#include "base/kmt-local.h"
#include "observe.h"		/* struct kmt_file keeps its observer */

/* Private to the library: hidden from its users (see the Makefile). */
#pragma GCC visibility push(hidden)

/* Section and option ids of trace.dat v7 (trace-cmd.dat.v7(5)): the reader's and the writer's alone. */
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
	 * unknown: the merged slab caches and the kernel's caches with their
	 * sizes (event.h), text.
	 */
	KMT_OPT_SLAB_ALIASES = 0x4b01,
	KMT_OPT_SLAB_CACHES = 0x4b02,
	KMT_OPT_CGROUPS = 0x4b03,	/* the tasks' cgroups at the start (event.h) */
};

/* Section ids beyond the options above (trace-cmd 3.x). */
#define KMT_SEC_BTF 23
#define KMT_SEC_MODULES 25
#define KMT_SEC_LAST_ID 25		/* the highest id a section may have */
#define KMT_SEC_COMPRESSED 1		/* flags: the payload is compressed */
#define KMT_SECTION_HEADER 16		/* u16 id, u16 flags, u32 string id, u64 size */

/* A bounded cursor over bytes of the file (or of a decompressed section). */
struct cur {
	const uint8_t *p;
	const uint8_t *end;
	bool be;
	bool bad;			/* set once a read ran past the end */
	uint64_t need;			/* then: how many bytes it lacked (at least) */
};

static inline void cur_short(struct cur *c, uint64_t want)
{
	c->need = want - (uint64_t)(c->end - c->p);
	c->bad = true;
}

static inline size_t cur_left(const struct cur *c)
{
	return (size_t)(c->end - c->p);
}

static inline uint64_t cur_num(struct cur *c, unsigned int size)
{
	uint64_t v;

	if (c->bad || cur_left(c) < size) {
		if (!c->bad)
			cur_short(c, size);
		return 0;
	}
	v = ldn(c->p, size, c->be);
	c->p += size;
	return v;
}

/* A NUL-terminated string inside the cursor, or NULL (and bad). */
static inline const char *cur_str(struct cur *c)
{
	const uint8_t *nul;

	if (c->bad || !(nul = memchr(c->p, 0, cur_left(c)))) {
		if (!c->bad)
			cur_short(c, cur_left(c) + 1);
		return NULL;
	}
	const char *s = (const char *)c->p;

	c->p = nul + 1;
	return s;
}

static inline const uint8_t *cur_bytes(struct cur *c, uint64_t n)
{
	const uint8_t *p = c->p;

	if (c->bad || cur_left(c) < n) {
		if (!c->bad)
			cur_short(c, n);
		return NULL;
	}
	c->p += n;
	return p;
}

struct kmt_file {
	struct kmt_file_info info;
	char *path;
	const uint8_t *map;		/* the whole file */
	size_t size;
	bool mapped;			/* map came from mmap() */
	int threads;			/* -j: threads to read with (> 1: kmt_analyse() has stages) */
	int inflaters;			/* ... of which inflate chunks (0: the readers themselves) */
	struct tf_pool *pool;		/* those threads, made on first use (cpu-reader.c) */
	struct kmt_page_observer observer;	/* sees every reader's pages */
	uint64_t data_read;		/* bytes of CPU data read so far (atomic) */
	/* CPU ns spent inflating chunks: [0] on worker threads, [1] in the readers */
	uint64_t inflate_ns[2];
	uint64_t wait_ns;		/* the pool's threads, asleep */
	enum kmt_zalg zalg;
	struct kmt_zctx *z;
	char *compression, *compression_version, *uname, *clock, *recorder;
	char *slab_aliases;
	char *slab_caches;
	char *cgroups;
	char *trace_clock;		/* TRACECLOCK as stored */

	struct kmt_page_layout layout;
	struct sbuf header_page, header_event, kallsyms, printk, cmdlines;
	struct kmt_formats formats;

	int nr_buffers;
	struct kmt_buffer *buffers;
	int main_buffer;

	uint64_t first_section;		/* v7: where the sections start */
	uint64_t options;		/* v7: where the header says the options are */
	uint64_t options_cut;		/* v7: an options section past the end, or 0 */
	/* v7: section offsets found in options. */
	uint64_t sec_off[KMT_OPT_BUFFER_TEXT + 1];
	/* Stats gathered from CPUSTAT options, before buffers are known. */
	struct sbuf cpustat_text;
	const char *stat_buffer;	/* buffer the next CPUSTAT belongs to */

	/* Damage worked around at open (tf-damage.c). */
	struct kmt_damage *damage;
	int nr_damage;
	char cut[160];			/* "truncated at byte N of M (section 'S')", or "" */
};

/* tf-meta.c: payload parsers shared by v6 and v7. */
/* The inflating threads (cpu-reader.c): stopped and freed at the file's close. */
void tf_pool_free(struct tf_pool *p);
int tf_pool_threads(const struct tf_pool *p);
int tf_parse_header_info(struct kmt_file *f, struct cur *c, struct kmt_diag *d);
int tf_parse_ftrace_events(struct kmt_file *f, struct cur *c, struct kmt_diag *d);
int tf_parse_event_formats(struct kmt_file *f, struct cur *c, struct kmt_diag *d);
int tf_parse_blob(struct cur *c, unsigned int lensize, struct sbuf *out,
		  struct kmt_diag *d);
int tf_add_cpustat(struct kmt_file *f, const char *text, size_t len);
int tf_parse_buffer_option(struct kmt_file *f, struct cur *c, bool v7,
			   bool latency, struct kmt_diag *d);
struct kmt_buffer *tf_buffer_get(struct kmt_file *f, const char *name);

/* Prefix a diagnostic with the file name and where it happened. */
#define MAX_CHUNK (64u << 20)		/* the largest chunk a file may have, inflated */

int tf_fail(struct kmt_file *f, struct kmt_diag *d, const char *section,
	    uint64_t offset);

/*
 * cpu-reader.c: could a chunk "u32 @csize, u32 @usize, @data" of pages of
 * @psize bytes start here (sizes that make sense, the algorithm's magic)?
 */
/* Could a chunk of @csize bytes hold @usize bytes of pages of @psize? */
bool tf_usize_ok(uint32_t psize, uint32_t csize, uint32_t usize);
bool tf_chunk_plausible(const struct kmt_file *f, uint32_t psize, uint32_t csize,
			uint32_t usize, const uint8_t *data);

/* tf-damage.c: what a damaged file lost, and what can still be read. */
/* The name of section @id ("kallsyms", "flyrecord", ...), or NULL. */
const char *tf_section_name(unsigned int id);
/* Note damage worked around; -ENOMEM if it cannot be kept. */
int tf_damage_add(struct kmt_file *f, int err, int cpu, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/*
 * Is the file cut short? If so, f->cut says where ("truncated at byte N of
 * M (section 'S')"): the first section (v7) or CPU data running past the
 * end. @need: bytes a read of the header or of v6 metadata lacked (0:
 * none), for @section; they say where it should have ended.
 */
bool tf_cut(struct kmt_file *f, const char *section, uint64_t need);
/* v7, at the end of a good open: is a section cut, even one nothing reads? */
void tf_find_cut(struct kmt_file *f);
/* "truncated at byte N of M (section 'CPU c data')" for @cd into @buf. */
const char *tf_cpu_cut(const struct kmt_file *f, const struct kmt_buffer *b,
		       const struct kmt_cpu_data *cd, char *buf, size_t len);
/*
 * v7, the options lost with the end of the file: find the sections by
 * walking them, and rebuild the buffers from the compressed data of each
 * flyrecord section (CPUs in file order). 0, or an error in @d.
 */
int tf_salvage(struct kmt_file *f, struct kmt_diag *d);

/* Fill @ri from a VERSION text (NULL: nothing known). */
void kmt_recinfo_parse(struct kmt_recinfo *ri, const char *text);
/*
 * Prefix the message in @d with file, CPU and offset of the current page;
 * returns d->err. For errors found while walking the page's events.
 */
int kmt_cpu_reader_fail(struct kmt_cpu_reader *r, struct kmt_diag *d);

#pragma GCC visibility pop

#endif
