/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the model does not see (include/kmemtrace/model.h): events a CPU's
 * ring buffer lost, a CPU whose recording stopped early, and parts of a
 * damaged file that could not be read. Each starts a new "loss epoch":
 * an object whose allocation or free may lie in the gap is uncertain,
 * never a leak or misuse. A gap with an end in time stays open until
 * then: every event in it is judged as after a loss. What a stream's
 * marker is to them is said here once (kmt_marker_of()), for every reader.
 */
#include <kmemtrace/model.h>
#include "model-local.h"

/* A gap on @cpu: later events are judged as after a loss. */
static void gap_opens(struct kmt_model *m, int cpu)
{
	kmt_model_sync(m);
	m->loss_seq++;
	m->sum.affected_by_loss = true;
	if (cpu >= 0 && cpu < KMT_MAX_CPUS) {
		if (cpu >= m->sum.nr_cpus)
			m->sum.nr_cpus = cpu + 1;
		/* A gap breaks the chain of events on this CPU. */
		model_claim_break(&m->cpu[cpu]);
	}
}

void kmt_model_lost(struct kmt_model *m, int cpu, int64_t lost, uint64_t ts)
{
	gap_opens(m, cpu);
	m->sum.lost_gaps++;
	if (lost > 0)
		m->sum.lost_events += (uint64_t)lost;
	else
		m->sum.lost_pages_unknown++;
	if (cpu >= 0 && cpu < KMT_MAX_CPUS && lost > 0)
		m->lost_by_cpu[cpu] += (uint64_t)lost;
	model_detail_gap(m, cpu, lost > 0 ? lost : -1, ts, false);
}

void kmt_model_ring_lost(struct kmt_model *m, int cpu, uint64_t lost)
{
	if (cpu < 0 || cpu >= KMT_MAX_CPUS || lost <= m->lost_by_cpu[cpu])
		return;
	m->sum.lost_events += lost - m->lost_by_cpu[cpu];
	m->lost_by_cpu[cpu] = lost;
	m->sum.lost_by_ring = true;
	m->sum.affected_by_loss = true;
	if (cpu >= m->sum.nr_cpus)
		m->sum.nr_cpus = cpu + 1;
}

void kmt_model_lost_after_death(struct kmt_model *m, uint64_t n)
{
	m->sum.lost_after_death += n;
}

void kmt_model_truncated(struct kmt_model *m, int cpu, uint64_t ts)
{
	gap_opens(m, cpu);
	if (!m->sum.truncated_cpus++ || ts < m->sum.truncated_ts)
		m->sum.truncated_ts = ts;
	model_detail_gap(m, cpu, -1, ts, true);
}

void kmt_model_gap(struct kmt_model *m, int cpu, uint64_t from, uint64_t to)
{
	gap_opens(m, cpu);
	m->sum.damaged_gaps++;
	m->gap_until = MAX(m->gap_until, to);
	model_detail_gap(m, cpu, -1, from, to == UINT64_MAX);
}

void kmt_marker_of(const struct kmt_srec *sr, int buffer, struct kmt_marker *mk)
{
	*mk = (struct kmt_marker){ .kind = KMT_MARK_LOST, .cpu = sr->cpu, .lost = sr->lost, .ts = sr->rec.ts };
	if (sr->buffer != buffer) {
		mk->kind = KMT_MARK_ACCESS_LOST;
		if (sr->skip)
			mk->lost = -1;
	} else if (sr->skip) {
		mk->kind = KMT_MARK_GAP;
		mk->lost = -1;
		mk->ts = sr->skip->ts_from;
		mk->to = sr->skip->ts_to;
	} else if (sr->truncated) {
		mk->kind = KMT_MARK_TRUNCATED;
		mk->lost = -1;
	}
}

bool kmt_marker_in(const struct kmt_marker *mk, uint64_t lo, uint64_t hi)
{
	switch (mk->kind) {
	case KMT_MARK_LOST:
		return mk->ts >= lo && mk->ts <= hi;
	case KMT_MARK_TRUNCATED:
		return mk->ts <= hi;		/* the CPU's events after it are missing */
	case KMT_MARK_GAP:
		return mk->ts <= hi && mk->to >= lo;
	case KMT_MARK_MISFIT:
		return mk->ts >= lo && mk->ts <= hi;
	case KMT_MARK_ACCESS_LOST:
		break;
	}
	return true;
}

void kmt_model_marker(struct kmt_model *m, const struct kmt_marker *mk)
{
	switch (mk->kind) {
	case KMT_MARK_LOST:
		kmt_model_lost(m, mk->cpu, mk->lost, mk->ts);
		break;
	case KMT_MARK_TRUNCATED:
		kmt_model_truncated(m, mk->cpu, mk->ts);
		break;
	case KMT_MARK_GAP:
		kmt_model_gap(m, mk->cpu, mk->ts, mk->to);
		break;
	case KMT_MARK_ACCESS_LOST:
		kmt_model_access_lost(m, mk->lost);
		break;
	case KMT_MARK_MISFIT:
		kmt_model_lost(m, mk->cpu, -1, mk->ts);	/* one, counted as of an unknown number */
		break;
	}
}
