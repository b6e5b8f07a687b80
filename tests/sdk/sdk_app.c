// SPDX-License-Identifier: Apache-2.0
/*
 * sdk_app.c - a test application of the SDK (linked with libperfetto-c.so):
 * threads that write known events, so tests can count them in the trace.
 *
 *   sdk_app [--in-process FILE] [--socket S] [--threads N] [--slices M]
 *           [--depth D] [--short-threads N] [--categories a,b,...]
 *           [--wait-enabled MS] [--run-ms MS] [--all-kinds] [--stats]
 *           [--fork] [--flow-id ID] [--name PREFIX] [--batch N]
 *           [--idle-threads N --stagger-ms MS] [--shm-kb KB]
 *           [--wait-categories N] [--spin-ms MS]
 *
 * Each of N threads ("worker-<i>") writes M slices nested D deep in every
 * category ("s<depth>" names; slices carry an int "i" annotation at depth
 * 0). --short-threads runs N threads one batch of 8 at a time, 100 slices
 * each (--batch sets the batch size). --idle-threads starts N threads at
 * once, thread i writing 100 slices after i * MS ms and then staying alive
 * and idle until all have written (its chunk must be given back).
 * --wait-categories waits until N categories are enabled (--wait-enabled
 * gives the timeout). --spin-ms: the main thread ("spinner") then writes 5
 * "spin" slices, each around MS ms of busy work and followed by MS ms of
 * sleep, to line them up with the kernel's scheduling events. --run-ms keeps writing for that long (for restart tests), printing
 * nothing until the end. --all-kinds adds instants, counters, a named
 * track, an async track, flows and one annotation of each type. --stats
 * prints pfc_get_stats() as key=value lines. Exit 0 unless the SDK failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perfetto-c/pfc.h"

#define MAX_CATS 8

static struct pfc_category_ref g_cats[MAX_CATS];
static size_t g_n_cats;
static int g_slices = 1000, g_depth = 4, g_run_ms, g_all_kinds;
static uint64_t g_flow_id;
static const char *g_prefix = "";
static struct pfc_track *g_named, *g_async, *g_counter, *g_dcounter;

static const char *const k_names[] = {"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void one_group(size_t c, int64_t i)
{
	struct pfc_arg arg = pfc_arg_int("i", i);
	struct pfc_event e;
	int d;

	if (!PFC_ENABLED(g_cats[c]))
		return;
	memset(&e, 0, sizeof(e));
	e.type = PFC_EVENT_SLICE_BEGIN;
	e.name = k_names[0];
	e.args = &arg;
	e.n_args = 1;
	pfc_te_event(g_cats[c].cat, &e);
	for (d = 1; d < g_depth; d++)
		PFC_SLICE_BEGIN(g_cats[c], k_names[d % 8]);
	for (d = 1; d < g_depth; d++)
		PFC_SLICE_END(g_cats[c]);
	PFC_SLICE_END(g_cats[c]);
}

static void all_kinds(size_t c, int64_t i)
{
	struct pfc_arg args[6];
	struct pfc_event e;

	args[0] = pfc_arg_int("an_int", -5);
	args[1] = pfc_arg_uint("a_uint", 7);
	args[2] = pfc_arg_double("a_double", 2.5);
	args[3] = pfc_arg_bool("a_bool", true);
	args[4] = pfc_arg_string("a_string", "hello");
	args[5] = pfc_arg_pointer("a_pointer", (const void *)(uintptr_t)0x1234);
	memset(&e, 0, sizeof(e));
	e.type = PFC_EVENT_INSTANT;
	e.name = "kinds";
	e.args = args;
	e.n_args = 6;
	PFC_EVENT(g_cats[c], &e);
	PFC_INSTANT(g_cats[c], "tick");
	PFC_COUNTER_INT(g_cats[c], g_counter, i);
	PFC_COUNTER_DOUBLE(g_cats[c], g_dcounter, (double)i / 2);
	memset(&e, 0, sizeof(e));
	e.type = PFC_EVENT_SLICE_BEGIN;
	e.name = "on_named";
	e.track = g_named;
	PFC_EVENT(g_cats[c], &e);
	e.type = PFC_EVENT_SLICE_END;
	PFC_EVENT(g_cats[c], &e);
	memset(&e, 0, sizeof(e));
	e.type = PFC_EVENT_SLICE_BEGIN;
	e.name = "request";
	e.track = g_async;
	PFC_EVENT(g_cats[c], &e);
	e.type = PFC_EVENT_SLICE_END;
	PFC_EVENT(g_cats[c], &e);
	{
		char dyn[32];

		snprintf(dyn, sizeof(dyn), "dyn_%d", (int)(i % 3));
		memset(&e, 0, sizeof(e));
		e.type = PFC_EVENT_INSTANT;
		e.name = dyn;
		e.flags = PFC_EVENT_DYNAMIC_NAMES;
		PFC_EVENT(g_cats[c], &e);
	}
	{
		PFC_SCOPED_SLICE(g_cats[c], "scoped");
	}
}

static void flows(size_t c)
{
	struct pfc_event e;

	if (!g_flow_id)
		return;
	memset(&e, 0, sizeof(e));
	e.type = PFC_EVENT_SLICE_BEGIN;
	e.name = "rpc";
	e.flow_id = g_flow_id;
	PFC_EVENT(g_cats[c], &e);
	PFC_SLICE_END(g_cats[c]);
}

struct worker {
	pthread_t th;
	int index;
	int slices;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char name[32];
	uint64_t end = g_run_ms ? now_ms() + (uint64_t)g_run_ms : 0;
	int64_t i = 0;
	size_t c;

	snprintf(name, sizeof(name), "%sworker-%d", g_prefix, w->index);
	pthread_setname_np(pthread_self(), name);
	do {
		for (i = 0; i < w->slices / g_depth; i++) {
			for (c = 0; c < g_n_cats; c++) {
				one_group(c, i);
				if (g_all_kinds && i % 16 == 0)
					all_kinds(c, i);
			}
		}
		if (end) {
			struct timespec ts = {0, 5 * 1000 * 1000};

			nanosleep(&ts, NULL);
		}
	} while (end && now_ms() < end);
	for (c = 0; c < g_n_cats; c++)
		flows(c);
	return NULL;
}

struct idle_worker {
	pthread_t th;
	int index;
	int stagger_ms;
	pthread_barrier_t *done;
};

static void *idle_main(void *arg)
{
	struct idle_worker *w = arg;
	struct timespec ts = {w->stagger_ms * w->index / 1000,
			      (long)(w->stagger_ms * w->index % 1000) * 1000000L};
	char name[32];
	int64_t i;
	size_t c;

	snprintf(name, sizeof(name), "%sidle-%d", g_prefix, w->index);
	pthread_setname_np(pthread_self(), name);
	nanosleep(&ts, NULL);
	for (i = 0; i < 100 / g_depth; i++)
		for (c = 0; c < g_n_cats; c++)
			one_group(c, i);
	/* Alive and idle until every thread has written. */
	pthread_barrier_wait(w->done);
	return NULL;
}

static int run_idle_threads(int n, int stagger_ms)
{
	struct idle_worker *ws = calloc((size_t)n, sizeof(*ws));
	pthread_barrier_t done;
	int i;

	if (!ws || pthread_barrier_init(&done, NULL, (unsigned)n) != 0) {
		free(ws);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		ws[i].index = i;
		ws[i].stagger_ms = stagger_ms;
		ws[i].done = &done;
		if (pthread_create(&ws[i].th, NULL, idle_main, &ws[i]) != 0) {
			fprintf(stderr, "sdk_app: pthread_create failed at %d\n", i);
			exit(1);
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(ws[i].th, NULL);
	pthread_barrier_destroy(&done);
	free(ws);
	return 0;
}

static int run_threads(int n, int slices, int base)
{
	struct worker *ws = calloc((size_t)n, sizeof(*ws));
	int i;

	if (!ws)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ws[i].index = base + i;
		ws[i].slices = slices;
		if (pthread_create(&ws[i].th, NULL, worker_main, &ws[i]) != 0) {
			fprintf(stderr, "sdk_app: pthread_create failed\n");
			n = i;
			break;
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(ws[i].th, NULL);
	free(ws);
	return 0;
}

static void spin(int ms)
{
	struct timespec pause = {ms / 1000, (long)(ms % 1000) * 1000000L};
	int k;

	pthread_setname_np(pthread_self(), "spinner");
	pfc_thread_set_name("spinner");
	/* Real-time priority where allowed (root), so other work does not
	 * preempt the spin: each slice's end then lies inside one long running
	 * interval, not microseconds after a switch-in that a busy machine
	 * made it wait for (20 ms of 1 s is far below the kernel's RT limit). */
	(void)sched_setscheduler(0, SCHED_FIFO, &(struct sched_param){.sched_priority = 1});
	/* Other data sources of the session may start a little later. */
	nanosleep(&(struct timespec){0, 300 * 1000 * 1000}, NULL);
	for (k = 0; k < 5; k++) {
		uint64_t end = now_ms() + (uint64_t)ms;

		PFC_SLICE_BEGIN(g_cats[0], "spin");
		while (now_ms() < end)
			;
		PFC_SLICE_END(g_cats[0]);
		nanosleep(&pause, NULL);
	}
}

static void add_categories(char *list)
{
	char *save = NULL, *tok;
	static const char *const slow[] = {"slow"};

	for (tok = strtok_r(list, ",", &save); tok && g_n_cats < MAX_CATS;
	     tok = strtok_r(NULL, ",", &save)) {
		bool is_slow = strncmp(tok, "slow", 4) == 0;

		pfc_category_register(&g_cats[g_n_cats], tok, "a test category",
				      is_slow ? slow : NULL, is_slow ? 1 : 0);
		g_n_cats++;
	}
}

static size_t n_enabled(void)
{
	size_t c, n = 0;

	for (c = 0; c < g_n_cats; c++)
		if (PFC_ENABLED(g_cats[c]))
			n++;
	return n;
}

static void print_stats(const char *who)
{
	struct pfc_stats s;

	if (pfc_get_stats(&s, sizeof(s)) != 0)
		return;
	printf("%sevents_written=%llu\n%sevents_dropped=%llu\n%sevents_dropped_no_service=%llu\n"
	       "%schunks_committed=%llu\n%schunks_reclaimed=%llu\n%swriters=%llu\n"
	       "%sconnections=%llu\n",
	       who, (unsigned long long)s.events_written, who,
	       (unsigned long long)s.events_dropped, who,
	       (unsigned long long)s.events_dropped_no_service, who,
	       (unsigned long long)s.chunks_committed, who,
	       (unsigned long long)s.chunks_reclaimed, who, (unsigned long long)s.writers, who,
	       (unsigned long long)s.connections);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *inproc = NULL, *sock = NULL;
	char cats[256] = "cat";
	int threads = 1, short_threads = 0, wait_ms = 0, stats = 0, do_fork = 0, i, rc;
	int batch = 8, idle_threads = 0, stagger_ms = 2, shm_kb = 0, wait_cats = 1, spin_ms = 0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--stats")) {
			stats = 1;
		} else if (!strcmp(a, "--all-kinds")) {
			g_all_kinds = 1;
		} else if (!strcmp(a, "--fork")) {
			do_fork = 1;
		} else if (!v) {
			fprintf(stderr, "sdk_app: %s needs a value\n", a);
			return 2;
		} else if (!strcmp(a, "--in-process")) {
			inproc = argv[++i];
		} else if (!strcmp(a, "--socket")) {
			sock = argv[++i];
		} else if (!strcmp(a, "--threads")) {
			threads = atoi(argv[++i]);
		} else if (!strcmp(a, "--slices")) {
			g_slices = atoi(argv[++i]);
		} else if (!strcmp(a, "--depth")) {
			g_depth = atoi(argv[++i]);
		} else if (!strcmp(a, "--short-threads")) {
			short_threads = atoi(argv[++i]);
		} else if (!strcmp(a, "--categories")) {
			snprintf(cats, sizeof(cats), "%s", argv[++i]);
		} else if (!strcmp(a, "--wait-enabled")) {
			wait_ms = atoi(argv[++i]);
		} else if (!strcmp(a, "--run-ms")) {
			g_run_ms = atoi(argv[++i]);
		} else if (!strcmp(a, "--flow-id")) {
			g_flow_id = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(a, "--name")) {
			g_prefix = argv[++i];
		} else if (!strcmp(a, "--batch")) {
			batch = atoi(argv[++i]);
		} else if (!strcmp(a, "--idle-threads")) {
			idle_threads = atoi(argv[++i]);
		} else if (!strcmp(a, "--stagger-ms")) {
			stagger_ms = atoi(argv[++i]);
		} else if (!strcmp(a, "--shm-kb")) {
			shm_kb = atoi(argv[++i]);
		} else if (!strcmp(a, "--spin-ms")) {
			spin_ms = atoi(argv[++i]);
		} else if (!strcmp(a, "--wait-categories")) {
			wait_cats = atoi(argv[++i]);
		} else {
			fprintf(stderr, "sdk_app: unknown option %s\n", a);
			return 2;
		}
	}
	if (g_depth < 1 || g_depth > 8 || threads < 0 || g_slices < 0 || batch < 1 ||
	    idle_threads < 0 || stagger_ms < 0 || shm_kb < 0 || wait_cats < 1) {
		fprintf(stderr, "sdk_app: bad --depth, --threads or --slices\n");
		return 2;
	}
	add_categories(cats);
	if (shm_kb && (rc = pfc_set_shm_size_kb((uint32_t)shm_kb)) != 0) {
		fprintf(stderr, "sdk_app: pfc_set_shm_size_kb: %s\n", strerror(-rc));
		return 1;
	}
	if (sock && (rc = pfc_set_socket(sock)) != 0) {
		fprintf(stderr, "sdk_app: pfc_set_socket: %s\n", strerror(-rc));
		return 1;
	}
	if (inproc && (rc = pfc_set_in_process_output(inproc, NULL, 0)) != 0) {
		fprintf(stderr, "sdk_app: pfc_set_in_process_output: %s\n", strerror(-rc));
		return 1;
	}
	rc = pfc_init(inproc ? PFC_BACKEND_IN_PROCESS : PFC_BACKEND_SYSTEM, "sdk_app");
	if (rc != 0) {
		fprintf(stderr, "sdk_app: pfc_init: %s\n", strerror(-rc));
		return 1;
	}
	pfc_track_create("named", PFC_TRACK_SLICES, 0, &g_named);
	pfc_track_create("async", PFC_TRACK_ASYNC, 0, &g_async);
	pfc_track_create("queue_depth", PFC_TRACK_COUNTER, 0, &g_counter);
	pfc_track_create("loss", PFC_TRACK_COUNTER, 0, &g_dcounter);
	if (wait_ms) {
		uint64_t end = now_ms() + (uint64_t)wait_ms;

		while (n_enabled() < (size_t)wait_cats && now_ms() < end)
			usleep(2000);
		if (n_enabled() < (size_t)wait_cats) {
			fprintf(stderr, "sdk_app: %zu categories enabled after %d ms\n", n_enabled(),
				wait_ms);
			pfc_shutdown();
			return 3;
		}
	}
	if (do_fork) {
		pid_t pid = fork();

		if (pid == 0) {
			/* The child writes nothing into the parent's buffer. */
			size_t c;

			for (c = 0; c < g_n_cats; c++)
				PFC_SLICE_BEGIN(g_cats[c], "child");
			print_stats("child_");
			_exit(0);
		}
		waitpid(pid, NULL, 0);
	}
	if (spin_ms > 0)
		spin(spin_ms);
	run_threads(threads, g_slices, 0);
	if (idle_threads)
		run_idle_threads(idle_threads, stagger_ms);
	for (i = 0; i < short_threads; i += batch) {
		int n = short_threads - i < batch ? short_threads - i : batch;

		run_threads(n, 100, threads + i);
	}
	rc = pfc_flush(2000);
	if (rc != 0 && !inproc)
		fprintf(stderr, "sdk_app: pfc_flush: %s\n", strerror(-rc));
	if (stats)
		print_stats("");
	pfc_shutdown();
	pfc_track_destroy(g_named);
	pfc_track_destroy(g_async);
	pfc_track_destroy(g_counter);
	pfc_track_destroy(g_dcounter);
	return 0;
}
