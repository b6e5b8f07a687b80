// SPDX-License-Identifier: Apache-2.0
/*
 * ring_copy_floor.c - the floor under a heapprofd sample's cost (issue 26):
 * what writing one stack copy into a shared ring costs its writer, with and
 * without a reader on another CPU reading every record (as heapprofd's
 * unwinder does). No heapprofd code: a writer thread copies REC bytes from
 * its stack into an 8 MiB ring and publishes each record with a seq_cst
 * store (as hp_ring_publish does); the reader, when there is one, reads
 * every 64-byte line of each record behind it and moves the read position.
 * Prints the writer's time per record in the copy and the publish only
 * (the waits for room are not in it) for both runs, pinned to CPUs 0 and 1.
 *
 *   ring_copy_floor [--bytes REC] [--records N] [--smoke]
 *   --smoke  a few thousand records: CI's check that it runs
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RING_BYTES (8u << 20)

static uint8_t *ring;
static _Atomic uint64_t write_pos, read_pos;
static uint64_t rec_bytes = 3072, n_recs = 300000;

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *reader(void *arg)
{
	uint64_t r = 0, end = n_recs * rec_bytes, sum = 0;

	(void)arg;
	pin(1);
	while (r < end) {
		uint64_t w = atomic_load_explicit(&write_pos, memory_order_acquire);

		while (r < w) {
			for (uint64_t i = 0; i < rec_bytes; i += 64)
				sum += ring[(r + i) % RING_BYTES];
			r += rec_bytes;
			atomic_store_explicit(&read_pos, r, memory_order_release);
		}
	}
	return (void *)(uintptr_t)sum;
}

/* The writer's seconds per record in the copy and the publish. */
static double run(int with_reader)
{
	uint8_t *stack = malloc(rec_bytes);
	pthread_t th;
	double in_copy = 0;
	uint64_t w = 0;

	if (!stack)
		exit(1);
	memset(stack, 2, rec_bytes);
	memset(ring, 1, RING_BYTES);
	atomic_store(&write_pos, 0);
	atomic_store(&read_pos, 0);
	pin(0);
	if (with_reader && pthread_create(&th, NULL, reader, NULL) != 0) {
		fprintf(stderr, "ring_copy_floor: pthread_create failed\n");
		exit(1);
	}
	for (uint64_t k = 0; k < n_recs; k++) {
		double t0;

		while (with_reader &&
		       w + rec_bytes - atomic_load_explicit(&read_pos, memory_order_acquire) > RING_BYTES)
			;
		t0 = mono_s();
		/* The ring's size is a multiple of 64: a record may wrap. */
		for (uint64_t i = 0; i < rec_bytes; i += 64) {
			uint64_t n = rec_bytes - i < 64 ? rec_bytes - i : 64;

			memcpy(ring + (w + i) % RING_BYTES, stack + i, n);
		}
		stack[k % rec_bytes]++;
		w += rec_bytes;
		atomic_store_explicit(&write_pos, w, memory_order_seq_cst);
		in_copy += mono_s() - t0;
	}
	if (with_reader)
		pthread_join(th, NULL);
	free(stack);
	return in_copy / (double)n_recs;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc) {
			rec_bytes = strtoull(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--records") == 0 && i + 1 < argc) {
			n_recs = strtoull(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--smoke") == 0) {
			n_recs = 4096;
		} else {
			fprintf(stderr, "usage: ring_copy_floor [--bytes REC] [--records N] [--smoke]\n");
			return 2;
		}
	}
	if (rec_bytes < 64 || rec_bytes > RING_BYTES / 4 || rec_bytes % 64 || n_recs == 0) {
		fprintf(stderr, "ring_copy_floor: --bytes a multiple of 64 in [64, 2 MiB], "
				"--records above 0\n");
		return 2;
	}
	ring = aligned_alloc(4096, RING_BYTES);
	if (!ring)
		return 1;
	printf("ring_copy_floor: %llu-byte records, %llu of them, 8 MiB ring\n",
	       (unsigned long long)rec_bytes, (unsigned long long)n_recs);
	printf("  no reader:                  %.3f us per record (copy and publish)\n",
	       run(0) * 1e6);
	printf("  a reader on another CPU:    %.3f us per record (copy and publish)\n",
	       run(1) * 1e6);
	free(ring);
	return 0;
}
