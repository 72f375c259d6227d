/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tasks' cgroups: tid -> (v2 path, v1 memory path, kernel thread), read
 * from /proc when a recording starts or from a trace file's CGROUPS
 * option. Tasks live in a vector found by tid (kmt_map); paths are
 * interned once (kmt_intern, behind a mutex) and shared by every task.
 * Lookups are read-only and may run on several threads once set up.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmemtrace/event.h>
#include <kmemtrace/base.h>
#include "base/kmt-local.h"

#define PF_KTHREAD 0x00200000UL
#define MAGIC "kmemtrace-cgroups"

struct centry {
	int32_t tid;
	struct kmt_cgroup_task t;
};

struct kmt_cgroups {
	VEC(struct centry) tasks;
	struct kmt_map by_tid;		/* tid -> index in tasks */
	struct kmt_intern paths;	/* under lock */
	pthread_mutex_t lock;
	int memory_id;
	bool has_v2;
};

struct kmt_cgroups *kmt_cgroups_new(void)
{
	struct kmt_cgroups *c = calloc(1, sizeof(*c));

	if (!c || kmt_map_init(&c->by_tid, 256)) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	c->memory_id = -1;
	return c;
}

void kmt_cgroups_free(struct kmt_cgroups *c)
{
	if (!c)
		return;
	free(c->tasks.v);
	kmt_map_release(&c->by_tid);
	kmt_intern_release(&c->paths);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

const char *kmt_cgroups_intern(struct kmt_cgroups *c, const char *path, size_t len)
{
	char *copy = xstrndup(path, len);
	const char *s = NULL;
	int64_t id;

	if (!copy)
		return NULL;
	pthread_mutex_lock(&c->lock);
	id = kmt_intern_id(&c->paths, 0, copy);
	if (id >= 0)
		s = c->paths.str[id];
	pthread_mutex_unlock(&c->lock);
	free(copy);
	return s;
}

/* A path as kept: one that starts with '/' and has no tab or newline. */
static bool path_ok(const char *s, size_t len)
{
	return len && s[0] == '/' && !memchr(s, '\t', len) && !memchr(s, '\n', len);
}

/* @s (@len bytes) interned into *@out, or NULL if it is not a path we keep. 0 or -ENOMEM. */
static int set_path(struct kmt_cgroups *c, const char **out, const char *s, size_t len)
{
	*out = NULL;
	if (!path_ok(s, len))
		return 0;
	*out = kmt_cgroups_intern(c, s, len);
	return *out ? 0 : -ENOMEM;
}

/* The task @tid, added if new (NULL on ENOMEM). */
static struct kmt_cgroup_task *entry(struct kmt_cgroups *c, int32_t tid)
{
	uint32_t i = kmt_map_get(&c->by_tid, (uint32_t)tid);
	bool oom = false;

	if (i != KMT_MAP_NONE)
		return &c->tasks.v[i].t;
	i = VEC_PUSH(c->tasks, oom);
	if (oom)
		return NULL;
	if (kmt_map_put(&c->by_tid, (uint32_t)tid, i)) {
		c->tasks.n--;
		return NULL;
	}
	c->tasks.v[i].tid = tid;
	return &c->tasks.v[i].t;
}

/* A decimal in [@min, @max] spanning [@s, @e) exactly. */
static bool parse_num(const char *s, const char *e, long min, long max, long *out)
{
	bool neg = s < e && *s == '-';
	long v = 0;

	if (neg)
		s++;
	if (s == e)
		return false;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9' || v > (LONG_MAX - 9) / 10)
			return false;
		v = v * 10 + (*s - '0');
	}
	v = neg ? -v : v;
	if (v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* Split a /proc cgroup line "ID:CONTROLLERS:PATH"; false if it is not one. */
static bool cg_line(const char *s, const char *e, long *id, const char **ctl, size_t *ctl_len,
		    const char **path)
{
	const char *c1 = memchr(s, ':', (size_t)(e - s)), *c2;

	if (!c1 || !parse_num(s, c1, 0, INT_MAX, id))
		return false;
	c2 = memchr(c1 + 1, ':', (size_t)(e - c1 - 1));
	if (!c2)
		return false;
	*ctl = c1 + 1;
	*ctl_len = (size_t)(c2 - c1 - 1);
	*path = c2 + 1;
	return true;
}

/* Does the comma-separated list @s (@len bytes) name @want? */
static bool has_word(const char *s, size_t len, const char *want)
{
	size_t n = strlen(want);
	const char *e = s + len;

	while (s < e) {
		const char *comma = memchr(s, ',', (size_t)(e - s));
		const char *we = comma ? comma : e;

		if ((size_t)(we - s) == n && !memcmp(s, want, n))
			return true;
		s = comma ? comma + 1 : e;
	}
	return false;
}

/* The layout, from /proc/self/cgroup's text. */
static void read_layout(struct kmt_cgroups *c, const char *s, size_t len)
{
	const char *e = s + len, *ctl, *path;
	size_t ctl_len;
	long id;

	c->memory_id = -1;
	c->has_v2 = false;
	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s)), *le = nl ? nl : e;

		if (cg_line(s, le, &id, &ctl, &ctl_len, &path)) {
			if (id == 0)
				c->has_v2 = true;
			else if (has_word(ctl, ctl_len, "memory"))
				c->memory_id = (int)id;
		}
		s = nl ? nl + 1 : e;
	}
}

/*
 * A task's paths from its cgroup file. A line that is not "ID:CTL:PATH"
 * continues the line before it (a path with a newline): that path is unknown.
 */
static int task_paths(struct kmt_cgroups *c, const char *s, size_t len, struct kmt_cgroup_task *t)
{
	const char *e = s + len, *ctl, *path, **last = NULL;
	size_t ctl_len;
	long id;
	int ret;

	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s)), *le = nl ? nl : e;

		if (!cg_line(s, le, &id, &ctl, &ctl_len, &path)) {
			if (last)
				*last = NULL;
		} else {
			last = id == 0 ? &t->v2 : id == c->memory_id ? &t->memory : NULL;
			if (last && (ret = set_path(c, last, path, (size_t)(le - path))))
				return ret;
		}
		s = nl ? nl + 1 : e;
	}
	return 0;
}

/* Is the task of this /proc/PID/stat text a kernel thread (field 9, flags)? */
static bool stat_kthread(const char *s, size_t len)
{
	const char *p = memrchr(s, ')', len), *e = s + len;
	int field;

	if (!p)
		return false;
	p++;
	for (field = 3; field < 9; field++) {	/* skip state .. tpgid */
		while (p < e && *p == ' ')
			p++;
		while (p < e && *p != ' ')
			p++;
	}
	while (p < e && *p == ' ')
		p++;
	return p < e && isdigit((unsigned char)*p) && (strtoul(p, NULL, 10) & PF_KTHREAD);
}

/* Read @root/@pid/task/@tid/@file into @sb; -errno. */
static int read_task(struct sbuf *sb, const char *root, const char *pid, const char *tid,
		     const char *file)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s/task/%s/%s", root, pid, tid, file) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	return read_file(path, sb);
}

/* Task @tid of process @pid, added; 0 if it is gone, -ENOMEM. */
static int add_task(struct kmt_cgroups *c, struct sbuf *sb, const char *root, const char *pid,
		    const char *tid_s)
{
	struct kmt_cgroup_task t = { 0 }, *e;
	long tid;
	int ret;

	if (!parse_num(tid_s, tid_s + strlen(tid_s), 0, INT32_MAX, &tid))
		return 0;
	ret = read_task(sb, root, pid, tid_s, "stat");
	if (ret)
		return ret == -ENOMEM ? ret : 0;
	t.kthread = stat_kthread(sb->buf, sb->len);
	ret = read_task(sb, root, pid, tid_s, "cgroup");
	if (ret)
		return ret == -ENOMEM ? ret : 0;
	ret = task_paths(c, sb->buf, sb->len, &t);
	if (ret)
		return ret;
	e = entry(c, (int32_t)tid);
	if (!e)
		return -ENOMEM;
	*e = t;
	return 0;
}

int kmt_cgroups_read_task(struct kmt_cgroups *c, const char *proc_root, int32_t tid)
{
	struct sbuf sb = { 0 };
	char id[16];
	int ret;

	snprintf(id, sizeof(id), "%d", (int)tid);
	ret = add_task(c, &sb, proc_root, id, id);
	sbuf_release(&sb);
	return ret;
}

int kmt_cgroups_from_proc(struct kmt_cgroups *c, const char *proc_root)
{
	struct sbuf sb = { 0 };
	struct dirent *pe, *te;
	char path[PATH_MAX];
	DIR *pd, *td;
	int ret;

	if ((size_t)snprintf(path, sizeof(path), "%s/self/cgroup", proc_root) >= sizeof(path))
		return -ENAMETOOLONG;
	ret = read_file(path, &sb);
	if (ret)
		goto out;
	read_layout(c, sb.buf, sb.len);
	pd = opendir(proc_root);
	if (!pd) {
		ret = -errno;
		goto out;
	}
	while (!ret && (pe = readdir(pd))) {
		if (!isdigit((unsigned char)pe->d_name[0]))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s/task", proc_root, pe->d_name) >=
		    sizeof(path))
			continue;
		td = opendir(path);	/* NULL: the process is gone */
		while (!ret && td && (te = readdir(td)))
			if (isdigit((unsigned char)te->d_name[0]))
				ret = add_task(c, &sb, proc_root, pe->d_name, te->d_name);
		if (td)
			closedir(td);
	}
	closedir(pd);
out:
	sbuf_release(&sb);
	return ret;
}

/* One line of the option's text, parsed. */
struct pline {
	enum { L_MAGIC, L_MEMORY, L_V2, L_TASK } kind;
	long val;			/* version, memory id, v2, tid */
	bool kthread;
	const char *f[2];		/* v2 and memory paths, NULL: "-" */
	size_t n[2];
};

/* The value of "@key N" in [@min, @max]; false if the line is another. */
static bool key_line(const char *s, const char *e, const char *key, long min, long max, long *v)
{
	size_t n = strlen(key);

	return (size_t)(e - s) > n && !memcmp(s, key, n) && s[n] == ' ' &&
	       parse_num(s + n + 1, e, min, max, v);
}

static int parse_line(const char *s, const char *e, struct pline *l)
{
	const char *t[4];
	int i;

	memset(l, 0, sizeof(*l));
	if (memchr(s, '\0', (size_t)(e - s)))
		return KMT_EFORMAT;
	if (key_line(s, e, MAGIC, 1, 1, &l->val))
		l->kind = L_MAGIC;
	else if (key_line(s, e, "memory", -1, INT_MAX, &l->val))
		l->kind = L_MEMORY;
	else if (key_line(s, e, "v2", 0, 1, &l->val))
		l->kind = L_V2;
	else
		goto task;
	return 0;
task:
	/* TID FLAGS V2PATH MEMPATH, by tabs (a fifth fails path_ok). */
	t[0] = s;
	for (i = 1; i < 4; i++) {
		const char *tab = memchr(t[i - 1], '\t', (size_t)(e - t[i - 1]));

		if (!tab)
			return KMT_EFORMAT;
		t[i] = tab + 1;
	}
	if (!parse_num(t[0], t[1] - 1, 0, INT32_MAX, &l->val) || *t[0] == '-' ||
	    t[2] - t[1] != 2 || (*t[1] != 'k' && *t[1] != '-'))
		return KMT_EFORMAT;
	l->kind = L_TASK;
	l->kthread = *t[1] == 'k';
	for (i = 0; i < 2; i++) {
		const char *fs = t[2 + i], *fe = i ? e : t[3] - 1;

		if (fe - fs == 1 && *fs == '-')
			continue;
		if (!path_ok(fs, (size_t)(fe - fs)))
			return KMT_EFORMAT;
		l->f[i] = fs;
		l->n[i] = (size_t)(fe - fs);
	}
	return 0;
}

/* Check (@apply false) or take in (@apply true) every line of @text. */
static int parse_all(struct kmt_cgroups *c, const char *text, size_t len, bool apply)
{
	const char *p = text, *end = text + len;
	struct pline l;
	int ret, line;

	for (line = 0; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		struct kmt_cgroup_task *t;

		ret = parse_line(p, le, &l);
		if (ret || (l.kind == L_MAGIC) != !line)
			return KMT_EFORMAT;
		p = nl ? nl + 1 : end;
		if (!apply)
			continue;
		if (l.kind == L_MEMORY)
			c->memory_id = (int)l.val;
		else if (l.kind == L_V2)
			c->has_v2 = l.val;
		if (l.kind != L_TASK)
			continue;
		t = entry(c, (int32_t)l.val);
		if (!t || set_path(c, &t->v2, l.f[0], l.n[0]) ||
		    set_path(c, &t->memory, l.f[1], l.n[1]))
			return -ENOMEM;
		t->kthread = l.kthread;
	}
	return 0;
}

int kmt_cgroups_parse(struct kmt_cgroups *c, const char *text, size_t len)
{
	int ret = parse_all(c, text, len, false);

	return ret ? ret : parse_all(c, text, len, true);
}

static int cmp_tid(const void *a, const void *b)
{
	int32_t x = ((const struct centry *)a)->tid, y = ((const struct centry *)b)->tid;

	return (x > y) - (x < y);
}

char *kmt_cgroups_format(const struct kmt_cgroups *c, size_t *len)
{
	struct centry *all = malloc((c->tasks.n + 1) * sizeof(*all));
	struct sbuf sb = { 0 };
	int ret;
	size_t i;

	if (!all)
		return NULL;
	if (c->tasks.n)
		memcpy(all, c->tasks.v, c->tasks.n * sizeof(*all));
	qsort(all, c->tasks.n, sizeof(*all), cmp_tid);
	ret = sbuf_printf(&sb, MAGIC " 1\nmemory %d\nv2 %d\n", c->memory_id, c->has_v2);
	for (i = 0; !ret && i < c->tasks.n; i++) {
		const struct kmt_cgroup_task *t = &all[i].t;

		ret = sbuf_printf(&sb, "%d\t%c\t%s\t%s\n", all[i].tid, t->kthread ? 'k' : '-',
				  t->v2 ? t->v2 : "-", t->memory ? t->memory : "-");
	}
	free(all);
	if (ret) {
		sbuf_release(&sb);
		errno = ENOMEM;
		return NULL;
	}
	if (len)
		*len = sb.len;
	return sb.buf;
}

size_t kmt_cgroups_count(const struct kmt_cgroups *c)
{
	return c->tasks.n;
}

int kmt_cgroups_memory_id(const struct kmt_cgroups *c)
{
	return c->memory_id;
}

bool kmt_cgroups_has_v2(const struct kmt_cgroups *c)
{
	return c->has_v2;
}

const struct kmt_cgroup_task *kmt_cgroups_task(const struct kmt_cgroups *c, int32_t tid)
{
	uint32_t i = c ? kmt_map_get(&c->by_tid, (uint32_t)tid) : KMT_MAP_NONE;

	return i == KMT_MAP_NONE ? NULL : &c->tasks.v[i].t;
}

bool kmt_cgroup_under(const char *path, const char *want)
{
	size_t n = strlen(want);

	while (n && want[n - 1] == '/')
		n--;
	return path && !strncmp(path, want, n) && (path[n] == '\0' || path[n] == '/');
}

/* Lowercase hex digits, @n of them. */
static bool is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]) && (s[i] < 'a' || s[i] > 'f'))
			return false;
	return true;
}

/* A path component: @len bytes at @s. */
struct comp {
	const char *s;
	size_t len;
};

static bool comp_is(struct comp c, const char *word)
{
	return c.len == strlen(word) && !memcmp(c.s, word, c.len);
}

/* @c is @pre, @mid bytes, @suf: the middle, or NULL. */
static const char *affix(struct comp c, const char *pre, size_t mid, const char *suf)
{
	size_t np = strlen(pre), ns = strlen(suf);

	if (c.len != np + mid + ns || memcmp(c.s, pre, np) || memcmp(c.s + np + mid, suf, ns))
		return NULL;
	return c.s + np;
}

/* A pod UID (8-4-4-4-12 hex, '-' or '_') at @s into @out with dashes. */
static bool pod_uid(const char *s, char out[37])
{
	size_t i;

	for (i = 0; s && i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' && s[i] != '_' : !is_hex(s + i, 1))
			return false;
		out[i] = dash ? '-' : s[i];
	}
	out[36] = '\0';
	return s != NULL;
}

static const struct {
	const char *pre, *suf, *parent, *runtime;
} named[] = {
	{ "", "", "docker", "docker" },
	{ "docker-", ".scope", NULL, "docker" },
	{ "cri-containerd-", ".scope", NULL, "containerd" },
	{ "crio-", ".scope", NULL, "crio" },
	{ "crio-", "", NULL, "crio" },
	{ "libpod-", ".scope", NULL, "podman" },
};

static const char *const pod_slices[] = {
	"kubepods-pod", "kubepods-burstable-pod", "kubepods-besteffort-pod",
};

/* The pod @c names (@p, @g: its parent, grandparent), its UID into @uid. */
static bool pod_of(struct comp c, struct comp p, struct comp g, char uid[37])
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pod_slices); i++)
		if (pod_uid(affix(c, pod_slices[i], 36, ".slice"), uid))
			return true;
	return pod_uid(affix(c, "pod", 36, ""), uid) &&
	       (comp_is(p, "kubepods") ||
		((comp_is(p, "burstable") || comp_is(p, "besteffort")) && comp_is(g, "kubepods")));
}

/* The container or pod @c names, as "runtime:id" into @buf. */
static bool match(struct comp c, struct comp p, struct comp g, char *buf, size_t len)
{
	const char *id;
	char uid[37];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(named); i++) {
		id = affix(c, named[i].pre, 64, named[i].suf);
		if (id && is_hex(id, 64) && (!named[i].parent || comp_is(p, named[i].parent))) {
			snprintf(buf, len, "%s:%.12s", named[i].runtime, id);
			return true;
		}
	}
	if (!pod_of(c, p, g, uid))
		return false;
	snprintf(buf, len, "pod:%s", uid);
	return true;
}

/* The component that ends at @end (a '/' or the path's end), or an empty one. */
static struct comp comp_before(const char *path, const char *end)
{
	const char *s = end;

	while (s > path && s[-1] != '/')
		s--;
	return (struct comp){ s, (size_t)(end - s) };
}

const char *kmt_cgroup_container(const char *path, char *buf, size_t len)
{
	static const char deleted[] = " (deleted)";
	const char *end;
	struct comp c;
	size_t n;

	if (!path || !len)
		return NULL;
	n = strlen(path);
	if (n >= sizeof(deleted) - 1 && !strcmp(path + n - (sizeof(deleted) - 1), deleted))
		n -= sizeof(deleted) - 1;
	for (end = path + n;; end = c.s - 1) {
		struct comp p = { path, 0 }, g = { path, 0 };

		c = comp_before(path, end);
		if (c.s > path)
			p = comp_before(path, c.s - 1);
		if (p.s > path)
			g = comp_before(path, p.s - 1);
		if (match(c, p, g, buf, len))
			return buf;
		if (c.s == path)
			break;
	}
	return NULL;
}
