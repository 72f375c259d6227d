/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A batch into the model, or into a shard of it (analyse-local.h): what
 * each item is to the model, the runs of events routed by shard 0 and
 * taken as routed by the others (model-shards.c drives them), the
 * callbacks. The stages of kmt_analyse() and of the live pipeline:
 *
 *   producer (or the parts' merge: analyse-parts.c) -> shard 0 -> shards 1..N-1
 *                                                              -> the writer
 *
 * A batch is free again for the producer once every shard has taken it,
 * and the writer of the shards' object records (analyse-sink.c) with it.
 */
#include <errno.h>
#include <stdlib.h>

#include "analyse-local.h"

/* The run of events from @i into shard @m: all of it, routed by shard 0, or as shard 0 routed it. */
static int consume_run(struct job *j, struct kmt_model *m, struct batch *b, unsigned int i, unsigned int k)
{
	if (j->nms == 1)
		return kmt_model_events(m, &b->ev[i], k - i);
	if (m == j->m)
		return model_route_events(m, &b->evp[i], k - i, &b->to[i], &b->route[i], j->nparts);
	return model_routed_events(m, &b->evp[i], k - i, &b->to[i], &b->route[i], j->m->sum.first_ts);
}

/* The model's side: one batch, in order, into shard @m. */
static void consume_batch(struct job *j, struct kmt_model *m, struct batch *b)
{
	unsigned int i = 0, k;

	while (i < b->n && !j->mret) {
		const struct kmt_event *ev = b->evp[i];

		if (b->what[i] == IT_SKIP) {
			i++;
			continue;
		}
		if (m != j->m && b->what[i] != IT_EVENT) {
			/* Another shard: task names only; losses are shard 0's (model-merge.c). */
			if (b->what[i] == IT_NAME)
				model_name_at(m, ev, b->route[i].pos);
			i++;
			continue;
		}
		switch (b->what[i]) {
		case IT_EVENT:
			for (k = i + 1; k < b->n && b->what[k] == IT_EVENT; k++)
				;
			if (j->o && j->o->each) {
				/* One at a time: the callback may ask the model about its event. */
				for (; i < k && !consume_run(j, m, b, i, i + 1); i++, j->fed++)
					j->o->each(j->o->arg, b->evp[i]);
			} else if (!consume_run(j, m, b, i, k)) {
				if (m == j->m)
					j->fed += k - i;
				i = k;
			}
			if (i < k) {
				j->mret = -ENOMEM;
				return;
			}
			continue;
		case IT_NAME:
			b->route[i].pos = model_pos(m);
			kmt_model_name_event(m, ev);
			break;
		default: {
			const struct kmt_skip *skip;
			struct kmt_marker mk = batch_marker(b, i, &skip);

			kmt_model_marker(m, &mk);
			if (j->o && j->o->marker)
				j->o->marker(j->o->arg, &mk, skip);
			break;
		}
		}
		i++;
	}
}

void consume(struct job *j, struct kmt_model *m, struct batch *b)
{
	uint64_t c0 = j->stats ? kmt_thread_cpu_ns() : 0;

	if (j->sinks)
		sink_begin(j, m, b);
	consume_batch(j, m, b);
	if (j->sinks)
		sink_done(j, m);
	if (!j->stats)
		return;
	c0 = kmt_thread_cpu_ns() - c0;
	__atomic_fetch_add(&j->model_ns, c0, __ATOMIC_RELAXED);	/* every shard's */
	if (m == j->m)
		j->route_ns += c0;
}
