/*
 * Stream -> decoder -> model (include/kmemtrace/analyse.h).
 */
#include <errno.h>
#include <inttypes.h>

#include <kmemtrace/analyse.h>
#include <kmemtrace/stream.h>
#include "kmt-local.h"

void kmt_model_opts_from_file(struct kmt_model_opts *mo, const struct kmt_file *f)
{
	const struct kmt_recinfo *ri = &kmt_file_info(f)->recinfo;
	unsigned int p = ri->partial;

	mo->partial_allocs = p & KMT_PARTIAL_ALLOCS;
	mo->partial_frees = p & KMT_PARTIAL_FREES;
	mo->stack_sample = ri->stack_sample;
}

int kmt_analyse(struct kmt_file *f, int buffer, const struct kmt_decoder *dec,
		struct kmt_model *m, const struct kmt_analyse_opts *o,
		struct kmt_analyse_result *res, struct kmt_diag *d)
{
	int bufs[2] = { buffer, kmt_file_access_buffer(f) };
	struct kmt_stream *s = kmt_stream_open_buffers(f, bufs, bufs[1] >= 0 && bufs[1] != buffer ? 2 : 1, d);
	uint64_t lo = 0, hi = UINT64_MAX, last = 0, seen = 0;
	bool past_hi = false;
	struct kmt_srec sr;
	struct kmt_event ev;
	bool started = false;
	int ret;

	memset(res, 0, sizeof(*res));
	if (!s)
		return d->err ? d->err : -EINVAL;
	while ((ret = kmt_stream_next(s, &sr, d)) > 0) {
		if (!started) {
			started = true;
			res->t0 = sr.rec.ts;
			if (o && o->t0)
				*o->t0 = res->t0;
			if (o && o->t_start > 0)
				lo = res->t0 + (uint64_t)(o->t_start * 1e9);
			if (o && o->t_end >= 0)
				hi = res->t0 + (uint64_t)(o->t_end * 1e9);
		}
		if (sr.lost_marker && sr.buffer != buffer) {
			kmt_model_access_lost(m, sr.lost);
			continue;
		}
		if (sr.lost_marker) {
			if (sr.truncated && sr.rec.ts <= hi)
				kmt_model_truncated(m, sr.cpu, sr.rec.ts);
			else if (sr.rec.ts >= lo && sr.rec.ts <= hi)
				kmt_model_lost(m, sr.cpu, sr.lost, sr.rec.ts);
			continue;
		}
		res->records++;
		if (sr.rec.ts > hi) {
			past_hi = true;
			break;
		}
		seen = sr.rec.ts;
		ret = kmt_decode(dec, &sr.rec, sr.cpu, &ev);
		if (ret < 0) {
			kmt_diag_set(d, ret, "%s: CPU %d, page at offset %" PRIu64
				     ": a record (id %u, %u bytes) does not fit its format",
				     kmt_file_info(f)->path, sr.cpu, kmt_stream_offset(s, sr.idx),
				     sr.rec.len >= 2 ? ld16(sr.rec.data, kmt_file_info(f)->big_endian) : 0,
				     sr.rec.len);
			break;
		}
		if (ret == 0)
			continue;
		if (sr.rec.ts < lo) {
			/* Names still matter before the window. */
			if (ev.kind >= KMT_EV_FORK && ev.kind <= KMT_EV_NEWTASK)
				kmt_model_name_event(m, &ev);
			continue;
		}
		last = sr.rec.ts;
		if (kmt_model_event(m, &ev)) {
			ret = kmt_diag_set(d, -ENOMEM, "%s: out of memory in the allocation model after %" PRIu64
					   " events; the results would be incomplete", kmt_file_info(f)->path,
					   res->records);
			break;
		}
		if (o && o->each)
			o->each(o->arg, &ev);
	}
	kmt_stream_close(s);
	if (ret < 0)
		return ret;
	if (started && lo > seen && !past_hi)
		return kmt_diag_set(d, -ERANGE, "%s: the window starts at %.6f s, but the trace ends at %.6f s",
				    kmt_file_info(f)->path, (double)(lo - res->t0) / 1e9,
				    (double)(seen - res->t0) / 1e9);
	/* The window's end if the trace goes on past it, else the trace's. */
	res->t_end = past_hi ? hi : MAX(last, seen);
	if (kmt_model_finish(m, res->t_end))
		return kmt_diag_set(d, -ENOMEM, "%s: out of memory in the allocation model; the results "
				    "would be incomplete", kmt_file_info(f)->path);
	return 0;
}
