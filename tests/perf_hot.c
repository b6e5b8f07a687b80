// SPDX-License-Identifier: Apache-2.0
/*
 * perf_hot.c - a workload with known hot functions for traced_perf's
 * tests (tests/integration/perf_*.sh). Modes:
 *   perf_hot spin SECONDS   hot_a spins ~2/3 of the time, hot_b ~1/3,
 *                           both called from main through call_hot
 *   perf_hot rate SECONDS   spin, then print the work rate (blocks_per_s)
 *   perf_hot sys SECONDS    a getppid() loop (kernel frames)
 *   perf_hot pages N        touches N fresh pages once, spins 0.1 s, sleeps 1 s
 * Prints its pid first, then "done". Built twice by the Makefile: with
 * frame pointers ($(O)/perf_hot) and without ($(O)/perf_hot_nofp).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t g_sink;
/* Inner loops of 1000 steps run by hot_a and hot_b (the work rate). */
static uint64_t g_blocks;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void hot_a(uint64_t ns)
{
	uint64_t end = now_ns() + ns, x = g_sink;

	while (now_ns() < end) {
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		g_blocks++;
	}
	g_sink = x;
}

__attribute__((noinline)) static void hot_b(uint64_t ns)
{
	uint64_t end = now_ns() + ns, x = g_sink;

	while (now_ns() < end) {
		for (int i = 0; i < 1000; i++)
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		g_blocks++;
	}
	g_sink = x;
}

__attribute__((noinline)) static void call_hot(double seconds)
{
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);

	/* 2 ms of hot_a, then 1 ms of hot_b. */
	while (now_ns() < end) {
		hot_a(2000000);
		hot_b(1000000);
	}
}

__attribute__((noinline)) static void sys_loop(double seconds)
{
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);

	while (now_ns() < end) {
		for (int i = 0; i < 100; i++)
			g_sink += (uint64_t)getppid();
	}
}

__attribute__((noinline)) static void touch_pages(long n)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	/* One fault per page: no transparent huge pages. */
	madvise(p, (size_t)(n * page), MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++)
		p[i * page] = 1;
	munmap(p, (size_t)(n * page));
}

int main(int argc, char **argv)
{
	double arg;

	if (argc != 3) {
		fprintf(stderr, "usage: perf_hot spin|rate|sys|pages ARG\n");
		return 2;
	}
	printf("%d\n", (int)getpid());
	fflush(stdout);
	arg = strtod(argv[2], NULL);
	if (!strcmp(argv[1], "spin")) {
		call_hot(arg);
	} else if (!strcmp(argv[1], "rate")) {
		call_hot(arg);
		printf("blocks_per_s %.0f\n", (double)g_blocks / arg);
	} else if (!strcmp(argv[1], "sys")) {
		sys_loop(arg);
	} else if (!strcmp(argv[1], "pages")) {
		touch_pages((long)arg);
		/* Running on: the next samples on this CPU see every fault. */
		hot_a(100000000);
		sleep(1);
	} else {
		return 2;
	}
	printf("done\n");
	return 0;
}
