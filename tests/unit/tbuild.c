/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Test trace builder (see tbuild.h). Pages are packed like the kernel's
 * ring buffer by the library's page writer (tracefile/page-local.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kmemtrace/event.h>
#include <kmemtrace/tracefile.h>
#include "base/kmt-local.h"
#include "tracefile/page-local.h"
#include "tbuild.h"

struct tb_cpu {
	struct sbuf data;		/* closed pages */
	struct kmt_pagew w;
	uint64_t last_ts;
	char *stats;
};

struct tb {
	int ncpus;
	struct tb_cpu *acc;		/* kmemtrace watch samples, or NULL */
	uint32_t subbuf;
	struct kmt_formats fs;
	struct kmt_wformat wf[256];
	int nwf;
	char *texts[256];
	struct tb_cpu *cpu;
	char *kallsyms, *cmdlines;
	const char *uname;
	const char *slab_aliases, *slab_caches;
};

static int page_out(void *arg, const uint8_t *page, uint32_t size)
{
	struct tb_cpu *c = arg;

	return sbuf_add(&c->data, page, size);
}

struct tb *tb_new(int ncpus, uint32_t subbuf)
{
	struct tb *tb = calloc(1, sizeof(*tb));
	int i;

	tb->ncpus = ncpus;
	tb->subbuf = subbuf ? subbuf : 4096;
	tb->cpu = calloc((size_t)ncpus, sizeof(*tb->cpu));
	for (i = 0; i < ncpus; i++)
		if (kmt_pagew_init(&tb->cpu[i].w, tb->subbuf, page_out, &tb->cpu[i]))
			abort();
	kmt_formats_init(&tb->fs);
	return tb;
}

void tb_free(struct tb *tb)
{
	int i;

	for (i = 0; i < tb->ncpus; i++) {
		sbuf_release(&tb->cpu[i].data);
		kmt_pagew_release(&tb->cpu[i].w);
		if (tb->acc) {
			sbuf_release(&tb->acc[i].data);
			kmt_pagew_release(&tb->acc[i].w);
		}
		free(tb->cpu[i].stats);
	}
	for (i = 0; i < tb->nwf; i++)
		free(tb->texts[i]);
	kmt_formats_release(&tb->fs);
	free(tb->cpu);
	free(tb->acc);
	free(tb->kallsyms);
	free(tb->cmdlines);
	free(tb);
}

void tb_format_text(struct tb *tb, const char *system, const char *text)
{
	struct kmt_format fmt;
	struct kmt_diag d;

	if (kmt_format_parse(&fmt, system, text, strlen(text), &d)) {
		fprintf(stderr, "tbuild: bad format: %s\n", d.msg);
		abort();
	}
	kmt_formats_add(&tb->fs, &fmt);
	tb->texts[tb->nwf] = strdup(text);
	tb->wf[tb->nwf].system = system;
	tb->wf[tb->nwf].text = tb->texts[tb->nwf];
	tb->wf[tb->nwf].len = strlen(text);
	tb->nwf++;
}

static char *data_path(const char *file)
{
	const char *dir = getenv("KMT_TESTDATA");
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/data", file);
	return path;
}

const char *tb_data_path(const char *file)
{
	return data_path(file);
}

void tb_format_file(struct tb *tb, const char *system, const char *file)
{
	struct sbuf sb = { 0 };
	char name[256];

	snprintf(name, sizeof(name), "formats/%s", file);
	if (read_file(data_path(name), &sb)) {
		fprintf(stderr, "tbuild: cannot read %s\n", data_path(name));
		abort();
	}
	tb_format_text(tb, system, sb.buf);
	sbuf_release(&sb);
}

void tb_formats_6_18(struct tb *tb)
{
	static const char *const f[][2] = {
		{ "kmem", "6.18-kmem_kmalloc.format" }, { "kmem", "6.18-kmem_kfree.format" },
		{ "kmem", "6.18-kmem_kmem_cache_alloc.format" },
		{ "kmem", "6.18-kmem_kmem_cache_free.format" },
		{ "kmem", "6.18-kmem_mm_page_alloc.format" },
		{ "kmem", "6.18-kmem_mm_page_free.format" },
		{ "kmem", "6.18-kmem_mm_page_free_batched.format" },
		{ "percpu", "6.18-percpu_percpu_alloc_percpu.format" },
		{ "percpu", "6.18-percpu_percpu_free_percpu.format" },
		{ "sched", "6.18-sched_sched_process_fork.format" },
		{ "sched", "6.18-sched_sched_process_exec.format" },
		{ "sched", "6.18-sched_sched_process_exit.format" },
		{ "task", "6.18-task_task_rename.format" },
		{ "task", "6.18-task_task_newtask.format" },
		{ "ftrace", "6.18-ftrace_kernel_stack.format" },
		{ "vmalloc", "6.18-vmalloc_alloc_vmap_area.format" },
		{ "vmalloc", "6.18-vmalloc_free_vmap_area_noflush.format" },
	};
	size_t i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		tb_format_file(tb, f[i][0], f[i][1]);
}

void tb_formats_of(struct tb *tb, const char *version)
{
	static const char *const f[][2] = {
		{ "kmem", "kmem_kmalloc" }, { "kmem", "kmem_kmalloc_node" }, { "kmem", "kmem_kfree" },
		{ "kmem", "kmem_kmem_cache_alloc" }, { "kmem", "kmem_kmem_cache_alloc_node" },
		{ "kmem", "kmem_kmem_cache_free" }, { "kmem", "kmem_mm_page_alloc" },
		{ "kmem", "kmem_mm_page_free" }, { "kmem", "kmem_mm_page_free_batched" },
		{ "percpu", "percpu_percpu_alloc_percpu" }, { "percpu", "percpu_percpu_free_percpu" },
		{ "sched", "sched_sched_process_fork" }, { "sched", "sched_sched_process_exec" },
		{ "sched", "sched_sched_process_exit" }, { "task", "task_task_rename" },
		{ "task", "task_task_newtask" }, { "ftrace", "ftrace_kernel_stack" },
		{ "vmalloc", "vmalloc_alloc_vmap_area" }, { "vmalloc", "vmalloc_free_vmap_area_noflush" },
	};
	char name[256];
	size_t i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		snprintf(name, sizeof(name), "formats/%s/%s.format", version, f[i][1]);
		if (access(data_path(name), F_OK))
			continue;	/* not in that kernel */
		snprintf(name, sizeof(name), "%s/%s.format", version, f[i][1]);
		tb_format_file(tb, f[i][0], name);
	}
}

void tb_slab_lists(struct tb *tb, const char *aliases, const char *caches)
{
	tb->slab_aliases = aliases;
	tb->slab_caches = caches;
}

void tb_uname(struct tb *tb, const char *text)
{
	tb->uname = text;
}

void tb_kallsyms(struct tb *tb, const char *text)
{
	free(tb->kallsyms);
	tb->kallsyms = strdup(text);
}

void tb_cmdlines(struct tb *tb, const char *text)
{
	free(tb->cmdlines);
	tb->cmdlines = strdup(text);
}

void tb_cpustat(struct tb *tb, int cpu, const char *text)
{
	free(tb->cpu[cpu].stats);
	tb->cpu[cpu].stats = strdup(text);
}

void tb_flush_page(struct tb *tb, int cpu)
{
	kmt_pagew_flush(&tb->cpu[cpu].w);
}

void tb_lost(struct tb *tb, int cpu, int64_t lost)
{
	kmt_pagew_lost(&tb->cpu[cpu].w, lost);
}

static void put_event(struct tb *tb, struct tb_cpu *c, uint64_t ts, const uint8_t *p, uint32_t len)
{
	if (ts < c->last_ts) {
		fprintf(stderr, "tbuild: time goes back on a CPU (%llu < %llu)\n",
			(unsigned long long)ts, (unsigned long long)c->last_ts);
		abort();
	}
	c->last_ts = ts;
	if (kmt_pagew_add(&c->w, ts, p, len))
		abort();
}

bool tb_has(struct tb *tb, const char *system, const char *event, const char *field)
{
	const struct kmt_format *fmt = kmt_formats_find(&tb->fs, system, event);

	return fmt && (!field || kmt_format_field(fmt, field));
}

void tb_emit_some(struct tb *tb, int cpu, uint64_t ts, const char *system, const char *event,
		  int pid, const struct tb_val *vals)
{
	struct tb_val v[16];
	int n = 0;

	for (; vals->name && n < 15; vals++)
		if (tb_has(tb, system, event, vals->name))
			v[n++] = *vals;
	v[n].name = NULL;
	tb_emit(tb, cpu, ts, system, event, pid, v);
}

void tb_emit(struct tb *tb, int cpu, uint64_t ts, const char *system, const char *event,
	     int pid, const struct tb_val *vals)
{
	const struct kmt_format *fmt = kmt_formats_find(&tb->fs, system, event);
	uint8_t rec[1024] = { 0 };
	uint32_t len = 0, dyn;
	uint16_t id;
	int i;

	if (!fmt) {
		fprintf(stderr, "tbuild: no format %s:%s\n", system, event);
		abort();
	}
	for (i = 0; i < fmt->nr_fields; i++)
		len = MAX(len, fmt->fields[i].offset + fmt->fields[i].size);
	dyn = len;
	id = (uint16_t)fmt->id;
	memcpy(rec, &id, 2);
	memcpy(rec + 4, &pid, 4);
	for (; vals && vals->name; vals++) {
		const struct kmt_field *f = kmt_format_field(fmt, vals->name);

		if (!f) {
			fprintf(stderr, "tbuild: %s has no field %s\n", event, vals->name);
			abort();
		}
		if (f->flags & KMT_FIELD_DATALOC) {
			uint32_t n = (uint32_t)strlen(vals->str) + 1, dl = (n << 16) | dyn;

			memcpy(rec + f->offset, &dl, 4);
			memcpy(rec + dyn, vals->str, n);
			dyn += n;
		} else if (vals->str) {
			strncpy((char *)rec + f->offset, vals->str, f->size);
		} else if (vals->arr) {
			uint32_t n = MIN((uint32_t)vals->narr * 8, 1024 - f->offset);

			memcpy(rec + f->offset, vals->arr, n);
			len = MAX(len, f->offset + n);
			dyn = MAX(dyn, len);
		} else {
			memcpy(rec + f->offset, &vals->num, f->size);
		}
	}
	put_event(tb, &tb->cpu[cpu], ts, rec, dyn);
}

void tb_access(struct tb *tb, int cpu, uint64_t ts, int pid, uint64_t ip, uint64_t obj,
	       uint32_t offset, bool write, const char *field)
{
	struct kmt_access a = { .pid = pid, .ip = ip, .obj = obj, .offset = offset, .len = 8,
				.write = write, .field = field };
	uint8_t rec[KMT_ACCESS_MAX];
	int i;

	if (!tb->acc) {
		tb->acc = calloc((size_t)tb->ncpus, sizeof(*tb->acc));
		for (i = 0; i < tb->ncpus; i++)
			if (kmt_pagew_init(&tb->acc[i].w, tb->subbuf, page_out, &tb->acc[i]))
				abort();
		tb_format_text(tb, KMT_ACCESS_SYSTEM, kmt_access_format());
	}
	put_event(tb, &tb->acc[cpu], ts, rec, kmt_access_encode(rec, &a));
}

void tb_access_lost(struct tb *tb, int cpu, int64_t lost)
{
	kmt_pagew_lost(&tb->acc[cpu].w, lost);
}

const uint8_t *tb_cpu_data(struct tb *tb, int cpu, uint64_t *size)
{
	*size = tb->cpu[cpu].data.len;
	return (const uint8_t *)tb->cpu[cpu].data.buf;
}

const uint8_t *tb_access_data(struct tb *tb, int cpu, uint64_t *size)
{
	if (tb->acc)
		kmt_pagew_flush(&tb->acc[cpu].w);
	*size = tb->acc ? tb->acc[cpu].data.len : 0;
	return tb->acc ? (const uint8_t *)tb->acc[cpu].data.buf : NULL;
}

static const char header_page_6_18[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

int tb_write(struct tb *tb, const char *path, int version, enum kmt_zalg zalg)
{
	struct kmt_writer_opts o = { .version = version, .zalg = zalg, .level = 1,
				     .chunk_pages = 4, .page_size = 4096, .long_size = 8 };
	struct kmt_trace_meta m = { 0 };
	struct kmt_wcpu *wc = calloc((size_t)tb->ncpus * 2, sizeof(*wc));
	struct kmt_wbuffer b[2] = {
		{ .name = "", .clock = "local", .subbuf_size = tb->subbuf, .nr_cpus = tb->ncpus,
		  .cpus = wc },
		{ .name = KMT_ACCESS_BUFFER, .clock = "local", .subbuf_size = tb->subbuf,
		  .nr_cpus = tb->ncpus, .cpus = wc + tb->ncpus },
	};
	struct kmt_diag d;
	int fd, i, ret;

	for (i = 0; i < tb->ncpus; i++) {
		kmt_pagew_flush(&tb->cpu[i].w);
		wc[i].cpu = i;
		wc[i].mem = tb->cpu[i].data.buf;
		wc[i].size = tb->cpu[i].data.len;
		wc[i].stats = tb->cpu[i].stats;
		if (tb->acc) {
			kmt_pagew_flush(&tb->acc[i].w);
			wc[tb->ncpus + i].cpu = i;
			wc[tb->ncpus + i].mem = tb->acc[i].data.buf;
			wc[tb->ncpus + i].size = tb->acc[i].data.len;
		}
	}
	m.header_page.data = header_page_6_18;
	m.header_page.len = strlen(header_page_6_18);
	m.header_event.data = "# compressed entry header\n";
	m.header_event.len = strlen(m.header_event.data);
	m.formats = tb->wf;
	m.nr_formats = tb->nwf;
	m.kallsyms.data = tb->kallsyms ? tb->kallsyms : "";
	m.kallsyms.len = strlen(m.kallsyms.data);
	m.cmdlines.data = tb->cmdlines ? tb->cmdlines : "";
	m.cmdlines.len = strlen(m.cmdlines.data);
	m.printk.data = "";
	m.uname = tb->uname ? tb->uname : "Linux test 6.18.0 x86_64";
	m.slab_aliases = tb->slab_aliases;
	m.slab_caches = tb->slab_caches;
	m.trace_clock = "[local] global\n";
	m.version = "tbuild";
	m.cpu_count = tb->ncpus;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		free(wc);
		return -errno;
	}
	ret = kmt_write_trace(fd, &o, &m, b, tb->acc ? 2 : 1, &d);
	if (ret)
		fprintf(stderr, "tbuild: %s\n", d.msg);
	close(fd);
	free(wc);
	return ret;
}

void tb_kmalloc(struct tb *tb, int cpu, uint64_t ts, int pid, uint64_t site, uint64_t ptr,
		uint64_t req, uint64_t alloc)
{
	tb_emit(tb, cpu, ts, "kmem", "kmalloc", pid, (struct tb_val[]){
		{ "call_site", site }, { "ptr", ptr }, { "bytes_req", req },
		{ "bytes_alloc", alloc }, { "gfp_flags", 0xcc0 }, { "node", (uint64_t)-1 },
		{ NULL } });
}

void tb_kfree(struct tb *tb, int cpu, uint64_t ts, int pid, uint64_t site, uint64_t ptr)
{
	tb_emit(tb, cpu, ts, "kmem", "kfree", pid, (struct tb_val[]){
		{ "call_site", site }, { "ptr", ptr }, { NULL } });
}

void tb_cache_alloc(struct tb *tb, int cpu, uint64_t ts, int pid, uint64_t site, uint64_t ptr,
		    const char *cache, uint64_t req, uint64_t alloc)
{
	tb_emit(tb, cpu, ts, "kmem", "kmem_cache_alloc", pid, (struct tb_val[]){
		{ "call_site", site }, { "ptr", ptr }, { "name", 0, cache },
		{ "bytes_req", req }, { "bytes_alloc", alloc }, { "gfp_flags", 0xcc0 },
		{ "node", (uint64_t)-1 }, { NULL } });
}

void tb_cache_free(struct tb *tb, int cpu, uint64_t ts, int pid, uint64_t site, uint64_t ptr,
		   const char *cache)
{
	tb_emit(tb, cpu, ts, "kmem", "kmem_cache_free", pid, (struct tb_val[]){
		{ "call_site", site }, { "ptr", ptr }, { "name", 0, cache }, { NULL } });
}

static char tmpnames[64][128];
static int ntmp;

const char *tb_tmpname(const char *tag)
{
	char *p = tmpnames[ntmp++ % 64];

	snprintf(p, 128, "/tmp/kmt-unit-%d-%s.dat", (int)getpid(), tag);
	return p;
}

void tb_cleanup(void)
{
	int i;

	for (i = 0; i < ntmp && i < 64; i++)
		unlink(tmpnames[i]);
	ntmp = 0;
}
