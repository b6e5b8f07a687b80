// SPDX-License-Identifier: Apache-2.0
/*
 * hp_known.c - a program that allocates known amounts on known call
 * paths, for heapprofd's tests: leak_a keeps 64 MiB (in 64 KiB blocks),
 * churn_b allocates and frees 32 MiB (4 KiB blocks), small_c keeps many
 * 32-byte blocks (8 MiB). It prints "ready" and waits for a line on stdin
 * before it allocates (the session is up), then prints "done" and waits
 * for another line (the dump) before it exits.
 * Options: --threads (each path on its own thread), --no-wait.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEAK_BYTES (64u << 20)
#define CHURN_BYTES (32u << 20)
#define SMALL_BYTES (8u << 20)

static void *volatile g_sink;
void **g_leaks;
void **g_small;

__attribute__((noinline)) void leak_a(void)
{
	size_t i, n = LEAK_BYTES / 65536;

	g_leaks = calloc(n, sizeof(void *));
	for (i = 0; i < n; i++) {
		g_leaks[i] = malloc(65536);
		memset(g_leaks[i], 1, 64);
	}
}

__attribute__((noinline)) void churn_b(void)
{
	size_t i;

	for (i = 0; i < CHURN_BYTES / 4096; i++) {
		void *p = malloc(4096);

		g_sink = p;
		free(p);
	}
}

__attribute__((noinline)) void small_c(void)
{
	size_t i, n = SMALL_BYTES / 32;

	g_small = malloc(n * sizeof(void *));
	for (i = 0; i < n; i++)
		g_small[i] = malloc(32);
}

static void *run(void *arg)
{
	((void (*)(void))arg)();
	return NULL;
}

static void wait_line(void)
{
	char line[64];

	if (!fgets(line, sizeof(line), stdin))
		return;
}

int main(int argc, char **argv)
{
	int threads = 0, no_wait = 0, i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads"))
			threads = 1;
		else if (!strcmp(argv[i], "--no-wait"))
			no_wait = 1;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready\n");
	if (!no_wait)
		wait_line();
	if (threads) {
		pthread_t t[3];

		pthread_create(&t[0], NULL, run, (void *)leak_a);
		pthread_create(&t[1], NULL, run, (void *)churn_b);
		pthread_create(&t[2], NULL, run, (void *)small_c);
		for (i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
	} else {
		leak_a();
		churn_b();
		small_c();
	}
	printf("done\n");
	if (!no_wait)
		wait_line();
	return 0;
}
