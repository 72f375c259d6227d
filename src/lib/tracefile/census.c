/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Census of a buffer: a page walk counting records per CPU and per event
 * id, and the losses the ring buffer reported in page headers; what a
 * damaged file does not let be read is passed over and listed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmemtrace/tracefile.h>
#include "base/kmt-local.h"
#include "tf-local.h"

static int keep_skip(struct kmt_census *c, const struct kmt_skip *g, struct kmt_diag *d)
{
	struct kmt_skip *v = realloc(c->skipped, sizeof(*v) * (c->nr_skipped + 1));

	if (!v)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	c->skipped = v;
	v[c->nr_skipped++] = *g;
	return 0;
}

int kmt_census_run(struct kmt_census *c, struct kmt_file *f, int buffer,
		   struct kmt_diag *d)
{
	const struct kmt_buffer *b = kmt_file_buffer(f, buffer);
	bool be = kmt_file_info(f)->big_endian;
	int i, ret = 0;

	memset(c, 0, sizeof(*c));
	if (!b)
		return 0;
	c->nr_ids = 65536;
	c->per_id = calloc(c->nr_ids, sizeof(*c->per_id));
	c->cpus = calloc((size_t)(b->nr_cpus ? b->nr_cpus : 1), sizeof(*c->cpus));
	if (!c->per_id || !c->cpus)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	c->nr_cpus = b->nr_cpus;
	for (i = 0; i < b->nr_cpus && !ret; i++) {
		struct kmt_census_cpu *cc = &c->cpus[i];
		struct kmt_cpu_reader *r;
		struct kmt_page pg;

		cc->cpu = b->cpus[i].cpu;
		ret = kmt_cpu_reader_open(&r, f, buffer, i, d);
		if (ret)
			break;
		while ((ret = kmt_cpu_reader_next(r, &pg, d)) != 0) {
			struct kmt_page_iter it;
			struct kmt_rec rec;

			if (ret == -ENOMEM)
				break;
			if (ret < 0) {
				ret = keep_skip(c, kmt_cpu_reader_skipped(r), d);
				if (ret)
					break;
				continue;
			}
			cc->pages++;
			cc->bytes += pg.size;
			if (pg.missed) {
				cc->lost_pages++;
				if (pg.lost > 0)
					cc->lost_events += (uint64_t)pg.lost;
				else
					cc->lost_unknown++;
			}
			kmt_page_iter_init(&it, &pg);
			while ((ret = kmt_page_next(&it, &rec, d)) > 0) {
				if (!cc->events)
					cc->first_ts = rec.ts;
				cc->last_ts = rec.ts;
				cc->events++;
				if (rec.len >= 2)
					c->per_id[ld16(rec.data, be)]++;
			}
			if (ret < 0) {
				/* The rest of the page is passed over, as the stream does. */
				struct kmt_skip g = { .cpu = cc->cpu, .pages = 1, .err = ret };

				g.from = g.to = kmt_cpu_reader_offset(r);
				kmt_cpu_reader_fail(r, d);
				snprintf(g.why, sizeof(g.why), "%.150s; the rest of the page is skipped", d->msg);
				ret = keep_skip(c, &g, d);
				if (ret)
					break;
			}
		}
		kmt_cpu_reader_close(r);
		cc->lost = kmt_cpustat_lost(kmt_buffer_cpustat(b, cc->cpu), cc->lost_events);
		c->lost += cc->lost;
		c->lost_pages += cc->lost_pages;
		c->events += cc->events;
		c->lost_events += cc->lost_events;
		c->lost_unknown += cc->lost_unknown;
	}
	return ret < 0 ? ret : 0;
}

void kmt_census_release(struct kmt_census *c)
{
	free(c->skipped);
	free(c->cpus);
	free(c->per_id);
	memset(c, 0, sizeof(*c));
}
