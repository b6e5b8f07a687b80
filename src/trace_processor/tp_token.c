// SPDX-License-Identifier: Apache-2.0
/*
 * tp_token.c - the tokenizer: runs on each packet in file order. It works
 * out the packet's trace time (timestamp, its clock: the packet's, the
 * sequence's default, or BOOTTIME; converted through the clock graph),
 * feeds ClockSnapshots to the graph at once (later timestamps need them),
 * unpacks compressed_packets, splits ftrace bundles into one sort entry per
 * event (compact_sched arrays into one record per event), and pushes the
 * rest whole. Nothing here writes tables except stats.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/inflate.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/tp_int.h"

#define MAX_INFLATED_BYTES (512u << 20)

static struct tp_sequence *sequence(struct tp_import *imp, uint32_t id)
{
	size_t i;

	for (i = 0; i < imp->n_seqs; i++)
		if (imp->seqs[i].id == id)
			return &imp->seqs[i];
	if (imp->n_seqs == TP_MAX_SEQUENCES)
		return NULL;
	memset(&imp->seqs[imp->n_seqs], 0, sizeof(imp->seqs[0]));
	imp->seqs[imp->n_seqs].id = id;
	return &imp->seqs[imp->n_seqs++];
}

/* Clock ids 64..127 belong to one sequence: qualify them with it. */
static uint64_t qualify_clock(uint64_t clock_id, uint32_t seq_id)
{
	if (clock_id >= 64 && clock_id < 128)
		return ((uint64_t)seq_id << 32) | clock_id;
	return clock_id;
}

/* Adds the snapshot to the graph; returns its time in trace time, or -1. */
static int64_t clock_snapshot(struct tp_import *imp, const uint8_t *data, size_t len,
			      uint32_t seq_id)
{
	uint64_t ids[64];
	int64_t values[64];
	size_t n = 0, i;
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_CLOCK_SNAPSHOT__PRIMARY_TRACE_CLOCK && f.wire_type == PZ_WIRE_VARINT) {
			tp_clock_set_trace_clock(imp->clocks, f.value);
			continue;
		}
		if (f.id == PB_CLOCK_SNAPSHOT__CLOCKS && f.wire_type == PZ_WIRE_LEN && n < 64) {
			struct pz_field c[5];

			if (pz_decode_table(f.data, f.size, c, 5) != PZ_OK)
				continue;
			if (!c[PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID].id ||
			    !c[PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP].id)
				continue;
			ids[n] = qualify_clock(c[PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID].value, seq_id);
			values[n] = (int64_t)c[PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP].value;
			if (c[PB_CLOCK_SNAPSHOT_CLOCK__UNIT_MULTIPLIER_NS].id &&
			    c[PB_CLOCK_SNAPSHOT_CLOCK__UNIT_MULTIPLIER_NS].value > 1)
				values[n] *= (int64_t)c[PB_CLOCK_SNAPSHOT_CLOCK__UNIT_MULTIPLIER_NS].value;
			n++;
		}
	}
	if (r.err != PZ_OK)
		tp_stat_add(imp, "clock_snapshot_malformed", -1, 0, 1);
	if (tp_clock_add_snapshot(imp->clocks, ids, values, n) < 0)
		tp_stat_add(imp, "clock_sync_cache_miss", -1, 0, 1);
	for (i = 0; i < n; i++) {
		int64_t ts;

		if (tp_clock_to_trace(imp->clocks, ids[i], values[i], &ts) == 0)
			return ts;
	}
	return -1;
}

static int to_trace_time(struct tp_import *imp, uint64_t clock_id, int64_t ts, int64_t *out)
{
	if (tp_clock_to_trace(imp->clocks, clock_id, ts, out) == 0)
		return 0;
	tp_stat_add(imp, "clock_sync_failure", -1, 0, 1);
	return -ENOENT;
}

static void push(struct tp_import *imp, const struct tp_event *ev)
{
	if (tp_sorter_push(&imp->sorter, ev) < 0)
		tp_stat_add(imp, "tokenizer_out_of_memory", -1, 0, 1);
	if (ev->ts > imp->latest_ts)
		imp->latest_ts = ev->ts;
}

/* ------------------------------------------------------------- ftrace ---- */

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 1024;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	p = realloc(*arr, c * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

/* Reads a packed varint column into @out (up to @max values). */
static size_t packed_column(const struct pz_field *f, uint64_t *out, size_t max)
{
	struct pz_packed it;
	uint64_t v;
	size_t n = 0;

	if (!f->id || f->wire_type != PZ_WIRE_LEN)
		return 0;
	pz_packed_init(&it, f);
	while (n < max && pz_packed_next_varint(&it, &v) > 0)
		out[n++] = v;
	return n;
}

static void compact_sched(struct tp_import *imp, const uint8_t *data, size_t len, uint32_t cpu,
			  int64_t offset, uint32_t machine)
{
	struct pz_field f[13];
	struct pz_reader r;
	struct pz_field fl;
	uint32_t *comms = NULL;
	size_t n_comms = 0, cap_comms = 0, n, i, k;
	uint64_t *cols[6] = {0};
	int64_t ts;

	if (pz_decode_table(data, len, f, 13) != PZ_OK) {
		tp_stat_add(imp, "compact_sched_malformed", -1, machine, 1);
		return;
	}
	/* The intern table is repeated (not packed): walk every entry. */
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &fl) > 0) {
		if (fl.id != PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__INTERN_TABLE ||
		    fl.wire_type != PZ_WIRE_LEN)
			continue;
		if (grow((void **)&comms, &cap_comms, n_comms + 1, sizeof(*comms)) < 0)
			break;
		comms[n_comms++] = tp_str_intern(&imp->db->strings, (const char *)fl.data, fl.size);
	}
	for (k = 0; k < 2; k++) {
		/* k = 0: switches (fields 1..4, 6); k = 1: wakings (7..12). */
		const struct pz_field *tsf = &f[k ? 7 : 1];
		size_t max = tsf->id ? tsf->size : 0; /* a varint takes >= 1 byte */
		uint64_t *tsv;

		if (!max)
			continue;
		tsv = malloc(max * sizeof(*tsv));
		for (i = 0; i < 5; i++)
			cols[i] = malloc(max * sizeof(uint64_t));
		if (!tsv || !cols[0] || !cols[1] || !cols[2] || !cols[3] || !cols[4])
			goto next;
		n = packed_column(tsf, tsv, max);
		if (k == 0) {
			size_t a = packed_column(&f[2], cols[0], max), b = packed_column(&f[3], cols[1], max),
			       c = packed_column(&f[4], cols[2], max), d = packed_column(&f[6], cols[3], max);

			if (a != n || b != n || c != n || d != n) {
				tp_stat_add(imp, "compact_sched_has_parse_errors", -1, machine, 1);
				n = n < a ? n : a;
				n = n < b ? n : b;
				n = n < c ? n : c;
				n = n < d ? n : d;
			}
			if (grow((void **)&imp->csw, &imp->cap_csw, imp->n_csw + n, sizeof(*imp->csw)) < 0)
				goto next;
		} else {
			size_t a = packed_column(&f[8], cols[0], max), b = packed_column(&f[9], cols[1], max),
			       c = packed_column(&f[10], cols[2], max), d = packed_column(&f[11], cols[3], max),
			       e = packed_column(&f[12], cols[4], max);

			if (a != n || b != n || c != n || d != n) {
				tp_stat_add(imp, "compact_sched_has_parse_errors", -1, machine, 1);
				n = n < a ? n : a;
				n = n < b ? n : b;
				n = n < c ? n : c;
				n = n < d ? n : d;
			}
			if (e < n)
				for (i = e; i < n; i++)
					cols[4][i] = 0;
			if (grow((void **)&imp->cwk, &imp->cap_cwk, imp->n_cwk + n, sizeof(*imp->cwk)) < 0)
				goto next;
		}
		ts = 0;
		for (i = 0; i < n; i++) {
			struct tp_event ev = {0};
			uint64_t ci = cols[3][i];

			ts += (int64_t)tsv[i];
			ev.ts = ts + offset;
			ev.cpu = cpu;
			ev.machine = machine;
			if (k == 0) {
				struct tp_compact_switch *s = &imp->csw[imp->n_csw];

				s->prev_state = (int64_t)cols[0][i];
				s->next_pid = (int32_t)cols[1][i];
				s->next_prio = (int32_t)cols[2][i];
				s->next_comm = ci < n_comms ? comms[ci] : 0;
				ev.kind = TP_EV_COMPACT_SWITCH;
				ev.aux = (uint32_t)imp->n_csw++;
			} else {
				struct tp_compact_waking *w = &imp->cwk[imp->n_cwk];

				w->pid = (int32_t)cols[0][i];
				w->target_cpu = (int32_t)cols[1][i];
				w->prio = (int32_t)cols[2][i];
				w->comm = ci < n_comms ? comms[ci] : 0;
				w->common_flags = (uint32_t)cols[4][i];
				ev.kind = TP_EV_COMPACT_WAKING;
				ev.aux = (uint32_t)imp->n_cwk++;
			}
			if (ci >= n_comms)
				tp_stat_add(imp, "compact_sched_has_parse_errors", -1, machine, 1);
			push(imp, &ev);
		}
next:
		free(tsv);
		for (i = 0; i < 5; i++) {
			free(cols[i]);
			cols[i] = NULL;
		}
	}
	free(comms);
}

static void ftrace_bundle(struct tp_import *imp, const uint8_t *data, size_t len, uint32_t machine)
{
	struct pz_field f[11];
	struct pz_reader r;
	struct pz_field e;
	int64_t offset = 0;
	uint32_t cpu;

	if (pz_decode_table(data, len, f, 11) != PZ_OK) {
		tp_stat_add(imp, "ftrace_bundle_malformed", -1, machine, 1);
		return;
	}
	cpu = (uint32_t)f[PB_FTRACE_EVENT_BUNDLE__CPU].value;
	if (cpu > 4096) {
		tp_stat_add(imp, "ftrace_bundle_bad_cpu", -1, machine, 1);
		return;
	}
	if (f[PB_FTRACE_EVENT_BUNDLE__LOST_EVENTS].id && f[PB_FTRACE_EVENT_BUNDLE__LOST_EVENTS].value)
		tp_stat_add(imp, "ftrace_cpu_has_data_loss", cpu, machine, 1);
	/* A non-boot ftrace clock comes with one (ftrace, boot) pair. */
	if (f[PB_FTRACE_EVENT_BUNDLE__FTRACE_CLOCK].id && f[PB_FTRACE_EVENT_BUNDLE__FTRACE_CLOCK].value &&
	    f[PB_FTRACE_EVENT_BUNDLE__FTRACE_TIMESTAMP].id && f[PB_FTRACE_EVENT_BUNDLE__BOOT_TIMESTAMP].id)
		offset = (int64_t)f[PB_FTRACE_EVENT_BUNDLE__BOOT_TIMESTAMP].value -
			 (int64_t)f[PB_FTRACE_EVENT_BUNDLE__FTRACE_TIMESTAMP].value;
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &e) > 0) {
		struct tp_event ev = {0};
		struct pz_reader er;
		struct pz_field ef;
		bool has_ts = false;

		if (e.id == PB_FTRACE_EVENT_BUNDLE__ERROR) {
			tp_stat_add(imp, "ftrace_abi_errors", -1, machine, 1);
			continue;
		}
		if (e.id != PB_FTRACE_EVENT_BUNDLE__EVENT || e.wire_type != PZ_WIRE_LEN)
			continue;
		pz_reader_init(&er, e.data, e.size);
		while (pz_reader_next(&er, &ef) > 0) {
			if (ef.id == PB_FTRACE_EVENT__TIMESTAMP && ef.wire_type == PZ_WIRE_VARINT) {
				ev.ts = (int64_t)ef.value + offset;
				has_ts = true;
				break;
			}
		}
		if (!has_ts) {
			tp_stat_add(imp, "ftrace_event_without_timestamp", -1, machine, 1);
			continue;
		}
		if (to_trace_time(imp, TP_CLOCK_BOOTTIME, ev.ts, &ev.ts) < 0)
			continue;
		ev.kind = TP_EV_FTRACE;
		ev.data = e.data;
		ev.len = e.size;
		ev.cpu = cpu;
		ev.machine = machine;
		push(imp, &ev);
	}
	if (f[PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED].id)
		compact_sched(imp, f[PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED].data,
			      f[PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED].size, cpu, offset, machine);
	if (r.err != PZ_OK)
		tp_stat_add(imp, "ftrace_bundle_malformed", -1, machine, 1);
}

/* ----------------------------------------------------------- packets ---- */

static void compressed(struct tp_import *imp, const uint8_t *data, size_t len, uint32_t machine)
{
	struct buf out = BUF_INIT;
	struct pz_reader r;
	struct pz_field f;
	uint8_t *copy;

	if (inflate_all(data, len, MAX_INFLATED_BYTES, &out) < 0) {
		tp_stat_add(imp, "compressed_packets_invalid", -1, machine, 1);
		buf_fini(&out);
		return;
	}
	copy = tp_arena_alloc(&imp->arena, out.len);
	if (!copy) {
		buf_fini(&out);
		return;
	}
	memcpy(copy, out.data, out.len);
	pz_reader_init(&r, copy, out.len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_TRACE__PACKET && f.wire_type == PZ_WIRE_LEN) {
			imp->n_packets++;
			tp_tokenize_packet(imp, f.data, f.size, machine);
		}
	}
	if (r.err != PZ_OK)
		tp_stat_add(imp, "compressed_packets_invalid", -1, machine, 1);
	buf_fini(&out);
}

/* The host is row 0; other machines get rows as their ids appear. */
static uint32_t machine_row(struct tp_import *imp, uint64_t raw_id)
{
	struct tp_table *m = &imp->db->machine;
	size_t i;
	int64_t row;

	for (i = 0; i < m->n_rows; i++)
		if (tp_col_int(m, MACHINE_RAW_ID)[i] == (int64_t)raw_id)
			return (uint32_t)i;
	row = tp_table_append(m);
	if (row < 0)
		return 0;
	tp_set_int(m, MACHINE_RAW_ID, (size_t)row, (int64_t)raw_id);
	return (uint32_t)row;
}

int tp_tokenize_packet(struct tp_import *imp, const uint8_t *data, size_t len, uint32_t machine)
{
	struct pz_reader r;
	struct pz_field f, payload = {0};
	uint64_t ts = 0, clock_id = 0, seq_id = 0, seq_flags = 0;
	bool has_ts = false, has_clock = false, cleared = false, dropped = false;
	const uint8_t *defaults = NULL;
	uint32_t defaults_len = 0;
	struct tp_sequence *seq;
	struct tp_event ev = {0};
	int64_t trace_ts, snapshot_ts = -1;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		switch (f.id) {
		case PB_TRACE_PACKET__TIMESTAMP:
			ts = f.value;
			has_ts = true;
			break;
		case PB_TRACE_PACKET__TIMESTAMP_CLOCK_ID:
			clock_id = f.value;
			has_clock = true;
			break;
		case PB_TRACE_PACKET__TRUSTED_PACKET_SEQUENCE_ID:
			seq_id = f.value;
			break;
		case PB_TRACE_PACKET__SEQUENCE_FLAGS:
			seq_flags = f.value;
			break;
		case PB_TRACE_PACKET__INCREMENTAL_STATE_CLEARED:
			cleared = f.value != 0;
			break;
		case PB_TRACE_PACKET__PREVIOUS_PACKET_DROPPED:
			dropped = f.value != 0;
			break;
		case PB_TRACE_PACKET__TRACE_PACKET_DEFAULTS:
			defaults = f.data;
			defaults_len = f.size;
			break;
		case PB_TRACE_PACKET__MACHINE_ID:
			machine = machine_row(imp, f.value);
			break;
		case PB_TRACE_PACKET__TRUSTED_UID:
		case PB_TRACE_PACKET__TRUSTED_PID:
		case PB_TRACE_PACKET__FIRST_PACKET_ON_SEQUENCE:
		case PB_TRACE_PACKET__INTERNED_DATA:
			break;
		default:
			if (f.wire_type == PZ_WIRE_LEN && !payload.id)
				payload = f;
			break;
		}
	}
	if (r.err != PZ_OK) {
		tp_stat_add(imp, "packet_malformed", -1, machine, 1);
		return -EBADMSG;
	}
	seq = sequence(imp, (uint32_t)seq_id);
	if (seq && (cleared || (seq_flags & PBE_TRACE_PACKET_SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED)))
		seq->seen_clear = true;
	if (seq && defaults) {
		struct pz_field d[59];

		if (pz_decode_table(defaults, defaults_len, d, 59) == PZ_OK &&
		    d[PB_TRACE_PACKET_DEFAULTS__TIMESTAMP_CLOCK_ID].id)
			seq->default_clock_id = d[PB_TRACE_PACKET_DEFAULTS__TIMESTAMP_CLOCK_ID].value;
	}
	if (seq) {
		/* The first packet of a sequence always says "dropped before". */
		if (dropped && seq->n_packets > 0)
			seq->n_lost++;
		seq->n_packets++;
	}

	switch (payload.id) {
	case PB_TRACE_PACKET__COMPRESSED_PACKETS:
		compressed(imp, payload.data, payload.size, machine);
		return 0;
	case PB_TRACE_PACKET__FTRACE_EVENTS:
		ftrace_bundle(imp, payload.data, payload.size, machine);
		return 0;
	case PB_TRACE_PACKET__CLOCK_SNAPSHOT:
		snapshot_ts = clock_snapshot(imp, payload.data, payload.size, (uint32_t)seq_id);
		break;
	default:
		break;
	}
	if (!has_clock)
		clock_id = seq && seq->default_clock_id ? seq->default_clock_id : TP_CLOCK_BOOTTIME;
	clock_id = qualify_clock(clock_id, (uint32_t)seq_id);
	if (has_ts) {
		if (to_trace_time(imp, clock_id, (int64_t)ts, &trace_ts) < 0)
			return -ENOENT;
	} else if (snapshot_ts >= 0) {
		trace_ts = snapshot_ts; /* a snapshot is stamped by its own reading */
	} else {
		trace_ts = imp->latest_ts;
	}
	if (payload.id == PB_TRACE_PACKET__SERVICE_EVENT) {
		struct pz_field s[3];

		if (pz_decode_table(payload.data, payload.size, s, 3) == PZ_OK &&
		    s[PB_TRACING_SERVICE_EVENT__TRACING_STARTED].id &&
		    imp->tracing_started_ts == TP_NULL_INT)
			imp->tracing_started_ts = trace_ts;
	}
	ev.ts = trace_ts;
	ev.kind = TP_EV_PACKET;
	ev.data = data;
	ev.len = (uint32_t)len;
	ev.seq_idx = seq ? (uint16_t)(seq - imp->seqs) : 0;
	ev.machine = machine;
	push(imp, &ev);
	return 0;
}
