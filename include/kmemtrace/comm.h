/*
 * pid -> command name, as in saved_cmdlines ("pid comm" lines). Built from
 * the CMDLINES section and from the sched/task events in a trace.
 */
#ifndef KMEMTRACE_COMM_H
#define KMEMTRACE_COMM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define KMT_COMM_LEN 16

struct kmt_comms;

struct kmt_comms *kmt_comms_new(void);	/* NULL + errno */
void kmt_comms_free(struct kmt_comms *c);
/* Set @pid's name (@len bytes, truncated to 15). -ENOMEM on failure. */
int kmt_comms_set(struct kmt_comms *c, int32_t pid, const char *name, size_t len);
/*
 * The same as of time @ts: unless a name set at a later time is there
 * already, so that names collected out of time order (one CPU after
 * another) end as the latest in time, as the kernel's do.
 */
int kmt_comms_set_at(struct kmt_comms *c, int32_t pid, const char *name, size_t len, uint64_t ts);
/* Every entry of @from into @c, each as of its own time. -ENOMEM on failure. */
int kmt_comms_merge(struct kmt_comms *c, const struct kmt_comms *from);
/* @pid's name, or NULL. */
const char *kmt_comms_get(const struct kmt_comms *c, int32_t pid);
/*
 * @pid's name as the kernel's own trace output gives it: the name known,
 * else "<idle>" for pid 0 (interrupts on an idle CPU), else "<...>". @c may be NULL.
 */
const char *kmt_comm_name(const struct kmt_comms *c, int32_t pid);
/* Add every "pid comm" line of @text; malformed lines are skipped. */
int kmt_comms_parse(struct kmt_comms *c, const char *text, size_t len);
/* The names of every running process and thread, from /proc. 0 or -ENOMEM. */
int kmt_comms_from_proc(struct kmt_comms *c);
/* All entries as "pid comm\n" lines, sorted by pid, into a malloc'd string. */
char *kmt_comms_format(const struct kmt_comms *c, size_t *len);
size_t kmt_comms_count(const struct kmt_comms *c);
/* The comm a task gets from exec'ing @filename: its basename, 15 chars. */
void kmt_comm_from_exec(const char *filename, size_t len, char out[KMT_COMM_LEN]);

struct kmt_event;
/*
 * The name a fork, rename, new-task or exec event gives task @ev->pid2
 * (exec: the program's basename, built in @buf), its length in *@len; NULL
 * for any other event.
 */
const char *kmt_event_task_name(const struct kmt_event *ev, char buf[KMT_COMM_LEN], size_t *len);

#endif
