/* SPDX-License-Identifier: Apache-2.0 */
/*
 * subproc.h - spawning helper processes (tracebox starting traced and
 * traced_probes, integration tests starting daemons) with a readiness pipe:
 * the child writes "1" to an inherited fd once it is serving, so the parent
 * never polls for sockets. Parent and child sides both live here.
 */
#ifndef PFC_BASE_SUBPROC_H
#define PFC_BASE_SUBPROC_H

#include <stdbool.h>
#include <sys/types.h>

/* The fd number the readiness pipe has in the child. */
#define SUBPROC_NOTIFY_FD 3

struct subproc;

struct subproc_opts {
	/* Program and arguments, NULL-terminated; argv[0] is looked up in PATH. */
	const char *const *argv;
	/* Extra "NAME=value" entries, NULL-terminated, overriding the parent's
	 * environment; NULL for none. */
	const char *const *env;
	/* If set, the child gets the write end of a readiness pipe at
	 * SUBPROC_NOTIFY_FD and this variable set to its number. */
	const char *notify_env;
	/* Put the child in its own process group (signals then go to it all). */
	bool is_new_pgrp;
	/* Replacements for the child's stdout/stderr; -1 inherits the parent's. */
	int stdout_fd;
	int stderr_fd;
};

/** subproc_opts_init() - Defaults: no env, no notify pipe, inherit stdio. */
void subproc_opts_init(struct subproc_opts *o);

/**
 * subproc_spawn() - Start a child process.
 * @opts: what to run (borrowed; copied as needed).
 * @out: the handle; free it with subproc_destroy().
 *
 * The child gets fds 0, 1, 2 and the notify fd only, an empty signal mask
 * and default SIGPIPE. If exec fails, the child's exit is reaped here.
 * Return: 0, -EINVAL (no argv), -ENOENT / -EACCES (exec failed), -ENOMEM,
 * or -errno from pipe/fork.
 * Context: any thread; blocks until the exec has succeeded or failed.
 */
int subproc_spawn(const struct subproc_opts *opts, struct subproc **out);

/** subproc_pid() - The child's pid. */
pid_t subproc_pid(const struct subproc *p);

/**
 * subproc_wait_ready() - Wait for the child to write "1" to its notify fd.
 * @p: the child (spawned with notify_env).  @timeout_ms: -1 waits forever.
 *
 * Return: 0 when ready; -ETIMEDOUT; -ECHILD if the child exited without
 * notifying; -EPIPE if it closed the fd without notifying; -EBADMSG if it
 * wrote something else; -EINVAL if there is no notify pipe.
 * Context: blocks up to @timeout_ms.
 */
int subproc_wait_ready(struct subproc *p, int timeout_ms);

/**
 * subproc_signal() - Send @signo to the child, or to its process group if it
 * has its own. Return: 0, -ESRCH once it has been reaped, or -errno.
 */
int subproc_signal(struct subproc *p, int signo);

/**
 * subproc_wait() - Wait for the child to exit and reap it.
 * @p: the child.  @timeout_ms: -1 waits forever.
 * @kill_on_timeout: on timeout, SIGKILL the child (group) and reap it.
 * @out_status: the waitpid() status (use WIFEXITED etc.); may be NULL.
 *
 * Calling it again after the child was reaped returns the same status.
 * Return: 0, -ETIMEDOUT (child killed and reaped if @kill_on_timeout), -errno.
 * Context: blocks up to @timeout_ms; polls with a short sleep.
 */
int subproc_wait(struct subproc *p, int timeout_ms, bool kill_on_timeout, int *out_status);

/**
 * subproc_destroy() - Free the handle; a child still running is SIGKILLed
 * and reaped so no zombie is left. NULL is allowed.
 */
void subproc_destroy(struct subproc *p);

/**
 * notify_ready_from_env() - Child side: tell systemd READY=1 when
 * $NOTIFY_SOCKET is set (systemd_notify.h), and write "1" to the fd named by
 * @env_name, close it and unset the variable (so our children do not see it).
 *
 * Return: 0, -ENOENT if the variable is not set, -EINVAL if it is not an fd
 * number, or -errno from write().
 * Context: call early, before starting threads (it calls unsetenv()).
 */
int notify_ready_from_env(const char *env_name);

#endif
