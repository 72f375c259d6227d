/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests: tasks' cgroups (cgroups.c) read from a fake /proc tree and
 * from this machine's, the CGROUPS option's text both ways, the interner
 * on several threads, path containment and container names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kmemtrace/event.h>
#include <kmemtrace/base.h>
#include "base/kmt-local.h"

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define HEX63 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde"
#define HEX48 "0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
#define UID_ "0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0"
#define HYBRID "9:name=systemd:/user.slice\n4:memory:/user.slice\n0::/user.slice/x.scope\n"
#define STAT(pid, comm, flags) pid " (" comm ") S 1 1 1 0 -1 " flags " 0 0 0 0 0 2 0 0 20 0 1\n"

/* Write @text to @root/@rel, making its directories. */
static void put(const char *root, const char *rel, const char *text)
{
	char path[4096], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void rm_tree(const char *root)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* A task as expected: paths NULL for none. */
static void check_task(const struct kmt_cgroups *c, int32_t tid, const char *v2, const char *mem,
		       bool kthread)
{
	const struct kmt_cgroup_task *t = kmt_cgroups_task(c, tid);

	assert_non_null(t);
	if (v2)
		assert_string_equal(t->v2, v2);
	else
		assert_null(t->v2);
	if (mem)
		assert_string_equal(t->memory, mem);
	else
		assert_null(t->memory);
	assert_int_equal(t->kthread, kthread);
}

/* A fake /proc of a hybrid system; the tree's directory into @root. */
static void fake_proc(char root[64])
{
	strcpy(root, "/tmp/kmt-cgroups-XXXXXX");
	assert_non_null(mkdtemp(root));
	put(root, "self/cgroup", HYBRID);
	put(root, "sys/kernel/x", "not a process\n");
	/* A process with two threads (and a stray entry in task/). */
	put(root, "100/task/100/stat", STAT("100", "bash", "4194304"));
	put(root, "100/task/100/cgroup", HYBRID);
	put(root, "100/task/101/stat", STAT("101", "worker", "4194368"));
	put(root, "100/task/101/cgroup", "9:name=systemd:/a\n4:memory:/a/mem\n0::/a/b.scope\n");
	put(root, "100/task/notatid/stat", STAT("1", "x", "0"));
	/* kthreadd, and a comm that would read as a kernel thread up to its first ')'. */
	put(root, "2/task/2/stat", STAT("2", "kthreadd", "2129984"));
	put(root, "2/task/2/cgroup", "9:name=systemd:/\n4:memory:/\n0::/\n");
	put(root, "200/task/200/stat", STAT("200", "a b) S 1 1 1 0 -1 2129984 (c", "4194304"));
	put(root, "200/task/200/cgroup", "9:name=systemd:/\n4:memory:/m:1\n0::/x y (z)\n");
	/* Gone while read: no cgroup file. */
	put(root, "300/task/300/stat", STAT("300", "gone", "0"));
	/* A tab, a newline, a removed cgroup, no memory line. */
	put(root, "400/task/400/stat", STAT("400", "odd", "0"));
	put(root, "400/task/400/cgroup", "4:memory:/old (deleted)\n0::/t\tab\n");
	put(root, "500/task/500/stat", STAT("500", "nl", "0"));
	put(root, "500/task/500/cgroup", "4:memory:/a\nb\n0::/v2\n");
	put(root, "600/task/600/stat", STAT("600", "v2only", "0"));
	put(root, "600/task/600/cgroup", "0::/only\n");
}

static void test_from_proc_fake(void **state)
{
	struct kmt_cgroups *c = kmt_cgroups_new();
	char root[64];

	assert_non_null(c);
	assert_int_equal(kmt_cgroups_memory_id(c), -1);
	assert_false(kmt_cgroups_has_v2(c));
	fake_proc(root);
	assert_int_equal(kmt_cgroups_from_proc(c, root), 0);
	assert_int_equal(kmt_cgroups_memory_id(c), 4);
	assert_true(kmt_cgroups_has_v2(c));
	assert_int_equal(kmt_cgroups_count(c), 7);
	check_task(c, 100, "/user.slice/x.scope", "/user.slice", false);
	check_task(c, 101, "/a/b.scope", "/a/mem", false);
	check_task(c, 2, "/", "/", true);
	check_task(c, 200, "/x y (z)", "/m:1", false);
	check_task(c, 400, NULL, "/old (deleted)", false);
	check_task(c, 500, "/v2", NULL, false);
	check_task(c, 600, "/only", NULL, false);
	assert_null(kmt_cgroups_task(c, 300));
	assert_null(kmt_cgroups_task(c, 1));
	/* Equal paths are one string. */
	assert_ptr_equal(kmt_cgroups_task(c, 2)->v2, kmt_cgroups_task(c, 2)->memory);
	kmt_cgroups_free(c);

	/* Other layouts: memory among other controllers, no v2; v2 alone. */
	c = kmt_cgroups_new();
	put(root, "self/cgroup", "5:memoryx:/\n3:cpuset,memory,blkio:/\n");
	assert_int_equal(kmt_cgroups_from_proc(c, root), 0);
	assert_int_equal(kmt_cgroups_memory_id(c), 3);
	assert_false(kmt_cgroups_has_v2(c));
	check_task(c, 100, "/user.slice/x.scope", NULL, false);
	kmt_cgroups_free(c);
	c = kmt_cgroups_new();
	put(root, "self/cgroup", "0::/\n");
	assert_int_equal(kmt_cgroups_from_proc(c, root), 0);
	assert_int_equal(kmt_cgroups_memory_id(c), -1);
	assert_true(kmt_cgroups_has_v2(c));
	check_task(c, 101, "/a/b.scope", NULL, false);
	rm_tree(root);
	assert_int_equal(kmt_cgroups_from_proc(c, root), -ENOENT);
	kmt_cgroups_free(c);
	kmt_cgroups_free(NULL);
}

static void test_from_proc_real(void **state)
{
	struct kmt_cgroups *c = kmt_cgroups_new();
	const struct kmt_cgroup_task *t;
	struct sbuf comm = { 0 };

	assert_int_equal(kmt_cgroups_from_proc(c, "/proc"), 0);
	assert_true(kmt_cgroups_count(c) > 0);
	t = kmt_cgroups_task(c, getpid());
	assert_non_null(t);
	assert_false(t->kthread);
	assert_true(t->v2 || t->memory);
	/* Pid 2 is kthreadd unless this runs in a pid namespace. */
	if (!read_file("/proc/2/comm", &comm) && !strcmp(comm.buf, "kthreadd\n")) {
		assert_non_null(kmt_cgroups_task(c, 2));
		assert_true(kmt_cgroups_task(c, 2)->kthread);
	}
	sbuf_release(&comm);
	kmt_cgroups_free(c);
}

static const char good[] =
	"kmemtrace-cgroups 1\n"
	"memory 4\n"
	"v2 1\n"
	"1\t-\t/init.scope\t/\n"
	"2\tk\t/\t/\n"
	"7\t-\t-\t-\n"
	"12\t-\t/x y (deleted)\t/a:b";		/* no final newline */

static void test_format_parse(void **state)
{
	struct kmt_cgroups *c = kmt_cgroups_new(), *d = kmt_cgroups_new();
	char *a, *b, root[64];
	size_t alen, blen;

	assert_int_equal(kmt_cgroups_parse(c, good, strlen(good)), 0);
	assert_int_equal(kmt_cgroups_count(c), 4);
	assert_int_equal(kmt_cgroups_memory_id(c), 4);
	assert_true(kmt_cgroups_has_v2(c));
	check_task(c, 2, "/", "/", true);
	check_task(c, 7, NULL, NULL, false);
	check_task(c, 12, "/x y (deleted)", "/a:b", false);
	a = kmt_cgroups_format(c, &alen);
	assert_non_null(a);
	assert_int_equal(alen, strlen(good) + 1);
	assert_memory_equal(a, good, strlen(good));
	free(a);
	kmt_cgroups_free(c);

	/* A fake /proc's set, through the text and back. */
	c = kmt_cgroups_new();
	fake_proc(root);
	assert_int_equal(kmt_cgroups_from_proc(c, root), 0);
	rm_tree(root);
	a = kmt_cgroups_format(c, &alen);
	assert_int_equal(kmt_cgroups_parse(d, a, alen), 0);
	b = kmt_cgroups_format(d, &blen);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
	assert_int_equal(kmt_cgroups_count(d), 7);
	check_task(d, 400, NULL, "/old (deleted)", false);
	check_task(d, 2, "/", "/", true);
	assert_true(strstr(a, "\n2\tk\t/\t/\n100\t-\t") != NULL);	/* tid order */
	free(a);
	free(b);
	kmt_cgroups_free(c);
	kmt_cgroups_free(d);

	/* Tids out of order come out in order. */
	c = kmt_cgroups_new();
	assert_int_equal(kmt_cgroups_parse(c, "kmemtrace-cgroups 1\n9\t-\t-\t-\n3\tk\t-\t/m\n",
					   37), 0);
	a = kmt_cgroups_format(c, NULL);
	assert_string_equal(a, "kmemtrace-cgroups 1\nmemory -1\nv2 0\n3\tk\t-\t/m\n9\t-\t-\t-\n");
	free(a);
	kmt_cgroups_free(c);

	/* An empty set. */
	c = kmt_cgroups_new();
	a = kmt_cgroups_format(c, &alen);
	assert_string_equal(a, "kmemtrace-cgroups 1\nmemory -1\nv2 0\n");
	assert_int_equal(kmt_cgroups_parse(c, a, alen), 0);
	assert_int_equal(kmt_cgroups_parse(c, "", 0), 0);
	assert_int_equal(kmt_cgroups_count(c), 0);
	free(a);
	kmt_cgroups_free(c);
}

static void test_parse_bad(void **state)
{
	static const char *const bad[] = {
		"memory 4\n",					/* no header */
		"kmemtrace-cgroups 2\n",			/* version */
		"kmemtrace-cgroups\n",
		"kmemtrace-cgroups 1\nkmemtrace-cgroups 1\n",
		"kmemtrace-cgroups 1\ncolour 3\n",		/* unknown keyword */
		"kmemtrace-cgroups 1\nmemory x\n",
		"kmemtrace-cgroups 1\nmemory -2\n",
		"kmemtrace-cgroups 1\nv2 2\n",
		"kmemtrace-cgroups 1\n\n",			/* empty line */
		"kmemtrace-cgroups 1\n5\t-\t/a\n",		/* missing field */
		"kmemtrace-cgroups 1\n5\t-\t/a\t/b\t/c\n",	/* one too many */
		"kmemtrace-cgroups 1\nx5\t-\t/a\t/b\n",		/* tid */
		"kmemtrace-cgroups 1\n-5\t-\t/a\t/b\n",
		"kmemtrace-cgroups 1\n-0\t-\t/a\t/b\n",
		"kmemtrace-cgroups 1\n\t-\t/a\t/b\n",
		"kmemtrace-cgroups 1\n99999999999\t-\t/a\t/b\n",
		"kmemtrace-cgroups 1\n5\tK\t/a\t/b\n",		/* flags */
		"kmemtrace-cgroups 1\n5\t\t/a\t/b\n",
		"kmemtrace-cgroups 1\n5\tk-\t/a\t/b\n",
		"kmemtrace-cgroups 1\n5\t-\t\t/b\n",		/* paths */
		"kmemtrace-cgroups 1\n5\t-\ta\t/b\n",
		"kmemtrace-cgroups 1\n5\t-\t/a\t",
	};
	struct kmt_cgroups *c = kmt_cgroups_new();
	char *before, *after;
	size_t i, n;

	assert_int_equal(kmt_cgroups_parse(c, good, strlen(good)), 0);
	before = kmt_cgroups_format(c, &n);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char text[256];

		/* A good task line first: nothing of it is kept either. */
		snprintf(text, sizeof(text), "%s", bad[i]);
		if (!strncmp(text, "kmemtrace-cgroups 1\n", 20) && strlen(text) > 20)
			snprintf(text, sizeof(text), "kmemtrace-cgroups 1\nmemory 9\n3\tk\t/new\t-\n%s",
				 bad[i] + 20);
		assert_int_equal(kmt_cgroups_parse(c, text, strlen(text)), KMT_EFORMAT);
		after = kmt_cgroups_format(c, NULL);
		assert_string_equal(before, after);
		free(after);
	}
	/* A NUL inside a line. */
	assert_int_equal(kmt_cgroups_parse(c, "kmemtrace-cgroups 1\n5\t-\t/a\0b\t-\n", 31),
			 KMT_EFORMAT);
	assert_null(kmt_cgroups_task(c, 3));
	assert_int_equal(kmt_cgroups_memory_id(c), 4);
	free(before);
	kmt_cgroups_free(c);
}

enum { NPATHS = 2000, NTHREADS = 4 };

struct intern_arg {
	struct kmt_cgroups *c;
	int k;
	const char *got[NPATHS];
};

static void *intern_thread(void *p)
{
	struct intern_arg *a = p;
	int i;

	for (i = 0; i < NPATHS; i++) {
		int j = (i * 7 + a->k * 501) % NPATHS;	/* each thread in its own order */
		char path[64];

		snprintf(path, sizeof(path), "/slice-%d/task.scope", j);
		a->got[j] = kmt_cgroups_intern(a->c, path, strlen(path));
	}
	return NULL;
}

static void test_intern(void **state)
{
	static struct intern_arg args[NTHREADS];
	struct kmt_cgroups *c = kmt_cgroups_new();
	pthread_t th[NTHREADS];
	const char *a;
	int i, k;

	a = kmt_cgroups_intern(c, "/a/b.scope-and-more", 10);
	assert_string_equal(a, "/a/b.scope");
	assert_ptr_equal(kmt_cgroups_intern(c, "/a/b.scope", 10), a);
	assert_ptr_not_equal(kmt_cgroups_intern(c, "/a/b", 4), a);
	for (k = 0; k < NTHREADS; k++) {
		args[k].c = c;
		args[k].k = k;
		assert_int_equal(pthread_create(&th[k], NULL, intern_thread, &args[k]), 0);
	}
	for (k = 0; k < NTHREADS; k++)
		pthread_join(th[k], NULL);
	for (i = 0; i < NPATHS; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/slice-%d/task.scope", i);
		assert_non_null(args[0].got[i]);
		assert_string_equal(args[0].got[i], path);
		for (k = 1; k < NTHREADS; k++)
			assert_ptr_equal(args[k].got[i], args[0].got[i]);
	}
	kmt_cgroups_free(c);
}

static void test_under(void **state)
{
	assert_true(kmt_cgroup_under("/a", "/"));
	assert_true(kmt_cgroup_under("/", "/"));
	assert_true(kmt_cgroup_under("/a", "/a"));
	assert_true(kmt_cgroup_under("/a/b/c", "/a"));
	assert_true(kmt_cgroup_under("/a/b", "/a/"));
	assert_true(kmt_cgroup_under("/a", "/a/"));
	assert_true(kmt_cgroup_under("/a/b", "/a/b"));
	assert_false(kmt_cgroup_under("/ab", "/a"));
	assert_false(kmt_cgroup_under("/a", "/a/b"));
	assert_false(kmt_cgroup_under("/b/a", "/a"));
	assert_false(kmt_cgroup_under(NULL, "/"));
}

static void check_container(const char *path, const char *want)
{
	char buf[64];
	const char *got = kmt_cgroup_container(path, buf, sizeof(buf));

	if (!want) {
		assert_null(got);
		return;
	}
	assert_ptr_equal(got, buf);
	assert_string_equal(got, want);
}

static void test_container(void **state)
{
	char small[8];

	check_container("/docker/" HEX64, "docker:0123456789ab");
	check_container("/system.slice/docker-" HEX64 ".scope", "docker:0123456789ab");
	check_container("/system.slice/cri-containerd-" HEX64 ".scope", "containerd:0123456789ab");
	check_container("/crio-" HEX64, "crio:0123456789ab");
	check_container("/machine.slice/crio-" HEX64 ".scope", "crio:0123456789ab");
	check_container("/machine.slice/libpod-" HEX64 ".scope", "podman:0123456789ab");
	check_container("/docker/" HEX64 " (deleted)", "docker:0123456789ab");
	/* Kubernetes: a container in a pod wins over the pod. */
	check_container("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
			".slice/cri-containerd-" HEX64 ".scope", "containerd:0123456789ab");
	check_container("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
			".slice", "pod:" UID);
	check_container("/kubepods.slice/kubepods-pod" UID_ ".slice", "pod:" UID);
	check_container("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID
			".slice", "pod:" UID);
	check_container("/kubepods/burstable/pod" UID "/" HEX64, "pod:" UID);
	check_container("/kubepods/besteffort/pod" UID, "pod:" UID);
	check_container("/kubepods/pod" UID, "pod:" UID);
	/* The innermost: docker in docker. */
	check_container("/docker/" HEX64 "/docker/fedcba9876543210" HEX48,
			"docker:fedcba987654");
	/* Not containers. */
	check_container("/system.slice", NULL);
	check_container("/", NULL);
	check_container("", NULL);
	check_container(NULL, NULL);
	check_container("/docker/" HEX63, NULL);
	check_container("/system.slice/docker-" HEX63 ".scope", NULL);
	check_container("/docker/0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
			NULL);
	check_container("/machine.slice/crio-conmon-" HEX64 ".scope", NULL);
	check_container("/" HEX64, NULL);
	check_container("/other/" HEX64, NULL);
	check_container("/system.slice/docker-" HEX64 ".scopex", NULL);
	check_container("/pod" UID, NULL);
	check_container("/kubepods/guaranteed/pod" UID, NULL);
	check_container("/other/burstable/pod" UID, NULL);
	check_container("/kubepods.slice/kubepods-pod" UID_ "x.slice", NULL);
	/* A short buffer: cut, never overrun. */
	memset(small, 'x', sizeof(small));
	assert_ptr_equal(kmt_cgroup_container("/docker/" HEX64, small, 5), small);
	assert_string_equal(small, "dock");
	assert_int_equal(small[5], 'x');
	assert_null(kmt_cgroup_container("/docker/" HEX64, small, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_from_proc_fake),
		cmocka_unit_test(test_from_proc_real),
		cmocka_unit_test(test_format_parse),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_intern),
		cmocka_unit_test(test_under),
		cmocka_unit_test(test_container),
	};

	return cmocka_run_group_tests_name("cgroups", tests, NULL, NULL);
}
