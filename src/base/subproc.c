// SPDX-License-Identifier: Apache-2.0
/*
 * subproc.c - fork/exec with a readiness pipe and an exec-error pipe. All
 * allocation happens in the parent before fork(); the child runs only
 * async-signal-safe calls, since the parent may have other threads.
 */
#include "base/subproc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "base/file.h"
#include "base/systemd_notify.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Upper bound for closing fds one by one on kernels without close_range(). */
#define SUBPROC_MAX_CLOSE_FD 65536
/* How long an EOF on the notify pipe may precede the child's exit. */
#define SUBPROC_EXIT_GRACE_MS 200

struct subproc {
	pid_t pid;
	int notify_fd; /* read end of the readiness pipe, or -1 */
	bool is_new_pgrp;
	bool is_ready;
	bool is_reaped;
	int status;
};

/* Everything the child needs, prepared before fork(). */
struct child_plan {
	const char *const *argv;
	char **envp;
	int notify_w;
	int err_w;
	int stdout_fd;
	int stderr_fd;
	bool is_new_pgrp;
	int max_fd;
};

void subproc_opts_init(struct subproc_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->stdout_fd = -1;
	o->stderr_fd = -1;
}

/* Whether environment entry @entry ("NAME=value") sets the variable of @var. */
static bool same_name(const char *entry, const char *var)
{
	size_t n = strcspn(var, "=");

	return strncmp(entry, var, n) == 0 && entry[n] == '=';
}

static bool overridden(const char *entry, const char *const *extra, const char *notify_var)
{
	size_t i;

	if (notify_var && same_name(entry, notify_var))
		return true;
	for (i = 0; extra && extra[i]; i++) {
		if (same_name(entry, extra[i]))
			return true;
	}
	return false;
}

/* Builds the child's environment: the array is ours, its strings borrowed. */
static int build_env(const char *const *extra, const char *notify_var, char ***out)
{
	size_t n = 0, i, k = 0;
	char **envp;

	for (i = 0; environ && environ[i]; i++)
		n++;
	for (i = 0; extra && extra[i]; i++)
		n++;
	envp = calloc(n + 2, sizeof(*envp));
	if (!envp)
		return -ENOMEM;
	for (i = 0; environ && environ[i]; i++) {
		if (!overridden(environ[i], extra, notify_var))
			envp[k++] = environ[i];
	}
	for (i = 0; extra && extra[i]; i++)
		envp[k++] = (char *)extra[i];
	if (notify_var)
		envp[k++] = (char *)notify_var;
	envp[k] = NULL;
	*out = envp;
	return 0;
}

static void close_from(int lo, int hi, int max_fd)
{
	int fd;

	if (lo > hi)
		return;
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)lo, (unsigned)hi, 0u) == 0)
		return;
#endif
	for (fd = lo; fd <= hi && fd < max_fd; fd++)
		close(fd);
}

/* Runs in the child after fork(): async-signal-safe calls only. */
static PFC_NORETURN void child_exec(const struct child_plan *c)
{
	int err_fd, first_free, e;
	sigset_t none;

	/* Keep the error pipe clear of the fd numbers set up below. */
	err_fd = fcntl(c->err_w, F_DUPFD_CLOEXEC, SUBPROC_NOTIFY_FD + 1);
	if (err_fd < 0)
		_exit(127);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (c->is_new_pgrp)
		setpgid(0, 0);
	if (c->stdout_fd >= 0 && dup2(c->stdout_fd, STDOUT_FILENO) < 0)
		goto fail;
	if (c->stderr_fd >= 0 && dup2(c->stderr_fd, STDERR_FILENO) < 0)
		goto fail;
	first_free = STDERR_FILENO + 1;
	if (c->notify_w >= 0) {
		/* dup2() clears FD_CLOEXEC on the copy, which is what we want. */
		if (dup2(c->notify_w, SUBPROC_NOTIFY_FD) < 0)
			goto fail;
		first_free = SUBPROC_NOTIFY_FD + 1;
	}
	close_from(first_free, err_fd - 1, c->max_fd);
	close_from(err_fd + 1, INT_MAX, c->max_fd);
	execvpe(c->argv[0], (char *const *)c->argv, c->envp);
fail:
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

static int max_fd_guess(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur > SUBPROC_MAX_CLOSE_FD)
		return SUBPROC_MAX_CLOSE_FD;
	return (int)rl.rlim_cur;
}

/* Returns 0 once exec succeeded, or the child's -errno after reaping it. */
static int read_exec_result(int err_r, pid_t pid)
{
	int child_errno = 0, status;
	ssize_t n;

	n = PFC_EINTR_RETRY(read(err_r, &child_errno, sizeof(child_errno)));
	if (n == 0)
		return 0;
	PFC_EINTR_RETRY(waitpid(pid, &status, 0));
	if (n != (ssize_t)sizeof(child_errno) || child_errno <= 0)
		return -ECHILD;
	return -child_errno;
}

static int make_pipe(int fds[2])
{
	int moved;

	if (pipe2(fds, O_CLOEXEC) != 0)
		return -errno;
	/* The child dup2()s onto 1, 2 and 3; keep our write end above them. */
	if (fds[1] <= SUBPROC_NOTIFY_FD) {
		moved = fcntl(fds[1], F_DUPFD_CLOEXEC, SUBPROC_NOTIFY_FD + 1);
		if (moved < 0)
			return -errno;
		close(fds[1]);
		fds[1] = moved;
	}
	return 0;
}

int subproc_spawn(const struct subproc_opts *opts, struct subproc **out)
{
	int notify[2] = {-1, -1}, errp[2] = {-1, -1}, err;
	struct child_plan plan;
	char notify_var[256];
	struct subproc *p;
	pid_t pid;

	if (!opts->argv || !opts->argv[0])
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	memset(&plan, 0, sizeof(plan));
	if (opts->notify_env) {
		if (snprintf(notify_var, sizeof(notify_var), "%s=%d", opts->notify_env,
			     SUBPROC_NOTIFY_FD) >= (int)sizeof(notify_var)) {
			err = -ENAMETOOLONG;
			goto fail;
		}
		err = make_pipe(notify);
		if (err)
			goto fail;
	}
	err = make_pipe(errp);
	if (err)
		goto fail;
	err = build_env(opts->env, opts->notify_env ? notify_var : NULL, &plan.envp);
	if (err)
		goto fail;
	plan.argv = opts->argv;
	plan.notify_w = notify[1];
	plan.err_w = errp[1];
	plan.stdout_fd = opts->stdout_fd;
	plan.stderr_fd = opts->stderr_fd;
	plan.is_new_pgrp = opts->is_new_pgrp;
	plan.max_fd = max_fd_guess();
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto fail;
	}
	if (pid == 0)
		child_exec(&plan);
	/* Also set here so signalling the group works before the child runs. */
	if (opts->is_new_pgrp)
		setpgid(pid, pid);
	fd_close(errp[1]);
	errp[1] = -1;
	err = read_exec_result(errp[0], pid);
	if (err)
		goto fail;
	fd_close(errp[0]);
	fd_close(notify[1]);
	free(plan.envp);
	p->pid = pid;
	p->notify_fd = notify[0];
	p->is_new_pgrp = opts->is_new_pgrp;
	*out = p;
	return 0;
fail:
	fd_close(notify[0]);
	fd_close(notify[1]);
	fd_close(errp[0]);
	fd_close(errp[1]);
	free(plan.envp);
	free(p);
	return err;
}

pid_t subproc_pid(const struct subproc *p)
{
	return p->pid;
}

/* Return: 1 if the child has been reaped (now or before), 0 if running. */
static int try_reap(struct subproc *p)
{
	int status;
	pid_t r;

	if (p->is_reaped)
		return 1;
	r = PFC_EINTR_RETRY(waitpid(p->pid, &status, WNOHANG));
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	p->is_reaped = true;
	p->status = status;
	return 1;
}

/* Milliseconds left until @deadline_ns, or -1 for no deadline. */
static int remaining_ms(uint64_t deadline_ns)
{
	uint64_t now = clock_monotonic_ns();

	if (deadline_ns == UINT64_MAX)
		return -1;
	if (now >= deadline_ns)
		return 0;
	return (int)PFC_MIN((deadline_ns - now + NS_PER_MS - 1) / NS_PER_MS, (uint64_t)INT_MAX);
}

static uint64_t deadline_after(int timeout_ms)
{
	if (timeout_ms < 0)
		return UINT64_MAX;
	return clock_monotonic_ns() + (uint64_t)timeout_ms * NS_PER_MS;
}

/* Polls for the child's exit until @deadline_ns. Return: 1, 0 or -errno. */
static int reap_until(struct subproc *p, uint64_t deadline_ns)
{
	struct timespec ts;
	int r, left, step_ms = 1;

	for (;;) {
		r = try_reap(p);
		if (r != 0)
			return r;
		left = remaining_ms(deadline_ns);
		if (left == 0)
			return 0;
		if (left > 0)
			step_ms = PFC_MIN(step_ms, left);
		ts.tv_sec = 0;
		ts.tv_nsec = (long)step_ms * 1000000L;
		nanosleep(&ts, NULL);
		step_ms = PFC_MIN(step_ms * 2, 16);
	}
}

int subproc_wait_ready(struct subproc *p, int timeout_ms)
{
	uint64_t deadline = deadline_after(timeout_ms);
	struct pollfd pfd;
	ssize_t n;
	char c;
	int r;

	if (p->notify_fd < 0)
		return p->is_ready ? 0 : -EINVAL;
	for (;;) {
		pfd.fd = p->notify_fd;
		pfd.events = POLLIN;
		r = poll(&pfd, 1, remaining_ms(deadline));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		n = PFC_EINTR_RETRY(read(p->notify_fd, &c, 1));
		if (n < 0)
			return -errno;
		if (n == 1)
			break;
		/* EOF: the fd closes a moment before the child becomes reapable. */
		r = reap_until(p, deadline_after(SUBPROC_EXIT_GRACE_MS));
		return r > 0 ? -ECHILD : -EPIPE;
	}
	if (c != '1')
		return -EBADMSG;
	p->is_ready = true;
	fd_close(p->notify_fd);
	p->notify_fd = -1;
	return 0;
}

int subproc_signal(struct subproc *p, int signo)
{
	if (p->is_reaped)
		return -ESRCH;
	if (kill(p->is_new_pgrp ? -p->pid : p->pid, signo) != 0)
		return -errno;
	return 0;
}

static int kill_and_reap(struct subproc *p)
{
	int status;

	if (p->is_reaped)
		return 0;
	subproc_signal(p, SIGKILL);
	if (PFC_EINTR_RETRY(waitpid(p->pid, &status, 0)) < 0)
		return -errno;
	p->is_reaped = true;
	p->status = status;
	return 0;
}

int subproc_wait(struct subproc *p, int timeout_ms, bool kill_on_timeout, int *out_status)
{
	int r;

	r = reap_until(p, deadline_after(timeout_ms));
	if (r < 0)
		return r;
	if (r == 0) {
		if (kill_on_timeout)
			kill_and_reap(p);
		return -ETIMEDOUT;
	}
	if (out_status)
		*out_status = p->status;
	return 0;
}

void subproc_destroy(struct subproc *p)
{
	if (!p)
		return;
	kill_and_reap(p);
	fd_close(p->notify_fd);
	free(p);
}

int notify_ready_from_env(const char *env_name)
{
	const char *v = getenv(env_name);
	int64_t fd;
	int err;

	/* Under systemd (Type=notify) the same moment is READY=1. */
	systemd_notify_ready();
	if (!v)
		return -ENOENT;
	if (sv_parse_i64(sv_from_cstr(v), 0, INT_MAX, &fd))
		return -EINVAL;
	err = file_write_all((int)fd, "1", 1);
	fd_close((int)fd);
	unsetenv(env_name);
	return err;
}
