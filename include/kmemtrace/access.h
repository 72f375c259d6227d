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
#ifndef KMEMTRACE_ACCESS_H
#define KMEMTRACE_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#endif
