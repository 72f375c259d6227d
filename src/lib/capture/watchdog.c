/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A recorder's watchdog (include/kmemtrace/capture.h): a small process
 * that outlives a recorder killed with SIGKILL and stops its instances'
 * tracing at once, so that the kernel does not go on tracing (and
 * unwinding a stack per allocation) for nobody until the next kmemtrace.
 *
 * It holds the read end of a pipe whose write end only the recorder has.
 * The recorder says "+NAME\n" for each instance to guard and "q" when it
 * ends as it should; end of file with no "q" means it died. Then, for each
 * instance: kmt_instance_quiesce() (tracing off, triggers removed, events
 * disabled; what the ring buffers hold stays, for record --recover) and
 * the time of death noted beside the instance's note. It holds nothing
 * else open — not the spool's lock, not trace_pipe_raw, not the terminal —
 * ignores the terminal's signals, and is named kmt-watchdog (so that
 * "pkill kmemtrace" does not take it too).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/capture.h>
#include "base/kmt-local.h"

#define GUARDED_MAX 8

struct kmt_watchdog {
	pid_t pid;
	int fd;				/* the pipe's write end */
};

struct guarded {
	char root[256];
	char names[GUARDED_MAX][64];
	int n;
};

/* Take "+NAME\n" lines from @text (@len bytes) into @g; false at "q\n". */
static bool take_lines(struct guarded *g, char *text, size_t *len)
{
	char *p = text, *nl;

	while ((nl = memchr(p, '\n', *len - (size_t)(p - text)))) {
		if (nl - p == 1 && *p == 'q')
			return false;
		if (*p == '+' && g->n < GUARDED_MAX && nl - p - 1 < 64)
			snprintf(g->names[g->n++], 64, "%.*s", (int)(nl - p - 1), p + 1);
		p = nl + 1;
	}
	*len -= (size_t)(p - text);
	memmove(text, p, *len);
	return true;
}

static void __attribute__((noreturn)) watch(int fd, const char *root)
{
	struct guarded g = { .n = 0 };
	char buf[1024];
	size_t have = 0;
	struct timespec now;
	int i;

	snprintf(g.root, sizeof(g.root), "%s", root);
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;		/* the recorder is gone */
		have += (size_t)n;
		if (!take_lines(&g, buf, &have))
			_exit(0);	/* it ended as it should: it removes its instances itself */
		if (have == sizeof(buf) - 1)
			have = 0;	/* not a line of ours */
	}
	clock_gettime(CLOCK_REALTIME, &now);
	for (i = 0; i < g.n; i++) {
		struct kmt_instance in;

		if (kmt_instance_attach(&in, g.root, g.names[i]))
			continue;
		kmt_instance_quiesce(&in);
		kmt_instance_note_death(g.names[i], (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec);
	}
	_exit(0);
}

struct kmt_watchdog *kmt_watchdog_start(const char *root, struct kmt_diag *d)
{
	struct kmt_watchdog *w = calloc(1, sizeof(*w));
	int p[2];

	if (!w) {
		kmt_diag_set(d, -ENOMEM, "out of memory");
		return NULL;
	}
	if (pipe2(p, O_CLOEXEC)) {
		kmt_diag_set(d, -errno, "cannot make the watchdog's pipe: %s", strerror(errno));
		free(w);
		return NULL;
	}
	w->pid = fork();
	if (w->pid < 0) {
		kmt_diag_set(d, -errno, "cannot start the watchdog: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		free(w);
		return NULL;
	}
	if (!w->pid) {
		static const int quiet[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU };
		sigset_t none;
		int fd, i;

		for (i = 0; i < (int)(sizeof(quiet) / sizeof(quiet[0])); i++)
			signal(quiet[i], SIG_IGN);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setsid();	/* out of the terminal's process group */
		prctl(PR_SET_NAME, "kmt-watchdog", 0, 0, 0);
		/* Nothing of the recorder's held open: its pipe's read end alone, as fd 3. */
		fd = open("/dev/null", O_RDWR);
		for (i = 0; i < 3; i++)
			if (fd >= 0 && fd != i)
				dup2(fd, i);
		if (dup2(p[0], 3) < 0)
			_exit(1);
		if (close_range(4, ~0U, 0))
			for (fd = 4; fd < 65536; fd++)
				close(fd);
		watch(3, root);
	}
	close(p[0]);
	w->fd = p[1];
	return w;
}

int kmt_watchdog_guard(struct kmt_watchdog *w, const char *name)
{
	char line[80];
	int n;

	if (!w)
		return 0;
	n = snprintf(line, sizeof(line), "+%s\n", name);
	return kmt_write_all(w->fd, line, (size_t)n);
}

void kmt_watchdog_stop(struct kmt_watchdog *w)
{
	int st;

	if (!w)
		return;
	if (write(w->fd, "q\n", 2) < 0) {
		/* it is gone already */
	}
	close(w->fd);
	while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR)
		;
	free(w);
}
