// SPDX-License-Identifier: Apache-2.0
/*
 * daemon.c - the fork of `--background`, with a readiness pipe between the
 * child and the parent that prints its PID, or detached at once (daemon.h).
 */
#include "base/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int daemon_fork(int *out_ready_fd)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (pid > 0) {
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			exit(1);
		printf("%d\n", (int)pid);
		exit(0);
	}
	close(fds[0]);
	setsid();
	*out_ready_fd = fds[1];
	return 0;
}

void daemon_null_stdio(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return;
	dup2(fd, STDIN_FILENO);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	if (fd > STDERR_FILENO)
		close(fd);
}

void daemon_ready(int ready_fd)
{
	if (ready_fd < 0)
		return;
	if (write(ready_fd, "1", 1) != 1) {
		/* The parent is gone: nobody waits for the PID. */
	}
	close(ready_fd);
	daemon_null_stdio();
}

int daemon_detach(void)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		printf("%d\n", (int)pid);
		exit(0);
	}
	setsid();
	daemon_null_stdio();
	return 0;
}
