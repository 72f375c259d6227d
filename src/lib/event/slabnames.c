/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Slab cache names (include/kmemtrace/event.h): the groups of merged
 * caches, read from sysfs or from a recording's text, and the names of
 * kmalloc size classes. A kernel has a few dozen groups of 2 to 8 names,
 * looked up once per cache a trace names: a list searched in order.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kmemtrace/event.h>
#include <kmemtrace/tracefile.h>
#include "base/kmt-local.h"

struct kmt_slab_aliases {
	struct kmt_slab_group *v;
	size_t n;
	struct kmt_slab_cache *caches;	/* the kernel's caches and sizes, by name */
	size_t nr_caches;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Add the group of @names[0..n) (malloc'd strings, taken), @names[0] the
 * reported name. The label and the arrays are one allocation with them.
 */
static int add_group(struct kmt_slab_aliases *a, char **names, size_t n)
{
	struct kmt_slab_group *nv, *g;
	size_t i, len = 0;
	char *label;

	if (n > 2)
		qsort(names + 1, n - 1, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++)
		len += strlen(names[i]) + 3;
	nv = realloc(a->v, (a->n + 1) * sizeof(*nv));
	label = malloc(len + 4);
	if (!nv || !label) {
		free(label);
		if (nv)
			a->v = nv;
		for (i = 0; i < n; i++)
			free(names[i]);
		free(names);
		return -ENOMEM;
	}
	a->v = nv;
	len = (size_t)sprintf(label, "%s (+", names[0]);
	for (i = 1; i < n; i++)
		len += (size_t)sprintf(label + len, "%s%s", i > 1 ? ", " : "", names[i]);
	strcpy(label + len, ")");
	g = &a->v[a->n++];
	g->name = names[0];
	g->aliases = (const char *const *)names + 1;
	g->nr_aliases = n - 1;
	g->label = label;
	return 0;
}

static int add_cache(struct kmt_slab_aliases *a, const char *name, uint32_t object_size, uint32_t size,
		     uint32_t order)
{
	struct kmt_slab_cache *nv = realloc(a->caches, (a->nr_caches + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	a->caches = nv;
	nv = &a->caches[a->nr_caches];
	if (!(nv->name = strdup(name)))
		return -ENOMEM;
	nv->object_size = object_size;
	nv->size = size;
	nv->order = order;
	a->nr_caches++;
	return 0;
}

void kmt_slab_aliases_free(struct kmt_slab_aliases *a)
{
	size_t i, k;

	if (!a)
		return;
	for (i = 0; i < a->n; i++) {
		for (k = 0; k < a->v[i].nr_aliases; k++)
			free((char *)a->v[i].aliases[k]);
		free((char *)a->v[i].name);
		free((void *)(a->v[i].aliases - 1));	/* the names array */
		free((char *)a->v[i].label);
	}
	free(a->v);
	for (i = 0; i < a->nr_caches; i++)
		free((char *)a->caches[i].name);
	free(a->caches);
	free(a);
}

size_t kmt_slab_aliases_count(const struct kmt_slab_aliases *a)
{
	return a ? a->n : 0;
}

struct kmt_slab_aliases *kmt_slab_aliases_parse(const char *text, size_t len)
{
	struct kmt_slab_aliases *a = calloc(1, sizeof(*a));
	const char *p = text, *end = text + len;

	if (!a)
		return NULL;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		char **names = NULL;
		size_t n = 0;

		if (!eol)
			eol = end;
		while (p < eol) {
			size_t w;
			char **nn;

			while (p < eol && *p == ' ')
				p++;
			w = 0;
			while (p + w < eol && p[w] != ' ')
				w++;
			if (!w)
				break;
			nn = realloc(names, (n + 1) * sizeof(*nn));
			if (!nn || !(nn[n] = strndup(p, w))) {
				names = nn ? nn : names;
				goto oom;
			}
			names = nn;
			n++;
			p += w;
		}
		p = eol + 1;
		if (n >= 2) {
			if (add_group(a, names, n))
				goto fail;
		} else {
			while (n)
				free(names[--n]);
			free(names);
		}
		continue;
oom:
		while (n)
			free(names[--n]);
		free(names);
		goto fail;
	}
	return a;
fail:
	kmt_slab_aliases_free(a);
	errno = ENOMEM;
	return NULL;
}

struct kmt_slab_aliases *kmt_slab_aliases_of_file(const struct kmt_file *f)
{
	const struct kmt_file_info *fi = kmt_file_info(f);
	struct kmt_slab_aliases *a;

	a = fi->slab_aliases ? kmt_slab_aliases_parse(fi->slab_aliases, strlen(fi->slab_aliases))
			     : calloc(1, sizeof(*a));
	if (a && fi->slab_caches && kmt_slab_caches_parse(a, fi->slab_caches, strlen(fi->slab_caches))) {
		kmt_slab_aliases_free(a);
		errno = ENOMEM;
		return NULL;
	}
	return a;
}

char *kmt_slab_aliases_format(const struct kmt_slab_aliases *a, size_t *len)
{
	size_t i, k, n = 1;
	char *s, *p;

	for (i = 0; a && i < a->n; i++) {
		n += strlen(a->v[i].name) + 1;
		for (k = 0; k < a->v[i].nr_aliases; k++)
			n += strlen(a->v[i].aliases[k]) + 1;
	}
	if (!(s = p = malloc(n)))
		return NULL;
	for (i = 0; a && i < a->n; i++) {
		p += sprintf(p, "%s", a->v[i].name);
		for (k = 0; k < a->v[i].nr_aliases; k++)
			p += sprintf(p, " %s", a->v[i].aliases[k]);
		*p++ = '\n';
	}
	*p = '\0';
	*len = (size_t)(p - s);
	return s;
}

int kmt_slab_caches_parse(struct kmt_slab_aliases *a, const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		char name[128];
		unsigned int os, sz, order;
		char line[256];
		size_t w;

		if (!eol)
			eol = end;
		w = MIN((size_t)(eol - p), sizeof(line) - 1);
		memcpy(line, p, w);
		line[w] = '\0';
		p = eol + 1;
		if (sscanf(line, "%127s %u %u %u", name, &os, &sz, &order) == 4 &&
		    add_cache(a, name, os, sz, order))
			return -ENOMEM;
	}
	return 0;
}

char *kmt_slab_caches_format(const struct kmt_slab_aliases *a, size_t *len)
{
	size_t i, n = 1;
	char *s, *p;

	for (i = 0; a && i < a->nr_caches; i++)
		n += strlen(a->caches[i].name) + 40;
	if (!(s = p = malloc(n)))
		return NULL;
	for (i = 0; a && i < a->nr_caches; i++)
		p += sprintf(p, "%s %u %u %u\n", a->caches[i].name, a->caches[i].object_size,
			     a->caches[i].size, a->caches[i].order);
	*p = '\0';
	*len = (size_t)(p - s);
	return s;
}

size_t kmt_slab_caches_count(const struct kmt_slab_aliases *a)
{
	return a ? a->nr_caches : 0;
}

size_t kmt_slab_caches_of_size(const struct kmt_slab_aliases *a, uint64_t object_size, uint64_t size,
				const struct kmt_slab_cache **out, size_t max)
{
	size_t i, n = 0;

	for (i = 0; a && i < a->nr_caches; i++)
		if (a->caches[i].object_size == object_size && a->caches[i].size == size) {
			if (n < max)
				out[n] = &a->caches[i];
			n++;
		}
	return n;
}

const struct kmt_slab_cache *kmt_slab_cache_of_size(const struct kmt_slab_aliases *a, uint64_t object_size,
						    uint64_t size, size_t *n)
{
	const struct kmt_slab_cache *found = NULL;
	size_t i;

	*n = 0;
	for (i = 0; a && i < a->nr_caches; i++)
		if (a->caches[i].object_size == object_size && a->caches[i].size == size) {
			found = &a->caches[i];
			(*n)++;
		}
	return *n == 1 ? found : NULL;
}

const struct kmt_slab_group *kmt_slab_group_of(const struct kmt_slab_aliases *a, const char *name,
					       size_t len)
{
	size_t i, k;

	for (i = 0; a && i < a->n; i++) {
		const struct kmt_slab_group *g = &a->v[i];

		if (!strncmp(g->name, name, len) && !g->name[len])
			return g;
		for (k = 0; k < g->nr_aliases; k++)
			if (!strncmp(g->aliases[k], name, len) && !g->aliases[k][len])
				return g;
	}
	return NULL;
}

/* An entry of the slab directory: its name and where it points (a directory: itself). */
struct link {
	char *name;
	char target[64];
	bool listed;			/* in /proc/slabinfo: the reported name */
	bool dir;			/* not a link: a cache of its own */
};

static int cmp_link(const void *a, const void *b)
{
	const struct link *x = a, *y = b;
	int c = strcmp(x->target, y->target);

	if (c)
		return c;
	if (x->listed != y->listed)
		return y->listed - x->listed;	/* the reported name first */
	return strcmp(x->name, y->name);
}

/* Is @name a cache /proc/slabinfo lists (@text: its content)? */
static bool listed(const char *text, const char *name)
{
	size_t len = strlen(name);
	const char *p;

	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == ' ')
			return true;
	return false;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s = NULL;
	size_t n = 0;

	if (!f)
		return NULL;
	if (getdelim(&s, &n, '\0', f) < 0) {
		free(s);
		s = NULL;
	}
	fclose(f);
	return s;
}

/* The number in file @name of cache directory @dir/@cache, or 0. */
static uint32_t slab_num(const char *dir, const char *cache, const char *name)
{
	char path[PATH_MAX], *text;
	uint32_t v;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, cache, name);
	text = slurp(path);
	v = text ? (uint32_t)strtoul(text, NULL, 10) : 0;
	free(text);
	return v;
}

/* A kmalloc cache (its allocations are kmalloc events, named by size class)? */
static bool kmalloc_cache(const char *name)
{
	return !strncmp(name, "kmalloc-", 8) || !strncmp(name, "dma-kmalloc-", 12);
}

struct kmt_slab_aliases *kmt_slab_aliases_read_from(const char *slab_dir, const char *slabinfo)
{
	struct kmt_slab_aliases *a = calloc(1, sizeof(*a));
	char *info = slabinfo ? slurp(slabinfo) : NULL;
	struct link *v = NULL;
	size_t n = 0, cap = 0, i, j;
	struct dirent *de;
	DIR *d = opendir(slab_dir);
	int err = 0;

	if (!a || !d) {
		err = a ? errno : ENOMEM;
		goto out;
	}
	while ((de = readdir(d))) {
		char path[PATH_MAX], target[PATH_MAX];
		const char *base;
		bool dir = de->d_type == DT_DIR;
		ssize_t tl;

		if (de->d_name[0] == '.' || de->d_name[0] == ':' ||
		    (de->d_type != DT_LNK && de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		snprintf(path, sizeof(path), "%s/%s", slab_dir, de->d_name);
		tl = dir ? -1 : readlink(path, target, sizeof(target) - 1);
		if (tl <= 0) {
			struct stat st;

			if (dir || (!stat(path, &st) && S_ISDIR(st.st_mode)))
				dir = true;
			else
				continue;
			snprintf(target, sizeof(target), "%s", de->d_name);
			tl = (ssize_t)strlen(target);
		}
		target[tl] = '\0';
		base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
		if (ALLOC_GROW(v, n + 1, cap, 256)) {
			err = ENOMEM;
			goto out;
		}
		if (!(v[n].name = strdup(de->d_name))) {
			err = ENOMEM;
			goto out;
		}
		snprintf(v[n].target, sizeof(v[n].target), "%.63s", base);
		v[n].listed = info && listed(info, de->d_name);
		v[n].dir = dir;
		n++;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_link);
	for (i = 0; i < n; i = j) {
		char **names;
		size_t k;

		for (j = i; j < n && !strcmp(v[j].target, v[i].target); j++)
			;
		/* The cache, by the name its tracepoints report, and its sizes. */
		if (!kmalloc_cache(v[i].name) &&
		    add_cache(a, v[i].name, slab_num(slab_dir, v[i].name, "object_size"),
			      slab_num(slab_dir, v[i].name, "slab_size"), slab_num(slab_dir, v[i].name, "order"))) {
			err = ENOMEM;
			goto out;
		}
		if (j - i < 2)
			continue;
		if (!(names = malloc((j - i) * sizeof(*names)))) {
			err = ENOMEM;
			goto out;
		}
		for (k = i; k < j; k++) {
			names[k - i] = v[k].name;
			v[k].name = NULL;
		}
		if (add_group(a, names, j - i)) {
			err = ENOMEM;
			goto out;
		}
	}
out:
	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	free(info);
	if (d)
		closedir(d);
	if (err) {
		kmt_slab_aliases_free(a);
		errno = err;
		return NULL;
	}
	return a;
}

struct kmt_slab_aliases *kmt_slab_aliases_read(void)
{
	return kmt_slab_aliases_read_from("/sys/kernel/slab", "/proc/slabinfo");
}

const char *kmt_slab_event_name(const struct kmt_slab_aliases *a, const char *name, char *buf,
				size_t len)
{
	uint64_t size = kmt_kmalloc_class(name);
	const struct kmt_slab_group *g;

	if (size)
		return kmt_kmalloc_name(size, buf, len);
	g = kmt_slab_group_of(a, name, strlen(name));
	snprintf(buf, len, "%s", g ? g->name : name);
	return buf;
}

int kmt_slab_cache_resolve(const char *name, char *out, size_t len, char *merged, size_t mlen,
			   struct kmt_diag *d)
{
	struct kmt_slab_aliases *a;
	const struct kmt_slab_group *g;
	char path[PATH_MAX];

	*merged = '\0';
	if (!strncmp(name, "kmalloc-", 8) && strcmp(name, "kmalloc-large") && !kmt_kmalloc_class(name))
		return kmt_diag_set(d, -EINVAL, "'%.60s' is not a kmalloc size class (kmalloc-64, kmalloc-2k)",
				    name);
	if (kmt_kmalloc_class(name) || !strcmp(name, "kmalloc-large")) {
		kmt_slab_event_name(NULL, name, out, len);
		return 0;
	}
	snprintf(path, sizeof(path), "/sys/kernel/slab/%s", name);
	if (strchr(name, '/') || (!access("/sys/kernel/slab", F_OK) && access(path, F_OK)))
		return kmt_diag_set(d, -ENOENT, "the kernel has no slab cache '%.60s' (see /proc/slabinfo)", name);
	a = kmt_slab_aliases_read();
	g = kmt_slab_group_of(a, name, strlen(name));
	snprintf(out, len, "%s", g ? g->name : name);
	if (g)
		snprintf(merged, mlen, "%s", g->label);
	kmt_slab_aliases_free(a);
	return 0;
}

uint64_t kmt_kmalloc_class(const char *name)
{
	char *end;
	uint64_t size;

	if (strncmp(name, "kmalloc-", 8) || name[8] < '1' || name[8] > '9')
		return 0;
	size = strtoull(name + 8, &end, 10);
	if (*end == 'k')
		size *= 1024, end++;
	return *end ? 0 : size;
}

const char *kmt_kmalloc_name(uint64_t size, char *buf, size_t len)
{
	if (size > 8192)
		snprintf(buf, len, "kmalloc-large");
	else if (size >= 1024 && size % 1024 == 0)
		snprintf(buf, len, "kmalloc-%uk", (unsigned)(size / 1024));
	else
		snprintf(buf, len, "kmalloc-%u", (unsigned)size);
	return buf;
}
