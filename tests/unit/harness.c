// SPDX-License-Identifier: Apache-2.0
/*
 * harness.c - runs the tests registered with TEST(), each in a forked child
 * with a timeout (HARNESS_TIMEOUT_S, default 60 s), and prints one line per
 * test and the closing "N passed, N failed, N skipped" line. Arguments are
 * substrings: only tests whose name contains one of them run.
 */
#include "harness.h"

#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HARNESS_MAX_TESTS 1024
#define EXIT_SKIP 77

struct test_entry {
	const char *name;
	harness_test_cb fn;
};

static struct test_entry g_tests[HARNESS_MAX_TESTS];
static int g_n_tests;
static char g_tmpdir[256];

void harness_register(const char *name, harness_test_cb fn)
{
	if (g_n_tests >= HARNESS_MAX_TESTS) {
		fprintf(stderr, "harness: too many tests\n");
		abort();
	}
	g_tests[g_n_tests].name = name;
	g_tests[g_n_tests].fn = fn;
	g_n_tests++;
}

void harness_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "    %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(NULL);
	_exit(1);
}

void harness_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fflush(NULL);
	exit(EXIT_SKIP);
}

void harness_check_int(intmax_t a, intmax_t b, const char *op, const char *ea, const char *eb,
		       const char *file, int line)
{
	harness_fail(file, line, "expected %s %s %s, got %jd vs %jd", ea, op, eb, a, b);
}

void harness_check_str(const char *a, const char *b, const char *ea, const char *eb,
		       const char *file, int line)
{
	if (a && b && strcmp(a, b) == 0)
		return;
	harness_fail(file, line, "expected %s == %s:\n      \"%s\"\n      \"%s\"", ea, eb,
		     a ? a : "(null)", b ? b : "(null)");
}

void harness_check_mem(const void *a, const void *b, size_t n, const char *ea, const char *eb,
		       const char *file, int line)
{
	const unsigned char *pa = a, *pb = b;
	size_t i;

	for (i = 0; i < n; i++) {
		if (pa[i] != pb[i])
			harness_fail(file, line,
				     "%s and %s differ at byte %zu of %zu: 0x%02x vs 0x%02x", ea,
				     eb, i, n, pa[i], pb[i]);
	}
}

const char *test_tmpdir(void)
{
	return g_tmpdir;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

static int matches(const char *name, int argc, char **argv)
{
	int i;

	if (argc <= 1)
		return 1;
	for (i = 1; i < argc; i++) {
		if (strstr(name, argv[i]))
			return 1;
	}
	return 0;
}

/* Returns 0 passed, 1 failed, 2 skipped. */
static int run_one(const struct test_entry *t, long timeout_ms, const char *prog)
{
	struct timespec t0;
	int status = 0, rfd[2];
	char skip_msg[512] = "";
	pid_t pid, r;
	ssize_t n;

	snprintf(g_tmpdir, sizeof(g_tmpdir), "%s/pfc-test-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(g_tmpdir)) {
		printf("FAIL %s/%s: cannot create temp dir\n", prog, t->name);
		return 1;
	}
	if (pipe(rfd) < 0)
		return 1;
	fflush(NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		printf("FAIL %s/%s: fork: %s\n", prog, t->name, strerror(errno));
		return 1;
	}
	if (pid == 0) {
		close(rfd[0]);
		dup2(rfd[1], STDOUT_FILENO);
		close(rfd[1]);
		setpgid(0, 0);
		t->fn();
		fflush(NULL);
		exit(0);
	}
	close(rfd[1]);
	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (elapsed_ms(&t0) > timeout_ms) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			printf("FAIL %s/%s: timed out after %ld ms\n", prog, t->name, timeout_ms);
			close(rfd[0]);
			nftw(g_tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
			return 1;
		}
		usleep(2000);
	}
	/* Tests print diagnostics on stderr; stdout carries only a skip reason. */
	n = read(rfd[0], skip_msg, sizeof(skip_msg) - 1);
	skip_msg[n > 0 ? n : 0] = '\0';
	close(rfd[0]);
	/* Kill anything the test left running in its process group. */
	kill(-pid, SIGKILL);
	nftw(g_tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);

	if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_SKIP) {
		char *nl = strchr(skip_msg, '\n');

		if (nl)
			*nl = '\0';
		printf("skip %s/%s: %s\n", prog, t->name, skip_msg[0] ? skip_msg : "(no reason)");
		return 2;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("ok   %s/%s (%ld ms)\n", prog, t->name, elapsed_ms(&t0));
		return 0;
	}
	if (WIFSIGNALED(status))
		printf("FAIL %s/%s: killed by signal %d\n", prog, t->name, WTERMSIG(status));
	else
		printf("FAIL %s/%s: exit %d\n", prog, t->name, WEXITSTATUS(status));
	return 1;
}

int main(int argc, char **argv)
{
	int i, counts[3] = {0, 0, 0};
	long timeout_ms = 60000;
	const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	const char *env = getenv("HARNESS_TIMEOUT_S");

	if (env && strtol(env, NULL, 10) > 0)
		timeout_ms = strtol(env, NULL, 10) * 1000;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < g_n_tests; i++) {
		if (matches(g_tests[i].name, argc, argv))
			counts[run_one(&g_tests[i], timeout_ms, prog)]++;
	}
	printf("%d passed, %d failed, %d skipped\n", counts[0], counts[1], counts[2]);
	return counts[1] ? 1 : 0;
}
