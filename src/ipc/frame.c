// SPDX-License-Identifier: Apache-2.0
/*
 * frame.c - the IPC frame codec: [u32 little-endian length][IPCFrame], at
 * most IPC_MAX_FRAME_BYTES per frame with the header. Used by the host and
 * the client for every connection; bytes arrive split or coalesced in any
 * way, so the reader keeps a partial frame until the rest comes.
 */
#include "ipc/ipc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A reader that went idle with a buffer larger than this gives it back. */
#define IPC_READER_IDLE_BYTES (16u * 1024u)
/* First allocation, and the smallest growth step. */
#define IPC_READER_MIN_BYTES 4096u

static uint32_t load_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void store_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

int ipc_frame_next(const uint8_t *buf, size_t len, const uint8_t **out_payload,
		   size_t *out_payload_len)
{
	uint32_t size;

	if (len < IPC_FRAME_HEADER_BYTES)
		return 0;
	size = load_le32(buf);
	/* Checked before waiting for the payload, so a huge declared length is
	 * refused at once instead of after the buffer fills. */
	if (size > IPC_MAX_FRAME_BYTES - IPC_FRAME_HEADER_BYTES)
		return -EMSGSIZE;
	if (len - IPC_FRAME_HEADER_BYTES < size)
		return 0;
	*out_payload = buf + IPC_FRAME_HEADER_BYTES;
	*out_payload_len = size;
	return (int)(IPC_FRAME_HEADER_BYTES + size);
}

int ipc_frame_encode(const Perfetto__Protos__IPCFrame *frame, struct buf *out)
{
	size_t size = perfetto__protos__ipcframe__get_packed_size(frame);
	uint8_t *p;
	int err;

	if (size > IPC_MAX_FRAME_BYTES - IPC_FRAME_HEADER_BYTES)
		return -EMSGSIZE;
	err = buf_reserve(out, IPC_FRAME_HEADER_BYTES + size);
	if (err < 0)
		return err;
	p = out->data + out->len;
	store_le32(p, (uint32_t)size);
	perfetto__protos__ipcframe__pack(frame, p + IPC_FRAME_HEADER_BYTES);
	out->len += IPC_FRAME_HEADER_BYTES + size;
	return (int)(IPC_FRAME_HEADER_BYTES + size);
}

void ipc_frame_free(Perfetto__Protos__IPCFrame *frame)
{
	if (frame)
		perfetto__protos__ipcframe__free_unpacked(frame, NULL);
}

void ipc_frame_reader_init(struct ipc_frame_reader *r)
{
	memset(r, 0, sizeof(*r));
}

void ipc_frame_reader_fini(struct ipc_frame_reader *r)
{
	if (!r)
		return;
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

/* Moves the unconsumed bytes to the front. */
static void reader_compact(struct ipc_frame_reader *r)
{
	if (r->off == 0)
		return;
	if (r->len > r->off)
		memmove(r->buf, r->buf + r->off, r->len - r->off);
	r->len -= r->off;
	r->off = 0;
}

static int reader_grow(struct ipc_frame_reader *r, size_t want)
{
	uint8_t *p;

	if (want > IPC_MAX_FRAME_BYTES)
		want = IPC_MAX_FRAME_BYTES;
	if (want <= r->cap)
		return 0;
	p = realloc(r->buf, want);
	if (!p)
		return -ENOMEM;
	r->buf = p;
	r->cap = want;
	return 0;
}

int ipc_frame_reader_space(struct ipc_frame_reader *r, uint8_t **out_ptr, size_t *out_size)
{
	size_t want;
	int err;

	reader_compact(r);
	if (r->len == r->cap) {
		want = r->cap ? r->cap * 2 : IPC_READER_MIN_BYTES;
		/* Jump straight to the size of the frame being received. */
		if (r->len >= IPC_FRAME_HEADER_BYTES) {
			size_t need = IPC_FRAME_HEADER_BYTES + (size_t)load_le32(r->buf);

			if (need > want)
				want = need;
		}
		if (r->cap >= IPC_MAX_FRAME_BYTES)
			return -ENOBUFS;
		err = reader_grow(r, want);
		if (err < 0)
			return err;
	}
	*out_ptr = r->buf + r->len;
	*out_size = r->cap - r->len;
	return 0;
}

void ipc_frame_reader_commit(struct ipc_frame_reader *r, size_t n)
{
	r->len += n;
}

int ipc_frame_reader_feed(struct ipc_frame_reader *r, const void *data, size_t len)
{
	const uint8_t *src = data;
	size_t done = 0;

	while (done < len) {
		uint8_t *dst;
		size_t room, n;
		int err = ipc_frame_reader_space(r, &dst, &room);

		if (err == -ENOBUFS)
			break;
		if (err < 0)
			return err;
		n = PFC_MIN(room, len - done);
		memcpy(dst, src + done, n);
		ipc_frame_reader_commit(r, n);
		done += n;
	}
	return (int)PFC_MIN(done, (size_t)INT32_MAX);
}

int ipc_frame_reader_pop_raw(struct ipc_frame_reader *r, const uint8_t **out_payload,
			     size_t *out_len)
{
	for (;;) {
		const uint8_t *payload = NULL;
		size_t payload_len = 0;
		int n;

		if (r->off == r->len) {
			if (r->cap > IPC_READER_IDLE_BYTES) {
				free(r->buf);
				r->buf = NULL;
				r->cap = 0;
			}
			r->off = 0;
			r->len = 0;
			return 0;
		}
		n = ipc_frame_next(r->buf + r->off, r->len - r->off, &payload, &payload_len);
		if (n <= 0)
			return n;
		r->off += (size_t)n;
		if (r->off == r->len) {
			r->off = 0;
			r->len = 0;
		}
		if (payload_len == 0)
			continue;
		*out_payload = payload;
		*out_len = payload_len;
		return 1;
	}
}

int ipc_frame_reader_pop(struct ipc_frame_reader *r, Perfetto__Protos__IPCFrame **out_frame)
{
	for (;;) {
		const uint8_t *payload = NULL;
		size_t payload_len = 0;
		Perfetto__Protos__IPCFrame *f;
		int n;

		if (r->off == r->len) {
			if (r->cap > IPC_READER_IDLE_BYTES) {
				/* A big frame went through; do not keep its memory. */
				free(r->buf);
				r->buf = NULL;
				r->cap = 0;
			}
			r->off = 0;
			r->len = 0;
			return 0;
		}
		n = ipc_frame_next(r->buf + r->off, r->len - r->off, &payload, &payload_len);
		if (n < 0)
			return n;
		if (n == 0)
			return 0;
		r->off += (size_t)n;
		if (r->off == r->len) {
			r->off = 0;
			r->len = 0;
		}
		if (payload_len == 0)
			continue;
		/* The payload stays valid: consuming only moves offsets. */
		f = perfetto__protos__ipcframe__unpack(NULL, payload_len, payload);
		if (!f)
			return -EBADMSG;
		*out_frame = f;
		return 1;
	}
}
