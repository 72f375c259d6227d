/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What kmemtrace record prints: the once-a-second status line on a
 * terminal, progress while the file is written, the per-CPU summary at the
 * end, what became of dead recorders' instances, and --list.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kmemtrace/tracefile.h>
#include <kmemtrace/watch.h>
#include "util/term.h"
#include "util/util.h"
#include "record.h"

static void print_count(uint64_t v, char *buf, size_t len)
{
	fmt_count((double)v, false, buf, len);
}

const char *ui_scope(const struct recording_opts *o, char *buf, size_t len)
{
	const char *cmd = o->argv && o->argv[0] ? o->argv[0] : NULL, *slash;
	size_t n;
	int i;

	if (cmd && (slash = strrchr(cmd, '/')) && slash[1])
		cmd = slash + 1;
	if (o->cgroup) {
		snprintf(buf, len, "only cgroup %.200s and below it (--cgroup: those in it at the start, their "
			 "children, those moved in later from within %d ms of the move)", o->cgroup,
			 RECORD_CGROUP_SCAN_MS);
	} else if (o->follow) {
		snprintf(buf, len, "only %.60s and its children (-F)", cmd);
	} else if (o->nr_pids) {
		n = (size_t)snprintf(buf, len, "only pid%s ", o->nr_pids > 1 ? "s" : "");
		for (i = 0; i < o->nr_pids && n < len; i++)
			n += (size_t)snprintf(buf + n, len - n, "%s%d", i ? "," : "", (int)o->pids[i]);
		if (n < len)
			snprintf(buf + n, len - n, " and their children (-p)");
	} else if (cmd) {
		snprintf(buf, len, "system-wide (use -F for only %.60s and its children)", cmd);
	} else {
		snprintf(buf, len, "system-wide");
	}
	return buf;
}

void ui_status(const struct kmt_instance *in, const int *cpus, int nr_cpus,
	       const struct kmt_recorder *r, const struct recording_opts *o, double elapsed)
{
	uint64_t events = 0, lost = 0, bytes = 0;
	char hb[32], ev[32], ls[32], scope[160], line[512], cut[512];
	int i, width = term_width(STDERR_FILENO);

	for (i = 0; i < nr_cpus; i++) {
		struct kmt_cpustat st;

		if (!kmt_instance_stat(in, cpus[i], &st)) {
			events += st.entries + st.read;
			lost += kmt_cpustat_lost(&st, 0);
		}
		bytes += kmt_recorder_bytes(r, i);
	}
	print_count(events + lost, ev, sizeof(ev));
	print_count(lost, ls, sizeof(ls));
	snprintf(line, sizeof(line), "  %6.1fs  %s  %12s events  %10s written  %s lost", elapsed,
		 ui_scope(o, scope, sizeof(scope)), ev, human_bytes((double)bytes, hb), ls);
	/* A line that wrapped could not be redrawn in place: one column short of the edge. */
	fprintf(stderr, "\r\033[K%s", width > 1 ? term_cut(line, width - 1, false, cut, sizeof(cut)) : line);
	fflush(stderr);
}

void ui_hint(const struct recording_opts *o)
{
	char scope[160];

	if (!o->argv && !o->duration)
		fprintf(stderr, "%s: recording %s; Ctrl-C to stop\n", cmd_name, ui_scope(o, scope, sizeof(scope)));
}

void ui_status_clear(void)
{
	fprintf(stderr, "\r\033[K");
	fflush(stderr);
}

void ui_progress(void *arg, uint64_t done, uint64_t total)
{
	static int last = -1;
	int pct = total ? (int)(done * 100 / total) : 100;

	if (!arg || pct == last)
		return;
	last = pct;
	fprintf(stderr, "\r\033[K  writing %s: %d%%", (const char *)arg, pct);
	fflush(stderr);
}

void ui_summary(const struct recording_opts *o, const struct kmt_finalize_result *res,
		const struct kmt_sampler_stats *sampled, double elapsed, const char *output, bool recovered)
{
	char a[32], b[32], c[32], hb[32], scope[160];
	int i;

	print_count(res->events, a, sizeof(a));
	print_count(res->lost, b, sizeof(b));
	/* Recovered, the recording's time is its events' span, not this run's. */
	if (recovered && res->last_ts > res->first_ts)
		elapsed = (double)(res->last_ts - res->first_ts) / 1e9;
	fprintf(stderr, "%s: %s %s in %s on %d %s, %s lost\n", cmd_name, a,
		plural((double)res->events, "event", "events"), human_duration((uint64_t)(elapsed * 1e9), hb, sizeof(hb)),
		res->nr_cpus, plural(res->nr_cpus, "CPU", "CPUs"), b);
	if (!recovered) {
		struct budget bg;

		budget_here(&bg);
		fprintf(stderr, "  tasks: %s\n", ui_scope(o, scope, sizeof(scope)));
		fprintf(stderr, "  memory: ring buffers %d x %u KiB, hold %zu MiB (budget %llu MiB: 1/32 of "
			"RAM, at most 1 GiB)\n", res->nr_cpus, o->buffer_kb, o->hold_mb,
			(unsigned long long)(bg.total >> 20));
	}
	fprintf(stderr, "  %5s %14s %12s %12s %8s\n", "CPU", "events", "data", "lost", "gaps");
	for (i = 0; i < res->nr_cpus; i++) {
		const struct kmt_finalize_cpu *fc = &res->cpus[i];

		print_count(fc->events, a, sizeof(a));
		print_count(kmt_finalize_cpu_lost(fc), b, sizeof(b));
		print_count(fc->lost_pages, c, sizeof(c));
		fprintf(stderr, "  %5d %14s %12s %12s %8s\n", fc->cpu, a, human_bytes((double)fc->bytes, hb), b, c);
	}
	fprintf(stderr, "  wrote %s: %s", output, human_bytes((double)res->file_bytes, hb));
	if (res->events)
		fprintf(stderr, " (%s, %.1f bytes/event)", o->compress ? "zstd" : "uncompressed",
			(double)res->file_bytes / (double)res->events);
	fputc('\n', stderr);
	if (sampled && sampled->slices) {
		/* What the file holds, not what the sampler aimed at. */
		uint64_t ev = res->events - MIN(res->events, res->stacks);

		print_count(sampled->slices, a, sizeof(a));
		print_count(res->stacks, c, sizeof(c));
		fprintf(stderr, "  stacks: %s, on in %s slices of time (%.1f%% of it): 1 event in %.1f has one "
			"(asked: 1 in %u)\n", c, a,
			sampled->total_ns ? 100.0 * (double)sampled->on_ns / (double)sampled->total_ns : 0.0,
			res->stacks ? (double)ev / (double)res->stacks : 0.0, o->stack_sample);
	}
	if (res->truncated)
		fprintf(stderr, "%s: the recording is truncated: %s\n", cmd_name, res->truncated_why);
	/* Recovered, the losses are the dead recorder's, said when taken: no advice. */
	if (res->lost && !recovered) {
		print_count(res->lost, a, sizeof(a));
		fprintf(stderr, "%s: %s %s LOST: the ring buffer filled faster than it was read.\n"
			"  Record with a larger buffer (-b %u, now %u KiB per CPU), fewer events (-e)\n"
			"  or a filter (--filter) to avoid it.\n",
			cmd_name, a, plural((double)res->lost, "event was", "events were"), o->buffer_kb * 4,
			o->buffer_kb);
	}
}

void ui_stale(const struct kmt_stale *st, bool quiet)
{
	char n[32], lost[32];

	print_count(st->unread, n, sizeof(n));
	print_count(st->took.lost, lost, sizeof(lost));
	switch (st->fate) {
	case KMT_STALE_MOVED:
		if (!quiet || st->took.lost || !st->removed)
			fprintf(stderr, "%s: instance %s of a dead recorder held %s unread events: moved into "
				"its spool, where 'kmemtrace record --recover %s' takes them%s\n", cmd_name,
				st->name, n, st->spool, st->removed ? "; instance removed" : "");
		if (st->took.lost)
			fprintf(stderr, "%s:   %s events the recorder had read died with it: marked lost there\n",
				cmd_name, lost);
		break;
	case KMT_STALE_NO_SPOOL:
	case KMT_STALE_SPOOL_GONE:
		if (!st->unread) {
			if (!quiet)
				fprintf(stderr, "%s: instance %s of a dead recorder held no unread events: "
					"instance removed\n", cmd_name, st->name);
		} else if (st->fate == KMT_STALE_NO_SPOOL) {
			fprintf(stderr, "%s: instance %s of a dead recorder held %s unread events, and no "
				"spool is known for them: instance removed, the events with it\n", cmd_name,
				st->name, n);
		} else {
			fprintf(stderr, "%s: instance %s of a dead recorder held %s unread events, but its "
				"spool '%s' is gone: instance removed, the events with it\n", cmd_name,
				st->name, n, st->spool);
		}
		break;
	case KMT_STALE_BUSY:
		fprintf(stderr, "%s: instance %s of a dead recorder holds %s unread events; its spool '%s' "
			"is in use (being recovered?): left to it, tracing stopped\n", cmd_name, st->name, n,
			st->spool);
		break;
	case KMT_STALE_FAILED:
		fprintf(stderr, "%s: instance %s of a dead recorder holds %s unread events; moving them into "
			"its spool failed: %s\n%s:   the instance is left, tracing stopped: 'kmemtrace record "
			"--recover %s' takes them\n", cmd_name, st->name, n, st->why, cmd_name, st->spool);
		return;
	}
	if (st->err)
		fprintf(stderr, "%s:   %s\n", cmd_name, st->why);
}

void ui_took(const struct kmt_recover_result *rr, bool quiet)
{
	char a[32];

	if (rr->other)
		fprintf(stderr, "%s: note: instance %s exists, but nothing says it is this recording's (no "
			"note in %s): left alone\n", cmd_name, rr->instance, KMT_INSTANCE_NOTES);
	if (!rr->found)
		return;
	print_count(rr->taken, a, sizeof(a));
	if (!quiet)
		fprintf(stderr, "%s: took %s unread events from instance %s, left by the dead recorder; "
			"instance removed\n", cmd_name, a, rr->instance);
	if (rr->died_ns) {
		time_t t = (time_t)(rr->died_ns / 1000000000ULL);
		struct tm tm;
		char when[64];

		if (localtime_r(&t, &tm) && strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", &tm))
			fprintf(stderr, "%s: the recorder died at %s; its watchdog stopped the instance's "
				"tracing then\n", cmd_name, when);
	}
	if (rr->dropped_after) {
		print_count(rr->dropped_after, a, sizeof(a));
		fprintf(stderr, "%s: %s events were dropped by the instance after the recorder died (nobody "
			"read its full buffer): marked lost where they were, not the recording's losses\n",
			cmd_name, a);
	}
	if (rr->lost) {
		print_count(rr->lost, a, sizeof(a));
		fprintf(stderr, "%s: %s events the recorder had read were not in its spool (in its memory "
			"when it died): marked lost where they were\n", cmd_name, a);
	}
}

static void list_event(const char *root, const char *sys, const char *name, bool verbose,
		       int width)
{
	struct kmt_format fmt;
	char ev[600];
	int j;

	snprintf(ev, sizeof(ev), "%s:%s", sys, name);
	if (kmt_tracefs_format(root, ev, &fmt, NULL))
		return;
	printf("%c %-*s id %-5u", strstr(kmt_events_default, ev) ? '*' : ' ', width, ev, fmt.id);
	for (j = 0; j < fmt.nr_fields; j++)
		if (strncmp(fmt.fields[j].name, "common_", 7))
			printf(" %s", fmt.fields[j].name);
	putchar('\n');
	if (verbose)
		printf("%s\n", fmt.text);
	kmt_format_release(&fmt);
}

/* Lists @sys's events with names @width wide; or with @width 0, returns the widest. */
static int list_system(const char *root, const char *sys, bool verbose, int width)
{
	struct dirent **ents;
	char path[1024];
	int n, i, widest = 0;

	snprintf(path, sizeof(path), "%s/events/%s", root, sys);
	n = scandir(path, &ents, NULL, alphasort);
	for (i = 0; i < n; i++) {
		int w = (int)(strlen(sys) + 1 + strlen(ents[i]->d_name));

		if (ents[i]->d_name[0] != '.' && strcmp(ents[i]->d_name, "enable") &&
		    strcmp(ents[i]->d_name, "filter")) {
			if (width)
				list_event(root, sys, ents[i]->d_name, verbose, width);
			widest = w > widest ? w : widest;
		}
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	return widest;
}

/* Whether kmemtrace watch can work here. */
static void list_watchpoints(void)
{
	struct kmt_hwbp_probe res;
	struct kmt_diag d = { 0 };

	if (!hwbp_check(&res, &d))
		printf("\nkmemtrace watch can work here: hardware watchpoints fire (%d CPU%s tested).\n",
		       res.cpus, res.cpus == 1 ? "" : "s");
	else
		printf("\nkmemtrace watch cannot work here: %s.\n", d.msg);
}

int ui_list(const char *root, bool verbose)
{
	static const char *const systems[] = { "kmem", "percpu", "vmalloc", "cma", "compaction",
					       "huge_memory", "migrate", "oom", "vmscan" };
	int width = 0, w;
	size_t i;

	printf("Memory events of this kernel (* = recorded by default), with their fields:\n\n");
	/* One column width for every name, however long. */
	for (i = 0; i < sizeof(systems) / sizeof(systems[0]); i++)
		if ((w = list_system(root, systems[i], false, 0)) > width)
			width = w;
	for (i = 0; i < sizeof(systems) / sizeof(systems[0]); i++)
		list_system(root, systems[i], verbose, width);
	printf("\nAlways added, to name processes: %s\n", kmt_events_naming);
	printf("Any other event can be recorded with -e SYSTEM:EVENT; -v shows full formats.\n");
	list_watchpoints();
	return EXIT_OK;
}

int hwbp_check(struct kmt_hwbp_probe *res, struct kmt_diag *d)
{
	const char *test = getenv("KMT_TEST_HWBP");
	int cpus[256], n = kmt_tracefs_cpus(cpus, 256);

	return kmt_hwbp_probe(cpus, n, test && !strcmp(test, "decoy") ? KMT_HWBP_PROBE_DECOY : 0,
			      res, d);
}
