/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libFuzzer target: event format parsing and record decoding.
 *
 * Input layout:
 *
 *	u16 L (little endian) | L bytes of format text | u8 mode | records...
 *
 * The format text goes to kmt_format_parse() (with the system its event
 * name belongs to, so the decoder maps it to a real kind), to
 * kmt_page_layout_parse() (as a header_page text) and to the flag-table
 * parser (field "gfp_flags"). The parsed format joins two fixed real 6.18
 * formats (kmem:kmalloc id 658, kmem:kmem_cache_alloc id 659) in a
 * kmt_formats set, and a decoder is built over them. mode bit 0 makes the
 * decoder big-endian, bit 1 gives it a 4-byte kernel long.
 *
 * Records: each is one length byte n (n < 8 counts as 8) and then n bytes
 * (fewer if the input ends), copied into an exactly sized buffer so any
 * read past the record is an ASan report, and decoded with kmt_decode().
 * Strings and stacks of decoded events must lie inside their record.
 *
 * Pages: the whole input is also loaded as a ring-buffer sub-buffer with
 * the default 64-bit layout, and the bytes after the mode byte with the
 * parsed header_page layout (or the default one); both are iterated with
 * kmt_page_next() and their records decoded too.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/event.h>
#include <kmemtrace/tracefile.h>
#include "touch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);


/* tests/data/formats/6.18-kmem_kmalloc.format */
static const char fmt_kmalloc[] =
	"name: kmalloc\n"
	"ID: 658\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:const void * ptr;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:size_t bytes_req;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:size_t bytes_alloc;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long gfp_flags;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\tfield:int node;\toffset:48;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"call_site=%pS ptr=%p bytes_req=%zu bytes_alloc=%zu gfp_flags=%s node=%d accounted=%"
	"s\", (void *)REC->call_site, REC->ptr, REC->bytes_req, REC->bytes_alloc, (REC->gfp_flags) ? __pr"
	"int_flags(REC->gfp_flags, \"|\", {( unsigned long)(((((((( gfp_t)(((((1UL))) << (10))|((((1UL)))"
	" << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7))) | (( gfp_t)((((1UL))) "
	"<< (20)))) | (( gfp_t)((((1UL))) << (1)))) | (( gfp_t)((((1UL))) << (3))) | (( gfp_t)0)) | (( gf"
	"p_t)((((1UL))) << (18))) | (( gfp_t)((((1UL))) << (19))) | (( gfp_t)((((1UL))) << (13)))) & ~(( "
	"gfp_t)(((((1UL))) << (10))|((((1UL))) << (11))))) | (( gfp_t)((((1UL))) << (10)))), \"GFP_TRANSH"
	"UGE\"}, {( unsigned long)((((((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((("
	"(1UL))) << (6))) | (( gfp_t)((((1UL))) << (7))) | (( gfp_t)((((1UL))) << (20)))) | (( gfp_t)(((("
	"1UL))) << (1)))) | (( gfp_t)((((1UL))) << (3))) | (( gfp_t)0)) | (( gfp_t)((((1UL))) << (18))) |"
	" (( gfp_t)((((1UL))) << (19))) | (( gfp_t)((((1UL))) << (13)))) & ~(( gfp_t)(((((1UL))) << (10))"
	"|((((1UL))) << (11))))), \"GFP_TRANSHUGE_LIGHT\"}, {( unsigned long)((((( gfp_t)(((((1UL))) << ("
	"10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7))) | (( gf"
	"p_t)((((1UL))) << (20)))) | (( gfp_t)((((1UL))) << (1)))) | (( gfp_t)((((1UL))) << (3))) | (( gf"
	"p_t)0)), \"GFP_HIGHUSER_MOVABLE\"}, {( unsigned long)(((( gfp_t)(((((1UL))) << (10))|((((1UL))) "
	"<< (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7))) | (( gfp_t)((((1UL))) <"
	"< (20)))) | (( gfp_t)((((1UL))) << (1)))), \"GFP_HIGHUSER\"}, {( unsigned long)((( gfp_t)(((((1U"
	"L))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7))"
	") | (( gfp_t)((((1UL))) << (20)))), \"GFP_USER\"}, {( unsigned long)(((( gfp_t)(((((1UL))) << (1"
	"0))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7)))) | (( gf"
	"p_t)((((1UL))) << (22)))), \"GFP_KERNEL_ACCOUNT\"}, {( unsigned long)((( gfp_t)(((((1UL))) << (1"
	"0))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7)))), \"GFP_"
	"KERNEL\"}, {( unsigned long)((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)(((("
	"1UL))) << (6)))), \"GFP_NOFS\"}, {( unsigned long)((( gfp_t)((((1UL))) << (5)))|(( gfp_t)((((1UL"
	"))) << (11)))), \"GFP_ATOMIC\"}, {( unsigned long)((( gfp_t)(((((1UL))) << (10))|((((1UL))) << ("
	"11))))), \"GFP_NOIO\"}, {( unsigned long)((( gfp_t)((((1UL))) << (11))) | (( gfp_t)((((1UL))) <<"
	" (13)))), \"GFP_NOWAIT\"}, {( unsigned long)(( gfp_t)((((1UL))) << (0))), \"GFP_DMA\"}, {( unsig"
	"ned long)(( gfp_t)((((1UL))) << (2))), \"GFP_DMA32\"}, {( unsigned long)(( gfp_t)(((((1UL))) << "
	"(10))|((((1UL))) << (11)))), \"__GFP_RECLAIM\"}, {( unsigned long)(( gfp_t)((((1UL))) << (0))), "
	"\"__GFP_DMA\"}, {( unsigned long)(( gfp_t)((((1UL))) << (1))), \"__GFP_HIGHMEM\"}, {( unsigned l"
	"ong)(( gfp_t)((((1UL))) << (2))), \"__GFP_DMA32\"}, {( unsigned long)(( gfp_t)((((1UL))) << (3))"
	"), \"__GFP_MOVABLE\"}, {( unsigned long)(( gfp_t)((((1UL))) << (4))), \"__GFP_RECLAIMABLE\"}, {("
	" unsigned long)(( gfp_t)((((1UL))) << (5))), \"__GFP_HIGH\"}, {( unsigned long)(( gfp_t)((((1UL)"
	")) << (6))), \"__GFP_IO\"}, {( unsigned long)(( gfp_t)((((1UL))) << (7))), \"__GFP_FS\"}, {( uns"
	"igned long)(( gfp_t)((((1UL))) << (8))), \"__GFP_ZERO\"}, {( unsigned long)(( gfp_t)((((1UL))) <"
	"< (10))), \"__GFP_DIRECT_RECLAIM\"}, {( unsigned long)(( gfp_t)((((1UL))) << (11))), \"__GFP_KSW"
	"APD_RECLAIM\"}, {( unsigned long)(( gfp_t)((((1UL))) << (12))), \"__GFP_WRITE\"}, {( unsigned lo"
	"ng)(( gfp_t)((((1UL))) << (13))), \"__GFP_NOWARN\"}, {( unsigned long)(( gfp_t)((((1UL))) << (14"
	"))), \"__GFP_RETRY_MAYFAIL\"}, {( unsigned long)(( gfp_t)((((1UL))) << (15))), \"__GFP_NOFAIL\"}"
	", {( unsigned long)(( gfp_t)((((1UL))) << (16))), \"__GFP_NORETRY\"}, {( unsigned long)(( gfp_t)"
	"((((1UL))) << (17))), \"__GFP_MEMALLOC\"}, {( unsigned long)(( gfp_t)((((1UL))) << (18))), \"__G"
	"FP_COMP\"}, {( unsigned long)(( gfp_t)((((1UL))) << (19))), \"__GFP_NOMEMALLOC\"}, {( unsigned l"
	"ong)(( gfp_t)((((1UL))) << (20))), \"__GFP_HARDWALL\"}, {( unsigned long)(( gfp_t)((((1UL))) << "
	"(21))), \"__GFP_THISNODE\"}, {( unsigned long)(( gfp_t)((((1UL))) << (22))), \"__GFP_ACCOUNT\"},"
	" {( unsigned long)(( gfp_t)((((1UL))) << (23))), \"__GFP_ZEROTAGS\"}, {( unsigned long)(( gfp_t)"
	"((((1UL))) << (24))), \"__GFP_NO_OBJ_EXT\"}, { 0, ((void *)0) } ) : \"none\", REC->node, (1 && ("
	"REC->gfp_flags & ( unsigned long)(( gfp_t)((((1UL))) << (22))))) ? \"true\" : \"false\"\n";

/* tests/data/formats/6.18-kmem_kmem_cache_alloc.format */
static const char fmt_cache_alloc[] =
	"name: kmem_cache_alloc\n"
	"ID: 659\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:const void * ptr;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:__data_loc char[] name;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:size_t bytes_req;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:size_t bytes_alloc;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long gfp_flags;\toffset:48;\tsize:8;\tsigned:0;\n"
	"\tfield:int node;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:bool accounted;\toffset:60;\tsize:1;\tsigned:0;\n"
	"\n"
	"print fmt: \"call_site=%pS ptr=%p name=%s bytes_req=%zu bytes_alloc=%zu gfp_flags=%s node=%d acc"
	"ounted=%s\", (void *)REC->call_site, REC->ptr, __get_str(name), REC->bytes_req, REC->bytes_alloc"
	", (REC->gfp_flags) ? __print_flags(REC->gfp_flags, \"|\", {( unsigned long)(((((((( gfp_t)(((((1"
	"UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7)"
	")) | (( gfp_t)((((1UL))) << (20)))) | (( gfp_t)((((1UL))) << (1)))) | (( gfp_t)((((1UL))) << (3)"
	")) | (( gfp_t)0)) | (( gfp_t)((((1UL))) << (18))) | (( gfp_t)((((1UL))) << (19))) | (( gfp_t)((("
	"(1UL))) << (13)))) & ~(( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11))))) | (( gfp_t)((((1UL)))"
	" << (10)))), \"GFP_TRANSHUGE\"}, {( unsigned long)((((((( gfp_t)(((((1UL))) << (10))|((((1UL))) "
	"<< (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7))) | (( gfp_t)((((1UL))) <"
	"< (20)))) | (( gfp_t)((((1UL))) << (1)))) | (( gfp_t)((((1UL))) << (3))) | (( gfp_t)0)) | (( gfp"
	"_t)((((1UL))) << (18))) | (( gfp_t)((((1UL))) << (19))) | (( gfp_t)((((1UL))) << (13)))) & ~(( g"
	"fp_t)(((((1UL))) << (10))|((((1UL))) << (11))))), \"GFP_TRANSHUGE_LIGHT\"}, {( unsigned long)((("
	"(( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)(("
	"((1UL))) << (7))) | (( gfp_t)((((1UL))) << (20)))) | (( gfp_t)((((1UL))) << (1)))) | (( gfp_t)(("
	"((1UL))) << (3))) | (( gfp_t)0)), \"GFP_HIGHUSER_MOVABLE\"}, {( unsigned long)(((( gfp_t)(((((1U"
	"L))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7))"
	") | (( gfp_t)((((1UL))) << (20)))) | (( gfp_t)((((1UL))) << (1)))), \"GFP_HIGHUSER\"}, {( unsign"
	"ed long)((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (("
	" gfp_t)((((1UL))) << (7))) | (( gfp_t)((((1UL))) << (20)))), \"GFP_USER\"}, {( unsigned long)((("
	"( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((("
	"(1UL))) << (7)))) | (( gfp_t)((((1UL))) << (22)))), \"GFP_KERNEL_ACCOUNT\"}, {( unsigned long)(("
	"( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((("
	"(1UL))) << (7)))), \"GFP_KERNEL\"}, {( unsigned long)((( gfp_t)(((((1UL))) << (10))|((((1UL))) <"
	"< (11)))) | (( gfp_t)((((1UL))) << (6)))), \"GFP_NOFS\"}, {( unsigned long)((( gfp_t)((((1UL))) "
	"<< (5)))|(( gfp_t)((((1UL))) << (11)))), \"GFP_ATOMIC\"}, {( unsigned long)((( gfp_t)(((((1UL)))"
	" << (10))|((((1UL))) << (11))))), \"GFP_NOIO\"}, {( unsigned long)((( gfp_t)((((1UL))) << (11)))"
	" | (( gfp_t)((((1UL))) << (13)))), \"GFP_NOWAIT\"}, {( unsigned long)(( gfp_t)((((1UL))) << (0))"
	"), \"GFP_DMA\"}, {( unsigned long)(( gfp_t)((((1UL))) << (2))), \"GFP_DMA32\"}, {( unsigned long"
	")(( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))), \"__GFP_RECLAIM\"}, {( unsigned long)(( gf"
	"p_t)((((1UL))) << (0))), \"__GFP_DMA\"}, {( unsigned long)(( gfp_t)((((1UL))) << (1))), \"__GFP_"
	"HIGHMEM\"}, {( unsigned long)(( gfp_t)((((1UL))) << (2))), \"__GFP_DMA32\"}, {( unsigned long)(("
	" gfp_t)((((1UL))) << (3))), \"__GFP_MOVABLE\"}, {( unsigned long)(( gfp_t)((((1UL))) << (4))), "
	"\"__GFP_RECLAIMABLE\"}, {( unsigned long)(( gfp_t)((((1UL))) << (5))), \"__GFP_HIGH\"}, {( unsig"
	"ned long)(( gfp_t)((((1UL))) << (6))), \"__GFP_IO\"}, {( unsigned long)(( gfp_t)((((1UL))) << (7"
	"))), \"__GFP_FS\"}, {( unsigned long)(( gfp_t)((((1UL))) << (8))), \"__GFP_ZERO\"}, {( unsigned "
	"long)(( gfp_t)((((1UL))) << (10))), \"__GFP_DIRECT_RECLAIM\"}, {( unsigned long)(( gfp_t)((((1UL"
	"))) << (11))), \"__GFP_KSWAPD_RECLAIM\"}, {( unsigned long)(( gfp_t)((((1UL))) << (12))), \"__GF"
	"P_WRITE\"}, {( unsigned long)(( gfp_t)((((1UL))) << (13))), \"__GFP_NOWARN\"}, {( unsigned long)"
	"(( gfp_t)((((1UL))) << (14))), \"__GFP_RETRY_MAYFAIL\"}, {( unsigned long)(( gfp_t)((((1UL))) <<"
	" (15))), \"__GFP_NOFAIL\"}, {( unsigned long)(( gfp_t)((((1UL))) << (16))), \"__GFP_NORETRY\"}, "
	"{( unsigned long)(( gfp_t)((((1UL))) << (17))), \"__GFP_MEMALLOC\"}, {( unsigned long)(( gfp_t)("
	"(((1UL))) << (18))), \"__GFP_COMP\"}, {( unsigned long)(( gfp_t)((((1UL))) << (19))), \"__GFP_NO"
	"MEMALLOC\"}, {( unsigned long)(( gfp_t)((((1UL))) << (20))), \"__GFP_HARDWALL\"}, {( unsigned lo"
	"ng)(( gfp_t)((((1UL))) << (21))), \"__GFP_THISNODE\"}, {( unsigned long)(( gfp_t)((((1UL))) << ("
	"22))), \"__GFP_ACCOUNT\"}, {( unsigned long)(( gfp_t)((((1UL))) << (23))), \"__GFP_ZEROTAGS\"}, "
	"{( unsigned long)(( gfp_t)((((1UL))) << (24))), \"__GFP_NO_OBJ_EXT\"}, { 0, ((void *)0) } ) : \""
	"none\", REC->node, REC->accounted ? \"true\" : \"false\"\n";

/* The system each event the decoder knows belongs to (by event name). */
static const struct {
	const char *name, *system;
} systems[] = {
	{ "kmalloc", "kmem" }, { "kmalloc_node", "kmem" },
	{ "kmem_cache_alloc", "kmem" }, { "kmem_cache_alloc_node", "kmem" },
	{ "kfree", "kmem" }, { "kmem_cache_free", "kmem" },
	{ "mm_page_alloc", "kmem" }, { "mm_page_free", "kmem" },
	{ "mm_page_free_direct", "kmem" }, { "mm_page_free_batched", "kmem" },
	{ "mm_pagevec_free", "kmem" },
	{ "percpu_alloc_percpu", "percpu" }, { "percpu_free_percpu", "percpu" },
	{ "sched_process_fork", "sched" }, { "sched_process_exec", "sched" },
	{ "sched_process_exit", "sched" },
	{ "task_rename", "task" }, { "task_newtask", "task" },
	{ "kernel_stack", "ftrace" },
	{ "access", "kmemtrace" },
};

/* A decoded string or stack must lie inside the record it came from. */
static void check_inside(const struct kmt_rec *rec, const void *p, uint64_t n, const char *what)
{
	const uint8_t *b = p;

	if (!n)
		return;
	if (!b || b < rec->data || b > rec->data + rec->len ||
	    n > (uint64_t)(rec->data + rec->len - b)) {
		fprintf(stderr, "fuzz-decode: decoded %s (%llu bytes) lies outside its %u-byte record\n",
			what, (unsigned long long)n, rec->len);
		abort();
	}
	touch(p, (size_t)n);
}

static void decode_one(const struct kmt_decoder *dec, const struct kmt_rec *rec, int cpu,
		       int long_size)
{
	struct kmt_event ev;
	int k = kmt_decode(dec, rec, cpu, &ev);

	if (k <= 0)
		return;
	if (k >= KMT_EV_NR || ev.kind != k) {
		fprintf(stderr, "fuzz-decode: kmt_decode returned kind %d, event says %u\n", k, ev.kind);
		abort();
	}
	check_inside(rec, ev.name, ev.name_len, "name");
	check_inside(rec, ev.str2, ev.str2_len, "str2");
	check_inside(rec, ev.stack, (uint64_t)ev.nr_stack * (uint64_t)long_size, "stack");
	touch_str(kmt_kind_name((enum kmt_kind)ev.kind));
	sink += ev.call_site + ev.ptr + ev.bytes_req + ev.bytes_alloc + ev.gfp + (uint64_t)ev.node +
		ev.order + (uint64_t)ev.migratetype + (uint64_t)ev.pid2 + ev.offset + ev.flags;
}

/* Load @len bytes at @base as a sub-buffer and decode every record in it. */
static void walk_page(const uint8_t *base, size_t len, const struct kmt_page_layout *pl, bool be,
		      const struct kmt_decoder *dec, int long_size)
{
	struct kmt_diag d = { 0 };
	struct kmt_page_iter it;
	struct kmt_page pg;
	struct kmt_rec rec;
	int ret;

	if (len > UINT32_MAX)
		return;
	if (kmt_page_load(&pg, base, (uint32_t)len, pl, be, &d)) {
		touch_str(d.msg);
		return;
	}
	sink += pg.ts + (uint64_t)pg.lost + pg.missed;
	kmt_page_iter_init(&it, &pg);
	while ((ret = kmt_page_next(&it, &rec, &d)) > 0) {
		if (rec.data < pg.data || rec.len > (uint64_t)(pg.data + pg.data_len - rec.data)) {
			fprintf(stderr, "fuzz-decode: page record at +%u (%u bytes) outside the "
				"%u committed bytes\n", rec.offset, rec.len, pg.data_len);
			abort();
		}
		touch(rec.data, rec.len);
		decode_one(dec, &rec, 0, long_size);
	}
	if (ret < 0)
		touch_str(d.msg);
	sink += it.nr_pad + it.nr_ext + it.nr_abs;
}

static const char *system_of(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(systems) / sizeof(systems[0]); i++)
		if (!strcmp(systems[i].name, name))
			return systems[i].system;
	return NULL;
}

static void add_fixed(struct kmt_formats *fs, const char *text)
{
	struct kmt_diag d = { 0 };
	struct kmt_format fmt;

	if (kmt_format_parse(&fmt, "kmem", text, strlen(text), &d)) {
		fprintf(stderr, "fuzz-decode: a fixed format does not parse: %s\n", d.msg);
		abort();
	}
	if (kmt_formats_add(fs, &fmt))
		kmt_format_release(&fmt);
}

static void try_flags(const struct kmt_format *fmt, uint64_t extra)
{
	static const uint64_t vals[] = {
		0, 1, 0x400, 0xcc0, 0x2800, 0xffffffffULL, 1ULL << 63, UINT64_MAX,
	};
	static const size_t lens[] = { 1, 2, 7, 16, 256 };
	struct kmt_flags *fl = kmt_flags_from_format(fmt, "gfp_flags");
	size_t i, j;

	sink += kmt_flags_count(fl);
	for (i = 0; i <= sizeof(vals) / sizeof(vals[0]); i++) {
		uint64_t v = i < sizeof(vals) / sizeof(vals[0]) ? vals[i] : extra;

		for (j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			char *buf = malloc(lens[j]);	/* exact size: ASan sees overruns */

			if (!buf)
				continue;
			touch_str(kmt_flags_format(fl, v, buf, lens[j]));
			free(buf);
		}
	}
	kmt_flags_free(fl);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct kmt_formats fs;
	struct kmt_decoder *dec;

	(void)argc;
	(void)argv;
	/* The harness is only useful if the fixed formats map to real kinds. */
	kmt_formats_init(&fs);
	add_fixed(&fs, fmt_kmalloc);
	add_fixed(&fs, fmt_cache_alloc);
	dec = kmt_decoder_new(&fs, false, 8);
	if (!dec || kmt_decoder_kind(dec, 658) != KMT_EV_KMALLOC ||
	    kmt_decoder_kind(dec, 659) != KMT_EV_CACHE_ALLOC) {
		fprintf(stderr, "fuzz-decode: the fixed formats do not decode\n");
		abort();
	}
	kmt_decoder_free(dec);
	kmt_formats_release(&fs);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kmt_page_layout pl, def;
	struct kmt_diag d = { 0 };
	struct kmt_formats fs;
	struct kmt_format fmt;
	struct kmt_decoder *dec;
	const uint8_t *p, *end = data + size;
	const char *text;
	size_t tlen;
	uint64_t extra = 0, ts = 0;
	bool be = false, layout_ok;
	int long_size = 8, idx = 0, i;
	uint8_t mode = 0;

	if (size < 2)
		return 0;
	tlen = (size_t)data[0] | (size_t)data[1] << 8;
	if (tlen > size - 2)
		tlen = size - 2;
	text = (const char *)data + 2;
	p = data + 2 + tlen;
	if (p < end) {
		mode = *p++;
		be = mode & 1;
		long_size = mode & 2 ? 4 : 8;
	}
	if (end - p >= 8)
		memcpy(&extra, p, 8);

	/* header_page parsing on the same text. */
	layout_ok = !kmt_page_layout_parse(&pl, text, tlen, &d);
	if (layout_ok)
		sink += pl.ts_offset + pl.ts_size + pl.commit_offset + pl.commit_size + pl.data_offset;
	else
		touch_str(d.msg);

	kmt_formats_init(&fs);
	add_fixed(&fs, fmt_kmalloc);
	add_fixed(&fs, fmt_cache_alloc);

	if (!kmt_format_parse(&fmt, NULL, text, tlen, &d)) {
		const char *sys = system_of(fmt.name);

		if (sys && strcmp(sys, fmt.system)) {
			kmt_format_release(&fmt);
			if (kmt_format_parse(&fmt, sys, text, tlen, &d)) {
				fprintf(stderr, "fuzz-decode: a format parsed once but not twice: %s\n", d.msg);
				abort();
			}
		}
		touch_str(fmt.system);
		touch_str(fmt.name);
		touch(fmt.text, fmt.text_len + 1);
		for (i = 0; i < fmt.nr_fields; i++) {
			touch_str(fmt.fields[i].name);
			touch_str(fmt.fields[i].type);
		}
		sink += (uintptr_t)kmt_format_field(&fmt, "gfp_flags");
		try_flags(&fmt, extra);
		if (kmt_formats_add(&fs, &fmt))
			kmt_format_release(&fmt);	/* duplicate id: still ours */
	} else {
		touch_str(d.msg);
	}
	sink += (uintptr_t)kmt_formats_find(&fs, "kmem", "kmalloc");
	sink += (uintptr_t)kmt_formats_by_id(&fs, 0xffff);

	dec = kmt_decoder_new(&fs, be, long_size);
	if (!dec) {
		kmt_formats_release(&fs);
		return 0;
	}
	touch_str(kmt_decoder_skipped(dec));
	for (i = 0; i < KMT_EV_NR; i++)
		sink += kmt_decoder_has(dec, (enum kmt_kind)i);
	sink += kmt_decoder_kind(dec, 658) + kmt_decoder_kind(dec, 0xffff) +
		kmt_decoder_kind(dec, fs.max_id) + kmt_decoder_kind(dec, fs.max_id + 1);

	/* The records. */
	while (p < end) {
		size_t n = *p++;
		struct kmt_rec rec;
		uint8_t *copy;

		if (n < 8)
			n = 8;
		if (n > (size_t)(end - p))
			n = (size_t)(end - p);
		copy = malloc(n ? n : 1);
		if (!copy)
			break;
		memcpy(copy, p, n);
		p += n;
		ts += 1 + (n & 7);
		rec.ts = ts;
		rec.data = copy;
		rec.len = (uint32_t)n;
		rec.offset = 0;
		decode_one(dec, &rec, idx++ % 4, long_size);
		free(copy);
	}

	/* Pages: the whole input (default layout), and the tail (parsed layout). */
	if (size >= 16) {
		kmt_page_layout_default(&def, 8);
		walk_page(data, size, &def, be, dec, long_size);
	}
	p = data + 2 + tlen + (2 + tlen < size);
	if (p < end) {
		if (!layout_ok)
			kmt_page_layout_default(&pl, long_size);
		walk_page(p, (size_t)(end - p), &pl, be, dec, long_size);
	}

	kmt_decoder_free(dec);
	kmt_formats_release(&fs);
	return 0;
}
