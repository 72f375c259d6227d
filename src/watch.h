/*
 * kmemtrace watch, shared between its files: what to watch (cmd-watch.c
 * resolves it), and the watcher that runs inside a recording (watch.c):
 * a control instance that reports the target's allocations and the frees
 * of watched objects at once, the hardware watchpoints, and the samples
 * written into the spool as kmemtrace:access events.
 */
#ifndef KMT_WATCH_H
#define KMT_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kmemtrace/btf.h>
#include <kmemtrace/event.h>
#include <kmemtrace/hwbp.h>
#include <kmemtrace/pagew.h>
#include "record.h"

#define WATCH_CANDS 64			/* recent allocations to pick from */
#define WATCH_LOG 128			/* assignments remembered per slot */
#define WATCH_MAX_WORDS 8192		/* offsets tracked for coverage (64 KiB objects) */

enum wtarget_kind { T_CALLSITE, T_CACHE, T_KMALLOC };

struct wtarget {
	enum wtarget_kind kind;
	char name[128];			/* function, cache, or "kmalloc-N" */
	uint64_t lo, hi;		/* T_CALLSITE: the function's addresses */
	uint64_t size;			/* T_KMALLOC: the size class */
};

struct woffset {
	uint32_t off, len;
	char field[64];
};

struct wopts {
	struct wtarget t;
	struct woffset offs[KMT_HWBP_MAX_SLOTS];
	int nr_offs;
	bool scan;
	char type[64];			/* struct naming the offsets, "" if none */
	uint64_t max_objects;		/* -n, 0: no limit */
	/* -F, -p: candidates only (the recording itself keeps every free). */
	bool follow;
	pid_t pids[64];
	int nr_pids;
	double dwell;			/* seconds on one object/offset */
	unsigned int ring_pages;
};

struct wcand {
	uint64_t ptr, ts;
	uint32_t size;
	bool freed, watched;
};

struct wassign {
	uint64_t obj, addr, t_on, t_off;
	uint32_t off, len;
	char field[48];
};

struct wslot {
	bool armed;
	struct wcand c;			/* the object */
	uint32_t off, len;
	uint64_t t_on;
	struct wassign log[WATCH_LOG];	/* most recent last */
	int log_n;
};

struct watch {
	struct wopts o;
	struct rec *rc;
	/* the control instance */
	struct kmt_instance ctl;
	int ctl_fd[256];
	struct kmt_formats fs;
	struct kmt_decoder *dec;
	struct kmt_page_layout pl;
	uint8_t *page;
	uint32_t page_size;
	char free_filter[256];
	/* the watchpoints */
	struct kmt_hwbp *hw;
	struct wslot slot[KMT_HWBP_MAX_SLOTS];
	int nr_slots;
	struct wcand cand[WATCH_CANDS];
	int ncand, cand_next;
	uint32_t scan_next;
	struct kmt_btf *btf;		/* for --type */
	/* the samples, per CPU index */
	int acc_fd[256];
	struct kmt_pagew acc[256];
	uint64_t acc_n[256], acc_lost[256];
	int acc_err;
	/* coverage */
	uint64_t allocs_seen, objects, hits, unmapped, rearms;
	uint8_t words[WATCH_MAX_WORDS / 8];	/* offsets watched, a bit per word */
	uint64_t max_off;
	bool done;				/* -n reached */
	uint32_t rng;
};

/* watch.c */
extern const struct rec_hooks watch_hooks;	/* .arg = struct watch * */
/* The tracefs filter that selects @t's allocations on @ev, or NULL if @ev has none. */
const char *watch_alloc_filter(const struct wtarget *t, const char *ev, char *buf, size_t len);

#endif
