// SPDX-License-Identifier: Apache-2.0
/*
 * ws_frame.c - WebSocket frames (RFC 6455 section 5): parsing a client's
 * frame header with every length checked before use, unmasking, the
 * header of a server frame, and the handshake's Sec-WebSocket-Accept.
 * Pure: no I/O.
 */
#include <string.h>

#include "trace_processor/rpc/rpc_int.h"

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

long ws_parse(const uint8_t *p, size_t len, struct ws_frame *f, const char **why)
{
	uint64_t n;
	size_t off = 2, ext, i;

	if (len < 2)
		return 0;
	f->fin = (p[0] & 0x80) != 0;
	f->opcode = p[0] & 0x0f;
	if (p[0] & 0x70) {
		*why = "reserved bits set (no extension was negotiated)";
		return -1;
	}
	if (!(p[1] & 0x80)) {
		*why = "client frames must be masked";
		return -1;
	}
	n = p[1] & 0x7f;
	ext = n == 126 ? 2 : n == 127 ? 8 : 0;
	if (len < off + ext)
		return 0;
	if (ext) {
		n = 0;
		for (i = 0; i < ext; i++)
			n = n << 8 | p[off + i];
		off += ext;
	}
	if (n > WS_MAX_PAYLOAD) {
		*why = "payload over 64 MiB";
		return -1;
	}
	if (f->opcode >= 0x8 && (n > 125 || !f->fin)) {
		*why = "control frames must be final and at most 125 bytes";
		return -1;
	}
	if ((f->opcode > WS_BINARY && f->opcode < WS_CLOSE) || f->opcode > WS_PONG) {
		*why = "unknown opcode";
		return -1;
	}
	if (len < off + 4)
		return 0;
	memcpy(f->mask, p + off, 4);
	off += 4;
	f->head_len = off;
	f->payload_len = (size_t)n;
	if (len - off < n)
		return 0;
	return (long)(off + n);
}

void ws_unmask(uint8_t *payload, size_t len, const uint8_t mask[4])
{
	size_t i;

	for (i = 0; i < len; i++)
		payload[i] ^= mask[i & 3];
}

size_t ws_frame_header(uint8_t opcode, uint64_t len, uint8_t out[10])
{
	size_t i;

	out[0] = (uint8_t)(0x80 | opcode);
	if (len < 126) {
		out[1] = (uint8_t)len;
		return 2;
	}
	if (len <= 0xffff) {
		out[1] = 126;
		out[2] = (uint8_t)(len >> 8);
		out[3] = (uint8_t)len;
		return 4;
	}
	out[1] = 127;
	for (i = 0; i < 8; i++)
		out[2 + i] = (uint8_t)(len >> (56 - 8 * i));
	return 10;
}

void ws_accept(struct strview key, char out[29])
{
	uint8_t digest[20];
	char tmp[128];
	size_t n = key.len < 64 ? key.len : 64;

	memcpy(tmp, key.ptr, n);
	memcpy(tmp + n, WS_GUID, sizeof(WS_GUID) - 1);
	rpc_sha1(tmp, n + sizeof(WS_GUID) - 1, digest);
	rpc_base64(digest, sizeof(digest), out);
}
