/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Event decoding driven by the stored formats (include/kmemtrace/event.h).
 * At build time each known event is matched by system and name and its
 * fields by name, with the fallbacks older kernels need; at decode time a
 * dense id table gives the field offsets, so a record costs a table lookup
 * and a few bounded loads.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmemtrace/event.h>
#include "base/kmt-local.h"

enum { F_ABSENT = 0, F_NUM, F_STR_ARRAY, F_STR_DATALOC, F_STR_RELLOC };

struct fld {
	uint16_t off;
	uint8_t size;
	uint8_t type;
	uint8_t sgn;
};

/* Slots, in struct dec order. */
enum { S_PID, S_CALL, S_PTR, S_REQ, S_ALLOC, S_GFP, S_NODE, S_ORDER, S_MT,
	S_NAME, S_PID2, S_STR2, S_STACK_N, S_STACK, S_OFFSET, S_WRITE, S_FAILED, S_NR };

/* A numeric field, compiled: load @size bytes at @off, store at @dst. */
struct op {
	uint16_t off;
	uint8_t size;
	uint8_t sgn;
	uint8_t dst;			/* offset in struct kmt_event */
	uint8_t dst_size;
};

#define NOFF 0xffff

/* What an allocation's gfp flags say of its charge: nothing (not an allocation), all, or not all. */
enum { ACCT_NONE, ACCT_GFP, ACCT_GFP_OR_CACHE };
/* common_flags: hard irq, soft irq, NMI (TRACE_FLAG_HARDIRQ, _SOFTIRQ, _NMI, 4.18 to 6.18). */
#define IRQ_FLAGS 0x58

struct dec {
	uint8_t kind;
	uint8_t nops;
	uint32_t need;			/* the record must be this long */
	uint32_t flags;
	/*
	 * Fast path: a little-endian file whose memory event has the usual
	 * field sizes (8-byte call_site/ptr/sizes/gfp, 4-byte node, order,
	 * migratetype) loads each field directly from its offset (NOFF: absent).
	 */
	bool fast;
	/*
	 * Interrupt context and memory accounting (KMT_EVF_IRQ, _ACCOUNTED,
	 * _ACCT_UNKNOWN): where common_flags and an accounted field lie
	 * (NOFF: absent), the gfp bit __GFP_ACCOUNT is, and what an
	 * allocation without either is (acct: ACCT_*).
	 */
	uint16_t o_cflags, o_acct;
	uint8_t acct;
	uint64_t gfp_account;
	uint16_t o_call, o_ptr, o_req, o_alloc, o_gfp, o_node, o_order, o_mt;
	struct fld f[S_NR];
	struct op ops[S_NR];
};

struct kmt_decoder {
	bool be;
	int long_size;
	uint32_t nr_ids;
	struct dec *by_id;
	bool has[KMT_EV_NR];
	char skipped[512];
};

/* Field names to try for a slot, most recent kernel first. */
struct slot_names {
	int slot;
	const char *names[3];
	bool required;
};

struct event_map {
	const char *system, *name;
	enum kmt_kind kind;
	struct slot_names slots[8];
};

#define REQ true
#define OPT false

static const struct event_map event_maps[] = {
	{ "kmem", "kmalloc", KMT_EV_KMALLOC, {
		{ S_CALL, { "call_site" }, REQ }, { S_PTR, { "ptr" }, REQ },
		{ S_REQ, { "bytes_req" }, REQ }, { S_ALLOC, { "bytes_alloc" }, REQ },
		{ S_GFP, { "gfp_flags" }, OPT }, { S_NODE, { "node" }, OPT } } },
	{ "kmem", "kmalloc_node", KMT_EV_KMALLOC, {
		{ S_CALL, { "call_site" }, REQ }, { S_PTR, { "ptr" }, REQ },
		{ S_REQ, { "bytes_req" }, REQ }, { S_ALLOC, { "bytes_alloc" }, REQ },
		{ S_GFP, { "gfp_flags" }, OPT }, { S_NODE, { "node" }, OPT } } },
	{ "kmem", "kmem_cache_alloc", KMT_EV_CACHE_ALLOC, {
		{ S_CALL, { "call_site" }, REQ }, { S_PTR, { "ptr" }, REQ },
		{ S_REQ, { "bytes_req" }, REQ }, { S_ALLOC, { "bytes_alloc" }, REQ },
		{ S_GFP, { "gfp_flags" }, OPT }, { S_NODE, { "node" }, OPT },
		{ S_NAME, { "name" }, OPT } } },
	{ "kmem", "kmem_cache_alloc_node", KMT_EV_CACHE_ALLOC, {
		{ S_CALL, { "call_site" }, REQ }, { S_PTR, { "ptr" }, REQ },
		{ S_REQ, { "bytes_req" }, REQ }, { S_ALLOC, { "bytes_alloc" }, REQ },
		{ S_GFP, { "gfp_flags" }, OPT }, { S_NODE, { "node" }, OPT },
		{ S_NAME, { "name" }, OPT } } },
	{ "kmem", "kfree", KMT_EV_KFREE, {
		{ S_CALL, { "call_site" }, REQ }, { S_PTR, { "ptr" }, REQ } } },
	{ "kmem", "kmem_cache_free", KMT_EV_CACHE_FREE, {
		{ S_CALL, { "call_site" }, REQ }, { S_PTR, { "ptr" }, REQ },
		{ S_NAME, { "name" }, OPT } } },
	{ "kmem", "mm_page_alloc", KMT_EV_PAGE_ALLOC, {
		{ S_PTR, { "pfn", "page" }, REQ }, { S_ORDER, { "order" }, REQ },
		{ S_GFP, { "gfp_flags" }, OPT }, { S_MT, { "migratetype" }, OPT } } },
	{ "kmem", "mm_page_free", KMT_EV_PAGE_FREE, {
		{ S_PTR, { "pfn", "page" }, REQ }, { S_ORDER, { "order" }, REQ } } },
	{ "kmem", "mm_page_free_direct", KMT_EV_PAGE_FREE, {
		{ S_PTR, { "pfn", "page" }, REQ }, { S_ORDER, { "order" }, REQ } } },
	{ "kmem", "mm_page_free_batched", KMT_EV_PAGE_FREE_BATCHED, {
		{ S_PTR, { "pfn", "page" }, REQ } } },
	{ "kmem", "mm_pagevec_free", KMT_EV_PAGE_FREE_BATCHED, {
		{ S_PTR, { "pfn", "page" }, REQ } } },
	{ "percpu", "percpu_alloc_percpu", KMT_EV_PCPU_ALLOC, {
		{ S_CALL, { "call_site" }, OPT }, { S_PTR, { "ptr" }, REQ },
		{ S_REQ, { "size" }, REQ }, { S_ALLOC, { "bytes_alloc", "size" }, REQ },
		{ S_GFP, { "gfp_flags" }, OPT } } },
	{ "percpu", "percpu_free_percpu", KMT_EV_PCPU_FREE, {
		{ S_PTR, { "ptr" }, REQ } } },
	{ "vmalloc", "alloc_vmap_area", KMT_EV_VMAP_ALLOC, {
		{ S_PTR, { "addr" }, REQ }, { S_ALLOC, { "size" }, REQ }, { S_REQ, { "size" }, REQ },
		{ S_FAILED, { "failed" }, OPT } } },
	{ "vmalloc", "free_vmap_area_noflush", KMT_EV_VMAP_FREE, {
		{ S_PTR, { "va_start" }, REQ } } },
	{ "sched", "sched_process_fork", KMT_EV_FORK, {
		{ S_PID2, { "child_pid" }, REQ }, { S_STR2, { "child_comm" }, REQ } } },
	{ "sched", "sched_process_exec", KMT_EV_EXEC, {
		{ S_PID2, { "pid" }, REQ }, { S_STR2, { "filename" }, REQ } } },
	{ "sched", "sched_process_exit", KMT_EV_EXIT, {
		{ S_PID2, { "pid" }, REQ }, { S_STR2, { "comm" }, REQ } } },
	{ "task", "task_rename", KMT_EV_RENAME, {
		{ S_PID2, { "pid" }, REQ }, { S_STR2, { "newcomm" }, REQ } } },
	{ "task", "task_newtask", KMT_EV_NEWTASK, {
		{ S_PID2, { "pid" }, REQ }, { S_STR2, { "comm" }, REQ } } },
	{ "cgroup", "cgroup_attach_task", KMT_EV_CGROUP, {
		{ S_PID2, { "pid" }, REQ }, { S_STR2, { "dst_path" }, REQ }, { S_NODE, { "dst_root" }, REQ } } },
	{ "ftrace", "kernel_stack", KMT_EV_STACK, {
		{ S_STACK_N, { "size" }, REQ }, { S_STACK, { "caller" }, REQ } } },
	{ "kmemtrace", "access", KMT_EV_ACCESS, {
		{ S_CALL, { "ip" }, REQ }, { S_PTR, { "obj" }, REQ },
		{ S_OFFSET, { "offset" }, REQ }, { S_WRITE, { "write" }, REQ },
		{ S_REQ, { "len" }, OPT }, { S_STR2, { "field" }, OPT } } },
};

static const char *const kind_names[KMT_EV_NR] = {
	[KMT_EV_NONE] = "none", [KMT_EV_KMALLOC] = "kmalloc", [KMT_EV_KFREE] = "kfree",
	[KMT_EV_CACHE_ALLOC] = "kmem_cache_alloc", [KMT_EV_CACHE_FREE] = "kmem_cache_free",
	[KMT_EV_PAGE_ALLOC] = "mm_page_alloc", [KMT_EV_PAGE_FREE] = "mm_page_free",
	[KMT_EV_PAGE_FREE_BATCHED] = "mm_page_free_batched",
	[KMT_EV_PCPU_ALLOC] = "percpu_alloc_percpu", [KMT_EV_PCPU_FREE] = "percpu_free_percpu",
	[KMT_EV_VMAP_ALLOC] = "alloc_vmap_area", [KMT_EV_VMAP_FREE] = "free_vmap_area_noflush",
	[KMT_EV_FORK] = "sched_process_fork", [KMT_EV_EXEC] = "sched_process_exec",
	[KMT_EV_EXIT] = "sched_process_exit", [KMT_EV_RENAME] = "task_rename",
	[KMT_EV_NEWTASK] = "task_newtask", [KMT_EV_CGROUP] = "cgroup_attach_task",
	[KMT_EV_STACK] = "kernel_stack",
	[KMT_EV_ACCESS] = "access",
};

const char *kmt_kind_name(enum kmt_kind kind)
{
	return kind < KMT_EV_NR ? kind_names[kind] : "?";
}

static bool map_field(struct fld *out, const struct kmt_field *f)
{
	if (f->offset > 0xffff || f->size > 255)
		return false;
	out->off = (uint16_t)f->offset;
	out->size = (uint8_t)f->size;
	out->sgn = !!(f->flags & KMT_FIELD_SIGNED);
	if (f->flags & KMT_FIELD_DATALOC) {
		if (f->size != 4)
			return false;
		out->type = !strncmp(f->type, "__rel_loc", 9) ? F_STR_RELLOC : F_STR_DATALOC;
	} else if (f->flags & KMT_FIELD_STRING) {
		out->type = F_STR_ARRAY;
	} else if (f->flags & KMT_FIELD_ARRAY) {
		out->type = F_STR_ARRAY;	/* raw bytes: the stack's caller[] */
	} else {
		if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)
			return false;
		out->type = F_NUM;
	}
	return true;
}

/* Where each numeric slot goes in struct kmt_event. */
static const struct { uint8_t off, size; } slot_dst[S_NR] = {
	[S_PID] = { offsetof(struct kmt_event, pid), 4 },
	[S_CALL] = { offsetof(struct kmt_event, call_site), 8 },
	[S_PTR] = { offsetof(struct kmt_event, ptr), 8 },
	[S_REQ] = { offsetof(struct kmt_event, bytes_req), 8 },
	[S_ALLOC] = { offsetof(struct kmt_event, bytes_alloc), 8 },
	[S_GFP] = { offsetof(struct kmt_event, gfp), 8 },
	[S_NODE] = { offsetof(struct kmt_event, node), 4 },
	[S_ORDER] = { offsetof(struct kmt_event, order), 4 },
	[S_MT] = { offsetof(struct kmt_event, migratetype), 4 },
	[S_PID2] = { offsetof(struct kmt_event, pid2), 4 },
	[S_OFFSET] = { offsetof(struct kmt_event, offset), 4 },
};

static bool fast_field(const struct fld *f, unsigned int size, uint16_t *off)
{
	if (f->type == F_ABSENT) {
		*off = NOFF;
		return true;
	}
	*off = f->off;
	return f->type == F_NUM && f->size == size;
}

/* Turn the numeric fields into a list of loads, and the bound they need. */
static void compile_ops(struct dec *dc, bool be)
{
	int s;

	dc->fast = !be && dc->kind >= KMT_EV_KMALLOC && dc->kind <= KMT_EV_PCPU_FREE &&
		   fast_field(&dc->f[S_CALL], 8, &dc->o_call) && fast_field(&dc->f[S_PTR], 8, &dc->o_ptr) &&
		   fast_field(&dc->f[S_REQ], 8, &dc->o_req) && fast_field(&dc->f[S_ALLOC], 8, &dc->o_alloc) &&
		   fast_field(&dc->f[S_GFP], 8, &dc->o_gfp) && fast_field(&dc->f[S_NODE], 4, &dc->o_node) &&
		   fast_field(&dc->f[S_ORDER], 4, &dc->o_order) && fast_field(&dc->f[S_MT], 4, &dc->o_mt) &&
		   dc->f[S_PID].type == F_NUM && dc->f[S_PID].off == 4 && dc->f[S_PID].size == 4;

	dc->nops = 0;
	dc->need = 8;
	if (dc->o_cflags != NOFF)
		dc->need = MAX(dc->need, dc->o_cflags + 1u);
	if (dc->o_acct != NOFF)
		dc->need = MAX(dc->need, dc->o_acct + 1u);
	for (s = 0; s < S_NR; s++) {
		const struct fld *f = &dc->f[s];

		if (f->type == F_ABSENT)
			continue;
		/* A stack's caller[] is as long as it is: only its start must fit. */
		dc->need = MAX(dc->need, (uint32_t)f->off + (s == S_STACK ? 0 : f->size));
		if (f->type != F_NUM || !slot_dst[s].size)
			continue;
		dc->ops[dc->nops].off = f->off;
		dc->ops[dc->nops].size = f->size;
		dc->ops[dc->nops].sgn = f->sgn;
		dc->ops[dc->nops].dst = slot_dst[s].off;
		dc->ops[dc->nops].dst_size = slot_dst[s].size;
		dc->nops++;
	}
}

static void note_skipped(struct kmt_decoder *dec, const struct kmt_format *fmt,
			 const char *field)
{
	size_t n = strlen(dec->skipped);
	char sys[48], name[64];

	/* Names from the file, quoted in a message: escaped. */
	snprintf(dec->skipped + n, sizeof(dec->skipped) - n, "%s%s:%s (no field '%s')",
		 n ? ", " : "", ESC(sys, fmt->system), ESC(name, fmt->name), field);
}

/* Where @fmt keeps its context and charge (struct dec's o_cflags, o_acct, acct, gfp_account). */
static void map_context(struct dec *dc, const struct kmt_format *fmt, enum kmt_kind kind)
{
	const struct kmt_field *f = kmt_format_field(fmt, "common_flags");
	struct kmt_flags *gfp;

	dc->o_cflags = f && f->size == 1 && f->offset < NOFF ? (uint16_t)f->offset : NOFF;
	dc->o_acct = NOFF;
	dc->acct = ACCT_NONE;
	dc->gfp_account = 0;
	if (kind != KMT_EV_KMALLOC && kind != KMT_EV_CACHE_ALLOC && kind != KMT_EV_PAGE_ALLOC &&
	    kind != KMT_EV_PCPU_ALLOC)
		return;
	f = kmt_format_field(fmt, "accounted");
	if (f && f->size == 1 && f->offset < NOFF)
		dc->o_acct = (uint16_t)f->offset;
	dc->acct = kind == KMT_EV_CACHE_ALLOC ? ACCT_GFP_OR_CACHE : ACCT_GFP;
	/* The bit as this kernel numbers it (1 << 20 on RHEL 8's 4.18, 1 << 22 from 5.4 on). */
	gfp = kmt_flags_from_format(fmt, "gfp_flags");
	dc->gfp_account = kmt_flags_mask(gfp, "__GFP_ACCOUNT");
	kmt_flags_free(gfp);
}

static void map_event(struct kmt_decoder *dec, const struct kmt_format *fmt,
		      const struct event_map *em)
{
	struct dec *dc = &dec->by_id[fmt->id];
	const struct kmt_field *f;
	size_t s;

	memset(dc, 0, sizeof(*dc));
	f = kmt_format_field(fmt, "common_pid");
	if (f)
		map_field(&dc->f[S_PID], f);
	for (s = 0; s < ARRAY_SIZE(em->slots) && em->slots[s].names[0]; s++) {
		const struct slot_names *sn = &em->slots[s];
		size_t i;

		f = NULL;
		for (i = 0; i < ARRAY_SIZE(sn->names) && sn->names[i] && !f; i++) {
			f = kmt_format_field(fmt, sn->names[i]);
			if (f && sn->slot == S_PTR && !strcmp(sn->names[i], "page"))
				dc->flags |= KMT_EVF_PAGE_PTR;
		}
		if ((!f || !map_field(&dc->f[sn->slot], f)) && sn->required) {
			note_skipped(dec, fmt, sn->names[0]);
			dc->kind = KMT_EV_NONE;
			return;
		}
	}
	if ((em->kind == KMT_EV_CACHE_ALLOC || em->kind == KMT_EV_CACHE_FREE) &&
	    dc->f[S_NAME].type == F_ABSENT)
		dc->flags |= KMT_EVF_NO_NAME;
	map_context(dc, fmt, em->kind);
	dc->kind = (uint8_t)em->kind;
	compile_ops(dc, dec->be);
	dec->has[em->kind] = true;
}

struct kmt_decoder *kmt_decoder_new(const struct kmt_formats *fs, bool big_endian,
				    int long_size)
{
	struct kmt_decoder *dec = calloc(1, sizeof(*dec));
	int i;
	size_t m;

	if (!dec)
		return NULL;
	dec->be = big_endian;
	dec->long_size = long_size;
	dec->nr_ids = fs->max_id + 1;
	dec->by_id = calloc(dec->nr_ids, sizeof(*dec->by_id));
	if (!dec->by_id) {
		free(dec);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < fs->nr; i++)
		for (m = 0; m < ARRAY_SIZE(event_maps); m++)
			if (!strcmp(fs->v[i].system, event_maps[m].system) &&
			    !strcmp(fs->v[i].name, event_maps[m].name))
				map_event(dec, &fs->v[i], &event_maps[m]);
	return dec;
}

void kmt_decoder_free(struct kmt_decoder *dec)
{
	if (!dec)
		return;
	free(dec->by_id);
	free(dec);
}

enum kmt_kind kmt_decoder_kind(const struct kmt_decoder *dec, uint32_t id)
{
	return id < dec->nr_ids ? dec->by_id[id].kind : KMT_EV_NONE;
}

bool kmt_decode_unnamed_cache_allocs(const struct kmt_formats *fs)
{
	const struct kmt_format *a = kmt_formats_find(fs, "kmem", "kmem_cache_alloc");
	const struct kmt_format *b = kmt_formats_find(fs, "kmem", "kmem_cache_alloc_node");

	return (a && !kmt_format_field(a, "name")) || (b && !kmt_format_field(b, "name"));
}

size_t kmt_decode_lacks(const struct kmt_formats *fs, bool slab_list, bool no_vmalloc, const char **why,
			size_t max)
{
	const struct kmt_format *cf = kmt_formats_find(fs, "kmem", "kmem_cache_free");
	const struct kmt_format *pc = kmt_formats_find(fs, "percpu", "percpu_alloc_percpu");
	size_t n = 0;

#define LACK(s) do { if (n < max) why[n++] = (s); } while (0)
	if (kmt_decode_unnamed_cache_allocs(fs) && cf && kmt_format_field(cf, "name"))
		LACK("kmem_cache_alloc names no cache (before 6.18): an object is named by its free, its slab page "
		     "or its size");
	else if (kmt_decode_unnamed_cache_allocs(fs))
		LACK(slab_list ? "no event names a cache (before 5.12): caches are named by size from the kernel's "
				 "slab list"
			       : "no event names a cache (before 5.12) and the file keeps no slab list: caches are "
				 "shown by size (record with kmemtrace for their names)");
	if (pc && !kmt_format_field(pc, "call_site"))
		LACK("per-CPU allocations carry no call site or gfp flags (before 5.19)");
	if (no_vmalloc)
		LACK("no vmalloc events (before 6.2): vmalloc areas show only as their pages");
#undef LACK
	return n;
}

size_t kmt_decode_file_lacks(const struct kmt_file *f, const char **why, size_t max)
{
	const struct kmt_file_info *fi = kmt_file_info(f);

	return kmt_decode_lacks(kmt_file_formats(f), fi->slab_caches != NULL,
				strstr(fi->recinfo.settings, KMT_RECINFO_NO_VMALLOC) != NULL, why, max);
}

bool kmt_decoder_has(const struct kmt_decoder *dec, enum kmt_kind kind)
{
	return kind < KMT_EV_NR && dec->has[kind];
}

const char *kmt_decoder_skipped(const struct kmt_decoder *dec)
{
	return dec->skipped;
}

static inline bool get_num(const struct fld *f, const struct kmt_rec *rec, bool be,
			   uint64_t *v)
{
	if ((uint32_t)f->off + f->size > rec->len)
		return false;
	*v = ldn(rec->data + f->off, f->size, be);
	if (f->sgn && f->size < 8 && (*v >> (f->size * 8 - 1)))
		*v |= ~0ULL << (f->size * 8);
	return true;
}

/* A string field: fixed char array, or __data_loc (u32: len << 16 | off). */
static bool get_str(const struct fld *f, const struct kmt_rec *rec, bool be,
		    const char **s, uint32_t *len)
{
	uint32_t off, n;

	if ((uint32_t)f->off + f->size > rec->len)
		return false;
	if (f->type == F_STR_ARRAY) {
		off = f->off;
		n = f->size;
	} else {
		uint32_t dl = ld32(rec->data + f->off, be);

		off = dl & 0xffff;
		n = dl >> 16;
		if (f->type == F_STR_RELLOC)
			off += f->off + 4;
		if (off > rec->len || n > rec->len - off)
			return false;
		/* The kernel counts the NUL: no need to look for it. */
		if (n && !rec->data[off + n - 1] && (n == 1 || rec->data[off + n - 2])) {
			*s = (const char *)rec->data + off;
			*len = n - 1;
			return true;
		}
	}
	*s = (const char *)rec->data + off;
	*len = (uint32_t)strnlen(*s, n);
	return true;
}

/* KMT_EVF_IRQ, _ACCOUNTED and _ACCT_UNKNOWN of @ev (its gfp decoded), as @dc says where to look. */
static inline void context_flags(const struct dec *dc, const struct kmt_rec *rec, struct kmt_event *ev)
{
	if (dc->o_cflags != NOFF && (rec->data[dc->o_cflags] & IRQ_FLAGS))
		ev->flags |= KMT_EVF_IRQ;
	if (dc->acct == ACCT_NONE)
		return;
	if (dc->o_acct != NOFF ? rec->data[dc->o_acct] != 0 : (ev->gfp & dc->gfp_account) != 0)
		ev->flags |= KMT_EVF_ACCOUNTED;
	else if (dc->o_acct == NOFF && (dc->acct == ACCT_GFP_OR_CACHE || !dc->gfp_account))
		ev->flags |= KMT_EVF_ACCT_UNKNOWN;
}

int kmt_decode(const struct kmt_decoder *dec, const struct kmt_rec *rec, int cpu,
	       struct kmt_event *ev)
{
	const struct dec *dc;
	bool ok = true, be = dec->be;
	uint64_t v = 0;
	uint16_t id;
	int i;

	if (rec->len < 8)
		return 0;
	id = ld16(rec->data, be);
	if (id >= dec->nr_ids || !(dc = &dec->by_id[id])->kind)
		return 0;
	if (rec->len < dc->need)
		return KMT_EFORMAT;
	ev->ts = rec->ts;
	ev->cpu = cpu;
	ev->kind = dc->kind;
	ev->id = id;
	ev->flags = dc->flags;
	ev->pid = (int32_t)ld32(rec->data + 4, be);
	ev->call_site = ev->ptr = ev->bytes_req = ev->bytes_alloc = ev->gfp = 0;
	ev->node = -1;
	ev->migratetype = -1;
	ev->order = 0;
	ev->pid2 = 0;
	ev->offset = 0;
	ev->name = ev->str2 = NULL;
	ev->name_len = ev->str2_len = 0;
	ev->stack = NULL;
	ev->nr_stack = 0;
	ev->stack_word = 0;
	if (dc->fast) {
		const uint8_t *p = rec->data;
		uint32_t w;

#define LD8(o, dst) do { if ((o) != NOFF) __builtin_memcpy(&(dst), p + (o), 8); } while (0)
#define LD4(o, dst) do { if ((o) != NOFF) { __builtin_memcpy(&w, p + (o), 4); (dst) = w; } } while (0)
		LD8(dc->o_call, ev->call_site);
		LD8(dc->o_ptr, ev->ptr);
		LD8(dc->o_req, ev->bytes_req);
		LD8(dc->o_alloc, ev->bytes_alloc);
		LD8(dc->o_gfp, ev->gfp);
		LD4(dc->o_node, ev->node);
		LD4(dc->o_order, ev->order);
		LD4(dc->o_mt, ev->migratetype);
#undef LD8
#undef LD4
		if (dc->f[S_NAME].type >= F_STR_ARRAY &&
		    !get_str(&dc->f[S_NAME], rec, be, &ev->name, &ev->name_len))
			return KMT_EFORMAT;
		context_flags(dc, rec, ev);
		return dc->kind;
	}
	for (i = 0; i < dc->nops; i++) {
		const struct op *o = &dc->ops[i];

		v = ldn(rec->data + o->off, o->size, be);
		if (o->sgn && o->size < 8 && (v >> (o->size * 8 - 1)))
			v |= ~0ULL << (o->size * 8);
		if (o->dst_size == 8) {
			memcpy((char *)ev + o->dst, &v, 8);
		} else {
			uint32_t w = (uint32_t)v;

			memcpy((char *)ev + o->dst, &w, 4);
		}
	}
	if (dc->f[S_WRITE].type == F_NUM && ldn(rec->data + dc->f[S_WRITE].off, dc->f[S_WRITE].size, be))
		ev->flags |= KMT_EVF_WRITE;
	if (dc->f[S_FAILED].type == F_NUM && ldn(rec->data + dc->f[S_FAILED].off, dc->f[S_FAILED].size, be))
		ev->flags |= KMT_EVF_FAILED;
	if (dc->f[S_NAME].type >= F_STR_ARRAY)
		ok &= get_str(&dc->f[S_NAME], rec, be, &ev->name, &ev->name_len);
	if (dc->f[S_STR2].type >= F_STR_ARRAY)
		ok &= get_str(&dc->f[S_STR2], rec, be, &ev->str2, &ev->str2_len);
	if (dc->kind == KMT_EV_STACK) {
		uint64_t n = 0;
		uint32_t room;

		ok &= get_num(&dc->f[S_STACK_N], rec, be, &n);
		room = rec->len > dc->f[S_STACK].off ? (rec->len - dc->f[S_STACK].off) / (uint32_t)dec->long_size : 0;
		ev->stack = rec->data + dc->f[S_STACK].off;
		ev->nr_stack = (uint32_t)MIN(n, (uint64_t)room);
		ev->stack_word = (uint32_t)dec->long_size;
		if (be)
			ev->flags |= KMT_EVF_STACK_BE;
	}
	context_flags(dc, rec, ev);
	return ok ? dc->kind : KMT_EFORMAT;
}
