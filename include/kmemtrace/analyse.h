/*
 * The report pipeline in one call: a buffer's per-CPU streams, merged by
 * time, decoded with the file's formats, cut to a time window and fed to
 * an allocation model (loss markers included). kmemtrace report and
 * kmemtrace kmap are thin layers over this.
 */
#ifndef KMEMTRACE_ANALYSE_H
#define KMEMTRACE_ANALYSE_H

#include <stdint.h>
#include "event.h"
#include "model.h"
#include "tracefile.h"

struct kmt_analyse_opts {
	double t_start, t_end;		/* seconds from the first event; < 0: open */
	/* Called for every decoded event in the window, after the model. */
	void (*each)(void *arg, const struct kmt_event *ev);
	void *arg;
	/* If set, receives the first record's time as soon as it is read. */
	uint64_t *t0;
};

struct kmt_analyse_result {
	uint64_t t0;			/* time of the first record in the file */
	uint64_t t_end;			/* where the model was finished */
	uint64_t records;		/* records read, in or out of the window */
	/*
	 * What could not be read in a damaged file and was passed over, in
	 * the order met; the model took each as a gap of unknown size. Owned
	 * by the result: kmt_analyse_result_release().
	 */
	struct kmt_skip *skipped;
	size_t nr_skipped;
};

/*
 * What the file says about its own completeness (a recorder that filtered
 * allocations or frees, or sampled stacks, writes it into its VERSION
 * option): sets @mo->partial_allocs, @mo->partial_frees and
 * @mo->stack_sample.
 */
void kmt_model_opts_from_file(struct kmt_model_opts *mo, const struct kmt_file *f);

/*
 * Run @buffer of @f through @dec into @m and finish @m. Returns 0 (what a
 * damaged file lost is in @res->skipped: release @res), or a negative
 * error with file, CPU and offset in @d (nothing to release).
 */
int kmt_analyse(struct kmt_file *f, int buffer, const struct kmt_decoder *dec,
		struct kmt_model *m, const struct kmt_analyse_opts *o,
		struct kmt_analyse_result *res, struct kmt_diag *d);
/* Free what @res holds; it may be released again. */
void kmt_analyse_result_release(struct kmt_analyse_result *res);

#endif
