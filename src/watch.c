/*
 * The watcher inside a recording (src/watch.h): hooks run by rec_run().
 *
 *   control instance --(target's allocations, frees of watched objects)-->
 *   pick objects, arm / move / disarm the watchpoints --(hits)-->
 *   kmemtrace:access records in spool/access/cpuN
 *
 * The recording instance beside it keeps every allocation of the target
 * and every free, so the analysis can tell, per sample, which object was
 * live at that address at that time; the watcher itself only needs to be
 * fast enough to move a watchpoint soon after a free. Both instances and
 * the watchpoints use CLOCK_MONOTONIC ("mono"), so samples and events
 * merge by time.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/access.h>
#include <kmemtrace/format.h>
#include <kmemtrace/page.h>
#include <kmemtrace/session.h>
#include <kmemtrace/tracefs.h>
#include "analysis.h"
#include "cmd.h"
#include "watch.h"

#define CTL_POLL_MS 2		/* how often the control instance is read */

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static uint32_t rnd(struct watch *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 17;
	w->rng ^= w->rng << 5;
	return w->rng;
}

/* ---- the control instance ---- */

static const char *const alloc_events[] = { "kmem:kmalloc", "kmem:kmem_cache_alloc" };
static const char *const free_events[] = { "kmem:kfree", "kmem:kmem_cache_free" };

static int ev_write(struct watch *w, const char *ev, const char *file, const char *val,
		    struct kmt_diag *d)
{
	char rel[256], sys[64];
	const char *colon = strchr(ev, ':');

	snprintf(sys, sizeof(sys), "%.*s", (int)(colon - ev), ev);
	snprintf(rel, sizeof(rel), "events/%s/%s/%s", sys, colon + 1, file);
	return kmt_instance_write(&w->ctl, rel, val, d);
}

const char *watch_alloc_filter(const struct wtarget *t, const char *ev, char *buf, size_t len)
{
	bool km = !strcmp(ev, "kmem:kmalloc");

	switch (t->kind) {
	case T_CALLSITE:
		snprintf(buf, len, "call_site >= 0x%" PRIx64 " && call_site < 0x%" PRIx64, t->lo, t->hi);
		return buf;
	case T_CACHE:
		if (km)
			return NULL;
		snprintf(buf, len, "name == \"%s\"", t->name);
		return buf;
	case T_KMALLOC:
		if (!km)
			return NULL;
		snprintf(buf, len, "bytes_alloc == %" PRIu64, t->size);
		return buf;
	}
	return NULL;
}

/* The frees the control instance passes: those of the watched objects. */
static void set_free_filter(struct watch *w)
{
	char f[256] = "ptr == 1";	/* nothing (kfree(NULL) is traced: not 0) */
	size_t n = 0;
	int s;

	for (s = 0; s < w->nr_slots; s++)
		if (w->slot[s].armed)
			n += (size_t)snprintf(f + n, sizeof(f) - n, "%sptr == 0x%" PRIx64,
					      n ? " || " : "", w->slot[s].c.ptr);
	if (!strcmp(f, w->free_filter))
		return;
	snprintf(w->free_filter, sizeof(w->free_filter), "%s", f);
	for (s = 0; s < 2; s++)
		ev_write(w, free_events[s], "filter", f, NULL);
}

static int ctl_start(struct watch *w, struct kmt_diag *d)
{
	struct rec *rc = w->rc;
	char name[64], path[600], buf[300];
	int i, ret;

	snprintf(name, sizeof(name), KMT_INSTANCE_PREFIX "%d-ctl", (int)getpid());
	ret = kmt_instance_create(&w->ctl, rc->root, name, d);
	ret = ret ?: kmt_instance_write(&w->ctl, "tracing_on", "0", d);
	ret = ret ?: kmt_instance_write(&w->ctl, "buffer_size_kb", "1024", d);
	ret = ret ?: kmt_instance_write(&w->ctl, "trace_clock", "mono", d);
	if (!ret && kmt_instance_has(&w->ctl, "buffer_percent"))
		ret = kmt_instance_write(&w->ctl, "buffer_percent", "100", d);
	if (!ret && (w->o.nr_pids || w->o.follow)) {
		char pids[1024] = "";
		size_t n = 0;

		if (w->o.follow)
			n += (size_t)snprintf(pids, sizeof(pids), "%d", (int)rc->child.pid);
		for (i = 0; i < w->o.nr_pids; i++)
			n += (size_t)snprintf(pids + n, sizeof(pids) - n, "%s%d", n ? " " : "",
					      (int)w->o.pids[i]);
		ret = kmt_instance_write(&w->ctl, "options/event-fork", "1", d);
		ret = ret ?: kmt_instance_write(&w->ctl, "set_event_pid", pids, d);
	}
	kmt_formats_init(&w->fs);
	for (i = 0; !ret && i < 2; i++) {
		const char *f = watch_alloc_filter(&w->o.t, alloc_events[i], buf, sizeof(buf));

		ret = kmt_tracefs_add_format(rc->root, alloc_events[i], &w->fs, d) ?:
		      kmt_tracefs_add_format(rc->root, free_events[i], &w->fs, d);
		if (!ret && f) {
			ret = ev_write(w, alloc_events[i], "filter", f, d);
			ret = ret ?: ev_write(w, alloc_events[i], "enable", "1", d);
		}
	}
	set_free_filter(w);
	for (i = 0; !ret && i < 2; i++)
		ret = ev_write(w, free_events[i], "enable", "1", d);
	if (ret)
		return ret;
	w->dec = kmt_decoder_new(&w->fs, false, (int)sizeof(long));
	ret = kmt_tracefs_page_layout(rc->root, &w->pl, d);
	if (!w->dec || ret)
		return w->dec ? ret : kmt_diag_set(d, -ENOMEM, "out of memory");
	w->page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	if (kmt_instance_read(&w->ctl, "buffer_subbuf_size_kb", buf, sizeof(buf)) > 0)
		w->page_size = (uint32_t)strtoul(buf, NULL, 10) * 1024;
	w->page = malloc(w->page_size);
	if (!w->page)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	for (i = 0; i < rc->nr_cpus; i++) {
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw", w->ctl.path, rc->cpus[i]);
		w->ctl_fd[i] = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (w->ctl_fd[i] < 0)
			return kmt_diag_set(d, -errno, "cannot open '%s': %s", path, strerror(errno));
	}
	return kmt_instance_write(&w->ctl, "tracing_on", "1", d);
}

static void ctl_stop(struct watch *w)
{
	int i;

	for (i = 0; i < w->rc->nr_cpus; i++)
		if (w->ctl_fd[i] >= 0) {
			close(w->ctl_fd[i]);
			w->ctl_fd[i] = -1;
		}
	if (w->ctl.created)
		kmt_instance_remove(&w->ctl);
	kmt_decoder_free(w->dec);
	w->dec = NULL;
	kmt_formats_release(&w->fs);
	free(w->page);
	w->page = NULL;
}

/* ---- picking objects and moving the watchpoints ---- */

static void note_word(struct watch *w, uint32_t off)
{
	uint32_t word = off / 8;

	if (word < WATCH_MAX_WORDS)
		w->words[word / 8] |= (uint8_t)(1u << (word % 8));
}

/* The newest live candidate at @ptr (an address comes back when reused). */
static struct wcand *cand_find(struct watch *w, uint64_t ptr)
{
	int i;

	for (i = 0; i < w->ncand; i++) {
		struct wcand *c = &w->cand[(w->cand_next - 1 - i + WATCH_CANDS) % WATCH_CANDS];

		if (c->ptr == ptr && !c->freed)
			return c;
	}
	return NULL;
}

static bool in_slot(const struct watch *w, uint64_t ptr, int except)
{
	int s;

	for (s = 0; s < w->nr_slots; s++)
		if (s != except && w->slot[s].armed && w->slot[s].c.ptr == ptr)
			return true;
	return false;
}

/*
 * A live candidate for slot @s: one never watched if there is any, picked
 * at random among the most recent ones, so samples spread over objects.
 * With fixed offsets, not the object the slot watches now.
 */
static struct wcand *pick(struct watch *w, int s, bool other)
{
	struct wcand *v[WATCH_CANDS];
	int i, n = 0, fresh = 0;

	for (i = 0; i < w->ncand; i++) {
		struct wcand *c = &w->cand[(w->cand_next - 1 - i + WATCH_CANDS) % WATCH_CANDS];

		if (c->freed || !c->ptr || (other && w->slot[s].armed && c->ptr == w->slot[s].c.ptr))
			continue;
		if (!w->o.scan && w->o.nr_offs == 1 && in_slot(w, c->ptr, s))
			continue;	/* the other slot has it at the same offset */
		if (!c->watched && !fresh)
			n = 0;		/* never-watched ones first */
		if (c->watched && fresh)
			continue;
		fresh |= !c->watched;
		if (n < 8)
			v[n++] = c;
	}
	return n ? v[rnd(w) % (uint32_t)n] : NULL;
}

/* The offset slot @s watches on @c next. */
static bool next_offset(struct watch *w, int s, const struct wcand *c, uint32_t *off, uint32_t *len)
{
	if (!w->o.scan) {
		const struct woffset *o = &w->o.offs[s % w->o.nr_offs];

		*off = o->off;
		*len = o->len;
		return o->off + o->len <= c->size;
	}
	if (c->size < 8)
		return false;
	if (w->scan_next + 8 > c->size)
		w->scan_next = 0;
	*off = w->scan_next;
	*len = 8;
	w->scan_next += 8;
	return true;
}

static void slot_off(struct watch *w, int s)
{
	struct wslot *sl = &w->slot[s];

	if (!sl->armed)
		return;
	kmt_hwbp_disarm(w->hw, s);
	sl->armed = false;
	if (sl->log_n)
		sl->log[(sl->log_n - 1) % WATCH_LOG].t_off = now_ns();
}

/* The members a watched word covers: "flags|id" (--type), or the --offset name. */
static const char *field_of(struct watch *w, int s, uint32_t off, uint32_t wlen, char *buf,
			    size_t len)
{
	char name[48], last[48] = "";
	size_t n = 0;
	uint32_t i;

	if (!w->o.scan && w->o.offs[s % w->o.nr_offs].field[0])
		return w->o.offs[s % w->o.nr_offs].field;
	buf[0] = 0;
	for (i = 0; w->btf && w->o.type[0] && i < wlen; i++) {
		if (kmt_btf_name_at(w->btf, w->o.type, off + i, name, sizeof(name)) <= 0 ||
		    !strcmp(name, last))
			continue;
		n += (size_t)snprintf(buf + n, len > n ? len - n : 0, "%s%s", n ? "|" : "", name);
		snprintf(last, sizeof(last), "%s", name);
		if (n >= len)
			break;
	}
	return buf;
}

static int slot_on(struct watch *w, int s, struct wcand *c, uint32_t off, uint32_t len)
{
	struct wslot *sl = &w->slot[s];
	struct wassign *a;
	struct kmt_diag d = { 0 };
	char field[48];
	uint64_t t = now_ns();

	/*
	 * Moving a watchpoint takes microseconds: the old word's window closes
	 * after the move, the new one's opens before it (the addresses differ).
	 */
	if (kmt_hwbp_arm(w->hw, s, c->ptr + off, len, &d)) {
		sl->armed = false;
		return d.err;
	}
	if (sl->armed && sl->log_n)
		sl->log[(sl->log_n - 1) % WATCH_LOG].t_off = now_ns();
	a = &sl->log[sl->log_n++ % WATCH_LOG];
	a->obj = c->ptr;
	a->addr = c->ptr + off;
	a->off = off;
	a->len = len;
	a->t_on = t;
	a->t_off = UINT64_MAX;
	snprintf(a->field, sizeof(a->field), "%s", field_of(w, s, off, len, field, sizeof(field)));
	sl->armed = true;
	sl->c = *c;
	sl->off = off;
	sl->len = len;
	sl->t_on = t;
	w->rearms++;
	note_word(w, off);
	if (off + len > w->max_off)
		w->max_off = off + len;
	if (!c->watched) {
		c->watched = true;
		w->objects++;
	}
	return 0;
}

/* Give slot @s work: a new object, or with --scan possibly the next word. */
static void assign(struct watch *w, int s, bool dwell_over)
{
	struct wslot *sl = &w->slot[s];
	struct wcand *c;
	uint32_t off, len;
	int ret;

	if (!w->o.scan && w->o.nr_offs > 1 && s > 0) {
		/* Several offsets: the other slots watch slot 0's object. */
		c = w->slot[0].armed ? cand_find(w, w->slot[0].c.ptr) : NULL;
		if (!c || (sl->armed && sl->c.ptr == c->ptr)) {
			if (!c)
				slot_off(w, s);
			return;
		}
	} else if (w->o.max_objects && w->objects >= w->o.max_objects) {
		c = sl->armed && w->o.scan ? cand_find(w, sl->c.ptr) : NULL;
		if (!c) {
			slot_off(w, s);
			return;
		}
	} else {
		c = pick(w, s, dwell_over);
		if (!c && dwell_over && w->o.scan)
			c = cand_find(w, sl->c.ptr);	/* stay, next word */
		if (!c)
			return;		/* nothing else to watch: stay */
	}
	if (!next_offset(w, s, c, &off, &len)) {
		c->watched = true;	/* too small for the offset: skip it */
		if (!sl->armed)
			return;
		slot_off(w, s);
		return;
	}
	ret = slot_on(w, s, c, off, len);
	if (ret) {
		warning("cannot set watchpoint %d: %s; going on with %d", s + 1, strerror(-ret), s);
		w->nr_slots = s;	/* the debug registers are taken */
	}
}

static void fill_slots(struct watch *w)
{
	int s;

	for (s = 0; s < w->nr_slots; s++)
		if (!w->slot[s].armed)
			assign(w, s, false);
	set_free_filter(w);
}

static void on_alloc(struct watch *w, const struct kmt_event *ev)
{
	struct wcand *c = &w->cand[w->cand_next];

	if (!ev->ptr)
		return;
	w->allocs_seen++;
	memset(c, 0, sizeof(*c));
	c->ptr = ev->ptr;
	c->ts = ev->ts;
	c->size = (uint32_t)MIN(ev->bytes_alloc, (uint64_t)UINT32_MAX);
	w->cand_next = (w->cand_next + 1) % WATCH_CANDS;
	if (w->ncand < WATCH_CANDS)
		w->ncand++;
}

static void on_free(struct watch *w, const struct kmt_event *ev)
{
	int i, s;

	for (i = 0; i < w->ncand; i++)
		if (w->cand[i].ptr == ev->ptr)
			w->cand[i].freed = true;
	for (s = 0; s < w->nr_slots; s++)
		if (w->slot[s].armed && w->slot[s].c.ptr == ev->ptr)
			slot_off(w, s);
}

static void ctl_read(struct watch *w)
{
	int i;

	for (i = 0; i < w->rc->nr_cpus; i++) {
		ssize_t n;

		while ((n = read(w->ctl_fd[i], w->page, w->page_size)) > 0) {
			struct kmt_page pg;
			struct kmt_page_iter it;
			struct kmt_rec rec;
			struct kmt_event ev;

			if (kmt_page_load(&pg, w->page, (uint32_t)n, &w->pl, false, NULL))
				continue;
			kmt_page_iter_init(&it, &pg);
			while (kmt_page_next(&it, &rec, NULL) > 0) {
				if (kmt_decode(w->dec, &rec, w->rc->cpus[i], &ev) <= 0)
					continue;
				if (ev.kind == KMT_EV_KMALLOC || ev.kind == KMT_EV_CACHE_ALLOC)
					on_alloc(w, &ev);
				else if (ev.kind == KMT_EV_KFREE || ev.kind == KMT_EV_CACHE_FREE)
					on_free(w, &ev);
			}
		}
	}
}

/* ---- samples ---- */

static int page_out(void *arg, const uint8_t *page, uint32_t size)
{
	int fd = *(int *)arg;
	uint32_t done = 0;

	while (done < size) {
		ssize_t n = write(fd, page + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (uint32_t)n;
	}
	return 0;
}

static const struct wassign *assignment(const struct watch *w, const struct kmt_hwbp_hit *h)
{
	const struct wslot *sl = &w->slot[h->slot];
	int i;

	for (i = 1; i <= MIN(sl->log_n, WATCH_LOG); i++) {
		const struct wassign *a = &sl->log[(sl->log_n - i) % WATCH_LOG];

		if (a->addr == h->addr && a->t_on <= h->ts && h->ts <= a->t_off)
			return a;
	}
	return NULL;
}

static int cpu_index(const struct watch *w, int cpu)
{
	int i;

	for (i = 0; i < w->rc->nr_cpus; i++)
		if (w->rc->cpus[i] == cpu)
			return i;
	return -1;
}

static void on_hit(void *arg, const struct kmt_hwbp_hit *h)
{
	struct watch *w = arg;
	const struct wassign *a = assignment(w, h);
	int i = cpu_index(w, h->cpu), ret;
	struct kmt_access acc;
	uint8_t rec[KMT_ACCESS_MAX];

	w->hits++;
	if (!a || i < 0) {
		w->unmapped++;
		return;
	}
	acc = (struct kmt_access){ .pid = h->tid, .ip = h->ip, .obj = a->obj, .offset = a->off,
				   .len = (uint8_t)a->len, .write = h->write, .field = a->field };
	if (kmt_hwbp_lost(w->hw, i) > w->acc_lost[i]) {
		kmt_pagew_lost(&w->acc[i], (int64_t)(kmt_hwbp_lost(w->hw, i) - w->acc_lost[i]));
		w->acc_lost[i] = kmt_hwbp_lost(w->hw, i);
	}
	ret = kmt_pagew_add(&w->acc[i], h->ts, rec, kmt_access_encode(rec, &acc));
	if (ret && !w->acc_err) {
		w->acc_err = ret;
		warning("cannot write a sample: %s", strerror(-ret));
	}
	w->acc_n[i]++;
}

/* ---- the hooks ---- */

static void watch_cleanup(struct watch *w)
{
	int i;

	kmt_hwbp_close(w->hw);
	w->hw = NULL;
	ctl_stop(w);
	for (i = 0; i < w->rc->nr_cpus; i++)
		if (w->acc_fd[i] >= 0) {
			close(w->acc_fd[i]);
			w->acc_fd[i] = -1;
		}
}

static int w_start(struct rec *rc, void *arg, struct kmt_diag *d)
{
	struct watch *w = arg;
	int i, ret;

	w->rc = rc;
	w->rng = (uint32_t)getpid() * 2654435761u | 1;
	for (i = 0; i < 256; i++)
		w->ctl_fd[i] = w->acc_fd[i] = -1;
	ret = kmt_spool_add_format(rc->spool, KMT_ACCESS_SYSTEM, KMT_ACCESS_EVENT,
				   kmt_access_format(), strlen(kmt_access_format()), d);
	ret = ret ?: kmt_spool_add_buffer(rc->spool, KMT_SPOOL_ACCESS, d);
	for (i = 0; !ret && i < rc->nr_cpus; i++) {
		w->acc_fd[i] = kmt_spool_cpu_create(rc->spool, KMT_SPOOL_ACCESS, rc->cpus[i], d);
		ret = w->acc_fd[i] < 0 ? w->acc_fd[i] :
		      kmt_pagew_init(&w->acc[i], 4096, page_out, &w->acc_fd[i]);
	}
	if (!ret) {
		w->hw = kmt_hwbp_open(rc->cpus, rc->nr_cpus, w->nr_slots, w->o.ring_pages, d);
		if (!w->hw)
			ret = d->err ? d->err : -EIO;
	}
	ret = ret ?: ctl_start(w, d);
	if (ret)
		watch_cleanup(w);
	return ret;
}

static int w_fds(struct rec *rc, void *arg, struct pollfd *pf, int max, int *timeout_ms)
{
	struct watch *w = arg;
	int fds[256], i, n = 0, k;
	uint64_t t = now_ns(), next = UINT64_MAX;

	/*
	 * The control instance is read every CTL_POLL_MS, not on wake-ups: a
	 * busy cache allocates hundreds of thousands of times a second, and a
	 * wake-up each would cost more than the tracing.
	 */
	k = kmt_hwbp_fds(w->hw, fds, 256);
	for (i = 0; i < k && n < max; i++)
		pf[n++] = (struct pollfd){ fds[i], POLLIN, 0 };
	for (i = 0; i < w->nr_slots; i++)
		if (w->slot[i].armed)
			next = MIN(next, w->slot[i].t_on + (uint64_t)(w->o.dwell * 1e9));
	*timeout_ms = next <= t ? 0 : (int)MIN((next - t) / 1000000 + 1, CTL_POLL_MS);
	return n;
}

static int w_ready(struct rec *rc, void *arg, const struct pollfd *pf, int n)
{
	struct watch *w = arg;
	uint64_t t;
	int s;

	(void)rc;
	(void)pf;
	(void)n;
	ctl_read(w);
	kmt_hwbp_read(w->hw, false, on_hit, w);
	t = now_ns();
	for (s = 0; s < w->nr_slots; s++)
		if (w->slot[s].armed && t - w->slot[s].t_on >= (uint64_t)(w->o.dwell * 1e9))
			assign(w, s, true);
	if (!w->o.scan && w->o.nr_offs > 1)
		for (s = 1; s < w->nr_slots; s++)
			assign(w, s, false);	/* follow slot 0 */
	fill_slots(w);
	if (w->o.max_objects && w->objects >= w->o.max_objects) {
		for (s = 0; s < w->nr_slots; s++)
			if (w->slot[s].armed)
				return 0;
		w->done = true;
		return 1;
	}
	return 0;
}

static void w_stop(struct rec *rc, void *arg)
{
	struct watch *w = arg;
	char text[256];
	struct kmt_diag d;
	int i, s;

	for (s = 0; s < w->nr_slots; s++)
		slot_off(w, s);
	kmt_hwbp_read(w->hw, true, on_hit, w);
	for (i = 0; i < rc->nr_cpus; i++) {
		int n;

		if (w->hw && kmt_hwbp_lost(w->hw, i) > w->acc_lost[i])
			kmt_pagew_lost(&w->acc[i], (int64_t)(kmt_hwbp_lost(w->hw, i) - w->acc_lost[i]));
		if (w->acc_fd[i] >= 0)
			kmt_pagew_flush(&w->acc[i]);
		kmt_pagew_release(&w->acc[i]);
		n = snprintf(text, sizeof(text), "CPU: %d\nsamples: %" PRIu64 "\nlost: %" PRIu64 "\n",
			     rc->cpus[i], w->acc_n[i], w->hw ? kmt_hwbp_lost(w->hw, i) : 0);
		kmt_spool_put_stats(rc->spool, KMT_SPOOL_ACCESS, rc->cpus[i], text, (size_t)n, &d);
	}
	watch_cleanup(w);
}

static void w_done(struct rec *rc, void *arg, const struct kmt_finalize_result *res)
{
	struct watch *w = arg;
	struct kmt_model_opts mo = { 0 };
	struct analysis a = { 0 };
	uint32_t words = 0, i;

	(void)res;
	for (i = 0; i < WATCH_MAX_WORDS; i++)
		words += (w->words[i / 8] >> (i % 8)) & 1;
	if (rc->o.quiet)
		return;
	fprintf(stderr, "%s: watched %" PRIu64 " of %" PRIu64 " objects allocated, %d word%s at a time on %d CPUs;"
		" %u offset%s covered:", cmd_name, w->objects, w->allocs_seen, w->nr_slots,
		w->nr_slots == 1 ? "" : "s", rc->nr_cpus, words, words == 1 ? "" : "s");
	for (i = 0; i < WATCH_MAX_WORDS && i * 8 < w->max_off; i++)
		if ((w->words[i / 8] >> (i % 8)) & 1)
			fprintf(stderr, " %u", i * 8);
	fprintf(stderr, "\n%s: %" PRIu64 " samples recorded (%" PRIu64 " outside any watch, not kept), %" PRIu64
		" lost\n", cmd_name, w->hits - w->unmapped, w->unmapped, res ? res->access_lost : 0);
	if (w->hits == w->unmapped) {
		/* The watchpoints were checked at start: say why nothing came. */
		if (!w->allocs_seen)
			fprintf(stderr, "%s: no sample because nothing was allocated at the target while "
				"recording (check --cache/--callsite, -F, -p)\n", cmd_name);
		else if (!w->objects)
			fprintf(stderr, "%s: no sample because none of the %" PRIu64 " objects lived long enough to "
				"be watched (allocations are picked up every %d ms)\n", cmd_name, w->allocs_seen,
				CTL_POLL_MS);
		else
			fprintf(stderr, "%s: no sample because nothing touched the watched words while they "
				"were watched (try other offsets, or --scan)\n", cmd_name);
	}
	/* What the analysis keeps: samples in a live object, per the recorded frees. */
	if (analysis_open(&a, rc->o.output) == EXIT_OK &&
	    analysis_run(&a, NULL, &mo, NULL, -1, -1) == EXIT_OK) {
		const struct kmt_summary *sum = kmt_model_summary(a.m);

		fprintf(stderr, "%s: %" PRIu64 " writes and %" PRIu64 " reads in %" PRIu64 " object%s; %" PRIu64
			" samples dropped (no live object there then: after a free)\n", cmd_name,
			sum->access_writes, sum->access_reads, sum->access_objects,
			sum->access_objects == 1 ? "" : "s", sum->access_dropped);
	}
	analysis_close(&a);
}

const struct rec_hooks watch_hooks = {
	.start = w_start, .fds = w_fds, .ready = w_ready, .stop = w_stop, .done = w_done,
};
