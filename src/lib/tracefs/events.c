/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which events to record (include/kmemtrace/tracefs.h): names and patterns
 * expanded against the events this kernel has, and the kinds of events a
 * recording treats specially.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <kmemtrace/tracefs.h>
#include "base/kmt-local.h"

const char kmt_events_default[] =
	"kmem:kmalloc,kmem:kfree,kmem:kmem_cache_alloc,kmem:kmem_cache_free,"
	"kmem:mm_page_alloc,kmem:mm_page_free,kmem:mm_page_free_batched,"
	"percpu:percpu_alloc_percpu,percpu:percpu_free_percpu,"
	"vmalloc:alloc_vmap_area,vmalloc:free_vmap_area_noflush,"
	/* Kernels before 6.1 trace node allocations separately. */
	"kmem:kmalloc_node,kmem:kmem_cache_alloc_node";
const char kmt_events_naming[] =
	"sched:sched_process_fork,sched:sched_process_exec,sched:sched_process_exit,"
	"task:task_rename,task:task_newtask,"
	/* Moves between cgroups (forks inherit theirs; the file keeps where each task started). */
	"cgroup:cgroup_attach_task";

/* Allocation events that get the stacktrace trigger with --stack. */
static const char *const alloc_events[] = {
	"kmem:kmalloc", "kmem:kmalloc_node", "kmem:kmem_cache_alloc",
	"kmem:kmem_cache_alloc_node", "kmem:mm_page_alloc", "percpu:percpu_alloc_percpu",
	"vmalloc:alloc_vmap_area",
};

void kmt_events_release(struct kmt_events *l)
{
	int i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	l->n = 0;
}

bool kmt_events_has(const struct kmt_events *l, const char *ev)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], ev))
			return true;
	return false;
}

static int list_add(struct kmt_events *l, const char *sys, const char *name,
		    struct kmt_diag *d)
{
	char ev[600];

	snprintf(ev, sizeof(ev), "%s:%s", sys, name);
	if (kmt_events_has(l, ev))
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
			struct kmt_events *l, int *found, struct kmt_diag *d)
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
		      struct kmt_events *l, struct kmt_diag *d)
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

bool kmt_events_is_alloc(const char *ev)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(alloc_events); i++)
		if (!strcmp(ev, alloc_events[i]))
			return true;
	return false;
}

bool kmt_events_is_slab_free(const char *ev)
{
	return !strcmp(ev, "kmem:kfree") || !strcmp(ev, "kmem:kmem_cache_free");
}

bool kmt_events_is_naming(const char *ev)
{
	return strstr(kmt_events_naming, ev) != NULL;
}

