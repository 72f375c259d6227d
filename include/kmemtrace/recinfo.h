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
#ifndef KMEMTRACE_RECINFO_H
#define KMEMTRACE_RECINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* After "stacks 1 in N" in the settings: sampled by time (sampler.h). */
#define KMT_RECINFO_SLICES " (time slices)"

/* The VERSION text of @ri into @buf (always NUL-terminated); returns @buf. */
const char *kmt_recinfo_format(const struct kmt_recinfo *ri, char *buf, size_t len);
/* Fill @ri from a VERSION text (NULL: nothing known). */
void kmt_recinfo_parse(struct kmt_recinfo *ri, const char *text);

/* KMT_PARTIAL_* bits as words ("allocations frees", "" for none), and back. */
const char *kmt_partial_words(unsigned int partial);
unsigned int kmt_partial_parse(const char *words, size_t len);

#endif
