/* SPDX-License-Identifier: Apache-2.0 */
/*
 * buf.h - growable byte buffers and borrowed string views. A buf owns its
 * memory (init/fini); a strview is a (ptr, len) pair borrowed from
 * something else and is never NUL-terminated by contract.
 */
#ifndef PFC_BASE_BUF_H
#define PFC_BASE_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/compiler.h"

struct buf {
	uint8_t *data;
	size_t len;
	size_t cap;
};

struct strview {
	const char *ptr;
	size_t len;
};

#define BUF_INIT {NULL, 0, 0}

void buf_init(struct buf *b);
void buf_fini(struct buf *b);
/* Makes room for @extra more bytes. Return: 0 or -ENOMEM. */
int buf_reserve(struct buf *b, size_t extra);
int buf_append(struct buf *b, const void *data, size_t len);
int buf_append_byte(struct buf *b, uint8_t c);
int buf_append_str(struct buf *b, const char *s);
/* printf into the buffer; keeps a NUL after the data (not counted in len). */
int buf_appendf(struct buf *b, const char *fmt, ...) PFC_PRINTF(2, 3);
/* Ensures data[len] == '\0' (not counted) and returns data as a C string. */
const char *buf_cstr(struct buf *b);
void buf_reset(struct buf *b);
/* Removes the first @n bytes, moving the rest to the front. */
void buf_consume(struct buf *b, size_t n);
/* Hands the memory to the caller (free() it); @b becomes empty. */
uint8_t *buf_take(struct buf *b, size_t *out_len);

static inline struct strview sv_from_cstr(const char *s)
{
	struct strview v = {s, 0};

	while (s && s[v.len])
		v.len++;
	return v;
}

static inline struct strview sv_make(const char *p, size_t len)
{
	struct strview v = {p, len};

	return v;
}

bool sv_eq(struct strview a, struct strview b);
bool sv_eq_cstr(struct strview a, const char *s);
bool sv_starts_with(struct strview a, const char *prefix);
bool sv_ends_with(struct strview a, const char *suffix);
/* Splits at the first @sep: *out_head gets what precedes it, *rest what follows.
 * Return: true if @sep was found (else head = all, rest = empty). */
bool sv_split(struct strview s, char sep, struct strview *out_head, struct strview *out_rest);
struct strview sv_trim(struct strview s);
/* Copies into dst as a C string. Return: 0, or -ENAMETOOLONG if it did not fit. */
int sv_to_cstr(struct strview s, char *dst, size_t dst_size);

/* Range-checked number parsing: the whole view must be the number.
 * Accepts an optional sign (signed only), decimal or 0x hex.
 * Return: 0, -EINVAL (not a number) or -ERANGE (outside the range). */
int sv_parse_i64(struct strview s, int64_t min, int64_t max, int64_t *out);
int sv_parse_u64(struct strview s, uint64_t max, uint64_t *out);

#endif
