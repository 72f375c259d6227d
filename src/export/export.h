/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace export: the analysis of report (the same model, filters and
 * column tables) handed to other tools' formats. A format sets hooks
 * before the analysis (to stream objects or events) and writes the rest
 * after it; the output goes through a temporary file renamed into place
 * at the end, so an interrupted export leaves nothing that looks complete.
 *
 *   export-pprof.c     gzipped profile.proto (go tool pprof, Pyroscope, Parca)
 *   export-perfetto.c  a Perfetto trace (ui.perfetto.dev, trace_processor), and
 *   export-perfetto-names.c  its events again as track events, named by function and cache
 *   intern.c           strings and addresses numbered, for pprof and Perfetto
 *   export-folded.c    folded stacks (flamegraph.pl, speedscope, inferno)
 *   export-sqlite.c    an SQLite database
 *   objcols.c          the per-object record's columns: object_rows, kmap's line and --json
 */
#ifndef KMT_EXPORT_H
#define KMT_EXPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <kmemtrace/base.h>

#include "report/input.h"
#include "report/report.h"

struct export {
	struct report r;		/* the model and the names, as report has them */
	struct input a;
	struct kmt_model_opts mo;
	struct kmt_model_hooks hooks;	/* set by the format's begin() */
	const char *path;		/* the output's final name; "-": standard output */
	const char *tmp;		/* where it is written meanwhile (not for "-") */
	FILE *out;			/* the output stream (formats that write one) */
	int value;			/* folded: an FV_* (flame.h) */
	bool failed;			/* a hook could not write: end() says so */
	void *priv;			/* the format's own state (export_format.priv_size) */
};

struct export_format {
	const char *name;		/* --format NAME */
	const char *ext;		/* default output: INPUT's base name + ext */
	const char *about;		/* for --help: what it is, who reads it (lines of 66) */
	bool binary;			/* never to a terminal */
	bool stream;			/* writes to x->out; else to the file x->tmp itself */
	bool detail;			/* needs the model's detail (groups, time series) */
	/*
	 * The format's own state, x->priv: the driver (cmd-export.c) allocates
	 * it zeroed before begin() and frees it after release(); 0: none.
	 */
	size_t priv_size;
	/* Before the analysis: hooks and model options. EXIT_OK or an error said. */
	int (*begin)(struct export *x);
	/*
	 * After it: the rest of the output. EXIT_OK or an error said; an
	 * error writing x->out the driver finds and says.
	 */
	int (*end)(struct export *x);
	/* What x->priv holds, once begin() was called (whether it ran to the end or not); NULL: none. */
	void (*release)(struct export *x);
};

/*
 * A kernel address as the output holds it: itself, or with --hash-pointers
 * the number report's "h:..." shows for it (the same key, the same value).
 */
static inline uint64_t export_addr(const struct export *x, uint64_t addr)
{
	return x->r.addr.hash.on ? kmt_hashptr_value(&x->r.addr.hash, addr) : addr;
}

extern const struct export_format export_pprof, export_perfetto, export_folded, export_sqlite;

#endif
