/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libFuzzer target: the trace-file reader and everything downstream.
 *
 * The input is a whole trace.dat, opened in memory. If it opens, every
 * buffer with CPUs is streamed (merge by time, loss markers), decoded with
 * the file's own formats and fed to an allocation model; then the census,
 * the checker (with the model) and the kallsyms/cmdlines parsers run on
 * the same file. Prefetch threads stay off: one thread, deterministic.
 *
 * Seeds: tests/data/traces/ (small real recordings, v6 and v7, none/zstd/
 * zlib, and a trace-cmd extract: the tests' own files).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/tracefile.h>
#include <kmemtrace/analyse.h>
#include <kmemtrace/event.h>
#include "touch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


static void no_finding(void *arg, const struct kmt_finding *f)
{
	(void)arg;
	touch_str(f->what);
}

/* Strings of a decoded event point into the record: read every byte. */
static void touch_event(const struct kmt_event *ev, int long_size)
{
	if (ev->name_len)
		touch(ev->name, ev->name_len);
	if (ev->str2_len)
		touch(ev->str2, ev->str2_len);
	if (ev->nr_stack)
		touch(ev->stack, (size_t)ev->nr_stack * (size_t)long_size);
	touch_str(kmt_kind_name((enum kmt_kind)ev->kind));
}

static void read_model(const struct kmt_model *m, const struct kmt_symbols *syms)
{
	const struct kmt_summary *s = kmt_model_summary(m);
	const struct kmt_site *si;
	const struct kmt_cache *ca;
	const struct kmt_proc *pr;
	const struct kmt_misuse *mu;
	const struct kmt_outstanding *ou;
	const struct kmt_gfp_count *gf;
	char buf[256];
	size_t n, i;

	sink += s->events + s->live_objects + s->uncertain_objects + s->lost_events;
	if (s->nr_cpus > 0) {
		touch(s->lost_by_cpu, (size_t)s->nr_cpus * sizeof(*s->lost_by_cpu));
		touch(s->events_by_cpu, (size_t)s->nr_cpus * sizeof(*s->events_by_cpu));
	}
	si = kmt_model_sites(m, &n);
	for (i = 0; i < n; i++)
		touch_str(kmt_symbols_format(syms, si[i].addr, buf, sizeof(buf)));
	if (n)
		touch(si, n * sizeof(*si));
	si = kmt_model_page_sites(m, &n);
	if (n)
		touch(si, n * sizeof(*si));
	ca = kmt_model_caches(m, &n);
	for (i = 0; i < n; i++)
		touch(ca[i].name, ca[i].name_len);
	pr = kmt_model_procs(m, &n);
	for (i = 0; i < n; i++)
		touch_str(pr[i].comm);
	mu = kmt_model_misuse(m, &n);
	for (i = 0; i < n; i++) {
		touch_str(kmt_misuse_name(mu[i].kind));
		touch_str(kmt_severity_name(kmt_misuse_severity(mu[i].kind)));
		touch_str(mu[i].detail);
	}
	ou = kmt_model_outstanding(m, &n);
	if (n)
		touch(ou, n * sizeof(*ou));
	gf = kmt_model_gfp(m, &n);
	if (n)
		touch(gf, n * sizeof(*gf));
}

static void run_buffer(struct kmt_file *f, int b, const struct kmt_decoder *dec,
		       const struct kmt_symbols *syms, int long_size)
{
	struct kmt_diag d = { 0 };
	struct kmt_stream *s = kmt_stream_open(f, b, &d);
	struct kmt_model *m;
	struct kmt_srec sr;
	struct kmt_event ev;
	uint64_t last = 0;
	int ret;

	if (!s) {
		touch_str(d.msg);
		return;
	}
	m = kmt_model_new(NULL);
	if (!m) {
		kmt_stream_close(s);
		return;
	}
	while ((ret = kmt_stream_next(s, &sr, &d)) > 0) {
		sink += kmt_stream_offset(s, sr.idx);
		if (sr.lost_marker) {
			kmt_model_lost(m, sr.cpu, sr.lost, sr.rec.ts);
			continue;
		}
		touch(sr.rec.data, sr.rec.len);
		last = sr.rec.ts;
		if (kmt_decode(dec, &sr.rec, sr.cpu, &ev) > 0) {
			touch_event(&ev, long_size);
			kmt_model_event(m, &ev);
		}
	}
	if (ret < 0)
		touch_str(d.msg);
	kmt_stream_close(s);
	kmt_model_finish(m, last);
	read_model(m, syms);
	kmt_model_free(m);
}

/* The page-level reader by itself, with its position accessors. */
static void walk_pages(struct kmt_file *f, int b, int idx)
{
	struct kmt_diag d = { 0 };
	struct kmt_cpu_reader *r;
	struct kmt_page pg;
	int ret;

	if (kmt_cpu_reader_open(&r, f, b, idx, &d)) {
		touch_str(d.msg);
		return;
	}
	while ((ret = kmt_cpu_reader_next(r, &pg, &d)) > 0) {
		touch_str(kmt_cpu_reader_where(r));
		sink += kmt_cpu_reader_offset(r) + kmt_cpu_reader_in_chunk(r) +
			(uint64_t)kmt_cpu_reader_cpu(r);
		touch(pg.data, pg.data_len);
	}
	if (ret < 0)
		touch_str(d.msg);
	kmt_cpu_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t probes[] = {
		0, 1, 0xffffffff81000000ULL, 0xffffffff81234567ULL, 0xffffffffc0000000ULL,
		UINT64_MAX,
	};
	const struct kmt_file_info *fi;
	struct kmt_check_opts co = { .model = true, .fn = no_finding };
	struct kmt_check_result cr;
	struct kmt_diag d = { 0 };
	struct kmt_decoder *dec;
	struct kmt_symbols *syms;
	struct kmt_comms *comms;
	struct kmt_file *f;
	const char *text;
	size_t len, i;
	char buf[256];
	int b, nb;

	if (kmt_file_open_mem(&f, data, size, "fuzz.dat", &d)) {
		touch_str(d.msg);
		return 0;
	}
	fi = kmt_file_info(f);
	touch_str(fi->path);
	touch_str(fi->compression);
	touch_str(fi->compression_version);
	touch_str(fi->uname);
	touch_str(fi->clock);
	touch_str(fi->recorder);
	touch_str(kmt_file_trace_clock(f));
	text = kmt_file_header_page(f, &len);
	touch(text, len);
	text = kmt_file_header_event(f, &len);
	touch(text, len);
	text = kmt_file_printk(f, &len);
	touch(text, len);
	sink += kmt_file_page_layout(f)->data_offset;
	sink += (uint64_t)kmt_file_main_buffer(f) + (uint64_t)kmt_file_find_buffer(f, "");

	text = kmt_file_kallsyms(f, &len);
	syms = kmt_symbols_parse(text, len);
	for (i = 0; syms && i < sizeof(probes) / sizeof(probes[0]); i++) {
		uint64_t off = 0;

		touch_str(kmt_symbols_lookup(syms, probes[i], &off));
		touch_str(kmt_symbols_format(syms, probes[i] + off, buf, sizeof(buf)));
	}
	sink += kmt_symbols_count(syms);

	comms = kmt_comms_new();
	if (comms) {
		char *all;

		text = kmt_file_cmdlines(f, &len);
		kmt_comms_parse(comms, text, len);
		touch_str(kmt_comms_get(comms, 0));
		touch_str(kmt_comms_get(comms, 1));
		all = kmt_comms_format(comms, &len);
		if (all)
			touch(all, len);
		free(all);
		sink += kmt_comms_count(comms);
		kmt_comms_free(comms);
	}

	dec = kmt_decoder_new(kmt_file_formats(f), fi->big_endian, fi->kernel_long_size);
	if (dec) {
		int k;

		touch_str(kmt_decoder_skipped(dec));
		for (k = 0; k < KMT_EV_NR; k++)
			sink += kmt_decoder_has(dec, (enum kmt_kind)k);
		nb = kmt_file_nr_buffers(f);
		for (b = 0; b < nb; b++) {
			const struct kmt_buffer *kb = kmt_file_buffer(f, b);
			struct kmt_census c;
			int j;

			if (!kb || kb->nr_cpus <= 0)
				continue;
			touch_str(kb->name);
			touch_str(kb->clock);
			for (j = 0; j < kb->nr_stats; j++)
				touch_str(kb->stats[j].text);
			run_buffer(f, b, dec, syms, fi->kernel_long_size);
			for (j = 0; j < kb->nr_cpus; j++)
				walk_pages(f, b, j);
			if (kmt_census_run(&c, f, b, &d))
				touch_str(d.msg);
			sink += c.events + c.lost_events + c.lost_unknown;
			if (c.cpus && c.nr_cpus > 0)
				touch(c.cpus, (size_t)c.nr_cpus * sizeof(*c.cpus));
			kmt_census_release(&c);
		}
		kmt_decoder_free(dec);
	}

	if (kmt_check_file(f, &co, &cr, &d))
		touch_str(d.msg);
	sink += cr.errors + cr.warnings + cr.events;

	kmt_symbols_free(syms);
	kmt_file_close(f);
	return 0;
}
