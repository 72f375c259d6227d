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
#ifndef KMEMTRACE_STREAM_H
#define KMEMTRACE_STREAM_H

#include "tracefile.h"

struct kmt_srec {
	struct kmt_rec rec;
	int cpu;			/* CPU number */
	int buffer;			/* the buffer it came from */
	int idx;			/* index of the (buffer, CPU) in the stream */
	bool lost_marker;		/* no record: events were lost on @cpu */
	int64_t lost;			/* for a marker: count, or -1 unknown */
	bool truncated;			/* the marker is where @cpu's recording
					 * stopped early (disk full): -1 lost */
	/* For a marker of damaged data passed over: what (ts_from, ts_to
	 * filled), until the next call; NULL otherwise. */
	const struct kmt_skip *skip;
};

struct kmt_stream;

/* NULL on failure, with the reason in @d. */
struct kmt_stream *kmt_stream_open(struct kmt_file *f, int buffer, struct kmt_diag *d);
/* The same over several buffers' CPUs at once (a watch file's samples). */
struct kmt_stream *kmt_stream_open_buffers(struct kmt_file *f, const int *buffers, int nr,
					   struct kmt_diag *d);
/*
 * Next record (or loss marker). Returns 1, 0 at the end of all CPUs, or a
 * negative error (out of memory) with the reason in @d.
 */
int kmt_stream_next(struct kmt_stream *s, struct kmt_srec *out, struct kmt_diag *d);
/* The file offset of the page the last record came from, and its CPU. */
uint64_t kmt_stream_offset(const struct kmt_stream *s, int idx);
void kmt_stream_close(struct kmt_stream *s);

#endif
