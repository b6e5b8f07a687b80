// SPDX-License-Identifier: Apache-2.0
/*
 * worker_pool.c - an example of the perfetto-c SDK: a dispatcher thread
 * queues requests for a pool of worker threads. Each request is a slice on
 * the worker that handles it (with nested "parse" and "compute" slices and
 * annotations), joined by a flow to the "enqueue" slice of the dispatcher;
 * the queue's depth is a counter track.
 *
 *   make -C examples/c              (against the installed library)
 *   ./worker_pool --out pool.pftrace            in-process: no daemon
 *   ./worker_pool                    a producer of the running traced
 *   trace_processor_shell -q q.sql pool.pftrace
 *
 * With the system backend, start a session first, e.g.
 *   perfetto --txt -c - -o pool.pftrace <<EOF
 *   buffers { size_kb: 65536 }
 *   data_sources { config { name: "track_event"
 *                  track_event_config { enabled_categories: "pool" } } }
 *   duration_ms: 10000
 *   EOF
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <perfetto-c/pfc.h>

#define N_WORKERS 4
#define N_REQUESTS 2000
#define QUEUE_CAP 64

static PFC_CATEGORY(pool);
static struct pfc_track *g_depth_track;

static struct {
	pthread_mutex_t mu;
	pthread_cond_t not_empty, not_full;
	uint64_t ids[QUEUE_CAP];
	size_t head, len;
	int done;
} q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0};

static void spin_us(unsigned us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < (long)us);
}

static void push(uint64_t id)
{
	pthread_mutex_lock(&q.mu);
	while (q.len == QUEUE_CAP)
		pthread_cond_wait(&q.not_full, &q.mu);
	q.ids[(q.head + q.len++) % QUEUE_CAP] = id;
	PFC_COUNTER_INT(pool, g_depth_track, (int64_t)q.len);
	pthread_cond_signal(&q.not_empty);
	pthread_mutex_unlock(&q.mu);
}

/* The next request id, or 0 when the dispatcher is done. */
static uint64_t pop(void)
{
	uint64_t id = 0;

	pthread_mutex_lock(&q.mu);
	while (q.len == 0 && !q.done)
		pthread_cond_wait(&q.not_empty, &q.mu);
	if (q.len) {
		id = q.ids[q.head];
		q.head = (q.head + 1) % QUEUE_CAP;
		q.len--;
		PFC_COUNTER_INT(pool, g_depth_track, (int64_t)q.len);
		pthread_cond_signal(&q.not_full);
	}
	pthread_mutex_unlock(&q.mu);
	return id;
}

static void *worker(void *arg)
{
	char name[16];
	uint64_t id;

	snprintf(name, sizeof(name), "worker-%d", (int)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	while ((id = pop()) != 0) {
		struct pfc_arg args[2] = {pfc_arg_uint("request_id", id),
					  pfc_arg_string("kind", id % 7 ? "read" : "write")};
		/* The slice that ends the flow the dispatcher started. */
		struct pfc_event e = {PFC_EVENT_SLICE_BEGIN, 0, "handle", NULL, 0, 0,
				      0, id, args, 2};

		PFC_EVENT(pool, &e);
		{
			PFC_SCOPED_SLICE(pool, "parse");
			spin_us(5);
		}
		{
			PFC_SCOPED_SLICE(pool, "compute");
			spin_us(id % 7 ? 20 : 80);
		}
		PFC_SLICE_END(pool);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[N_WORKERS];
	const char *out = NULL;
	uint64_t id;
	int i, rc;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
			out = argv[++i];
		} else {
			fprintf(stderr, "usage: %s [--out TRACE_FILE]\n", argv[0]);
			return 2;
		}
	}
	pfc_category_register(&pool, "pool", "the worker pool", NULL, 0);
	if (out)
		pfc_set_in_process_output(out, NULL, 0);
	rc = pfc_init(out ? PFC_BACKEND_IN_PROCESS : PFC_BACKEND_SYSTEM, "worker_pool");
	if (rc != 0) {
		fprintf(stderr, "worker_pool: pfc_init: %s\n", strerror(-rc));
		return 1;
	}
	pfc_track_create("queue depth", PFC_TRACK_COUNTER, 0, &g_depth_track);
	pfc_thread_set_name("dispatcher");
	for (i = 0; i < N_WORKERS; i++)
		pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
	for (id = 1; id <= N_REQUESTS; id++) {
		struct pfc_event e = {PFC_EVENT_SLICE_BEGIN, 0, "enqueue", NULL, 0, 0, id, 0, NULL, 0};

		PFC_EVENT(pool, &e);
		push(id);
		PFC_SLICE_END(pool);
		if (id % 100 == 0)
			PFC_INSTANT(pool, "batch queued");
	}
	pthread_mutex_lock(&q.mu);
	q.done = 1;
	pthread_cond_broadcast(&q.not_empty);
	pthread_mutex_unlock(&q.mu);
	for (i = 0; i < N_WORKERS; i++)
		pthread_join(th[i], NULL);
	pfc_shutdown();
	pfc_track_destroy(g_depth_track);
	if (out)
		printf("wrote %s\n", out);
	return 0;
}
