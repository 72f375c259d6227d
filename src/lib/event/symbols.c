/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kallsyms lookup: text symbols sorted by address, binary search.
 * Typical input: ~150,000 lines, ~60,000 text symbols. A line that is not
 * a kallsyms line (a damaged file) may have been a function's: addresses
 * after the symbol before it are then not named, but shown raw.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmemtrace/event.h>
#include "base/kmt-local.h"

#define MAX_OFFSET (1u << 20)	/* no function is a megabyte long */

struct sym {
	uint64_t addr;
	const char *name;
	size_t line, end;		/* its line in the text: [line, end) */
	bool hole_after;		/* a damaged line follows: what is after is unknown */
};

struct kmt_symbols {
	char *text;
	struct sym *v;
	size_t n;
	size_t bad;			/* lines that are not kallsyms lines */
	size_t first_bad;		/* where the first is in the text */
	char first_text[72];		/* and what it says, escaped */
};

/*
 * By address, then in the order of the text: symbols at one address
 * (aliases) sort the same way whatever other lines the text holds, so a
 * text cut down (kmt_symbols_cut) names an address as the whole one does.
 */
static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return (x->addr > y->addr) - (x->addr < y->addr);
	return (x->line > y->line) - (x->line < y->line);
}

static bool is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/*
 * "ADDR T name[\t[module]]", any type letter; an empty line is fine too.
 * A module's name may hold any byte but NUL: compilers leave local labels
 * such as ".L14472\x021" in modules (seen in Debian's arm64 ext4).
 */
static bool line_ok(const char *p, const char *nl)
{
	const char *q = p, *tab;
	bool module;

	if (p == nl)
		return true;
	while (q < nl && q - p < 16 && isxdigit((unsigned char)*q))
		q++;
	if (q == p || nl - q < 4 || q[0] != ' ' || !isalpha((unsigned char)q[1]) || q[2] != ' ')
		return false;
	tab = memrchr(q + 3, '\t', (size_t)(nl - q - 3));
	module = tab && nl - tab >= 3 && tab[1] == '[' && nl[-1] == ']';
	for (q += 3; q < nl; q++)
		if (module && q < tab ? !*q : (unsigned char)*q < 0x20 ? *q != '\t' : (unsigned char)*q >= 0x7f)
			return false;
	return true;
}

/* A line that is not a kallsyms line: counted, and the symbol before it marked. */
static void bad_line(struct kmt_symbols *s, const char *p, const char *nl)
{
	if (!s->bad++) {
		s->first_bad = (size_t)(p - s->text);
		kmt_escape(s->first_text, sizeof(s->first_text), p, (size_t)(nl - p));
	}
	if (s->n)
		s->v[s->n - 1].hole_after = true;
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
	/* Some writers end the text with a NUL. */
	while (len && !text[len - 1])
		len--;
	end = s->text + len;
	for (p = s->text; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *q, *name, *tab;
		uint64_t addr = 0;
		int h;

		if (!nl)
			nl = end;
		if (!line_ok(p, nl))
			bad_line(s, p, nl);
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
				if (ALLOC_GROW(s->v, s->n + 1, cap, 4096)) {
					kmt_symbols_free(s);
					errno = ENOMEM;
					return NULL;
				}
				if (s->n && addr < s->v[s->n - 1].addr)
					sorted = false;
				s->v[s->n].addr = addr;
				s->v[s->n].name = name;
				s->v[s->n].line = (size_t)(p - s->text);
				s->v[s->n].end = (size_t)(nl - s->text);
				s->v[s->n].hole_after = false;
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

size_t kmt_symbols_bad_lines(const struct kmt_symbols *s, size_t *offset, const char **first)
{
	if (!s || !s->bad)
		return 0;
	*offset = s->first_bad;
	*first = s->first_text;
	return s->bad;
}

/* The index of the symbol naming @addr (the last one at or below it), or SIZE_MAX. */
static size_t sym_index(const struct kmt_symbols *s, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!s || !s->n || addr < s->v[0].addr)
		return SIZE_MAX;
	hi = s->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (addr - s->v[lo].addr > MAX_OFFSET || (s->v[lo].hole_after && addr != s->v[lo].addr))
		return SIZE_MAX;
	return lo;
}

const char *kmt_symbols_lookup(const struct kmt_symbols *s, uint64_t addr, uint64_t *off)
{
	size_t i = sym_index(s, addr);

	if (i == SIZE_MAX)
		return NULL;
	if (off)
		*off = addr - s->v[i].addr;
	return s->v[i].name;
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

int kmt_symbols_read_kernel(char **text, size_t *len)
{
	struct sbuf sb = { 0 };
	int ret = read_file(KMT_KALLSYMS, &sb);

	if (ret) {
		sbuf_release(&sb);
		return ret;
	}
	*text = sb.buf;
	*len = sb.len;
	return 0;
}

struct kmt_symbols *kmt_symbols_load_kernel(void)
{
	return kmt_symbols_load(KMT_KALLSYMS);
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

/*
 * Keep symbol @i with the others at its address (the lookup names it after
 * the last of them) and those at the next address up (where it ends).
 */
static void keep_around(const struct kmt_symbols *s, bool *keep, size_t i)
{
	uint64_t at = s->v[i].addr;
	size_t j;

	while (i > 0 && s->v[i - 1].addr == at)
		i--;
	for (j = i; j < s->n && s->v[j].addr == at; j++)
		keep[j] = true;
	for (at = j < s->n ? s->v[j].addr : 0; j < s->n && s->v[j].addr == at; j++)
		keep[j] = true;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_line(const void *a, const void *b)
{
	const struct sym *x = *(const struct sym *const *)a, *y = *(const struct sym *const *)b;

	return (x->line > y->line) - (x->line < y->line);
}

/* Mark what naming @addrs needs; the names of their functions in *@names. */
static int mark_needed(const struct kmt_symbols *s, bool *keep, const uint64_t *addrs, size_t n,
		       const char ***names, size_t *nr_names)
{
	const char **v = malloc((n + 1) * sizeof(*v));
	size_t i, k = 0;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		size_t j = sym_index(s, addrs[i]);

		if (j == SIZE_MAX)
			continue;
		keep_around(s, keep, j);
		v[k++] = s->v[j].name;
	}
	qsort(v, k, sizeof(*v), cmp_name);
	*names = v;
	*nr_names = k;
	return 0;
}

char *kmt_symbols_cut(const char *text, size_t len, const uint64_t *addrs, size_t n, size_t *out_len)
{
	struct kmt_symbols *s = kmt_symbols_parse(text, len);
	const struct sym **kept = NULL;
	const char **names = NULL;
	size_t i, k = 0, nr_names = 0, total = 0;
	bool *keep = NULL;
	char *out = NULL, *p;

	if (!s)
		return NULL;
	/* A damaged text names addresses by what its bad lines hide: kept whole. */
	if (s->bad) {
		out = xstrndup(text, len);
		*out_len = len;
		goto out;
	}
	keep = calloc(s->n + 1, sizeof(*keep));
	kept = malloc((s->n + 1) * sizeof(*kept));
	if (!keep || !kept || mark_needed(s, keep, addrs, n, &names, &nr_names))
		goto oom;
	/* kmt_symbols_find() of a function named: every symbol of that name, as in the whole. */
	for (i = 0; nr_names && i < s->n; i++)
		if (bsearch(&s->v[i].name, names, nr_names, sizeof(*names), cmp_name))
			keep_around(s, keep, i);
	for (i = 0; i < s->n; i++)
		if (keep[i]) {
			kept[k++] = &s->v[i];
			total += s->v[i].end - s->v[i].line + 1;
		}
	/* The lines as they were, in the order they were. */
	qsort(kept, k, sizeof(*kept), cmp_line);
	out = p = malloc(total + 1);
	if (!out)
		goto oom;
	for (i = 0; i < k; i++) {
		size_t l = kept[i]->end - kept[i]->line;

		memcpy(p, text + kept[i]->line, l);
		p += l;
		*p++ = '\n';
	}
	*p = '\0';
	*out_len = (size_t)(p - out);
	goto out;
oom:
	errno = ENOMEM;
out:
	free(names);
	free(kept);
	free(keep);
	kmt_symbols_free(s);
	return out;
}
