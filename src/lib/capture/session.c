/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Instance setup for a recording and metadata capture
 * (include/kmemtrace/capture.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <fnmatch.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/event.h>
#include <kmemtrace/tracefile.h>
#include <kmemtrace/capture.h>
#include <kmemtrace/tracefs.h>
#include "base/kmt-local.h"

/* Does the format of @ev have every identifier used in @filter? */
static bool filter_fits(const char *root, const char *ev, const char *filter)
{
	struct sbuf text = { 0 };
	struct kmt_format fmt;
	const char *p = filter;
	bool fits = true;

	if (tracefs_format_text(root, ev, &text) || kmt_format_parse(&fmt, "x", text.buf, text.len, NULL)) {
		sbuf_release(&text);
		return false;
	}
	while (*p && fits) {
		if (*p == '"' || *p == '\'') {
			char q = *p++;

			while (*p && *p != q)
				p += (*p == '\\' && p[1]) ? 2 : 1;
			if (*p)
				p++;
		} else if (isalpha((unsigned char)*p) || *p == '_') {
			const char *s = p;
			char id[128];

			while (isalnum((unsigned char)*p) || *p == '_')
				p++;
			snprintf(id, sizeof(id), "%.*s", (int)(p - s), s);
			fits = kmt_format_field(&fmt, id) != NULL;
		} else if (isdigit((unsigned char)*p)) {
			while (isalnum((unsigned char)*p))
				p++;	/* 0x1f, 12 */
		} else {
			p++;
		}
	}
	kmt_format_release(&fmt);
	sbuf_release(&text);
	return fits;
}

unsigned int kmt_session_partial(const char *root, const struct kmt_session_opts *o)
{
	unsigned int p = 0;
	int i, k;

	if (o->nr_pids)
		return KMT_PARTIAL_ALLOCS | KMT_PARTIAL_FREES;
	for (i = 0; i < o->events->n; i++) {
		const char *ev = o->events->v[i];
		bool filt = false;

		for (k = 0; k < o->nr_event_filters; k++)
			filt |= !strcmp(o->event_filters[k].event, ev);
		if (!filt && o->filter && !kmt_events_is_naming(ev))
			filt = filter_fits(root, ev, o->filter);
		if (filt && kmt_events_is_alloc(ev))
			p |= KMT_PARTIAL_ALLOCS;
		if (filt && kmt_events_is_slab_free(ev))
			p |= KMT_PARTIAL_FREES;
	}
	if (!kmt_events_has(o->events, "kmem:kfree") ||
	    !kmt_events_has(o->events, "kmem:kmem_cache_free"))
		p |= KMT_PARTIAL_FREES;
	return p;
}

int kmt_session_tracing(const struct kmt_instance *in, bool on, struct kmt_diag *d)
{
	return kmt_instance_write(in, "tracing_on", on ? "1" : "0", d);
}

/*
 * @pids into @file (set_event_pid ...), in writes of up to a page: a write
 * without O_TRUNC adds to the kernel's list (trace_pid_write()).
 */
static int write_pids(const struct kmt_instance *in, const char *file, const pid_t *pids, int n,
		      struct kmt_diag *d)
{
	char buf[4096];
	size_t len;
	int i = 0, ret = 0;

	while (!ret && i < n) {
		for (len = 0, *buf = '\0'; i < n && len < sizeof(buf) - 16; i++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d", len ? " " : "", (int)pids[i]);
		ret = kmt_instance_write(in, file, buf, d);
	}
	return ret;
}

int kmt_session_exclude(const struct kmt_instance *in, const pid_t *tids, int n,
			struct kmt_diag *d)
{
	if (!kmt_instance_has(in, "set_event_notrace_pid"))
		return 0;	/* kernels before 5.8: the recorder's events stay in */
	return write_pids(in, "set_event_notrace_pid", tids, n, d);
}

/*
 * The stacktrace trigger of allocation event @ev, under the event's filter
 * @filt if any. Sampled stacks (--stack-sample) take no trigger: the
 * sampler (sampler.c) switches the instance's stacktrace option instead.
 */
static void stack_trigger(char *buf, size_t len, const char *filt)
{
	if (filt)
		snprintf(buf, len, "stacktrace if %s", filt);
	else
		snprintf(buf, len, "stacktrace");
}

/* @in's trace clock (the bracketed one in its trace_clock) into @buf; false if unreadable. */
static bool instance_clock(const struct kmt_instance *in, char *buf, size_t len)
{
	char text[512], *l, *r;

	if (kmt_instance_read(in, "trace_clock", text, sizeof(text)) <= 0 || !(l = strchr(text, '[')) ||
	    !(r = strchr(l, ']')))
		return false;
	snprintf(buf, len, "%.*s", (int)(r - l - 1), l + 1);
	return true;
}

/* @in's trace clock is @clock already (a new instance's is "local"): setting it costs ~25 ms. */
static bool clock_is(const struct kmt_instance *in, const char *clock)
{
	char cur[64];

	return instance_clock(in, cur, sizeof(cur)) && !strcmp(cur, clock);
}

int kmt_session_configure(const struct kmt_instance *in, const struct kmt_session_opts *o,
			  char *notes, size_t notes_len, struct kmt_diag *d)
{
	char val[64];
	int i, ret, filtered = 0;
	size_t nl = 0;

	if (notes_len)
		notes[0] = '\0';
	ret = kmt_session_tracing(in, false, d);
	if (!ret && o->buffer_kb)
		ret = kmt_instance_set_buffer_kb(in, o->buffer_kb, d);
	if (!ret && kmt_instance_has(in, "buffer_percent")) {
		snprintf(val, sizeof(val), "%u", o->buffer_percent);
		ret = kmt_instance_write(in, "buffer_percent", val, d);
	}
	if (!ret && o->clock && !clock_is(in, o->clock))
		ret = kmt_instance_write(in, "trace_clock", o->clock, d);
	if (!ret && o->nr_pids) {
		ret = kmt_instance_write(in, "options/event-fork", "1", d);
		ret = ret ?: write_pids(in, "set_event_pid", o->pids, o->nr_pids, d);
	}
	for (i = 0; !ret && i < o->events->n; i++) {
		const char *ev = o->events->v[i];
		const char *ef = NULL;
		bool filt = false;
		int k;

		for (k = 0; k < o->nr_event_filters; k++)
			if (!strcmp(o->event_filters[k].event, ev))
				ef = o->event_filters[k].filter;
		if (ef) {
			ret = kmt_instance_event_write(in, ev, "filter", ef, d);
			filt = true;
			filtered++;
		} else if (o->filter && !kmt_events_is_naming(ev)) {
			filt = filter_fits(in->root, ev, o->filter);
			if (filt) {
				ret = kmt_instance_event_write(in, ev, "filter", o->filter, d);
				filtered++;
			} else if (nl < notes_len) {
				nl += (size_t)snprintf(notes + nl, notes_len - nl, "%s%s", nl ? ", " : "", ev);
			}
		}
		if (!ret && o->stack && o->stack_sample <= 1 && kmt_events_is_alloc(ev)) {
			char trig[4400];

			stack_trigger(trig, sizeof(trig), filt ? ef ? ef : o->filter : NULL);
			ret = kmt_instance_event_write(in, ev, "trigger", trig, d);
		}
		if (!ret)
			ret = kmt_instance_event_write(in, ev, "enable", "1", d);
	}
	if (!ret && o->filter && !filtered)
		ret = kmt_diag_set(d, -EINVAL, "filter '%s' names fields that none of the recorded events has",
				   o->filter);
	if (nl && nl < notes_len) {
		/* One line: the events recorded whole. */
		char *list = strdup(notes);

		if (list)
			snprintf(notes, notes_len, "filter not applied to %s: %s no field it names, so all %s "
				 "events are kept\n", list, strchr(list, ',') ? "they have" : "it has",
				 strchr(list, ',') ? "their" : "its");
		free(list);
	}
	return ret;
}

static int save_from(struct kmt_spool *sp, enum kmt_spool_blob name, const char *path,
		     struct kmt_diag *d)
{
	struct sbuf sb = { 0 };
	int ret = read_file(path, &sb);

	if (ret) {
		sbuf_release(&sb);
		return kmt_diag_set(d, ret, "cannot read %s: %s", path, strerror(-ret));
	}
	ret = kmt_spool_put(sp, name, sb.buf, sb.len, d);
	sbuf_release(&sb);
	return ret;
}

/* The names of running processes and threads, "pid comm" lines. */
static int save_comms(struct kmt_spool *sp, struct kmt_diag *d)
{
	struct kmt_comms *c = kmt_comms_new();
	char *text;
	size_t len;
	int ret;

	if (!c)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	kmt_comms_from_proc(c);
	text = kmt_comms_format(c, &len);
	ret = text ? kmt_spool_put(sp, KMT_SPOOL_CMDLINES, text, len, d) :
		     kmt_diag_set(d, -ENOMEM, "out of memory");
	free(text);
	kmt_comms_free(c);
	return ret;
}

/* The merged slab caches and every cache's sizes, if the kernel says (no /sys/kernel/slab: none). */
static int save_slab_aliases(struct kmt_spool *sp, struct kmt_diag *d)
{
	struct kmt_slab_aliases *a = kmt_slab_aliases_read();
	char *text;
	size_t len;
	int ret;

	if (!a)
		return errno == ENOMEM ? kmt_diag_set(d, -ENOMEM, "out of memory") : 0;
	text = kmt_slab_aliases_format(a, &len);
	ret = text ? kmt_spool_put(sp, KMT_SPOOL_SLAB_ALIASES, text, len, d) :
		     kmt_diag_set(d, -ENOMEM, "out of memory");
	free(text);
	/* Their sizes: what names a cache where kmem_cache_alloc does not (before 6.18). */
	text = ret ? NULL : kmt_slab_caches_format(a, &len);
	if (!ret)
		ret = text ? kmt_spool_put(sp, KMT_SPOOL_SLAB_CACHES, text, len, d) :
			     kmt_diag_set(d, -ENOMEM, "out of memory");
	free(text);
	kmt_slab_aliases_free(a);
	return ret;
}

int kmt_session_save_cgroups(struct kmt_spool *sp, const struct kmt_cgroups *c, struct kmt_diag *d)
{
	size_t len = 0;
	char *text = kmt_cgroups_format(c, &len);
	int ret;

	if (!text)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	ret = kmt_spool_put(sp, KMT_SPOOL_CGROUPS, text, len, d);
	free(text);
	return ret;
}

static int save_formats(const char *root, const struct kmt_events *events, struct kmt_spool *sp,
			struct kmt_diag *d)
{
	struct dirent *de;
	char path[1024];
	DIR *dp;
	int i, ret = 0;

	for (i = 0; i < events->n && !ret; i++) {
		struct sbuf sb = { 0 };
		const char *colon = strchr(events->v[i], ':');
		char sys[256];

		snprintf(sys, sizeof(sys), "%.*s", (int)(colon - events->v[i]), events->v[i]);
		ret = tracefs_format_text(root, events->v[i], &sb);
		if (ret)
			ret = kmt_diag_set(d, ret, "cannot read the format of %s: %s", events->v[i],
					   strerror(-ret));
		else
			ret = kmt_spool_add_format(sp, sys, colon + 1, sb.buf, sb.len, d);
		sbuf_release(&sb);
	}
	/* ftrace's own events: kernel_stack (for --stack) and friends. */
	snprintf(path, sizeof(path), "%s/events/ftrace", root);
	dp = opendir(path);
	while (!ret && dp && (de = readdir(dp))) {
		struct sbuf sb = { 0 };

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/events/ftrace/%s/format", root, de->d_name);
		if (!read_file(path, &sb))
			ret = kmt_spool_add_format(sp, "ftrace", de->d_name, sb.buf, sb.len, d);
		sbuf_release(&sb);
	}
	if (dp)
		closedir(dp);
	return ret;
}

struct kallsyms_read {
	char *text;
	size_t len;
	int err;
	bool started;
};

static void *read_kallsyms(void *arg)
{
	struct kallsyms_read *k = arg;

	k->err = kmt_symbols_read_kernel(&k->text, &k->len);
	return NULL;
}

int kmt_session_capture(const struct kmt_instance *in, const struct kmt_events *events,
			struct kmt_spool *sp, struct kmt_spool_meta *m, struct kmt_diag *d)
{
	struct kallsyms_read ks = { 0 };
	char path[1024];
	struct utsname u;
	pthread_t th;
	int ret;

	snprintf(m->version, sizeof(m->version), "%s", KMT_VERSION);
	m->pid = (int32_t)getpid();
	snprintf(m->instance, sizeof(m->instance), "%s", in->name);
	m->created = (int64_t)time(NULL);
	if (!uname(&u))
		snprintf(m->uname, sizeof(m->uname), "%.32s %.64s %.64s %.32s", u.sysname, u.nodename,
			 u.release, u.machine);
	m->page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	m->long_size = (int)sizeof(long);
	if (!instance_clock(in, m->clock, sizeof(m->clock)))
		snprintf(m->clock, sizeof(m->clock), "local");
	ret = kmt_spool_set_meta(sp, m, d);
	snprintf(path, sizeof(path), "%s/events/header_page", in->root);
	ret = ret ?: save_from(sp, KMT_SPOOL_HEADER_PAGE, path, d);
	snprintf(path, sizeof(path), "%s/events/header_event", in->root);
	ret = ret ?: save_from(sp, KMT_SPOOL_HEADER_EVENT, path, d);
	snprintf(path, sizeof(path), "%s/trace_clock", in->path);
	ret = ret ?: save_from(sp, KMT_SPOOL_TRACE_CLOCK, path, d);
	snprintf(path, sizeof(path), "%s/printk_formats", in->root);
	ret = ret ?: save_from(sp, KMT_SPOOL_PRINTK, path, d);
	/* The biggest read (~5 MB, 1600 reads of procfs) beside the others. */
	ks.started = !ret && !pthread_create(&th, NULL, read_kallsyms, &ks);
	if (!ret && !ks.started)
		read_kallsyms(&ks);
	ret = ret ?: save_formats(in->root, events, sp, d);
	ret = ret ?: save_comms(sp, d);
	ret = ret ?: save_slab_aliases(sp, d);
	if (ks.started)
		pthread_join(th, NULL);
	if (!ret && ks.err)
		ret = kmt_diag_set(d, ks.err, "cannot read " KMT_KALLSYMS ": %s", strerror(-ks.err));
	ret = ret ?: kmt_spool_put(sp, KMT_SPOOL_KALLSYMS, ks.text, ks.len, d);
	free(ks.text);
	return ret;
}

struct stats_job {
	const struct kmt_instance *in;
	struct kmt_spool *sp;
	enum kmt_spool_buffer b;
	const int *cpus;
	struct kmt_diag *d;		/* one per CPU */
};

static int save_cpu_stats(void *arg, int i)
{
	struct stats_job *j = arg;
	char buf[4096], text[4200];
	int n = kmt_instance_read_cpu(j->in, j->cpus[i], "stats", buf, sizeof(buf));

	if (n < 0)
		return kmt_diag_set(&j->d[i], n, "cannot read %s/per_cpu/cpu%d/stats", j->in->path,
				    j->cpus[i]);
	n = snprintf(text, sizeof(text), "CPU: %d\n%s", j->cpus[i], buf);
	return kmt_spool_put_stats(j->sp, j->b, j->cpus[i], text, (size_t)n, &j->d[i]);
}

/* Each CPU's on a worker (kmt_parallel): at the end of a recording, after the workload. */
int kmt_session_save_stats(const struct kmt_instance *in, struct kmt_spool *sp,
			   enum kmt_spool_buffer b, const int *cpus, int nr_cpus, struct kmt_diag *d)
{
	struct stats_job j = { .in = in, .sp = sp, .b = b, .cpus = cpus };
	int i, ret;

	j.d = calloc((size_t)(nr_cpus > 0 ? nr_cpus : 1), sizeof(*j.d));
	if (!j.d)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	ret = kmt_parallel(nr_cpus, save_cpu_stats, &j);
	/* The lowest index's error is the one returned. */
	for (i = 0; ret && i < nr_cpus && !j.d[i].err; i++)
		;
	if (ret)
		kmt_diag_set(d, ret, "%s", i < nr_cpus ? j.d[i].msg : strerror(-ret));
	free(j.d);
	return ret;
}
