/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Watching a trace file's readers, private to the library: the pages its
 * CPU readers load and what a stream saw walking them, said on the
 * reading thread, so that kmemtrace check (src/lib/analyse/check.c)
 * validates pages while the model reads them, in one pass. The observer
 * is kept in the file (tf-file.c) and called by its readers
 * (cpu-reader.c) and streams (stream.c).
 */
#ifndef KMT_OBSERVE_H
#define KMT_OBSERVE_H

#include <kmemtrace/tracefile.h>

/* Private to the library: hidden from its users (see the Makefile). */
#pragma GCC visibility push(hidden)

/*
 * What a stream saw walking one of its reader's pages, in the reader's
 * order (kmt_page_observer.walked): only what is out of the ordinary.
 */
enum kmt_walk_what {
	KMT_WALK_PAGE_BACK,		/* the page starts before the previous record */
	KMT_WALK_BACK,			/* a record's time goes back */
	KMT_WALK_UNKNOWN_ID,		/* a record's event id no format describes */
	KMT_WALK_BROKEN,		/* the rest of the page cannot be walked */
};
struct kmt_walk_note {
	enum kmt_walk_what what;
	uint64_t ts;			/* the record's; the page's; where the walk stopped */
	uint64_t back;			/* PAGE_BACK, BACK: by how many ns */
	uint32_t offset;		/* the record's, in the page's data */
	uint32_t id;			/* UNKNOWN_ID */
	const char *msg;		/* BROKEN: why */
};
struct kmt_page_observer {
	/*
	 * Every kmt_cpu_reader_next() of the file's readers, whoever reads (a
	 * stream, kmt_analyse()), in each reader's order and on its caller's
	 * thread: what it returned, and the page it loaded (@ret 1) or why it
	 * failed (@d; kmt_cpu_reader_skipped() says what it passed over).
	 */
	void (*page)(void *arg, struct kmt_cpu_reader *r, int ret, const struct kmt_page *pg,
		     const struct kmt_diag *d);
	/*
	 * Set: a stream opened from now on walks its readers' records for
	 * the observer (one walk, not two), said between the page's page()
	 * and the next's: a page's notes come once it is done, after the
	 * stream handed out its last record, and all are said only if the
	 * stream is read to its end. Readers outside a stream are not walked.
	 */
	void (*walked)(void *arg, struct kmt_cpu_reader *r, const struct kmt_walk_note *n);
	void *arg;
};
/* Watch the pages of readers opened from now on; NULL: stop. */
void kmt_file_set_observer(struct kmt_file *f, const struct kmt_page_observer *ob);
/*
 * The last record handed out was not decoded (kmt_decode() 0): if its
 * event id has no format, the observer's walk says so (its
 * KMT_WALK_UNKNOWN_ID). Every reader of a watched stream asks, before
 * the next record.
 */
void kmt_stream_undecoded(struct kmt_stream *s, const struct kmt_srec *sr);

#pragma GCC visibility pop

#endif
