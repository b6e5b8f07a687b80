// SPDX-License-Identifier: Apache-2.0
/*
 * stdiod.c - the trace processor served over a pipe, as Perfetto's
 * `--stdiod` / `server stdio`: the bytes read from one fd are the
 * TraceProcessorRpcStream a WebSocket would carry (each request a
 * length-delimited `msg` field, so the stream frames itself), and each
 * reply stream is written to another fd. Used by tools that run the
 * trace processor as a child process. One thread, blocking reads.
 */
#include <errno.h>
#include <unistd.h>

#include "base/file.h"
#include "protozero/protozero.h"
#include "trace_processor/rpc/rpc.h"
#include "trace_processor/rpc/rpc_int.h"

#define STDIOD_READ_BYTES 65536

int rpc_send_fd(void *ctx, const struct pz_chunks *ch)
{
	const struct pz_chunk *k;
	int fd = *(const int *)ctx;

	for (k = ch->head; k; k = k->next)
		if (k->used && file_write_all(fd, k->data, k->used) < 0)
			return -1;
	return 0;
}

int tp_stdio_run(struct tp_rpc *r, int in_fd, int out_fd)
{
	static uint8_t buf[STDIOD_READ_BYTES];
	struct rpc_chan chan;
	int rc = 0;

	rpc_chan_init(&chan);
	for (;;) {
		ssize_t n = read(in_fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		if (rpc_chan_feed(r, &chan, buf, (size_t)n, rpc_send_fd, &out_fd) < 0) {
			rc = -EPROTO;
			break;
		}
	}
	rpc_chan_fini(&chan);
	return rc;
}
