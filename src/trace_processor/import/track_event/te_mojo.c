// SPDX-License-Identifier: Apache-2.0
/*
 * te_mojo.c - TrackEvent.chrome_mojo_event_info as typed args
 * ("chrome_mojo_event_info.<field>"). The interned method location becomes
 * a (mapping id, rel_pc) pair that te_symbols.c names once the whole
 * trace is read. Called by te_parse.c for each event carrying the field.
 */
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/track_event/te_int.h"

#define PREFIX "chrome_mojo_event_info."

static uint32_t key(struct tp_import *imp, const char *name)
{
	return tp_db_str(imp->db, name);
}

/* The method's native symbol; false if its location or mapping is unknown. */
static bool method_symbol(struct tp_import *imp, uint32_t gen, uint32_t machine,
			  struct tp_argset *b, uint64_t iid)
{
	const struct tp_interned *i =
		tp_seq_interned(imp, gen, PB_INTERNED_DATA__UNSYMBOLIZED_SOURCE_LOCATIONS, iid);
	struct pz_field s[4];
	int64_t mapping;

	if (!i || pz_decode_table(i->msg, i->len, s, 4) != PZ_OK)
		return false;
	mapping = te_symbols_mapping(imp, gen, machine,
				     s[PB_UNSYMBOLIZED_SOURCE_LOCATION__MAPPING_ID].value);
	if (mapping < 0)
		return false;
	tp_argset_uint(imp, b, key(imp, TE_MOJO_NATIVE_SYMBOL ".mapping_id"), (uint64_t)mapping);
	tp_argset_uint(imp, b, key(imp, TE_MOJO_NATIVE_SYMBOL ".rel_pc"),
		       s[PB_UNSYMBOLIZED_SOURCE_LOCATION__REL_PC].value);
	return true;
}

void te_mojo_args(struct tp_import *imp, uint32_t gen, uint32_t machine, struct tp_argset *b,
		  const uint8_t *data, size_t len)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		bool is_len = f.wire_type == PZ_WIRE_LEN;

		switch (f.id) {
		case PB_CHROME_MOJO_EVENT_INFO__WATCHER_NOTIFY_INTERFACE_TAG:
			if (is_len)
				tp_argset_str(imp, b,
					      key(imp, PREFIX "watcher_notify_interface_tag"),
					      tp_str_intern(&imp->db->strings,
							    (const char *)f.data, f.size));
			break;
		case PB_CHROME_MOJO_EVENT_INFO__IPC_HASH:
			tp_argset_uint(imp, b, key(imp, PREFIX "ipc_hash"), (uint32_t)f.value);
			break;
		case PB_CHROME_MOJO_EVENT_INFO__MOJO_INTERFACE_TAG:
			if (is_len)
				tp_argset_str(imp, b, key(imp, PREFIX "mojo_interface_tag"),
					      tp_str_intern(&imp->db->strings,
							    (const char *)f.data, f.size));
			break;
		case PB_CHROME_MOJO_EVENT_INFO__MOJO_INTERFACE_METHOD_IID:
			/* Unresolvable: the iid itself, so the data does not vanish. */
			if (!method_symbol(imp, gen, machine, b, f.value))
				tp_argset_uint(imp, b, key(imp, PREFIX "mojo_interface_method_iid"),
					       f.value);
			break;
		case PB_CHROME_MOJO_EVENT_INFO__IS_REPLY:
			tp_argset_bool(imp, b, key(imp, PREFIX "is_reply"), f.value != 0);
			break;
		case PB_CHROME_MOJO_EVENT_INFO__PAYLOAD_SIZE:
			tp_argset_uint(imp, b, key(imp, PREFIX "payload_size"), f.value);
			break;
		case PB_CHROME_MOJO_EVENT_INFO__DATA_NUM_BYTES:
			tp_argset_uint(imp, b, key(imp, PREFIX "data_num_bytes"), f.value);
			break;
		default:
			break;
		}
	}
	if (r.err != PZ_OK)
		tp_stat_add(imp, "track_event_parser_errors", -1, machine, 1);
}
