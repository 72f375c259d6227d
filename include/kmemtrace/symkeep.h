/*
 * The kallsyms a trace needs: the code addresses its events name (call
 * sites, stack frames, watchpoint instructions), gathered while the data
 * is read, and the kallsyms text cut down to the lines that name them as
 * the whole text does (kmt_symbols_cut). A recording keeps only those
 * (record --full-kallsyms: all); convert --strip-kallsyms cuts an older
 * file's the same way.
 */
#ifndef KMEMTRACE_SYMKEEP_H
#define KMEMTRACE_SYMKEEP_H

#include <stddef.h>
#include <stdint.h>
#include "event.h"

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

#endif
