/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests of the tracefs stage. Without the kernel: event formats, the
 * ring-buffer page layout and event lists read from a tracefs tree built
 * in a private directory from the kernels' formats in tests/data/formats,
 * the CPUs, the kinds of events, and which instance names are a dead
 * recorder's (zombies included). With root and tracefs, in private
 * instances only (kmemtrace-unit-PID, removed even when a test fails): an
 * instance made, written, read, quiesced and removed, its notes, and the
 * search for dead recorders' instances. No file of the top-level instance
 * or of the function tracer is ever written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kmemtrace/tracefile.h>
#include <kmemtrace/tracefs.h>
#include "base/kmt-local.h"
#include "tbuild.h"
#include "tinst.h"

static char tmpdir[64];

/* Each test has a directory of its own, removed after it whatever happened. */
static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/kmt-unit-tracefs-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int teardown(void **state)
{
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

/* @name in the test's directory (four at a time). */
static const char *tpath(const char *name)
{
	static char buf[4][512];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, 512, "%s/%s", tmpdir, name);
	return p;
}

static void copy_file(const char *from, const char *to)
{
	struct sbuf sb = { 0 };
	int fd;

	assert_int_equal(read_file(from, &sb), 0);
	fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write_all(fd, sb.buf, sb.len), 0);
	close(fd);
	sbuf_release(&sb);
}

/*
 * A tracefs tree at @root as kernel @version lays it out: events/header_page,
 * events/header_event and events/SYSTEM/NAME/format for each of its
 * SYSTEM_NAME.format files. Returns how many formats.
 */
static int fake_tracefs(const char *root, const char *version)
{
	char dir[512], from[1024], to[1024];
	struct dirent *de;
	DIR *dp;
	int n = 0;

	snprintf(dir, sizeof(dir), "formats/%s", version);
	snprintf(dir, sizeof(dir), "%s", tb_data_path(dir));
	assert_int_equal(mkdir(root, 0755), 0);
	snprintf(to, sizeof(to), "%s/events", root);
	assert_int_equal(mkdir(to, 0755), 0);
	snprintf(to, sizeof(to), "%s/instances", root);
	assert_int_equal(mkdir(to, 0755), 0);
	snprintf(from, sizeof(from), "%s/header_page", dir);
	snprintf(to, sizeof(to), "%s/events/header_page", root);
	copy_file(from, to);
	snprintf(from, sizeof(from), "%s/header_event", dir);
	snprintf(to, sizeof(to), "%s/events/header_event", root);
	copy_file(from, to);
	dp = opendir(dir);
	assert_non_null(dp);
	while ((de = readdir(dp))) {
		size_t len = strlen(de->d_name), sys = strcspn(de->d_name, "_");

		if (len < 8 || strcmp(de->d_name + len - 7, ".format") || !de->d_name[sys])
			continue;
		snprintf(to, sizeof(to), "%s/events/%.*s", root, (int)sys, de->d_name);
		if (mkdir(to, 0755))
			assert_int_equal(errno, EEXIST);
		snprintf(to, sizeof(to), "%s/events/%.*s/%.*s", root, (int)sys, de->d_name,
			 (int)(len - 7 - sys - 1), de->d_name + sys + 1);
		assert_int_equal(mkdir(to, 0755), 0);
		snprintf(from, sizeof(from), "%s/%s", dir, de->d_name);
		strncat(to, "/format", sizeof(to) - strlen(to) - 1);
		copy_file(from, to);
		n++;
	}
	closedir(dp);
	return n;
}

/* The formats of several kernels, what the tests below expect of each. */
static const struct kernel {
	const char *version;
	int formats;		/* .format files */
	int kmem;		/* of them, kmem:* */
	int defaults;		/* of kmt_events_default, those it has */
	uint32_t kmalloc_id;
	uint32_t call_site, bytes_alloc;	/* kmem:kmalloc's offsets */
	bool node_events;	/* kmalloc_node, kmem_cache_alloc_node */
	bool vmalloc;
} kernels[] = {
	{ "4.18-el8.3", 20, 11, 11, 480, 8, 32, true, false },
	{ "4.18", 20, 11, 11, 480, 8, 32, true, false },
	{ "5.4", 20, 11, 11, 480, 8, 32, true, false },
	{ "5.10", 21, 12, 11, 480, 8, 32, true, false },
	{ "5.14", 21, 12, 11, 480, 8, 32, true, false },
	{ "5.14-el9.2", 21, 12, 11, 480, 8, 32, true, false },
	{ "5.14-el9.3", 21, 12, 11, 480, 16, 40, true, false },
	{ "5.14-el9.4", 19, 10, 9, 480, 16, 40, false, false },
	{ "5.14-el9.6", 21, 10, 11, 480, 16, 40, false, true },
	{ "5.15", 21, 12, 11, 480, 8, 32, true, false },
	{ "6.6", 21, 10, 11, 480, 8, 32, false, true },
	{ "6.8", 21, 10, 11, 480, 8, 32, false, true },
	{ "debian-5.10-amd64", 45, 13, 11, 529, 8, 32, true, false },
	{ "debian-6.1-amd64", 46, 11, 9, 547, 8, 32, false, false },
	{ "debian-6.1-arm64", 46, 11, 9, 477, 8, 32, false, false },
	{ "debian-6.12-amd64", 52, 12, 11, 626, 8, 32, false, true },
	{ "debian-6.12-arm64-16k", 52, 12, 11, 546, 8, 32, false, true },
};

/*
 * On each kernel's tracefs tree: the page layout (64-bit: time stamp 0/8,
 * commit 8/8, data at 16), kmem:kmalloc's format with its own offsets and
 * id (RHEL 9.3+ moved every field by its fifth common field), every format
 * added to one set without a clash, and the event lists a recording asks
 * for: a system, a pattern, a bare name, the defaults this kernel has, and
 * an event it lacks refused by name unless optional.
 */
static void test_kernel_formats(void **state)
{
	size_t k;

	for (k = 0; k < ARRAY_SIZE(kernels); k++) {
		const struct kernel *kn = &kernels[k];
		struct kmt_page_layout pl;
		struct kmt_formats fs;
		struct kmt_format fmt;
		struct kmt_events l = { 0 };
		struct kmt_diag d = { 0 };
		char root[256], name[64];
		int i, ret;

		snprintf(name, sizeof(name), "root-%zu", k);
		snprintf(root, sizeof(root), "%s", tpath(name));
		assert_int_equal(fake_tracefs(root, kn->version), kn->formats);
		print_message("# %s\n", kn->version);

		assert_int_equal(kmt_tracefs_page_layout(root, &pl, &d), 0);
		assert_int_equal(pl.ts_offset, 0);
		assert_int_equal(pl.ts_size, 8);
		assert_int_equal(pl.commit_offset, 8);
		assert_int_equal(pl.commit_size, 8);
		assert_int_equal(pl.data_offset, 16);

		assert_int_equal(kmt_tracefs_format(root, "kmem:kmalloc", &fmt, &d), 0);
		assert_string_equal(fmt.system, "kmem");
		assert_string_equal(fmt.name, "kmalloc");
		assert_int_equal(fmt.id, kn->kmalloc_id);
		assert_int_equal(kmt_format_field(&fmt, "call_site")->offset, kn->call_site);
		assert_int_equal(kmt_format_field(&fmt, "bytes_alloc")->offset, kn->bytes_alloc);
		kmt_format_release(&fmt);

		/* Every event of the kernel, by expanding every system. */
		ret = kmt_events_expand(root, "kmem,percpu,sched,task,ftrace,vmalloc", true, &l, &d);
		assert_int_equal(ret, 0);
		assert_int_equal(l.n, kn->formats);
		kmt_formats_init(&fs);
		for (i = 0; i < l.n; i++)
			if (kmt_tracefs_add_format(root, l.v[i], &fs, &d))
				fail_msg("%s: %s", kn->version, d.msg);
		assert_int_equal(fs.nr, kn->formats);
		assert_non_null(kmt_formats_find(&fs, "kmem", "kfree"));
		assert_int_equal(kmt_formats_by_id(&fs, kn->kmalloc_id)->id, kn->kmalloc_id);
		assert_string_equal(kmt_formats_by_id(&fs, kn->kmalloc_id)->name, "kmalloc");
		kmt_formats_release(&fs);
		kmt_events_release(&l);
		assert_int_equal(l.n, 0);

		assert_int_equal(kmt_events_expand(root, "kmem", false, &l, &d), 0);
		assert_int_equal(l.n, kn->kmem);
		/* Already there: not twice. */
		assert_int_equal(kmt_events_expand(root, "kmem:kmalloc", false, &l, &d), 0);
		assert_int_equal(l.n, kn->kmem);
		kmt_events_release(&l);
		assert_int_equal(kmt_events_expand(root, "kmalloc", false, &l, &d), 0);
		assert_int_equal(l.n, 1);
		assert_string_equal(l.v[0], "kmem:kmalloc");
		kmt_events_release(&l);
		assert_int_equal(kmt_events_expand(root, "kmem:kmalloc*", false, &l, &d), 0);
		assert_int_equal(l.n, kn->node_events ? 2 : 1);
		assert_true(kmt_events_has(&l, "kmem:kmalloc"));
		assert_int_equal(kmt_events_has(&l, "kmem:kmalloc_node"), kn->node_events);
		kmt_events_release(&l);
		assert_int_equal(kmt_events_expand(root, kmt_events_default, true, &l, &d), 0);
		assert_int_equal(l.n, kn->defaults);
		assert_int_equal(kmt_events_has(&l, "vmalloc:alloc_vmap_area"), kn->vmalloc);
		kmt_events_release(&l);
		/* The trees have no cgroup events (README): the naming events less cgroup_attach_task. */
		assert_int_equal(kmt_events_expand(root, kmt_events_naming, false, &l, &d), KMT_ENOEVENT);
		kmt_events_release(&l);
		assert_int_equal(kmt_events_expand(root, kmt_events_naming, true, &l, &d), 0);
		assert_int_equal(l.n, 5);
		assert_false(kmt_events_has(&l, "cgroup:cgroup_attach_task"));
		kmt_events_release(&l);

		ret = kmt_events_expand(root, "kmem:kfree,vmalloc:alloc_vmap_area", false, &l, &d);
		if (kn->vmalloc) {
			assert_int_equal(ret, 0);
			assert_int_equal(l.n, 2);
		} else {
			assert_int_equal(ret, KMT_ENOEVENT);
			assert_string_equal(d.msg, "no event 'vmalloc:alloc_vmap_area' on this kernel "
					    "(see 'kmemtrace record --list')");
			assert_int_equal(l.n, 1);	/* what came before it stays */
		}
		kmt_events_release(&l);
		assert_int_equal(kmt_events_expand(root, "kmem:no_such_event", true, &l, &d), 0);
		assert_int_equal(l.n, 0);
	}
}

/*
 * What a tree without the event or without a header page gives: -ENOENT
 * naming the event or the file; a name without a system is -EINVAL.
 */
static void test_format_errors(void **state)
{
	const char *root = tpath("root");
	struct kmt_page_layout pl;
	struct kmt_format fmt;
	struct kmt_formats fs;
	struct kmt_diag d = { 0 };
	char want[512];

	fake_tracefs(root, "6.8");
	assert_int_equal(kmt_tracefs_format(root, "kmem:nope", &fmt, &d), -ENOENT);
	assert_string_equal(d.msg, "cannot read the format of kmem:nope: No such file or directory");
	assert_int_equal(kmt_tracefs_format(root, "kmalloc", &fmt, &d), -EINVAL);
	assert_string_equal(d.msg, "bad event name 'kmalloc'");
	kmt_formats_init(&fs);
	assert_int_equal(kmt_tracefs_add_format(root, "kmem:nope", &fs, &d), -ENOENT);
	assert_int_equal(fs.nr, 0);
	kmt_formats_release(&fs);
	assert_int_equal(kmt_tracefs_page_layout(tmpdir, &pl, &d), -ENOENT);
	snprintf(want, sizeof(want), "cannot read '%s/events/header_page': No such file or directory", tmpdir);
	assert_string_equal(d.msg, want);
}

/*
 * A directory that is not tracefs is refused as one (KMT_ENOTRACEFS),
 * for recording and for reading. Where tracefs is there, it is found,
 * asked for by name too, and writable by root.
 */
static void test_tracefs_find(void **state)
{
	char root[256], again[256], want[512];
	struct kmt_diag d = { 0 };
	int ret;

	fake_tracefs(tpath("root"), "6.8");
	assert_int_equal(kmt_tracefs_find(root, sizeof(root), tpath("root"), false, &d), KMT_ENOTRACEFS);
	snprintf(want, sizeof(want), "%s is not a tracefs mount", tpath("root"));
	assert_string_equal(d.msg, want);
	assert_int_equal(kmt_tracefs_find_readable(root, sizeof(root), tpath("root"), &d), KMT_ENOTRACEFS);
	assert_string_equal(d.msg, "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");

	ret = kmt_tracefs_find_readable(root, sizeof(root), NULL, &d);
	if (ret) {
		print_message("# skip: %s\n", d.msg);
		skip();
	}
	assert_true(!strcmp(root, "/sys/kernel/tracing") || !strcmp(root, "/sys/kernel/debug/tracing"));
	assert_int_equal(kmt_tracefs_find_readable(again, sizeof(again), root, &d), 0);
	assert_string_equal(again, root);
	ret = kmt_tracefs_find(again, sizeof(again), NULL, false, &d);
	if (geteuid() == 0) {
		assert_int_equal(ret, 0);
		assert_string_equal(again, root);
		assert_int_equal(kmt_tracefs_find(again, sizeof(again), root, false, &d), 0);
	} else if (ret) {
		assert_int_equal(ret, -EACCES);
		assert_non_null(strstr(d.msg, "is not writable: tracing needs root"));
	}
}

/*
 * The CPUs a recording reads are those online, in increasing order, as
 * many as the system says are online; @max bounds them.
 */
static void test_cpus(void **state)
{
	int cpus[KMT_MAX_CPUS], one[1], n, i;

	n = kmt_tracefs_cpus(cpus, KMT_MAX_CPUS);
	assert_int_equal(n, sysconf(_SC_NPROCESSORS_ONLN));
	for (i = 1; i < n; i++)
		assert_true(cpus[i] > cpus[i - 1]);
	assert_int_equal(kmt_tracefs_cpus(one, 1), 1);
	assert_int_equal(one[0], cpus[0]);
}

/* The kinds of events a recording treats specially, exactly those. */
static void test_event_kinds(void **state)
{
	static const char *const allocs[] = {
		"kmem:kmalloc", "kmem:kmalloc_node", "kmem:kmem_cache_alloc",
		"kmem:kmem_cache_alloc_node", "kmem:mm_page_alloc", "percpu:percpu_alloc_percpu",
		"vmalloc:alloc_vmap_area",
	};
	static const char *const naming[] = {
		"sched:sched_process_fork", "sched:sched_process_exec", "sched:sched_process_exit",
		"task:task_rename", "task:task_newtask",
	};
	static const char *const others[] = {
		"kmem:kfree", "kmem:kmem_cache_free", "kmem:mm_page_free", "percpu:percpu_free_percpu",
		"vmalloc:free_vmap_area_noflush", "sched:sched_switch", "kmem:kmalloc_nod",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(allocs); i++) {
		assert_true(kmt_events_is_alloc(allocs[i]));
		assert_false(kmt_events_is_slab_free(allocs[i]));
		assert_false(kmt_events_is_naming(allocs[i]));
	}
	for (i = 0; i < ARRAY_SIZE(naming); i++) {
		assert_true(kmt_events_is_naming(naming[i]));
		assert_false(kmt_events_is_alloc(naming[i]));
	}
	for (i = 0; i < ARRAY_SIZE(others); i++) {
		assert_false(kmt_events_is_alloc(others[i]));
		assert_false(kmt_events_is_naming(others[i]));
	}
	assert_true(kmt_events_is_slab_free("kmem:kfree"));
	assert_true(kmt_events_is_slab_free("kmem:kmem_cache_free"));
	assert_false(kmt_events_is_slab_free("kmem:mm_page_free"));
}

/* ---- instance names of dead recorders ---- */

static pid_t children[4];

static int teardown_children(void **state)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(children); i++) {
		if (children[i] > 0) {
			kill(children[i], SIGKILL);
			waitpid(children[i], NULL, 0);
		}
		children[i] = 0;
	}
	return 0;
}

/* A child called @comm that waits to be killed (or exits at once if @exit_now). */
static pid_t child(const char *comm, bool exit_now)
{
	int sync[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(sync), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		prctl(PR_SET_NAME, comm);
		close(sync[0]);
		if (write(sync[1], "x", 1) != 1 || exit_now)
			_exit(0);
		pause();
		_exit(0);
	}
	close(sync[1]);
	assert_int_equal(read(sync[0], &c, 1), 1);
	close(sync[0]);
	return pid;
}

static bool stale(const char *fmt, long pid)
{
	char name[64];

	snprintf(name, sizeof(name), fmt, pid);
	return kmt_instance_stale(name);
}

/*
 * kmemtrace-PID and kmemtrace-PID-TAG are a dead recorder's when PID is
 * no live kmemtrace: gone, reused by another program, this very process,
 * or a kmemtrace that died and is not reaped yet (a zombie). A live
 * kmemtrace's are not, nor names of any other shape.
 */
static void test_instance_stale(void **state)
{
	siginfo_t si;
	pid_t dead, other, live, zombie;

	dead = child("kmemtrace", true);
	assert_int_equal(waitpid(dead, NULL, 0), dead);
	other = children[0] = child("not-kmt", false);
	live = children[1] = child("kmemtrace", false);
	zombie = children[2] = child("kmemtrace", true);
	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, (id_t)zombie, &si, WEXITED | WNOWAIT), 0);	/* dead, not reaped */

	assert_true(stale("kmemtrace-%ld", dead));
	assert_true(stale("kmemtrace-%ld-tag", dead));
	assert_true(stale("kmemtrace-%ld", other));
	assert_true(stale("kmemtrace-%ld", getpid()));
	assert_true(stale("kmemtrace-%ld", zombie));
	assert_true(stale("kmemtrace-%ld-2", zombie));
	assert_false(stale("kmemtrace-%ld", live));
	assert_false(stale("kmemtrace-%ld-tag", live));
	assert_false(stale("kmemtrace-%ldx", dead));
	assert_false(stale("kmemtrace-%ld.died", dead));
	assert_false(stale("other-%ld", dead));
	assert_false(stale("kmemtrace-unit-%ld", dead));
	assert_false(kmt_instance_stale("kmemtrace-0"));
	assert_false(kmt_instance_stale("kmemtrace--5"));
	assert_false(kmt_instance_stale("kmemtrace-"));
	assert_false(kmt_instance_stale("kmemtrace-99999999999"));
}

/* ---- instances and their notes (root) ---- */

static char troot[256];
static struct kmt_instance tin, tdead;	/* removed by teardown if a test left them */
static int tfd = -1;			/* a file of tin, closed by teardown (else tin stays busy) */
static char tname[64];

static int setup_instance(void **state)
{
	memset(&tin, 0, sizeof(tin));
	memset(&tdead, 0, sizeof(tdead));
	tfd = -1;
	snprintf(tname, sizeof(tname), "%sunit-%d", KMT_INSTANCE_PREFIX, (int)getpid());
	return setup(state);
}

static int teardown_instance(void **state)
{
	char note[512];

	if (tfd >= 0)
		close(tfd);
	if (tin.created && kmt_instance_remove(&tin))
		print_message("# cannot remove tracefs instance %s\n", tin.path);
	if (tdead.created && kmt_instance_remove(&tdead))
		print_message("# cannot remove tracefs instance %s\n", tdead.path);
	/* A failed test's notes (they go with a removed instance otherwise). */
	snprintf(note, sizeof(note), "%s/%s", KMT_INSTANCE_NOTES, tname);
	unlink(note);
	strncat(note, ".died", sizeof(note) - strlen(note) - 1);
	unlink(note);
	return teardown(state);
}

/* tracefs if this process may write it; the test skips otherwise, saying why. */
static void need_tracefs(void)
{
	struct kmt_diag d = { 0 };

	if (geteuid() != 0) {
		print_message("# skip: not root (tracefs instances need root)\n");
		skip();
	}
	if (kmt_tracefs_find(troot, sizeof(troot), NULL, false, &d)) {
		print_message("# skip: %s\n", d.msg);
		skip();
	}
}

/*
 * An instance's note names its spool by absolute path (kmt_instance_note_spool
 * resolves a relative one), and its recorder's death by time; both go
 * with the instance when it is removed. Attaching finds an instance by
 * name (-ENOENT if none, -ENOTDIR if not a directory). Here the instance
 * is a directory of a tree that is not tracefs: only /run is written.
 */
static void test_instance_notes(void **state)
{
	const char *root = tpath("root");
	struct kmt_instance in, none;
	char want[4096], got[4096], cwd[4096];
	int fd;

	if (geteuid() != 0) {
		print_message("# skip: not root (notes are written in " KMT_INSTANCE_NOTES ")\n");
		skip();
	}
	fake_tracefs(root, "6.8");
	assert_int_equal(mkdir(tpath("spool"), 0700), 0);
	snprintf(got, sizeof(got), "%s/instances/%s", root, tname);
	assert_int_equal(mkdir(got, 0750), 0);

	assert_int_equal(kmt_instance_attach(&in, root, tname), 0);
	assert_true(in.created);
	assert_string_equal(in.name, tname);
	assert_string_equal(in.root, root);
	assert_string_equal(in.path, got);
	assert_int_equal(kmt_instance_attach(&none, root, "kmemtrace-unit-none"), -ENOENT);
	fd = open(tpath("root/instances/file"), O_WRONLY | O_CREAT, 0600);
	close(fd);
	assert_int_equal(kmt_instance_attach(&none, root, "file"), -ENOTDIR);

	assert_int_equal(kmt_instance_noted_spool(tname, got, sizeof(got)), -ENOENT);
	assert_int_equal(kmt_instance_noted_death(tname), 0);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(tmpdir), 0);
	assert_int_equal(kmt_instance_note_spool(&in, "spool"), 0);
	assert_int_equal(chdir(cwd), 0);
	assert_non_null(realpath(tpath("spool"), want));
	assert_int_equal(kmt_instance_noted_spool(tname, got, sizeof(got)), strlen(want));
	assert_string_equal(got, want);
	/* Noted again, the new spool wins. */
	assert_int_equal(mkdir(tpath("spool2"), 0700), 0);
	assert_int_equal(kmt_instance_note_spool(&in, tpath("spool2")), 0);
	assert_non_null(realpath(tpath("spool2"), want));
	assert_int_equal(kmt_instance_noted_spool(tname, got, sizeof(got)), strlen(want));
	assert_string_equal(got, want);
	assert_int_equal(kmt_instance_note_spool(&in, tpath("no-such-spool")), -ENOENT);
	kmt_instance_note_death(tname, 1700000000123456789ULL);
	assert_int_equal(kmt_instance_noted_death(tname), 1700000000123456789ULL);

	assert_int_equal(kmt_instance_remove(&in), 0);
	assert_false(in.created);
	assert_int_equal(access(in.path, F_OK), -1);
	assert_int_equal(kmt_instance_noted_spool(tname, got, sizeof(got)), -ENOENT);
	assert_int_equal(kmt_instance_noted_death(tname), 0);
	assert_int_equal(kmt_instance_remove(&in), 0);	/* twice is fine */
}

/*
 * A private instance: made once (-EEXIST the second time), its files
 * read and written (tracing_on, an event's filter, enable and trigger,
 * the stacktrace option), a filter the kernel refuses explained from its
 * error_log, its ring buffers counting the markers written to it per CPU
 * and in all, its per-CPU files opened by name; quiesced (tracing,
 * events, triggers and the option off, the events kept), attached by
 * name, and removed with its directory (twice is fine).
 */
static void test_instance(void **state)
{
	struct kmt_instance again;
	struct kmt_cpustat st;
	struct kmt_diag d = { 0 };
	char want[1024], buf[8192], path[512];
	int cpus[KMT_MAX_CPUS], nr_cpus, i;
	uint64_t entries = 0;

	need_tracefs();
	if (kmt_instance_create(&tin, troot, tname, &d))
		fail_msg("%s", d.msg);
	snprintf(want, sizeof(want), "%s/instances/%s", troot, tname);
	assert_string_equal(tin.path, want);
	assert_true(tin.created);
	assert_int_equal(kmt_instance_create(&again, troot, tname, &d), -EEXIST);
	snprintf(want, sizeof(want), "cannot create tracefs instance %s/instances/%s: File exists", troot, tname);
	assert_string_equal(d.msg, want);
	assert_false(again.created);

	assert_true(kmt_instance_has(&tin, "events/kmem/kmalloc/enable"));
	assert_true(kmt_instance_has(&tin, "per_cpu"));
	assert_false(kmt_instance_has(&tin, "no_such_file"));
	assert_string_equal(inst_text(&tin, "tracing_on"), "1\n");
	assert_int_equal(kmt_instance_read(&tin, "no_such_file", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(kmt_instance_write(&tin, "no_such_file", "1", &d), -ENOENT);
	snprintf(want, sizeof(want), "cannot write '1' to %s/no_such_file: No such file or directory", tin.path);
	assert_string_equal(d.msg, want);
	/* Cut to the buffer, always terminated. */
	assert_int_equal(kmt_instance_read(&tin, "tracing_on", buf, 2), 1);
	assert_string_equal(buf, "1");

	assert_int_equal(kmt_instance_write(&tin, "events/kmem/kmalloc/filter", "no_such_field == 1", &d),
			 -EINVAL);
	snprintf(want, sizeof(want), "cannot write 'no_such_field == 1' to %s/events/kmem/kmalloc/filter: "
		 "Invalid argument\n", tin.path);
	assert_memory_equal(d.msg, want, strlen(want));
	assert_non_null(strstr(d.msg + strlen(want), "no_such_field"));	/* the kernel's error_log */
	assert_int_equal(kmt_instance_write(&tin, "events/kmem/kmalloc/filter", "bytes_req > 4096", &d), 0);
	assert_string_equal(inst_text(&tin, "events/kmem/kmalloc/filter"), "bytes_req > 4096\n");
	assert_int_equal(kmt_instance_write(&tin, "events/kmem/kmalloc/trigger",
					    "stacktrace if bytes_req > 1000000", &d), 0);
	assert_non_null(strstr(inst_text(&tin, "events/kmem/kmalloc/trigger"), "stacktrace"));
	assert_int_equal(kmt_instance_write(&tin, "events/kmem/kmalloc/enable", "1", &d), 0);
	assert_string_equal(inst_text(&tin, "events/kmem/kmalloc/enable"), "1*\n");	/* with a trigger */
	assert_int_equal(kmt_instance_write(&tin, "options/stacktrace", "1", &d), 0);
	assert_string_equal(inst_text(&tin, "options/stacktrace"), "1\n");

	/* Stopped: nothing but the markers below is recorded. */
	assert_int_equal(kmt_instance_quiesce(&tin), 0);
	assert_string_equal(inst_text(&tin, "tracing_on"), "0\n");
	assert_string_equal(inst_text(&tin, "events/kmem/kmalloc/enable"), "0\n");
	assert_string_equal(inst_text(&tin, "options/stacktrace"), "0\n");
	assert_int_equal(live_lines(inst_text(&tin, "events/kmem/kmalloc/trigger")), 0);
	assert_string_equal(inst_text(&tin, "events/kmem/kmalloc/filter"), "bytes_req > 4096\n");

	assert_int_equal(kmt_instance_unread(&tin), 0);
	assert_int_equal(kmt_instance_write(&tin, "tracing_on", "1", &d), 0);
	tfd = kmt_instance_open(tin.path, "trace_marker", O_WRONLY, &d);
	assert_true(tfd >= 0);
	for (i = 0; i < 25; i++)
		assert_int_equal(write(tfd, "unit", 4), 4);
	close(tfd);
	tfd = -1;
	assert_int_equal(kmt_instance_write(&tin, "tracing_on", "0", &d), 0);
	assert_int_equal(kmt_instance_unread(&tin), 25);
	nr_cpus = kmt_tracefs_cpus(cpus, KMT_MAX_CPUS);
	for (i = 0; i < nr_cpus; i++) {
		assert_int_equal(kmt_instance_stat(&tin, cpus[i], &st), 0);
		entries += st.entries;
		assert_true(kmt_instance_read_cpu(&tin, cpus[i], "stats", buf, sizeof(buf)) > 0);
		assert_memory_equal(buf, "entries: ", 9);
	}
	assert_int_equal(entries, 25);
	assert_int_equal(kmt_instance_stat(&tin, KMT_MAX_CPUS + 1, &st), -ENOENT);
	tfd = kmt_instance_open_cpu(tin.path, cpus[0], "trace_pipe_raw", O_RDONLY | O_NONBLOCK, &d);
	assert_true(tfd >= 0);
	close(tfd);
	tfd = -1;
	assert_int_equal(kmt_instance_open(tin.path, "no_such_file", O_RDONLY, &d), -ENOENT);
	snprintf(want, sizeof(want), "cannot open %s/no_such_file: No such file or directory", tin.path);
	assert_string_equal(d.msg, want);
	assert_int_equal(kmt_instance_open_cpu(tin.path, KMT_MAX_CPUS + 1, "stats", O_RDONLY, &d), -ENOENT);

	assert_int_equal(kmt_instance_attach(&again, troot, tname), 0);
	assert_string_equal(again.path, tin.path);
	assert_true(again.created);
	assert_int_equal(kmt_instance_remove(&tin), 0);
	assert_false(tin.created);
	snprintf(path, sizeof(path), "%s/instances/%s", troot, tname);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(kmt_instance_remove(&tin), 0);
	assert_int_equal(kmt_instance_remove(&again), 0);	/* gone already: fine */
	assert_int_equal(kmt_instance_attach(&again, troot, tname), -ENOENT);
}

/*
 * The search for dead recorders' instances lists an instance named for a
 * dead pid and not a live private one; every name it lists is stale.
 */
static void test_find_stale(void **state)
{
	char (*names)[64] = calloc(64, sizeof(*names)), dead_name[64];
	struct kmt_diag d = { 0 };
	bool seen_dead = false;
	pid_t dead;
	int n, i;

	need_tracefs();
	dead = child("kmemtrace", true);
	assert_int_equal(waitpid(dead, NULL, 0), dead);
	snprintf(dead_name, sizeof(dead_name), "%s%d-unit", KMT_INSTANCE_PREFIX, (int)dead);
	if (kmt_instance_create(&tin, troot, tname, &d) || kmt_instance_create(&tdead, troot, dead_name, &d))
		fail_msg("%s", d.msg);
	n = kmt_instance_find_stale(troot, names, 64);
	assert_true(n >= 1);
	for (i = 0; i < n; i++) {
		assert_true(kmt_instance_stale(names[i]));
		assert_string_not_equal(names[i], tname);
		seen_dead |= !strcmp(names[i], dead_name);
	}
	assert_true(seen_dead);
	/* A death noted of an instance that is gone is forgotten too, not only a spool's note. */
	snprintf(dead_name, sizeof(dead_name), "%s%d", KMT_INSTANCE_PREFIX, (int)dead);
	kmt_instance_note_death(dead_name, 123);
	assert_int_equal(kmt_instance_noted_death(dead_name), 123);
	assert_true(kmt_instance_find_stale(troot, names, 64) >= 1);
	assert_int_equal(kmt_instance_noted_death(dead_name), 0);
	assert_int_equal(kmt_instance_find_stale(troot, names, 0), 0);
	assert_int_equal(kmt_instance_find_stale(tmpdir, names, 64), -ENOENT);
	free(names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kernel_formats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_format_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tracefs_find, setup, teardown),
		cmocka_unit_test(test_cpus),
		cmocka_unit_test(test_event_kinds),
		cmocka_unit_test_teardown(test_instance_stale, teardown_children),
		cmocka_unit_test_setup_teardown(test_instance_notes, setup_instance, teardown_instance),
		cmocka_unit_test_setup_teardown(test_instance, setup_instance, teardown_instance),
		cmocka_unit_test_setup_teardown(test_find_stale, setup_instance, teardown_instance),
	};

	return cmocka_run_group_tests_name("tracefs", tests, NULL, NULL);
}
