// SPDX-License-Identifier: Apache-2.0
/*
 * ufs.c - ufshcd_command ftrace events (UFS host controller): the global
 * counter "io.ufs.command.count" of busy command slots (the doorbell's
 * bits; without a doorbell, 1 on a send and 0 on a completion) and, per
 * command slot (tag), a slice "io.ufs.command.tag[NNN]" named by the SCSI
 * command from its send (str_t 0) to its completion. Called by ftrace.c
 * in time order.
 */
#include <stdio.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/ftrace/ftrace_int.h"

#define UFS_FIELDS (PB_UFSHCD_COMMAND_FTRACE_EVENT__STR_T + 1)

/* SCSI opcodes the UFS driver sends, by their names in the SCSI spec. */
static const char *scsi_name(uint32_t op)
{
	switch (op) {
	case 0: return "TEST UNIT READY";
	case 3: return "REQUEST SENSE";
	case 4: return "FORMAT UNIT";
	case 8: return "READ (6)";
	case 10: return "WRITE (6)";
	case 18: return "INQUIRY";
	case 27: return "START STOP UNIT";
	case 29: return "SEND DIAGNOSTIC";
	case 37: return "READ CAPACITY (10)";
	case 40: return "READ (10)";
	case 42: return "WRITE (10)";
	case 47: return "VERIFY";
	case 52: return "PRE-FETCH (10)";
	case 53: return "SYNCHRONIZE CACHE (10)";
	case 59: return "WRITE BUFFER";
	case 60: return "READ BUFFER";
	case 66: return "UNMAP";
	case 85: return "MODE SELECT (10)";
	case 90: return "MODE SENSE (10)";
	case 136: return "READ (16)";
	case 138: return "WRITE (16)";
	case 144: return "PRE-FETCH (16)";
	case 145: return "SYNCHRONIZE CACHE (16)";
	case 158: return "READ CAPACITY (16)";
	case 160: return "REPORT LUNS";
	case 162: return "SECURITY PROTOCOL IN";
	case 181: return "SECURITY PROTOCOL OUT";
	default: return "UNDEFINED";
	}
}

static int popcount32(uint32_t v)
{
	int n = 0;

	for (; v; v &= v - 1)
		n++;
	return n;
}

void tp_ufshcd_command(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
		       size_t len)
{
	struct pz_field f[UFS_FIELDS];
	struct tp_dim dim = {"ufs_tag", TP_DIM_UINT, 0};
	uint32_t doorbell, tag, gid, str_t;
	char name[64];
	int64_t track;
	int busy;

	if (pz_decode_table(data, len, f, UFS_FIELDS) != PZ_OK)
		return;
	doorbell = (uint32_t)f[PB_UFSHCD_COMMAND_FTRACE_EVENT__DOORBELL].value;
	tag = (uint32_t)f[PB_UFSHCD_COMMAND_FTRACE_EVENT__TAG].value;
	gid = (uint32_t)f[PB_UFSHCD_COMMAND_FTRACE_EVENT__GROUP_ID].value;
	str_t = (uint32_t)f[PB_UFSHCD_COMMAND_FTRACE_EVENT__STR_T].value;
	busy = doorbell ? popcount32(doorbell) : str_t == 1 ? 0 : 1;
	tp_counter_add(imp, ev->ts,
		       tp_track_dims(imp, "ufs_command_count",
				     tp_db_str(imp->db, "io.ufs.command.count"), true, ev->machine,
				     NULL, 0, 0),
		       (double)busy);
	snprintf(name, sizeof(name), "io.ufs.command.tag[%03u]", tag);
	dim.v = tag;
	track = tp_track_dims(imp, "ufs_command_tag", tp_db_str(imp->db, name), false, ev->machine,
			      &dim, 1, 0);
	if (str_t != 0) {
		tp_slice_end(imp, ev->ts, track, 0, 0);
		return;
	}
	if (gid > 0)
		snprintf(name, sizeof(name), "%s (GID=0x%x)",
			 scsi_name((uint32_t)f[PB_UFSHCD_COMMAND_FTRACE_EVENT__OPCODE].value), gid);
	else
		snprintf(name, sizeof(name), "%s",
			 scsi_name((uint32_t)f[PB_UFSHCD_COMMAND_FTRACE_EVENT__OPCODE].value));
	tp_slice_begin(imp, ev->ts, track, 0, tp_db_str(imp->db, name));
}
