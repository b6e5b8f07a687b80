/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon.h - `--background` for the daemons: traced and traced_relay fork
 * and let the parent print the child's PID and exit only once the child
 * says it is serving, so a script that runs `traced --background` can use
 * the socket right away; producers (traced_probes, traced_perf), which may
 * wait for a service that is not there yet, detach at once. daemon.c.
 */
#ifndef PFC_BASE_DAEMON_H
#define PFC_BASE_DAEMON_H

/**
 * daemon_fork() - Fork into the background. In the parent this never
 * returns: it waits for the child's daemon_ready(), prints the child's PID
 * and exits 0, or exits 1 if the child exits first (the child says why on
 * stderr). In the child it returns, in a new session.
 * @out_ready_fd: the child's end of the readiness pipe.
 * Return: 0 in the child, -errno if the fork failed (nothing happened).
 * Context: start-up, before any thread.
 */
int daemon_fork(int *out_ready_fd);

/**
 * daemon_ready() - The child serves: tell the parent (it exits), close
 * @ready_fd and point stdin, stdout and stderr at /dev/null. A negative
 * @ready_fd (not in the background) does nothing.
 */
void daemon_ready(int ready_fd);

/**
 * daemon_detach() - Fork into the background at once: the parent prints
 * the child's PID and exits 0; the child returns in a new session with
 * stdin, stdout and stderr on /dev/null.
 * Return: 0 in the child, -errno if the fork failed (nothing happened).
 * Context: start-up, before any thread.
 */
int daemon_detach(void);
/* Points stdin, stdout and stderr at /dev/null (a daemon's child after its fork). */
void daemon_null_stdio(void);

#endif
