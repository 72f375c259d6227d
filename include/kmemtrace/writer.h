/*
 * Writing trace.dat files, from trace-cmd's published format description
 * (trace-cmd.dat.v7(5), trace-cmd.dat.v6(5)). Version 7 is what we record:
 * metadata sections, one flyrecord section per buffer with its per-CPU data
 * in page-aligned runs (optionally zstd/zlib chunks), one OPTIONS section
 * and a STRINGS section. Version 6 (one top-level buffer, no compression)
 * exists for tests of the reader.
 */
#ifndef KMEMTRACE_WRITER_H
#define KMEMTRACE_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include "compress.h"
#include "kmemtrace.h"

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

#endif
