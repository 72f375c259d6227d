/*
 * Checking a trace file, finding by finding: the section layout, every
 * per-CPU page (header, commit, event headers, padding, time extends),
 * per-CPU time order, lost-event markers, records that do not fit their
 * format, and the allocation model's contradictions (misuse, uncertainty).
 * Findings go to a callback as they are found; the walk goes on after a
 * bad page (the rest of that page is skipped) and after a chunk that does
 * not inflate, as the other readers do. Damage worked around when the file
 * was opened (a cut, an unreadable kallsyms section) is a finding too.
 */
#ifndef KMEMTRACE_CHECK_H
#define KMEMTRACE_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include "model.h"
#include "tracefile.h"

struct kmt_finding {
	enum kmt_severity severity;
	int cpu;			/* -1: not about one CPU */
	uint64_t offset;		/* file offset (of the chunk, if compressed) */
	uint64_t in_chunk;		/* offset of the page inside the chunk, or 0 */
	bool compressed;
	uint64_t ts;			/* 0: no timestamp */
	char what[192];
};

typedef void (*kmt_finding_fn)(void *arg, const struct kmt_finding *f);

struct kmt_check_opts {
	bool model;			/* run the allocation model too */
	kmt_finding_fn fn;
	void *arg;
};

struct kmt_check_result {
	uint64_t pages, events, lost, lost_unknown;
	uint64_t skipped;		/* parts of the data that could not be read */
	uint64_t errors, warnings;
	int buffers, cpus;
};

/*
 * Check @f (already opened: the header, options and metadata sections
 * passed). Returns 0 when the walk completed (findings or not), or a
 * negative error if the file could not be walked at all (message in @d).
 */
int kmt_check_file(struct kmt_file *f, const struct kmt_check_opts *o,
		   struct kmt_check_result *res, struct kmt_diag *d);

#endif
