// SPDX-License-Identifier: Apache-2.0
/*
 * ws_walk.c - a message of the Winscope schema walked into flat args
 * (winscope.h): present fields in wire order, then, if asked, the
 * defaults of the missing ones; keys built a level at a time. The schema
 * has no cycle, so the recursion is as deep as its nesting (6 levels).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "protozero/protozero.h"
#include "trace_processor/winscope/winscope.h"

struct walk {
	ws_emit_fn emit;
	void *ctx;
	bool defaults;
	char flat[WS_KEY_MAX], key[WS_KEY_MAX];
	size_t flat_len, key_len;
};

struct saved {
	size_t flat_len, key_len;
};

/* Appends ".name" (or "name" at the top) and "[index]" (index >= 0) to the keys. */
static int push(struct walk *w, const char *name, long index, struct saved *sv)
{
	int a, b;

	sv->flat_len = w->flat_len;
	sv->key_len = w->key_len;
	a = snprintf(w->flat + w->flat_len, WS_KEY_MAX - w->flat_len, "%s%s",
		     w->flat_len ? "." : "", name);
	b = index >= 0 ? snprintf(w->key + w->key_len, WS_KEY_MAX - w->key_len, "%s%s[%ld]",
				  w->key_len ? "." : "", name, index)
		       : snprintf(w->key + w->key_len, WS_KEY_MAX - w->key_len, "%s%s",
				  w->key_len ? "." : "", name);
	if (a < 0 || b < 0 || (size_t)a >= WS_KEY_MAX - w->flat_len ||
	    (size_t)b >= WS_KEY_MAX - w->key_len) {
		w->flat[w->flat_len] = '\0';
		w->key[w->key_len] = '\0';
		return -ENAMETOOLONG;
	}
	w->flat_len += (size_t)a;
	w->key_len += (size_t)b;
	return 0;
}

static void pop(struct walk *w, const struct saved *sv)
{
	w->flat_len = sv->flat_len;
	w->key_len = sv->key_len;
	w->flat[w->flat_len] = '\0';
	w->key[w->key_len] = '\0';
}

static int emit(struct walk *w, const struct ws_val *v)
{
	return w->emit(w->ctx, w->flat, w->flat_len, w->key, w->key_len, v);
}

static const struct ws_field *find_field(const struct ws_message *m, uint32_t num)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->fields[i].num == num)
			return &m->fields[i];
	return NULL;
}

static bool allowed_field(const uint32_t *allowed, size_t n, uint32_t num)
{
	size_t i;

	if (!allowed)
		return true;
	for (i = 0; i < n; i++)
		if (allowed[i] == num)
			return true;
	return false;
}

/* An enum's value: its name, or the number as text if it has none. */
static struct ws_val enum_val(const struct ws_field *f, int32_t v, char *buf, size_t cap)
{
	const struct ws_enum *e = &ws_enums[f->ref];
	struct ws_val out = {.kind = WS_V_TEXT};

	if (v >= 0 && (size_t)v < e->n) {
		out.s = e->names[v];
	} else {
		snprintf(buf, cap, "%d", v);
		out.s = buf;
	}
	out.n = strlen(out.s);
	return out;
}

/* The value of scalar field @f from its raw @raw (varint or fixed bits). */
static struct ws_val scalar(const struct ws_field *f, uint64_t raw, char *buf, size_t cap)
{
	struct ws_val v = {.kind = WS_V_INT};

	switch (f->type) {
	case WS_INT32:
	case WS_SFIXED32:
		v.i = (int32_t)(uint32_t)raw;
		break;
	case WS_INT64:
	case WS_SFIXED64:
		v.i = (int64_t)raw;
		break;
	case WS_UINT64:
	case WS_FIXED64:
		v.kind = WS_V_UINT;
		v.i = (int64_t)raw;
		break;
	case WS_UINT32:
	case WS_FIXED32:
		v.kind = WS_V_UINT;
		v.i = (uint32_t)raw;
		break;
	case WS_SINT32:
		v.i = (int32_t)((uint32_t)(raw >> 1) ^ (uint32_t)-(int32_t)(raw & 1));
		break;
	case WS_SINT64:
		v.i = (int64_t)((raw >> 1) ^ (uint64_t)-(int64_t)(raw & 1));
		break;
	case WS_BOOL:
		v.kind = WS_V_BOOL;
		v.i = raw != 0;
		break;
	case WS_FLOAT: {
		uint32_t bits = (uint32_t)raw;
		float fl;

		memcpy(&fl, &bits, sizeof(fl));
		v.kind = WS_V_REAL;
		v.d = fl;
		break;
	}
	case WS_DOUBLE:
		v.kind = WS_V_REAL;
		memcpy(&v.d, &raw, sizeof(v.d));
		break;
	case WS_ENUM:
		return enum_val(f, (int32_t)(uint32_t)raw, buf, cap);
	default:
		v.kind = WS_V_NULL;
		break;
	}
	return v;
}

/* The wire type fields of type @t are written with (not packed). */
static unsigned wire_of(enum ws_type t)
{
	switch (t) {
	case WS_FIXED32:
	case WS_SFIXED32:
	case WS_FLOAT:
		return PZ_WIRE_FIXED32;
	case WS_FIXED64:
	case WS_SFIXED64:
	case WS_DOUBLE:
		return PZ_WIRE_FIXED64;
	case WS_STRING:
	case WS_BYTES:
	case WS_MESSAGE:
		return PZ_WIRE_LEN;
	default:
		return PZ_WIRE_VARINT;
	}
}

static int add_default(struct walk *w, const struct ws_field *f)
{
	char buf[16];
	struct ws_val v = {.kind = WS_V_INT};

	if (f->repeated)
		v.kind = WS_V_NULL;
	else if (f->type == WS_FLOAT || f->type == WS_DOUBLE)
		v.kind = WS_V_REAL;
	else if (f->type == WS_BYTES)
		v = (struct ws_val){.kind = WS_V_BYTES, .s = "", .n = 0};
	else if (f->type == WS_STRING || f->type == WS_MESSAGE)
		v.kind = WS_V_NULL;
	else if (f->type == WS_ENUM)
		v = enum_val(f, 0, buf, sizeof(buf));
	else if (f->type == WS_BOOL)
		v.kind = WS_V_BOOL;
	else if (f->type == WS_UINT32 || f->type == WS_UINT64 || f->type == WS_FIXED32 ||
		 f->type == WS_FIXED64)
		v.kind = WS_V_UINT;
	return emit(w, &v);
}

/* Packed elements of repeated scalar @f: "name[i]" values. */
static int packed(struct walk *w, const struct ws_field *f, const struct pz_field *pf, long *index)
{
	const uint8_t *p = pf->data, *end = pf->data + pf->size;
	unsigned wire = wire_of(f->type);
	char buf[16];

	while (p < end) {
		struct saved sv;
		struct ws_val v;
		uint64_t raw = 0;
		unsigned shift = 0;
		int rc;

		if (wire == PZ_WIRE_FIXED32 || wire == PZ_WIRE_FIXED64) {
			size_t n = wire == PZ_WIRE_FIXED32 ? 4 : 8;

			if ((size_t)(end - p) < n)
				return 0;
			raw = pz_load_le(p, (unsigned)n);
			p += n;
		} else {
			for (;;) {
				if (p >= end || shift > 63)
					return 0;
				raw |= (uint64_t)(*p & 0x7f) << shift;
				shift += 7;
				if (!(*p++ & 0x80))
					break;
			}
		}
		v = scalar(f, raw, buf, sizeof(buf));
		rc = push(w, f->name, (*index)++, &sv);
		if (rc == 0)
			rc = emit(w, &v);
		pop(w, &sv);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int walk_message(struct walk *w, int msg, const uint8_t *data, size_t len,
			const uint32_t *allowed, size_t n_allowed)
{
	const struct ws_message *m = &ws_messages[msg];
	bool seen[WS_MAX_FIELD_NUM] = {0};
	long index[WS_MAX_FIELD_NUM] = {0};
	bool empty = true;
	struct pz_reader r;
	struct pz_field pf;
	size_t i;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &pf) > 0) {
		const struct ws_field *f = find_field(m, pf.id);
		struct saved sv;
		char buf[16];
		int rc;

		empty = false;
		if (!f)
			continue;
		seen[f->num] = true;
		if (!allowed_field(allowed, n_allowed, f->num))
			continue;
		if (f->repeated && pf.wire_type == PZ_WIRE_LEN && wire_of(f->type) != PZ_WIRE_LEN) {
			rc = packed(w, f, &pf, &index[f->num]);
			if (rc < 0)
				return rc;
			continue;
		}
		if (pf.wire_type != wire_of(f->type))
			continue;
		rc = push(w, f->name, f->repeated ? index[f->num]++ : -1, &sv);
		if (rc == 0) {
			if (f->type == WS_MESSAGE) {
				rc = walk_message(w, f->ref, pf.data, pf.size, NULL, 0);
			} else if (f->type == WS_STRING || f->type == WS_BYTES) {
				struct ws_val v = {.kind = f->type == WS_STRING ? WS_V_TEXT
										: WS_V_BYTES,
						   .s = (const char *)pf.data,
						   .n = pf.size};

				rc = emit(w, &v);
			} else {
				struct ws_val v = scalar(f, pf.value, buf, sizeof(buf));

				rc = emit(w, &v);
			}
		}
		pop(w, &sv);
		if (rc < 0)
			return rc;
	}
	for (i = 0; w->defaults && i < m->n; i++) {
		const struct ws_field *f = &m->fields[i];
		struct saved sv;
		int rc;

		if (seen[f->num] || !allowed_field(allowed, n_allowed, f->num))
			continue;
		rc = push(w, f->name, -1, &sv);
		if (rc == 0)
			rc = add_default(w, f);
		pop(w, &sv);
		if (rc < 0)
			return rc;
		empty = false;
	}
	if (empty) {
		struct ws_val v = {.kind = WS_V_NULL};

		return emit(w, &v);
	}
	return 0;
}

int ws_walk(int msg, const uint8_t *data, size_t len, const uint32_t *allowed, size_t n_allowed,
	    bool defaults, ws_emit_fn emit_fn, void *ctx)
{
	struct walk w;

	if (msg < 0 || msg >= WS_MSG_COUNT)
		return -EINVAL;
	w.emit = emit_fn;
	w.ctx = ctx;
	w.defaults = defaults;
	w.flat_len = w.key_len = 0;
	w.flat[0] = w.key[0] = '\0';
	return walk_message(&w, msg, data, len, allowed, n_allowed);
}
