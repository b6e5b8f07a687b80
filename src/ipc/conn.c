// SPDX-License-Identifier: Apache-2.0
/*
 * conn.c - byte transport shared by the IPC host and client: a bounded
 * queue of encoded frames sent without blocking (an fd travels with the
 * first byte of its frame), and receives that feed the frame reader. One
 * thread; the owner decides when to watch for writability.
 */
#include "ipc/ipc_int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/compiler.h"
#include "base/sock.h"

void ipc_conn_init(struct ipc_conn *c, int fd, bool supports_fds, size_t max_queue_bytes)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->supports_fds = supports_fds;
	ipc_frame_reader_init(&c->rd);
	buf_init(&c->out);
	c->max_queue_bytes = max_queue_bytes ? max_queue_bytes : IPC_MAX_SEND_QUEUE_BYTES;
	c->received_fd = -1;
}

void ipc_conn_fini(struct ipc_conn *c)
{
	size_t i;

	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	for (i = 0; i < c->n_fds; i++)
		close(c->fds[i].fd);
	c->n_fds = 0;
	if (c->received_fd >= 0)
		close(c->received_fd);
	c->received_fd = -1;
	ipc_frame_reader_fini(&c->rd);
	buf_fini(&c->out);
	c->out_off = 0;
}

size_t ipc_conn_pending(const struct ipc_conn *c)
{
	return c->out.len - c->out_off;
}

int ipc_conn_queue(struct ipc_conn *c, const Perfetto__Protos__IPCFrame *frame, int fd_to_send)
{
	size_t size = perfetto__protos__ipcframe__get_packed_size(frame) + IPC_FRAME_HEADER_BYTES;
	int dup_fd = -1;
	int n;

	if (size > IPC_MAX_FRAME_BYTES)
		return -EMSGSIZE;
	if (ipc_conn_pending(c) + size > c->max_queue_bytes)
		return -ENOBUFS;
	if (fd_to_send >= 0 && c->supports_fds) {
		if (c->n_fds == IPC_MAX_QUEUED_FDS)
			return -ENOBUFS;
		dup_fd = fcntl(fd_to_send, F_DUPFD_CLOEXEC, 0);
		if (dup_fd < 0)
			return -errno;
	}
	/* Reclaim the sent prefix once it dominates the buffer. */
	if (c->out_off > 0 && c->out_off >= c->out.len / 2) {
		buf_consume(&c->out, c->out_off);
		c->out_off = 0;
	}
	n = ipc_frame_encode(frame, &c->out);
	if (n < 0) {
		if (dup_fd >= 0)
			close(dup_fd);
		return n;
	}
	if (dup_fd >= 0) {
		c->fds[c->n_fds].pos = c->out_pos + (ipc_conn_pending(c) - (size_t)n);
		c->fds[c->n_fds].fd = dup_fd;
		c->n_fds++;
	}
	return 0;
}

int ipc_conn_flush(struct ipc_conn *c)
{
	while (ipc_conn_pending(c) > 0) {
		size_t len = ipc_conn_pending(c);
		const int *fds = NULL;
		size_t n_fds = 0;
		ssize_t n;

		if (c->n_fds > 0) {
			if (c->fds[0].pos == c->out_pos) {
				fds = &c->fds[0].fd;
				n_fds = 1;
			}
			/* Stop before the next fd's frame so that fd rides with
			 * its own first byte. */
			if (c->n_fds > n_fds && c->fds[n_fds].pos - c->out_pos < len)
				len = (size_t)(c->fds[n_fds].pos - c->out_pos);
		}
		n = sock_send_with_fds(c->fd, c->out.data + c->out_off, len, fds, n_fds);
		if (n == -EAGAIN)
			return 1;
		if (n == -EINTR)
			continue;
		if (n < 0)
			return (int)n;
		if (n_fds) {
			close(c->fds[0].fd);
			memmove(&c->fds[0], &c->fds[1], (c->n_fds - 1) * sizeof(c->fds[0]));
			c->n_fds--;
		}
		c->out_off += (size_t)n;
		c->out_pos += (uint64_t)n;
	}
	buf_reset(&c->out);
	c->out_off = 0;
	return 0;
}

int ipc_conn_recv(struct ipc_conn *c)
{
	uint8_t *dst;
	size_t room, n_fds = 0;
	int fd = -1;
	ssize_t n;
	int err;

	err = ipc_frame_reader_space(&c->rd, &dst, &room);
	if (err < 0)
		return err;
	do {
		n = sock_recv_with_fds(c->fd, dst, room, &fd, 1, &n_fds);
	} while (n == -EINTR);
	if (n < 0)
		return (int)n;
	if (n_fds == 1) {
		if (c->received_fd >= 0)
			close(c->received_fd);
		c->received_fd = fd;
	}
	ipc_frame_reader_commit(&c->rd, (size_t)n);
	return (int)n;
}

int ipc_conn_take_fd(struct ipc_conn *c)
{
	int fd = c->received_fd;

	if (fd < 0)
		return -ENOENT;
	c->received_fd = -1;
	return fd;
}
