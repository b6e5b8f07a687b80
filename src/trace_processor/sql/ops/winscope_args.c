// SPDX-License-Identifier: Apache-2.0
/*
 * winscope_args.c - __intrinsic_winscope_proto_to_args_with_defaults('t'),
 * as upstream has it for the SurfaceFlinger tables ('surfaceflinger_layer',
 * 'surfaceflinger_layers_snapshot', with or without the "__intrinsic_"
 * prefix): the proto of each row (each distinct base64_proto_id once),
 * flattened into args rows with the defaults of every missing field
 * (ws_walk() of winscope/). Every integer goes to int_value, bytes as
 * they are to string_value; a snapshot's layers are left out (as
 * upstream: they have their own table). table_name and value_type stay
 * NULL, as upstream's.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "base/hmap.h"
#include "trace_processor/sql/ops/ops_int.h"
#include "trace_processor/storage/storage.h"
#include "trace_processor/winscope/winscope.h"

enum { C_ID, C_TABLE_NAME, C_PROTO_ID, C_FLAT_KEY, C_KEY, C_INT, C_STR, C_REAL, C_TYPE, N_COLS };

static const char *const k_cols[] = {
	"id INTEGER",		"table_name TEXT", "base64_proto_id INTEGER",
	"flat_key TEXT",	"key TEXT",	   "int_value INTEGER",
	"string_value TEXT",	"real_value REAL", "value_type TEXT",
};

struct emit_ctx {
	struct ops_table *out;
	int64_t proto_id;
};

static int add_row(void *ctx, const char *flat, size_t flat_len, const char *key, size_t key_len,
		   const struct ws_val *v)
{
	struct emit_ctx *e = ctx;
	int64_t r = ops_table_append(e->out);
	size_t row;

	if (r < 0)
		return -ENOMEM;
	row = (size_t)r;
	ops_set_int(e->out, C_ID, row, r);
	ops_set_null(e->out, C_TABLE_NAME, row);
	ops_set_int(e->out, C_PROTO_ID, row, e->proto_id);
	if (ops_set_text(e->out, C_FLAT_KEY, row, flat, flat_len) < 0 ||
	    ops_set_text(e->out, C_KEY, row, key, key_len) < 0)
		return -ENOMEM;
	ops_set_null(e->out, C_INT, row);
	ops_set_null(e->out, C_STR, row);
	ops_set_null(e->out, C_REAL, row);
	ops_set_null(e->out, C_TYPE, row);
	switch (v->kind) {
	case WS_V_NULL:
		break;
	case WS_V_INT:
	case WS_V_UINT:
	case WS_V_BOOL:
		ops_set_int(e->out, C_INT, row, v->i);
		break;
	case WS_V_REAL:
		ops_set_real(e->out, C_REAL, row, v->d);
		break;
	case WS_V_TEXT:
	case WS_V_BYTES:
		if (ops_set_text(e->out, C_STR, row, v->n ? v->s : "", v->n) < 0)
			return -ENOMEM;
		break;
	}
	return 0;
}

static int run_args(void *user, sqlite3_value **argv, struct ops_table *out, char **err)
{
	struct tp_db *db = user;
	const char *name = (const char *)sqlite3_value_text(argv[0]);
	struct emit_ctx e = {.out = out};
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
		if (hmap_put(&done, (uint64_t)id, 1) < 0) {
			rc = -ENOMEM;
			break;
		}
		if (winscope_proto_bytes(db, id, &proto, &len) < 0) {
			rc = -EBADMSG;
			break;
		}
		e.proto_id = id;
		rc = ws_walk(msg, proto, len,
			     msg == WS_MSG_LAYERS_SNAPSHOT ? ws_snapshot_arg_fields : NULL,
			     msg == WS_MSG_LAYERS_SNAPSHOT ? 7 : 0, true, add_row, &e);
		free(proto);
	}
	hmap_fini(&done);
	if (rc < 0) {
		*err = sqlite3_mprintf(
			"__intrinsic_winscope_proto_to_args_with_defaults: %s",
			rc == -ENAMETOOLONG ? "a key is too long"
			: rc == -EBADMSG    ? "a row's proto is not readable"
					    : "out of memory");
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
