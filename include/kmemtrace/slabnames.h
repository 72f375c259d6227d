/*
 * Slab cache names: merged caches and kmalloc size classes.
 *
 * The kernel merges caches of the same size and flags: /sys/kernel/slab/
 * NAME is then a link to a shared ":0000512", and the tracepoints report
 * every member by one name, that of the cache created first (the one
 * /proc/slabinfo lists): TCP's skbuff_fclone_cache traffic is reported as
 * pool_workqueue. A recording keeps the groups it found, as text, one
 * group a line, the reported name first:
 *
 *	pool_workqueue mem_cgroup_per_node sgpool-16 skbuff_fclone_cache
 *
 * and readers show such a cache as "pool_workqueue (+mem_cgroup_per_node,
 * sgpool-16, skbuff_fclone_cache)". The text is written and parsed here
 * only.
 */
#ifndef KMEMTRACE_SLABNAMES_H
#define KMEMTRACE_SLABNAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kmemtrace.h"

/* One group of merged caches. */
struct kmt_slab_group {
	const char *name;		/* the name the tracepoints report */
	const char *const *aliases;	/* the others, sorted */
	size_t nr_aliases;
	const char *label;		/* "name (+alias, alias)" */
};

struct kmt_slab_aliases;

/* The groups of the running kernel (/sys/kernel/slab, /proc/slabinfo); NULL + errno. */
struct kmt_slab_aliases *kmt_slab_aliases_read(void);
/* The same from other places (tests): @slab_dir, @slabinfo (NULL: none). */
struct kmt_slab_aliases *kmt_slab_aliases_read_from(const char *slab_dir, const char *slabinfo);
/* From the text above; malformed lines are skipped. NULL + errno on ENOMEM. */
struct kmt_slab_aliases *kmt_slab_aliases_parse(const char *text, size_t len);
/* The text above, malloc'd (caller frees); NULL on ENOMEM. */
char *kmt_slab_aliases_format(const struct kmt_slab_aliases *a, size_t *len);
void kmt_slab_aliases_free(struct kmt_slab_aliases *a);
size_t kmt_slab_aliases_count(const struct kmt_slab_aliases *a);
/* The group @name (@len bytes) is a member of, or NULL; @a may be NULL. */
const struct kmt_slab_group *kmt_slab_group_of(const struct kmt_slab_aliases *a, const char *name,
					       size_t len);

/*
 * kmalloc size classes: "kmalloc-64", "kmalloc-2k" and "kmalloc-2048" name
 * the 2048-byte class; the kernel's own spelling is kmalloc-2k. Returns the
 * size, or 0 if @name is not a kmalloc class name.
 */
uint64_t kmt_kmalloc_class(const char *name);
/* The kernel's name of the class of @size bytes into @buf ("kmalloc-large" past 8 KiB). */
const char *kmt_kmalloc_name(uint64_t size, char *buf, size_t len);
/*
 * The name the tracepoints give cache @name: a kmalloc class in the
 * kernel's spelling, a merged cache's reported name, else @name; into @buf.
 */
const char *kmt_slab_event_name(const struct kmt_slab_aliases *a, const char *name, char *buf,
				size_t len);
/*
 * A cache name given for the running kernel: @out gets the name its
 * events carry (as kmt_slab_event_name()), @merged the group's label if
 * the cache is merged, else "". -EINVAL for a malformed kmalloc class,
 * -ENOENT if the kernel has no such cache (where /sys/kernel/slab says),
 * with the reason in @d.
 */
int kmt_slab_cache_resolve(const char *name, char *out, size_t len, char *merged, size_t mlen,
			   struct kmt_diag *d);

#endif
