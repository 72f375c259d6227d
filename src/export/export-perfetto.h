/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * export --format perfetto, between its two files: export-perfetto.c (the
 * events as Perfetto's ftrace messages, the tasks, the counter tracks)
 * and export-perfetto-names.c (the memory events again as track events
 * on their tasks' tracks, named by function and cache through Perfetto's
 * interned data, so that the UI and trace_processor group them by name).
 */
#ifndef KMT_EXPORT_PERFETTO_H
#define KMT_EXPORT_PERFETTO_H

#include <kmemtrace/event.h>
#include <kmemtrace/model.h>

#include "export.h"
#include "util/pb.h"

/* Field numbers of TracePacket and TrackDescriptor (proto/perfetto_trace.proto). */
enum {
	TRACE_PACKET = 1,
	PACKET_FTRACE_EVENTS = 1, PACKET_PROCESS_TREE = 2, PACKET_TIMESTAMP = 8,
	PACKET_SEQUENCE_ID = 10, PACKET_TRACK_EVENT = 11, PACKET_INTERNED_DATA = 12,
	PACKET_SEQUENCE_FLAGS = 13, PACKET_TRACK_DESCRIPTOR = 60,
	SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2,
	TRACK_UUID = 1, TRACK_NAME = 2, TRACK_THREAD = 4, TRACK_COUNTER = 8, TRACK_DESCRIPTION = 14,
	THREAD_PID = 1, THREAD_TID = 2,
};

/* Write @p as one packet of the Trace; a failure sets x->failed (export-perfetto-names.c). */
void perfetto_packet(struct export *x, struct pb *p);

struct perfetto_names;

/* The track events' state for export @x; NULL on ENOMEM. */
struct perfetto_names *perfetto_names_new(struct export *x);
/* An object's story ended (the model's object hook): a free's cache, for its event. */
void perfetto_names_object(struct perfetto_names *n, const struct kmt_object *o);
/*
 * The same in two steps, for the hooks on a thread of their own
 * (hookpipe.h): what the names need of the object, taken on the model's
 * thread; given to them on the writer's.
 */
struct perfetto_freed {
	uint64_t ptr, ts;		/* the free the model matched the object to */
	int32_t cpu;
	bool set;
	char cache[64];			/* its cache, as its events name it */
	size_t len;
};
void perfetto_freed_of(struct perfetto_freed *fr, const struct kmt_object *o);
void perfetto_names_freed(struct perfetto_names *n, const struct perfetto_freed *fr);
/* A memory event as an instant on its task's track; others are left out. */
void perfetto_names_event(struct perfetto_names *n, const struct kmt_event *ev);
/* Memory ran out: the output is incomplete. */
bool perfetto_names_failed(const struct perfetto_names *n);
void perfetto_names_free(struct perfetto_names *n);

#endif
