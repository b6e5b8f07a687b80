/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_proc.h - what the end-to-end benchmarks (service_bench,
 * relay_bench) need to run the real daemons: spawn one with a readiness
 * pipe (the daemons' *_NOTIFY_FD), wait for it, reap it with its rusage,
 * and the clocks they report in. Header-only: each bench is one program.
 */
#ifndef PFC_BENCH_BENCH_PROC_H
#define PFC_BENCH_BENCH_PROC_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_READY_TIMEOUT_MS 10000

struct child {
	pid_t pid;
	struct rusage ru;
	int status;
};

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline double cpu_s(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 +
	       (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
}

/* Starts argv with @env (NULL-terminated "K=V" list) and a readiness pipe
 * at fd 3 named by @notify_env (or none). */
static inline int spawn(char *const argv[], char *const env[], const char *notify_env,
		 int *out_ready_fd, struct child *c)
{
	int fds[2] = {-1, -1};
	char notify[64];
	size_t i;

	if (notify_env && pipe(fds) < 0)
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		if (devnull >= 0) {
			dup2(devnull, STDOUT_FILENO);
			dup2(devnull, STDERR_FILENO);
		}
		for (i = 0; env && env[i]; i++)
			putenv(env[i]);
		if (notify_env) {
			close(fds[0]);
			dup2(fds[1], 3);
			snprintf(notify, sizeof(notify), "%s=3", notify_env);
			putenv(notify);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	if (notify_env) {
		close(fds[1]);
		*out_ready_fd = fds[0];
	}
	return 0;
}

static inline int wait_ready(int fd)
{
	struct timespec ts = {0, 1000000};
	char ch;
	int waited = 0;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (waited < BENCH_READY_TIMEOUT_MS) {
		ssize_t n = read(fd, &ch, 1);

		if (n == 1) {
			close(fd);
			return 0;
		}
		if (n == 0)
			break;
		nanosleep(&ts, NULL);
		waited++;
	}
	close(fd);
	return -ETIMEDOUT;
}

static inline void reap(struct child *c, int sig)
{
	if (c->pid <= 0)
		return;
	if (sig)
		kill(c->pid, sig);
	wait4(c->pid, &c->status, 0, &c->ru);
	c->pid = 0;
}

#endif
