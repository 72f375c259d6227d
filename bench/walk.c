/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt-walk: how fast each stage of the report pipeline runs on a file.
 *   kmt-walk FILE [pages|stream|decode|model] [threads]
 * Prints events and events/s for: reading every page (per CPU, no merge),
 * the time-ordered stream, decoding, and the full allocation model.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kmemtrace/tracefile.h>
#include <kmemtrace/event.h>
#include <kmemtrace/model.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *stage = argc > 2 ? argv[2] : "model";
	struct kmt_diag d = { 0 };
	struct kmt_decoder *dec;
	struct kmt_model *m = NULL;
	struct kmt_stream *s;
	struct kmt_file *f;
	struct kmt_srec sr;
	struct kmt_event ev;
	uint64_t n = 0, last = 0;
	double t0, t1;

	if (argc < 2 || kmt_file_open(&f, argv[1], &d)) {
		fprintf(stderr, "usage: kmt-walk FILE [pages|stream|decode|model] [threads]: %s\n", d.msg);
		return 2;
	}
	kmt_file_set_threads(f, argc > 3 && !strcmp(argv[3], "threads") ? 2 : 1);
	t0 = now();
	if (!strcmp(stage, "pages")) {
		struct kmt_census c;

		if (kmt_census_run(&c, f, kmt_file_main_buffer(f), &d))
			fprintf(stderr, "%s\n", d.msg);
		n = c.events;
		kmt_census_release(&c);
	} else {
		dec = kmt_decoder_new(kmt_file_formats(f), kmt_file_info(f)->big_endian,
				      kmt_file_info(f)->kernel_long_size);
		bool stream_only = !strcmp(stage, "stream");

		if (!strcmp(stage, "model"))
			m = kmt_model_new(NULL);
		s = kmt_stream_open(f, kmt_file_main_buffer(f), &d);
		while (s && kmt_stream_next(s, &sr, &d) > 0) {
			if (sr.lost_marker)
				continue;
			n++;
			last = sr.rec.ts;
			if (stream_only)
				continue;
			if (kmt_decode(dec, &sr.rec, sr.cpu, &ev) > 0 && m)
				kmt_model_event(m, &ev);
		}
		if (m)
			kmt_model_finish(m, last);
		kmt_stream_close(s);
		kmt_model_free(m);
		kmt_decoder_free(dec);
	}
	t1 = now();
	printf("%-7s %-7s %10llu events %7.3f s %7.2f M events/s\n", stage,
	       argc > 3 ? argv[3] : "single", (unsigned long long)n, t1 - t0, (double)n / (t1 - t0) / 1e6);
	kmt_file_close(f);
	return 0;
}
