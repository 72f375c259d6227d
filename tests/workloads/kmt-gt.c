/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt-gt: a ground-truth workload whose kernel allocations are known.
 *
 *   kmt-gt [-g N] [-s SIZE] [-x N] [-v SIZE] [-r N] [-l N] [-m N] [-o N] [-t N] FILE
 *
 * On Linux 6.x, with FILE on tmpfs (user xattrs in memory):
 *  -g N -s SIZE  N getxattr(FILE, "user.kmt-none", buf, SIZE) calls: each is one
 *                kmalloc(SIZE) in do_getxattr, freed (kvfree) before the call
 *                returns (default N=100, SIZE=1337 -> 2048-byte objects).
 *  -x N -v SIZE  N setxattr(FILE, "user.kmtNNNN", value of SIZE bytes): each is a
 *                kmalloc(SIZE) of the copied value (vmemdup_user, freed) and one
 *                kmalloc(sizeof(struct simple_xattr) + SIZE) in simple_xattr_alloc
 *                that stays live, plus the name (kstrdup, 12 bytes, live).
 *  -r N          then removexattr the first N of them again (frees both).
 *  -l N          N large getxattr calls of 20000 bytes (kmalloc_large: order-3
 *                pages; the kernel traces each as two kmalloc events).
 *  -m N          N BPF array maps of 16 values of 8 KiB, each closed at once:
 *                one vmalloc area each (alloc_vmap_area of 139264 bytes: 128 KiB
 *                of values and the map's header in 33 pages, and a guard page,
 *                from __bpf_map_area_alloc), freed by a kworker soon after the
 *                close; then it waits (10 s at most) until /proc/vmallocinfo
 *                lists no more areas of that size than before, and 50 ms more
 *                for the free's event, which follows within the same vfree().
 *                Needs CAP_BPF.
 *  -t N          N x 64 KiB sent over a loopback TCP connection to a child that
 *                reads them: skbs from skbuff_fclone_cache (merged with other
 *                caches of its size on 6.18: the kernel reports another name).
 *  -p N          N anonymous pages (no huge pages) written and unmapped: N
 *                order-0 page allocations, freed in batches (release_pages():
 *                each page traced by mm_page_free, and by mm_page_free_batched).
 *  -o N          N open("/dev/null") and close: each allocates a struct filename
 *                (getname_flags, names_cache, freed before open returns) and a
 *                struct file (alloc_empty_file, filp, freed by the close): two
 *                hot call sites that reuse the same few objects.
 *  -P N          N pipe() calls, both ends closed at once: each allocates its
 *                struct pipe_inode_info and its buffers in alloc_pipe_info, two
 *                kmallocs with GFP_KERNEL_ACCOUNT (charged to the memory cgroup).
 *  -q N          N System V message queues made and removed: each one kmalloc
 *                of its struct msg_queue in newque, GFP_KERNEL_ACCOUNT.
 *  -S MS         first sleep MS milliseconds (a recorder finds it meanwhile).
 *  -M FILE[,FILE] halfway through the -g calls, write its pid into each FILE
 *                (a cgroup.procs: the task moves there); the rest follows there.
 * It prints one line of what it did and its pid, and exits 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

static char buf[65536];

static void die(const char *what)
{
	fprintf(stderr, "kmt-gt: %s: %s\n", what, strerror(errno));
	exit(1);
}

/*
 * Areas of a map's size in /proc/vmallocinfo, not yet freed (-1: cannot
 * read it). The caller it names is the map type's (array_map_alloc); a
 * freed area stays listed as an "unpurged vm_area" until purged.
 */
static long map_areas(void)
{
	FILE *f = fopen("/proc/vmallocinfo", "r");
	char line[512];
	long n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, " 139264 ") && !strstr(line, "unpurged");
	fclose(f);
	return n;
}

/* Write our pid into each file of the comma-separated @files (cgroup.procs: a move). */
static void move_to(const char *files)
{
	char path[4096], pid[32];
	const char *p = files, *c;
	int fd, n;

	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	while (*p) {
		c = strchr(p, ',');
		snprintf(path, sizeof(path), "%.*s", c ? (int)(c - p) : (int)strlen(p), p);
		fd = open(path, O_WRONLY);
		if (fd < 0 || write(fd, pid, (size_t)n) != n || close(fd))
			die(path);
		p = c ? c + 1 : p + strlen(p);
	}
}

/* @n x 64 KiB over loopback TCP to a child, which reads until EOF. */
static void tcp_transfer(long n)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int ls = socket(AF_INET, SOCK_STREAM, 0), c, status;
	pid_t child;
	long i;

	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1) ||
	    getsockname(ls, (struct sockaddr *)&a, &alen))
		die("tcp listen");
	child = fork();
	if (child < 0)
		die("fork");
	if (!child) {
		int s = accept(ls, NULL, NULL);

		while (s >= 0 && read(s, buf, sizeof(buf)) > 0)
			;
		_exit(s < 0);
	}
	close(ls);
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)))
		die("tcp connect");
	for (i = 0; i < n; i++) {
		size_t off = 0;

		while (off < sizeof(buf)) {
			ssize_t w = write(c, buf + off, sizeof(buf) - off);

			if (w < 0)
				die("tcp write");
			off += (size_t)w;
		}
	}
	close(c);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		die("tcp reader");
}

int main(int argc, char **argv)
{
	long getx = 100, gsize = 1337, setx = 0, vsize = 1500, rem = 0, large = 0, maps = 0, opens = 0;
	long tcp = 0, pages = 0, pipes = 0, queues = 0, sleep_ms = 0;
	long i, before;
	const char *file, *move = NULL;
	char name[64];
	int opt;

	while ((opt = getopt(argc, argv, "g:s:x:v:r:l:m:o:t:p:P:q:M:S:")) != -1) {
		switch (opt) {
		case 'g': getx = atol(optarg); break;
		case 's': gsize = atol(optarg); break;
		case 'x': setx = atol(optarg); break;
		case 'v': vsize = atol(optarg); break;
		case 'r': rem = atol(optarg); break;
		case 'l': large = atol(optarg); break;
		case 'm': maps = atol(optarg); break;
		case 'o': opens = atol(optarg); break;
		case 't': tcp = atol(optarg); break;
		case 'p': pages = atol(optarg); break;
		case 'P': pipes = atol(optarg); break;
		case 'q': queues = atol(optarg); break;
		case 'M': move = optarg; break;
		case 'S': sleep_ms = atol(optarg); break;
		default:
			fprintf(stderr, "usage: kmt-gt [-g N] [-s SIZE] [-x N] [-v SIZE] [-r N] [-l N] [-m N] [-o N] [-t N] [-p N] [-P N] [-q N] [-M FILE[,FILE]] [-S MS] FILE\n");
			return 2;
		}
	}
	if (optind != argc - 1 || gsize < 1 || gsize > 65536 || vsize < 1 || vsize > 65536 ||
	    rem > setx) {
		fprintf(stderr, "usage: kmt-gt [-g N] [-s SIZE] [-x N] [-v SIZE] [-r N] [-l N] [-m N] [-o N] [-t N] [-p N] [-P N] [-q N] [-M FILE[,FILE]] [-S MS] FILE\n");
		return 2;
	}
	file = argv[optind];
	memset(buf, 'k', sizeof(buf));
	if (sleep_ms > 0)
		usleep((useconds_t)sleep_ms * 1000);
	for (i = 0; i < getx; i++) {
		if (move && i == getx / 2)
			move_to(move);
		if (getxattr(file, "user.kmt-none", buf, (size_t)gsize) >= 0 || errno != ENODATA)
			die("getxattr");
	}
	if (move && !getx)
		move_to(move);
	for (i = 0; i < pipes; i++) {
		int fds[2];

		if (pipe(fds))
			die("pipe");
		close(fds[0]);
		close(fds[1]);
	}
	for (i = 0; i < queues; i++) {
		int q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);

		if (q < 0 || msgctl(q, IPC_RMID, NULL))
			die("msgget");
	}
	for (i = 0; i < setx; i++) {
		snprintf(name, sizeof(name), "user.kmt%04ld", i);
		if (setxattr(file, name, buf, (size_t)vsize, XATTR_CREATE))
			die("setxattr");
	}
	for (i = 0; i < rem; i++) {
		snprintf(name, sizeof(name), "user.kmt%04ld", i);
		if (removexattr(file, name))
			die("removexattr");
	}
	for (i = 0; i < large; i++)
		if (getxattr(file, "user.kmt-none", buf, 20000) >= 0 || errno != ENODATA)
			die("getxattr (large)");
	for (i = 0; i < opens; i++) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd < 0)
			die("open /dev/null");
		close(fd);
	}
	if (tcp)
		tcp_transfer(tcp);
	if (pages) {
		size_t psize = (size_t)sysconf(_SC_PAGESIZE);
		char *p = mmap(NULL, (size_t)pages * psize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (p == MAP_FAILED)
			die("mmap");
		madvise(p, (size_t)pages * psize, MADV_NOHUGEPAGE);
		for (i = 0; i < pages; i++)
			p[(size_t)i * psize] = 1;
		if (munmap(p, (size_t)pages * psize))
			die("munmap");
	}
	before = maps ? map_areas() : -1;
	for (i = 0; i < maps; i++) {
		union bpf_attr a;
		int fd;

		memset(&a, 0, sizeof(a));
		a.map_type = BPF_MAP_TYPE_ARRAY;
		a.key_size = 4;
		a.value_size = 8192;
		a.max_entries = 16;
		fd = (int)syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
		if (fd < 0)
			die("bpf(BPF_MAP_CREATE)");
		close(fd);
	}
	/* The maps are freed by a kworker: wait until their areas are gone. */
	for (i = 0; maps && before >= 0 && i < 1000 && map_areas() > before; i++)
		usleep(10 * 1000);
	if (maps)
		usleep(before >= 0 ? 50 * 1000 : 300 * 1000);
	printf("kmt-gt pid %d: %ld getxattr(%ld) %ld setxattr(%ld) %ld removexattr %ld large %ld maps "
	       "%ld opens %ld tcp %ld pages %ld pipes %ld queues\n", (int)getpid(), getx, gsize, setx, vsize, rem,
	       large, maps, opens, tcp, pages, pipes, queues);
	return 0;
}
