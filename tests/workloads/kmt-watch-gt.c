/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt-watch-gt: a ground truth for kmemtrace watch. One eventfd (its
 * struct eventfd_ctx is kmalloc'ed in do_eventfd), then N rounds of
 * write(8 bytes) and read(8 bytes), then close. Per round the kernel
 * (fs/eventfd.c) does, on the context:
 *
 *	eventfd_write: reads count (overflow check), writes count (+= 1)
 *	eventfd_read:  reads count (empty?), reads flags (EFD_SEMAPHORE?),
 *	               writes count (= 0)
 *
 * so a watch on count sees N writes and N reads from each, and a watch on
 * flags N reads and no write. It waits before the first round so the
 * watcher has armed its watchpoints (-s MS, default 300); -i US spaces the
 * rounds out.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int rounds = 100, sleep_ms = 300, interval_us = 0, opt, fd, i;
	uint64_t v = 1;

	while ((opt = getopt(argc, argv, "n:s:i:")) != -1) {
		switch (opt) {
		case 'n': rounds = atoi(optarg); break;
		case 's': sleep_ms = atoi(optarg); break;
		case 'i': interval_us = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: kmt-watch-gt [-n ROUNDS] [-s MS] [-i US]\n");
			return 2;
		}
	}
	fd = eventfd(0, 0);
	if (fd < 0) {
		perror("eventfd");
		return 1;
	}
	printf("kmt-watch-gt pid %d: eventfd, %d rounds of write and read\n", (int)getpid(), rounds);
	fflush(stdout);
	usleep((useconds_t)sleep_ms * 1000);
	for (i = 0; i < rounds; i++) {
		v = 1;
		if (write(fd, &v, sizeof(v)) != sizeof(v) || read(fd, &v, sizeof(v)) != sizeof(v)) {
			perror("eventfd write/read");
			return 1;
		}
		if (interval_us)
			usleep((useconds_t)interval_us);
	}
	usleep(50 * 1000);
	close(fd);
	return 0;
}
