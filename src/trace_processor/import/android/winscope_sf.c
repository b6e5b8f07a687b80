// SPDX-License-Identifier: Apache-2.0
/*
 * winscope_sf.c - SurfaceFlinger layers snapshots (Winscope's
 * LayersSnapshotProto, TracePacket field 93): a row per snapshot in
 * __intrinsic_surfaceflinger_layers_snapshot and a row per layer in
 * __intrinsic_surfaceflinger_layer, each keeping its proto whole as base64
 * in the string pool (base64_proto_id), for the winscope table functions
 * of sql/ops/winscope*.c to read, and its fields as an arg set (as
 * upstream's: the snapshot's but its layers, every field of a layer;
 * bytes as base64). The columns taken from the layer's fields are set
 * here; the computed visibility and rectangles of upstream's importer
 * are not (nor their args); the snapshots do not move the trace bounds
 * (as upstream). Called by the read layer per packet, in time order.
 */
#include <stdlib.h>

#include "base/base64.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/android/android_int.h"
#include "trace_processor/winscope/winscope.h"

/* LayersSnapshotProto. */
#define SNAP_ELAPSED_REALTIME_NANOS 1
#define SNAP_LAYERS 3
/* LayersProto. */
#define LAYERS_LAYERS 1
/* LayerProto. */
#define LAYER_ID 1
#define LAYER_NAME 2
#define LAYER_PARENT 25
#define LAYER_Z_ORDER_RELATIVE_OF 26
#define LAYER_HWC_COMPOSITION_TYPE 35

/* The string id of @len bytes at @data as base64; 0 if out of memory. */
static uint32_t intern_base64(struct tp_import *imp, const uint8_t *data, size_t len)
{
	char *text = malloc(base64_encoded_len(len) + 1);
	uint32_t id;

	if (!text)
		return 0;
	id = tp_str_intern(&imp->db->strings, text, base64_encode(data, len, text));
	free(text);
	return id;
}

struct arg_ctx {
	struct tp_import *imp;
	struct tp_argset *set;
};

/* One value of ws_walk() into the arg set. */
static int add_arg(void *ctx, const char *flat, size_t flat_len, const char *key, size_t key_len,
		   const struct ws_val *v)
{
	struct arg_ctx *c = ctx;
	struct tp_strings *strings = &c->imp->db->strings;
	struct tp_arg a = {0};

	a.flat_key = tp_str_intern(strings, flat, flat_len);
	a.key = tp_str_intern(strings, key, key_len);
	switch (v->kind) {
	case WS_V_NULL:
		a.type = TP_ARG_NULL;
		break;
	case WS_V_INT:
		a.type = TP_ARG_INT;
		a.v.i = v->i;
		break;
	case WS_V_UINT:
		a.type = TP_ARG_UINT;
		a.v.i = v->i;
		break;
	case WS_V_BOOL:
		a.type = TP_ARG_BOOL;
		a.v.i = v->i;
		break;
	case WS_V_REAL:
		a.type = TP_ARG_REAL;
		a.v.d = v->d;
		break;
	case WS_V_TEXT:
		a.type = TP_ARG_STR;
		a.v.s = tp_str_intern(strings, v->n ? v->s : "", v->n);
		break;
	case WS_V_BYTES: {
		char *text = malloc(base64_encoded_len(v->n) + 1);

		if (!text)
			return -1;
		a.type = TP_ARG_STR;
		a.v.s = tp_str_intern(strings, text,
				      base64_encode((const uint8_t *)v->s, v->n, text));
		free(text);
		break;
	}
	}
	tp_argset_add(c->imp, c->set, &a);
	return 0;
}

/* The arg set of message @msg at [@data, @data + @len); TP_NULL_INT if none. */
static int64_t arg_set(struct tp_import *imp, int msg, const uint8_t *data, size_t len,
		       const uint32_t *allowed, size_t n_allowed)
{
	struct tp_argset set = {0};
	struct arg_ctx c = {imp, &set};
	int64_t id;

	if (ws_walk(msg, data, len, allowed, n_allowed, false, add_arg, &c) < 0)
		tp_stat_add(imp, "winscope_sf_layers_parse_errors", -1, 0, 1);
	id = tp_argset_commit(imp, &set);
	tp_argset_fini(&set);
	return id;
}

/* An int32 field's value (varints of negative ones carry 64 bits). */
static int64_t as_int32(uint64_t v)
{
	return (int64_t)(int32_t)(uint32_t)v;
}

static void layer_row(struct tp_import *imp, int64_t snapshot_id, const uint8_t *data,
		      size_t len)
{
	struct tp_table *t = &imp->db->sf_layer;
	struct pz_reader r;
	struct pz_field f;
	int64_t row = tp_table_append(t);

	if (row < 0)
		return;
	tp_set_int(t, SFLAYER_SNAPSHOT_ID, (size_t)row, snapshot_id);
	tp_set_int(t, SFLAYER_BASE64_PROTO_ID, (size_t)row, intern_base64(imp, data, len));
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		bool varint = f.wire_type == PZ_WIRE_VARINT;

		switch (f.id) {
		case LAYER_ID:
			if (varint)
				tp_set_int(t, SFLAYER_LAYER_ID, (size_t)row, as_int32(f.value));
			break;
		case LAYER_NAME:
			if (f.wire_type == PZ_WIRE_LEN)
				tp_set_str(t, SFLAYER_LAYER_NAME, (size_t)row,
					   tp_str_intern(&imp->db->strings, (const char *)f.data,
							 f.size));
			break;
		case LAYER_PARENT:
			if (varint)
				tp_set_int(t, SFLAYER_PARENT, (size_t)row, as_int32(f.value));
			break;
		case LAYER_Z_ORDER_RELATIVE_OF:
			if (varint)
				tp_set_int(t, SFLAYER_Z_ORDER_RELATIVE_OF, (size_t)row,
					   as_int32(f.value));
			break;
		case LAYER_HWC_COMPOSITION_TYPE:
			if (varint)
				tp_set_int(t, SFLAYER_HWC_COMPOSITION_TYPE, (size_t)row,
					   as_int32(f.value));
			break;
		default:
			break;
		}
	}
	if (r.err != PZ_OK)
		tp_stat_add(imp, "winscope_sf_layers_parse_errors", -1, 0, 1);
	tp_set_int(t, SFLAYER_ARG_SET_ID, (size_t)row, arg_set(imp, WS_MSG_LAYER, data, len, NULL, 0));
}

void tp_sf_layers_snapshot(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			   size_t len)
{
	struct tp_table *t = &imp->db->sf_snapshot;
	struct pz_reader r, lr;
	struct pz_field f, lf;
	int64_t row, elapsed = 0, seq_id = TP_NULL_INT;

	pz_reader_init(&r, ev->data, ev->len);
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == PB_TRACE_PACKET__TRUSTED_PACKET_SEQUENCE_ID &&
		    f.wire_type == PZ_WIRE_VARINT)
			seq_id = (int64_t)(uint32_t)f.value;
	row = tp_table_append(t);
	if (row < 0)
		return;
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == SNAP_ELAPSED_REALTIME_NANOS && f.wire_type == PZ_WIRE_FIXED64)
			elapsed = (int64_t)f.value;
	tp_set_int(t, SFSNAP_TS, (size_t)row, ev->ts);
	tp_set_int(t, SFSNAP_BASE64_PROTO_ID, (size_t)row, intern_base64(imp, data, len));
	tp_set_int(t, SFSNAP_SEQUENCE_ID, (size_t)row, seq_id);
	tp_set_int(t, SFSNAP_HAS_INVALID_ELAPSED_TS, (size_t)row, elapsed == 0);
	tp_set_int(t, SFSNAP_ARG_SET_ID, (size_t)row,
		   arg_set(imp, WS_MSG_LAYERS_SNAPSHOT, data, len, ws_snapshot_arg_fields,
			   sizeof(ws_snapshot_arg_fields) / sizeof(ws_snapshot_arg_fields[0])));
	if (r.err != PZ_OK) {
		tp_stat_add(imp, "winscope_sf_layers_parse_errors", -1, 0, 1);
		return;
	}
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id != SNAP_LAYERS || f.wire_type != PZ_WIRE_LEN)
			continue;
		pz_reader_init(&lr, f.data, f.size);
		while (pz_reader_next(&lr, &lf) > 0)
			if (lf.id == LAYERS_LAYERS && lf.wire_type == PZ_WIRE_LEN)
				layer_row(imp, row, lf.data, lf.size);
		if (lr.err != PZ_OK)
			tp_stat_add(imp, "winscope_sf_layers_parse_errors", -1, 0, 1);
	}
}
