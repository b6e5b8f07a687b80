/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipc_int.h - private to src/ipc: one connected stream socket with its
 * frame reader, a bounded non-blocking send queue (fds ride with the first
 * byte of their frame) and the last fd received. The host keeps one per
 * client, the client one in total; both drive it from their evloop callbacks.
 */
#ifndef PFC_IPC_IPC_INT_H
#define PFC_IPC_IPC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "ipc/ipc.h"

/* recv() calls per readiness callback, so one busy peer cannot starve others. */
#define IPC_MAX_RECVS_PER_WAKEUP 8

struct ipc_conn_fd {
	uint64_t pos; /* stream offset of the first byte of the frame it rides with */
	int fd;       /* owned: a duplicate made when queued */
};

struct ipc_conn {
	int fd;
	bool supports_fds;
	struct ipc_frame_reader rd;
	struct buf out;     /* queued bytes; out.data[out_off] is next to send */
	size_t out_off;
	uint64_t out_pos;   /* stream offset of out.data[out_off] */
	struct ipc_conn_fd fds[IPC_MAX_QUEUED_FDS];
	size_t n_fds;
	size_t max_queue_bytes;
	int received_fd;    /* owned, or -1 */
};

/* Takes ownership of @fd (closed by ipc_conn_fini()). */
void ipc_conn_init(struct ipc_conn *c, int fd, bool supports_fds, size_t max_queue_bytes);
/* Closes the socket, the queued fds and any received fd; frees buffers. */
void ipc_conn_fini(struct ipc_conn *c);

/*
 * Encodes @frame onto the send queue, with a duplicate of @fd_to_send (-1
 * none; ignored unless supports_fds). Sends nothing: call ipc_conn_flush().
 * Return: 0, -EMSGSIZE (frame too big), -ENOBUFS (queue limit or fd
 * limit), -ENOMEM, or -errno from dup. Nothing is queued on failure.
 */
int ipc_conn_queue(struct ipc_conn *c, const Perfetto__Protos__IPCFrame *frame, int fd_to_send);

/* Sends what the socket takes. Return: 0 all sent, 1 bytes remain, -errno. */
int ipc_conn_flush(struct ipc_conn *c);

/* Bytes waiting in the send queue. */
size_t ipc_conn_pending(const struct ipc_conn *c);

/*
 * One recv() into the frame reader. An fd that came along replaces (and
 * closes) an older one in received_fd.
 * Return: bytes read (> 0), 0 at end of stream, -EAGAIN, -ENOBUFS (frames
 * must be popped first), or another -errno.
 */
int ipc_conn_recv(struct ipc_conn *c);

/* Returns received_fd (ownership moves) or -ENOENT. */
int ipc_conn_take_fd(struct ipc_conn *c);

#endif
