/*
 * kallsyms lookup: text symbols sorted by address, binary search.
 * Typical input: ~150,000 lines, ~60,000 text symbols.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmemtrace/symbols.h>
#include "kmt-local.h"

#define MAX_OFFSET (1u << 20)	/* no function is a megabyte long */

struct sym {
	uint64_t addr;
	const char *name;
};

struct kmt_symbols {
	char *text;
	struct sym *v;
	size_t n;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

static bool is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

struct kmt_symbols *kmt_symbols_parse(const char *text, size_t len)
{
	struct kmt_symbols *s = calloc(1, sizeof(*s));
	size_t cap = 0;
	bool sorted = true;
	char *p, *end;

	if (!s)
		return NULL;
	s->text = xstrndup(text, len);
	if (!s->text) {
		free(s);
		return NULL;
	}
	end = s->text + len;
	for (p = s->text; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *q, *name, *tab;
		uint64_t addr = 0;
		int h;

		if (!nl)
			nl = end;
		*nl = '\0';
		/* "ffffffff81000000 T name\t[module]": look at the type first. */
		for (q = p; q < nl && (h = hexval(*q)) >= 0 && q - p < 16; q++)
			addr = addr << 4 | (uint64_t)h;
		if (q > p && q + 3 < nl && q[0] == ' ' && q[2] == ' ' && is_text(q[1]) && addr) {
			name = q + 3;
			tab = memchr(name, '\t', (size_t)(nl - name));
			if (tab)
				*tab = '\0';
			if (*name) {
				if (s->n == cap) {
					struct sym *nv;

					cap = cap ? cap * 2 : 4096;
					nv = realloc(s->v, cap * sizeof(*nv));
					if (!nv) {
						kmt_symbols_free(s);
						errno = ENOMEM;
						return NULL;
					}
					s->v = nv;
				}
				if (s->n && addr < s->v[s->n - 1].addr)
					sorted = false;
				s->v[s->n].addr = addr;
				s->v[s->n].name = name;
				s->n++;
			}
		}
		p = nl + 1;
	}
	/* /proc/kallsyms is nearly always in address order already. */
	if (!sorted && s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), cmp_sym);
	return s;
}

void kmt_symbols_free(struct kmt_symbols *s)
{
	if (!s)
		return;
	free(s->v);
	free(s->text);
	free(s);
}

size_t kmt_symbols_count(const struct kmt_symbols *s)
{
	return s ? s->n : 0;
}

const char *kmt_symbols_lookup(const struct kmt_symbols *s, uint64_t addr, uint64_t *off)
{
	size_t lo = 0, hi;

	if (!s || !s->n || addr < s->v[0].addr)
		return NULL;
	hi = s->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (addr - s->v[lo].addr > MAX_OFFSET)
		return NULL;
	if (off)
		*off = addr - s->v[lo].addr;
	return s->v[lo].name;
}

const char *kmt_symbols_format(const struct kmt_symbols *s, uint64_t addr, char *buf,
			       size_t len)
{
	uint64_t off;
	const char *name = kmt_symbols_lookup(s, addr, &off);

	if (name)
		snprintf(buf, len, "%s+0x%" PRIx64, name, off);
	else
		snprintf(buf, len, "0x%" PRIx64, addr);
	return buf;
}

struct kmt_symbols *kmt_symbols_load(const char *path)
{
	struct kmt_symbols *s;
	struct sbuf sb = { 0 };
	int ret = read_file(path, &sb);

	if (ret) {
		sbuf_release(&sb);
		errno = -ret;
		return NULL;
	}
	s = kmt_symbols_parse(sb.buf, sb.len);
	sbuf_release(&sb);
	return s;
}

int kmt_symbols_find(const struct kmt_symbols *s, const char *name, uint64_t *lo, uint64_t *hi)
{
	size_t i, first = SIZE_MAX;
	int n = 0;

	for (i = 0; s && i < s->n; i++)
		if (!strcmp(s->v[i].name, name) && !n++)
			first = i;
	if (!n)
		return 0;
	*lo = s->v[first].addr;
	/* The next symbol up (several may share an address). */
	for (i = first + 1; i < s->n && s->v[i].addr == *lo; i++)
		;
	*hi = i < s->n ? s->v[i].addr : *lo + 4096;
	return n;
}
