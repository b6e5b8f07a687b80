// SPDX-License-Identifier: Apache-2.0
/*
 * sock.c - every socket syscall in the project: listen, connect, accept,
 * send/recv with SCM_RIGHTS, peer credentials. Per-family differences
 * (UNIX path cleanup, TCP options, fd passing) live in one small transport
 * table, so IPC code only ever sees names and fds.
 */
#include "base/sock.h"
#include "base/compiler.h"
#include "base/file.h"

#include <errno.h>
#include <linux/vm_sockets.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

struct sock_transport {
	int family;
	bool has_fds;
	/* Called on a fresh socket before bind(); may be NULL. */
	int (*before_bind)(int fd, const struct sock_addr *a);
	/* Called on every connected socket (connect and accept); may be NULL. */
	void (*on_connected)(int fd);
};

/* A stale socket file from a previous run would make bind() fail. */
static int unix_before_bind(int fd, const struct sock_addr *a)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)&a->ss;
	struct stat st;

	(void)fd;
	if (un->sun_path[0] == '\0')
		return 0;
	if (lstat(un->sun_path, &st) == 0 && S_ISSOCK(st.st_mode) && unlink(un->sun_path) != 0)
		return -errno;
	return 0;
}

static int inet_before_bind(int fd, const struct sock_addr *a)
{
	int one = 1;

	(void)a;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0)
		return -errno;
	return 0;
}

/* IPC frames are small request/reply messages: do not wait for Nagle. */
static void inet_on_connected(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static const struct sock_transport g_transports[] = {
	{AF_UNIX, true, unix_before_bind, NULL},
	{AF_INET, false, inet_before_bind, inet_on_connected},
	{AF_INET6, false, inet_before_bind, inet_on_connected},
	{AF_VSOCK, false, NULL, NULL},
};

static const struct sock_transport *transport_of(int family)
{
	size_t i;

	for (i = 0; i < PFC_ARRAY_SIZE(g_transports); i++) {
		if (g_transports[i].family == family)
			return &g_transports[i];
	}
	return NULL;
}

bool sock_family_supports_fds(int family)
{
	const struct sock_transport *t = transport_of(family);

	return t && t->has_fds;
}

int sock_family_of_fd(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	memset(&ss, 0, sizeof(ss));
	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return -errno;
	return ss.ss_family;
}

static int open_socket(const struct sock_addr *a, bool is_nonblock, int *out_fd)
{
	int fd, type = SOCK_STREAM | SOCK_CLOEXEC | (is_nonblock ? SOCK_NONBLOCK : 0);

	if (!transport_of(a->family))
		return -EAFNOSUPPORT;
	fd = socket(a->family, type, 0);
	if (fd < 0)
		return -errno;
	*out_fd = fd;
	return 0;
}

int sock_listen(const char *name, int backlog, int *out_fd)
{
	const struct sock_transport *t;
	struct sock_addr a;
	int fd = -1, err;

	err = sock_addr_parse(name, &a);
	if (err)
		return err;
	err = open_socket(&a, true, &fd);
	if (err)
		return err;
	t = transport_of(a.family);
	if (t->before_bind) {
		err = t->before_bind(fd, &a);
		if (err)
			goto fail;
	}
	if (bind(fd, (const struct sockaddr *)&a.ss, a.len) != 0 || listen(fd, backlog) != 0) {
		err = -errno;
		goto fail;
	}
	*out_fd = fd;
	return 0;
fail:
	fd_close(fd);
	return err;
}

int sock_connect_finish(int fd)
{
	int soerr = 0;
	socklen_t len = sizeof(soerr);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0)
		return -errno;
	return -soerr;
}

/* Finishes a blocking connect() that a signal interrupted. */
static int wait_connected(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLOUT};

	if (PFC_EINTR_RETRY(poll(&pfd, 1, -1)) < 0)
		return -errno;
	return sock_connect_finish(fd);
}

static int connect_common(const char *name, bool is_nonblock, int *out_fd)
{
	const struct sock_transport *t;
	struct sock_addr a;
	int fd = -1, err;

	err = sock_addr_parse(name, &a);
	if (err)
		return err;
	err = open_socket(&a, is_nonblock, &fd);
	if (err)
		return err;
	t = transport_of(a.family);
	if (t->on_connected)
		t->on_connected(fd);
	/* A blocking connect interrupted by a signal keeps going in the kernel. */
	if (connect(fd, (const struct sockaddr *)&a.ss, a.len) != 0) {
		err = -errno;
		if (err == -EINPROGRESS || (err == -EINTR && is_nonblock)) {
			*out_fd = fd;
			return -EINPROGRESS;
		}
		if (err == -EINTR)
			err = wait_connected(fd);
		if (err)
			goto fail;
	}
	*out_fd = fd;
	return 0;
fail:
	fd_close(fd);
	return err;
}

int sock_connect(const char *name, int *out_fd)
{
	return connect_common(name, false, out_fd);
}

int sock_connect_nonblock(const char *name, int *out_fd)
{
	return connect_common(name, true, out_fd);
}

int sock_accept(int listen_fd, int *out_fd)
{
	const struct sock_transport *t;
	int fd, family;

	fd = PFC_EINTR_RETRY(accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC));
	if (fd < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	family = sock_family_of_fd(fd);
	t = family >= 0 ? transport_of(family) : NULL;
	if (t && t->on_connected)
		t->on_connected(fd);
	*out_fd = fd;
	return 0;
}

ssize_t sock_send_with_fds(int fd, const void *data, size_t len, const int *fds, size_t n_fds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * SOCK_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = (void *)data, .iov_len = len};
	struct msghdr msg;
	struct cmsghdr *cmsg;
	ssize_t n;

	if (n_fds > SOCK_MAX_FDS || (n_fds && (len == 0 || !fds)))
		return -EINVAL;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (n_fds) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		cmsg = CMSG_FIRSTHDR(&msg);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * n_fds);
	}
	n = PFC_EINTR_RETRY(sendmsg(fd, &msg, MSG_NOSIGNAL));
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return n;
}

ssize_t sock_send(int fd, const void *data, size_t len)
{
	return sock_send_with_fds(fd, data, len, NULL, 0);
}

/* Keeps the first @max_fds received fds in @fds and closes the rest. */
static size_t take_fds(struct msghdr *msg, int *fds, size_t max_fds)
{
	struct cmsghdr *cmsg;
	size_t kept = 0, i, n;
	int rfd;

	for (cmsg = CMSG_FIRSTHDR(msg); cmsg; cmsg = CMSG_NXTHDR(msg, cmsg)) {
		if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			memcpy(&rfd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));
			if (kept < max_fds)
				fds[kept++] = rfd;
			else
				fd_close(rfd);
		}
	}
	return kept;
}

ssize_t sock_recv_with_fds(int fd, void *buf, size_t cap, int *fds, size_t max_fds,
			   size_t *out_n_fds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * SOCK_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = cap};
	struct msghdr msg;
	size_t kept;
	ssize_t n;

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	n = PFC_EINTR_RETRY(recvmsg(fd, &msg, MSG_CMSG_CLOEXEC));
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	/* The kernel already dropped whatever did not fit (MSG_CTRUNC). */
	kept = take_fds(&msg, fds, fds ? max_fds : 0);
	if (out_n_fds)
		*out_n_fds = kept;
	return n;
}

ssize_t sock_recv(int fd, void *buf, size_t cap)
{
	return sock_recv_with_fds(fd, buf, cap, NULL, 0, NULL);
}

int sock_peer_cred(int fd, pid_t *out_pid, uid_t *out_uid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int family = sock_family_of_fd(fd);

	if (family < 0)
		return family;
	if (family != AF_UNIX)
		return -ENOTSUP;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return -errno;
	*out_pid = cred.pid;
	*out_uid = cred.uid;
	return 0;
}

int sock_local_name(int fd, char *buf, size_t size)
{
	struct sock_addr a;

	memset(&a, 0, sizeof(a));
	a.len = sizeof(a.ss);
	if (getsockname(fd, (struct sockaddr *)&a.ss, &a.len) != 0)
		return -errno;
	a.family = a.ss.ss_family;
	return sock_addr_format(&a, buf, size);
}

int sock_shutdown_write(int fd)
{
	if (shutdown(fd, SHUT_WR) != 0)
		return -errno;
	return 0;
}
