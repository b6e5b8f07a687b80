// SPDX-License-Identifier: Apache-2.0
/*
 * sleeper.c - test helper for the live-kernel tests: renames itself
 * (default "pfc_sleeper"), prints its pid, then sleeps and wakes N times
 * and writes one line "pfc-marker-<pid>" to trace_marker, so a trace must
 * show its context switches, wakeups, its name and the print event.
 *   sleeper [N [NAME [SLEEP_US]]]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100;
	const char *name = argc > 2 ? argv[2] : "pfc_sleeper";
	long us = argc > 3 ? strtol(argv[3], NULL, 10) : 2000;
	struct timespec ts = {0, us * 1000};
	char line[64];
	int fd, len;
	long i;

	prctl(PR_SET_NAME, name, 0, 0, 0);
	printf("%d\n", (int)getpid());
	fflush(stdout);
	for (i = 0; i < n; i++)
		nanosleep(&ts, NULL);
	len = snprintf(line, sizeof(line), "pfc-marker-%d\n", (int)getpid());
	fd = open("/sys/kernel/tracing/trace_marker", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open("/sys/kernel/debug/tracing/trace_marker", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, line, (size_t)len) != len) {
		perror("sleeper: trace_marker");
		return 1;
	}
	close(fd);
	/* Stay a moment so process_stats can still read /proc/<pid>. */
	for (i = 0; i < 50; i++)
		nanosleep(&ts, NULL);
	return 0;
}
