/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Opening a trace.dat: the initial header, then either the v6 layout (a
 * fixed sequence of metadata, options, flyrecord table) or the v7 layout
 * (a chain of OPTIONS sections pointing at sections anywhere in the file).
 * Everything is checked against the file size before it is used; the
 * per-CPU data itself is left to cpu-reader.c, and what a damaged file lost
 * to tf-damage.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tf-local.h"

#define MAX_OPTION_SECTIONS 1024
#define MAX_SECTION_BYTES (256u << 20)

/* A failure at @c: the file's end if a read ran past it, else @section's error. */
static int fail_at(struct kmt_file *f, struct kmt_diag *d, const struct cur *c, int ret,
		   const char *section, uint64_t off)
{
	if (ret == KMT_ETRUNC && c->bad && c->need && c->need < (1ULL << 40) &&
	    c->end == f->map + f->size && tf_cut(f, section, c->need))
		return kmt_diag_set(d, KMT_ETRUNC, "%s: %s", f->path, f->cut);
	return tf_fail(f, d, section, off);
}

static struct cur cur_at(const struct kmt_file *f, uint64_t off)
{
	struct cur c = { f->map + f->size, f->map + f->size, f->info.big_endian, false };

	if (off <= f->size)
		c.p = f->map + off;
	else
		c.bad = true;
	return c;
}

static int parse_initial(struct kmt_file *f, struct cur *c, uint64_t *opt_off,
			 struct kmt_diag *d)
{
	static const uint8_t magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const uint8_t *m;
	const char *ver;
	char *end;
	long v;

	if (!cur_left(c))
		return kmt_diag_set(d, KMT_ETRUNC, "the file is empty");
	m = cur_bytes(c, sizeof(magic));
	if (!m && !memcmp(c->p, magic, cur_left(c)))
		return kmt_diag_set(d, KMT_ETRUNC, "header cut short");
	if (!m || memcmp(m, magic, sizeof(magic)))
		return kmt_diag_set(d, KMT_EFORMAT, "not a trace.dat file (bad magic)");
	ver = cur_str(c);
	if (!ver)
		return kmt_diag_set(d, KMT_ETRUNC, "header cut short");
	if (strlen(ver) > 8)
		return kmt_diag_set(d, KMT_EFORMAT, "bad version string");
	v = strtol(ver, &end, 10);
	if (*end || (v != 6 && v != 7)) {
		char q[40];

		return kmt_diag_set(d, KMT_EVERSION, "file version '%s' (supported: 6, 7)", ESC(q, ver));
	}
	f->info.version = (int)v;
	m = cur_bytes(c, 2);
	if (!m)
		return kmt_diag_set(d, KMT_ETRUNC, "header cut short");
	if (m[0] > 1 || (m[1] != 4 && m[1] != 8))
		return kmt_diag_set(d, KMT_EFORMAT, "bad endianness %u or long size %u", m[0], m[1]);
	f->info.big_endian = m[0];
	c->be = m[0];
	f->info.long_size = m[1];
	f->info.page_size = (uint32_t)cur_num(c, 4);
	if (c->bad)
		return kmt_diag_set(d, KMT_ETRUNC, "header cut short");
	if (f->info.page_size < 64 || f->info.page_size > (1u << 24) ||
	    (f->info.page_size & (f->info.page_size - 1)))
		return kmt_diag_set(d, KMT_EFORMAT, "implausible page size %u", f->info.page_size);
	if (f->info.version < 7) {
		f->zalg = KMT_Z_NONE;
		return 0;
	}
	{
		const char *zname = cur_str(c), *zver = cur_str(c);
		int alg;

		if (!zname || !zver)
			return kmt_diag_set(d, KMT_ETRUNC, "compression header cut short");
		alg = kmt_zalg_from_name(zname);
		if (alg < 0) {
			char q[40];

			return kmt_diag_set(d, KMT_ECOMPRESS, "unsupported compression '%s'", ESC(q, zname));
		}
		f->zalg = alg;
		f->compression = strdup(zname);
		f->compression_version = strdup(zver);
	}
	*opt_off = cur_num(c, 8);
	if (c->bad)
		return kmt_diag_set(d, KMT_ETRUNC, "header cut short");
	return 0;
}

/*
 * Inflate a compressed payload "u32 csize, u32 usize, data" into @out and
 * point @c at it.
 */
static int inflate_into(struct kmt_file *f, struct cur *c, struct sbuf *out,
			struct kmt_diag *d)
{
	uint32_t csize = (uint32_t)cur_num(c, 4), usize = (uint32_t)cur_num(c, 4);
	const uint8_t *src;
	int ret;

	if (c->bad)
		return kmt_diag_set(d, KMT_ETRUNC, "compression header cut short");
	src = cur_bytes(c, csize);
	if (!src)
		return kmt_diag_set(d, KMT_ETRUNC, "%u compressed bytes run past the section", csize);
	if (usize > MAX_SECTION_BYTES || (usize > 65536 && usize / 1024 > csize))
		return kmt_diag_set(d, KMT_ECOMPRESS, "implausible size %u inflated from %u bytes",
				    usize, csize);
	if (!f->z) {
		f->z = kmt_zctx_new(f->zalg, 0);
		if (!f->z)
			return kmt_diag_set(d, -ENOMEM, "out of memory");
	}
	out->len = 0;
	ret = sbuf_grow(out, usize);
	if (ret)
		return kmt_diag_set(d, ret, "out of memory");
	ret = kmt_zdecompress(f->z, out->buf, usize, src, csize);
	if (ret)
		return kmt_diag_set(d, ret, "%s data does not inflate to %u bytes",
				    kmt_zalg_name(f->zalg), usize);
	out->len = usize;
	c->p = (const uint8_t *)out->buf;
	c->end = c->p + usize;
	c->bad = false;
	return 0;
}

/* Open the v7 section at @off, checking its id; @c gets its payload. */
static int open_section(struct kmt_file *f, uint64_t off, unsigned int want_id,
			struct sbuf *tmp, struct cur *c, uint16_t *flags_out,
			struct kmt_diag *d)
{
	struct cur h = cur_at(f, off);
	uint16_t id = (uint16_t)cur_num(&h, 2), flags = (uint16_t)cur_num(&h, 2);
	uint64_t size;

	cur_num(&h, 4);	/* description string id */
	size = cur_num(&h, 8);
	if (h.bad)
		return kmt_diag_set(d, KMT_ETRUNC, "section header past the end of the file (%zu bytes)",
				    f->size);
	if (id != want_id)
		return kmt_diag_set(d, KMT_EFORMAT, "section id %u where %u was expected", id, want_id);
	if (flags_out)
		*flags_out = flags;
	if (size > cur_left(&h))
		return kmt_diag_set(d, KMT_ETRUNC, "section size %" PRIu64 " runs past the end of the file",
				    size);
	c->p = h.p;
	c->end = h.p + size;
	c->be = h.be;
	c->bad = false;
	if ((flags & KMT_SEC_COMPRESSED) && want_id != KMT_OPT_BUFFER) {
		if (f->zalg == KMT_Z_NONE)
			return kmt_diag_set(d, KMT_ECOMPRESS, "compressed section in an uncompressed file");
		return inflate_into(f, c, tmp, d);
	}
	return 0;
}

static int handle_option(struct kmt_file *f, uint16_t id, struct cur *o,
			 struct kmt_diag *d)
{
	size_t len = cur_left(o);
	const char *s = (const char *)o->p;
	char **slot = NULL;

	switch (id) {
	case KMT_OPT_CPUSTAT:
		if (tf_add_cpustat(f, s, len))
			return kmt_diag_set(d, -ENOMEM, "out of memory");
		return 0;
	case KMT_OPT_BUFFER:
	case KMT_OPT_BUFFER_TEXT:
		return tf_parse_buffer_option(f, o, f->info.version >= 7,
					      id == KMT_OPT_BUFFER_TEXT, d);
	case KMT_OPT_TRACECLOCK:
		free(f->trace_clock);
		f->trace_clock = xstrndup(s, strnlen(s, len));
		slot = &f->clock;
		break;
	case KMT_OPT_UNAME:
		slot = &f->uname;
		break;
	case KMT_OPT_VERSION:
		slot = &f->recorder;
		break;
	case KMT_OPT_SLAB_ALIASES:
		slot = &f->slab_aliases;
		break;
	case KMT_OPT_SLAB_CACHES:
		slot = &f->slab_caches;
		break;
	case KMT_OPT_CGROUPS:
		slot = &f->cgroups;
		break;
	case KMT_OPT_CPUCOUNT:
		if (len >= 4)
			f->info.cpu_count = (int)ld32(o->p, o->be);
		return 0;
	case KMT_OPT_TRACEID:
		if (len >= 8)
			f->info.trace_id = ld64(o->p, o->be);
		return 0;
	case KMT_OPT_HEADER_INFO ... KMT_OPT_CMDLINES:
		if (len < 8)
			return kmt_diag_set(d, KMT_EFORMAT, "option %u shorter than 8 bytes", id);
		f->sec_off[id] = ld64(o->p, o->be);
		return 0;
	default:
		return 0;	/* unknown options are skipped, as the format says */
	}
	free(*slot);
	*slot = xstrndup(s, strnlen(s, len));
	return *slot ? 0 : kmt_diag_set(d, -ENOMEM, "out of memory");
}

/* Options "u16 id, u32 size, data" until DONE; v7's DONE has a u64. */
static int parse_options(struct kmt_file *f, struct cur *c, uint64_t *next,
			 struct kmt_diag *d)
{
	bool v7 = f->info.version >= 7;

	for (;;) {
		uint16_t id = (uint16_t)cur_num(c, 2);
		uint32_t size;
		struct cur o;
		int ret;

		if (c->bad)
			return kmt_diag_set(d, KMT_ETRUNC, "options end without DONE");
		if (id == KMT_OPT_DONE && !v7)
			return 0;
		size = (uint32_t)cur_num(c, 4);
		o.p = cur_bytes(c, size);
		if (!o.p)
			return kmt_diag_set(d, KMT_ETRUNC, "option %u of %u bytes runs past the end",
					    id, size);
		o.end = o.p + size;
		o.be = c->be;
		o.bad = false;
		if (id == KMT_OPT_DONE) {
			*next = size >= 8 ? ld64(o.p, o.be) : 0;
			return 0;
		}
		ret = handle_option(f, id, &o, d);
		if (ret)
			return ret;
	}
}

static int load_v7_options(struct kmt_file *f, uint64_t off, struct kmt_diag *d)
{
	struct sbuf tmp = { 0 };
	int n = 0, ret = 0;

	while (off) {
		uint64_t next = 0;
		struct cur c;

		if (++n > MAX_OPTION_SECTIONS) {
			ret = kmt_diag_set(d, KMT_EFORMAT, "more than %d options sections (a loop?)",
					   MAX_OPTION_SECTIONS);
			break;
		}
		ret = open_section(f, off, KMT_OPT_DONE, &tmp, &c, NULL, d);
		if (ret == KMT_ETRUNC) {
			f->options_cut = off;	/* lost with the end of the file? */
			break;
		}
		if (!ret)
			ret = parse_options(f, &c, &next, d);
		if (ret) {
			ret = tf_fail(f, d, "section 'options'", off);
			break;
		}
		off = next;
	}
	sbuf_release(&tmp);
	return ret;
}

typedef int (*payload_fn)(struct kmt_file *f, struct cur *c, struct kmt_diag *d);

static int parse_kallsyms(struct kmt_file *f, struct cur *c, struct kmt_diag *d)
{
	return tf_parse_blob(c, 4, &f->kallsyms, d);
}

static int parse_printk(struct kmt_file *f, struct cur *c, struct kmt_diag *d)
{
	return tf_parse_blob(c, 4, &f->printk, d);
}

static int parse_cmdlines(struct kmt_file *f, struct cur *c, struct kmt_diag *d)
{
	return tf_parse_blob(c, 8, &f->cmdlines, d);
}

static const payload_fn payload_parsers[] = {
	[KMT_OPT_HEADER_INFO] = tf_parse_header_info,
	[KMT_OPT_FTRACE_EVENTS] = tf_parse_ftrace_events,
	[KMT_OPT_EVENT_FORMATS] = tf_parse_event_formats,
	[KMT_OPT_KALLSYMS] = parse_kallsyms,
	[KMT_OPT_PRINTK] = parse_printk,
	[KMT_OPT_CMDLINES] = parse_cmdlines,
};

/* What is lost without a section the events do not need. */
static const char *const optional_loss[] = {
	[KMT_OPT_KALLSYMS] = "call sites are shown as raw addresses",
	[KMT_OPT_PRINTK] = "the kernel's printk formats are unknown",
	[KMT_OPT_CMDLINES] = "task names come from the events only",
};

/*
 * A section that cannot be read: the file's end if it is cut there, a
 * note if the events can do without it, else the error.
 */
static int section_failed(struct kmt_file *f, unsigned int id, uint64_t off, int ret,
			  struct kmt_diag *d)
{
	char where[64], why[sizeof(d->msg)];
	struct sbuf *lost[] = { [KMT_OPT_KALLSYMS] = &f->kallsyms, [KMT_OPT_PRINTK] = &f->printk,
				[KMT_OPT_CMDLINES] = &f->cmdlines };

	if (ret == KMT_ETRUNC && tf_cut(f, NULL, 0))
		snprintf(why, sizeof(why), "%s", f->cut);
	else
		snprintf(why, sizeof(why), "%s", d->msg);
	snprintf(where, sizeof(where), "section '%s'", tf_section_name(id));
	if (ret == -ENOMEM || id < KMT_OPT_KALLSYMS) {
		if (ret == KMT_ETRUNC && *f->cut)
			return kmt_diag_set(d, ret, "%s: %s", f->path, f->cut);
		return tf_fail(f, d, where, off);
	}
	lost[id]->len = 0;
	if (tf_damage_add(f, ret, -1, off, "%s at offset %" PRIu64 " (0x%" PRIx64 "): %s: %s", where,
			  off, off, why, optional_loss[id]))
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	return 0;
}

static int load_v7_sections(struct kmt_file *f, struct kmt_diag *d)
{
	struct sbuf tmp = { 0 };
	int ret = 0;
	unsigned int id;

	for (id = KMT_OPT_HEADER_INFO; id <= KMT_OPT_CMDLINES && !ret; id++) {
		uint64_t off = f->sec_off[id];
		struct cur c;

		if (!off)
			continue;
		ret = open_section(f, off, id, &tmp, &c, NULL, d);
		if (!ret)
			ret = payload_parsers[id](f, &c, d);
		if (ret)
			ret = section_failed(f, id, off, ret, d);
	}
	sbuf_release(&tmp);
	return ret;
}

/* v7: find each buffer's flyrecord section and its compression flag. */
static int check_v7_buffers(struct kmt_file *f, struct kmt_diag *d)
{
	int i;

	for (i = 0; i < f->nr_buffers; i++) {
		struct kmt_buffer *b = &f->buffers[i];
		uint16_t flags = 0;
		struct cur c;
		int ret;

		if (!b->nr_cpus)
			continue;
		ret = open_section(f, b->section_offset, KMT_OPT_BUFFER, NULL, &c, &flags, d);
		/* Cut inside: the data is cut too, and check_cpu_data() says so. */
		if (ret && !(ret == KMT_ETRUNC && tf_cut(f, NULL, 0)))
			return tf_fail(f, d, "flyrecord section", b->section_offset);
		b->compressed = flags & KMT_SEC_COMPRESSED;
		if (b->compressed && f->zalg == KMT_Z_NONE) {
			char q[64];

			return kmt_diag_set(d, KMT_ECOMPRESS, "%s: buffer '%s' is compressed but the file names no algorithm",
					    f->path, ESC(q, b->name));
		}
	}
	return 0;
}

/* v6: the per-CPU {offset, size} table after "flyrecord\0". */
static int parse_v6_flyrecord(struct kmt_file *f, struct cur *c, const char *name,
			      int ncpus, struct kmt_diag *d)
{
	const uint8_t *tag = cur_bytes(c, 10);
	struct kmt_buffer *b;
	int i;

	if (tag && !memcmp(tag, "options  ", 10)) {
		uint64_t unused;
		int ret = parse_options(f, c, &unused, d);

		if (ret)
			return ret;
		tag = cur_bytes(c, 10);
	}
	if (tag && !memcmp(tag, "latency  ", 10))
		return 0;
	if (!tag || memcmp(tag, "flyrecord", 10))
		return kmt_diag_set(d, KMT_EFORMAT, "expected \"flyrecord\"");
	if ((uint64_t)ncpus * 16 > cur_left(c)) {
		cur_short(c, (uint64_t)ncpus * 16);
		return kmt_diag_set(d, KMT_ETRUNC, "CPU table of %d CPUs runs past the end", ncpus);
	}
	/* Options may have added buffers: look this one up only now. */
	b = tf_buffer_get(f, name);
	if (!b)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	if (b->cpus) {
		char q[64];

		return kmt_diag_set(d, KMT_EFORMAT, "buffer '%s' has two CPU tables", ESC(q, name));
	}
	b->cpus = calloc((size_t)(ncpus ? ncpus : 1), sizeof(*b->cpus));
	if (!b->cpus)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	for (i = 0; i < ncpus; i++) {
		b->cpus[i].cpu = i;
		b->cpus[i].offset = cur_num(c, 8);
		b->cpus[i].size = cur_num(c, 8);
	}
	b->nr_cpus = ncpus;
	b->page_size = f->info.page_size;
	return 0;
}

static int load_v6(struct kmt_file *f, struct cur *c, struct kmt_diag *d)
{
	static const struct { unsigned int id; const char *name; } order[] = {
		{ KMT_OPT_HEADER_INFO, "headers" },
		{ KMT_OPT_FTRACE_EVENTS, "ftrace events" },
		{ KMT_OPT_EVENT_FORMATS, "event formats" },
		{ KMT_OPT_KALLSYMS, "kallsyms" },
		{ KMT_OPT_PRINTK, "printk" },
		{ KMT_OPT_CMDLINES, "cmdlines" },
	};
	uint32_t ncpus;
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(order); i++) {
		uint64_t off = (uint64_t)(c->p - f->map);

		ret = payload_parsers[order[i].id](f, c, d);
		if (ret)
			return fail_at(f, d, c, ret, order[i].name, off);
	}
	ncpus = (uint32_t)cur_num(c, 4);
	if (c->bad || ncpus > 65536) {
		ret = kmt_diag_set(d, c->bad ? KMT_ETRUNC : KMT_EFORMAT, "bad CPU count");
		return fail_at(f, d, c, ret, "CPU count", (uint64_t)(c->p - f->map));
	}
	if (!f->info.cpu_count)
		f->info.cpu_count = (int)ncpus;
	{
		uint64_t off = (uint64_t)(c->p - f->map);

		ret = parse_v6_flyrecord(f, c, "", (int)ncpus, d);
		if (ret)
			return fail_at(f, d, c, ret, "options/flyrecord", off);
	}
	/* Instance buffers: each offset leads to its own flyrecord table. */
	for (i = 0; i < (size_t)f->nr_buffers; i++) {
		uint64_t off = f->buffers[i].section_offset;
		struct cur bc;
		char *name;

		if (f->buffers[i].cpus || !*f->buffers[i].name)
			continue;
		name = strdup(f->buffers[i].name);
		if (!name)
			return kmt_diag_set(d, -ENOMEM, "out of memory");
		bc = cur_at(f, off);
		ret = parse_v6_flyrecord(f, &bc, name, (int)ncpus, d);
		free(name);
		if (ret)
			return tf_fail(f, d, "instance flyrecord", off);
	}
	return 0;
}

/*
 * Every CPU's data must lie inside the file, unless the file is cut: then
 * what is left of it is read, and the reader says where it ends.
 */
static int check_cpu(struct kmt_file *f, struct kmt_buffer *b, struct kmt_cpu_data *cd,
		     struct kmt_diag *d)
{
	uint64_t count = b->compressed && cd->size ? 4 : 0, avail;
	char q[64];

	if (cd->cpu < (f->info.salvaged ? -1 : 0) || cd->cpu > 65535)
		return kmt_diag_set(d, KMT_EFORMAT, "%s: buffer '%s': bad CPU number %d",
				    f->path, ESC(q, b->name), cd->cpu);
	if (cd->cut || (cd->offset <= f->size && cd->size + count <= f->size - cd->offset))
		return 0;
	if (!tf_cut(f, NULL, 0))
		return kmt_diag_set(d, KMT_EFORMAT,
				    "%s: buffer '%s' CPU %d: data at offset %" PRIu64 " size %" PRIu64
				    " runs past the end of the file (%zu bytes)",
				    f->path, ESC(q, b->name), cd->cpu, cd->offset, cd->size, f->size);
	avail = f->size - MIN(cd->offset, f->size);
	cd->cut = true;
	cd->size = avail > count ? avail - count : 0;
	return 0;
}

static int check_cpu_data(struct kmt_file *f, struct kmt_diag *d)
{
	bool any = false;
	int i, j, ret;

	for (i = 0; i < f->nr_buffers; i++)
		for (j = 0; j < f->buffers[i].nr_cpus; j++)
			if (!f->buffers[i].cpus[j].cut)
				f->buffers[i].cpus[j].want = f->buffers[i].cpus[j].size;
	f->main_buffer = -1;
	for (i = 0; i < f->nr_buffers; i++) {
		struct kmt_buffer *b = &f->buffers[i];
		bool has_data = false;
		char q[64];

		if (!b->page_size)
			b->page_size = f->info.page_size;
		if (b->page_size < 64 || b->page_size > (1u << 24) ||
		    b->page_size < f->layout.data_offset)
			return kmt_diag_set(d, KMT_EFORMAT, "%s: buffer '%s' has an implausible sub-buffer size %u",
					    f->path, ESC(q, b->name), b->page_size);
		for (j = 0; j < b->nr_cpus; j++) {
			ret = check_cpu(f, b, &b->cpus[j], d);
			if (ret)
				return ret;
			has_data |= b->cpus[j].size != 0;
			any |= b->cpus[j].want != 0;
		}
		/* The top-level buffer wins; else the first with data. */
		if (has_data && (f->main_buffer < 0 || !*b->name) && strcmp(b->name, KMT_ACCESS_BUFFER))
			f->main_buffer = i;
	}
	/* Cut before any of its events: nothing to give. */
	if (*f->cut && (any || f->info.salvaged) && f->main_buffer < 0)
		return kmt_diag_set(d, KMT_ETRUNC, "%s: %s: none of the event data is in the file",
				    f->path, f->cut);
	return 0;
}

static void fill_info(struct kmt_file *f)
{
	f->info.path = f->path;
	f->info.compression = f->compression ? f->compression : "none";
	f->info.compression_version = f->compression_version ? f->compression_version : "";
	f->info.uname = f->uname;
	f->info.slab_aliases = f->slab_aliases;
	f->info.slab_caches = f->slab_caches;
	f->info.cgroups = f->cgroups;
	f->info.recorder = f->recorder;
	kmt_recinfo_parse(&f->info.recinfo, f->recorder);
	f->info.file_size = f->size;
	f->info.clock = NULL;
	if (f->main_buffer >= 0)
		f->info.clock = f->buffers[f->main_buffer].clock;
	if (!f->info.clock && f->clock) {
		/* TRACECLOCK lists every clock with the selected one in []. */
		char *l = strchr(f->clock, '['), *r = l ? strchr(l, ']') : NULL;

		if (l && r) {
			*r = '\0';
			memmove(f->clock, l + 1, (size_t)(r - l));
		}
		f->info.clock = f->clock;
	}
	if (!f->info.cpu_count && f->main_buffer >= 0)
		f->info.cpu_count = f->buffers[f->main_buffer].nr_cpus;
}

static int file_load(struct kmt_file *f, struct kmt_diag *d)
{
	struct cur c = cur_at(f, 0);
	uint64_t opt_off = 0;
	int ret;

	kmt_formats_init(&f->formats);
	ret = parse_initial(f, &c, &opt_off, d);
	if (ret)
		return fail_at(f, d, &c, ret, "file header", 0);
	f->first_section = (uint64_t)(c.p - f->map);
	f->options = opt_off;
	/* Until header_page says otherwise, assume the kernel's long is ours. */
	kmt_page_layout_default(&f->layout, f->info.long_size);
	f->info.kernel_long_size = f->info.long_size;
	if (f->info.version >= 7) {
		ret = load_v7_options(f, opt_off, d);
		if (ret && f->options_cut)
			ret = tf_salvage(f, d);
		if (!ret)
			ret = load_v7_sections(f, d);
		if (!ret)
			ret = check_v7_buffers(f, d);
	} else {
		ret = load_v6(f, &c, d);
	}
	if (!ret)
		ret = check_cpu_data(f, d);
	if (!ret) {
		tf_find_cut(f);
		fill_info(f);
	}
	return ret;
}

static struct kmt_file *file_new(const char *name)
{
	struct kmt_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->path = strdup(name);
	if (!f->path) {
		free(f);
		return NULL;
	}
	f->main_buffer = -1;
	return f;
}

int kmt_file_open_mem(struct kmt_file **fp, const void *data, size_t len,
		      const char *name, struct kmt_diag *d)
{
	struct kmt_file *f = file_new(name);
	int ret;

	*fp = NULL;
	if (!f)
		return kmt_diag_set(d, -ENOMEM, "%s: out of memory", name);
	f->map = data;
	f->size = len;
	ret = file_load(f, d);
	if (ret) {
		kmt_file_close(f);
		return ret;
	}
	*fp = f;
	return 0;
}

int kmt_file_open(struct kmt_file **fp, const char *path, struct kmt_diag *d)
{
	static const uint8_t empty[1];
	struct kmt_file *f;
	struct stat st;
	int fd, ret;
	void *map;

	*fp = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return kmt_diag_set(d, -errno, "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		close(fd);
		return kmt_diag_set(d, ret, "'%s' is not a regular file", path);
	}
	if (st.st_size == 0) {
		map = (void *)empty;
	} else {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			ret = -errno;
			close(fd);
			return kmt_diag_set(d, ret, "cannot map '%s': %s", path, strerror(-ret));
		}
		madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	}
	close(fd);
	f = file_new(path);
	if (!f) {
		if (st.st_size)
			munmap(map, (size_t)st.st_size);
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	}
	f->map = map;
	f->size = (size_t)st.st_size;
	f->mapped = st.st_size != 0;
	ret = file_load(f, d);
	if (ret) {
		kmt_file_close(f);
		return ret;
	}
	*fp = f;
	return 0;
}

void kmt_file_close(struct kmt_file *f)
{
	int i;

	if (!f)
		return;
	tf_pool_free(f->pool);		/* its threads read the map */
	if (f->mapped)
		munmap((void *)f->map, f->size);
	for (i = 0; i < f->nr_buffers; i++) {
		int j;

		for (j = 0; j < f->buffers[i].nr_stats; j++)
			free(f->buffers[i].stats[j].text);
		free(f->buffers[i].name);
		free(f->buffers[i].clock);
		free(f->buffers[i].cpus);
		free(f->buffers[i].stats);
	}
	free(f->buffers);
	free(f->damage);
	kmt_formats_release(&f->formats);
	sbuf_release(&f->header_page);
	sbuf_release(&f->header_event);
	sbuf_release(&f->kallsyms);
	sbuf_release(&f->printk);
	sbuf_release(&f->cmdlines);
	sbuf_release(&f->cpustat_text);
	kmt_zctx_free(f->z);
	free(f->compression);
	free(f->compression_version);
	free(f->uname);
	free(f->slab_aliases);
	free(f->slab_caches);
	free(f->cgroups);
	free(f->clock);
	free(f->trace_clock);
	free(f->recorder);
	free(f->path);
	free(f);
}
