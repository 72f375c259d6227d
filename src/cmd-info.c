/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace info: what a trace file holds — its metadata, and per CPU the
 * events, pages and losses, and per event type the record counts. Works
 * on any trace.dat v6/v7, ours or trace-cmd's.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kmemtrace/tracefile.h>
#include <kmemtrace/event.h>
#include "report/input.h"
#include "cmd.h"
#include "util/util.h"
#include "util/opt.h"

static const struct opt info_opts[] = {
	{ 'h', 'h', "help", NULL, "this text" },
	{ 0 },
};

const struct cmd_help info_help = {
	.name = "info",
	.summary = "show what a trace file holds: metadata, events per CPU, losses",
	.usage = "[FILE]",
	.about =
	"Show what a trace file holds: format, kernel, clock, buffers; per CPU the\n"
	"events, pages and events lost (from page headers and the stored ring-buffer\n"
	"stats); per event type the number of records; kmemtrace watch's samples.\n"
	"FILE defaults to kmemtrace.dat.\n",
	.opts = info_opts,
};

/* One row of the CPU table. */
static void census_row(const char *cpu, uint64_t events, uint64_t pages, uint64_t bytes, uint64_t lost,
		       uint64_t gaps)
{
	printf("%-5s %12s %9s %10.1f %10s %8s\n", cpu, fmt_num(events), fmt_num(pages),
	       (double)bytes / 1048576, fmt_num(lost), fmt_num(gaps));
}

static void print_census(const struct kmt_file *f, const struct kmt_buffer *b,
			 const struct kmt_census *c)
{
	const struct kmt_formats *fs = kmt_file_formats(f);
	uint64_t pages = 0, bytes = 0;
	char cpu[16];
	int i;
	uint32_t id;

	printf("\n%-5s %12s %9s %10s %10s %8s\n", "CPU", "events", "pages", "data-MiB", "lost", "gaps");
	for (i = 0; i < c->nr_cpus; i++) {
		const struct kmt_census_cpu *cc = &c->cpus[i];

		if (cc->cpu < 0)
			continue;	/* a damaged file's missing CPUs: no data */
		snprintf(cpu, sizeof(cpu), "%d", cc->cpu);
		census_row(cpu, cc->events, cc->pages, cc->bytes, cc->lost, cc->lost_pages);
		pages += cc->pages;
		bytes += cc->bytes;
	}
	census_row("all", c->events, pages, bytes, c->lost, c->lost_pages);
	if (c->lost && !b->nr_stats && c->lost_unknown)
		printf("(the file has no ring-buffer stats: %s of the gaps %s no count, so more were lost)\n",
		       fmt_num(c->lost_unknown), plural((double)c->lost_unknown, "has", "have"));
	printf("\n%-40s %12s\n", "event", "records");
	for (id = 0; id < c->nr_ids; id++) {
		const struct kmt_format *fmt;
		char name[128];

		if (!c->per_id[id])
			continue;
		fmt = kmt_formats_by_id(fs, id);
		if (fmt)
			snprintf(name, sizeof(name), "%s:%s", fmt->system, fmt->name);
		else
			snprintf(name, sizeof(name), "unknown id %u", id);
		printf("%-40s %12s\n", name, fmt_num(c->per_id[id]));
	}
}

/* Only --help, which the parser handles. */
static int no_opt(void *arg, int id, const char *value)
{
	return -1;
}

/* What the file keeps of the tasks' cgroups: where each was at the start, and whether moves were traced. */
static void print_cgroups(struct kmt_file *f, const struct kmt_file_info *fi)
{
	struct kmt_cgroups *c = fi->cgroups ? kmt_cgroups_new() : NULL;
	bool moves = kmt_formats_find(kmt_file_formats(f), "cgroup", "cgroup_attach_task") != NULL;
	size_t n;

	if (!fi->cgroups) {
		printf("cgroups:    not recorded\n");
	} else if (!c || kmt_cgroups_parse(c, fi->cgroups, strlen(fi->cgroups))) {
		printf("cgroups:    recorded, but the list cannot be read (damaged)\n");
	} else {
		n = kmt_cgroups_count(c);
		printf("cgroups:    %zu %s at the start (%s%s%s), %s\n", n, plural((double)n, "task", "tasks"),
		       kmt_cgroups_has_v2(c) ? "cgroup v2" : "",
		       kmt_cgroups_has_v2(c) && kmt_cgroups_memory_id(c) >= 0 ? " and " : "",
		       kmt_cgroups_memory_id(c) >= 0 ? "v1 memory" : "",
		       moves ? "moves traced (cgroup_attach_task)" : "moves not traced");
	}
	kmt_cgroups_free(c);
}

/* The header: the file, its format, how and where it was recorded. */
static void print_header(struct kmt_file *f, const char *path)
{
	const struct kmt_file_info *fi = kmt_file_info(f);
	char hb[32];

	printf("file:       %s (%s)\n", path, human_bytes((double)fi->file_size, hb));
	printf("format:     trace.dat v%d, %s endian, %d-bit kernel, page %u, compression %s%s%s\n",
	       fi->version, fi->big_endian ? "big" : "little", fi->kernel_long_size * 8,
	       fi->page_size, fi->compression,
	       *fi->compression_version ? " " : "", fi->compression_version);
	if (fi->recorder) {
		const struct kmt_recinfo *ri = &fi->recinfo;

		printf("recorder:   %s%s%s%s\n", ri->recorder, ri->partial ? " (partial: " : "",
		       kmt_partial_words(ri->partial), ri->partial ? ")" : "");
		if (*ri->command)
			printf("command:    %s\n", ri->command);
		if (*ri->settings)
			printf("settings:   %s\n", ri->settings);
		if (ri->created) {
			time_t t = (time_t)ri->created;
			struct tm tm;
			char when[64];

			if (localtime_r(&t, &tm) && strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", &tm))
				printf("recorded:   %s\n", when);
		}
	}
	if (fi->uname)
		printf("kernel:     %s\n", fi->uname);
	{
		const char *why[4];
		size_t k, n = kmt_decode_file_lacks(f, why, 4);

		for (k = 0; k < n; k++)
			printf("%s %s\n", k ? "           " : "lacks:     ", why[k]);
	}
	printf("clock:      %s\n", fi->clock ? fi->clock : "(unknown)");
	printf("CPUs:       %d\n", fi->cpu_count);
	printf("formats:    %d %s\n", kmt_file_formats(f)->nr, plural(kmt_file_formats(f)->nr, "event", "events"));
	print_cgroups(f, fi);
}

/* Each buffer: its CPUs' data, and what its stats say was lost with the recorder. */
static void print_buffers(struct kmt_file *f)
{
	int i, j;

	for (i = 0; i < kmt_file_nr_buffers(f); i++) {
		const struct kmt_buffer *b = kmt_file_buffer(f, i);

		printf("buffer:     \"%s\"%s: %d %s, sub-buffer %u%s\n", b->name,
		       i == kmt_file_main_buffer(f) ? " (main)" : "", b->nr_cpus, plural(b->nr_cpus, "CPU", "CPUs"),
		       b->page_size,
		       b->compressed ? ", compressed" : "");
		for (j = 0; j < b->nr_cpus; j++) {
			const struct kmt_cpu_data *cd = &b->cpus[j];

			if (cd->cpu < 0)
				printf("            the data of any other CPU: missing (the file ends before it)\n");
			else if (cd->cut)
				printf("            CPU %d data: offset 0x%" PRIx64 ", %s bytes of %s"
				       " (the file ends inside)\n", cd->cpu, cd->offset,
				       fmt_num(cd->size), fmt_num(cd->want));
			else
				printf("            CPU %d data: offset 0x%" PRIx64 ", %s %s\n",
				       cd->cpu, cd->offset, fmt_num(cd->size),
				       plural((double)cd->size, "byte", "bytes"));
		}
		for (j = 0; j < b->nr_stats; j++) {
			if (b->stats[j].died)
				printf("            CPU %d: %s %s lost when the recorder died "
				       "(recovered)\n", b->stats[j].cpu, fmt_num(b->stats[j].died),
				       plural((double)b->stats[j].died, "event", "events"));
			if (b->stats[j].after_death)
				printf("            CPU %d: %s %s dropped by the instance after the recorder "
				       "died (nobody read it)\n", b->stats[j].cpu,
				       fmt_num(b->stats[j].after_death),
				       plural((double)b->stats[j].after_death, "event", "events"));
			if (b->stats[j].truncated)
				printf("            CPU %d: recording truncated: %s\n",
				       b->stats[j].cpu, b->stats[j].note);
		}
	}
}

/* What could not be read, for file_damage() at the end: @c's appended to @lost. */
static int keep_skipped(struct kmt_census *c, struct kmt_skip **lost, size_t *nr_lost)
{
	struct kmt_skip *v;

	if (!c->nr_skipped)
		return EXIT_OK;
	v = realloc(*lost, sizeof(*v) * (*nr_lost + c->nr_skipped));
	if (!v)
		return error("out of memory");
	memcpy(v + *nr_lost, c->skipped, sizeof(*v) * c->nr_skipped);
	*lost = v;
	*nr_lost += c->nr_skipped;
	return EXIT_OK;
}

/* The main buffer's census. */
static int print_events(struct kmt_file *f, struct kmt_skip **lost, size_t *nr_lost)
{
	int mb = kmt_file_main_buffer(f), ret = EXIT_OK;
	struct kmt_diag d = { 0 };
	struct kmt_census c;

	if (mb < 0) {
		printf("\nno event data\n");
		return EXIT_OK;
	}
	if (kmt_census_run(&c, f, mb, &d))
		ret = error("%s", d.msg);
	else
		print_census(f, kmt_file_buffer(f, mb), &c);
	/* What a damaged file lost comes after the rest. */
	if (keep_skipped(&c, lost, nr_lost))
		ret = EXIT_FAIL;
	kmt_census_release(&c);
	return ret;
}

/* kmemtrace watch's samples, per CPU. */
static int print_samples(struct kmt_file *f, struct kmt_skip **lost, size_t *nr_lost)
{
	int ab = kmt_file_access_buffer(f), ret = EXIT_OK, j;
	struct kmt_diag d = { 0 };
	struct kmt_census c;

	if (ab < 0)
		return EXIT_OK;
	if (kmt_census_run(&c, f, ab, &d)) {
		ret = error("%s", d.msg);
	} else {
		printf("\nwatchpoint samples: %s, lost %s%s (", fmt_num(c.events),
		       fmt_num(c.lost),
		       c.lost_unknown && !kmt_file_buffer(f, ab)->nr_stats ? "+" : "");
		for (j = 0; j < c.nr_cpus; j++)
			printf("%sCPU %d: %s", j ? ", " : "", c.cpus[j].cpu,
			       fmt_num(c.cpus[j].events));
		printf(")\n");
	}
	if (keep_skipped(&c, lost, nr_lost))
		ret = EXIT_FAIL;
	kmt_census_release(&c);
	return ret;
}

int cmd_info(int argc, char **argv)
{
	const char *path = "kmemtrace.dat";
	struct kmt_diag d = { 0 };
	struct kmt_file *f;
	struct kmt_skip *lost = NULL;
	size_t nr_lost = 0;
	int i, ret, code;

	code = opt_parse(&info_help, argc, argv, no_opt, NULL, &i);
	code = code >= 0 ? code : opt_file(&info_help, argc, argv, i, &path);
	if (code >= 0)
		return code;
	if (kmt_file_open(&f, path, &d))
		return error("%s", d.msg);
	print_header(f, path);
	print_buffers(f);
	ret = print_events(f, &lost, &nr_lost);
	if (print_samples(f, &lost, &nr_lost))
		ret = EXIT_FAIL;
	if (!ret) {
		size_t len;
		const char *text = kmt_file_kallsyms(f, &len);
		struct kmt_symbols *syms = kmt_symbols_parse(text, len);

		if (file_damage(f, syms, lost, nr_lost))
			ret = EXIT_FAIL;
		kmt_symbols_free(syms);
	}
	free(lost);
	kmt_file_close(f);
	return ret;
}
