/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The section walk of a v7 trace file (tf-damage.c), private to the
 * library: for the reader (where a cut file ends, a file whose options
 * were lost salvaged), for kmemtrace check (src/lib/analyse/check.c)
 * and for the unit tests.
 */
#ifndef KMT_SECTION_H
#define KMT_SECTION_H

#include <kmemtrace/tracefile.h>

/* Private to the library: hidden from its users (see the Makefile). */
#pragma GCC visibility push(hidden)

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

#pragma GCC visibility pop

#endif
