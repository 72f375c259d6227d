/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt-wcpus: what finishing a trace file costs per CPU (issue 26 item 5).
 *   kmt-wcpus PAGES N [ROUNDS]
 * Writes the ring-buffer pages of the file PAGES (whole 4 KiB pages, e.g. a
 * recording's CPU data) as the zstd-compressed trace.dat of a machine of N
 * CPUs, the pages dealt out to them in equal runs, ROUNDS times (default
 * 5), to /dev/shm, and prints the median wall seconds: the same bytes for
 * every N, so what grows with N is the writer's cost per CPU.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/tracefile.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct kmt_writer_opts wo = { .version = 7, .zalg = KMT_Z_ZSTD, .level = 1, .chunk_pages = 64,
				      .page_size = 4096, .long_size = 8 };
	static const char hp[] = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
				 "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
				 "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
				 "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
	struct kmt_trace_meta m = { .header_page = { hp, sizeof(hp) - 1 }, .version = "kmt-wcpus" };
	struct kmt_diag d = { 0 };
	struct kmt_wcpu *wc;
	struct kmt_wbuffer b;
	double t[64];
	char out[64];
	struct stat st;
	uint64_t pages, per, k;
	int n, rounds, fd, i, r;
	void *mem;

	if (argc < 3 || (n = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: kmt-wcpus PAGES N [ROUNDS]\n");
		return 2;
	}
	rounds = argc > 3 ? atoi(argv[3]) : 5;
	rounds = rounds < 1 ? 1 : rounds > 64 ? 64 : rounds;
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || st.st_size < 4096) {
		perror(argv[1]);
		return 1;
	}
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	pages = (uint64_t)st.st_size / 4096;
	per = pages / (uint64_t)n;
	wc = calloc((size_t)n, sizeof(*wc));
	for (i = 0, k = 0; i < n; i++) {
		uint64_t np = i == n - 1 ? pages - k : per;

		wc[i] = (struct kmt_wcpu){ .cpu = i, .fd = -1, .mem = mem, .start = k * 4096, .size = np * 4096 };
		k += np;
	}
	b = (struct kmt_wbuffer){ .name = "", .clock = "local", .subbuf_size = 4096, .nr_cpus = n, .cpus = wc };
	m.cpu_count = n;
	snprintf(out, sizeof(out), "/dev/shm/kmt-wcpus-%d.dat", (int)getpid());
	for (r = 0; r < rounds; r++) {
		double t0 = now();

		if (kmt_write_trace_file(out, &wo, &m, &b, 1, NULL, &d)) {
			fprintf(stderr, "kmt-wcpus: %s\n", d.msg);
			unlink(out);
			return 1;
		}
		t[r] = now() - t0;
		unlink(out);
	}
	qsort(t, (size_t)rounds, sizeof(*t), cmp);
	printf("%d %.4f\n", n, rounds % 2 ? t[rounds / 2] : (t[rounds / 2 - 1] + t[rounds / 2]) / 2);
	return 0;
}
