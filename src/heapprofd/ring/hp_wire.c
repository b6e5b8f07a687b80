// SPDX-License-Identifier: Apache-2.0
/*
 * hp_wire.c - the control messages' encoding (see hp_wire.h). The daemon
 * parses what clients send: every length is checked against the message.
 */
#include "heapprofd/ring/hp_wire.h"

#include <errno.h>
#include <string.h>

static void put_le(uint8_t *p, uint64_t v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

void hp_wire_begin(struct hp_wire_out *w, uint8_t *buf, size_t cap, uint32_t type)
{
	w->buf = buf;
	w->cap = cap;
	w->len = 0;
	w->overflow = cap < 4;
	if (!w->overflow) {
		put_le(buf, type, 4);
		w->len = 4;
	}
}

static void put_field(struct hp_wire_out *w, uint16_t id, const void *val, size_t len)
{
	if (w->overflow || len > 0xffff || w->cap - w->len < 4 + len) {
		w->overflow = true;
		return;
	}
	put_le(w->buf + w->len, id, 2);
	put_le(w->buf + w->len + 2, len, 2);
	if (len)
		memcpy(w->buf + w->len + 4, val, len);
	w->len += 4 + len;
}

void hp_wire_u64(struct hp_wire_out *w, uint16_t id, uint64_t v)
{
	uint8_t b[8];

	put_le(b, v, 8);
	put_field(w, id, b, 8);
}

void hp_wire_str(struct hp_wire_out *w, uint16_t id, const char *s, size_t len)
{
	put_field(w, id, s, len);
}

int hp_wire_parse(const uint8_t *buf, size_t len, uint32_t *out_type, struct hp_wire_in *out)
{
	if (len < 4)
		return -EBADMSG;
	*out_type = (uint32_t)get_le(buf, 4);
	out->p = buf + 4;
	out->end = buf + len;
	return 0;
}

int hp_wire_next(struct hp_wire_in *in, struct hp_wire_field *out)
{
	size_t left = (size_t)(in->end - in->p);
	uint16_t len;

	if (!left)
		return 0;
	if (left < 4)
		return -EBADMSG;
	len = (uint16_t)get_le(in->p + 2, 2);
	if (left - 4 < len)
		return -EBADMSG;
	out->id = (uint16_t)get_le(in->p, 2);
	out->len = len;
	out->val = in->p + 4;
	in->p += 4 + len;
	return 1;
}

uint64_t hp_wire_field_u64(const struct hp_wire_field *f)
{
	return f->len == 8 ? get_le(f->val, 8) : 0;
}
