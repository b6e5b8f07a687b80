/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sock.h - stream sockets named with Perfetto's address grammar, and the
 * only place in the project that makes socket syscalls. Used by the IPC
 * layer (client and host), the relay and the tools:
 *   "/path" or "name" (no ":<int>" suffix)  AF_UNIX path
 *   "@name"                                  AF_UNIX abstract
 *   "host:port"                              AF_INET (numeric or resolved)
 *   "[v6addr]:port"                          AF_INET6
 *   "vsock://cid:port"                       AF_VSOCK (cid -1 = any)
 * Only AF_UNIX carries file descriptors (and thus shared memory).
 */
#ifndef PFC_BASE_SOCK_H
#define PFC_BASE_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Most fds one message may carry; more is a protocol error. */
#define SOCK_MAX_FDS 16
/* Enough for "[v6addr%scope]:port", "vsock://cid:port" and "@" + sun_path. */
#define SOCK_NAME_MAX 128

struct sock_addr {
	int family; /* AF_UNIX, AF_INET, AF_INET6 or AF_VSOCK */
	socklen_t len;
	struct sockaddr_storage ss;
};

/**
 * sock_addr_parse() - Turn a socket name into an address.
 * @name: the name (borrowed).  @out: the address, written only on success.
 *
 * Host names are resolved with getaddrinfo(), so this may block.
 * Return: 0; -EINVAL for a malformed name (empty, bad port, bad IPv6
 * literal, bad vsock cid/port), -ENAMETOOLONG if a UNIX path does not fit
 * in sun_path, -EADDRNOTAVAIL if a host name does not resolve, -ENOMEM.
 * Context: any thread; may block (DNS).
 */
int sock_addr_parse(const char *name, struct sock_addr *out);

/**
 * sock_addr_parse_explain() - sock_addr_parse() that also says why it failed.
 * @name, @out: as sock_addr_parse().
 * @why: on failure, receives a one-line reason naming @name; may be NULL.
 * @why_size: size of @why.
 *
 * Return: as sock_addr_parse().
 */
int sock_addr_parse_explain(const char *name, struct sock_addr *out, char *why, size_t why_size);

/**
 * sock_addr_format() - Write an address back in the name grammar.
 * @a: the address.  @buf: destination.  @size: its size (SOCK_NAME_MAX fits).
 *
 * Return: 0, -ENAMETOOLONG if @buf is too small, -EAFNOSUPPORT.
 */
int sock_addr_format(const struct sock_addr *a, char *buf, size_t size);

/** sock_family_supports_fds() - Whether @family can pass fds (AF_UNIX only). */
bool sock_family_supports_fds(int family);

/** sock_family_of_fd() - The address family of socket @fd, or -errno. */
int sock_family_of_fd(int fd);

/**
 * sock_listen() - Create a listening socket.
 * @name: where to listen.  @backlog: listen() backlog.
 * @out_fd: the listening fd (non-blocking, close-on-exec); caller closes it.
 *
 * An existing socket file at a UNIX path is unlinked first (other files are
 * left alone and make bind fail with -EADDRINUSE). TCP sockets get
 * SO_REUSEADDR; port 0 picks a free port (see sock_local_name()).
 * Return: 0, a sock_addr_parse() error, or -errno from socket/bind/listen.
 * Context: any thread.
 */
int sock_listen(const char *name, int backlog, int *out_fd);

/**
 * sock_connect() - Connect, blocking until done.
 * @name: the peer.  @out_fd: a blocking, close-on-exec fd; caller closes it.
 *
 * Return: 0, a sock_addr_parse() error, or -errno (-ECONNREFUSED, -ENOENT...).
 * Context: blocks.
 */
int sock_connect(const char *name, int *out_fd);

/**
 * sock_connect_nonblock() - Start a connection without blocking.
 * @name: the peer.  @out_fd: a non-blocking, close-on-exec fd; written when
 *        the return is 0 or -EINPROGRESS; caller closes it.
 *
 * Return: 0 if already connected; -EINPROGRESS if pending: wait for
 * writability, then call sock_connect_finish(); other -errno on failure.
 * Context: may block in name resolution only.
 */
int sock_connect_nonblock(const char *name, int *out_fd);

/** sock_connect_finish() - Result of a pending connect: 0 or -errno (SO_ERROR). */
int sock_connect_finish(int fd);

/**
 * sock_accept() - Accept one connection.
 * @listen_fd: from sock_listen().
 * @out_fd: the new non-blocking, close-on-exec fd; caller closes it.
 *
 * Return: 0, -EAGAIN if none is pending, or another -errno.
 */
int sock_accept(int listen_fd, int *out_fd);

/**
 * sock_send_with_fds() - Send bytes, optionally with fds (SCM_RIGHTS).
 * @fd: a connected socket.  @data, @len: the bytes (@len > 0 if fds are sent).
 * @fds: fds to pass (borrowed; the caller still closes its copies).
 * @n_fds: at most SOCK_MAX_FDS; 0 for none.
 *
 * Never raises SIGPIPE. A partial send is possible on a non-blocking socket;
 * the fds travel with the first byte, so the caller resends only the rest.
 * Return: bytes sent; -EINVAL (bad n_fds / empty data with fds), -EPIPE,
 * -EAGAIN, other -errno.
 */
ssize_t sock_send_with_fds(int fd, const void *data, size_t len, const int *fds, size_t n_fds);

/**
 * sock_recv_with_fds() - Receive bytes and any fds that came with them.
 * @fd: a connected socket.  @buf, @cap: destination.
 * @fds: receives up to @max_fds fds (close-on-exec; caller owns them); fds
 *       beyond @max_fds are closed. May be NULL if @max_fds is 0.
 * @out_n_fds: number stored in @fds; may be NULL only if @max_fds is 0.
 *
 * Return: bytes received (0 = peer closed), -EAGAIN, or another -errno.
 */
ssize_t sock_recv_with_fds(int fd, void *buf, size_t cap, int *fds, size_t max_fds,
			   size_t *out_n_fds);

/** sock_send() - sock_send_with_fds() without fds. */
ssize_t sock_send(int fd, const void *data, size_t len);
/** sock_recv() - recv() that closes and drops any fds that arrive. */
ssize_t sock_recv(int fd, void *buf, size_t cap);

/**
 * sock_peer_cred() - Credentials of the process at the other end.
 * @fd: a connected AF_UNIX socket.  @out_pid, @out_uid: the peer's ids.
 *
 * Return: 0, -ENOTSUP for non-UNIX sockets (TCP/vsock peers are
 * unauthenticated), or -errno.
 */
int sock_peer_cred(int fd, pid_t *out_pid, uid_t *out_uid);

/**
 * sock_local_name() - The name @fd is bound to, in the name grammar (e.g.
 * "127.0.0.1:40123" after listening on port 0).
 * @fd: a bound socket.  @buf, @size: destination (SOCK_NAME_MAX fits).
 *
 * Return: 0, -ENAMETOOLONG, or -errno.
 */
int sock_local_name(int fd, char *buf, size_t size);

/** sock_shutdown_write() - Half-close: the peer reads EOF. Return: 0 or -errno. */
int sock_shutdown_write(int fd);

#endif
