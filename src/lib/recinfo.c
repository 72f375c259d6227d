/*
 * The recording's own description and its VERSION text
 * (include/kmemtrace/recinfo.h).
 */
#include <stdio.h>
#include <string.h>

#include <kmemtrace/kmemtrace.h>
#include <kmemtrace/recinfo.h>

#define PARTIAL_OPEN " (partial: "

const char *kmt_partial_words(unsigned int partial)
{
	switch (partial & (KMT_PARTIAL_ALLOCS | KMT_PARTIAL_FREES)) {
	case KMT_PARTIAL_ALLOCS: return "allocations";
	case KMT_PARTIAL_FREES: return "frees";
	case KMT_PARTIAL_ALLOCS | KMT_PARTIAL_FREES: return "allocations frees";
	}
	return "";
}

unsigned int kmt_partial_parse(const char *words, size_t len)
{
	unsigned int p = 0;

	if (memmem(words, len, "allocations", 11))
		p |= KMT_PARTIAL_ALLOCS;
	if (memmem(words, len, "frees", 5))
		p |= KMT_PARTIAL_FREES;
	return p;
}

const char *kmt_recinfo_format(const struct kmt_recinfo *ri, char *buf, size_t len)
{
	const char *rec = *ri->recorder ? ri->recorder : "kmemtrace " KMT_VERSION;

	if (ri->partial)
		snprintf(buf, len, "%s" PARTIAL_OPEN "%s)", rec, kmt_partial_words(ri->partial));
	else
		snprintf(buf, len, "%s", rec);
	return buf;
}

void kmt_recinfo_parse(struct kmt_recinfo *ri, const char *text)
{
	const char *p, *end;

	memset(ri, 0, sizeof(*ri));
	if (!text)
		return;
	p = strstr(text, PARTIAL_OPEN);
	end = p ? strchr(p, ')') : NULL;
	snprintf(ri->recorder, sizeof(ri->recorder), "%.*s",
		 (int)(p && end ? (size_t)(p - text) : strcspn(text, "\n")), text);
	ri->ours = !strncmp(text, "kmemtrace ", 10);
	if (p && end)
		ri->partial = kmt_partial_parse(p, (size_t)(end - p));
}
