/*
 * Symbolic flag names (gfp flags) read from an event's print format, the
 * way the kernel prints them: __print_flags(REC->gfp_flags, "|", {value,
 * "NAME"}, ...) with the values as C constant expressions. Reading them
 * from the file keeps the names right for the kernel that recorded it.
 */
#ifndef KMEMTRACE_FLAGS_H
#define KMEMTRACE_FLAGS_H

#include <stddef.h>
#include <stdint.h>
#include "format.h"

struct kmt_flags;

/* The flag table of @field in @fmt's print format; NULL if none. */
struct kmt_flags *kmt_flags_from_format(const struct kmt_format *fmt, const char *field);
/* "GFP_KERNEL|__GFP_ZERO" (or "none", or hex for unknown bits). */
const char *kmt_flags_format(const struct kmt_flags *f, uint64_t val, char *buf, size_t len);
size_t kmt_flags_count(const struct kmt_flags *f);
void kmt_flags_free(struct kmt_flags *f);

#endif
