// SPDX-License-Identifier: Apache-2.0
/*
 * sha1.c - SHA-1 (FIPS 180-4) and base64 (RFC 4648), which the WebSocket
 * handshake needs for Sec-WebSocket-Accept (RFC 6455 section 4.2.2) and
 * for nothing else: no security rests on this SHA-1. Small and written
 * here so the server needs no crypto library.
 */
#include <stdint.h>
#include <string.h>

#include "trace_processor/rpc/rpc_int.h"

static uint32_t rol(uint32_t v, unsigned n)
{
	return (v << n) | (v >> (32 - n));
}

/* One 64-byte block into the state @h. */
static void sha1_block(uint32_t h[5], const uint8_t *p)
{
	uint32_t w[80], a, b, c, d, e, f, k, t;
	unsigned i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 80; i++)
		w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
	for (i = 0; i < 80; i++) {
		if (i < 20)
			f = (b & c) | (~b & d), k = 0x5a827999;
		else if (i < 40)
			f = b ^ c ^ d, k = 0x6ed9eba1;
		else if (i < 60)
			f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
		else
			f = b ^ c ^ d, k = 0xca62c1d6;
		t = rol(a, 5) + f + e + k + w[i];
		e = d, d = c, c = rol(b, 30), b = a, a = t;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

void rpc_sha1(const void *data, size_t len, uint8_t out[20])
{
	uint32_t h[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
	const uint8_t *p = data;
	uint8_t tail[128];
	uint64_t bits = (uint64_t)len * 8;
	size_t n_tail, i;

	for (; len >= 64; p += 64, len -= 64)
		sha1_block(h, p);
	/* The rest, 0x80, zeros, then the length in bits (big-endian). */
	memset(tail, 0, sizeof(tail));
	if (len)
		memcpy(tail, p, len);
	tail[len] = 0x80;
	n_tail = len + 1 + 8 <= 64 ? 64 : 128;
	for (i = 0; i < 8; i++)
		tail[n_tail - 1 - i] = (uint8_t)(bits >> (8 * i));
	for (i = 0; i < n_tail; i += 64)
		sha1_block(h, tail + i);
	for (i = 0; i < 5; i++) {
		out[4 * i] = (uint8_t)(h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(h[i] >> 8);
		out[4 * i + 3] = (uint8_t)h[i];
	}
}

size_t rpc_base64(const uint8_t *in, size_t len, char *out)
{
	static const char k_alpha[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i, o = 0;
	uint32_t v;

	for (i = 0; i + 3 <= len; i += 3) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		out[o++] = k_alpha[v >> 18];
		out[o++] = k_alpha[(v >> 12) & 63];
		out[o++] = k_alpha[(v >> 6) & 63];
		out[o++] = k_alpha[v & 63];
	}
	if (len - i == 1) {
		v = (uint32_t)in[i] << 16;
		out[o++] = k_alpha[v >> 18];
		out[o++] = k_alpha[(v >> 12) & 63];
		out[o++] = '=';
		out[o++] = '=';
	} else if (len - i == 2) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
		out[o++] = k_alpha[v >> 18];
		out[o++] = k_alpha[(v >> 12) & 63];
		out[o++] = k_alpha[(v >> 6) & 63];
		out[o++] = '=';
	}
	out[o] = '\0';
	return o;
}
