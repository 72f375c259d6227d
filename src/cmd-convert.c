/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtrace convert: rewrite a trace file — another version (6 or 7),
 * another compression, kallsyms cut down to the functions the trace
 * mentions — keeping every event and the metadata that describes them.
 * One buffer (the main one, or -B NAME) becomes the output's top buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kmemtrace/base.h>
#include <kmemtrace/event.h>
#include <kmemtrace/tracefile.h>
#include "cmd.h"
#include "util/util.h"
#include "util/opt.h"

enum { O_VERSION = 256, O_COMPRESSION, O_LEVEL, O_STRIP };

struct convert_args {
	struct kmt_writer_opts wo;
	bool strip, level_set;
	int zalg;			/* --compression: a KMT_Z_*, -1: not given */
	const char *buffer;
	const char *output;		/* -o */
};

static const struct opt convert_opts[] = {
	{ O_VERSION, 0, "file-version", "N", "6 or 7 (default 7)" },
	{ O_COMPRESSION, 0, "compression", "ALG", "%s (default zstd; v6: none)", .type = OT_CHOICE,
	  .choices = kmt_zalg_names, .what = "compression",
	  .off = offsetof(struct convert_args, zalg) },
	{ O_LEVEL, 0, "level", "N", "compression level (default: zstd 1, zlib 9)" },
	{ O_STRIP, 0, "strip-kallsyms", NULL, "keep only the symbols of functions the events name\n"
	  "(as record does by default; they name them alike)" },
	{ 'B', 'B', "buffer", "NAME", "the buffer to keep (default: the main one)" },
	{ 'o', 'o', "output", "OUT", "the file to write (as every command writes; OUT after\nIN says the same)" },
	{ 'h', 'h', "help", NULL, "this text" },
	{ 0 },
};

const struct cmd_help convert_help = {
	.name = "convert",
	.summary = "rewrite a trace: another version or compression, smaller kallsyms",
	.usage = "[options] -o OUT IN, or [options] IN OUT",
	.about =
	"Rewrite the trace file IN as OUT (trace.dat v6 or v7), keeping every event of one\n"
	"buffer and the metadata that describes them. For sharing (smaller files) or for\n"
	"readers that want another version or compression.\n",
	.opts = convert_opts,
};

struct conv {
	struct kmt_file *f;
	int buffer;
	struct kmt_symkeep *keep;	/* --strip-kallsyms: the addresses the events name */
};

/*
 * Copy each CPU's pages of the buffer into a temporary file (inflated),
 * collecting the call sites and stack addresses on the way.
 */
static int spill_cpu(struct conv *c, int idx, int fd, uint64_t *size, const struct kmt_decoder *dec,
		     struct kmt_diag *d)
{
	struct kmt_cpu_reader *r;
	struct kmt_page pg;
	int ret;

	*size = 0;
	ret = kmt_cpu_reader_open(&r, c->f, c->buffer, idx, d);
	if (ret)
		return ret;
	while ((ret = kmt_cpu_reader_next(r, &pg, d)) > 0) {
		ret = kmt_write_all(fd, pg.base, pg.size);
		if (ret) {
			kmt_diag_set(d, ret, "cannot write a temporary file: %s", strerror(-ret));
			break;
		}
		*size += pg.size;
		if (c->keep) {
			struct kmt_page_iter it;
			struct kmt_rec rec;
			struct kmt_event ev;

			kmt_page_iter_init(&it, &pg);
			while (kmt_page_next(&it, &rec, NULL) > 0)
				if (kmt_decode(dec, &rec, 0, &ev) > 0)
					kmt_symkeep_event(c->keep, &ev);
		}
	}
	kmt_cpu_reader_close(r);
	return ret < 0 ? ret : 0;
}

static int convert(struct conv *c, const char *out, struct kmt_writer_opts *wo, struct kmt_diag *d)
{
	const struct kmt_file_info *fi = kmt_file_info(c->f);
	const struct kmt_buffer *b = kmt_file_buffer(c->f, c->buffer);
	const struct kmt_formats *fs = kmt_file_formats(c->f);
	struct kmt_wformat *wf = calloc((size_t)fs->nr + 1, sizeof(*wf));
	struct kmt_wcpu *wc = calloc((size_t)b->nr_cpus + 1, sizeof(*wc));
	struct kmt_decoder *dec = kmt_decoder_new(fs, fi->big_endian, fi->kernel_long_size);
	struct kmt_trace_meta m = { 0 };
	struct kmt_wbuffer wb = { .name = "", .clock = b->clock ? b->clock : (fi->clock ? fi->clock : "local"),
				  .subbuf_size = b->page_size, .nr_cpus = b->nr_cpus, .cpus = wc };
	char *kall = NULL;
	int i, j, ret = 0;

	if (!wf || !wc || !dec) {
		ret = kmt_diag_set(d, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < b->nr_cpus; i++)
		wc[i].fd = -1;
	for (i = 0; i < b->nr_cpus && !ret; i++) {
		char name[] = "/tmp/kmemtrace-convert.XXXXXX";

		wc[i].cpu = b->cpus[i].cpu;
		wc[i].fd = mkstemp(name);
		if (wc[i].fd < 0) {
			ret = kmt_diag_set(d, -errno, "cannot create a temporary file: %s", strerror(errno));
			break;
		}
		unlink(name);
		ret = spill_cpu(c, i, wc[i].fd, &wc[i].size, dec, d);
		for (j = 0; j < b->nr_stats; j++)
			if (b->stats[j].cpu == wc[i].cpu)
				wc[i].stats = b->stats[j].text;
	}
	if (ret)
		goto out;
	for (i = 0; i < fs->nr; i++) {
		wf[i].system = fs->v[i].system;
		wf[i].text = fs->v[i].text;
		wf[i].len = fs->v[i].text_len;
	}
	m.header_page.data = kmt_file_header_page(c->f, &m.header_page.len);
	m.header_event.data = kmt_file_header_event(c->f, &m.header_event.len);
	m.formats = wf;
	m.nr_formats = fs->nr;
	m.kallsyms.data = kmt_file_kallsyms(c->f, &m.kallsyms.len);
	if (c->keep && m.kallsyms.len) {
		/* The same cut as a recording's (symkeep.h). */
		ret = kmt_symkeep_cut(c->keep, m.kallsyms.data, m.kallsyms.len, &kall, &m.kallsyms.len);
		if (ret) {
			kmt_diag_set(d, ret, "out of memory");
			goto out;
		}
		m.kallsyms.data = kall;
	}
	m.printk.data = kmt_file_printk(c->f, &m.printk.len);
	m.cmdlines.data = kmt_file_cmdlines(c->f, &m.cmdlines.len);
	m.uname = fi->uname;
	m.slab_aliases = fi->slab_aliases;
	m.slab_caches = fi->slab_caches;
	m.cgroups = fi->cgroups;
	m.trace_clock = kmt_file_trace_clock(c->f);
	m.version = fi->recorder;
	m.cpu_count = fi->cpu_count;
	m.trace_id = fi->trace_id;
	wo->page_size = fi->page_size;
	wo->long_size = fi->long_size;
	ret = kmt_write_trace_file(out, wo, &m, &wb, 1, NULL, d);
out:
	for (i = 0; wc && i < b->nr_cpus; i++)
		if (wc[i].fd >= 0)
			close(wc[i].fd);
	free(kall);
	free(wf);
	free(wc);
	kmt_decoder_free(dec);
	return ret;
}

static int convert_opt(void *arg, int id, const char *value)
{
	struct convert_args *a = arg;

	switch (id) {
	case O_VERSION:
		if (!opt_int(value, 6, 7, &a->wo.version))
			return usage_error(&convert_help, "bad file version '%s' (6 or 7)", value);
		break;
	case O_LEVEL:
		if (!opt_int(value, -7, 22, &a->wo.level))
			return usage_error(&convert_help, "bad level '%s' (zstd -7 to 22, zlib 0 to 9)", value);
		a->level_set = true;
		break;
	case O_STRIP: a->strip = true; break;
	case 'B': a->buffer = value; break;
	case 'o': a->output = value; break;
	}
	return -1;
}

int cmd_convert(int argc, char **argv)
{
	struct convert_args a = {
		.wo = { .version = 7, .zalg = KMT_Z_ZSTD, .level = 1, .chunk_pages = 64 },
		.zalg = -1,
	};
	struct kmt_writer_opts *wo = &a.wo;
	const struct cmd_help *H = &convert_help;
	struct conv c = { 0 };
	struct kmt_diag d = { 0 };
	const char *in, *out;
	int ret, code, i;

	code = opt_parse(H, argc, argv, convert_opt, &a, &i);
	if (code >= 0)
		return code;
	if (a.output ? argc - i != 1 : argc - i != 2)
		return usage_error(H, a.output ? "need IN (and OUT once: -o OUT, or after IN)" : "need IN and OUT");
	in = argv[i];
	out = a.output ? a.output : argv[i + 1];
	if (a.zalg >= 0)
		wo->zalg = (enum kmt_zalg)a.zalg;
	if (wo->version == 6 && a.zalg > KMT_Z_NONE)
		return usage_error(H, "trace.dat v6 has no compression: use --file-version 7, or "
				   "--compression none");
	if (wo->version == 6)
		wo->zalg = KMT_Z_NONE;
	if (wo->zalg == KMT_Z_ZLIB)
		warning("trace-cmd 3.1.6 (Debian 12) cannot read zlib-compressed files; zstd ones it can");
	if (wo->zalg == KMT_Z_ZLIB && !a.level_set)
		wo->level = 9;
	if (wo->zalg == KMT_Z_ZLIB && (wo->level < 0 || wo->level > 9))
		return usage_error(H, "bad level '%d' (zstd -7 to 22, zlib 0 to 9)", wo->level);
	if (kmt_file_open(&c.f, in, &d))
		return error("%s", d.msg);
	{
		/* A copy would look whole; what it lacks would be said nowhere. */
		int n;
		const struct kmt_damage *dm = kmt_file_damage(c.f, &n);

		if (n) {
			error("%s: %s", in, dm[0].what);
			kmt_file_close(c.f);
			return error("%s is damaged: not converting it (kmemtrace check lists the damage)",
				     in);
		}
	}
	if (output_prepare(out, false, false)) {
		kmt_file_close(c.f);
		return EXIT_FAIL;
	}
	c.buffer = a.buffer ? kmt_file_find_buffer(c.f, a.buffer) : kmt_file_main_buffer(c.f);
	if (c.buffer < 0) {
		kmt_file_close(c.f);
		return error("%s: %s", in, a.buffer ? "no such buffer" : "no event data");
	}
	if (a.strip && !(c.keep = kmt_symkeep_new())) {
		kmt_file_close(c.f);
		return error("out of memory");
	}
	ret = convert(&c, out, wo, &d);
	kmt_symkeep_free(c.keep);
	kmt_file_close(c.f);
	if (ret)
		return error("%s", d.msg);
	fprintf(stderr, "%s: wrote %s\n", cmd_name, out);	/* as export says it */
	return EXIT_OK;
}
