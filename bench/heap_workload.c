// SPDX-License-Identifier: Apache-2.0
/*
 * heap_workload.c - the malloc-heavy program bench/heap_bench.sh profiles:
 * N malloc/free pairs of mixed sizes over T threads. Each thread keeps 256
 * live blocks; a step frees one (picked at random) and allocates a new one
 * in its place, of 16-143 bytes (15 in 16 steps), 144-1167 bytes (about 1
 * in 17) or 1 KiB-17 KiB (1 in 256), and writes its first bytes: a mean
 * near 150 bytes, the shape of a program's small objects.
 * It prints one line of figures: the pairs, the wall time, the process's
 * CPU time (user + system: its own threads, so a profiler's client is in
 * it and a separate daemon is not) and the bytes allocated.
 *
 *   heap_workload [--pairs N] [--threads T] [--fixed SIZE] [--smoke]
 *     --fixed SIZE  every block SIZE bytes (the unsampled-call cost)
 *     --smoke       200,000 pairs, checks that the blocks held their bytes
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define SLOTS 256

struct worker {
	pthread_t th;
	uint64_t pairs;
	uint64_t seed;
	uint64_t fixed;
	uint64_t bytes;
	int bad;
};

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static size_t pick_size(uint64_t r)
{
	if ((r & 0xff) == 0)
		return 1024 + ((r >> 8) & 0x3fff);
	if ((r & 0xf) == 0)
		return 144 + ((r >> 8) & 0x3ff);
	return 16 + ((r >> 8) & 0x7f);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	unsigned char *slot[SLOTS];
	unsigned char tag[SLOTS];
	uint64_t i, r;
	size_t n;
	int j;

	memset(slot, 0, sizeof(slot));
	memset(tag, 0, sizeof(tag));
	for (i = 0; i < w->pairs; i++) {
		r = xorshift(&w->seed);
		j = (int)((r >> 40) & (SLOTS - 1));
		if (slot[j] && (slot[j][0] != tag[j] || slot[j][1] != (unsigned char)~tag[j]))
			w->bad = 1;
		free(slot[j]);
		n = w->fixed ? (size_t)w->fixed : pick_size(r);
		slot[j] = malloc(n);
		if (!slot[j]) {
			w->bad = 1;
			break;
		}
		tag[j] = (unsigned char)i;
		slot[j][0] = tag[j];
		slot[j][1] = (unsigned char)~tag[j];
		w->bytes += n;
	}
	for (j = 0; j < SLOTS; j++)
		free(slot[j]);
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
	uint64_t pairs = 20000000, fixed = 0, bytes = 0;
	int threads = 4, smoke = 0, i, bad = 0;
	struct worker *w;
	double t0, c0, wall, cpu;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--pairs") == 0 && i + 1 < argc) {
			pairs = strtoull(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
			threads = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--fixed") == 0 && i + 1 < argc) {
			fixed = strtoull(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--smoke") == 0) {
			smoke = 1;
			pairs = 200000;
		} else {
			fprintf(stderr, "usage: heap_workload [--pairs N] [--threads T] "
					"[--fixed SIZE] [--smoke]\n");
			return 2;
		}
	}
	if (threads < 1 || threads > 256 || pairs == 0 || fixed > (1u << 30)) {
		fprintf(stderr, "heap_workload: bad --threads, --pairs or --fixed\n");
		return 2;
	}
	w = calloc((size_t)threads, sizeof(*w));
	if (!w)
		return 1;
	t0 = now_s();
	c0 = cpu_s();
	for (i = 0; i < threads; i++) {
		w[i].pairs = pairs / (uint64_t)threads + ((uint64_t)i < pairs % (uint64_t)threads);
		w[i].seed = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
		w[i].fixed = fixed;
		if (pthread_create(&w[i].th, NULL, work, &w[i]) != 0) {
			fprintf(stderr, "heap_workload: pthread_create failed\n");
			return 1;
		}
	}
	for (i = 0; i < threads; i++) {
		pthread_join(w[i].th, NULL);
		bytes += w[i].bytes;
		bad |= w[i].bad;
	}
	wall = now_s() - t0;
	cpu = cpu_s() - c0;
	free(w);
	printf("heap_workload: pairs=%llu threads=%d wall_s=%.4f cpu_s=%.4f bytes=%llu "
	       "cpu_ns_per_pair=%.2f\n",
	       (unsigned long long)pairs, threads, wall, cpu, (unsigned long long)bytes,
	       cpu * 1e9 / (double)pairs);
	if (bad) {
		fprintf(stderr, "heap_workload: a block lost its bytes\n");
		return 1;
	}
	(void)smoke;
	return 0;
}
