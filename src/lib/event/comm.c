/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pid -> comm map: names in the order first seen, found by pid (kmt_map).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmemtrace/event.h>
#include <kmemtrace/base.h>
#include "base/kmt-local.h"

struct centry {
	int32_t pid;
	char name[KMT_COMM_LEN];
	uint64_t ts;			/* when it got the name (kmt_comms_set_at), or 0 */
};

struct kmt_comms {
	struct centry *v;
	size_t n, alloc;
	struct kmt_map by_pid;		/* pid -> index in v */
};

struct kmt_comms *kmt_comms_new(void)
{
	struct kmt_comms *c = calloc(1, sizeof(*c));

	if (!c || kmt_map_init(&c->by_pid, 256)) {
		free(c);
		return NULL;
	}
	return c;
}

void kmt_comms_free(struct kmt_comms *c)
{
	if (!c)
		return;
	free(c->v);
	kmt_map_release(&c->by_pid);
	free(c);
}

static const struct centry *find(const struct kmt_comms *c, int32_t pid)
{
	uint32_t i = kmt_map_get(&c->by_pid, (uint32_t)pid);

	return i == KMT_MAP_NONE ? NULL : &c->v[i];
}

/* The entry of @pid, made if new (NULL on ENOMEM). */
static struct centry *entry(struct kmt_comms *c, int32_t pid)
{
	uint32_t i = kmt_map_get(&c->by_pid, (uint32_t)pid);

	if (i != KMT_MAP_NONE)
		return &c->v[i];
	if (ALLOC_GROW(c->v, c->n + 1, c->alloc, 256))
		return NULL;
	if (kmt_map_put(&c->by_pid, (uint32_t)pid, (uint32_t)c->n))
		return NULL;
	memset(&c->v[c->n], 0, sizeof(c->v[c->n]));
	c->v[c->n].pid = pid;
	return &c->v[c->n++];
}

static void name_entry(struct centry *e, const char *name, size_t len)
{
	len = strnlen(name, MIN(len, (size_t)KMT_COMM_LEN - 1));
	memcpy(e->name, name, len);
	e->name[len] = '\0';
}

int kmt_comms_set(struct kmt_comms *c, int32_t pid, const char *name, size_t len)
{
	struct centry *e = entry(c, pid);

	if (!e)
		return -ENOMEM;
	name_entry(e, name, len);
	return 0;
}

int kmt_comms_set_at(struct kmt_comms *c, int32_t pid, const char *name, size_t len, uint64_t ts)
{
	struct centry *e = entry(c, pid);

	if (!e)
		return -ENOMEM;
	if (ts >= e->ts) {
		name_entry(e, name, len);
		e->ts = ts;
	}
	return 0;
}

int kmt_comms_merge(struct kmt_comms *c, const struct kmt_comms *from)
{
	size_t i;

	for (i = 0; i < from->n; i++) {
		const struct centry *e = &from->v[i];

		if (kmt_comms_set_at(c, e->pid, e->name, sizeof(e->name), e->ts))
			return -ENOMEM;
	}
	return 0;
}

const char *kmt_comms_get(const struct kmt_comms *c, int32_t pid)
{
	const struct centry *e = find(c, pid);

	return e ? e->name : NULL;
}

const char *kmt_comm_name(const struct kmt_comms *c, int32_t pid)
{
	const char *name = c ? kmt_comms_get(c, pid) : NULL;

	return name ? name : pid ? "<...>" : "<idle>";
}

int kmt_comms_parse(struct kmt_comms *c, const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *s = p;
		long pid = 0;
		bool neg = false;

		if (s < le && *s == '-') {
			neg = true;
			s++;
		}
		while (s < le && *s >= '0' && *s <= '9' && pid < 1L << 31)
			pid = pid * 10 + (*s++ - '0');
		if (s > p && s < le && *s == ' ' && pid < 1L << 31) {
			int ret = kmt_comms_set(c, (int32_t)(neg ? -pid : pid), s + 1, (size_t)(le - s - 1));

			if (ret)
				return ret;
		}
		p = le + 1;
	}
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	int32_t x = ((const struct centry *)a)->pid, y = ((const struct centry *)b)->pid;

	return (x > y) - (x < y);
}

char *kmt_comms_format(const struct kmt_comms *c, size_t *len)
{
	struct centry *all = malloc((c->n + 1) * sizeof(*all));
	struct sbuf sb = { 0 };
	size_t i, n = 0;

	if (!all)
		return NULL;
	for (i = 0; i < c->n; i++)
		all[n++] = c->v[i];
	if (n > 1)
		qsort(all, n, sizeof(*all), cmp_pid);
	sbuf_grow(&sb, n * 24);
	for (i = 0; i < n; i++)
		if (sbuf_printf(&sb, "%d %s\n", all[i].pid, all[i].name)) {
			sbuf_release(&sb);
			break;
		}
	free(all);
	if (!sb.buf)
		sb.buf = calloc(1, 1);
	if (len)
		*len = sb.len;
	return sb.buf;
}

size_t kmt_comms_count(const struct kmt_comms *c)
{
	return c->n;
}

void kmt_comm_from_exec(const char *filename, size_t len, char out[KMT_COMM_LEN])
{
	const char *base = filename, *p;
	size_t n;

	if (!filename || !len) {	/* an exec event without a name */
		out[0] = '\0';
		return;
	}
	len = strnlen(filename, len);
	for (p = filename; p < filename + len; p++)
		if (*p == '/')
			base = p + 1;
	n = MIN((size_t)(filename + len - base), (size_t)KMT_COMM_LEN - 1);
	memcpy(out, base, n);
	out[n] = '\0';
}

const char *kmt_event_task_name(const struct kmt_event *ev, char buf[KMT_COMM_LEN], size_t *len)
{
	switch (ev->kind) {
	case KMT_EV_FORK:
	case KMT_EV_RENAME:
	case KMT_EV_NEWTASK:
		*len = ev->str2_len;
		return ev->str2;
	case KMT_EV_EXEC:
		kmt_comm_from_exec(ev->str2, ev->str2_len, buf);
		*len = strlen(buf);
		return buf;
	default:
		return NULL;
	}
}

int kmt_comms_from_proc(struct kmt_comms *c)
{
	struct dirent *pe, *te;
	char path[1024];
	DIR *pd, *td;
	int ret = 0;

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
				ret = ret ?: kmt_comms_set(c, atoi(te->d_name), sb.buf, strcspn(sb.buf, "\n"));
			sbuf_release(&sb);
		}
		if (td)
			closedir(td);
	}
	if (pd)
		closedir(pd);
	return ret;
}
