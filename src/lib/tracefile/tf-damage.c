/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a trace file's sections lie, and what a damaged file lost: the
 * section walk (v7 sections follow each other from the file header to the
 * end), where a file that ends early was cut ("truncated at byte N of M
 * (section S)": N its size, M where section S should end), the damage
 * worked around at open, and a v7 file whose options went with its end:
 * the sections are found by walking them and each CPU's compressed data by
 * following its chain of chunks, so what the file still holds is read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tf-local.h"
#include "section.h"

static const char *const section_names[] = {
	[KMT_OPT_DONE] = "options",
	[KMT_OPT_BUFFER] = "flyrecord",
	[KMT_OPT_STRINGS] = "strings",
	[KMT_OPT_HEADER_INFO] = "headers",
	[KMT_OPT_FTRACE_EVENTS] = "ftrace events",
	[KMT_OPT_EVENT_FORMATS] = "event formats",
	[KMT_OPT_KALLSYMS] = "kallsyms",
	[KMT_OPT_PRINTK] = "printk",
	[KMT_OPT_CMDLINES] = "cmdlines",
	[KMT_OPT_BUFFER_TEXT] = "latency buffer",
	[KMT_SEC_BTF] = "btf",
	[KMT_SEC_MODULES] = "modules",
};

const char *tf_section_name(unsigned int id)
{
	return id < ARRAY_SIZE(section_names) ? section_names[id] : NULL;
}

/* Section ids trace-cmd writes or reserves (trace-cmd.dat.v7(5)). */
static bool section_known(uint16_t id)
{
	return id <= KMT_SEC_LAST_ID || id == 0xffff;	/* 0xffff: as before, not flagged */
}

void kmt_section_iter_init(struct kmt_section_iter *it, const struct kmt_file *f)
{
	it->f = f;
	it->off = f->info.version >= 7 ? f->first_section : f->size;
}

int kmt_section_next(struct kmt_section_iter *it, struct kmt_section *s)
{
	const struct kmt_file *f = it->f;
	struct cur h = { f->map + it->off, f->map + f->size, f->info.big_endian, false };

	memset(s, 0, sizeof(*s));
	if (it->off >= f->size)
		return 0;
	s->offset = it->off;
	s->id = (uint16_t)cur_num(&h, 2);
	s->flags = (uint16_t)cur_num(&h, 2);
	cur_num(&h, 4);	/* description string id */
	s->size = cur_num(&h, 8);
	if (h.bad) {
		s->size = f->size - it->off;	/* what is left, too short for a header */
		it->off = f->size;
		return KMT_ETRUNC;
	}
	s->known = section_known(s->id);
	s->name = tf_section_name(s->id);
	s->past_end = s->size > cur_left(&h);
	it->off = s->past_end ? f->size : it->off + KMT_SECTION_HEADER + s->size;
	return 1;
}

int tf_damage_add(struct kmt_file *f, int err, int cpu, uint64_t offset, const char *fmt, ...)
{
	struct kmt_damage *v = realloc(f->damage, sizeof(*v) * (size_t)(f->nr_damage + 1));
	va_list ap;

	if (!v)
		return -ENOMEM;
	f->damage = v;
	v = &v[f->nr_damage++];
	v->err = err;
	v->cpu = cpu;
	v->offset = offset;
	va_start(ap, fmt);
	vsnprintf(v->what, sizeof(v->what), fmt, ap);
	va_end(ap);
	return 0;
}

const struct kmt_damage *kmt_file_damage(const struct kmt_file *f, int *n)
{
	*n = f->nr_damage;
	return f->nr_damage ? f->damage : NULL;
}

/* "CPU 1 data" (of buffer 'x' if not the top one) into @buf. */
static const char *cpu_data_name(const struct kmt_buffer *b, const struct kmt_cpu_data *cd,
				 char *buf, size_t len)
{
	char q[48];

	if (cd->cpu < 0)
		snprintf(buf, len, "flyrecord");
	else if (*b->name)
		snprintf(buf, len, "CPU %d data of buffer '%s'", cd->cpu, ESC(q, b->name));
	else
		snprintf(buf, len, "CPU %d data", cd->cpu);
	return buf;
}

/* The end the CPU data should have, its chunk count included. */
static uint64_t cpu_data_end(const struct kmt_buffer *b, const struct kmt_cpu_data *cd)
{
	return cd->offset + (b->compressed && cd->want ? 4 : 0) + cd->want;
}

/* The CPU data the end of the file falls in, or the first after it. */
static bool cpu_cut(const struct kmt_file *f, uint64_t *want, char *name, size_t len)
{
	const struct kmt_buffer *best_b = NULL;
	const struct kmt_cpu_data *best = NULL;
	int i, j;

	if (f->info.salvaged)
		return false;	/* numbered in file order: not names to give */
	for (i = 0; i < f->nr_buffers; i++)
		for (j = 0; j < f->buffers[i].nr_cpus; j++) {
			const struct kmt_buffer *b = &f->buffers[i];
			const struct kmt_cpu_data *cd = &b->cpus[j];

			if (!cd->want || cpu_data_end(b, cd) <= f->size)
				continue;
			if (!best || cd->offset < best->offset) {
				best = cd;
				best_b = b;
			}
		}
	if (!best)
		return false;
	*want = cpu_data_end(best_b, best);
	cpu_data_name(best_b, best, name, len);
	return true;
}

/* v7: the first section that runs past the end of the file. */
static bool section_cut(const struct kmt_file *f, uint64_t *want, const char **name)
{
	struct kmt_section_iter it;
	struct kmt_section s;
	bool options = false;
	int ret;

	kmt_section_iter_init(&it, f);
	while ((ret = kmt_section_next(&it, &s)) > 0) {
		options |= s.id == KMT_OPT_DONE;
		if (!s.past_end)
			continue;
		if (!s.known || s.size > (1ULL << 48))
			return false;	/* garbage, not a cut */
		*want = s.offset + KMT_SECTION_HEADER + s.size;
		*name = s.name ? s.name : "unnamed";
		return true;
	}
	if (ret == KMT_ETRUNC) {
		*want = s.offset + KMT_SECTION_HEADER;
		*name = "section header";
		return true;
	}
	/* Whole sections, options among them: the header points astray. */
	if (f->options && f->options + KMT_SECTION_HEADER > f->size && !options) {
		*want = f->options + KMT_SECTION_HEADER;
		*name = "options";
		return true;
	}
	return false;
}

bool tf_cut(struct kmt_file *f, const char *section, uint64_t need)
{
	const char *name = NULL;
	char cpu[96];
	uint64_t want = 0;

	if (*f->cut)
		return true;
	if (need) {
		want = f->size + need;
		name = section;
	} else if (f->info.version >= 7 && f->first_section && section_cut(f, &want, &name)) {
		/* In the data, the CPU it belongs to is a better name. */
		if (!strcmp(name, "flyrecord") && cpu_cut(f, &want, cpu, sizeof(cpu)))
			name = cpu;
	} else if (cpu_cut(f, &want, cpu, sizeof(cpu))) {
		name = cpu;
	} else {
		return false;
	}
	snprintf(f->cut, sizeof(f->cut), "truncated at byte %zu of %" PRIu64 " (section '%s')",
		 f->size, want, name);
	tf_damage_add(f, KMT_ETRUNC, -1, f->size, "%s", f->cut);
	return true;
}

void tf_find_cut(struct kmt_file *f)
{
	struct kmt_section_iter it;
	struct kmt_section s;

	if (f->info.version < 7 || *f->cut)
		return;
	kmt_section_iter_init(&it, f);
	while (kmt_section_next(&it, &s) > 0)
		if (s.past_end && s.known) {
			tf_cut(f, NULL, 0);
			return;
		}
}

int tf_fail(struct kmt_file *f, struct kmt_diag *d, const char *section,
	    uint64_t offset)
{
	char why[sizeof(d->msg)];

	snprintf(why, sizeof(why), "%s", d->msg);
	return kmt_diag_set(d, d->err ? d->err : KMT_EFORMAT,
			    "%s: %s at offset %" PRIu64 " (0x%" PRIx64 "): %s",
			    f->path, section, offset, offset, why);
}

bool tf_usize_ok(uint32_t psize, uint32_t csize, uint32_t usize)
{
	return usize && usize <= MAX_CHUNK && !(usize % psize) && !(usize > 65536 && usize / 1024 > csize);
}

bool tf_chunk_plausible(const struct kmt_file *f, uint32_t psize, uint32_t csize,
			uint32_t usize, const uint8_t *data)
{
	if (csize < 4 || !tf_usize_ok(psize, csize, usize))
		return false;
	if (f->zalg == KMT_Z_ZSTD)
		return data[0] == 0x28 && data[1] == 0xb5 && data[2] == 0x2f && data[3] == 0xfd;
	if (f->zalg == KMT_Z_ZLIB)
		return (data[0] & 0x0f) == 8 && ((unsigned int)data[0] << 8 | data[1]) % 31 == 0;
	return true;
}

const char *tf_cpu_cut(const struct kmt_file *f, const struct kmt_buffer *b,
		       const struct kmt_cpu_data *cd, char *buf, size_t len)
{
	char name[96];

	if (f->info.salvaged || cd->cpu < 0)
		snprintf(buf, len, "%s", *f->cut ? f->cut : "truncated");
	else
		snprintf(buf, len, "truncated at byte %zu of %" PRIu64 " (section '%s')", f->size,
			 cpu_data_end(b, cd), cpu_data_name(b, cd, name, sizeof(name)));
	return buf;
}

/* Add CPU data to @b; NULL when out of memory. */
static struct kmt_cpu_data *add_cpu(struct kmt_buffer *b)
{
	struct kmt_cpu_data *v = realloc(b->cpus, sizeof(*v) * (size_t)(b->nr_cpus + 1));

	if (!v)
		return NULL;
	b->cpus = v;
	v = &v[b->nr_cpus];
	memset(v, 0, sizeof(*v));
	v->cpu = b->nr_cpus++;
	return v;
}

/*
 * The CPUs of a compressed flyrecord section: from each page boundary, a
 * chunk count and that many chunks whose headers make sense. Where the
 * file ends inside one, or a header makes no sense, the CPUs after it are
 * lost: a CPU of unknown number, without data, stands for them.
 */
static int salvage_buffer(struct kmt_file *f, const struct kmt_section *s, int nth,
			  struct kmt_diag *d)
{
	uint32_t psize = f->info.page_size;
	/* Where the section should end, and where what is left of it ends. */
	uint64_t send = s->offset + KMT_SECTION_HEADER + MIN(s->size, 1ULL << 48);
	uint64_t end = MIN(send, f->size), p;
	bool lost = s->past_end, be = f->info.big_endian;
	struct kmt_cpu_data *cd;
	struct kmt_buffer *b;
	char name[48] = "";

	if (!(s->flags & KMT_SEC_COMPRESSED))
		return 0;	/* pages of raw data: which CPU each is from cannot be told */
	if (nth)
		snprintf(name, sizeof(name), "flyrecord at 0x%" PRIx64, s->offset);
	b = tf_buffer_get(f, name);
	if (!b)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	b->compressed = true;
	b->section_offset = s->offset;
	b->page_size = psize;
	for (p = ALIGN_UP(s->offset + KMT_SECTION_HEADER, psize); p + 4 <= end; p = ALIGN_UP(p, psize)) {
		uint32_t n = ld32(f->map + p, be), k;
		uint64_t q = p + 4;
		bool cut = false;

		if (!n || n > (send - p) / 8) {
			p += 4;		/* padding, not a chunk count */
			continue;
		}
		for (k = 0; k < n; k++) {
			uint32_t cs, us;

			if (q + 8 > f->size) {
				cut = true;
				break;
			}
			cs = ld32(f->map + q, be);
			us = ld32(f->map + q + 4, be);
			if (q + 8 + cs > f->size) {
				cut = true;
				break;
			}
			if (!tf_chunk_plausible(f, psize, cs, us, f->map + q + 8) || q + 8 + cs > end)
				break;
			q += 8 + cs;
		}
		cd = add_cpu(b);
		if (!cd)
			return kmt_diag_set(d, -ENOMEM, "out of memory");
		cd->offset = p;
		cd->size = (cut ? f->size : q) - p - 4;
		cd->want = cut ? send - p - 4 : cd->size;
		cd->cut = cut;
		if (k < n) {
			lost = true;
			break;
		}
		p = q;
	}
	f->info.cpu_count += b->nr_cpus;
	if (lost) {
		cd = add_cpu(b);
		if (!cd)
			return kmt_diag_set(d, -ENOMEM, "out of memory");
		*cd = (struct kmt_cpu_data){ .cpu = -1, .offset = f->size, .cut = true };
	}
	return 0;
}

int tf_salvage(struct kmt_file *f, struct kmt_diag *d)
{
	static const unsigned int need[] = { KMT_OPT_HEADER_INFO, KMT_OPT_FTRACE_EVENTS,
					     KMT_OPT_EVENT_FORMATS };
	struct kmt_section_iter it;
	struct kmt_section s;
	bool data = false, raw = false;
	int i, nth = 0, ret;

	if (!tf_cut(f, NULL, 0))
		return kmt_diag_set(d, KMT_EFORMAT, "%s: the options section at offset %" PRIu64
				    " cannot be read", f->path, f->options_cut);
	for (i = 0; i < f->nr_buffers; i++)
		data |= f->buffers[i].nr_cpus > 0;
	f->info.salvaged = !data;
	kmt_section_iter_init(&it, f);
	while ((ret = kmt_section_next(&it, &s)) > 0) {
		if (s.id >= KMT_OPT_HEADER_INFO && s.id <= KMT_OPT_CMDLINES && !f->sec_off[s.id] &&
		    !s.past_end)
			f->sec_off[s.id] = s.offset;
		else if (s.id == KMT_OPT_BUFFER && !data && (ret = salvage_buffer(f, &s, nth++, d)))
			return ret;
		raw |= s.id == KMT_OPT_BUFFER && !(s.flags & KMT_SEC_COMPRESSED);
	}
	for (i = 0; i < (int)ARRAY_SIZE(need); i++)
		if (!f->sec_off[need[i]])
			return kmt_diag_set(d, KMT_ETRUNC, "%s: %s: the %s section, which the events "
					    "need, is not whole", f->path, f->cut, tf_section_name(need[i]));
	for (i = 0, data = false; i < f->nr_buffers; i++)
		data |= f->buffers[i].nr_cpus > 0;
	if (!data)
		return kmt_diag_set(d, KMT_ETRUNC, "%s: %s: without the options at its end, no CPU's "
				    "data can be read%s", f->path, f->cut, raw ?
				    " (uncompressed pages cannot be told apart by CPU)" : "");
	if (f->info.salvaged && tf_damage_add(f, KMT_ETRUNC, -1, f->options_cut,
					      "the options at its end are lost: the CPUs' data are "
					      "numbered in file order; the ring buffers' stats and how "
					      "the trace was recorded are unknown"))
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	return 0;
}
