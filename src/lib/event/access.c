/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kmemtrace:access event (include/kmemtrace/event.h): its format and
 * its encoding, in the kernel's record layout.
 */
#include <kmemtrace/event.h>
#include "base/kmt-local.h"

#define STR(x) #x
#define XSTR(x) STR(x)

static const char format[] =
	"name: " KMT_ACCESS_EVENT "\n"
	"ID: " XSTR(KMT_ACCESS_ID) "\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long obj;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned int offset;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned char write;\toffset:28;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char len;\toffset:29;\tsize:1;\tsigned:0;\n"
	"\tfield:__data_loc char[] field;\toffset:32;\tsize:4;\tsigned:0;\n"
	"\n"
	"print fmt: \"%s obj=%lx+%u len=%u %s ip=%pS\", REC->write ? \"write\" : \"read\", "
	"REC->obj, REC->offset, REC->len, __get_str(field), (void *)REC->ip\n";

const char *kmt_access_format(void)
{
	return format;
}

uint32_t kmt_access_encode(uint8_t *buf, const struct kmt_access *a)
{
	uint16_t type = KMT_ACCESS_ID;
	size_t n = a->field ? strnlen(a->field, 63) : 0;
	uint32_t loc = (uint32_t)(n + 1) << 16 | 36;

	memset(buf, 0, 36);
	memcpy(buf, &type, 2);
	memcpy(buf + 4, &a->pid, 4);
	memcpy(buf + 8, &a->ip, 8);
	memcpy(buf + 16, &a->obj, 8);
	memcpy(buf + 24, &a->offset, 4);
	buf[28] = a->write;
	buf[29] = a->len;
	memcpy(buf + 32, &loc, 4);
	if (n)
		memcpy(buf + 36, a->field, n);
	buf[36 + n] = 0;
	return (uint32_t)(36 + n + 1);
}
