// SPDX-License-Identifier: Apache-2.0
/*
 * smaps.c - TracePacket.smaps_packet as Perfetto imports it: one
 * profiler_smaps row per SmapsEntry of the process (made if new), its
 * path also without the kernel's " (deleted)" suffix. The packed
 * (PackedSmaps) form is not read yet.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/common/common.h"
#include "trace_processor/import/profiling/profiling.h"

#define DELETED_SUFFIX " (deleted)"

static void set_str(struct tp_import *imp, struct tp_table *t, uint32_t col, size_t row,
		    const struct pz_field *f)
{
	if (f->id && f->wire_type == PZ_WIRE_LEN)
		tp_set_str(t, col, row,
			   tp_str_intern(&imp->db->strings, (const char *)f->data, f->size));
}

static void entry(struct tp_import *imp, int64_t ts, int64_t upid, const uint8_t *d, uint32_t len)
{
	static const struct {
		uint32_t field, col;
	} ints[] = {
		{PB_SMAPS_ENTRY__SIZE_KB, SMAPS_SIZE_KB},
		{PB_SMAPS_ENTRY__PRIVATE_DIRTY_KB, SMAPS_PRIVATE_DIRTY_KB},
		{PB_SMAPS_ENTRY__SWAP_KB, SMAPS_SWAP_KB},
		{PB_SMAPS_ENTRY__START_ADDRESS, SMAPS_START_ADDRESS},
		{PB_SMAPS_ENTRY__MODULE_TIMESTAMP, SMAPS_MODULE_TIMESTAMP},
		{PB_SMAPS_ENTRY__PROTECTION_FLAGS, SMAPS_PROTECTION_FLAGS},
		{PB_SMAPS_ENTRY__PRIVATE_CLEAN_RESIDENT_KB, SMAPS_PRIVATE_CLEAN_RESIDENT_KB},
		{PB_SMAPS_ENTRY__SHARED_DIRTY_RESIDENT_KB, SMAPS_SHARED_DIRTY_RESIDENT_KB},
		{PB_SMAPS_ENTRY__SHARED_CLEAN_RESIDENT_KB, SMAPS_SHARED_CLEAN_RESIDENT_KB},
		{PB_SMAPS_ENTRY__LOCKED_KB, SMAPS_LOCKED_KB},
		{PB_SMAPS_ENTRY__PROPORTIONAL_RESIDENT_KB, SMAPS_PROPORTIONAL_RESIDENT_KB},
	};
	struct tp_table *t = &imp->db->smaps;
	struct pz_field f[16];
	const char *path = "";
	size_t plen = 0, trimmed, sl = strlen(DELETED_SUFFIX);
	bool deleted;
	int64_t row;

	if (pz_decode_table(d, len, f, 16) != PZ_OK)
		return;
	if (f[PB_SMAPS_ENTRY__PATH].id && f[PB_SMAPS_ENTRY__PATH].wire_type == PZ_WIRE_LEN) {
		path = (const char *)f[PB_SMAPS_ENTRY__PATH].data;
		plen = f[PB_SMAPS_ENTRY__PATH].size;
	}
	deleted = plen >= sl && memcmp(path + plen - sl, DELETED_SUFFIX, sl) == 0;
	trimmed = deleted ? plen - sl : plen;
	row = tp_table_append(t);
	if (row < 0)
		return;
	tp_set_int(t, SMAPS_UPID, (size_t)row, upid);
	tp_set_int(t, SMAPS_TS, (size_t)row, ts);
	tp_set_str(t, SMAPS_PATH, (size_t)row, tp_str_intern(&imp->db->strings, path, plen));
	tp_set_str(t, SMAPS_PATH_TRIMMED, (size_t)row,
		   tp_str_intern(&imp->db->strings, path, trimmed));
	tp_set_int(t, SMAPS_AGGREGATE_COUNT, (size_t)row, 1);
	tp_set_int(t, SMAPS_IS_DELETED, (size_t)row, deleted);
	/* Every count is stored, 0 when absent, as Perfetto's entry rows. */
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		tp_set_int(t, ints[i].col, (size_t)row,
			   ints[i].field == PB_SMAPS_ENTRY__PROTECTION_FLAGS
				   ? (int32_t)f[ints[i].field].value
				   : (int64_t)f[ints[i].field].value);
	tp_set_int(t, SMAPS_RSS_KB, (size_t)row, 0);
	tp_set_int(t, SMAPS_ANONYMOUS_KB, (size_t)row, 0);
	tp_set_int(t, SMAPS_PSS_DIRTY_KB, (size_t)row, 0);
	tp_set_int(t, SMAPS_SWAP_PSS_KB, (size_t)row, 0);
	set_str(imp, t, SMAPS_FILE_NAME, (size_t)row, &f[PB_SMAPS_ENTRY__FILE_NAME]);
	set_str(imp, t, SMAPS_MODULE_DEBUGID, (size_t)row, &f[PB_SMAPS_ENTRY__MODULE_DEBUGID]);
	set_str(imp, t, SMAPS_MODULE_DEBUG_PATH, (size_t)row,
		&f[PB_SMAPS_ENTRY__MODULE_DEBUG_PATH]);
}

void tp_smaps_packet(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
		     size_t len)
{
	struct pz_reader r;
	struct pz_field f, pid[2];
	int64_t upid;

	if (len > UINT32_MAX || pz_decode_table(data, len, pid, 2) != PZ_OK)
		return;
	upid = tp_proc_get_process_main(imp, ev->machine,
					(uint32_t)pid[PB_SMAPS_PACKET__PID].value);
	if (upid < 0)
		return;
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == PB_SMAPS_PACKET__PACKED_ENTRIES)
			return; /* the packed form replaces the entries: not read yet */
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == PB_SMAPS_PACKET__ENTRIES && f.wire_type == PZ_WIRE_LEN)
			entry(imp, ev->ts, upid, f.data, f.size);
}
