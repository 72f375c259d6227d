/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What record, top and watch take of the machine's memory by default: the
 * one owner of the rule (record.h says it in words, for the help). The
 * memory is sized by the machine's RAM, never multiplied by its CPUs:
 *
 *	budget   = RAM / 32, at most 1 GiB
 *	ring     = budget / 2 over the online CPUs, a multiple of 4 KiB,
 *	           at least 64 KiB and at most 16 MiB per CPU (-b)
 *	rest     = budget - ring buffers as the kernel takes them (a buffer
 *	           of K KiB is ceil(K KiB / (4096 - 16)) + 1 pages of 4 KiB:
 *	           each page has a 16-byte header, and the reader has one
 *	           page more): record and watch hold that much
 *	           (-m); top queues that much for its analysis, and faults
 *	           half of it in before tracing (--prefault, over the CPUs)
 *
 * What the readers need to stay lossless is ring buffer: hackbench -g 4
 * -l 1000 on this project's 2-CPU VM, shared with other users, lost
 * events in some rounds at 8 MiB per CPU and below and in none from 16
 * MiB up (bench/bufsize.sh, bench/results/bufsize.md), so the ring buffers take
 * half the budget and at most 16 MiB per CPU, where more stopped helping.
 * The rest keeps the spool's writes (or top's analysis) off the
 * workload's way; it takes memory only as pages come.
 *
 * watch takes more per CPU: its control instance's ring buffer (1/16 of
 * the ring, 64 KiB to 1 MiB) and a perf sample ring (REC_WATCH_RING_PAGES
 * and its header page); they come out of its hold.
 */
#include <stdio.h>
#include <unistd.h>

#include "util/util.h"
#include "record.h"

#define BUDGET_MAX (1ull << 30)
#define RING_MIN_KB 64u
#define RING_MAX_KB 16384u
#define SUBBUF 4096u			/* a ring-buffer page (the instance's default) */
#define SUBBUF_DATA (SUBBUF - 16)	/* less its header: time stamp, commit */

/* The kernel's pages for a ring buffer of @kb KiB: data pages, and the reader's. */
static uint64_t ring_bytes(unsigned int kb)
{
	return ((uint64_t)kb * 1024 + SUBBUF_DATA - 1) / SUBBUF_DATA * SUBBUF + SUBBUF;
}

void budget_for(struct budget *b, uint64_t ram, int nr_cpus)
{
	uint64_t ring_kb, watch;

	b->ram = ram;
	b->nr_cpus = nr_cpus < 1 ? 1 : nr_cpus;
	b->total = MIN(ram / 32, BUDGET_MAX);
	ring_kb = b->total / 2 / (uint64_t)b->nr_cpus >> 10;
	ring_kb = ring_kb / 4 * 4;
	b->buffer_kb = (unsigned int)MIN(MAX(ring_kb, (uint64_t)RING_MIN_KB), (uint64_t)RING_MAX_KB);
	b->rings = ring_bytes(b->buffer_kb) * (uint64_t)b->nr_cpus;
	b->hold = b->total > b->rings ? b->total - b->rings : 0;
	b->prefault = b->hold / 2 / (uint64_t)b->nr_cpus;
	b->watch_ctl_kb = MIN(MAX(b->buffer_kb / 16 / 4 * 4, 64u), 1024u);
	watch = (ring_bytes(b->watch_ctl_kb) + (REC_WATCH_RING_PAGES + 1) * (uint64_t)SUBBUF) *
		(uint64_t)b->nr_cpus;
	b->watch_hold = b->hold > watch ? b->hold - watch : 0;
}

void budget_here(struct budget *b)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	budget_for(b, pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 1ull << 30,
		   cpus > 0 ? (int)cpus : 1);
}

void budget_help(FILE *out)
{
	struct budget b;

	budget_here(&b);
	fprintf(out, "\nMemory: by default " REC_BUDGET_RULE ".\n"
		"Here: %llu MiB of %llu MiB of RAM: ring buffers %d x %u KiB, the rest %llu MiB.\n",
		(unsigned long long)(b.total >> 20), (unsigned long long)(b.ram >> 20), b.nr_cpus,
		b.buffer_kb, (unsigned long long)(b.hold >> 20));
}
