// SPDX-License-Identifier: Apache-2.0
/*
 * hp_cases.c - the hard cases of heapprofd's tests
 * (tests/integration/heapprofd_cases.sh), one per mode; each keeps known
 * bytes in functions named after the case:
 *   threads       8 threads, each keeps 4 MiB in thread_leak (32 MiB)
 *   fork          parent_leak keeps 16 MiB; a forked child keeps 16 MiB in
 *                 child_leak and exits; the parent waits for it
 *   exec          before_exec keeps 8 MiB, then the process execs itself
 *                 as "exec2" (same pid, the library again), which keeps
 *                 8 MiB in after_exec
 *   dlopen LIB    dlopens LIB (libhp_dl.so) and calls its dl_leak (8 MiB)
 *   churn         allocates and frees in churn_loop until stdin closes or
 *                 says "exit" (then _exit at once, mid-dump maybe), or
 *                 "more" (it then keeps 64 MiB more in late_leak and
 *                 prints "late done")
 *   hostile       keeps 1 MiB in hostile_leak, then scribbles over the
 *                 heapprofd ring it finds in its own mappings (a published
 *                 record of garbage), allocates on, and says "scribbled"
 * Each prints "ready", waits for a line unless --no-wait, runs the case,
 * prints "done" (and waits for a line unless --no-wait).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile g_sink;
static int g_no_wait;

static void wait_line(char *line, size_t n)
{
	line[0] = 0;
	if (!g_no_wait && !fgets(line, (int)n, stdin))
		line[0] = 0;
}

/* keep BYTES in 64 KiB blocks (touched); inlined, so the caller is the
 * stack's leaf. */
static inline __attribute__((always_inline)) void keep(size_t bytes)
{
	size_t i;

	for (i = 0; i < bytes / 65536; i++) {
		char *p = malloc(65536);

		memset(p, 1, 64);
		g_sink = p;
	}
}

__attribute__((noinline)) void thread_leak(void)
{
	keep(4u << 20);
}

static void *thread_main(void *arg)
{
	(void)arg;
	thread_leak();
	return NULL;
}

__attribute__((noinline)) void parent_leak(void)
{
	keep(16u << 20);
}

__attribute__((noinline)) void child_leak(void)
{
	keep(16u << 20);
}

__attribute__((noinline)) void before_exec(void)
{
	keep(8u << 20);
}

__attribute__((noinline)) void after_exec(void)
{
	keep(8u << 20);
}

__attribute__((noinline)) void late_leak(void)
{
	keep(64u << 20);
}

__attribute__((noinline)) void hostile_leak(void)
{
	keep(1u << 20);
}

__attribute__((noinline)) void churn_loop(volatile int *stop)
{
	while (!*stop) {
		int i;

		for (i = 0; i < 1000; i++) {
			void *p = malloc(100 + (size_t)(i % 900));

			g_sink = p;
			free(p);
		}
	}
}

static volatile int g_churn_stop;

static void *churn_main(void *arg)
{
	(void)arg;
	churn_loop(&g_churn_stop);
	return NULL;
}

/* The heapprofd ring in this process's mappings: its data area's first
 * copy (the header page, then data_size bytes mapped twice). */
static uint64_t *find_ring(size_t *words)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t *hdr = NULL;

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (!strstr(line, "heapprofd_ring") || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (!hdr) {
			hdr = (uint64_t *)lo;
			continue;
		}
		(void)hi;
	}
	fclose(f);
	if (!hdr || (uint32_t)hdr[0] != 0x48505247u)
		return NULL;
	*words = (size_t)(hdr[1] / 8);
	return hdr;
}

static int hostile(void)
{
	size_t words = 0, i;
	uint64_t *hdr, *data, pos, seed = 0x1234567;

	hostile_leak();
	hdr = find_ring(&words);
	if (!hdr) {
		fprintf(stderr, "hp_cases: no heapprofd ring in my mappings\n");
		return 1;
	}
	data = hdr + 4096 / 8;
	/* Reserve like a writer (write_pos at byte 64), then publish a record
	 * whose length and contents are garbage: its header is a length, a
	 * type and, written last, a stamp (its position xor the key at byte
	 * 240 of the header page). */
	pos = __atomic_fetch_add(&hdr[8], 4096, __ATOMIC_SEQ_CST);
	for (i = 2; i < 512; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		data[(pos / 8 + i) % words] = seed;
	}
	__atomic_store_n((uint32_t *)&data[(pos / 8) % words] + 1, 1u, __ATOMIC_RELEASE);
	__atomic_store_n((uint32_t *)&data[(pos / 8) % words], 0x7ffffff8u, __ATOMIC_RELEASE);
	__atomic_store_n(&data[(pos / 8 + 1) % words], pos ^ hdr[240 / 8], __ATOMIC_RELEASE);
	keep(4u << 20);
	printf("scribbled\n");
	return 0;
}

int main(int argc, char **argv)
{
	char line[64];
	const char *mode;
	int i;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: hp_cases MODE [ARG] [--no-wait]\n");
		return 2;
	}
	mode = argv[1];
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--no-wait"))
			g_no_wait = 1;
	}
	if (!strcmp(mode, "exec2")) {
		after_exec();
		printf("done\n");
		wait_line(line, sizeof(line));
		return 0;
	}
	printf("ready\n");
	wait_line(line, sizeof(line));
	if (!strcmp(mode, "threads")) {
		pthread_t t[8];

		for (i = 0; i < 8; i++)
			pthread_create(&t[i], NULL, thread_main, NULL);
		for (i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(mode, "fork")) {
		pid_t pid;
		int st;

		parent_leak();
		pid = fork();
		if (pid == 0) {
			child_leak();
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "hp_cases: the child failed\n");
			return 1;
		}
	} else if (!strcmp(mode, "exec")) {
		char *args[4] = {argv[0], "exec2", g_no_wait ? "--no-wait" : NULL, NULL};

		before_exec();
		execv("/proc/self/exe", args);
		perror("hp_cases: exec");
		return 1;
	} else if (!strcmp(mode, "dlopen")) {
		void *h;
		void (*fn)(void);

		if (argc < 3) {
			fprintf(stderr, "hp_cases: dlopen LIB\n");
			return 2;
		}
		h = dlopen(argv[2], RTLD_NOW);
		fn = h ? (void (*)(void))dlsym(h, "dl_leak") : NULL;
		if (!fn) {
			fprintf(stderr, "hp_cases: %s\n", dlerror());
			return 1;
		}
		fn();
	} else if (!strcmp(mode, "churn")) {
		pthread_t t;

		pthread_create(&t, NULL, churn_main, NULL);
		printf("churning\n");
		for (;;) {
			if (!fgets(line, sizeof(line), stdin) || !strncmp(line, "exit", 4))
				_exit(0);
			if (!strncmp(line, "more", 4)) {
				late_leak();
				printf("late done\n");
			}
		}
	} else if (!strcmp(mode, "hostile")) {
		if (hostile())
			return 1;
	} else {
		fprintf(stderr, "hp_cases: no mode '%s'\n", mode);
		return 2;
	}
	printf("done\n");
	wait_line(line, sizeof(line));
	return 0;
}
