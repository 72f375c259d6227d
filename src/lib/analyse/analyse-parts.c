/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The producer in parts (analyse-local.h). With the model in shards and a
 * file of two CPUs and more, reading the stream is no longer one thread's
 * work: P part threads each read, merge and decode the stream of a share
 * of the CPUs (kmt_stream_open_buffers(): input i goes to part i % P) into
 * batches of their own, and the producer merges the parts' items by
 * (time, input index) — the one stream's order, as its heap breaks ties
 * by input index too — into the job's batches. It does what take() does
 * with each (the window, the record count, markers, the stop at a record
 * that does not fit its format) and hands the shards a pointer to each
 * event where its part wrote it (batch.evp): nothing is copied. So the
 * serial stage left before the model is a merge of P ordered lists of
 * 16-byte items. A part also keeps its CPUs' sequences (model-claim.c:
 * which allocation a stack is, the doubled large kmalloc) and writes the
 * verdict beside each event, with the shard it goes to (seq_in_parts), so
 * that shard 0 need not read the other shards' events.
 *
 *   part threads: kmt_stream_next -> kmt_decode -> part batch
 *   producer:     min over the parts' heads -> take -> job batch
 *
 * A part batch goes back to its part once the producer is done with it
 * and every shard has taken the job's batches its events went into (the
 * job's batch being filled then: fin). A producer that waits for a part
 * first hands what it has, and the shards then take it without waiting
 * for more (merge_waits), so no one waits on a batch no one will finish.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyse-local.h"
#include "tracefile/observe.h"	/* kmt_stream_undecoded() */

#define PART_ARENA (256u << 10)

unsigned int parts_wanted(const struct job *j)
{
	int bufs[2] = { j->buffer, kmt_file_access_buffer(j->f) }, k, n = 0;
	int p = MIN(MAX(kmt_file_threads(j->f) / 4, 2), MAX_PARTS);

	if (!j->threaded || j->nms < 2)
		return 0;
	for (k = 0; k < (bufs[1] >= 0 && bufs[1] != j->buffer ? 2 : 1); k++)
		n += kmt_file_buffer(j->f, bufs[k]) ? kmt_file_buffer(j->f, bufs[k])->nr_cpus : 0;
	if (j->o && j->o->parts)
		p = (int)MIN(j->o->parts, MAX_PARTS);
	p = MIN(p, n);
	return p >= 2 ? (unsigned int)p : 0;
}

/* The part's batch being filled. */
static struct pbatch *pfilling(struct part *p)
{
	return &p->b[p->prod % NBP];
}


/* Hand the part's batch over (and, @last, say it is the last); false: stop. */
static bool part_hand(struct part *p, bool last)
{
	struct job *j = p->j;
	struct pbatch *b = pfilling(p);
	bool go;

	kmt_lock(&j->mu);
	if (b->n)
		p->prod++;
	if (last)
		p->done = true;
	if (j->merge_waits)
		wake(j, 1u << CV_MERGE);
	/*
	 * Part batch s is free again once the merge is done with it (woken
	 * by next_batch()), and every shard with the job's batch its last
	 * events went into (the ring's kmt_handoff_taken()).
	 */
	while (!last && !j->parts_quit && p->prod >= NBP && (int)(p->taken - (p->prod - NBP)) <= 0) {
		j->parts_wait++;
		kmt_cond_wait(&j->cv[CV_PARTS], &j->mu);
		j->parts_wait--;
	}
	go = !j->parts_quit;
	pthread_mutex_unlock(&j->mu);
	if (go && !last && p->prod >= NBP)
		go = kmt_handoff_taken(j->h, p->fin[(p->prod - NBP) % NBP], true);
	if (!last) {
		/* (After the last, the next may still be the producer's.) */
		b = pfilling(p);
		b->n = 0;
		b->ar.used = 0;
	}
	return go;
}

/* A free item, with room for @need arena bytes; NULL: stop. */
static struct pbatch *part_room(struct part *p, size_t need)
{
	struct pbatch *b = pfilling(p);

	if ((b->n == PB || b->ar.used + need > b->ar.cap) && !part_hand(p, false))
		return NULL;
	b = pfilling(p);
	if (need > b->ar.cap && !arena_grow(&b->ar, need, PART_ARENA)) {
		p->ret = kmt_diag_set(&p->d, -ENOMEM, "out of memory");
		return NULL;
	}
	return b;
}

/*
 * The shard that takes the event in @s (model_route_of()); with the CPUs'
 * sequence decided here, a stack goes to its slab object's shard, a task's
 * name to every shard (ROUTE_ALL), and the verdict is written beside it.
 */
static uint8_t part_route(struct part *p, struct model_slot *s)
{
	const struct kmt_event *ev = &s->ev;

	if (!p->cpu)
		return model_route_of(ev, p->j->nms);
	model_claim_event(p->cpu, &p->j->m->o, ev, true, &s->v);
	if (ev->kind == KMT_EV_STACK)
		return s->v.c.kind == KMT_EV_KMALLOC ? (uint8_t)model_shard_of(s->v.c.ptr, p->j->nms) : 0;
	return model_names_task(ev->kind) ? ROUTE_ALL : model_route_of(ev, p->j->nms);
}

/* One thing of the part's stream into its batch; false: the part ends here. */
static bool part_take(struct part *p, const struct kmt_srec *sr)
{
	struct pbatch *b = part_room(p, sr->skip ? sizeof(*sr->skip) + 7 : 0);
	struct part_item *it;
	struct kmt_event *ev;
	int ret;

	if (!b)
		return false;
	it = &b->it[b->n];
	*it = (struct part_item){ .ts = sr->rec.ts, .input = (uint32_t)kmt_stream_input(p->s, sr->idx),
				  .other = sr->buffer != p->j->buffer };
	ev = &b->s[b->n].ev;
	if (sr->skip || sr->lost_marker) {
		it->what = sr->skip ? P_SKIP : P_LOST;
		it->truncated = sr->truncated;
		/* A gap, a loss or a cut end breaks the CPU's chain of events, as the model's markers do. */
		if (p->cpu && sr->cpu >= 0 && sr->cpu < KMT_MAX_CPUS && !it->other)
			model_claim_break(&p->cpu[sr->cpu]);
		ev->cpu = sr->cpu;
		ev->bytes_req = (uint64_t)sr->lost;
		ev->name = NULL;
		if (sr->skip) {
			/* A struct: on its alignment, after strings of any length. */
			b->ar.used = ALIGN_UP(b->ar.used, 8);
			ev->name = arena_keep(&b->ar, sr->skip, sizeof(*sr->skip));
		}
		b->n++;
		return true;
	}
	ret = kmt_decode(p->j->dec, &sr->rec, sr->cpu, ev);
	if (ret < 0) {
		p->ret = analyse_misfit(p->j, &p->d, ret, p->s, sr);
		it->what = P_MISFIT;
		b->n++;
		return false;
	}
	if (!ret)
		kmt_stream_undecoded(p->s, sr);
	it->what = ret ? P_EVENT : P_NONE;
	it->to = ret ? part_route(p, &b->s[b->n]) : 0;
	if (ret && b->ar.used + ev_bytes(ev) > b->ar.cap) {
		/* No room for its strings: by way of a copy, into the next batch. */
		struct model_slot tmp = b->s[b->n];
		struct part_item ti = *it;

		if (!(b = part_room(p, ev_bytes(&tmp.ev))))
			return false;
		b->s[b->n] = tmp;
		b->it[b->n] = ti;
		ev = &b->s[b->n].ev;
	}
	if (ret)
		arena_keep_event(&b->ar, ev);
	b->n++;
	return true;
}

static void *part_main(void *arg)
{
	struct part *p = arg;
	uint64_t c0 = p->j->stats ? kmt_thread_cpu_ns() : 0, ts = 0;
	uint32_t input = 0;
	struct kmt_srec sr;
	int ret;

	pthread_setname_np(pthread_self(), "kmt-part");
	kmt_wait_count(p->j->stats);
	for (;;) {
		ret = kmt_stream_next(p->s, &sr, &p->d);
		if (ret < 0) {
			/* Met on moving past its last record: it comes right after that. */
			struct pbatch *b = part_room(p, 0);

			p->ret = ret;
			if (b)
				b->it[b->n++] = (struct part_item){ .ts = ts, .input = input, .what = P_END };
			break;
		}
		if (!ret || !part_take(p, &sr))
			break;
		ts = sr.rec.ts;
		input = (uint32_t)kmt_stream_input(p->s, sr.idx);
	}
	part_hand(p, true);
	if (p->j->stats) {
		p->ns = kmt_thread_cpu_ns() - c0 - kmt_waited_ns();
		__atomic_fetch_add(&p->j->wait_ns, kmt_waited_ns(), __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * The producer's next item of part @p, once its batch has one; NULL when
 * the part has no more. A batch done with goes back (as soon as the
 * shards have taken its events).
 */
static const struct part_item *next_batch(struct job *j, struct part *p)
{
	kmt_lock(&j->mu);
	if (p->taken != p->seen) {
		/* Up to the job's batch being filled, unless its events went into none (then the last handed). */
		p->fin[p->taken % NBP] = j->prod + (filling(j)->n ? 1 : 0);
		p->taken++;
		p->cur = 0;
		if (j->parts_wait)
			wake(j, 1u << CV_PARTS);
	}
	if (p->taken == p->prod && !p->done && !j->stop) {
		/* Nothing to merge from it yet: what is filled goes now, and is taken as it is. */
		pthread_mutex_unlock(&j->mu);
		if (!hand(j))
			return NULL;
		kmt_handoff_hurry(j->h, true);	/* take what there is */
		kmt_lock(&j->mu);
		j->merge_waits = true;
		while (p->taken == p->prod && !p->done && !j->stop)
			kmt_cond_wait(&j->cv[CV_MERGE], &j->mu);
		j->merge_waits = false;
		pthread_mutex_unlock(&j->mu);
		kmt_handoff_hurry(j->h, false);
		kmt_lock(&j->mu);
	}
	p->seen = p->prod;
	pthread_mutex_unlock(&j->mu);
	if (p->taken == p->seen)
		return NULL;
	return &p->b[p->taken % NBP].it[p->cur];
}

static inline const struct part_item *head(struct job *j, struct part *p)
{
	struct pbatch *b = &p->b[p->taken % NBP];

	if (p->taken != p->seen && p->cur < b->n)
		return &b->it[p->cur];
	return next_batch(j, p);
}

/* What part @p's item @it is to the job; T_GO to go on. */
static int take_part(struct job *j, struct part *p, const struct part_item *it)
{
	const struct kmt_event *ev;
	struct batch *b;
	enum item what;
	int t;

	ev = &p->b[p->taken % NBP].s[p->cur].ev;
	switch (it->what) {
	case P_SKIP:
	case P_LOST: {
		/* The marker as the part's stream gave it. */
		struct kmt_srec sr = { .rec.ts = it->ts, .cpu = ev->cpu, .lost = (int64_t)ev->bytes_req,
				       .buffer = it->other ? kmt_file_access_buffer(j->f) : j->buffer,
				       .lost_marker = true, .truncated = it->truncated,
				       .skip = (const struct kmt_skip *)(const void *)ev->name };

		return take_marker(j, &sr);
	}
	case P_END:
		j->ret = p->ret;
		j->d = p->d;
		return T_STOP;
	default:
		break;
	}
	if ((t = take_record(j, it->ts)) != T_GO)
		return t;
	if (it->what == P_MISFIT) {
		j->ret = p->ret;
		j->d = p->d;
		return T_STOP;
	}
	if (it->what == P_NONE)
		return T_GO;
	what = it->ts < j->lo ? decoded_as(1, true, ev->kind) : IT_EVENT;
	if (what == IT_SKIP)
		return T_GO;
	b = filling(j);
	if (b->n == BATCH && !(b = room(j, 0)))
		return T_FAIL;
	b->evp[b->n] = ev;	/* not copied: read where the part wrote it */
	b->to[b->n] = it->to;	/* the part said: shard 0 need not look */
	b->what[b->n++] = (uint8_t)what;
	return T_GO;
}

static inline bool before(const struct part_item *a, const struct part_item *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->input < b->input);
}

/*
 * Part @p's items from @it on, within its batch, as long as they come
 * before @next, the least of the other parts' heads (NULL: none). T_GO to
 * go on.
 */
static int take_run(struct job *j, struct part *p, const struct part_item *it, const struct part_item *next)
{
	const struct pbatch *b = &p->b[p->taken % NBP];
	int t;

	for (;;) {
		if ((t = take_part(j, p, it)) != T_GO)
			return t;
		if (++p->cur >= b->n)
			return T_GO;
		it = &b->it[p->cur];
		if (next && !before(it, next))
			return T_GO;
	}
}

/* The parts' streams, each on a thread: false (with j->ret) if they could not all start. */
static bool parts_start(struct job *j)
{
	uint64_t start = UINT64_MAX;
	unsigned int k;

	j->parts = line_alloc(j->nparts * sizeof(*j->parts));
	if (!j->parts) {
		j->ret = kmt_diag_set(&j->d, -ENOMEM, "out of memory");
		return false;
	}
	/* All open here, on one thread: a file's readers join its inflating pool as they open. */
	for (k = 0; k < j->nparts; k++) {
		struct part *p = &j->parts[k];

		p->j = j;
		if (j->seq_in_parts && !(p->cpu = calloc(KMT_MAX_CPUS, sizeof(*p->cpu)))) {
			j->ret = kmt_diag_set(&j->d, -ENOMEM, "out of memory");
			return false;
		}
		if (!(p->s = analyse_stream(j, (int)k, (int)j->nparts, &j->d))) {
			j->ret = j->d.err ? j->d.err : -EINVAL;
			return false;
		}
		start = MIN(start, kmt_stream_start_ts(p->s));
	}
	for (k = 0; k < j->nparts; k++)
		kmt_stream_set_start(j->parts[k].s, start);
	for (k = 0; k < j->nparts; k++) {
		struct part *p = &j->parts[k];

		if (pthread_create(&p->th, NULL, part_main, p)) {
			j->ret = kmt_diag_set(&j->d, -EAGAIN, "cannot start a thread");
			return false;
		}
		p->running = true;
	}
	return true;
}

void produce_parts(struct job *j)
{
	uint64_t c0 = j->stats ? kmt_thread_cpu_ns() : 0;
	const struct part_item *h[MAX_PARTS];
	struct part *act[MAX_PARTS];
	unsigned int na = 0, k;
	int t = T_GO;

	if (parts_start(j)) {
		for (k = 0; k < j->nparts; k++)
			if ((h[na] = head(j, &j->parts[k])))
				act[na++] = &j->parts[k];
		while (na && t == T_GO) {
			/* The least head, and the least of the others: up to it, the best part's go unlooked at. */
			unsigned int best = 0, next = 0;

			for (k = 1; k < na; k++) {
				if (before(h[k], h[best])) {
					next = best;
					best = k;
				} else if (next == best || before(h[k], h[next])) {
					next = k;
				}
			}
			t = take_run(j, act[best], h[best], next != best ? h[next] : NULL);
			if (t == T_GO && !(h[best] = head(j, act[best]))) {
				act[best] = act[--na];
				h[best] = h[na];
			}
		}
		/* What is left in hand goes too (or is dropped if the model stopped). */
		if (t != T_FAIL)
			hand(j);
	}
	/* The shards take what there is: a part may wait for them (part_hand()) as it is joined. */
	kmt_handoff_hurry(j->h, true);
	kmt_lock(&j->mu);
	j->parts_quit = true;
	wake(j, CV_ALL);
	pthread_mutex_unlock(&j->mu);
	for (k = 0; j->parts && k < j->nparts; k++) {
		struct part *p = &j->parts[k];

		if (p->running)
			pthread_join(p->th, NULL);
		kmt_stream_close(p->s);
		p->s = NULL;
		j->parts_ns += p->ns;
	}
	if (j->stats)
		j->prod_ns = kmt_thread_cpu_ns() - c0;
}

/* After the shards: their batches pointed into the parts' arenas. */
void parts_free(struct job *j)
{
	unsigned int k, i;

	for (k = 0; j->parts && k < j->nparts; k++) {
		for (i = 0; i < NBP; i++)
			free(j->parts[k].b[i].ar.p);
		free(j->parts[k].cpu);
	}
	line_free(j->parts, j->nparts * sizeof(*j->parts));
	j->parts = NULL;
}
