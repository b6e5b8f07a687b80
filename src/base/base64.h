/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base64.h - standard base64 (RFC 4648, '+' '/', '=' padding): encoding
 * bytes into text and decoding it back, bounds-checked.
 */
#ifndef PFC_BASE_BASE64_H
#define PFC_BASE_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* The text length of @n bytes encoded (without a NUL). */
static inline size_t base64_encoded_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

/*
 * base64_encode() - @n bytes at @in as text at @out, NUL-terminated;
 * @out holds base64_encoded_len(@n) + 1 bytes.
 * Return: the text length.
 */
size_t base64_encode(const uint8_t *in, size_t n, char *out);

/*
 * base64_decode() - The @len characters at @in (padding optional) as
 * bytes at @out, which holds @len / 4 * 3 + 3 bytes.
 * Return: the byte count, or -1 if @in is not base64.
 */
long base64_decode(const char *in, size_t len, uint8_t *out);

#endif
