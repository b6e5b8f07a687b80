// SPDX-License-Identifier: Apache-2.0
/*
 * buf.c - growable byte buffers, borrowed string views and the one
 * range-checking number parser every module uses for text from outside.
 * Buffers double on growth, so appends are amortized O(1); views never copy.
 */
#include "base/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_MIN_CAP 64

void buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void buf_fini(struct buf *b)
{
	if (!b)
		return;
	free(b->data);
	buf_init(b);
}

int buf_reserve(struct buf *b, size_t extra)
{
	size_t need, cap;
	uint8_t *p;

	if (extra > SIZE_MAX - b->len)
		return -ENOMEM;
	need = b->len + extra;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : BUF_MIN_CAP;
	while (cap < need) {
		if (cap > SIZE_MAX / 2) {
			cap = need;
			break;
		}
		cap *= 2;
	}
	p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int buf_append(struct buf *b, const void *data, size_t len)
{
	int err;

	if (len == 0)
		return 0;
	err = buf_reserve(b, len);
	if (err)
		return err;
	memcpy(b->data + b->len, data, len);
	b->len += len;
	return 0;
}

int buf_append_byte(struct buf *b, uint8_t c)
{
	return buf_append(b, &c, 1);
}

int buf_append_str(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_appendf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	size_t avail;
	int n, err;

	/* Room for the terminating NUL, so data[len] is valid even for "". */
	err = buf_reserve(b, 1);
	if (err)
		return err;
	avail = b->cap - b->len;
	va_start(ap, fmt);
	n = vsnprintf((char *)b->data + b->len, avail, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= avail) {
		err = buf_reserve(b, (size_t)n + 1);
		if (err) {
			b->data[b->len] = '\0';
			return err;
		}
		va_start(ap, fmt);
		n = vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
		va_end(ap);
		if (n < 0)
			return -EINVAL;
	}
	b->len += (size_t)n;
	return 0;
}

const char *buf_cstr(struct buf *b)
{
	if (buf_reserve(b, 1))
		return NULL;
	b->data[b->len] = '\0';
	return (const char *)b->data;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
}

void buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}

uint8_t *buf_take(struct buf *b, size_t *out_len)
{
	uint8_t *p = b->data;

	/* Never hand out NULL for an empty buffer: NULL means out of memory. */
	if (!p) {
		p = malloc(1);
		if (!p)
			return NULL;
	}
	if (out_len)
		*out_len = b->len;
	buf_init(b);
	return p;
}

bool sv_eq(struct strview a, struct strview b)
{
	if (a.len != b.len)
		return false;
	return a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0;
}

bool sv_eq_cstr(struct strview a, const char *s)
{
	return sv_eq(a, sv_from_cstr(s));
}

bool sv_starts_with(struct strview a, const char *prefix)
{
	size_t n = prefix ? strlen(prefix) : 0;

	if (n > a.len)
		return false;
	return n == 0 || memcmp(a.ptr, prefix, n) == 0;
}

bool sv_ends_with(struct strview a, const char *suffix)
{
	size_t n = suffix ? strlen(suffix) : 0;

	if (n > a.len)
		return false;
	return n == 0 || memcmp(a.ptr + a.len - n, suffix, n) == 0;
}

bool sv_split(struct strview s, char sep, struct strview *out_head, struct strview *out_rest)
{
	const char *p = s.len ? memchr(s.ptr, sep, s.len) : NULL;
	size_t head_len;

	if (!p) {
		*out_head = s;
		*out_rest = sv_make(s.ptr ? s.ptr + s.len : NULL, 0);
		return false;
	}
	head_len = (size_t)(p - s.ptr);
	*out_head = sv_make(s.ptr, head_len);
	*out_rest = sv_make(p + 1, s.len - head_len - 1);
	return true;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

struct strview sv_trim(struct strview s)
{
	while (s.len && is_space(s.ptr[0])) {
		s.ptr++;
		s.len--;
	}
	while (s.len && is_space(s.ptr[s.len - 1]))
		s.len--;
	return s;
}

int sv_to_cstr(struct strview s, char *dst, size_t dst_size)
{
	if (s.len >= dst_size)
		return -ENAMETOOLONG;
	if (s.len)
		memcpy(dst, s.ptr, s.len);
	dst[s.len] = '\0';
	return 0;
}

static int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return 99;
}

/*
 * Parses an unsigned decimal or 0x-hex magnitude that must fill all of @s.
 * Syntax errors win over overflow, so "99999999999999999999x" is -EINVAL.
 */
static int parse_magnitude(struct strview s, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;
	bool overflow = false;
	size_t i;

	if (s.len > 2 && s.ptr[0] == '0' && (s.ptr[1] == 'x' || s.ptr[1] == 'X')) {
		base = 16;
		s.ptr += 2;
		s.len -= 2;
	}
	if (s.len == 0)
		return -EINVAL;
	for (i = 0; i < s.len; i++) {
		int d = digit_value(s.ptr[i]);

		if (d >= (int)base)
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			overflow = true;
		else
			v = v * base + (uint64_t)d;
	}
	if (overflow)
		return -ERANGE;
	*out = v;
	return 0;
}

int sv_parse_u64(struct strview s, uint64_t max, uint64_t *out)
{
	uint64_t v;
	int err;

	err = parse_magnitude(s, &v);
	if (err)
		return err;
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int sv_parse_i64(struct strview s, int64_t min, int64_t max, int64_t *out)
{
	bool is_neg = false;
	uint64_t mag;
	int64_t v;
	int err;

	if (s.len && (s.ptr[0] == '-' || s.ptr[0] == '+')) {
		is_neg = s.ptr[0] == '-';
		s.ptr++;
		s.len--;
	}
	err = parse_magnitude(s, &mag);
	if (err)
		return err;
	if (is_neg) {
		if (mag > (uint64_t)INT64_MAX + 1)
			return -ERANGE;
		v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	} else {
		if (mag > (uint64_t)INT64_MAX)
			return -ERANGE;
		v = (int64_t)mag;
	}
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}
