/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * __print_flags() tables from print formats (include/kmemtrace/event.h).
 * The values are C constant expressions as the preprocessor left them:
 *   {( unsigned long)((( gfp_t)((((1UL))) << (10))) | ...), "GFP_KERNEL"}
 * evaluated by a small recursive-descent parser: numbers (with U/L
 * suffixes), casts (skipped), ~ | & << >> + - and parentheses.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmemtrace/event.h>
#include "base/kmt-local.h"

struct flag {
	uint64_t mask;
	char name[48];
};

struct kmt_flags {
	struct flag *v;
	size_t n;
};

struct px {
	const char *p, *end;
	bool bad;
	int depth;
};

static void ws(struct px *x)
{
	while (x->p < x->end && isspace((unsigned char)*x->p))
		x->p++;
}

static bool eat(struct px *x, const char *tok)
{
	size_t n = strlen(tok);

	ws(x);
	if ((size_t)(x->end - x->p) >= n && !memcmp(x->p, tok, n)) {
		x->p += n;
		return true;
	}
	return false;
}

static uint64_t e_or(struct px *x);

static uint64_t e_unary(struct px *x)
{
	uint64_t v = 0;

	if (++x->depth > 200) {
		x->bad = true;
		return 0;
	}
	ws(x);
	if (x->p >= x->end) {
		x->bad = true;
	} else if (eat(x, "~")) {
		v = ~e_unary(x);
	} else if (eat(x, "-")) {
		v = -e_unary(x);
	} else if (eat(x, "(")) {
		ws(x);
		if (x->p < x->end && (isalpha((unsigned char)*x->p) || *x->p == '_')) {
			/* A cast: "( gfp_t)", "( unsigned long)". */
			while (x->p < x->end && *x->p != ')')
				x->p++;
			if (!eat(x, ")"))
				x->bad = true;
			v = e_unary(x);
		} else {
			v = e_or(x);
			if (!eat(x, ")"))
				x->bad = true;
		}
	} else if (isdigit((unsigned char)*x->p)) {
		char *end;

		v = strtoull(x->p, &end, 0);
		x->p = end;
		while (x->p < x->end && (*x->p == 'U' || *x->p == 'L' || *x->p == 'u' || *x->p == 'l'))
			x->p++;
	} else {
		x->bad = true;
	}
	x->depth--;
	return v;
}

static uint64_t e_add(struct px *x)
{
	uint64_t v = e_unary(x);

	while (!x->bad) {
		if (eat(x, "+"))
			v += e_unary(x);
		else if (eat(x, "-"))
			v -= e_unary(x);
		else
			break;
	}
	return v;
}

static uint64_t e_shift(struct px *x)
{
	uint64_t v = e_add(x);

	while (!x->bad) {
		if (eat(x, "<<")) {
			uint64_t s = e_add(x);

			v = s < 64 ? v << s : 0;
		} else if (eat(x, ">>")) {
			uint64_t s = e_add(x);

			v = s < 64 ? v >> s : 0;
		} else {
			break;
		}
	}
	return v;
}

static uint64_t e_and(struct px *x)
{
	uint64_t v = e_shift(x);

	while (!x->bad && (ws(x), x->p < x->end && *x->p == '&' && (x->p + 1 >= x->end || x->p[1] != '&'))) {
		x->p++;
		v &= e_shift(x);
	}
	return v;
}

static uint64_t e_or(struct px *x)
{
	uint64_t v = e_and(x);

	while (!x->bad && (ws(x), x->p < x->end && *x->p == '|' && (x->p + 1 >= x->end || x->p[1] != '|'))) {
		x->p++;
		v |= e_and(x);
	}
	return v;
}

struct kmt_flags *kmt_flags_from_format(const struct kmt_format *fmt, const char *field)
{
	char needle[128];
	const char *text = fmt->text, *end = fmt->text + fmt->text_len, *p;
	struct kmt_flags *f;
	size_t cap = 0;

	p = strstr(text, "print fmt:");
	if (!p)
		return NULL;
	snprintf(needle, sizeof(needle), "__print_flags(REC->%s,", field);
	p = strstr(p, needle);
	if (!p)
		return NULL;
	p += strlen(needle);
	/* Skip the delimiter string. */
	p = strchr(p, '"');
	if (!p || !(p = strchr(p + 1, '"')))
		return NULL;
	p++;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	for (;;) {
		struct px x = { p, end, false, 0 };
		const char *q, *name;
		uint64_t v;

		if (!eat(&x, ",") || !eat(&x, "{"))
			break;
		v = e_or(&x);
		if (x.bad || !eat(&x, ","))
			break;
		ws(&x);
		if (x.p >= x.end || *x.p != '"')
			break;	/* { 0, ((void *)0) } ends the list */
		name = x.p + 1;
		q = memchr(name, '"', (size_t)(end - name));
		if (!q)
			break;
		x.p = q + 1;
		if (!eat(&x, "}"))
			break;
		if (ALLOC_GROW(f->v, f->n + 1, cap, 32))
			break;
		f->v[f->n].mask = v;
		snprintf(f->v[f->n].name, sizeof(f->v[f->n].name), "%.*s", (int)(q - name), name);
		f->n++;
		p = x.p;
	}
	if (!f->n) {
		kmt_flags_free(f);
		return NULL;
	}
	return f;
}

struct kmt_flags *kmt_flags_gfp(const struct kmt_formats *fs)
{
	/* The page allocator's and kmalloc's print formats name the same flags alike. */
	const struct kmt_format *fmt = kmt_formats_find(fs, "kmem", "mm_page_alloc");

	if (!fmt)
		fmt = kmt_formats_find(fs, "kmem", "kmalloc");
	return fmt ? kmt_flags_from_format(fmt, "gfp_flags") : NULL;
}

const char *kmt_flags_format(const struct kmt_flags *f, uint64_t val, char *buf, size_t len)
{
	size_t o = 0, i;

	buf[0] = '\0';
	if (!val) {
		snprintf(buf, len, "none");
		return buf;
	}
	for (i = 0; f && i < f->n && val; i++) {
		uint64_t m = f->v[i].mask;

		if (m && (val & m) == m) {
			o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%s", o ? "|" : "", f->v[i].name);
			val &= ~m;
		}
	}
	if (val)
		snprintf(buf + MIN(o, len - 1), o < len ? len - o : 0, "%s0x%" PRIx64, o ? "|" : "", val);
	return buf;
}

uint64_t kmt_flags_mask(const struct kmt_flags *f, const char *name)
{
	size_t i;

	for (i = 0; f && i < f->n; i++)
		if (!strcmp(f->v[i].name, name))
			return f->v[i].mask;
	return 0;
}

size_t kmt_flags_count(const struct kmt_flags *f)
{
	return f ? f->n : 0;
}

void kmt_flags_free(struct kmt_flags *f)
{
	if (!f)
		return;
	free(f->v);
	free(f);
}
