/*
 * Kernel symbols from a trace file's kallsyms section: address ->
 * "function+0xoff". Only text symbols are kept (call sites and stack
 * entries are code addresses).
 */
#ifndef KMEMTRACE_SYMBOLS_H
#define KMEMTRACE_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct kmt_symbols;

/* Parse /proc/kallsyms text (copied). NULL + errno on failure. */
struct kmt_symbols *kmt_symbols_parse(const char *text, size_t len);
/* Read and parse a kallsyms file (/proc/kallsyms). NULL + errno on failure. */
struct kmt_symbols *kmt_symbols_load(const char *path);
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

#endif
