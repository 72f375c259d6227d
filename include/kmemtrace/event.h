/*
 * Memory events, decoded. The decoder is built from the formats stored in
 * a trace file: for every event id it knows which kind of memory event it
 * is and where each field lives, so kernels that moved fields, renamed them
 * (page -> pfn), dropped them (no cache name on kmem_cache_free before 6.2)
 * or split events (kmalloc_node before 6.1) decode into the same struct.
 */
#ifndef KMEMTRACE_EVENT_H
#define KMEMTRACE_EVENT_H

#include <stdbool.h>
#include <stdint.h>
#include "format.h"
#include "page.h"

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
/* Names of memory events that could not be mapped, "" if none. */
const char *kmt_decoder_skipped(const struct kmt_decoder *dec);

/*
 * Decode @rec from CPU @cpu into @ev. Returns the kind (> 0), 0 for an
 * event we do not decode, or KMT_EFORMAT if a field lies outside the record.
 */
int kmt_decode(const struct kmt_decoder *dec, const struct kmt_rec *rec, int cpu,
	       struct kmt_event *ev);

#endif
