// SPDX-License-Identifier: Apache-2.0
/*
 * pingpong.c - the context-switch storm for bench/ftrace_bench.sh: two
 * processes (a fork) pass one byte back and forth over two pipes for N
 * seconds and the parent prints the round trips per second. Pin both to one
 * CPU (`taskset -c 1 pingpong`, or --cpu 1) so that every hand-off is a
 * sched_waking plus a sched_switch on that CPU, the densest sched traffic a
 * pair of tasks can make.
 *
 *   pingpong [--seconds S] [--cpu N] [--samples-ms M]
 *                                      default 2 s, no pinning, no samples
 *   pingpong --smoke                   0.2 s (CI keeps it working)
 *
 * Output (for scripts): with --samples-ms, a line every M ms while running,
 *   sample t=<CLOCK_REALTIME s> trips=<round trips so far>
 * so that a caller can take the rate over a window of its own (the time a
 * recorder was tracing); then always one summary line:
 *   pingpong: round_trips=N seconds=S rate=R
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The parent looks at the clock once per this many round trips. */
#define CLOCK_CHECK_EVERY 256

static struct {
	double seconds;
	int cpu;
	double sample_s; /* 0: no samples */
} g_args = { 2.0, -1, 0.0 };

static double clock_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static int read_byte(int fd)
{
	char c;
	ssize_t n;

	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -1;
}

static int write_byte(int fd)
{
	char c = 'x';
	ssize_t n;

	do
		n = write(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -1;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--seconds S] [--cpu N] [--samples-ms M] | --smoke\n", argv0);
	exit(2);
}

static void parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		char *end = NULL;

		if (strcmp(argv[i], "--smoke") == 0) {
			g_args.seconds = 0.2;
		} else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
			g_args.seconds = strtod(argv[++i], &end);
			if (!end || *end || !(g_args.seconds > 0 && g_args.seconds <= 3600))
				usage(argv[0]);
		} else if (strcmp(argv[i], "--cpu") == 0 && i + 1 < argc) {
			long v = strtol(argv[++i], &end, 10);

			if (!end || *end || v < 0 || v >= CPU_SETSIZE)
				usage(argv[0]);
			g_args.cpu = (int)v;
		} else if (strcmp(argv[i], "--samples-ms") == 0 && i + 1 < argc) {
			long v = strtol(argv[++i], &end, 10);

			if (!end || *end || v < 1 || v > 60000)
				usage(argv[0]);
			g_args.sample_s = (double)v / 1000.0;
		} else {
			usage(argv[0]);
		}
	}
}

int main(int argc, char **argv)
{
	int to_child[2], to_parent[2];
	unsigned long long trips = 0;
	double t0, t1, now, deadline, next_sample;
	pid_t pid;
	int status;

	parse_args(argc, argv);
	if (g_args.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(g_args.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0) {
			perror("pingpong: sched_setaffinity");
			return 1;
		}
	}
	if (pipe(to_child) < 0 || pipe(to_parent) < 0) {
		perror("pingpong: pipe");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("pingpong: fork");
		return 1;
	}
	if (pid == 0) {
		/* Echo until the parent closes its end. */
		close(to_child[1]);
		close(to_parent[0]);
		while (read_byte(to_child[0]) == 0)
			if (write_byte(to_parent[1]) < 0)
				break;
		_exit(0);
	}
	close(to_child[0]);
	close(to_parent[1]);

	t0 = now_s();
	deadline = t0 + g_args.seconds;
	next_sample = t0;
	for (;;) {
		if (write_byte(to_child[1]) < 0 || read_byte(to_parent[0]) < 0) {
			fprintf(stderr, "pingpong: the child went away\n");
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return 1;
		}
		trips++;
		if (trips % CLOCK_CHECK_EVERY != 0)
			continue;
		now = now_s();
		if (g_args.sample_s > 0 && now >= next_sample) {
			/* Buffered: a write(2) every few dozen samples at most. */
			printf("sample t=%.6f trips=%llu\n", clock_s(CLOCK_REALTIME), trips);
			next_sample = now + g_args.sample_s;
		}
		if (now >= deadline)
			break;
	}
	t1 = now_s();
	close(to_child[1]);
	close(to_parent[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "pingpong: the child failed\n");
		return 1;
	}
	printf("pingpong: round_trips=%llu seconds=%.3f rate=%.0f\n", trips, t1 - t0,
	       (double)trips / (t1 - t0));
	return 0;
}
