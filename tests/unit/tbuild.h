/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A test trace builder: synthesise trace.dat files event by event, with
 * real kernel formats (tests/data/formats) or hand-written old ones, and
 * ring-buffer pages packed exactly as the kernel packs them (time extends,
 * long events, lost-event flags). Used by the unit tests of the reader,
 * the decoder and the report model.
 */
#ifndef TBUILD_H
#define TBUILD_H

#include <stdbool.h>
#include <stdint.h>

#include <kmemtrace/tracefile.h>

struct tb;

struct tb_val {
	const char *name;
	uint64_t num;
	const char *str;		/* for string fields */
	const uint64_t *arr;		/* for array fields: @narr longs */
	int narr;
};

/* A builder for @ncpus CPUs with @subbuf-byte pages (0: 4096). */
struct tb *tb_new(int ncpus, uint32_t subbuf);
void tb_free(struct tb *tb);

/* Add a format: from tests/data/formats/<file>, or literal text. */
void tb_format_file(struct tb *tb, const char *system, const char *file);
void tb_format_text(struct tb *tb, const char *system, const char *text);
/* The standard formats of this project's reference kernel (6.18). */
void tb_formats_6_18(struct tb *tb);
/* Every format of tests/data/formats/@version/ the builder knows, those the kernel had. */
void tb_formats_of(struct tb *tb, const char *version);
/* The slab lists a recording keeps (event.h's text; NULL: none); must outlive tb_write(). */
void tb_slab_lists(struct tb *tb, const char *aliases, const char *caches);
void tb_kallsyms(struct tb *tb, const char *text);
/* The kernel's uname (default "Linux test 6.18.0 x86_64"); @text must outlive tb_write(). */
void tb_uname(struct tb *tb, const char *text);
void tb_cmdlines(struct tb *tb, const char *text);
void tb_cpustat(struct tb *tb, int cpu, const char *text);

/* Has the trace event @system:@event (and its field @field, unless NULL)? */
bool tb_has(struct tb *tb, const char *system, const char *event, const char *field);
/* tb_emit() of the fields of @vals the event has (at most 15); the others are left out. */
void tb_emit_some(struct tb *tb, int cpu, uint64_t ts, const char *system, const char *event,
		  int pid, const struct tb_val *vals);
/* Append an event; fields not named are zero. */
void tb_emit(struct tb *tb, int cpu, uint64_t ts, const char *system, const char *event,
	     int pid, const struct tb_val *vals);
/* The next page of @cpu says @lost events (-1: unknown) were lost. */
void tb_lost(struct tb *tb, int cpu, int64_t lost);
/* Close @cpu's current page (the next event starts a new one). */
void tb_flush_page(struct tb *tb, int cpu);

/*
 * A kmemtrace watch sample on @cpu (in the second buffer, KMT_ACCESS_BUFFER,
 * created with the kmemtrace:access format at the first call), and a loss
 * of samples before the next one.
 */
void tb_access(struct tb *tb, int cpu, uint64_t ts, int pid, uint64_t ip, uint64_t obj,
	       uint32_t offset, bool write, const char *field);
void tb_access_lost(struct tb *tb, int cpu, int64_t lost);

/* Write everything to @path. Returns 0 or a negative error. */
int tb_write(struct tb *tb, const char *path, int version, enum kmt_zalg zalg);
/* Raw data of @cpu (whole pages so far), for page-level tests. */
const uint8_t *tb_cpu_data(struct tb *tb, int cpu, uint64_t *size);
/* The same of @cpu's kmemtrace watch samples, its page closed (no sample yet: NULL, *@size 0). */
const uint8_t *tb_access_data(struct tb *tb, int cpu, uint64_t *size);

/* Short forms for the common memory events. */
void tb_kmalloc(struct tb *tb, int cpu, uint64_t ts, int pid, uint64_t site, uint64_t ptr,
		uint64_t req, uint64_t alloc);
void tb_kfree(struct tb *tb, int cpu, uint64_t ts, int pid, uint64_t site, uint64_t ptr);
void tb_cache_alloc(struct tb *tb, int cpu, uint64_t ts, int pid, uint64_t site, uint64_t ptr,
		    const char *cache, uint64_t req, uint64_t alloc);
void tb_cache_free(struct tb *tb, int cpu, uint64_t ts, int pid, uint64_t site, uint64_t ptr,
		   const char *cache);

/* The path of @file under tests/data (or $KMT_TESTDATA), valid until the next call. */
const char *tb_data_path(const char *file);

/* A temporary file name, removed by tb_cleanup(). */
const char *tb_tmpname(const char *tag);
void tb_cleanup(void);

#endif
