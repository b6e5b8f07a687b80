/* SPDX-License-Identifier: Apache-2.0 */
/*
 * winscope.h - winscope/, the protos of Winscope's traces as data: the
 * schema of the SurfaceFlinger layers protos (ws_schema.c: field numbers,
 * names, types and enum value names, as Android declares them) and a walk
 * of a message by it into flat args (ws_walk.c), as upstream's reflection
 * gives them: keys "a.b" (flat) and "a[0].b", and optionally the defaults
 * of missing fields. The importer (import/android) makes arg sets with it;
 * sql/ops its table function __intrinsic_winscope_proto_to_args_with_defaults.
 * Uses protozero only.
 */
#ifndef PFC_TRACE_PROCESSOR_WINSCOPE_WINSCOPE_H
#define PFC_TRACE_PROCESSOR_WINSCOPE_WINSCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ws_type {
	WS_INT32, WS_INT64, WS_UINT32, WS_UINT64, WS_SINT32, WS_SINT64,
	WS_FIXED32, WS_FIXED64, WS_SFIXED32, WS_SFIXED64,
	WS_BOOL, WS_FLOAT, WS_DOUBLE, WS_STRING, WS_BYTES, WS_MESSAGE, WS_ENUM,
};
enum ws_msg_id {
	WS_MSG_LAYERS_SNAPSHOT, WS_MSG_LAYERS, WS_MSG_DISPLAY, WS_MSG_LAYER, WS_MSG_POSITION,
	WS_MSG_FLOAT_RECT, WS_MSG_ACTIVE_BUFFER, WS_MSG_BARRIER_LAYER, WS_MSG_METADATA_ENTRY,
	WS_MSG_REGION, WS_MSG_SIZE, WS_MSG_TRANSFORM, WS_MSG_COLOR, WS_MSG_INPUT_WINDOW_INFO,
	WS_MSG_BLUR_REGION, WS_MSG_COLOR_TRANSFORM, WS_MSG_BOX_SHADOW_SETTINGS,
	WS_MSG_BOX_SHADOW_PARAMS, WS_MSG_BORDER_SETTINGS, WS_MSG_RECT, WS_MSG_CORNER_RADII,
	WS_MSG_COUNT
};
enum ws_enum_id { WS_ENUM_HWC_COMPOSITION_TYPE, WS_ENUM_TRUSTED_OVERLAY, WS_ENUM_COUNT };

struct ws_field {
	uint32_t num;
	const char *name;
	enum ws_type type;
	bool repeated;
	int ref; /* the message (WS_MESSAGE) or enum (WS_ENUM); -1 otherwise */
};
struct ws_message {
	const struct ws_field *fields; /* by number, all below WS_MAX_FIELD_NUM */
	size_t n;
};
struct ws_enum {
	const char *const *names; /* value i's name */
	size_t n;
};
#define WS_MAX_FIELD_NUM 128
extern const struct ws_message ws_messages[WS_MSG_COUNT];
extern const struct ws_enum ws_enums[WS_ENUM_COUNT];

/* LayersSnapshotProto's fields kept in its args: all but its layers (3). */
extern const uint32_t ws_snapshot_arg_fields[7];

/* A value of the walk. */
enum ws_val_kind {
	WS_V_NULL,  /* an unset string, message or repeated field; an empty message */
	WS_V_INT,   /* signed integers */
	WS_V_UINT,  /* unsigned integers (i holds the bits) */
	WS_V_BOOL,
	WS_V_REAL,  /* float and double */
	WS_V_TEXT,  /* strings, enum value names */
	WS_V_BYTES, /* bytes fields */
};
struct ws_val {
	enum ws_val_kind kind;
	int64_t i;
	double d;
	const char *s; /* WS_V_TEXT, WS_V_BYTES: not NUL-terminated */
	size_t n;
};

/* Called per value with its keys (NUL-terminated too). Return: 0, or < 0 to stop. */
typedef int (*ws_emit_fn)(void *ctx, const char *flat_key, size_t flat_len, const char *key,
			  size_t key_len, const struct ws_val *v);

/* Longest key of a walk. */
#define WS_KEY_MAX 1024

/**
 * ws_walk() - Walks message @msg (enum ws_msg_id) at [@data, @data + @len).
 * @allowed: the top message's fields to walk (@n_allowed of them), or NULL
 *           for all.
 * @defaults: also emit the default of every field missing from a message
 *            (0, false, "" bytes, the name of enum value 0; NULL for
 *            strings, messages and repeated fields).
 *
 * Present fields are emitted in wire order, repeated ones keyed
 * "name[i]" (packed ones too), messages by their fields ("name.field");
 * a message with nothing to emit is one NULL value of its own key.
 * Unknown fields, and fields whose wire type is not the schema's, are
 * skipped. Malformed input ends the walk where it breaks.
 * Return: 0, the emitter's negative value, or -ENAMETOOLONG if a key
 * outgrew WS_KEY_MAX.
 */
int ws_walk(int msg, const uint8_t *data, size_t len, const uint32_t *allowed, size_t n_allowed,
	    bool defaults, ws_emit_fn emit, void *ctx);

#endif
