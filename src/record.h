/*
 * kmemtrace record, shared between its files: the running recording's
 * state, the child command, and what is printed while and after recording.
 */
#ifndef KMT_RECORD_H
#define KMT_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <kmemtrace/record.h>
#include <kmemtrace/session.h>
#include <kmemtrace/tracefs.h>

#define MAX_CPUS 256

struct rec_opts {
	const char *output;
	char *events_spec;		/* -e, comma-joined; NULL: defaults */
	pid_t pids[64];
	int nr_pids;
	bool follow;			/* -F: only the command and its children */
	unsigned int buffer_kb;
	unsigned int buffer_percent;
	double duration;		/* -d, 0: none */
	bool stack;
	const char *filter;
	bool compress;
	int level;
	int rt_prio;
	size_t hold_mb;			/* -m */
	bool quiet;
	bool status;			/* status line (stderr is a terminal) */
	char **argv;			/* -- COMMAND */
	const char *user;		/* --user */
};

struct child {
	pid_t pid;			/* -1: none */
	int go_fd;			/* write to let it exec */
	int err_fd;			/* exec errno, or EOF on success */
	bool released, exited;
	int status;
};

/* record-child.c */
int child_spawn(struct child *c, char **argv, const char *user);
int child_release(struct child *c);	/* 0, or -errno if exec failed */
void child_abort(struct child *c);	/* never released: let it exit, reap it */
int child_exit_code(const struct child *c);

/* record-ui.c */
void ui_status(const struct kmt_instance *in, const int *cpus, int nr_cpus,
	       const struct kmt_recorder *r, double elapsed);
void ui_status_clear(void);
void ui_progress(void *arg, uint64_t done, uint64_t total);
void ui_summary(const struct rec_opts *o, const struct kmt_finalize_result *res,
		double elapsed, const char *output);
int ui_list(const char *root, bool verbose);

#endif
