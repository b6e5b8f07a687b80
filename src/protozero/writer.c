// SPDX-License-Identifier: Apache-2.0
/*
 * writer.c - the out-of-line half of the protobuf writer: range switches,
 * nested message bookkeeping and the less common field types. The inline
 * fast paths are in protozero.h. One thread per stream; no allocation.
 */
#include "protozero/protozero.h"

#include <errno.h>

static int flat_grow(struct pz_stream *s, void *user)
{
	(void)s;
	(void)user;
	return -ENOSPC;
}

void pz_stream_init_flat(struct pz_stream *s, uint8_t *buf, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->cur = buf;
	s->end = buf + len;
	s->grow = flat_grow;
}

/* Sends all further output to the scratch area; the stream stays failed. */
static void stream_fail(struct pz_stream *s, int err)
{
	if (!s->err)
		s->err = err;
	s->cur = s->scratch;
	s->end = s->scratch + sizeof(s->scratch);
}

static void stream_next_range(struct pz_stream *s)
{
	int err;

	if (s->err) {
		stream_fail(s, s->err);
		return;
	}
	err = s->grow(s, s->user);
	if (err < 0 || s->end - s->cur < PZ_SIZE_FIELD_BYTES)
		stream_fail(s, err < 0 ? err : -ENOSPC);
}

int pz_stream_init(struct pz_stream *s, pz_grow_cb grow, void *user)
{
	memset(s, 0, sizeof(*s));
	s->grow = grow;
	s->user = user;
	stream_next_range(s);
	return s->err;
}

void pz_stream_write_slow(struct pz_stream *s, const uint8_t *data, size_t len)
{
	while (len) {
		size_t n = (size_t)(s->end - s->cur);

		if (n == 0) {
			stream_next_range(s);
			continue;
		}
		if (n > len)
			n = len;
		memcpy(s->cur, data, n);
		s->cur += n;
		data += n;
		len -= n;
		if (!s->err)
			s->n_bytes += n;
	}
}

void pz_msg_begin(struct pz_msg *m, struct pz_stream *s, uint8_t *size_field)
{
	m->s = s;
	m->size_field = size_field;
	m->parent = NULL;
	m->child = NULL;
	m->size = 0;
	m->ended = false;
	s->root = m;
}

void pz_end_children(struct pz_msg *m)
{
	if (m->child)
		pz_end(m->child);
}

uint32_t pz_end(struct pz_msg *m)
{
	if (m->ended)
		return m->size;
	pz_end_children(m);
	if (m->size > PZ_MAX_NESTED_SIZE && !m->s->err)
		m->s->err = -EMSGSIZE;
	if (m->size_field)
		pz_write_redundant_varint(m->size_field, m->size & PZ_MAX_NESTED_SIZE);
	m->ended = true;
	if (m->parent) {
		m->parent->size += m->size;
		m->parent->child = NULL;
	} else if (m->s->root == m) {
		m->s->root = NULL;
	}
	return m->size;
}

void pz_begin_nested(struct pz_msg *m, uint32_t id, struct pz_msg *child)
{
	struct pz_stream *s = m->s;
	uint8_t tmp[PZ_MAX_VARINT_BYTES];
	size_t n;

	if (m->child)
		pz_end_children(m);
	n = pz_varint_encode(pz_make_tag(id, PZ_WIRE_LEN), tmp);
	pz_stream_write(s, tmp, n);
	/* The size field must be contiguous: skip to a new range if needed. */
	if (s->end - s->cur < PZ_SIZE_FIELD_BYTES)
		stream_next_range(s);
	child->size_field = s->cur;
	s->cur += PZ_SIZE_FIELD_BYTES;
	if (!s->err)
		s->n_bytes += PZ_SIZE_FIELD_BYTES;
	m->size += (uint32_t)n + PZ_SIZE_FIELD_BYTES;

	child->s = s;
	child->parent = m;
	child->child = NULL;
	child->size = 0;
	child->ended = false;
	m->child = child;
}

static void append_tagged(struct pz_msg *m, uint32_t tag, const void *data, size_t len)
{
	uint8_t tmp[PZ_MAX_VARINT_BYTES];
	size_t n;

	if (m->child)
		pz_end_children(m);
	n = pz_varint_encode(tag, tmp);
	pz_stream_write(m->s, tmp, n);
	pz_stream_write(m->s, data, len);
	m->size += (uint32_t)(n + len);
}

void pz_append_fixed32(struct pz_msg *m, uint32_t id, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};

	append_tagged(m, pz_make_tag(id, PZ_WIRE_FIXED32), b, sizeof(b));
}

void pz_append_fixed64(struct pz_msg *m, uint32_t id, uint64_t v)
{
	uint8_t b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	append_tagged(m, pz_make_tag(id, PZ_WIRE_FIXED64), b, sizeof(b));
}

void pz_append_float(struct pz_msg *m, uint32_t id, float v)
{
	uint32_t u;

	memcpy(&u, &v, sizeof(u));
	pz_append_fixed32(m, id, u);
}

void pz_append_double(struct pz_msg *m, uint32_t id, double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	pz_append_fixed64(m, id, u);
}

void pz_append_bytes(struct pz_msg *m, uint32_t id, const void *data, size_t len)
{
	uint8_t tmp[2 * PZ_MAX_VARINT_BYTES];
	size_t n;

	if (m->child)
		pz_end_children(m);
	n = pz_varint_encode(pz_make_tag(id, PZ_WIRE_LEN), tmp);
	n += pz_varint_encode(len, tmp + n);
	pz_stream_write(m->s, tmp, n);
	pz_stream_write(m->s, data, len);
	m->size += (uint32_t)(n + len);
}

void pz_append_string(struct pz_msg *m, uint32_t id, const char *str)
{
	pz_append_bytes(m, id, str, strlen(str));
}

void pz_append_raw(struct pz_msg *m, const void *data, size_t len)
{
	if (m->child)
		pz_end_children(m);
	pz_stream_write(m->s, data, len);
	m->size += (uint32_t)len;
}

void pz_append_raw_varint(struct pz_msg *m, uint64_t v)
{
	uint8_t tmp[PZ_MAX_VARINT_BYTES];

	pz_append_raw(m, tmp, pz_varint_encode(v, tmp));
}
