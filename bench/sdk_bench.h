/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sdk_bench.h - the timing harness of bench/sdk_bench.c and its LTTng-UST
 * peer bench/sdk_bench_lttng.c, so both measure alike: a pool of worker
 * threads pinned one per CPU, started together by a spinning barrier, each
 * timing its own loop of a case (CLOCK_MONOTONIC around the whole loop),
 * and medians over repeated runs. Header-only: each is one program.
 */
#ifndef PFC_BENCH_SDK_BENCH_H
#define PFC_BENCH_SDK_BENCH_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define BENCH_MAX_THREADS 2
#define BENCH_MAX_REPS 64

/* A case body written 8 times per loop iteration: the loop's own counter
 * and branch then cost an eighth of an iteration, which matters only for
 * the sub-nanosecond cases (a disabled event). */
#define BENCH_X8(s)                                                                    \
	do {                                                                           \
		s;                                                                     \
		s;                                                                     \
		s;                                                                     \
		s;                                                                     \
		s;                                                                     \
		s;                                                                     \
		s;                                                                     \
		s;                                                                     \
	} while (0)

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t bench_rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return bench_now_ns();
#endif
}

static inline int bench_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of @n values (sorts them in place); 0 for none. */
static inline double bench_median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One run of a case on worker @idx: @n loop iterations. */
typedef void (*bench_loop_cb)(unsigned idx, uint64_t n, void *user);

/*
 * Worker threads that wait for a job, then run it together. Worker i is
 * pinned to CPU i (modulo the CPUs there are); a job for one thread runs
 * on worker 0. Set pin = false before bench_pool_start() to leave the
 * threads to the scheduler.
 */
struct bench_pool;

struct bench_worker_arg {
	struct bench_pool *pool;
	unsigned idx;
};

struct bench_pool {
	pthread_mutex_t lock;
	pthread_cond_t wake, done;
	pthread_t th[BENCH_MAX_THREADS];
	unsigned n_threads;
	bool pin;
	bool quit;
	uint64_t gen;
	unsigned n_active, n_done;
	bench_loop_cb fn;
	void *user;
	uint64_t n;
	atomic_uint arrived;
	uint64_t elapsed_ns[BENCH_MAX_THREADS];
	/* Context switches during the loop: involuntary ones mean another task
	 * took the CPU (the figure includes its time), voluntary ones that the
	 * loop blocked (a lock, a stall). */
	long n_preempt[BENCH_MAX_THREADS], n_block[BENCH_MAX_THREADS];
	const char *name_prefix;
	struct bench_worker_arg args[BENCH_MAX_THREADS];
};

static inline void *bench_worker_main(void *arg)
{
	struct bench_worker_arg *a = arg;
	struct bench_pool *p = a->pool;
	uint64_t seen = 0, t0, t1, n;
	struct rusage ru0, ru1;
	unsigned n_active;
	bench_loop_cb fn;
	void *user;
	char name[16];

	snprintf(name, sizeof(name), "%s%u", p->name_prefix ? p->name_prefix : "bench-", a->idx);
	pthread_setname_np(pthread_self(), name);
	if (p->pin) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(a->idx % (unsigned)bench_ncpus(), &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	for (;;) {
		pthread_mutex_lock(&p->lock);
		while (!p->quit && p->gen == seen)
			pthread_cond_wait(&p->wake, &p->lock);
		if (p->quit) {
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		/* The job as it is now, read with its generation: a worker that
		 * wakes late must not take the next job's fields for this one. */
		seen = p->gen;
		n_active = p->n_active;
		fn = p->fn;
		n = p->n;
		user = p->user;
		pthread_mutex_unlock(&p->lock);
		if (a->idx >= n_active)
			continue;
		/* Start together: both loops overlap for the whole run. */
		atomic_fetch_add(&p->arrived, 1);
		while (atomic_load(&p->arrived) < n_active)
			;
		getrusage(RUSAGE_THREAD, &ru0);
		t0 = bench_now_ns();
		fn(a->idx, n, user);
		t1 = bench_now_ns();
		getrusage(RUSAGE_THREAD, &ru1);
		pthread_mutex_lock(&p->lock);
		p->elapsed_ns[a->idx] = t1 - t0;
		p->n_preempt[a->idx] = ru1.ru_nivcsw - ru0.ru_nivcsw;
		p->n_block[a->idx] = ru1.ru_nvcsw - ru0.ru_nvcsw;
		p->n_done++;
		pthread_cond_signal(&p->done);
		pthread_mutex_unlock(&p->lock);
	}
}

/* Starts @n_threads workers named <@prefix><i>. Return: 0 or -errno. */
static inline int bench_pool_start(struct bench_pool *p, unsigned n_threads, const char *prefix)
{
	unsigned i;
	int err;

	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	pthread_cond_init(&p->done, NULL);
	p->name_prefix = prefix;
	p->n_threads = 0;
	for (i = 0; i < n_threads && i < BENCH_MAX_THREADS; i++) {
		p->args[i].pool = p;
		p->args[i].idx = i;
		err = pthread_create(&p->th[i], NULL, bench_worker_main, &p->args[i]);
		if (err)
			return -err;
		p->n_threads++;
	}
	return 0;
}

/* Runs @fn on workers 0..@n_active-1 at once; their loop times go to
 * p->elapsed_ns[]. */
static inline void bench_pool_run(struct bench_pool *p, unsigned n_active, bench_loop_cb fn,
				  void *user, uint64_t n)
{
	pthread_mutex_lock(&p->lock);
	p->fn = fn;
	p->user = user;
	p->n = n;
	p->n_active = n_active;
	p->n_done = 0;
	atomic_store(&p->arrived, 0);
	p->gen++;
	pthread_cond_broadcast(&p->wake);
	while (p->n_done < n_active)
		pthread_cond_wait(&p->done, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

static inline void bench_pool_stop(struct bench_pool *p)
{
	unsigned i;

	pthread_mutex_lock(&p->lock);
	p->quit = true;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->n_threads; i++)
		pthread_join(p->th[i], NULL);
	p->n_threads = 0;
}

/* ns per event of every rep, per thread, for 1 and 2 threads; how many
 * thread-runs were preempted or blocked. */
struct bench_series {
	double v[BENCH_MAX_THREADS + 1][BENCH_MAX_THREADS][BENCH_MAX_REPS];
	unsigned n[BENCH_MAX_THREADS + 1];
	unsigned n_runs, n_preempted, n_blocked;
};

/* One rep of a case with @threads threads of @iters loop iterations, each
 * of @events_per_iter events, into @s. */
static inline void bench_series_run(struct bench_pool *p, struct bench_series *s, unsigned threads,
				    bench_loop_cb fn, void *user, uint64_t iters,
				    unsigned events_per_iter)
{
	unsigned i, k = s->n[threads];

	bench_pool_run(p, threads, fn, user, iters);
	if (k >= BENCH_MAX_REPS)
		return;
	for (i = 0; i < threads; i++) {
		s->v[threads][i][k] = (double)p->elapsed_ns[i] / (double)(iters * events_per_iter);
		s->n_runs++;
		s->n_preempted += p->n_preempt[i] > 0;
		s->n_blocked += p->n_block[i] > 0;
	}
	s->n[threads] = k + 1;
}

/* The median ns per event of thread @idx in the @threads-thread runs. */
static inline double bench_series_median(const struct bench_series *s, unsigned threads,
					 unsigned idx)
{
	double tmp[BENCH_MAX_REPS];
	unsigned n = s->n[threads];

	memcpy(tmp, s->v[threads][idx], n * sizeof(double));
	return bench_median(tmp, n);
}

/* The fastest run of thread @idx in the @threads-thread runs: the cost when
 * nothing disturbed the loop. */
static inline double bench_series_min(const struct bench_series *s, unsigned threads, unsigned idx)
{
	double m = 0;
	unsigned i;

	for (i = 0; i < s->n[threads]; i++) {
		if (i == 0 || s->v[threads][idx][i] < m)
			m = s->v[threads][idx][i];
	}
	return m;
}

#endif
