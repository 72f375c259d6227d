/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace kmap: one record per object, Memorizer's KMAP. The model
 * hands out each object when its story ends (freed, allocated over, or
 * live at the end); watchpoint samples that fell in it are gathered per
 * object while it lives and printed under its record. Memory: the model's
 * live objects plus the samples of objects that have some.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/base.h>
#include "base/grow.h"
#include "report/input.h"
#include "cmd.h"
#include "util/util.h"
#include "util/json.h"
#include "util/opt.h"
#include "report/report.h"
#include "export/objcols.h"

enum { O_CALLSITE = 256, O_LIVE, O_ACCESSED, O_PAGES, O_PREEX, O_JSON };

struct kmap_args {
	struct kmap *k;
	struct kmt_model_hooks *h;
	struct input_opts in;
	struct addr_opts *addr;		/* --raw-ip, --hash-pointers: k->names.addr */
	bool stats;
};

static const struct opt kmap_opts[] = {
	{ O_CALLSITE, 0, "callsite", "FUNC", "only objects allocated from FUNC (a function name)" },
	OPT_GROUP(input_group, struct kmap_args, in,
		  INPUT_CACHE | INPUT_PID | INPUT_COMM | INPUT_TIME | INPUT_BUFFER | INPUT_JOBS |
		  INPUT_CGROUP, "objects allocated by"),
	{ O_LIVE, 0, "live", NULL, "only objects still live at the end" },
	{ O_ACCESSED, 0, "accessed", NULL, "only objects with watchpoint samples" },
	{ O_PAGES, 0, "pages", NULL, "page allocations too (obj_va_ptr: pfn:N)" },
	{ O_PREEX, 0, "preexisting", NULL, "also objects freed in the trace but allocated before" },
	OPT_GROUP_AT(addresses_group, struct kmap_args, addr, 0, "kernel addresses"),
	{ O_JSON, 0, "json", NULL, "one JSON array (schema: docs/kmap.md)" },
	OPT_GROUP(stats_group, struct kmap_args, stats, 0, NULL),
	{ 'h', 'h', "help", NULL, "this text" },
	{ 0 },
};

const struct cmd_help kmap_help = {
	.name = "kmap",
	.summary = "one record per object: allocation, free, and the accesses watch saw",
	.usage = "[options] [FILE]",
	.about =
	"One record per object the trace saw allocated (default file kmemtrace.dat), in\n"
	"Memorizer's KMAP format:\n"
	"  " OBJCOLS_KMAP "\n"
	"and, when the file holds watchpoint samples (kmemtrace watch), under it one\n"
	"line per accessing instruction and task:\n"
	"    access_ip,access_pid,write_count,read_count\n"
	"Times are ns from the first event; free_time 0 and free_ip empty when the\n"
	"object was not freed in the trace; size is the bytes allocated. Records come\n"
	"as objects leave: at their free, then those still live, oldest first.\n",
	.opts = kmap_opts,
};

/* Samples of one object, per instruction, task and offset. */
struct hit {
	uint64_t ip;
	int32_t pid;
	uint32_t offset;
	uint64_t reads, writes;
	char field[48];
};

struct hits {
	uint64_t ptr, alloc_ts;		/* the object; ptr 0: empty slot */
	struct hit *v;
	size_t n, alloc;
};

struct kmap {
	struct report names;		/* symbols, --raw-ip, --hash-pointers */
	const char *callsite;
	bool live_only, accessed_only, preexisting, json;
	const uint64_t *t0;		/* the first record's time, once read */
	uint64_t printed;
	struct hits *tab;		/* objects with accesses; ptr 0: a free entry */
	size_t n, alloc;
	uint32_t free_head;		/* a free entry (its n holds the next), or KMT_MAP_NONE */
	struct kmt_map by_obj;		/* objkey() -> index in tab */
	uint64_t memo_site;		/* --callsite: last site looked at */
	bool memo_match;
	struct site_memo *names_memo;	/* call sites as written, by address (site_text()) */
	bool callsite_seen;		/* --callsite: some object came from there */
	FILE *out;
	bool clone;			/* a shard's (-j): its objects written out by the analysis */
	struct js js;			/* --json: an array, an object a line */
	const struct objcol *cols[OBJCOLS_MAX];	/* the line's fields, or --json's keys */
	size_t nr_cols;
};

static uint64_t objkey(uint64_t ptr, uint64_t ts)
{
	return kmt_hash_combine(ptr, ts);
}

struct obj_key {
	const struct kmap *k;
	uint64_t ptr, ts;
};

static bool same_obj(const void *ctx, uint32_t i)
{
	const struct obj_key *o = ctx;

	return o->k->tab[i].ptr == o->ptr && o->k->tab[i].alloc_ts == o->ts;
}

static struct hits *hits_find(struct kmap *k, uint64_t ptr, uint64_t ts, bool create)
{
	struct obj_key o = { k, ptr, ts };
	uint32_t i = kmt_map_find(&k->by_obj, objkey(ptr, ts), same_obj, &o);

	if (i != KMT_MAP_NONE || !create)
		return i == KMT_MAP_NONE ? NULL : &k->tab[i];
	if (k->free_head != KMT_MAP_NONE) {
		i = k->free_head;
		k->free_head = (uint32_t)k->tab[i].n;
	} else {
		if (ALLOC_GROW(k->tab, k->n + 1, k->alloc, 64))
			return NULL;
		i = (uint32_t)k->n++;
	}
	if (kmt_map_add(&k->by_obj, objkey(ptr, ts), i))
		return NULL;	/* the entry stays free: it has ptr 0 */
	memset(&k->tab[i], 0, sizeof(k->tab[i]));
	k->tab[i].ptr = ptr;
	k->tab[i].alloc_ts = ts;
	return &k->tab[i];
}

/* Forget @h: its entry goes on the free list. */
static void hits_remove(struct kmap *k, struct hits *h)
{
	uint32_t i = (uint32_t)(h - k->tab);

	kmt_map_del(&k->by_obj, objkey(h->ptr, h->alloc_ts), i);
	free(h->v);
	memset(h, 0, sizeof(*h));
	h->n = k->free_head;
	k->free_head = i;
}

static void on_access(void *arg, const struct kmt_object *o, const struct kmt_event *ev)
{
	struct kmap *k = arg;
	struct hits *h = hits_find(k, o->ptr, o->alloc_ts, true);
	size_t i;

	if (!h)
		return;
	for (i = 0; i < h->n; i++)
		if (h->v[i].ip == ev->call_site && h->v[i].pid == ev->pid && h->v[i].offset == ev->offset)
			break;
	if (i == h->n) {
		if (ALLOC_GROW(h->v, h->n + 1, h->alloc, 4))
			return;
		memset(&h->v[i], 0, sizeof(h->v[i]));
		h->v[i].ip = ev->call_site;
		h->v[i].pid = ev->pid;
		h->v[i].offset = ev->offset;
		snprintf(h->v[i].field, sizeof(h->v[i].field), "%.*s",
			 (int)MIN(ev->str2_len, 47u), ev->str2);
		h->n++;
	}
	if (ev->flags & KMT_EVF_WRITE)
		h->v[i].writes++;
	else
		h->v[i].reads++;
}

static bool wanted(struct kmap *k, const struct kmt_object *o)
{
	char fn[256];

	if (k->callsite) {
		if (o->alloc_site != k->memo_site || !k->memo_site) {
			k->memo_site = o->alloc_site;
			k->memo_match = !strcmp(site_function(&k->names, o->alloc_site, fn, sizeof(fn)),
						k->callsite);
		}
		if (!k->memo_match)
			return false;
		k->callsite_seen = true;
	}
	if (k->live_only && o->fate != KMT_FATE_LIVE)
		return false;
	if (o->fate == KMT_FATE_PREEXISTING && !k->preexisting)
		return false;
	return true;
}

/*
 * Call sites as the records write them ("func+0x1c", or as --raw-ip and
 * --hash-pointers say), in a direct-mapped memo by address: the symbol
 * search and its printf once per site met, not once per record.
 */
#define SITE_MEMO 1024
struct site_memo {
	uint64_t addr;
	uint32_t len;			/* 0: empty */
	bool function;			/* the function alone (OT_FUNC) */
	char s[115];
};

static const char *site_text(struct kmap *k, uint64_t addr, bool function, char *buf, size_t size)
{
	struct site_memo *m;
	const char *s;
	size_t n;

	if (!k->names_memo)
		k->names_memo = calloc(SITE_MEMO, sizeof(*k->names_memo));
	m = k->names_memo ? &k->names_memo[(kmt_hash64(addr) ^ function) & (SITE_MEMO - 1)] : NULL;
	if (m && m->len && m->addr == addr && m->function == function)
		return m->s;
	s = function ? site_function(&k->names, addr, buf, size) : site_name(&k->names, addr, buf, size);
	n = strlen(s);
	if (m && n && n < sizeof(m->s)) {
		memcpy(m->s, s, n + 1);
		m->len = (uint32_t)n;
		m->addr = addr;
		m->function = function;
	}
	return s;
}

/*
 * One field of the line: a number as it is (a time not in the trace is
 * 0, an unknown pid -1), a name quoted (csv_field()), any other string
 * empty when unknown.
 */
static void text_field(struct kmap *k, const struct objcol *c, const struct kmt_object *o)
{
	struct objval v;
	char buf[256];
	bool has = objcol_value(c, o, *k->t0, &v);

	switch (c->type) {
	case OT_I64:
		fput_i64(k->out, v.i);
		break;
	case OT_U64: case OT_TIME: case OT_BOOL: case OT_STACK:
		fput_u64(k->out, v.u);
		break;
	case OT_NAME:
		csv_field(k->out, v.s);
		break;
	case OT_SITE: case OT_FUNC:
		if (has)
			fputs_unlocked(site_text(k, v.u, c->type == OT_FUNC, buf, sizeof(buf)), k->out);
		break;
	default:
		if (has)
			fputs_unlocked(objcol_str(c, o, &v, &k->names, buf, sizeof(buf)), k->out);
	}
}

static void print_text(struct kmap *k, const struct kmt_object *o, const struct hits *h)
{
	char ip[256];
	size_t i, j;

	/* A field at a time: the stream locked once for the line, not per call. */
	flockfile(k->out);
	for (i = 0; i < k->nr_cols; i++) {
		if (i)
			putc_unlocked(',', k->out);
		text_field(k, k->cols[i], o);
	}
	putc_unlocked('\n', k->out);
	funlockfile(k->out);
	/* One line per instruction and task: offsets added up, first seen first. */
	for (i = 0; h && i < h->n; i++) {
		uint64_t r = h->v[i].reads, w = h->v[i].writes;
		bool dup = false;

		for (j = 0; j < i && !dup; j++)
			dup = h->v[j].ip == h->v[i].ip && h->v[j].pid == h->v[i].pid;
		if (dup)
			continue;
		for (j = i + 1; j < h->n; j++)
			if (h->v[j].ip == h->v[i].ip && h->v[j].pid == h->v[i].pid) {
				r += h->v[j].reads;
				w += h->v[j].writes;
			}
		fprintf(k->out, "  %s,%d,%" PRIu64 ",%" PRIu64 "\n",
			site_name(&k->names, h->v[i].ip, ip, sizeof(ip)), h->v[i].pid, w, r);
	}
}

/* A call site, or null. */
static void json_site(struct kmap *k, const char *key, uint64_t addr, bool function)
{
	char buf[256];

	if (!addr)
		js_null(&k->js, key);
	else
		js_str(&k->js, key, function ? site_function(&k->names, addr, buf, sizeof(buf)) :
						site_name(&k->names, addr, buf, sizeof(buf)));
}

/* One key: null when unknown (unless the column says otherwise). */
static void json_field(struct kmap *k, const struct objcol *c, const struct kmt_object *o)
{
	struct objval v;
	char buf[256];

	if (!objcol_value(c, o, *k->t0, &v) && !(c->flags & OBJCOL_NO_NULL)) {
		js_null(&k->js, c->name);
		return;
	}
	switch (c->type) {
	case OT_I64:
		js_i64(&k->js, c->name, v.i);
		break;
	case OT_U64: case OT_TIME: case OT_STACK:
		js_u64(&k->js, c->name, v.u);
		break;
	case OT_BOOL:
		js_bool(&k->js, c->name, v.u);
		break;
	case OT_SITE: case OT_FUNC:
		js_str(&k->js, c->name, site_text(k, v.u, c->type == OT_FUNC, buf, sizeof(buf)));
		break;
	default:
		js_str(&k->js, c->name, objcol_str(c, o, &v, &k->names, buf, sizeof(buf)));
	}
}

static void print_json(struct kmap *k, const struct kmt_object *o, const struct hits *h)
{
	struct js *j = &k->js;
	size_t i;

	/* The stream locked once for the object, not per call (as print_text()). */
	flockfile(k->out);
	if (k->clone)
		js_first(j, true);	/* the analysis puts the commas between the shards' objects */
	js_open(j, NULL, '{');
	for (i = 0; i < k->nr_cols; i++)
		json_field(k, k->cols[i], o);
	js_open(j, "accesses", '[');
	for (i = 0; h && i < h->n; i++) {
		js_open(j, NULL, '{');
		json_site(k, "ip", h->v[i].ip, false);
		json_site(k, "function", h->v[i].ip, true);
		js_i64(j, "pid", h->v[i].pid);
		js_u64(j, "offset", h->v[i].offset);
		if (*h->v[i].field)
			js_str(j, "field", h->v[i].field);
		else
			js_null(j, "field");
		js_u64(j, "writes", h->v[i].writes);
		js_u64(j, "reads", h->v[i].reads);
		js_close(j, '}');
	}
	js_close(j, ']');
	js_close(j, '}');
	funlockfile(k->out);
}

static void on_object(void *arg, const struct kmt_object *o)
{
	struct kmap *k = arg;
	struct hits *h = o->alloc_ts ? hits_find(k, o->ptr, o->alloc_ts, false) : NULL;

	if (wanted(k, o) && (!k->accessed_only || (h && h->n))) {
		if (k->json)
			print_json(k, o, h);
		else
			print_text(k, o, h);
		k->printed++;
	}
	if (h)
		hits_remove(k, h);
}

/*
 * A shard's kmap (-j, kmt_model_hooks.clone): writes to @fp, and keeps
 * counts of its own; no samples to gather (a file with them is not
 * analysed in shards).
 */
static void *kmap_clone(void *arg, FILE *fp, unsigned int shard)
{
	const struct kmap *k = arg;
	struct kmap *c = malloc(sizeof(*c));

	(void)shard;
	if (!c)
		return NULL;
	*c = *k;
	c->out = c->js.out = fp;
	c->clone = true;
	c->printed = 0;
	c->callsite_seen = false;
	c->memo_site = 0;
	c->names_memo = NULL;
	c->tab = NULL;
	c->n = c->alloc = 0;
	c->free_head = KMT_MAP_NONE;
	memset(&c->by_obj, 0, sizeof(c->by_obj));
	return c;
}

/* A shard's counts added to @arg's, and the shard's kmap freed. */
static void kmap_fold(void *arg, void *clone, const struct kmt_model *m)
{
	struct kmap *k = arg, *c = clone;
	size_t i;

	(void)m;	/* kmap writes no stacks */
	k->printed += c->printed;
	k->callsite_seen |= c->callsite_seen;
	if (k->json && c->printed)
		js_first(&k->js, false);
	for (i = 0; i < c->n; i++)
		free(c->tab[i].v);
	free(c->tab);
	kmt_map_release(&c->by_obj);
	free(c->names_memo);
	free(c);
}

static int kmap_opt(void *arg, int id, const char *value)
{
	struct kmap_args *a = arg;

	switch (id) {
	case O_CALLSITE: a->k->callsite = value; break;
	case O_LIVE: a->k->live_only = true; break;
	case O_ACCESSED: a->k->accessed_only = true; break;
	case O_PAGES: a->h->pages = true; break;
	case O_PREEX: a->k->preexisting = true; break;
	case O_JSON: a->k->json = true; break;
	}
	return -1;
}

int cmd_kmap(int argc, char **argv)
{
	struct kmap k = { .out = stdout, .free_head = KMT_MAP_NONE };
	struct kmt_model_hooks h = { .object = on_object, .access = on_access, .arg = &k,
				     .clone = kmap_clone, .fold = kmap_fold, .out = stdout };
	struct kmap_args o = { .k = &k, .h = &h, .in = INPUT_OPTS_INIT, .addr = &k.names.addr };
	const char *path = "kmemtrace.dat";
	struct input a;
	uint64_t out0;
	int ret, code, n;
	size_t i;

	code = opt_parse(&kmap_help, argc, argv, kmap_opt, &o, &n);
	code = code >= 0 ? code : opt_file(&kmap_help, argc, argv, n, &path);
	if (code >= 0)
		return code;
	ret = input_open(&a, path, o.in.jobs);
	if (ret) {
		input_close(&a);
		return ret;
	}
	a.stats = o.stats;
	k.names.path = path;
	k.names.syms = a.syms;
	k.names.f = a.f;
	/* Times count from the file's first record, as in report --time. */
	k.t0 = &a.t0;
	k.nr_cols = objcols_pick(k.json ? OBJCOLS_JSON : OBJCOLS_KMAP, k.cols);
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	h.sep = k.json ? "," : NULL;
	if (k.json) {
		js_init(&k.js, k.out, false, false);
		js_lines(&k.js, 1);
		js_open(&k.js, NULL, '[');
	} else {
		/* The columns, as check and dump begin with a "#" line. */
		fprintf(k.out, "# " OBJCOLS_KMAP "\n");
	}
	ret = input_run(&a, o.in.buffer, &o.in.mo, &h, MAX(o.in.window[0], 0), o.in.window[1]);
	out0 = input_thread_cpu_ns();
	if (k.json) {
		js_close(&k.js, ']');
		fputc('\n', k.out);
	}
	for (i = 0; i < k.n; i++)
		free(k.tab[i].v);
	free(k.tab);
	kmt_map_release(&k.by_obj);
	free(k.names_memo);
	if (fflush(stdout) || ferror(stdout))
		ret = error("writing the output: %s", strerror(errno));
	else if (!ret)
		ret = input_damage(&a);
	/* The records the model wrote are its stage's; the output, the main thread's after it. */
	if (o.stats && !ret)
		input_print_stats(&a, input_thread_cpu_ns() - out0);
	/* As report says of a cache or a task that is not there: a warning, and the empty output is right. */
	if (!ret && k.callsite && !k.callsite_seen)
		warning("%s: no object allocated in function '%.60s' is in the trace%s: nothing to report", path,
			k.callsite, o.in.window[0] > 0 || o.in.window[1] >= 0 ? " window" : "");
	input_close(&a);
	return ret;
}
