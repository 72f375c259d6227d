/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The watcher (include/kmemtrace/watch.h): a control instance that
 * reports the target's allocations and the frees of watched objects,
 * watchpoints moved among those objects, and the samples written into the
 * spool as kmemtrace:access pages.
 *
 * Expected load: a busy cache allocates hundreds of thousands of times a
 * second; the control instance is read every CTL_POLL_MS rather than woken
 * per event, and only the last WATCH_CANDS allocations are kept to pick
 * from. Memory is fixed at start.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/tracefs.h>
#include <kmemtrace/event.h>
#include <kmemtrace/tracefile.h>
#include <kmemtrace/capture.h>
#include <kmemtrace/watch.h>
#include "base/kmt-local.h"
#include "tracefile/page-local.h"	/* kmt_pagew: the access samples' pages */

#define CTL_POLL_MS 2		/* how often the control instance is read */
#define WATCH_CANDS 64		/* recent allocations to pick from */
#define WATCH_LOG 128		/* assignments remembered per slot */

struct wcand {
	uint64_t ptr, ts;
	uint32_t size;
	bool freed, watched;
};

/* One placement of a slot: which word of which object, from when to when. */
struct wassign {
	uint64_t obj, addr, t_on, t_off;
	uint32_t off, len;
	char field[48];
};

struct wslot {
	bool armed;
	struct wcand c;			/* the object */
	uint32_t off, len;
	uint64_t t_on;
	struct wassign log[WATCH_LOG];	/* most recent last */
	int log_n;
};

struct kmt_watcher {
	struct kmt_watcher_opts o;
	int *cpus;			/* o.cpus, copied */
	struct kmt_watcher_stats st;
	bool stopped;
	/* the control instance */
	struct kmt_instance ctl;
	int *ctl_fd;			/* per CPU index */
	struct kmt_formats fs;
	struct kmt_decoder *dec;
	struct kmt_page_layout pl;
	uint8_t *page;
	uint32_t page_size;
	char free_filter[256];
	/* the watchpoints */
	struct kmt_hwbp *hw;
	struct wslot slot[KMT_HWBP_MAX_SLOTS];
	int nr_slots;
	struct wcand cand[WATCH_CANDS];
	int ncand, cand_next;
	uint32_t scan_next;
	/* the samples, per CPU index */
	int *acc_fd;
	int *ring_fds;			/* scratch for kmt_watcher_fds() */
	struct kmt_pagew *acc;
	uint64_t *acc_n, *acc_lost;
	int acc_err;
	uint8_t words[KMT_WATCH_MAX_WORDS / 8];	/* offsets watched, a bit per word */
	bool done;			/* --objects reached */
	uint32_t rng;
};

static const char *const alloc_events[] = { "kmem:kmalloc", "kmem:kmem_cache_alloc" };
static const char *const free_events[] = { "kmem:kfree", "kmem:kmem_cache_free" };

static uint32_t rnd(struct kmt_watcher *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 17;
	w->rng ^= w->rng << 5;
	return w->rng;
}

static void note(struct kmt_watcher *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Keep the first thing worth telling the user (the library does not print). */
static void note(struct kmt_watcher *w, const char *fmt, ...)
{
	va_list ap;

	if (*w->st.note)
		return;
	va_start(ap, fmt);
	vsnprintf(w->st.note, sizeof(w->st.note), fmt, ap);
	va_end(ap);
}

const char *kmt_watch_alloc_filter(const struct kmt_watch_target *t, const char *ev, char *buf,
				   size_t len)
{
	bool km = !strcmp(ev, "kmem:kmalloc");

	switch (t->kind) {
	case KMT_WATCH_CALLSITE:
		snprintf(buf, len, "call_site >= 0x%" PRIx64 " && call_site < 0x%" PRIx64, t->lo, t->hi);
		return buf;
	case KMT_WATCH_CACHE:
		if (km)
			return NULL;
		snprintf(buf, len, "name == \"%s\"", t->name);
		return buf;
	case KMT_WATCH_KMALLOC:
		if (!km)
			return NULL;
		snprintf(buf, len, "bytes_alloc == %" PRIu64, t->size);
		return buf;
	}
	return NULL;
}

/* ---- the control instance ---- */

/* The frees the control instance passes: those of the watched objects. */
static void set_free_filter(struct kmt_watcher *w)
{
	char f[256] = "ptr == 1";	/* nothing (kfree(NULL) is traced: not 0) */
	size_t n = 0;
	int s, i;

	for (s = 0; s < w->nr_slots; s++)
		if (w->slot[s].armed)
			n += (size_t)snprintf(f + n, sizeof(f) - n, "%sptr == 0x%" PRIx64,
					      n ? " || " : "", w->slot[s].c.ptr);
	if (!strcmp(f, w->free_filter))
		return;
	snprintf(w->free_filter, sizeof(w->free_filter), "%s", f);
	for (i = 0; i < 2; i++)
		kmt_instance_event_write(&w->ctl, free_events[i], "filter", f, NULL);
}

static int ctl_start(struct kmt_watcher *w, struct kmt_diag *d)
{
	struct kmt_events evs = { 0 };
	struct kmt_event_filter ef[4];
	char name[64], buf[2][300], sub[32];
	struct kmt_session_opts so = {
		.events = &evs, .pids = w->o.pids, .nr_pids = w->o.nr_pids, .event_filters = ef,
		.buffer_kb = w->o.ctl_buffer_kb ? w->o.ctl_buffer_kb : 1024, .buffer_percent = 100,
		.clock = "mono",
	};
	int i, ret = 0;

	kmt_formats_init(&w->fs);
	for (i = 0; i < 2; i++) {
		const char *f = kmt_watch_alloc_filter(&w->o.target, alloc_events[i], buf[i], sizeof(buf[i]));

		ret = ret ?: kmt_tracefs_add_format(w->o.root, alloc_events[i], &w->fs, d);
		ret = ret ?: kmt_tracefs_add_format(w->o.root, free_events[i], &w->fs, d);
		if (f) {
			evs.v[evs.n++] = (char *)alloc_events[i];
			ef[so.nr_event_filters++] = (struct kmt_event_filter){ alloc_events[i], f };
		}
	}
	/* The list only points at our constants: it is never released. */
	for (i = 0; i < 2; i++) {
		evs.v[evs.n++] = (char *)free_events[i];
		ef[so.nr_event_filters++] = (struct kmt_event_filter){ free_events[i], "ptr == 1" };
	}
	snprintf(w->free_filter, sizeof(w->free_filter), "ptr == 1");
	if (ret)
		return ret;
	snprintf(name, sizeof(name), KMT_INSTANCE_PREFIX "%d-ctl", (int)getpid());
	ret = kmt_instance_create(&w->ctl, w->o.root, name, d);
	ret = ret ?: kmt_session_configure(&w->ctl, &so, NULL, 0, d);
	if (ret)
		return ret;
	w->dec = kmt_decoder_new(&w->fs, false, (int)sizeof(long));
	if (!w->dec)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	ret = kmt_tracefs_page_layout(w->o.root, &w->pl, d);
	if (ret)
		return ret;
	w->page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	if (kmt_instance_read(&w->ctl, "buffer_subbuf_size_kb", sub, sizeof(sub)) > 0)
		w->page_size = (uint32_t)strtoul(sub, NULL, 10) * 1024;
	w->page = malloc(w->page_size);
	if (!w->page)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	for (i = 0; i < w->o.nr_cpus; i++) {
		w->ctl_fd[i] = kmt_instance_open_cpu(w->ctl.path, w->cpus[i], "trace_pipe_raw", O_RDONLY | O_NONBLOCK, d);
		if (w->ctl_fd[i] < 0)
			return w->ctl_fd[i];
	}
	return kmt_session_tracing(&w->ctl, true, d);
}

static void ctl_stop(struct kmt_watcher *w)
{
	int i;

	for (i = 0; w->ctl_fd && i < w->o.nr_cpus; i++)
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

static void note_word(struct kmt_watcher *w, uint32_t off)
{
	uint32_t word = off / 8;

	if (word < KMT_WATCH_MAX_WORDS && !(w->words[word / 8] & (1u << (word % 8)))) {
		w->words[word / 8] |= (uint8_t)(1u << (word % 8));
		w->st.words++;
	}
}

bool kmt_watcher_covered(const struct kmt_watcher *w, uint32_t off)
{
	uint32_t word = off / 8;

	return word < KMT_WATCH_MAX_WORDS && (w->words[word / 8] >> (word % 8)) & 1;
}

/* The newest live candidate at @ptr (an address comes back when reused). */
static struct wcand *cand_find(struct kmt_watcher *w, uint64_t ptr)
{
	int i;

	for (i = 0; i < w->ncand; i++) {
		struct wcand *c = &w->cand[(w->cand_next - 1 - i + WATCH_CANDS) % WATCH_CANDS];

		if (c->ptr == ptr && !c->freed)
			return c;
	}
	return NULL;
}

static bool in_slot(const struct kmt_watcher *w, uint64_t ptr, int except)
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
static struct wcand *pick(struct kmt_watcher *w, int s, bool other)
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
static bool next_offset(struct kmt_watcher *w, int s, const struct wcand *c, uint32_t *off,
			uint32_t *len)
{
	if (!w->o.scan) {
		const struct kmt_watch_offset *o = &w->o.offs[s % w->o.nr_offs];

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

static void slot_off(struct kmt_watcher *w, int s)
{
	struct wslot *sl = &w->slot[s];

	if (!sl->armed)
		return;
	kmt_hwbp_disarm(w->hw, s);
	sl->armed = false;
	if (sl->log_n)
		sl->log[(sl->log_n - 1) % WATCH_LOG].t_off = kmt_now_ns();
}

/* The members a watched word covers: "flags|id" (--type), or the --offset name. */
static const char *field_of(struct kmt_watcher *w, int s, uint32_t off, uint32_t wlen, char *buf,
			    size_t len)
{
	char name[48], last[48] = "";
	size_t n = 0;
	uint32_t i;

	if (!w->o.scan && w->o.offs[s % w->o.nr_offs].field[0])
		return w->o.offs[s % w->o.nr_offs].field;
	buf[0] = 0;
	for (i = 0; w->o.btf && w->o.type && i < wlen; i++) {
		if (kmt_btf_name_at(w->o.btf, w->o.type, off + i, name, sizeof(name)) <= 0 ||
		    !strcmp(name, last))
			continue;
		n += (size_t)snprintf(buf + n, len > n ? len - n : 0, "%s%s", n ? "|" : "", name);
		snprintf(last, sizeof(last), "%s", name);
		if (n >= len)
			break;
	}
	return buf;
}

static int slot_on(struct kmt_watcher *w, int s, struct wcand *c, uint32_t off, uint32_t len)
{
	struct wslot *sl = &w->slot[s];
	struct wassign *a;
	struct kmt_diag d = { 0 };
	char field[48];
	uint64_t t = kmt_now_ns();

	/*
	 * Moving a watchpoint takes microseconds: the old word's window closes
	 * after the move, the new one's opens before it (the addresses differ).
	 */
	if (kmt_hwbp_arm(w->hw, s, c->ptr + off, len, &d)) {
		sl->armed = false;
		return d.err;
	}
	if (sl->armed && sl->log_n)
		sl->log[(sl->log_n - 1) % WATCH_LOG].t_off = kmt_now_ns();
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
	w->st.rearms++;
	note_word(w, off);
	if (off + len > w->st.max_off)
		w->st.max_off = off + len;
	if (!c->watched) {
		c->watched = true;
		w->st.objects++;
	}
	return 0;
}

/* Give slot @s work: a new object, or with --scan possibly the next word. */
static void assign(struct kmt_watcher *w, int s, bool dwell_over)
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
	} else if (w->o.max_objects && w->st.objects >= w->o.max_objects) {
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
		if (sl->armed)
			slot_off(w, s);
		return;
	}
	ret = slot_on(w, s, c, off, len);
	if (ret) {
		note(w, "cannot set watchpoint %d: %s; went on with %d", s + 1, strerror(-ret), s);
		w->nr_slots = s;	/* the debug registers are taken */
	}
}

static void fill_slots(struct kmt_watcher *w)
{
	int s;

	for (s = 0; s < w->nr_slots; s++)
		if (!w->slot[s].armed)
			assign(w, s, false);
	set_free_filter(w);
}

static void on_alloc(struct kmt_watcher *w, const struct kmt_event *ev)
{
	struct wcand *c = &w->cand[w->cand_next];

	if (!ev->ptr)
		return;
	w->st.allocs_seen++;
	memset(c, 0, sizeof(*c));
	c->ptr = ev->ptr;
	c->ts = ev->ts;
	c->size = (uint32_t)MIN(ev->bytes_alloc, (uint64_t)UINT32_MAX);
	w->cand_next = (w->cand_next + 1) % WATCH_CANDS;
	if (w->ncand < WATCH_CANDS)
		w->ncand++;
}

static void on_free(struct kmt_watcher *w, const struct kmt_event *ev)
{
	int i, s;

	for (i = 0; i < w->ncand; i++)
		if (w->cand[i].ptr == ev->ptr)
			w->cand[i].freed = true;
	for (s = 0; s < w->nr_slots; s++)
		if (w->slot[s].armed && w->slot[s].c.ptr == ev->ptr)
			slot_off(w, s);
}

static void ctl_read(struct kmt_watcher *w)
{
	int i;

	for (i = 0; i < w->o.nr_cpus; i++) {
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
				if (kmt_decode(w->dec, &rec, w->cpus[i], &ev) <= 0)
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
	return write_all(*(int *)arg, page, size);
}

static const struct wassign *assignment(const struct kmt_watcher *w, const struct kmt_hwbp_hit *h)
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

static int cpu_index(const struct kmt_watcher *w, int cpu)
{
	int i;

	for (i = 0; i < w->o.nr_cpus; i++)
		if (w->cpus[i] == cpu)
			return i;
	return -1;
}

static void on_hit(void *arg, const struct kmt_hwbp_hit *h)
{
	struct kmt_watcher *w = arg;
	const struct wassign *a = assignment(w, h);
	int i = cpu_index(w, h->cpu), ret;
	struct kmt_access acc;
	uint8_t rec[KMT_ACCESS_MAX];

	w->st.hits++;
	if (!a || i < 0) {
		w->st.unmapped++;
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
		note(w, "cannot write a sample: %s", strerror(-ret));
	}
	w->acc_n[i]++;
}

/* ---- life ---- */

static int alloc_cpus(struct kmt_watcher *w)
{
	size_t n = (size_t)w->o.nr_cpus;
	size_t i;

	w->cpus = calloc(n, sizeof(*w->cpus));
	w->ctl_fd = calloc(n, sizeof(*w->ctl_fd));
	w->acc_fd = calloc(n, sizeof(*w->acc_fd));
	w->ring_fds = calloc(n, sizeof(*w->ring_fds));
	w->acc = calloc(n, sizeof(*w->acc));
	w->acc_n = calloc(n, sizeof(*w->acc_n));
	w->acc_lost = calloc(n, sizeof(*w->acc_lost));
	if (!w->cpus || !w->ctl_fd || !w->acc_fd || !w->ring_fds || !w->acc || !w->acc_n ||
	    !w->acc_lost)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		w->cpus[i] = w->o.cpus[i];
		w->ctl_fd[i] = w->acc_fd[i] = -1;
	}
	w->o.cpus = w->cpus;
	return 0;
}

struct kmt_watcher *kmt_watcher_start(const struct kmt_watcher_opts *o, struct kmt_diag *d)
{
	struct kmt_watcher *w = calloc(1, sizeof(*w));
	struct kmt_spool *sp = o->spool;
	int i, ret;

	if (!w) {
		kmt_diag_set(d, -ENOMEM, "out of memory");
		return NULL;
	}
	w->o = *o;
	w->nr_slots = MIN(MAX(o->nr_slots, 1), KMT_HWBP_MAX_SLOTS);
	w->rng = (uint32_t)getpid() * 2654435761u | 1;
	if (o->nr_cpus < 1 || o->nr_cpus > KMT_MAX_CPUS || alloc_cpus(w)) {
		kmt_diag_set(d, -ENOMEM, "out of memory");
		w->o.nr_cpus = 0;
		kmt_watcher_free(w);
		return NULL;
	}
	ret = kmt_spool_add_format(sp, KMT_ACCESS_SYSTEM, KMT_ACCESS_EVENT, kmt_access_format(),
				   strlen(kmt_access_format()), d);
	ret = ret ?: kmt_spool_add_buffer(sp, KMT_SPOOL_ACCESS, d);
	for (i = 0; !ret && i < o->nr_cpus; i++) {
		w->acc_fd[i] = kmt_spool_cpu_create(sp, KMT_SPOOL_ACCESS, w->cpus[i], d);
		ret = w->acc_fd[i] < 0 ? w->acc_fd[i] :
		      kmt_pagew_init(&w->acc[i], 4096, page_out, &w->acc_fd[i]);
	}
	if (!ret) {
		w->hw = kmt_hwbp_open(w->cpus, o->nr_cpus, w->nr_slots, o->ring_pages, d);
		if (!w->hw)
			ret = d->err ? d->err : -EIO;
	}
	ret = ret ?: ctl_start(w, d);
	if (ret) {
		kmt_watcher_free(w);
		return NULL;
	}
	return w;
}

int kmt_watcher_fds(struct kmt_watcher *w, struct pollfd *pf, int max, int *timeout_ms)
{
	uint64_t t = kmt_now_ns(), next = UINT64_MAX;
	int i, n = 0, k = kmt_hwbp_fds(w->hw, w->ring_fds, w->o.nr_cpus);

	for (i = 0; i < k && n < max; i++)
		pf[n++] = (struct pollfd){ w->ring_fds[i], POLLIN, 0 };
	for (i = 0; i < w->nr_slots; i++)
		if (w->slot[i].armed)
			next = MIN(next, w->slot[i].t_on + (uint64_t)(w->o.dwell * 1e9));
	*timeout_ms = next <= t ? 0 : (int)MIN((next - t) / 1000000 + 1, CTL_POLL_MS);
	return n;
}

int kmt_watcher_poll(struct kmt_watcher *w)
{
	uint64_t t;
	int s;

	if (w->stopped)
		return 1;
	ctl_read(w);
	kmt_hwbp_read(w->hw, false, on_hit, w);
	t = kmt_now_ns();
	for (s = 0; s < w->nr_slots; s++)
		if (w->slot[s].armed && t - w->slot[s].t_on >= (uint64_t)(w->o.dwell * 1e9))
			assign(w, s, true);
	if (!w->o.scan && w->o.nr_offs > 1)
		for (s = 1; s < w->nr_slots; s++)
			assign(w, s, false);	/* follow slot 0 */
	fill_slots(w);
	if (w->o.max_objects && w->st.objects >= w->o.max_objects) {
		for (s = 0; s < w->nr_slots; s++)
			if (w->slot[s].armed)
				return 0;
		w->done = true;
		return 1;
	}
	return 0;
}

void kmt_watcher_stop(struct kmt_watcher *w)
{
	char text[256];
	int i, s;

	if (!w || w->stopped)
		return;
	w->stopped = true;
	for (s = 0; s < w->nr_slots; s++)
		slot_off(w, s);
	if (w->hw)
		kmt_hwbp_read(w->hw, true, on_hit, w);
	for (i = 0; i < w->o.nr_cpus; i++) {
		uint64_t lost = w->hw ? kmt_hwbp_lost(w->hw, i) : 0;
		int n;

		if (lost > w->acc_lost[i])
			kmt_pagew_lost(&w->acc[i], (int64_t)(lost - w->acc_lost[i]));
		if (w->acc_fd[i] >= 0) {
			kmt_pagew_flush(&w->acc[i]);
			n = snprintf(text, sizeof(text), "CPU: %d\nsamples: %" PRIu64 "\nlost: %" PRIu64 "\n",
				     w->cpus[i], w->acc_n[i], lost);
			kmt_spool_put_stats(w->o.spool, KMT_SPOOL_ACCESS, w->cpus[i], text, (size_t)n, NULL);
		}
		kmt_pagew_release(&w->acc[i]);
		w->st.lost += lost;
	}
	w->st.slots = w->nr_slots;
	kmt_hwbp_close(w->hw);
	w->hw = NULL;
	ctl_stop(w);
	for (i = 0; i < w->o.nr_cpus; i++)
		if (w->acc_fd[i] >= 0) {
			close(w->acc_fd[i]);
			w->acc_fd[i] = -1;
		}
}

const struct kmt_watcher_stats *kmt_watcher_stats(const struct kmt_watcher *w)
{
	return &w->st;
}

void kmt_watcher_free(struct kmt_watcher *w)
{
	if (!w)
		return;
	if (w->o.nr_cpus)
		kmt_watcher_stop(w);
	free(w->cpus);
	free(w->ctl_fd);
	free(w->acc_fd);
	free(w->ring_fds);
	free(w->acc);
	free(w->acc_n);
	free(w->acc_lost);
	free(w);
}

const char *kmt_watcher_ctl_name(const struct kmt_watcher *w)
{
	return w->ctl.name;
}
