// SPDX-License-Identifier: Apache-2.0
/*
 * journald.c - systemd journal entries (traced_probes' linux.systemd_journald
 * data source, SystemdJournaldEvent) into __intrinsic_logs, as Perfetto
 * imports them: source 'systemd_journald', the writer's thread (tid, or
 * the pid when the entry has none) when a pid is known, priority 0 when
 * absent, tag and message NULL when absent, and uid, comm, systemd_unit,
 * hostname and transport as args. A flush's statistics event (num_total / num_failed)
 * sets the systemd_journal_num_* stats instead of adding an entry.
 */
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/common/common.h"
#include "trace_processor/import/system/system.h"

#define J(f) PB_SYSTEMD_JOURNALD_EVENT__##f

/* A string field of @e as a string id, or 0 when absent. */
static uint32_t str_of(struct tp_import *imp, const struct pz_field *f)
{
	if (!f->id || f->wire_type != PZ_WIRE_LEN)
		return 0;
	return tp_str_intern(&imp->db->strings, (const char *)f->data, f->size);
}

static void str_arg(struct tp_import *imp, struct tp_argset *b, const char *key, uint32_t v)
{
	if (v)
		tp_argset_str(imp, b, tp_db_str(imp->db, key), v);
}

void tp_journald_event(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
		       size_t len)
{
	struct pz_field e[J(NUM_FAILED) + 1];
	struct tp_table *t = &imp->db->logs;
	struct tp_argset args = {0};
	uint32_t pid, tid, msg;
	int64_t row, set;

	if (pz_decode_table(data, len, e, J(NUM_FAILED) + 1) != PZ_OK)
		return;
	if (e[J(NUM_FAILED)].id)
		tp_stat_set(imp, "systemd_journal_num_failed", -1, ev->machine,
			    (int64_t)e[J(NUM_FAILED)].value);
	if (e[J(NUM_TOTAL)].id)
		tp_stat_set(imp, "systemd_journal_num_total", -1, ev->machine,
			    (int64_t)e[J(NUM_TOTAL)].value);
	if (e[J(NUM_FAILED)].id || e[J(NUM_TOTAL)].id)
		return;
	row = tp_table_append(t);
	if (row < 0)
		return;
	pid = e[J(PID)].id ? (uint32_t)e[J(PID)].value : 0;
	tid = e[J(TID)].id ? (uint32_t)e[J(TID)].value : pid;
	tp_set_int(t, LOG_TS, (size_t)row, ev->ts);
	if (pid != 0) {
		int64_t utid = tp_proc_update_thread(imp, ev->machine, tid, pid);

		if (utid >= 0)
			tp_set_int(t, LOG_UTID, (size_t)row, utid);
	}
	tp_set_int(t, LOG_PRIO, (size_t)row, e[J(PRIO)].id ? (uint32_t)e[J(PRIO)].value : 0);
	tp_set_str(t, LOG_LOG_SOURCE, (size_t)row, tp_db_str(imp->db, "systemd_journald"));
	if (str_of(imp, &e[J(TAG)]))
		tp_set_str(t, LOG_TAG, (size_t)row, str_of(imp, &e[J(TAG)]));
	msg = str_of(imp, &e[J(MESSAGE)]);
	if (msg)
		tp_set_str(t, LOG_MSG, (size_t)row, msg);
	if (e[J(UID)].id)
		tp_argset_int(imp, &args, tp_db_str(imp->db, "uid"), (uint32_t)e[J(UID)].value);
	str_arg(imp, &args, "comm", str_of(imp, &e[J(COMM)]));
	str_arg(imp, &args, "systemd_unit", str_of(imp, &e[J(SYSTEMD_UNIT)]));
	str_arg(imp, &args, "hostname", str_of(imp, &e[J(HOSTNAME)]));
	str_arg(imp, &args, "transport", str_of(imp, &e[J(TRANSPORT)]));
	set = tp_argset_commit(imp, &args);
	tp_argset_fini(&args);
	if (set != TP_NULL_INT)
		tp_set_int(t, LOG_ARG_SET_ID, (size_t)row, set);
}
