/*
 * Test trace builder (see tbuild.h). Pages are packed like the kernel's
 * ring buffer: a 16-byte header (u64 timestamp, u64 commit), events with a
 * 4-byte header (type_len:5, delta:27), TIME_EXTEND when a delta does not
 * fit in 27 bits, type_len 0 events for payloads over 112 bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kmemtrace/format.h>
#include <kmemtrace/page.h>
#include "kmt-local.h"
#include "tbuild.h"

#define HDR 16

struct tb_cpu {
	struct sbuf data;		/* closed pages */
	uint8_t *page;
	uint32_t used;			/* bytes of events in page */
	bool open;
	uint64_t page_ts, last_ts;
	bool lost_flag;
	int64_t lost;
	char *stats;
};

struct tb {
	int ncpus;
	uint32_t subbuf;
	struct kmt_formats fs;
	struct kmt_wformat wf[256];
	int nwf;
	char *texts[256];
	struct tb_cpu *cpu;
	char *kallsyms, *cmdlines;
};

struct tb *tb_new(int ncpus, uint32_t subbuf)
{
	struct tb *tb = calloc(1, sizeof(*tb));
	int i;

	tb->ncpus = ncpus;
	tb->subbuf = subbuf ? subbuf : 4096;
	tb->cpu = calloc((size_t)ncpus, sizeof(*tb->cpu));
	for (i = 0; i < ncpus; i++)
		tb->cpu[i].page = calloc(1, tb->subbuf);
	kmt_formats_init(&tb->fs);
	return tb;
}

void tb_free(struct tb *tb)
{
	int i;

	for (i = 0; i < tb->ncpus; i++) {
		sbuf_release(&tb->cpu[i].data);
		free(tb->cpu[i].page);
		free(tb->cpu[i].stats);
	}
	for (i = 0; i < tb->nwf; i++)
		free(tb->texts[i]);
	kmt_formats_release(&tb->fs);
	free(tb->cpu);
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
	};
	size_t i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		tb_format_file(tb, f[i][0], f[i][1]);
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

static void close_page(struct tb *tb, struct tb_cpu *c)
{
	uint64_t commit;

	if (!c->open)
		return;
	commit = c->used;
	memset(c->page, 0, HDR);
	memcpy(c->page, &c->page_ts, 8);
	if (c->lost_flag) {
		commit |= KMT_RB_MISSED_EVENTS;
		if (c->lost >= 0) {
			commit |= KMT_RB_MISSED_STORED;
			memcpy(c->page + HDR + c->used, &c->lost, 8);
		}
		c->lost_flag = false;
	}
	memcpy(c->page + 8, &commit, 8);
	sbuf_add(&c->data, c->page, tb->subbuf);
	memset(c->page, 0, tb->subbuf);
	c->open = false;
	c->used = 0;
}

void tb_flush_page(struct tb *tb, int cpu)
{
	close_page(tb, &tb->cpu[cpu]);
}

void tb_lost(struct tb *tb, int cpu, int64_t lost)
{
	struct tb_cpu *c = &tb->cpu[cpu];

	close_page(tb, c);
	c->lost_flag = true;
	c->lost = lost;
}

static void put_event(struct tb *tb, struct tb_cpu *c, uint64_t ts, const uint8_t *p, uint32_t len)
{
	uint32_t plen = (len + 3) & ~3u, need, room;
	uint64_t delta;
	uint32_t hdr;

	need = (plen <= 112 ? 4 : 8) + plen;
	room = tb->subbuf - HDR - 8;	/* keep room for a lost count */
	if (c->open && c->used + need + 8 > room)
		close_page(tb, c);
	if (!c->open) {
		c->open = true;
		c->page_ts = ts;
		c->last_ts = ts;
		c->used = 0;
	}
	if (ts < c->last_ts) {
		fprintf(stderr, "tbuild: time goes back on a CPU (%llu < %llu)\n",
			(unsigned long long)ts, (unsigned long long)c->last_ts);
		abort();
	}
	delta = ts - c->last_ts;
	if (delta >= (1u << 27)) {
		uint32_t ext[2];

		ext[0] = 30 | (uint32_t)((delta & ((1u << 27) - 1)) << 5);
		ext[1] = (uint32_t)(delta >> 27);
		memcpy(c->page + HDR + c->used, ext, 8);
		c->used += 8;
		delta = 0;
	}
	if (plen <= 112) {
		hdr = (plen / 4) | (uint32_t)(delta << 5);
		memcpy(c->page + HDR + c->used, &hdr, 4);
		memcpy(c->page + HDR + c->used + 4, p, len);
		c->used += 4 + plen;
	} else {
		uint32_t a0 = plen + 4;

		hdr = (uint32_t)(delta << 5);
		memcpy(c->page + HDR + c->used, &hdr, 4);
		memcpy(c->page + HDR + c->used + 4, &a0, 4);
		memcpy(c->page + HDR + c->used + 8, p, len);
		c->used += 8 + plen;
	}
	c->last_ts = ts;
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
		} else {
			memcpy(rec + f->offset, &vals->num, f->size);
		}
	}
	put_event(tb, &tb->cpu[cpu], ts, rec, dyn);
}

const uint8_t *tb_cpu_data(struct tb *tb, int cpu, uint64_t *size)
{
	*size = tb->cpu[cpu].data.len;
	return (const uint8_t *)tb->cpu[cpu].data.buf;
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
	struct kmt_wcpu *wc = calloc((size_t)tb->ncpus, sizeof(*wc));
	struct kmt_wbuffer b = { .name = "", .clock = "local", .subbuf_size = tb->subbuf,
				 .nr_cpus = tb->ncpus, .cpus = wc };
	struct kmt_diag d;
	int fd, i, ret;

	for (i = 0; i < tb->ncpus; i++) {
		close_page(tb, &tb->cpu[i]);
		wc[i].cpu = i;
		wc[i].mem = tb->cpu[i].data.buf;
		wc[i].size = tb->cpu[i].data.len;
		wc[i].stats = tb->cpu[i].stats;
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
	m.uname = "Linux test 6.18.0 x86_64";
	m.trace_clock = "[local] global\n";
	m.version = "tbuild";
	m.cpu_count = tb->ncpus;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		free(wc);
		return -errno;
	}
	ret = kmt_write_trace(fd, &o, &m, &b, 1, &d);
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
