// SPDX-License-Identifier: Apache-2.0
/*
 * perf_workload.c - the CPU-bound workload bench/perf_bench.sh profiles:
 * one thread per CPU (or --threads N) for --seconds S, each running a loop
 * through three functions of known weight (hash_block 1/2, mix_words 1/3,
 * fold_tail 1/6 of the work) with a few calls deep, so a profile has
 * stacks to unwind. Built like the rest of the tree (-O2, no frame
 * pointers), so user stacks need DWARF unwinding. Prints the rate:
 *   perf_workload: T threads, S s, N iterations/s
 * With no arguments it runs 1 s on every CPU (what `make bench` does);
 * --smoke runs 0.2 s (CI runs every bench program with --smoke).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK_WORDS 64

struct worker {
	pthread_t thread;
	double seconds;
	uint64_t iterations;
	uint64_t sink;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* After a call: the caller keeps its frame (no tail call), so a profile
 * shows which of the three the time went through. */
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")

/* Each of these costs a known multiple of one unit of work. */
__attribute__((noinline)) static uint64_t spin_units(uint64_t *w, int units)
{
	uint64_t h = 1469598103934665603ull;
	int u, i;

	for (u = 0; u < units; u++) {
		for (i = 0; i < BLOCK_WORDS; i++) {
			h ^= w[i];
			h *= 1099511628211ull;
			w[i] = h >> 7;
		}
	}
	return h;
}

__attribute__((noinline)) static uint64_t hash_block(uint64_t *w)
{
	uint64_t h = spin_units(w, 3);

	KEEP_FRAME();
	return h;
}

__attribute__((noinline)) static uint64_t mix_words(uint64_t *w)
{
	uint64_t h = spin_units(w, 2);

	KEEP_FRAME();
	return h;
}

__attribute__((noinline)) static uint64_t fold_tail(uint64_t *w)
{
	uint64_t h = spin_units(w, 1);

	KEEP_FRAME();
	return h;
}

__attribute__((noinline)) static uint64_t one_iteration(uint64_t *w)
{
	return hash_block(w) + mix_words(w) + fold_tail(w);
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	uint64_t w[BLOCK_WORDS];
	double end = now_s() + wk->seconds;
	uint64_t n = 0, sink = 0;
	int i;

	for (i = 0; i < BLOCK_WORDS; i++)
		w[i] = (uint64_t)i * 2654435761u;
	/* Check the clock every 256 iterations (about 0.1 ms). */
	for (;;) {
		for (i = 0; i < 256; i++)
			sink += one_iteration(w);
		n += 256;
		if (now_s() >= end)
			break;
	}
	wk->iterations = n;
	wk->sink = sink;
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = sysconf(_SC_NPROCESSORS_ONLN);
	double seconds = 1.0, t0, elapsed;
	struct worker *wk;
	uint64_t total = 0, sink = 0;
	long i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
			threads = strtol(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
			seconds = strtod(argv[++i], NULL);
		} else if (strcmp(argv[i], "--smoke") == 0) {
			seconds = 0.2;
		} else {
			fprintf(stderr, "usage: perf_workload [--threads N] [--seconds S] [--smoke]\n");
			return 2;
		}
	}
	if (threads < 1 || threads > 1024 || !(seconds > 0 && seconds < 86400)) {
		fprintf(stderr, "perf_workload: --threads 1..1024, --seconds > 0\n");
		return 2;
	}
	wk = calloc((size_t)threads, sizeof(*wk));
	if (!wk) {
		fprintf(stderr, "perf_workload: out of memory\n");
		return 1;
	}
	t0 = now_s();
	for (i = 0; i < threads; i++) {
		wk[i].seconds = seconds;
		if (pthread_create(&wk[i].thread, NULL, worker_main, &wk[i]) != 0) {
			fprintf(stderr, "perf_workload: pthread_create failed\n");
			return 1;
		}
	}
	for (i = 0; i < threads; i++) {
		pthread_join(wk[i].thread, NULL);
		total += wk[i].iterations;
		sink ^= wk[i].sink;
	}
	elapsed = now_s() - t0;
	printf("perf_workload: %ld threads, %.1f s, %.0f iterations/s (%llx)\n", threads, seconds,
	       (double)total / elapsed, (unsigned long long)(sink & 0xf));
	free(wk);
	return 0;
}
