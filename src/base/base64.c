// SPDX-License-Identifier: Apache-2.0
/*
 * base64.c - standard base64 encoding and decoding (base64.h).
 */
#include "base/base64.h"

static const char k_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encode(const uint8_t *in, size_t n, char *out)
{
	size_t i, o = 0;

	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		out[o++] = k_alphabet[v >> 18];
		out[o++] = k_alphabet[(v >> 12) & 63];
		out[o++] = k_alphabet[(v >> 6) & 63];
		out[o++] = k_alphabet[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);

		out[o++] = k_alphabet[v >> 18];
		out[o++] = k_alphabet[(v >> 12) & 63];
		out[o++] = i + 1 < n ? k_alphabet[(v >> 6) & 63] : '=';
		out[o++] = '=';
	}
	out[o] = '\0';
	return o;
}

static int digit(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

long base64_decode(const char *in, size_t len, uint8_t *out)
{
	uint32_t acc = 0;
	size_t i, o = 0;
	unsigned bits = 0;

	while (len > 0 && in[len - 1] == '=')
		len--;
	if (len % 4 == 1)
		return -1;
	for (i = 0; i < len; i++) {
		int d = digit(in[i]);

		if (d < 0)
			return -1;
		acc = acc << 6 | (uint32_t)d;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	return (long)o;
}
