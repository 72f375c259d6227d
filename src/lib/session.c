/*
 * Instance setup for a recording and metadata capture
 * (include/kmemtrace/session.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <fnmatch.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/comm.h>
#include <kmemtrace/format.h>
#include <kmemtrace/record.h>
#include <kmemtrace/session.h>
#include "kmt-local.h"

const char kmt_default_events[] =
	"kmem:kmalloc,kmem:kfree,kmem:kmem_cache_alloc,kmem:kmem_cache_free,"
	"kmem:mm_page_alloc,kmem:mm_page_free,kmem:mm_page_free_batched,"
	"percpu:percpu_alloc_percpu,percpu:percpu_free_percpu,"
	/* Kernels before 6.1 trace node allocations separately. */
	"kmem:kmalloc_node,kmem:kmem_cache_alloc_node";
const char kmt_naming_events[] =
	"sched:sched_process_fork,sched:sched_process_exec,sched:sched_process_exit,"
	"task:task_rename,task:task_newtask";

/* Allocation events that get the stacktrace trigger with --stack. */
static const char *const alloc_events[] = {
	"kmem:kmalloc", "kmem:kmalloc_node", "kmem:kmem_cache_alloc",
	"kmem:kmem_cache_alloc_node", "kmem:mm_page_alloc", "percpu:percpu_alloc_percpu",
};

void kmt_event_list_release(struct kmt_event_list *l)
{
	int i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	l->n = 0;
}

bool kmt_event_list_has(const struct kmt_event_list *l, const char *ev)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], ev))
			return true;
	return false;
}

static int list_add(struct kmt_event_list *l, const char *sys, const char *name,
		    struct kmt_diag *d)
{
	char ev[600];

	snprintf(ev, sizeof(ev), "%s:%s", sys, name);
	if (kmt_event_list_has(l, ev))
		return 0;
	if (l->n >= KMT_MAX_EVENTS)
		return kmt_diag_set(d, -E2BIG, "more than %d events", KMT_MAX_EVENTS);
	l->v[l->n] = strdup(ev);
	if (!l->v[l->n])
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	l->n++;
	return 0;
}

static bool is_event_dir(const char *root, const char *sys, const char *name)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, sys, name);
	return access(path, F_OK) == 0;
}

/* Add every event of @sys (all of them when @sys is NULL and @name given). */
static int add_matching(const char *root, const char *sys, const char *name,
			struct kmt_event_list *l, int *found, struct kmt_diag *d)
{
	char path[1024];
	struct dirent *sde, *ede;
	DIR *sd, *ed;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/events", root);
	sd = opendir(path);
	if (!sd)
		return kmt_diag_set(d, -errno, "cannot list %s: %s", path, strerror(errno));
	while (!ret && (sde = readdir(sd))) {
		if (sde->d_name[0] == '.' || (sys && fnmatch(sys, sde->d_name, 0)))
			continue;
		snprintf(path, sizeof(path), "%s/events/%s", root, sde->d_name);
		ed = opendir(path);
		if (!ed)
			continue;
		while (!ret && (ede = readdir(ed))) {
			if (ede->d_name[0] == '.' || (name && fnmatch(name, ede->d_name, 0)))
				continue;
			if (!is_event_dir(root, sde->d_name, ede->d_name))
				continue;
			ret = list_add(l, sde->d_name, ede->d_name, d);
			(*found)++;
		}
		closedir(ed);
	}
	closedir(sd);
	return ret;
}

int kmt_events_expand(const char *root, const char *spec, bool optional,
		      struct kmt_event_list *l, struct kmt_diag *d)
{
	char *copy = strdup(spec), *tok, *save = NULL;
	int ret = 0;

	if (!copy)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	for (tok = strtok_r(copy, ", ", &save); tok && !ret; tok = strtok_r(NULL, ", ", &save)) {
		char *colon = strchr(tok, ':');
		int found = 0;

		if (colon) {
			*colon = '\0';
			if (!colon[1])
				ret = add_matching(root, tok, NULL, l, &found, d);
			else
				ret = add_matching(root, tok, colon + 1, l, &found, d);
			*colon = ':';
		} else {
			char path[1024];

			snprintf(path, sizeof(path), "%s/events/%s", root, tok);
			if (!access(path, F_OK) && strcmp(tok, "enable"))
				ret = add_matching(root, tok, NULL, l, &found, d);
			else
				ret = add_matching(root, NULL, tok, l, &found, d);
		}
		if (!ret && !found && !optional)
			ret = kmt_diag_set(d, KMT_ENOEVENT, "no event '%s' on this kernel "
					   "(see 'kmemtrace record --list')", tok);
	}
	free(copy);
	return ret;
}

static int read_format(const char *root, const char *ev, struct sbuf *out)
{
	char path[1024], sys[256];
	const char *colon = strchr(ev, ':');

	snprintf(sys, sizeof(sys), "%.*s", (int)(colon - ev), ev);
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, sys, colon + 1);
	return read_file(path, out);
}

/* Does the format of @ev have every identifier used in @filter? */
static bool filter_fits(const char *root, const char *ev, const char *filter)
{
	struct sbuf text = { 0 };
	struct kmt_format fmt;
	const char *p = filter;
	bool fits = true;

	if (read_format(root, ev, &text) || kmt_format_parse(&fmt, "x", text.buf, text.len, NULL)) {
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

static bool is_alloc_event(const char *ev)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(alloc_events); i++)
		if (!strcmp(ev, alloc_events[i]))
			return true;
	return false;
}

static bool is_slab_free_event(const char *ev)
{
	return !strcmp(ev, "kmem:kfree") || !strcmp(ev, "kmem:kmem_cache_free");
}

static bool is_naming_event(const char *ev)
{
	return strstr(kmt_naming_events, ev) != NULL;
}

static int event_file(const struct kmt_instance *in, const char *ev, const char *file,
		      const char *val, struct kmt_diag *d)
{
	char rel[512];
	const char *colon = strchr(ev, ':');

	snprintf(rel, sizeof(rel), "events/%.*s/%s/%s", (int)(colon - ev), ev, colon + 1, file);
	return kmt_instance_write(in, rel, val, d);
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
		if (!filt && o->filter && !is_naming_event(ev))
			filt = filter_fits(root, ev, o->filter);
		if (filt && is_alloc_event(ev))
			p |= KMT_PARTIAL_ALLOCS;
		if (filt && is_slab_free_event(ev))
			p |= KMT_PARTIAL_FREES;
	}
	if (!kmt_event_list_has(o->events, "kmem:kfree") ||
	    !kmt_event_list_has(o->events, "kmem:kmem_cache_free"))
		p |= KMT_PARTIAL_FREES;
	return p;
}

int kmt_session_tracing(const struct kmt_instance *in, bool on, struct kmt_diag *d)
{
	return kmt_instance_write(in, "tracing_on", on ? "1" : "0", d);
}

static int write_pids(const struct kmt_instance *in, const char *file, const pid_t *pids, int n,
		      struct kmt_diag *d)
{
	char buf[4096] = "";
	size_t len = 0;
	int i;

	for (i = 0; i < n && len < sizeof(buf) - 16; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d", i ? " " : "", (int)pids[i]);
	return kmt_instance_write(in, file, buf, d);
}

int kmt_session_exclude(const struct kmt_instance *in, const pid_t *tids, int n,
			struct kmt_diag *d)
{
	if (!kmt_instance_has(in, "set_event_notrace_pid"))
		return 0;	/* kernels before 5.8: the recorder's events stay in */
	return write_pids(in, "set_event_notrace_pid", tids, n, d);
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
	if (!ret && o->buffer_kb) {
		snprintf(val, sizeof(val), "%u", o->buffer_kb);
		ret = kmt_instance_write(in, "buffer_size_kb", val, d);
	}
	if (!ret && kmt_instance_has(in, "buffer_percent")) {
		snprintf(val, sizeof(val), "%u", o->buffer_percent);
		ret = kmt_instance_write(in, "buffer_percent", val, d);
	}
	if (!ret && o->clock)
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
			ret = event_file(in, ev, "filter", ef, d);
			filt = true;
			filtered++;
		} else if (o->filter && !is_naming_event(ev)) {
			filt = filter_fits(in->root, ev, o->filter);
			if (filt) {
				ret = event_file(in, ev, "filter", o->filter, d);
				filtered++;
			} else if (nl < notes_len) {
				nl += (size_t)snprintf(notes + nl, notes_len - nl,
						       "filter not applied to %s (it lacks a field the filter names)\n", ev);
			}
		}
		if (!ret && o->stack && is_alloc_event(ev)) {
			char trig[4200];

			snprintf(trig, sizeof(trig), "stacktrace%s%s", filt ? " if " : "",
				 filt ? ef ? ef : o->filter : "");
			ret = event_file(in, ev, "trigger", trig, d);
		}
		if (!ret)
			ret = event_file(in, ev, "enable", "1", d);
	}
	if (!ret && o->filter && !filtered)
		ret = kmt_diag_set(d, -EINVAL, "filter '%s' names fields that none of the recorded events has",
				   o->filter);
	return ret;
}

static int save_from(const char *dir, const char *name, const char *path, struct kmt_diag *d)
{
	struct sbuf sb = { 0 };
	int ret = read_file(path, &sb);

	if (ret) {
		sbuf_release(&sb);
		return kmt_diag_set(d, ret, "cannot read %s: %s", path, strerror(-ret));
	}
	ret = kmt_spool_put(dir, name, sb.buf, sb.len, d);
	sbuf_release(&sb);
	return ret;
}

/* The names of running processes and threads, "pid comm" lines. */
static int save_comms(const char *dir, struct kmt_diag *d)
{
	struct kmt_comms *c = kmt_comms_new();
	struct dirent *pe, *te;
	char path[1024], *text;
	size_t len;
	DIR *pd, *td;
	int ret;

	if (!c)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	pd = opendir("/proc");
	while (pd && (pe = readdir(pd))) {
		if (!isdigit((unsigned char)pe->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", pe->d_name);
		td = opendir(path);
		while (td && (te = readdir(td))) {
			struct sbuf sb = { 0 };

			if (!isdigit((unsigned char)te->d_name[0]))
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%s/comm", pe->d_name, te->d_name);
			if (!read_file(path, &sb) && sb.len)
				kmt_comms_set(c, atoi(te->d_name), sb.buf, strcspn(sb.buf, "\n"));
			sbuf_release(&sb);
		}
		if (td)
			closedir(td);
	}
	if (pd)
		closedir(pd);
	text = kmt_comms_format(c, &len);
	ret = text ? kmt_spool_put(dir, "cmdlines", text, len, d) : kmt_diag_set(d, -ENOMEM, "out of memory");
	free(text);
	kmt_comms_free(c);
	return ret;
}

static int save_formats(const char *root, const struct kmt_event_list *events, const char *dir,
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
		ret = read_format(root, events->v[i], &sb);
		if (ret)
			ret = kmt_diag_set(d, ret, "cannot read the format of %s: %s", events->v[i],
					   strerror(-ret));
		else
			ret = kmt_spool_add_format(dir, sys, colon + 1, sb.buf, sb.len, d);
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
			ret = kmt_spool_add_format(dir, "ftrace", de->d_name, sb.buf, sb.len, d);
		sbuf_release(&sb);
	}
	if (dp)
		closedir(dp);
	return ret;
}

int kmt_session_capture(const struct kmt_instance *in, const struct kmt_event_list *events,
			const char *dir, const int *cpus, int nr_cpus, uint32_t subbuf,
			struct kmt_diag *d)
{
	char path[1024], list[4096] = "", clock[64] = "local", *l, *r;
	struct utsname u;
	size_t n = 0;
	int i, ret;

	kmt_spool_meta(dir, "kmemtrace", "%s", KMT_VERSION);
	kmt_spool_meta(dir, "pid", "%d", (int)getpid());
	kmt_spool_meta(dir, "instance", "%s", in->name);
	kmt_spool_meta(dir, "created", "%ld", (long)time(NULL));
	if (!uname(&u))
		kmt_spool_meta(dir, "uname", "%s %s %s %s", u.sysname, u.nodename, u.release, u.machine);
	kmt_spool_meta(dir, "page_size", "%ld", sysconf(_SC_PAGESIZE));
	kmt_spool_meta(dir, "long_size", "%zu", sizeof(long));
	kmt_spool_meta(dir, "subbuf_size", "%u", subbuf);
	for (i = 0; i < nr_cpus; i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%d", i ? " " : "", cpus[i]);
	kmt_spool_meta(dir, "cpus", "%s", list);
	if (kmt_instance_read(in, "trace_clock", path, sizeof(path)) > 0 &&
	    (l = strchr(path, '[')) && (r = strchr(l, ']'))) {
		*r = '\0';
		snprintf(clock, sizeof(clock), "%s", l + 1);
		*r = ']';
	}
	ret = kmt_spool_meta(dir, "clock", "%s", clock);
	if (ret)
		return kmt_diag_set(d, ret, "cannot write '%s/meta': %s", dir, strerror(-ret));
	snprintf(path, sizeof(path), "%s/events/header_page", in->root);
	ret = save_from(dir, "header_page", path, d);
	snprintf(path, sizeof(path), "%s/events/header_event", in->root);
	ret = ret ?: save_from(dir, "header_event", path, d);
	snprintf(path, sizeof(path), "%s/trace_clock", in->path);
	ret = ret ?: save_from(dir, "trace_clock", path, d);
	snprintf(path, sizeof(path), "%s/printk_formats", in->root);
	ret = ret ?: save_from(dir, "printk", path, d);
	ret = ret ?: save_from(dir, "kallsyms", "/proc/kallsyms", d);
	ret = ret ?: save_formats(in->root, events, dir, d);
	ret = ret ?: save_comms(dir, d);
	return ret;
}

int kmt_session_save_stats(const struct kmt_instance *in, const char *dir, const int *cpus,
			   int nr_cpus, struct kmt_diag *d)
{
	char rel[64], name[32], buf[4096], text[4200];
	int i, n, ret = 0;

	for (i = 0; i < nr_cpus && !ret; i++) {
		snprintf(rel, sizeof(rel), "per_cpu/cpu%d/stats", cpus[i]);
		n = kmt_instance_read(in, rel, buf, sizeof(buf));
		if (n < 0)
			return kmt_diag_set(d, n, "cannot read %s/%s", in->path, rel);
		n = snprintf(text, sizeof(text), "CPU: %d\n%s", cpus[i], buf);
		snprintf(name, sizeof(name), "stats%d", cpus[i]);
		ret = kmt_spool_put(dir, name, text, (size_t)n, d);
	}
	return ret;
}

int kmt_tracefs_load_format(const char *root, const char *ev, struct kmt_formats *fs,
			    struct kmt_diag *d)
{
	const char *colon = strchr(ev, ':');
	char sys[128];
	struct kmt_format fmt;
	struct sbuf sb = { 0 };
	int ret;

	if (!colon)
		return kmt_diag_set(d, -EINVAL, "bad event name '%s'", ev);
	snprintf(sys, sizeof(sys), "%.*s", (int)(colon - ev), ev);
	ret = read_format(root, ev, &sb);
	if (ret) {
		sbuf_release(&sb);
		return kmt_diag_set(d, ret, "cannot read the format of %s: %s", ev, strerror(-ret));
	}
	ret = kmt_format_parse(&fmt, sys, sb.buf, sb.len, d);
	sbuf_release(&sb);
	if (ret)
		return ret;
	ret = kmt_formats_add(fs, &fmt);
	kmt_format_release(&fmt);
	return ret ? kmt_diag_set(d, ret, "out of memory") : 0;
}

int kmt_tracefs_page_layout(const char *root, struct kmt_page_layout *pl, struct kmt_diag *d)
{
	char path[512];
	struct sbuf sb = { 0 };
	int ret;

	snprintf(path, sizeof(path), "%s/events/header_page", root);
	ret = read_file(path, &sb);
	if (ret)
		ret = kmt_diag_set(d, ret, "cannot read '%s': %s", path, strerror(-ret));
	else
		ret = kmt_page_layout_parse(pl, sb.buf, sb.len, d);
	sbuf_release(&sb);
	return ret;
}

int kmt_online_cpus(int *cpus, int max)
{
	struct sbuf sb = { 0 };
	const char *p;
	int n = 0;

	if (read_file("/sys/devices/system/cpu/online", &sb)) {
		long i, nc = sysconf(_SC_NPROCESSORS_ONLN);

		for (i = 0; i < nc && n < max; i++)
			cpus[n++] = (int)i;
		return n;
	}
	for (p = sb.buf; *p && n < max;) {
		char *end;
		long a = strtol(p, &end, 10), b = a, i;

		if (end == p)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (i = a; i <= b && n < max; i++)
			cpus[n++] = (int)i;
		p = *end == ',' ? end + 1 : end;
		if (*p == '\n')
			break;
	}
	sbuf_release(&sb);
	return n;
}
