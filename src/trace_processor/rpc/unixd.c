// SPDX-License-Identifier: Apache-2.0
/*
 * unixd.c - the trace processor kept warm on an AF_UNIX socket, as
 * Perfetto's `server unix`: each connection carries the same
 * TraceProcessorRpcStream as stdiod.c's pipe (requests are length-
 * delimited `msg` fields, replies written back whole), every connection
 * shares the one engine, requests run one at a time. Writes the socket's
 * pid file (PATH.pid) for `server kill`, prints Perfetto's one-line
 * startup record, removes both on SIGTERM/SIGINT and when the idle
 * timeout reaps it. One thread, poll().
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/daemon.h"
#include "base/file.h"
#include "protozero/protozero.h"
#include "trace_processor/rpc/rpc.h"
#include "trace_processor/rpc/rpc_int.h"

#define UNIXD_MAX_CLIENTS 64
#define UNIXD_READ_BYTES 65536

/* For the signal handler: what to unlink before exiting. */
static char g_sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static char g_pid_path[sizeof(g_sock_path) + 8];

static void on_term(int sig)
{
	(void)sig;
	if (g_sock_path[0])
		unlink(g_sock_path);
	if (g_pid_path[0])
		unlink(g_pid_path);
	_exit(0);
}

/* A word a shell reads back as is, else in single quotes (Perfetto's record). */
static void print_word(FILE *f, const char *s)
{
	const char *p;
	bool safe = *s != '\0';

	for (p = s; *p && safe; p++)
		safe = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		       (*p >= '0' && *p <= '9') || strchr("/._-\\:", *p);
	if (safe) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (p = s; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", f);
		else
			fputc(*p, f);
	}
	fputc('\'', f);
}

static void print_record(FILE *f, int pid, const struct tp_unixd_options *o)
{
	fprintf(f, "perfetto-session pid=%d session=", pid);
	print_word(f, o->name);
	fputs(" socket-path=", f);
	print_word(f, o->path);
	if (o->idle_ms)
		fprintf(f, " idle-timeout=%ums\n", o->idle_ms);
	else
		fputs(" idle-timeout=never\n", f);
	fflush(f);
}

static int write_pid_file(const char *path, int pid)
{
	char text[32];
	int fd, n = snprintf(text, sizeof(text), "%d", pid);

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (file_write_all(fd, text, (size_t)n) < 0) {
		close(fd);
		return -EIO;
	}
	return close(fd) < 0 ? -errno : 0;
}

/* Binds @path (after removing a dead server's socket). Return: fd or -errno. */
static int bind_socket(const char *path)
{
	struct sockaddr_un a;
	struct stat st;
	int fd;

	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (lstat(path, &st) == 0) {
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
			close(fd);
			return -EADDRINUSE;
		}
		if (!S_ISSOCK(st.st_mode)) {
			close(fd);
			return -EEXIST;
		}
		unlink(path);
		close(fd);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
	}
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 16) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

struct client {
	int fd;
	struct rpc_chan chan;
};

static void drop(struct client *cl, size_t *n, size_t i)
{
	close(cl[i].fd);
	rpc_chan_fini(&cl[i].chan);
	cl[i] = cl[--*n];
}

int tp_unixd_run(struct tp_rpc *r, const struct tp_unixd_options *o)
{
	static uint8_t buf[UNIXD_READ_BYTES];
	struct client cl[UNIXD_MAX_CLIENTS];
	struct pollfd pfd[UNIXD_MAX_CLIENTS + 1];
	struct sigaction sa;
	size_t n_cl = 0, i;
	pid_t owner = getppid(), child;
	bool armed, reaped = false;
	uint64_t last, tick_ms;
	int lfd, fd, rc = 0;

	if (strlen(o->path) >= sizeof(g_sock_path))
		return -ENAMETOOLONG;
	/* The handler first: a signal once the socket exists still removes it. */
	memcpy(g_sock_path, o->path, strlen(o->path) + 1);
	snprintf(g_pid_path, sizeof(g_pid_path), "%s.pid", o->path);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	lfd = bind_socket(o->path);
	if (lfd < 0) {
		g_sock_path[0] = g_pid_path[0] = '\0';
		return lfd;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (o->daemonize) {
		fflush(NULL);
		child = fork();
		if (child < 0) {
			rc = -errno;
			goto out;
		}
		if (child > 0) {
			/* The pid file before the record: `server kill` may follow at once. */
			write_pid_file(g_pid_path, (int)child);
			print_record(stdout, (int)child, o);
			_exit(0);
		}
		setsid();
		daemon_null_stdio();
		if (chdir("/") < 0) {
			/* Paths are absolute: nothing depends on the directory. */
		}
	} else {
		rc = write_pid_file(g_pid_path, (int)getpid());
		if (rc < 0)
			goto out;
		print_record(stdout, (int)getpid(), o);
		fprintf(stderr,
			"[unix] Serving warm session '%s'. Query it with:\n"
			"  trace_processor_shell query --remote %s \"SELECT ...\"\n"
			"Stop it with Ctrl-C, or: trace_processor_shell server kill %s\n",
			o->name, o->name, o->name);
	}
	/*
	 * --idle-start auto: a server with a live parent (in the foreground)
	 * waits for it to exit before its idle clock runs; a detached one
	 * (daemonized, or already a child of init) starts it at once.
	 */
	armed = o->idle_start == TP_IDLE_LAST_QUERY ||
		(o->idle_start == TP_IDLE_AUTO && (o->daemonize || owner <= 1));
	tick_ms = o->idle_ms < 50 ? 50 : o->idle_ms > 5000 ? 5000 : o->idle_ms;
	last = clock_monotonic_ns() / 1000000;
	for (;;) {
		pfd[0].fd = lfd;
		pfd[0].events = POLLIN;
		for (i = 0; i < n_cl; i++) {
			pfd[i + 1].fd = cl[i].fd;
			pfd[i + 1].events = POLLIN;
			pfd[i + 1].revents = 0;
		}
		if (poll(pfd, n_cl + 1, o->idle_ms ? (int)tick_ms : -1) < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (o->idle_ms) {
			uint64_t now = clock_monotonic_ns() / 1000000;

			if (!armed && getppid() != owner)
				armed = true, last = now;
			if (armed && n_cl == 0 && now - last >= o->idle_ms) {
				reaped = true;
				break;
			}
		}
		/* Clients first: their indices are those polled. */
		for (i = n_cl; i-- > 0;) {
			ssize_t n;

			if (!pfd[i + 1].revents)
				continue;
			n = read(cl[i].fd, buf, sizeof(buf));
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0 || rpc_chan_feed(r, &cl[i].chan, buf, (size_t)n, rpc_send_fd,
						    &cl[i].fd) < 0) {
				drop(cl, &n_cl, i);
				last = clock_monotonic_ns() / 1000000;
				continue;
			}
			last = clock_monotonic_ns() / 1000000;
		}
		if (pfd[0].revents & POLLIN) {
			fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0 && n_cl == UNIXD_MAX_CLIENTS) {
				close(fd);
			} else if (fd >= 0) {
				cl[n_cl].fd = fd;
				rpc_chan_init(&cl[n_cl].chan);
				n_cl++;
				last = clock_monotonic_ns() / 1000000;
			}
		}
	}
	while (n_cl)
		drop(cl, &n_cl, n_cl - 1);
	if (reaped && !o->daemonize)
		fprintf(stderr, "[unix] Idle for %u ms: stopping session '%s'\n", o->idle_ms,
			o->name);
out:
	unlink(g_pid_path);
	unlink(g_sock_path);
	close(lfd);
	return rc;
}
