/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 *  * libkmemtrace, the event stage (src/lib/event/): records decoded into
 * memory events; gfp flags, task names, kernel symbols, merged slab
 * caches, BTF, watchpoint samples.
 */
#ifndef KMEMTRACE_EVENT_H
#define KMEMTRACE_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base.h"
#include "tracefile.h"

/*
 * Memory events, decoded. The decoder is built from the formats stored in
 * a trace file: for every event id it knows which kind of memory event it
 * is and where each field lives, so kernels that moved fields, renamed them
 * (page -> pfn), dropped them (no cache name on kmem_cache_free before 6.2)
 * or split events (kmalloc_node before 6.1) decode into the same struct.
 */

enum kmt_kind {
	KMT_EV_NONE = 0,		/* not an event we decode */
	KMT_EV_KMALLOC,
	KMT_EV_KFREE,
	KMT_EV_CACHE_ALLOC,
	KMT_EV_CACHE_FREE,
	KMT_EV_PAGE_ALLOC,
	KMT_EV_PAGE_FREE,
	KMT_EV_PAGE_FREE_BATCHED,
	KMT_EV_PCPU_ALLOC,
	KMT_EV_PCPU_FREE,
	KMT_EV_VMAP_ALLOC,		/* ptr = address, bytes_alloc = size (guard page included) */
	KMT_EV_VMAP_FREE,		/* ptr = address (freed lazily: the range is reused later) */
	KMT_EV_FORK,			/* pid2 = child, str2 = child comm */
	KMT_EV_EXEC,			/* pid2 = pid, str2 = filename */
	KMT_EV_EXIT,			/* pid2 = pid, str2 = comm */
	KMT_EV_RENAME,			/* pid2 = pid, str2 = new comm */
	KMT_EV_NEWTASK,			/* pid2 = pid, str2 = comm */
	KMT_EV_CGROUP,			/* cgroup_attach_task: pid2 = pid, str2 = the cgroup's
					   path, node = its hierarchy's id (0: cgroup v2) */
	KMT_EV_STACK,			/* stack entries of the previous event */
	KMT_EV_ACCESS,			/* kmemtrace:access, a watchpoint hit */
	KMT_EV_NR,
};

/* Event flags. */
enum {
	KMT_EVF_PAGE_PTR = 1 << 0,	/* ptr is a struct page *, not a pfn */
	KMT_EVF_NO_NAME = 1 << 1,	/* the kernel does not record a cache name */
	KMT_EVF_WRITE = 1 << 2,		/* access: a write */
	KMT_EVF_STACK_BE = 1 << 3,	/* stack entries are big-endian */
	KMT_EVF_FAILED = 1 << 4,	/* the allocation failed (vmalloc) */
	/* In interrupt context (hard or soft irq, NMI): the task's is only the interrupted one. */
	KMT_EVF_IRQ = 1 << 5,
	/*
	 * An allocation that asked to be charged to the task's memory cgroup:
	 * the event's accounted field (6.0 on), else __GFP_ACCOUNT in its gfp
	 * flags. Asked, not done: a task of the root cgroup, a kernel thread
	 * or an interrupt is not charged.
	 */
	KMT_EVF_ACCOUNTED = 1 << 6,
	/*
	 * ... or the event cannot tell: a kmem_cache_alloc without an
	 * accounted field (before 6.0) and without __GFP_ACCOUNT, whose cache
	 * may have been made with SLAB_ACCOUNT.
	 */
	KMT_EVF_ACCT_UNKNOWN = 1 << 7,
};

struct kmt_event {
	uint64_t ts;
	int32_t cpu;
	int32_t pid;			/* common_pid: the task it happened in */
	uint16_t kind;
	uint16_t id;
	uint32_t flags;
	uint64_t call_site;		/* 0 if the kernel does not record one */
	uint64_t ptr;			/* object, pfn (or struct page *), percpu ptr */
	uint64_t bytes_req;
	uint64_t bytes_alloc;
	uint64_t gfp;
	int32_t node;			/* -1 if none */
	uint32_t order;
	int32_t migratetype;		/* -1 if none */
	int32_t pid2;
	const char *name;		/* cache name, in the record; not NUL-terminated */
	uint32_t name_len;
	const char *str2;
	uint32_t str2_len;
	const uint8_t *stack;		/* nr_stack kernel longs, in the record */
	uint32_t nr_stack;
	uint32_t stack_word;		/* bytes per entry: the kernel's long */
	uint32_t offset;		/* access: byte offset in the object */
};

const char *kmt_kind_name(enum kmt_kind kind);

/* Entry @i (< nr_stack) of a stack event: a kernel address. */
static inline uint64_t kmt_event_stack(const struct kmt_event *ev, uint32_t i)
{
	const uint8_t *p = ev->stack + (size_t)i * ev->stack_word;
	uint64_t v = 0;
	uint32_t k;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* The common case, a 64-bit kernel in our own byte order: one load. */
	if (ev->stack_word == 8 && !(ev->flags & KMT_EVF_STACK_BE)) {
		__builtin_memcpy(&v, p, 8);
		return v;
	}
#endif
	for (k = 0; k < ev->stack_word; k++)
		v |= (uint64_t)p[(ev->flags & KMT_EVF_STACK_BE) ? ev->stack_word - 1 - k : k] << (8 * k);
	return v;
}

struct kmt_decoder;

/*
 * Build a decoder for @fs. Events whose format lacks a field we need are
 * left undecoded (KMT_EV_NONE) and listed by kmt_decoder_skipped().
 * NULL + errno on allocation failure.
 */
struct kmt_decoder *kmt_decoder_new(const struct kmt_formats *fs, bool big_endian,
				    int long_size);
void kmt_decoder_free(struct kmt_decoder *dec);
/* The kind event id @id decodes to. */
enum kmt_kind kmt_decoder_kind(const struct kmt_decoder *dec, uint32_t id);
/* Is any event of @kind present in the formats? */
bool kmt_decoder_has(const struct kmt_decoder *dec, enum kmt_kind kind);
/*
 * Do formats @fs have a kmem_cache_alloc (or _node) with no cache name
 * (kernels before 6.18, dfd04add595b)?
 */
bool kmt_decode_unnamed_cache_allocs(const struct kmt_formats *fs);
/*
 * What a kernel whose formats are @fs could not trace that 6.18 does, and
 * what stands in for it, a phrase each (static strings) into @why, at most
 * @max; returns how many. @slab_list: the kernel's slab list was kept (by
 * size, it names caches no event names). @no_vmalloc: the recorder found
 * no vmalloc events (kernels before 6.2; a format list cannot tell that
 * from events left out).
 */
size_t kmt_decode_lacks(const struct kmt_formats *fs, bool slab_list, bool no_vmalloc, const char **why,
			size_t max);
/* The same of the kernel that recorded trace file @f (its formats, slab list and settings). */
size_t kmt_decode_file_lacks(const struct kmt_file *f, const char **why, size_t max);
/* Names of memory events that could not be mapped, "" if none. */
const char *kmt_decoder_skipped(const struct kmt_decoder *dec);

/*
 * Decode @rec from CPU @cpu into @ev. Returns the kind (> 0), 0 for an
 * event we do not decode, or KMT_EFORMAT if a field lies outside the record.
 */
int kmt_decode(const struct kmt_decoder *dec, const struct kmt_rec *rec, int cpu,
	       struct kmt_event *ev);

/*
 * Symbolic flag names (gfp flags) read from an event's print format, the
 * way the kernel prints them: __print_flags(REC->gfp_flags, "|", {value,
 * "NAME"}, ...) with the values as C constant expressions. Reading them
 * from the file keeps the names right for the kernel that recorded it.
 */

struct kmt_flags;

/* The flag table of @field in @fmt's print format; NULL if none. */
struct kmt_flags *kmt_flags_from_format(const struct kmt_format *fmt, const char *field);
/*
 * The gfp flags' names of a file's formats @fs, as every output names them:
 * mm_page_alloc's gfp_flags table, else kmalloc's; NULL if neither has one.
 */
struct kmt_flags *kmt_flags_gfp(const struct kmt_formats *fs);
/* "GFP_KERNEL|__GFP_ZERO" (or "none", or hex for unknown bits). */
const char *kmt_flags_format(const struct kmt_flags *f, uint64_t val, char *buf, size_t len);
size_t kmt_flags_count(const struct kmt_flags *f);
/* The value of the flag named @name ("__GFP_ACCOUNT"), 0 if none (or @f NULL). */
uint64_t kmt_flags_mask(const struct kmt_flags *f, const char *name);
void kmt_flags_free(struct kmt_flags *f);

/*
 * pid -> command name, as in saved_cmdlines ("pid comm" lines). Built from
 * the CMDLINES section and from the sched/task events in a trace.
 */

#define KMT_COMM_LEN 16

struct kmt_comms;

struct kmt_comms *kmt_comms_new(void);	/* NULL + errno */
void kmt_comms_free(struct kmt_comms *c);
/* Set @pid's name (@len bytes, truncated to 15). -ENOMEM on failure. */
int kmt_comms_set(struct kmt_comms *c, int32_t pid, const char *name, size_t len);
/*
 * The same as of time @ts: unless a name set at a later time is there
 * already, so that names collected out of time order (one CPU after
 * another) end as the latest in time, as the kernel's do.
 */
int kmt_comms_set_at(struct kmt_comms *c, int32_t pid, const char *name, size_t len, uint64_t ts);
/* Every entry of @from into @c, each as of its own time. -ENOMEM on failure. */
int kmt_comms_merge(struct kmt_comms *c, const struct kmt_comms *from);
/* @pid's name, or NULL. */
const char *kmt_comms_get(const struct kmt_comms *c, int32_t pid);
/*
 * @pid's name as the kernel's own trace output gives it: the name known,
 * else "<idle>" for pid 0 (interrupts on an idle CPU), else "<...>". @c may be NULL.
 */
const char *kmt_comm_name(const struct kmt_comms *c, int32_t pid);
/* Add every "pid comm" line of @text; malformed lines are skipped. */
int kmt_comms_parse(struct kmt_comms *c, const char *text, size_t len);
/* The names of every running process and thread, from /proc. 0 or -ENOMEM. */
int kmt_comms_from_proc(struct kmt_comms *c);
/* All entries as "pid comm\n" lines, sorted by pid, into a malloc'd string. */
char *kmt_comms_format(const struct kmt_comms *c, size_t *len);
size_t kmt_comms_count(const struct kmt_comms *c);
/* The comm a task gets from exec'ing @filename: its basename, 15 chars. */
void kmt_comm_from_exec(const char *filename, size_t len, char out[KMT_COMM_LEN]);

struct kmt_event;
/*
 * The name a fork, rename, new-task or exec event gives task @ev->pid2
 * (exec: the program's basename, built in @buf), its length in *@len; NULL
 * for any other event.
 */
const char *kmt_event_task_name(const struct kmt_event *ev, char buf[KMT_COMM_LEN], size_t *len);

/*
 * Kernel symbols from a trace file's kallsyms section: address ->
 * "function+0xoff". Only text symbols are kept (call sites and stack
 * entries are code addresses).
 */

struct kmt_symbols;

/* Parse /proc/kallsyms text (copied). NULL + errno on failure. */
struct kmt_symbols *kmt_symbols_parse(const char *text, size_t len);
/* Read and parse a kallsyms file. NULL + errno on failure. */
struct kmt_symbols *kmt_symbols_load(const char *path);
/*
 * The running kernel's symbols, KMT_KALLSYMS, which only these two read:
 * its text into *@text (malloc'ed, NUL-terminated, *@len bytes without
 * the NUL; the caller frees it), 0 or -errno; or parsed, NULL + errno.
 */
#define KMT_KALLSYMS "/proc/kallsyms"
int kmt_symbols_read_kernel(char **text, size_t *len);
struct kmt_symbols *kmt_symbols_load_kernel(void);
void kmt_symbols_free(struct kmt_symbols *s);
size_t kmt_symbols_count(const struct kmt_symbols *s);
/*
 * Lines of the text that are not kallsyms lines (damage): how many, and
 * where the first is (*@offset, in the text) and what it says (*@first,
 * escaped and cut, owned by @s). 0 if none. Addresses after the symbol
 * before such a line are not named (kmt_symbols_lookup() gives NULL).
 */
size_t kmt_symbols_bad_lines(const struct kmt_symbols *s, size_t *offset, const char **first);
/*
 * The function containing @addr and the offset into it, or NULL if the
 * address is below every symbol or implausibly far past the nearest one.
 */
const char *kmt_symbols_lookup(const struct kmt_symbols *s, uint64_t addr, uint64_t *off);
/*
 * The addresses [*@lo, *@hi) of the function @name: from its address to
 * the next symbol's. Returns how many text symbols have that name (the
 * first is given), 0 if none.
 */
int kmt_symbols_find(const struct kmt_symbols *s, const char *name, uint64_t *lo, uint64_t *hi);
/*
 * The kallsyms @text (@len bytes) cut down to what naming the code
 * addresses @addrs needs: for each, the text symbols at the address of the
 * function containing it and at the next address up (where it ends), and
 * every symbol sharing its function's name with theirs. The lines are kept
 * whole and in their order, so that kmt_symbols_lookup() of each address,
 * and kmt_symbols_find() of each such function's name, give exactly what
 * they give with the whole text (a symbol kept only as the next one up is
 * found without its own end). A text with lines that are not symbols
 * (damage) is kept whole. Returns a malloc'ed NUL-terminated text of
 * *@out_len bytes; NULL + errno on failure.
 */
char *kmt_symbols_cut(const char *text, size_t len, const uint64_t *addrs, size_t n,
		      size_t *out_len);
/* "func+0x1a" into @buf, or "0xaddr" if unknown; returns @buf. */
const char *kmt_symbols_format(const struct kmt_symbols *s, uint64_t addr, char *buf,
			       size_t len);

/*
 * Slab cache names: merged caches and kmalloc size classes.
 *
 * The kernel merges caches of the same size and flags: /sys/kernel/slab/
 * NAME is then a link to a shared ":0000512", and the tracepoints report
 * every member by one name, that of the cache created first (the one
 * /proc/slabinfo lists): TCP's skbuff_fclone_cache traffic is reported as
 * pool_workqueue. A recording keeps the groups it found, as text, one
 * group a line, the reported name first:
 *
 *	pool_workqueue mem_cgroup_per_node sgpool-16 skbuff_fclone_cache
 *
 * and readers show such a cache as "pool_workqueue (+mem_cgroup_per_node,
 * sgpool-16, skbuff_fclone_cache)". The text is written and parsed here
 * only.
 */

/* One group of merged caches. */
struct kmt_slab_group {
	const char *name;		/* the name the tracepoints report */
	const char *const *aliases;	/* the others, sorted */
	size_t nr_aliases;
	const char *label;		/* "name (+alias, alias)" */
};

struct kmt_slab_aliases;

/* The groups of the running kernel (/sys/kernel/slab, /proc/slabinfo); NULL + errno. */
struct kmt_slab_aliases *kmt_slab_aliases_read(void);
/* The same from other places (tests): @slab_dir, @slabinfo (NULL: none). */
struct kmt_slab_aliases *kmt_slab_aliases_read_from(const char *slab_dir, const char *slabinfo);
/* From the text above; malformed lines are skipped. NULL + errno on ENOMEM. */
struct kmt_slab_aliases *kmt_slab_aliases_parse(const char *text, size_t len);
/* The groups and caches trace file @f keeps (none: an empty list); NULL + errno on ENOMEM. */
struct kmt_slab_aliases *kmt_slab_aliases_of_file(const struct kmt_file *f);
/* The text above, malloc'd (caller frees); NULL on ENOMEM. */
char *kmt_slab_aliases_format(const struct kmt_slab_aliases *a, size_t *len);
void kmt_slab_aliases_free(struct kmt_slab_aliases *a);
size_t kmt_slab_aliases_count(const struct kmt_slab_aliases *a);
/* The group @name (@len bytes) is a member of, or NULL; @a may be NULL. */
const struct kmt_slab_group *kmt_slab_group_of(const struct kmt_slab_aliases *a, const char *name,
					       size_t len);

/*
 * The kernel's caches and their sizes, for kernels whose kmem_cache_alloc
 * names no cache (before 6.18): an allocation of a size only one cache
 * has is that cache's. Read with the groups (kmt_slab_aliases_read());
 * a recording keeps them as text of their own, a cache a line, by the
 * name its tracepoints report (kmalloc caches left out: their events
 * are kmalloc's, named by size class):
 *
 *	names_cache 4096 4096 3		(name, object_size, size, order)
 */
struct kmt_slab_cache {
	const char *name;
	uint32_t object_size;		/* bytes_req of its kmem_cache_alloc events */
	uint32_t size;			/* bytes_alloc: the object with its metadata */
	uint32_t order;			/* of its slabs' pages */
};

/* Add the caches of the text above to @a (malformed lines skipped); 0 or -ENOMEM. */
int kmt_slab_caches_parse(struct kmt_slab_aliases *a, const char *text, size_t len);
/* The text above, malloc'd (caller frees); NULL on ENOMEM. */
char *kmt_slab_caches_format(const struct kmt_slab_aliases *a, size_t *len);
size_t kmt_slab_caches_count(const struct kmt_slab_aliases *a);
/* The one cache of these sizes, or NULL (@n: how many have them); @a may be NULL. */
const struct kmt_slab_cache *kmt_slab_cache_of_size(const struct kmt_slab_aliases *a, uint64_t object_size,
						    uint64_t size, size_t *n);
/* The caches of these sizes, the first @max into @out; returns how many there are. */
size_t kmt_slab_caches_of_size(const struct kmt_slab_aliases *a, uint64_t object_size, uint64_t size,
				const struct kmt_slab_cache **out, size_t max);

/*
 * kmalloc size classes: "kmalloc-64", "kmalloc-2k" and "kmalloc-2048" name
 * the 2048-byte class; the kernel's own spelling is kmalloc-2k. Returns the
 * size, or 0 if @name is not a kmalloc class name.
 */
uint64_t kmt_kmalloc_class(const char *name);
/* The kernel's name of the class of @size bytes into @buf ("kmalloc-large" past 8 KiB). */
const char *kmt_kmalloc_name(uint64_t size, char *buf, size_t len);
/*
 * The name the tracepoints give cache @name: a kmalloc class in the
 * kernel's spelling, a merged cache's reported name, else @name; into @buf.
 */
const char *kmt_slab_event_name(const struct kmt_slab_aliases *a, const char *name, char *buf,
				size_t len);
/*
 * A cache name given for the running kernel: @out gets the name its
 * events carry (as kmt_slab_event_name()), @merged the group's label if
 * the cache is merged, else "". -EINVAL for a malformed kmalloc class,
 * -ENOENT if the kernel has no such cache (where /sys/kernel/slab says),
 * with the reason in @d.
 */
int kmt_slab_cache_resolve(const char *name, char *out, size_t len, char *merged, size_t mlen,
			   struct kmt_diag *d);

/*
 * Kernel type information from BTF (/sys/kernel/btf/vmlinux): where a
 * member of a kernel struct lies, and which member covers a byte offset.
 * kmemtrace watch uses it so a user can say "eventfd_ctx.count" instead of
 * an offset, and to name the fields its samples hit. Read directly (no
 * libbpf, bpftool or pahole); every length and type id is checked against
 * the blob before use.
 */

#define KMT_BTF_VMLINUX "/sys/kernel/btf/vmlinux"

struct kmt_btf;

/* Open @path (NULL: the running kernel's). NULL + errno/@d on failure. */
struct kmt_btf *kmt_btf_open(const char *path, struct kmt_diag *d);
/* The same over @len bytes, copied. */
struct kmt_btf *kmt_btf_open_mem(const void *data, size_t len, const char *name,
				 struct kmt_diag *d);
void kmt_btf_close(struct kmt_btf *b);

struct kmt_btf_field {
	uint32_t offset;		/* bytes from the start of the struct */
	uint32_t size;			/* bytes (bit-fields: the bytes they span) */
	uint32_t bit_size;		/* 0 unless a bit-field */
	uint32_t struct_size;		/* the outer struct's size */
};

/*
 * Resolve "STRUCT" or "STRUCT.MEMBER[.MEMBER...]" (members of anonymous
 * unions and structs are found through them; a union works too). 0, or
 * -ENOENT with what was not found in @d.
 */
int kmt_btf_field(const struct kmt_btf *b, const char *path, struct kmt_btf_field *out,
		  struct kmt_diag *d);

/*
 * The innermost member of struct @name covering byte @offset, as a dotted
 * path ("wqh.lock"), into @buf. Returns its length, 0 if the byte is
 * padding or beyond the struct, -ENOENT if there is no such struct.
 */
int kmt_btf_name_at(const struct kmt_btf *b, const char *name, uint32_t offset,
		    char *buf, size_t len);

/*
 * kmemtrace:access — one watchpoint sample of kmemtrace watch, stored as a
 * ring-buffer event of its own format so that our reader and trace-cmd
 * decode it like any kernel event:
 *
 *	common fields | ip | obj | offset | write | len | field (__data_loc)
 *
 * ip is the instruction after the access (x86 data breakpoints trap after
 * the instruction), obj the watched object's address, offset the watched
 * word's offset in it, field the member's name when known.
 */

#define KMT_ACCESS_SYSTEM "kmemtrace"
#define KMT_ACCESS_EVENT "access"
#define KMT_ACCESS_ID 65000		/* far above the kernel's event ids */
#define KMT_ACCESS_MAX 128		/* bytes of an encoded record, at most */

struct kmt_access {
	int32_t pid;
	uint64_t ip, obj;
	uint32_t offset;
	uint8_t len;			/* bytes watched */
	bool write;
	const char *field;		/* NULL or "" if unknown; cut to 63 bytes */
};

/* The format text, as tracefs would show it. */
const char *kmt_access_format(void);
/* Encode @a into @buf (KMT_ACCESS_MAX bytes); returns the record length. */
uint32_t kmt_access_encode(uint8_t *buf, const struct kmt_access *a);

/*
 * The kallsyms a trace needs: the code addresses its events name (call
 * sites, stack frames, watchpoint instructions), gathered while the data
 * is read, and the kallsyms text cut down to the lines that name them as
 * the whole text does (kmt_symbols_cut). A recording keeps only those
 * (record --full-kallsyms: all); convert --strip-kallsyms cuts an older
 * file's the same way.
 */
/* A set of code addresses. One writer at a time: a thread each, then merged. */
struct kmt_symkeep;

/* An empty set; NULL + errno on failure. */
struct kmt_symkeep *kmt_symkeep_new(void);
/* NULL is fine. */
void kmt_symkeep_free(struct kmt_symkeep *k);
/*
 * Note the code addresses of @ev that readers name: its call site (or the
 * instruction of a watchpoint sample) and every frame of a stack. A note
 * that finds no memory is remembered, and kmt_symkeep_cut() then fails.
 */
void kmt_symkeep_event(struct kmt_symkeep *k, const struct kmt_event *ev);
/* Note one address (0 is none). */
void kmt_symkeep_addr(struct kmt_symkeep *k, uint64_t addr);
/* Add what @from holds to @into. */
void kmt_symkeep_merge(struct kmt_symkeep *into, const struct kmt_symkeep *from);
/* Distinct addresses noted. */
size_t kmt_symkeep_count(const struct kmt_symkeep *k);
/*
 * The kallsyms @text (@len bytes) cut down to the noted addresses'
 * (kmt_symbols_cut): a malloc'ed text in *@out, *@out_len bytes. 0, or
 * -ENOMEM (here or in a note: the set is not whole) with nothing given.
 */
int kmt_symkeep_cut(const struct kmt_symkeep *k, const char *text, size_t len, char **out,
		    size_t *out_len);

/*
 * Tasks' cgroups (cgroups.c): which cgroup each task was in when a
 * recording started, kept in the trace file (its CGROUPS option) so that
 * a file analysed on another machine gives the same answer; the kernel's
 * cgroup:cgroup_attach_task events and forks (inheritance) carry it on.
 *
 * Two hierarchies are kept per task: the cgroup v2 one ("0::/path" in
 * /proc/PID/cgroup) and, where cgroup v1 is mounted with the memory
 * controller, that one's ("N:memory:/path"): on a hybrid system (v1
 * controllers and a v2 tree beside them) memory is charged to the v1
 * memory cgroup. The text of the option, one line each:
 *   "kmemtrace-cgroups 1"
 *   "memory ID"                  v1 memory's hierarchy id (-1: none)
 *   "v2 0|1"                     a cgroup v2 hierarchy is mounted
 *   "TID\tFLAGS\tV2PATH\tMEMPATH" per task (thread), FLAGS "k" for a
 *                                kernel thread, "-" else; a path "-": none
 * Paths are as /proc shows them, relative to the hierarchy's root ("/",
 * "/system.slice/foo.service"); a path with a tab or newline is kept as
 * "-" (unknown).
 */
struct kmt_cgroups;

/* A task's cgroups: interned paths (owned by the set), NULL: none known. */
struct kmt_cgroup_task {
	const char *v2, *memory;
	bool kthread;
};

/* An empty set; NULL + errno on failure. */
struct kmt_cgroups *kmt_cgroups_new(void);
void kmt_cgroups_free(struct kmt_cgroups *c);	/* NULL is fine */
/*
 * Every task (each thread of /proc/PID/task/) of the running system,
 * read from @proc_root ("/proc"), with the layout from its
 * /proc/self/cgroup. Tasks that exit while it reads are passed over.
 * 0, or -ENOMEM / -errno if @proc_root cannot be read.
 */
int kmt_cgroups_from_proc(struct kmt_cgroups *c, const char *proc_root);
/*
 * Task @tid as @proc_root/TID/task/TID says now (its entry replaced); 0 also
 * if it is gone (nothing added), or -ENOMEM. The layout must be known (from_proc).
 */
int kmt_cgroups_read_task(struct kmt_cgroups *c, const char *proc_root, int32_t tid);
/* Add a file's text (@len bytes): 0, or KMT_EFORMAT on a malformed line (nothing kept of it). */
int kmt_cgroups_parse(struct kmt_cgroups *c, const char *text, size_t len);
/* The set as that text, malloc'd (*@len bytes, NUL-terminated); NULL + errno. */
char *kmt_cgroups_format(const struct kmt_cgroups *c, size_t *len);
/* Tasks in the set. */
size_t kmt_cgroups_count(const struct kmt_cgroups *c);
/* The v1 memory hierarchy's id (-1: none), and whether cgroup v2 is mounted. */
int kmt_cgroups_memory_id(const struct kmt_cgroups *c);
bool kmt_cgroups_has_v2(const struct kmt_cgroups *c);
/* Task @tid as the set has it, or NULL; valid until tasks are added (its paths until the set is freed). */
const struct kmt_cgroup_task *kmt_cgroups_task(const struct kmt_cgroups *c, int32_t tid);
/*
 * @path (@len bytes) interned in @c: the same pointer for the same path,
 * valid until kmt_cgroups_free(). Safe to call from several threads at
 * once (the model's shards each follow the same moves); NULL on ENOMEM.
 */
const char *kmt_cgroups_intern(struct kmt_cgroups *c, const char *path, size_t len);
/*
 * Is @path the cgroup @want or one of its descendants ("/a" holds "/a"
 * and "/a/b", not "/ab"; "/" holds everything)?
 */
bool kmt_cgroup_under(const char *path, const char *want);
/*
 * The container a cgroup path names, as "runtime:id" into @buf (id: the
 * first 12 hex digits of a container, a pod's UID whole): docker
 * ("/docker/<64 hex>", "docker-<64 hex>.scope"), containerd
 * ("cri-containerd-<64 hex>.scope"), cri-o ("crio-<64 hex>[.scope]", not
 * crio-conmon-), podman ("libpod-<64 hex>.scope"), and a Kubernetes pod
 * when no container is named ("kubepods[-burstable|-besteffort]-pod<uid>.slice",
 * '_' read as '-', or "/kubepods/[burstable/|besteffort/]pod<uid>"): "pod:<uid>".
 * The innermost one named wins. NULL if the path names none.
 */
const char *kmt_cgroup_container(const char *path, char *buf, size_t len);

#endif
