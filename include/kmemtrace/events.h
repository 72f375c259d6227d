/*
 * Which events a recording asks for: names and patterns ("kmem:kmalloc",
 * "kmem:*", "kmem", "kmalloc") expanded against the events this kernel
 * has, the default memory events, the events that name processes, and the
 * kinds of events a recording treats specially.
 */
#ifndef KMEMTRACE_EVENTS_H
#define KMEMTRACE_EVENTS_H

#include <stdbool.h>
#include "kmemtrace.h"

#define KMT_MAX_EVENTS 512

/* A list of concrete events, "system:name". */
struct kmt_events {
	char *v[KMT_MAX_EVENTS];
	int n;
};

void kmt_events_release(struct kmt_events *l);
bool kmt_events_has(const struct kmt_events *l, const char *ev);

/*
 * Expand @spec ("kmem:kmalloc", "kmem:*", "kmem", "kmalloc", comma-separated)
 * against the events tracefs at @root offers, appending to @l. With
 * @optional, events this kernel lacks are skipped silently; otherwise they
 * are KMT_ENOEVENT with the name in @d.
 */
int kmt_events_expand(const char *root, const char *spec, bool optional,
		      struct kmt_events *l, struct kmt_diag *d);

/* The default memory events, and the events that name processes. */
extern const char kmt_events_default[];
extern const char kmt_events_naming[];

/* Allocation events (they get the stacktrace trigger with --stack). */
bool kmt_events_is_alloc(const char *ev);
/* kfree and kmem_cache_free. */
bool kmt_events_is_slab_free(const char *ev);
/* Process naming events (never filtered). */
bool kmt_events_is_naming(const char *ev);

#endif
