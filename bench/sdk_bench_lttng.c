// SPDX-License-Identifier: Apache-2.0
/*
 * sdk_bench_lttng.c - the LTTng-UST peer of bench/sdk_bench.c: ns per
 * tracepoint, enabled (pfc_bench:slice, a short string and an int64) and
 * disabled (pfc_bench:off), with 1 and 2 threads, timed by the same
 * harness as the SDK (sdk_bench.h). sdk_bench starts it under a private
 * lttng-sessiond whose session already records pfc_bench:slice; it waits
 * (up to --wait-ms) until the tracepoint is enabled, then prints
 *
 *   lttng_enabled <1 thread ns> <2 threads: thread 0 ns> <thread 1 ns>
 *                 <thread-runs> <of which preempted> <of which blocked>
 *                 <1 thread: the fastest run's ns>
 *   lttng_disabled <the same>
 *   lttng_events <tracepoints hit while enabled>
 *
 * Built without liblttng-ust-dev it prints "skip lttng: <reason>" and
 * exits 77; exit 2 if the tracepoint never became enabled.
 *   sdk_bench_lttng [--iters N] [--reps R] [--wait-ms MS]
 */
#define _GNU_SOURCE
#include <stdio.h>

#ifdef HAVE_LTTNG_UST
#include "sdk_bench.h"

#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "sdk_bench_tp.h"

static const char k_name[] = "bench_slice";

static void loop_enabled(unsigned idx, uint64_t n, void *user)
{
	uint64_t i;
	int64_t v = 0;

	(void)idx;
	(void)user;
	for (i = 0; i < n; i++)
		BENCH_X8(lttng_ust_tracepoint(pfc_bench, slice, k_name, v++));
}

static void loop_disabled(unsigned idx, uint64_t n, void *user)
{
	uint64_t i;
	int64_t v = 0;

	(void)idx;
	(void)user;
	for (i = 0; i < n; i++)
		BENCH_X8(lttng_ust_tracepoint(pfc_bench, off, k_name, v++));
}

static void print_series(const char *key, const struct bench_series *s)
{
	printf("%s %.3f %.3f %.3f %u %u %u %.3f\n", key, bench_series_median(s, 1, 0),
	       bench_series_median(s, 2, 0), bench_series_median(s, 2, 1), s->n_runs,
	       s->n_preempted, s->n_blocked, bench_series_min(s, 1, 0));
}

int main(int argc, char **argv)
{
	static struct bench_series enabled, disabled;
	struct bench_pool pool = {.pin = true};
	uint64_t iters = 100000, events = 0, waited = 0;
	unsigned reps = 9, r, threads, wait_ms = 5000;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
			iters = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
			reps = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--wait-ms") == 0 && i + 1 < argc)
			wait_ms = (unsigned)strtoul(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: %s [--iters N] [--reps R] [--wait-ms MS]\n", argv[0]);
			return 1;
		}
	}
	if (reps < 1 || reps > BENCH_MAX_REPS || iters < 8) {
		fprintf(stderr, "sdk_bench_lttng: bad --reps or --iters\n");
		return 1;
	}
	/* The session daemon enables the tracepoint when this process registers;
	 * registration runs in lttng-ust's own threads. */
	while (!lttng_ust_tracepoint_enabled(pfc_bench, slice) && waited < wait_ms) {
		struct timespec ts = {0, 10 * 1000 * 1000};

		nanosleep(&ts, NULL);
		waited += 10;
	}
	if (!lttng_ust_tracepoint_enabled(pfc_bench, slice)) {
		printf("skip lttng: pfc_bench:slice was not enabled within %u ms\n", wait_ms);
		return 2;
	}
	if (bench_pool_start(&pool, 2, "lttng-") < 0)
		return 1;
	/* Warm the per-CPU buffers and the code up. */
	for (threads = 1; threads <= 2; threads++) {
		bench_pool_run(&pool, threads, loop_enabled, NULL, iters / 8);
		events += threads * (iters / 8) * 8;
	}
	for (r = 0; r < reps; r++) {
		for (threads = 1; threads <= 2; threads++) {
			bench_series_run(&pool, &enabled, threads, loop_enabled, NULL, iters / 8, 8);
			events += threads * (iters / 8) * 8;
			bench_series_run(&pool, &disabled, threads, loop_disabled, NULL, iters / 8, 8);
		}
	}
	bench_pool_stop(&pool);
	print_series("lttng_enabled", &enabled);
	print_series("lttng_disabled", &disabled);
	printf("lttng_events %llu\n", (unsigned long long)events);
	return 0;
}

#else

int main(void)
{
	puts("skip lttng: sdk_bench_lttng was built without liblttng-ust-dev");
	return 77;
}

#endif
