/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * record --cgroup PATH (record.h): only the tasks of a cgroup and its
 * descendants. The kernel filters by pid (set_event_pid, children through
 * event-fork): the cgroup's threads at the start are the list, and a
 * thread that scans the cgroup every RECORD_CGROUP_SCAN_MS adds each task
 * moved in later (and keeps its cgroup for the file: the kernel's
 * cgroup_attach_task event is the writer's, which the filter may drop).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/event.h>
#include "util/util.h"
#include "record.h"

/* Where hierarchy @v1 (the v1 memory controller's, else cgroup v2) is mounted, into @buf; false: nowhere. */
static bool mount_of(bool v1, char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/mounts", "r");
	char dev[256], dir[PATH_MAX], type[64], opts[1024];
	bool found = false;

	if (!f)
		return false;
	while (!found && fscanf(f, "%255s %4095s %63s %1023s %*[^\n]", dev, dir, type, opts) == 4) {
		char *o, *save = NULL;

		if (!v1) {
			found = !strcmp(type, "cgroup2");
			continue;
		}
		if (strcmp(type, "cgroup"))
			continue;
		for (o = strtok_r(opts, ",", &save); o && !found; o = strtok_r(NULL, ",", &save))
			found = !strcmp(o, "memory");
	}
	fclose(f);
	if (found)
		snprintf(buf, len, "%s", dir);
	return found;
}

int record_cgroup_open(struct record_cgroup *g, const char *spec, struct kmt_diag *d)
{
	const char *path = spec, *c;
	char mnt[PATH_MAX];
	struct stat st;

	memset(g, 0, sizeof(*g));
	g->spec = spec;
	if (!strncmp(spec, "0::", 3)) {
		path = spec + 3;
	} else if (*spec != '/' && (c = strstr(spec, "memory:"))) {
		g->v1 = true;
		path = c + 7;
	} else if (*spec == '/' && !mount_of(false, mnt, sizeof(mnt))) {
		g->v1 = true;	/* "/a": cgroup v2 where it is mounted, else v1 memory */
	}
	if (*path != '/')
		return kmt_diag_set(d, -EINVAL, "bad cgroup '%s' (0::/a/b, memory:/a/b or /a/b)", spec);
	if (!mount_of(g->v1, mnt, sizeof(mnt)))
		return kmt_diag_set(d, -ENOENT, "no cgroup '%s': %s is not mounted", spec,
				    g->v1 ? "the cgroup v1 memory controller" : "cgroup v2");
	if ((size_t)snprintf(g->dir, sizeof(g->dir), "%s%s", mnt, path) >= sizeof(g->dir) ||
	    stat(g->dir, &st) || !S_ISDIR(st.st_mode))
		return kmt_diag_set(d, -ENOENT, "no cgroup '%s' (no directory %s)", spec, g->dir);
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	g->opened = true;
	return 0;
}

/* Is @tid known? If not, add it (kept sorted); -ENOMEM. 1: it is new. */
static int note_tid(struct record_cgroup *g, pid_t tid)
{
	size_t lo = 0, hi = g->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->tids[mid] == tid)
			return 0;
		if (g->tids[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (g->n == g->alloc) {
		size_t na = g->alloc ? g->alloc * 2 : 256;
		pid_t *v = realloc(g->tids, na * sizeof(*v));

		if (!v)
			return -ENOMEM;
		g->tids = v;
		g->alloc = na;
	}
	memmove(g->tids + lo + 1, g->tids + lo, (g->n - lo) * sizeof(*g->tids));
	g->tids[lo] = tid;
	g->n++;
	return 1;
}

/* The threads of cgroup directory @dir and every one below, each to @fn. */
static int scan(struct record_cgroup *g, const char *dir, int (*fn)(struct record_cgroup *g, pid_t tid))
{
	char path[PATH_MAX];
	struct dirent *e;
	FILE *f;
	DIR *dp;
	long tid;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, g->v1 ? "tasks" : "cgroup.threads");
	if ((f = fopen(path, "r"))) {
		while (!ret && fscanf(f, "%ld", &tid) == 1)
			if (tid > 0 && tid <= INT32_MAX)
				ret = fn(g, (pid_t)tid);
		fclose(f);
	}
	if (ret || !(dp = opendir(dir)))
		return ret;	/* a cgroup removed meanwhile: nothing below */
	while (!ret && (e = readdir(dp)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.' &&
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < sizeof(path))
			ret = scan(g, path, fn);
	closedir(dp);
	return ret;
}

int record_cgroup_add(struct record_cgroup *g, pid_t tid)
{
	int ret = note_tid(g, tid);

	return ret < 0 ? ret : 0;
}

static int at_start(struct record_cgroup *g, pid_t tid)
{
	int ret = note_tid(g, tid);

	return ret < 0 ? ret : 0;
}

int record_cgroup_tids(struct record_cgroup *g, struct kmt_diag *d)
{
	int ret = scan(g, g->dir, at_start);

	if (ret)
		return kmt_diag_set(d, ret, "cannot read the tasks of cgroup '%s': %s", g->spec, strerror(-ret));
	g->at_start = g->n;
	return 0;
}

/* A task moved in: recorded from now on, and in the file where it is. */
static int moved_in(struct record_cgroup *g, pid_t tid)
{
	char val[16];
	int ret = note_tid(g, tid);

	if (ret <= 0)
		return ret;
	snprintf(val, sizeof(val), "%d", (int)tid);
	if (kmt_instance_write(g->in, "set_event_pid", val, NULL))
		g->failed++;
	if (g->cgroups)
		ret = kmt_cgroups_read_task(g->cgroups, "/proc", (int32_t)tid);
	g->added++;
	return ret;
}

static void *scan_main(void *arg)
{
	struct record_cgroup *g = arg;
	struct timespec until;
	bool stop = false;

	/* Its own tid first, for the recording to leave out; then it waits for tracing to start. */
	pthread_mutex_lock(&g->mu);
	g->tid = (pid_t)gettid();
	pthread_cond_broadcast(&g->cv);
	while (!g->go && !g->stop)
		pthread_cond_wait(&g->cv, &g->mu);
	stop = g->stop;
	pthread_mutex_unlock(&g->mu);
	while (!stop) {
		if (scan(g, g->dir, moved_in) == -ENOMEM)
			g->failed++;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += RECORD_CGROUP_SCAN_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&g->mu);
		if (!g->stop)
			pthread_cond_timedwait(&g->cv, &g->mu, &until);
		stop = g->stop;
		pthread_mutex_unlock(&g->mu);
	}
	return NULL;
}

int record_cgroup_start(struct record_cgroup *g, const struct kmt_instance *in, struct kmt_diag *d)
{
	int ret;

	g->in = in;
	ret = pthread_create(&g->th, NULL, scan_main, g);
	if (ret)
		return kmt_diag_set(d, -ret, "cannot start the cgroup's scan: %s", strerror(ret));
	g->running = true;
	pthread_mutex_lock(&g->mu);
	while (!g->tid)
		pthread_cond_wait(&g->cv, &g->mu);
	pthread_mutex_unlock(&g->mu);
	return 0;
}

void record_cgroup_go(struct record_cgroup *g, struct kmt_cgroups *c)
{
	pthread_mutex_lock(&g->mu);
	g->cgroups = c;
	g->go = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

void record_cgroup_stop(struct record_cgroup *g)
{
	if (!g->running)
		return;
	pthread_mutex_lock(&g->mu);
	g->stop = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	pthread_join(g->th, NULL);
	g->running = false;
}

void record_cgroup_release(struct record_cgroup *g)
{
	record_cgroup_stop(g);
	if (g->opened) {
		pthread_mutex_destroy(&g->mu);
		pthread_cond_destroy(&g->cv);
	}
	free(g->tids);
	memset(g, 0, sizeof(*g));
}

/* ---- the recording's side (struct recording) ---- */

int record_cgroup_filter(struct recording *rc, const pid_t **pids, int *n, struct kmt_diag *d)
{
	int ret = record_cgroup_tids(&rc->cg, d);

	ret = ret ?: record_cgroup_start(&rc->cg, &rc->in, d);
	/* The scan's thread, left out of the recording, keeps the list from being empty (no filter). */
	if (!ret && (ret = record_cgroup_add(&rc->cg, rc->cg.tid)) < 0)
		kmt_diag_set(d, ret, "out of memory");
	*pids = rc->cg.tids;
	*n = (int)rc->cg.n;
	return ret;
}

int record_cgroups_save(struct recording *rc, struct kmt_diag *d)
{
	int ret;

	if (!(rc->cgroups = kmt_cgroups_new()))
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	ret = kmt_cgroups_from_proc(rc->cgroups, "/proc");
	if (ret == -ENOMEM)
		return kmt_diag_set(d, ret, "out of memory");
	/* No /proc to read (a bare initramfs): the file says the cgroups were not recorded. */
	if (ret) {
		if (!rc->o.quiet)
			fprintf(stderr, "%s: note: cannot read the tasks' cgroups in /proc (%s): the file has no "
				"record of them\n", cmd_name, strerror(-ret));
		kmt_cgroups_free(rc->cgroups);
		rc->cgroups = NULL;
		return rc->o.cgroup ? kmt_diag_set(d, ret, "--cgroup: cannot read the tasks' cgroups in /proc") : 0;
	}
	ret = kmt_session_save_cgroups(rc->spool, rc->cgroups, d);
	if (!ret && rc->o.cgroup)
		record_cgroup_go(&rc->cg, rc->cgroups);
	return ret;
}

void record_cgroups_end(struct recording *rc)
{
	if (!rc->cg.running)
		return;
	record_cgroup_stop(&rc->cg);
	if (rc->cg.added && rc->spool && rc->cgroups)
		kmt_session_save_cgroups(rc->spool, rc->cgroups, NULL);
}
