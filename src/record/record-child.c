/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The command kmemtrace record runs: forked before tracing is set up, held
 * on a pipe until the recorder is ready, then exec'd directly (no shell).
 * An exec failure comes back on a close-on-exec pipe as an errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/util.h"
#include "record.h"

/* Who to run the command as: --user, else the user sudo was run by. */
struct runas {
	uid_t uid;
	gid_t gid;
	char *name, *home, *shell;	/* from the user's passwd entry */
};

static void runas_copy(struct runas *r, const struct passwd *pw)
{
	r->name = strdup(pw->pw_name);
	r->home = strdup(pw->pw_dir);
	r->shell = strdup(*pw->pw_shell ? pw->pw_shell : "/bin/sh");
}

static void runas_release(struct runas *r)
{
	free(r->name);
	free(r->home);
	free(r->shell);
}

static int lookup_user(const char *user, struct runas *r)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	struct passwd *pw;

	if (user) {
		char *end;
		long v = strtol(user, &end, 10);

		pw = *end ? getpwnam(user) : getpwuid((uid_t)v);
		if (!pw)
			return -ENOENT;
		r->uid = pw->pw_uid;
		r->gid = pw->pw_gid;
		runas_copy(r, pw);
		return 1;
	}
	if (getuid() != 0 || !su || !sg)
		return 0;
	r->uid = (uid_t)strtoul(su, NULL, 10);
	r->gid = (gid_t)strtoul(sg, NULL, 10);
	pw = getpwuid(r->uid);
	if (pw)
		runas_copy(r, pw);
	return r->uid != 0;
}

/*
 * The command's environment: ours, with the user's HOME, SHELL, USER and
 * LOGNAME, as runuser -u gives it (a user with no passwd entry keeps
 * ours). env NULL: ours as it is, or no memory.
 */
struct user_env {
	char **env;
	char *made[4];
};

static void user_environ(struct user_env *u, const struct runas *r)
{
	static const char *const keys[] = { "HOME", "SHELL", "USER", "LOGNAME" };
	const char *vals[] = { r->home, r->shell, r->name, r->name };
	size_t n = 0, i, k, o = 0, len;

	if (!r->name || !r->home || !r->shell)
		return;
	while (environ[n])
		n++;
	u->env = calloc(n + 5, sizeof(*u->env));
	if (!u->env)
		return;
	for (i = 0; i < n; i++) {
		for (k = 0; k < 4; k++) {
			len = strlen(keys[k]);
			if (!strncmp(environ[i], keys[k], len) && environ[i][len] == '=')
				break;
		}
		if (k == 4)
			u->env[o++] = environ[i];
	}
	for (k = 0; k < 4; k++) {
		len = strlen(keys[k]) + strlen(vals[k]) + 2;
		if (!(u->made[k] = malloc(len)))
			continue;
		snprintf(u->made[k], len, "%s=%s", keys[k], vals[k]);
		u->env[o++] = u->made[k];
	}
}

static void user_environ_release(struct user_env *u)
{
	size_t k;

	for (k = 0; k < 4; k++)
		free(u->made[k]);
	free(u->env);
}

static void drop_privileges(uid_t uid, gid_t gid, const char *name)
{
	static const char msg[] = "kmemtrace record: cannot drop privileges for the command\n";

	if ((name ? initgroups(name, gid) : setgroups(0, NULL)) || setgid(gid) || setuid(uid)) {
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			_exit(126);
		_exit(126);
	}
}

int child_spawn(struct child *c, char **argv, const char *user)
{
	struct runas r = { 0 };
	struct user_env env = { 0 };
	int go[2], ep[2], drop;
	sigset_t none;

	c->pid = -1;
	c->go_fd = c->err_fd = -1;
	c->released = c->exited = false;
	drop = lookup_user(user, &r);
	if (drop < 0) {
		error("no such user '%s'", user);
		return -ESRCH;		/* said already */
	}
	/* Made before the fork: the child only execs. */
	if (drop > 0)
		user_environ(&env, &r);
	if (pipe2(go, O_CLOEXEC) || pipe2(ep, O_CLOEXEC)) {
		int err = -errno;

		runas_release(&r);
		user_environ_release(&env);
		return err;
	}
	c->pid = fork();
	if (c->pid < 0) {
		int err = -errno;

		close(go[0]), close(go[1]), close(ep[0]), close(ep[1]);
		runas_release(&r);
		user_environ_release(&env);
		return err;
	}
	if (c->pid == 0) {
		char x;
		int e;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGXFSZ, SIG_DFL);
		close(go[1]);
		close(ep[0]);
		if (read(go[0], &x, 1) != 1)
			_exit(127);	/* the recorder gave up */
		if (drop > 0)
			drop_privileges(r.uid, r.gid, r.name);
		execvpe(argv[0], argv, env.env ? env.env : environ);
		e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ep[1]);
	c->go_fd = go[1];
	c->err_fd = ep[0];
	runas_release(&r);
	user_environ_release(&env);
	return 0;
}

int child_release(struct child *c)
{
	int e = 0;
	ssize_t n;

	if (write(c->go_fd, "g", 1) != 1)
		e = errno;
	close(c->go_fd);
	c->go_fd = -1;
	c->released = true;
	do
		n = read(c->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	return n == (ssize_t)sizeof(e) ? -e : 0;
}

void child_abort(struct child *c)
{
	if (c->pid <= 0 || c->exited)
		return;
	if (c->go_fd >= 0) {
		close(c->go_fd);	/* it reads EOF and exits */
		c->go_fd = -1;
	}
	if (c->err_fd >= 0) {
		close(c->err_fd);
		c->err_fd = -1;
	}
	while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
		;
	c->exited = true;
}

int child_exec_code(int err)
{
	return err == ENOENT || err == ENOTDIR ? 127 : 126;
}

int child_exit_code(const struct child *c)
{
	if (!c->exited)
		return 0;
	if (WIFEXITED(c->status))
		return WEXITSTATUS(c->status);
	if (WIFSIGNALED(c->status))
		return 128 + WTERMSIG(c->status);
	return 1;
}
