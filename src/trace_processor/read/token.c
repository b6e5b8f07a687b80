// SPDX-License-Identifier: Apache-2.0
/*
 * token.c - the tokenizer: runs on each packet in file order. It works
 * out the packet's trace time (timestamp, its clock: the packet's, the
 * sequence's default, or BOOTTIME, of the packet's machine; converted
 * through the clock graph), feeds ClockSnapshots and RemoteClockSyncs to
 * the graph at once (later timestamps need them: clock_sync.c),
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
#include "trace_processor/import/android/android.h"
#include "trace_processor/import/system/system.h"
#include "trace_processor/import/track_event/track_event.h"
#include "trace_processor/read/read_int.h"

#define MAX_INFLATED_BYTES (512u << 20)

static void push(struct tp_read *r, const struct tp_event *ev)
{
	if (tp_sorter_push(&r->sorter, ev) < 0)
		tp_stat_add(&r->imp, "tokenizer_out_of_memory", -1, 0, 1);
	if (ev->ts > r->latest_ts)
		r->latest_ts = ev->ts;
}

/* ------------------------------------------------------------- ftrace ---- */

/*
 * Numbers the sorter queues a bundle of @cpu with the kinds @queues pushes
 * to, as Perfetto creates them: on a kind's first push for a CPU, that
 * kind's queues of every lower CPU it lacks too, in CPU order; within a
 * bundle, compact switches, then compact wakings, then events.
 */
static void number_queues(struct tp_read *r, uint32_t machine, uint32_t cpu, unsigned queues)
{
	uint64_t v;
	unsigned k;
	uint32_t i;

	if (!r->n_queues)
		r->n_queues = 2; /* packets, track events */
	for (k = 0; k < TP_Q_KINDS; k++) {
		if (!(queues & (1u << k)) || hmap_get(&r->queue_rank, tp_queue_key(machine, k, cpu), &v))
			continue;
		for (i = 0; i <= cpu; i++)
			if (!hmap_get(&r->queue_rank, tp_queue_key(machine, k, i), &v) &&
			    hmap_put(&r->queue_rank, tp_queue_key(machine, k, i), r->n_queues++) < 0)
				return;
	}
}

/*
 * One sort entry per bundle, at its earliest event: the kernel wrote each
 * CPU's events in order, so the parse stage merges bundles (bundle.c)
 * instead of the sorter sorting every event.
 */
/* The latest data start of @machine's CPUs so far, or INT64_MIN. */
static int64_t latest_start(struct tp_read *r, uint32_t machine)
{
	int64_t latest = INT64_MIN;
	struct hmap_iter it;
	uint64_t k, v;

	hmap_iter_init(&it, &r->ftrace_cpu_start);
	while (hmap_iter_next(&it, &k, &v))
		if ((uint32_t)(k >> 32) == machine && v != FTRACE_START_NONE &&
		    (int64_t)v > latest)
			latest = (int64_t)v;
	return latest;
}

/*
 * A CPU's first bundle says from when its data is whole: the end of the
 * bundle read before it (previous_bundle_end_timestamp, or the older
 * last_read_event_timestamp). The latest of these over the CPUs is
 * ftrace_latest_data_start_ns (parse.c); a first bundle without either
 * counts for nothing (FTRACE_START_NONE), as in Perfetto.
 */
static void first_bundle(struct tp_read *r, const uint8_t *data, size_t len, uint32_t machine,
			 uint64_t cpu, uint64_t boot)
{
	uint64_t k = ((uint64_t)machine << 32) | (uint32_t)cpu;
	uint64_t prev_end = 0, last_read = 0;
	bool has_prev_end = false, has_last_read = false;
	struct pz_reader rd;
	struct pz_field f;
	int64_t ts;

	if (hmap_get(&r->ftrace_cpu_start, k, NULL))
		return;
	pz_reader_init(&rd, data, len);
	while (pz_reader_next(&rd, &f) > 0) {
		if (f.wire_type != PZ_WIRE_VARINT)
			continue;
		if (f.id == PB_FTRACE_EVENT_BUNDLE__PREVIOUS_BUNDLE_END_TIMESTAMP) {
			prev_end = f.value;
			has_prev_end = true;
		} else if (f.id == PB_FTRACE_EVENT_BUNDLE__LAST_READ_EVENT_TIMESTAMP) {
			last_read = f.value;
			has_last_read = true;
		}
	}
	if ((has_prev_end || has_last_read) &&
	    tp_to_trace_time(&r->imp, boot, machine, (int64_t)(has_prev_end ? prev_end : last_read),
			     false, false, &ts) == 0 && (uint64_t)ts != FTRACE_START_NONE) {
		/* A new latest start of the machine: the metadata, in file order. */
		if (ts > latest_start(r, machine))
			tp_metadata_set_int(&r->imp, "ftrace_latest_data_start_ns", machine, ts);
		hmap_put(&r->ftrace_cpu_start, k, (uint64_t)ts);
	} else {
		hmap_put(&r->ftrace_cpu_start, k, FTRACE_START_NONE);
	}
}

static void ftrace_bundle(struct tp_read *r, const uint8_t *data, size_t len, uint32_t machine,
			  uint32_t gen)
{
	struct tp_import *imp = &r->imp;
	struct tp_event ev = {0};
	uint64_t cpu, boot;
	unsigned queues;
	int64_t ts;
	int rc;

	rc = tp_bundle_first_ts(data, len, &cpu, &ts, &queues);
	if (rc < 0) {
		tp_stat_add(imp, "ftrace_bundle_malformed", -1, machine, 1);
		return;
	}
	if (cpu >= TP_MAX_CPUS_PER_MACHINE) {
		tp_stat_add(imp, "ftrace_bundle_bad_cpu", -1, machine, 1);
		return;
	}
	/* ftrace of each machine is in that machine's boot clock. */
	boot = tp_clock_qualify(TP_CLOCK_BOOTTIME, 0, machine);
	first_bundle(r, data, len, machine, cpu, boot);
	if (rc == 0)
		return; /* no events */
	if (tp_to_trace_time(imp, boot, machine, ts, true, false, &ev.ts) < 0)
		return;
	number_queues(r, machine, (uint32_t)cpu, queues);
	ev.kind = TP_EV_BUNDLE;
	ev.aux = gen == UINT32_MAX ? 0 : gen + 1;
	ev.data = data;
	ev.len = (uint32_t)len;
	ev.cpu = (uint32_t)cpu;
	ev.machine = machine;
	push(r, &ev);
}

/* ----------------------------------------------------------- packets ---- */

static void compressed(struct tp_read *r, const uint8_t *data, size_t len, uint32_t machine)
{
	struct tp_import *imp = &r->imp;
	struct buf out = BUF_INIT;
	struct pz_reader rd;
	struct pz_field f;
	uint8_t *copy;

	/*
	 * traced compresses packets once. Nesting would let a small file
	 * recurse deep enough to overflow the stack, each level inflating up
	 * to MAX_INFLATED_BYTES more: it is refused.
	 */
	if (r->in_compressed ||
	    inflate_all(data, len, MAX_INFLATED_BYTES, &out) < 0) {
		tp_stat_add(imp, "compressed_packets_invalid", -1, machine, 1);
		buf_fini(&out);
		return;
	}
	copy = tp_arena_alloc(&r->arena, out.len);
	if (!copy) {
		buf_fini(&out);
		return;
	}
	memcpy(copy, out.data, out.len);
	r->in_compressed = true;
	pz_reader_init(&rd, copy, out.len);
	while (pz_reader_next(&rd, &f) > 0) {
		if (f.id == PB_TRACE__PACKET && f.wire_type == PZ_WIRE_LEN) {
			r->n_packets++;
			tp_tokenize_packet(r, f.data, f.size, machine);
		}
	}
	r->in_compressed = false;
	if (rd.err != PZ_OK)
		tp_stat_add(imp, "compressed_packets_invalid", -1, machine, 1);
	buf_fini(&out);
}

/*
 * The host is row 0 (raw id 0); other machines get rows as their ids appear.
 * When the first machine id comes before any packet of the host itself,
 * that machine is taken to be the one that wrote the trace: it becomes
 * row 0 (relabelled with its raw id), as Perfetto adopts it.
 */
/*
 * A PowerRails packet: its descriptors name tracks now, and each reading
 * is sorted on its own at its time (timestamp_ms, boot time; else the
 * packet's), as Perfetto's tokenizer forges a packet per reading.
 */
static void power_rails(struct tp_read *r, const struct tp_event *pkt, const uint8_t *data,
			size_t len, uint32_t seq_id)
{
	struct tp_import *imp = &r->imp;
	struct pz_reader rd;
	struct pz_field f;
	bool has_energy;
	int64_t idx = tp_power_rails_tokenize(imp, data, len, pkt->machine, pkt->ts, &has_energy);

	if (idx < 0)
		return;
	pz_reader_init(&rd, data, len);
	while (pz_reader_next(&rd, &f) > 0) {
		struct pz_field e[PB_POWER_RAILS_ENERGY_DATA__ENERGY + 1];
		struct tp_event ev = *pkt;

		if (f.id != PB_POWER_RAILS__ENERGY_DATA || f.wire_type != PZ_WIRE_LEN ||
		    pz_decode_table(f.data, f.size, e, PB_POWER_RAILS_ENERGY_DATA__ENERGY + 1) != PZ_OK)
			continue;
		if (e[PB_POWER_RAILS_ENERGY_DATA__TIMESTAMP_MS].id) {
			uint64_t ms = e[PB_POWER_RAILS_ENERGY_DATA__TIMESTAMP_MS].value;

			if (ms > (uint64_t)INT64_MAX / 1000000 ||
			    tp_to_trace_time(imp, tp_clock_qualify(TP_CLOCK_BOOTTIME, seq_id, pkt->machine),
					     pkt->machine, (int64_t)ms * 1000000, true, false, &ev.ts) < 0)
				continue;
		}
		ev.kind = TP_EV_POWER_RAIL;
		ev.data = f.data;
		ev.len = (uint32_t)f.size;
		ev.aux = (uint32_t)idx;
		push(r, &ev);
	}
}

static uint32_t machine_row(struct tp_read *r, uint64_t raw_id)
{
	struct tp_import *imp = &r->imp;
	struct tp_table *m = &imp->db->machine;
	uint64_t v;
	int64_t row;

	if (raw_id == 0)
		return 0;
	if (hmap_get(&r->machine_rows, raw_id, &v))
		return (uint32_t)v;
	if (!r->machine_adoption_done) {
		r->machine_adoption_done = true;
		if (!r->host_has_packets && hmap_put(&r->machine_rows, raw_id, 0) >= 0) {
			tp_set_int(m, MACHINE_RAW_ID, 0, (int64_t)raw_id);
			return 0;
		}
	}
	row = tp_table_append(m);
	if (row < 0 || hmap_put(&r->machine_rows, raw_id, (uint64_t)row) < 0)
		return 0;
	tp_set_int(m, MACHINE_RAW_ID, (size_t)row, (int64_t)raw_id);
	tp_set_int(m, MACHINE_LABEL_INDEX, (size_t)row, row);
	if (tp_proc_add_idle(imp, (uint32_t)row) < 0)
		tp_stat_add(imp, "tokenizer_out_of_memory", -1, (uint32_t)row, 1);
	return (uint32_t)row;
}

int tp_tokenize_packet(struct tp_read *r, const uint8_t *data, size_t len, uint32_t machine)
{
	struct tp_import *imp = &r->imp;
	struct pz_reader rd;
	struct pz_field f, payload = {0};
	uint64_t ts = 0, clock_id = 0, seq_id = 0, seq_flags = 0;
	bool has_ts = false, has_clock = false, cleared = false, dropped = false;
	uint32_t dropped_causes = 0;
	bool has_machine = false, has_sync = false;
	const uint8_t *defaults = NULL;
	uint32_t defaults_len = 0;
	struct tp_packet_hdr hdr = {0}; /* for the sequence state and track events */
	bool drop = false;
	int slot;
	struct tp_event ev = {0};
	int64_t trace_ts, snapshot_ts = -1;

	pz_reader_init(&rd, data, len);
	while (pz_reader_next(&rd, &f) > 0) {
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
			hdr.has_seq_id = true;
			break;
		case PB_TRACE_PACKET__SEQUENCE_FLAGS:
			seq_flags = f.value;
			break;
		case PB_TRACE_PACKET__INCREMENTAL_STATE_CLEARED:
			cleared = f.value != 0;
			break;
		case PB_TRACE_PACKET__PREVIOUS_PACKET_DROPPED:
			dropped = f.value != 0;
			dropped_causes = (uint32_t)f.value;
			break;
		case PB_TRACE_PACKET__TRACE_PACKET_DEFAULTS:
			defaults = f.data;
			defaults_len = f.size;
			break;
		case PB_TRACE_PACKET__MACHINE_ID:
			machine = machine_row(r, f.value);
			has_machine = f.value != 0;
			break;
		case PB_TRACE_PACKET__SYNCHRONIZATION_MARKER:
			has_sync = true;
			break;
		case PB_TRACE_PACKET__FIRST_PACKET_ON_SEQUENCE:
			hdr.first_on_seq = f.value != 0;
			break;
		case PB_TRACE_PACKET__INTERNED_DATA:
			hdr.interned = f.data;
			hdr.interned_len = f.size;
			break;
		case PB_TRACE_PACKET__TRUSTED_UID:
		case PB_TRACE_PACKET__TRUSTED_PID:
			break;
		default:
			if (f.wire_type == PZ_WIRE_LEN && !payload.id)
				payload = f;
			break;
		}
	}
	if (rd.err != PZ_OK) {
		tp_stat_add(imp, "packet_malformed", -1, machine, 1);
		return -EBADMSG;
	}
	/* Packets inside compressed_packets belong to the outer packet's machine. */
	if (!has_machine && !has_sync && !r->in_compressed)
		r->host_has_packets = true;
	slot = tp_seq_slot(imp, (uint32_t)seq_id);
	/* Counts, defaults, incremental state and interned data: sequence.c. */
	hdr.seq_id = (uint32_t)seq_id;
	hdr.seq_flags = (uint32_t)seq_flags;
	hdr.cleared = cleared ||
		      (seq_flags & PBE_TRACE_PACKET_SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED);
	hdr.dropped = dropped;
	hdr.dropped_causes = dropped_causes;
	hdr.machine = machine;
	hdr.defaults = defaults;
	hdr.defaults_len = defaults_len;
	if (slot >= 0) {
		unsigned st = tp_seq_on_packet(imp, (uint32_t)slot, &hdr);

		if (st & TP_SEQ_RESET)
			tp_te_seq_reset(imp, (uint32_t)slot);
		if (st & TP_SEQ_DROP)
			tp_te_seq_skipped(imp);
		drop = st & TP_SEQ_DROP;
	}

	switch (payload.id) {
	case PB_TRACE_PACKET__COMPRESSED_PACKETS:
		compressed(r, payload.data, payload.size, machine);
		return 0;
	case PB_TRACE_PACKET__FTRACE_EVENTS:
		/* Events may name interned data (kernel symbols) of this generation. */
		ftrace_bundle(r, payload.data, payload.size, machine,
			      slot >= 0 ? tp_seq_gen_of(imp, (uint32_t)slot) : UINT32_MAX);
		return 0;
	case PB_TRACE_PACKET__CLOCK_SNAPSHOT:
		snapshot_ts = tp_clock_snapshot_packet(imp, payload.data, payload.size,
						       (uint32_t)seq_id, machine);
		break;
	case PB_TRACE_PACKET__TRACE_CONFIG:
		/* Its stats in file order, as Perfetto's tokenizer; parsed later too. */
		tp_system_trace_config_tokenized(imp, payload.data, payload.size);
		break;
	case PB_TRACE_PACKET__SYSTEM_INFO:
		/* The syscall table, in file order as in Perfetto; parsed later too. */
		tp_ftrace_system_info(imp, payload.data, payload.size);
		break;
	case PB_TRACE_PACKET__REMOTE_CLOCK_SYNC:
		/* Only the clock graph needs it, as in Perfetto. */
		tp_remote_clock_sync(imp, payload.data, payload.size, machine);
		return 0;
	default:
		break;
	}
	if (drop)
		return 0;
	if (!has_clock)
		clock_id = slot >= 0 && tp_seq_default_clock(imp, (uint32_t)slot)
				   ? tp_seq_default_clock(imp, (uint32_t)slot)
				   : TP_CLOCK_BOOTTIME;
	/* Every clock of a packet is its machine's: the host's for packets without one. */
	clock_id = tp_clock_qualify(clock_id, (uint32_t)seq_id, machine);
	if (has_ts) {
		ts = (uint64_t)tp_clock_to_ns(imp, clock_id, (int64_t)ts);
		/* Perfetto converts no ClockSnapshot's own time. */
		if (tp_to_trace_time(imp, clock_id, machine, (int64_t)ts, true,
				     payload.id == PB_TRACE_PACKET__CLOCK_SNAPSHOT, &trace_ts) < 0)
			return -ENOENT;
	} else if (snapshot_ts >= 0) {
		trace_ts = snapshot_ts; /* a snapshot is stamped by its own reading */
	} else {
		trace_ts = r->latest_ts;
	}
	if (payload.id == PB_TRACE_PACKET__SERVICE_EVENT) {
		struct pz_field s[3];

		if (pz_decode_table(payload.data, payload.size, s, 3) == PZ_OK &&
		    s[PB_TRACING_SERVICE_EVENT__TRACING_STARTED].id)
			tp_ftrace_tracing_started(imp, trace_ts);
	}
	ev.ts = trace_ts;
	ev.kind = TP_EV_PACKET;
	ev.data = data;
	ev.len = (uint32_t)len;
	ev.seq_idx = slot >= 0 ? (uint16_t)slot : 0;
	ev.machine = machine;
	switch (payload.id) {
	case PB_TRACE_PACKET__SERVICE_EVENT:
	case PB_TRACE_PACKET__TRACE_STATS:
	case PB_TRACE_PACKET__FTRACE_STATS:
		/*
		 * As in Perfetto, in file order: the setup errors' logs (and their
		 * arg sets) come before any sorted event, whatever the packet's
		 * time, and the stats rows are made in the order the file has them.
		 */
		tp_system_packet(imp, &ev, payload.id, payload.data, payload.size);
		return 0;
	case PB_TRACE_PACKET__PERF_SAMPLE:
	case PB_TRACE_PACKET__STACK_SAMPLE:
	case PB_TRACE_PACKET__PROFILE_PACKET: {
		/* Samples name the callstacks interned in this generation. */
		uint32_t gen = slot >= 0 ? tp_seq_gen_of(imp, (uint32_t)slot) : UINT32_MAX;

		ev.aux = gen == UINT32_MAX ? 0 : gen + 1;
		break;
	}
	case PB_TRACE_PACKET__POWER_RAILS:
		power_rails(r, &ev, payload.data, payload.size, (uint32_t)seq_id);
		return 0;
	case PB_TRACE_PACKET__TRACK_EVENT:
	case PB_TRACE_PACKET__TRACK_DESCRIPTOR:
	case PB_TRACE_PACKET__THREAD_DESCRIPTOR:
	case PB_TRACE_PACKET__STREAMING_PROFILE_PACKET:
	case PB_TRACE_PACKET__TRANSLATION_TABLE:
	case PB_TRACE_PACKET__TRACK_EVENT_RANGE_OF_INTEREST:
		/* Track events get their own time and sort entry: te_token.c. */
		if (!tp_te_tokenize(imp, slot, &hdr, has_ts ? &trace_ts : NULL, payload.id,
				    payload.data, payload.size, &ev))
			return 0;
		break;
	default:
		break;
	}
	push(r, &ev);
	return 0;
}
