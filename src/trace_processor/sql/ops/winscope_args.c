// SPDX-License-Identifier: Apache-2.0
/*
 * winscope_args.c - __intrinsic_winscope_proto_to_args_with_defaults('t'),
 * as upstream has it for the SurfaceFlinger tables ('surfaceflinger_layer',
 * 'surfaceflinger_layers_snapshot', with or without the "__intrinsic_"
 * prefix): the proto of each row (each distinct base64_proto_id once),
 * flattened into args rows by reflection over its schema
 * (winscope_schema.c). Fields present give their values, in wire order
 * (repeated ones keyed "name[i]", packed ones too); then every field
 * missing from a message gets a row of its default: 0 for numbers and
 * bools, "" for bytes, the name of value 0 for enums, and NULL for
 * strings, messages and repeated fields. A message with no field at all
 * is a NULL row of its own key. A snapshot's layers are left out (as
 * upstream: they have their own table). Unknown fields are skipped.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hmap.h"
#include "protozero/protozero.h"
#include "trace_processor/sql/ops/ops_int.h"
#include "trace_processor/storage/storage.h"

#define KEY_MAX 1024
/* Field numbers of our schema are below this. */
#define MAX_FIELD_NUM 128

enum { C_ID, C_TABLE_NAME, C_PROTO_ID, C_FLAT_KEY, C_KEY, C_INT, C_STR, C_REAL, C_TYPE, N_COLS };

static const char *const k_cols[] = {
	"id INTEGER",		"table_name TEXT", "base64_proto_id INTEGER",
	"flat_key TEXT",	"key TEXT",	   "int_value INTEGER",
	"string_value TEXT",	"real_value REAL", "value_type TEXT",
};

/* The keys being built: a field name appended per level. */
struct keys {
	char flat[KEY_MAX], key[KEY_MAX];
	size_t flat_len, key_len;
};

struct walk {
	struct ops_table *out;
	int64_t proto_id;
	struct keys k;
	bool overflow;
};

enum val_kind { V_NULL, V_INT, V_REAL, V_TEXT };

struct val {
	enum val_kind kind;
	int64_t i;
	double d;
	const char *s;
	size_t n;
};

static int add_row(struct walk *w, const struct val *v)
{
	int64_t r = ops_table_append(w->out);

	if (r < 0)
		return -1;
	ops_set_int(w->out, C_ID, (size_t)r, r);
	ops_set_null(w->out, C_TABLE_NAME, (size_t)r);
	ops_set_int(w->out, C_PROTO_ID, (size_t)r, w->proto_id);
	if (ops_set_text(w->out, C_FLAT_KEY, (size_t)r, w->k.flat, w->k.flat_len) < 0 ||
	    ops_set_text(w->out, C_KEY, (size_t)r, w->k.key, w->k.key_len) < 0)
		return -1;
	ops_set_null(w->out, C_INT, (size_t)r);
	ops_set_null(w->out, C_STR, (size_t)r);
	ops_set_null(w->out, C_REAL, (size_t)r);
	ops_set_null(w->out, C_TYPE, (size_t)r);
	switch (v->kind) {
	case V_NULL:
		break;
	case V_INT:
		ops_set_int(w->out, C_INT, (size_t)r, v->i);
		break;
	case V_REAL:
		ops_set_real(w->out, C_REAL, (size_t)r, v->d);
		break;
	case V_TEXT:
		if (ops_set_text(w->out, C_STR, (size_t)r, v->s ? v->s : "", v->n) < 0)
			return -1;
		break;
	}
	return 0;
}

/* Appends ".name" (or "name" at the top) and "[index]" (index >= 0) to the keys. */
static void push(struct walk *w, const char *name, long index, struct keys *saved)
{
	struct keys *k = &w->k;
	int a, b;

	saved->flat_len = k->flat_len;
	saved->key_len = k->key_len;
	a = snprintf(k->flat + k->flat_len, KEY_MAX - k->flat_len, "%s%s",
		     k->flat_len ? "." : "", name);
	b = index >= 0 ? snprintf(k->key + k->key_len, KEY_MAX - k->key_len, "%s%s[%ld]",
				  k->key_len ? "." : "", name, index)
		       : snprintf(k->key + k->key_len, KEY_MAX - k->key_len, "%s%s",
				  k->key_len ? "." : "", name);
	if (a < 0 || b < 0 || (size_t)a >= KEY_MAX - k->flat_len ||
	    (size_t)b >= KEY_MAX - k->key_len) {
		w->overflow = true;
		return;
	}
	k->flat_len += (size_t)a;
	k->key_len += (size_t)b;
}

static void pop(struct walk *w, const struct keys *saved)
{
	w->k.flat_len = saved->flat_len;
	w->k.key_len = saved->key_len;
	w->k.flat[w->k.flat_len] = '\0';
	w->k.key[w->k.key_len] = '\0';
}

static const struct ws_field *find_field(const struct ws_message *m, uint32_t num)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->fields[i].num == num)
			return &m->fields[i];
	return NULL;
}

static struct val enum_val(const struct ws_field *f, int32_t v, char *buf, size_t cap)
{
	const struct ws_enum *e = &ws_enums[f->ref];
	struct val out = {.kind = V_TEXT};

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
static struct val scalar(const struct ws_field *f, uint64_t raw, char *buf, size_t cap)
{
	struct val v = {.kind = V_INT};

	switch (f->type) {
	case WS_INT32:
	case WS_SFIXED32:
		v.i = (int32_t)(uint32_t)raw;
		break;
	case WS_INT64:
	case WS_SFIXED64:
	case WS_UINT64:
	case WS_FIXED64:
		v.i = (int64_t)raw;
		break;
	case WS_UINT32:
	case WS_FIXED32:
		v.i = (uint32_t)raw;
		break;
	case WS_SINT32:
		v.i = (int32_t)((uint32_t)(raw >> 1) ^ (uint32_t)-(int32_t)(raw & 1));
		break;
	case WS_SINT64:
		v.i = (int64_t)((raw >> 1) ^ (uint64_t)-(int64_t)(raw & 1));
		break;
	case WS_BOOL:
		v.i = raw != 0;
		break;
	case WS_FLOAT: {
		uint32_t bits = (uint32_t)raw;
		float fl;

		memcpy(&fl, &bits, sizeof(fl));
		v.kind = V_REAL;
		v.d = fl;
		break;
	}
	case WS_DOUBLE:
		v.kind = V_REAL;
		memcpy(&v.d, &raw, sizeof(v.d));
		break;
	case WS_ENUM:
		return enum_val(f, (int32_t)(uint32_t)raw, buf, cap);
	default:
		v.kind = V_NULL;
		break;
	}
	return v;
}

/* The wire type scalar fields of @t are written with. */
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
	struct val v = {.kind = V_INT};

	if (f->repeated)
		v.kind = V_NULL;
	else if (f->type == WS_FLOAT || f->type == WS_DOUBLE)
		v = (struct val){.kind = V_REAL, .d = 0};
	else if (f->type == WS_BYTES)
		v = (struct val){.kind = V_TEXT, .s = "", .n = 0};
	else if (f->type == WS_STRING || f->type == WS_MESSAGE)
		v.kind = V_NULL;
	else if (f->type == WS_ENUM)
		v = enum_val(f, 0, buf, sizeof(buf));
	return add_row(w, &v);
}

/* Packed elements of repeated scalar @f: "name[i]" rows. */
static int packed(struct walk *w, const struct ws_field *f, const struct pz_field *pf, long *index)
{
	const uint8_t *p = pf->data, *end = pf->data + pf->size;
	unsigned wire = wire_of(f->type);
	char buf[16];

	while (p < end) {
		struct keys saved;
		struct val v;
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
		push(w, f->name, (*index)++, &saved);
		rc = w->overflow ? 0 : add_row(w, &v);
		pop(w, &saved);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* One message of type @msg at [@data, @data + @len). @allowed: the top's field filter. */
static int walk_message(struct walk *w, int msg, const uint8_t *data, size_t len,
			const uint32_t *allowed, size_t n_allowed)
{
	const struct ws_message *m = &ws_messages[msg];
	bool seen[MAX_FIELD_NUM] = {0};
	long index[MAX_FIELD_NUM] = {0};
	bool empty = true;
	struct pz_reader r;
	struct pz_field pf;
	size_t i, j;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &pf) > 0) {
		const struct ws_field *f = find_field(m, pf.id);
		struct keys saved;
		char buf[16];
		int rc = 0;

		empty = false;
		if (!f)
			continue;
		seen[f->num] = true;
		if (allowed) {
			for (j = 0; j < n_allowed && allowed[j] != f->num; j++)
				;
			if (j == n_allowed)
				continue;
		}
		if (f->repeated && pf.wire_type == PZ_WIRE_LEN && wire_of(f->type) != PZ_WIRE_LEN) {
			if (packed(w, f, &pf, &index[f->num]) < 0)
				return -1;
			continue;
		}
		if (pf.wire_type != wire_of(f->type))
			continue; /* not what the schema says: as an unknown field */
		push(w, f->name, f->repeated ? index[f->num]++ : -1, &saved);
		if (w->overflow) {
			pop(w, &saved);
			return -1;
		}
		if (f->type == WS_MESSAGE) {
			rc = walk_message(w, f->ref, pf.data, pf.size, NULL, 0);
		} else if (f->type == WS_STRING || f->type == WS_BYTES) {
			struct val v = {.kind = V_TEXT, .s = (const char *)pf.data, .n = pf.size};

			rc = add_row(w, &v);
		} else {
			struct val v = scalar(f, pf.value, buf, sizeof(buf));

			rc = add_row(w, &v);
		}
		pop(w, &saved);
		if (rc < 0)
			return -1;
	}
	for (i = 0; i < m->n; i++) {
		const struct ws_field *f = &m->fields[i];
		struct keys saved;
		int rc;

		if (seen[f->num])
			continue;
		if (allowed) {
			for (j = 0; j < n_allowed && allowed[j] != f->num; j++)
				;
			if (j == n_allowed)
				continue;
		}
		push(w, f->name, -1, &saved);
		rc = w->overflow ? -1 : add_default(w, f);
		pop(w, &saved);
		if (rc < 0)
			return -1;
		empty = false;
	}
	if (empty)
		return add_row(w, &(struct val){.kind = V_NULL});
	return 0;
}

static int run_args(void *user, sqlite3_value **argv, struct ops_table *out, char **err)
{
	/* LayersSnapshotProto's fields but its layers (3). */
	static const uint32_t k_snapshot_fields[] = {1, 2, 4, 5, 6, 7, 8};
	struct tp_db *db = user;
	const char *name = (const char *)sqlite3_value_text(argv[0]);
	struct walk w = {.out = out};
	struct hmap done = HMAP_INIT;
	const struct tp_table *t;
	uint32_t col;
	int msg, rc = 0;
	size_t row;

	if (sqlite3_value_type(argv[0]) != SQLITE_TEXT || !name) {
		*err = sqlite3_mprintf("__intrinsic_winscope_proto_to_args_with_defaults takes "
				       "table name as a string.");
		return -1;
	}
	if (strncmp(name, "__intrinsic_", 12) == 0)
		name += 12;
	if (strcmp(name, "surfaceflinger_layers_snapshot") == 0) {
		t = &db->sf_snapshot;
		col = SFSNAP_BASE64_PROTO_ID;
		msg = WS_MSG_LAYERS_SNAPSHOT;
	} else if (strcmp(name, "surfaceflinger_layer") == 0) {
		t = &db->sf_layer;
		col = SFLAYER_BASE64_PROTO_ID;
		msg = WS_MSG_LAYER;
	} else {
		*err = sqlite3_mprintf("Failed to find __intrinsic_%s table.", name);
		return -1;
	}
	for (row = 0; row < t->n_rows && rc == 0; row++) {
		int64_t id = tp_get_int(t, col, row);
		uint8_t *proto;
		size_t len;

		if (hmap_get(&done, (uint64_t)id, NULL))
			continue;
		if (hmap_put(&done, (uint64_t)id, 1) < 0 ||
		    winscope_proto_bytes(db, id, &proto, &len) < 0) {
			rc = -1;
			break;
		}
		w.proto_id = id;
		w.k.flat_len = w.k.key_len = 0;
		w.k.flat[0] = w.k.key[0] = '\0';
		rc = walk_message(&w, msg, proto, len,
				  msg == WS_MSG_LAYERS_SNAPSHOT ? k_snapshot_fields : NULL,
				  sizeof(k_snapshot_fields) / sizeof(k_snapshot_fields[0]));
		free(proto);
	}
	hmap_fini(&done);
	if (rc < 0) {
		*err = sqlite3_mprintf(w.overflow ? "__intrinsic_winscope_proto_to_args_with_"
						    "defaults: key longer than %d bytes"
						  : "out of memory",
				       KEY_MAX);
		return -1;
	}
	return 0;
}

int ops_winscope_args_register(sqlite3 *conn, struct tp_db *db)
{
	struct ops_tfn fn = {"__intrinsic_winscope_proto_to_args_with_defaults", k_cols, N_COLS,
			     1, run_args, db};

	return ops_tfn_register_owned(conn, &fn, NULL);
}
