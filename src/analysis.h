/*
 * Opening a trace for analysis, shared by report and kmap: the file, its
 * symbols and task names, a decoder for its formats, and one run of a
 * buffer (merged with kmemtrace watch's samples) through a model.
 */
#ifndef KMT_ANALYSIS_H
#define KMT_ANALYSIS_H

#include <kmemtrace/analyse.h>
#include <kmemtrace/comm.h>
#include <kmemtrace/event.h>
#include <kmemtrace/model.h>
#include <kmemtrace/slabnames.h>
#include <kmemtrace/symbols.h>
#include <kmemtrace/tracefile.h>

struct analysis {
	const char *path;
	struct kmt_file *f;
	struct kmt_symbols *syms;
	struct kmt_comms *comms;
	struct kmt_decoder *dec;
	struct kmt_model *m;
	struct kmt_slab_aliases *aliases;	/* merged slab caches, if the file says */
	uint64_t t0;			/* time of the first record, set once it is read */
	const char *skipped;		/* events the decoder could not map */
	struct kmt_analyse_result res;	/* what was read, and what was passed over */
};

/* Open @path; EXIT_OK, or EXIT_FAIL with the message printed. */
int analysis_open(struct analysis *a, const char *path);
/*
 * Build the model from @mo (and @hooks, may be NULL) and run @buffer (NULL:
 * the main one) through it within [t_start, t_end] seconds (< 0: open).
 * EXIT_OK, or EXIT_FAIL with the message printed.
 */
int analysis_run(struct analysis *a, const char *buffer, struct kmt_model_opts *mo,
		 const struct kmt_model_hooks *hooks, double t_start, double t_end);
/*
 * After the output: what a damaged file lost, one warning each (the damage
 * found at open, lines of kallsyms that are not symbols, the parts of the
 * data passed over), then one line saying the output leaves it out.
 * EXIT_FAIL if there was any, else EXIT_OK.
 */
int analysis_damage(const struct analysis *a);
/* The same for @f and the @n parts of its data a reading passed over. */
int file_damage(struct kmt_file *f, const struct kmt_symbols *syms,
		const struct kmt_skip *skipped, size_t n);
void analysis_close(struct analysis *a);

/* "START,END" in seconds (either may be empty) into @start/@end (< 0: open). */
int parse_window(const char *arg, double *start, double *end);

#endif
