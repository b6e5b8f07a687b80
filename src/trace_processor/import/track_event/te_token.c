// SPDX-License-Identifier: Apache-2.0
/*
 * te_token.c - the TrackEvent tokenizer: runs in file order from the read
 * layer's tokenizer. It sets thread descriptors on the sequence's
 * generation (sequence.c keeps them), keeps each sequence's reference
 * timestamps and incremental counters, reserves descriptor tracks
 * (te_track.c), and gives every TrackEvent its timestamp and absolute
 * counter values, saved in a small record the parser reads after
 * sorting (te_state.c). Costs per event: one record (40 bytes).
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/track_event/te_int.h"


/* Shorter names for long generated constants. */
#define THREAD_TIME PBE_COUNTER_DESCRIPTOR_BUILTIN_COUNTER_TYPE__COUNTER_THREAD_TIME_NS
#define THREAD_INSTR PBE_COUNTER_DESCRIPTOR_BUILTIN_COUNTER_TYPE__COUNTER_THREAD_INSTRUCTION_COUNT
#define MERGE_NONE PBE_TRACK_DESCRIPTOR_SIBLING_MERGE_BEHAVIOR__SIBLING_MERGE_BEHAVIOR_NONE
#define MERGE_BY_KEY \
	PBE_TRACK_DESCRIPTOR_SIBLING_MERGE_BEHAVIOR__SIBLING_MERGE_BEHAVIOR_BY_SIBLING_MERGE_KEY

/* ------------------------------------------------------------- sequences ---- */

static void reset_deltas(struct te_seq *s)
{
	s->ts_valid = false;
	s->ref_ts_ns = 0;
	s->ref_thread_ts_ns = 0;
	s->ref_thread_instr = 0;
	hmap_clear(&s->counters);
}

void tp_te_seq_reset(struct tp_import *imp, uint32_t slot)
{
	/* Without state yet, there are no deltas to forget. */
	if (imp->te && slot < TP_MAX_SEQUENCES)
		reset_deltas(&imp->te->seqs[slot]);
}

void tp_te_seq_skipped(struct tp_import *imp)
{
	struct tp_te *te;

	if (imp->analyze_proto_content && (te = te_get(imp)))
		te->skipped_invalid = true;
}

/* ------------------------------------------------------------ descriptors ---- */

/* Sets the sequence's thread descriptor and its reference timestamps. */
static void thread_descriptor(struct tp_import *imp, struct tp_te *te, uint32_t idx,
			      const uint8_t *data, size_t len)
{
	struct pz_field d[9];
	struct te_seq *s = &te->seqs[idx];
	struct tp_seq_gen *g;

	if (pz_decode_table(data, len, d, 9) != PZ_OK) {
		tp_stat_add(imp, "track_event_tokenizer_errors", -1, 0, 1);
		return;
	}
	g = tp_seq_new_gen(imp, idx);
	if (g) {
		g->has_thread = true;
		g->pid = pz_field_int32(&d[PB_THREAD_DESCRIPTOR__PID]);
		g->tid = pz_field_int64(&d[PB_THREAD_DESCRIPTOR__TID]);
	}
	s->ts_valid = true;
	s->ref_ts_ns =
		tp_sat_mul(pz_field_int64(&d[PB_THREAD_DESCRIPTOR__REFERENCE_TIMESTAMP_US]), 1000);
	s->ref_thread_ts_ns =
		tp_sat_mul(pz_field_int64(&d[PB_THREAD_DESCRIPTOR__REFERENCE_THREAD_TIME_US]),
			   1000);
	s->ref_thread_instr =
		pz_field_int64(&d[PB_THREAD_DESCRIPTOR__REFERENCE_THREAD_INSTRUCTION_COUNT]);
}

static const char *const k_units[] = {NULL, "ns", "count", "bytes"};

static void counter_descriptor(struct tp_import *imp, struct te_track *r, const uint8_t *data,
			       size_t len)
{
	struct pz_field c[8];
	struct pz_reader rd;
	struct pz_field f;
	char cats[1024];
	size_t n = 0;
	uint64_t type, unit;

	r->is_counter = true;
	r->has_counter_details = true;
	r->unit_multiplier = 1;
	if (pz_decode_table(data, len, c, 8) != PZ_OK) {
		tp_stat_add(imp, "track_event_tokenizer_errors", -1, 0, 1);
		return;
	}
	pz_reader_init(&rd, data, len);
	while (pz_reader_next(&rd, &f) > 0) {
		if (f.id != PB_COUNTER_DESCRIPTOR__CATEGORIES || f.wire_type != PZ_WIRE_LEN)
			continue;
		if (n + f.size + 1 >= sizeof(cats))
			break;
		if (n)
			cats[n++] = ',';
		memcpy(cats + n, f.data, f.size);
		n += f.size;
	}
	if (n)
		r->category = tp_str_intern(&imp->db->strings, cats, n);
	type = c[PB_COUNTER_DESCRIPTOR__TYPE].value;
	if (!r->name) {
		if (type == THREAD_TIME)
			r->name = imp->te->k.thread_time;
		else if (type == THREAD_INSTR)
			r->name = imp->te->k.thread_instruction_count;
	}
	r->is_incremental = c[PB_COUNTER_DESCRIPTOR__IS_INCREMENTAL].value != 0;
	r->unit_multiplier = pz_field_int64(&c[PB_COUNTER_DESCRIPTOR__UNIT_MULTIPLIER]);
	if (!c[PB_COUNTER_DESCRIPTOR__UNIT_MULTIPLIER].id)
		r->unit_multiplier = 1;
	r->y_axis_share_key = te_str(imp, &c[PB_COUNTER_DESCRIPTOR__Y_AXIS_SHARE_KEY]);
	unit = c[PB_COUNTER_DESCRIPTOR__UNIT].value;
	if (type == THREAD_TIME) {
		r->unit = tp_db_str(imp->db, "ns");
		r->builtin_type = imp->te->k.thread_time;
	} else if (type == THREAD_INSTR) {
		r->unit = tp_db_str(imp->db, "count");
		r->builtin_type = imp->te->k.thread_instruction_count;
	} else if (unit != 0 && unit < sizeof(k_units) / sizeof(k_units[0])) {
		r->unit = tp_db_str(imp->db, k_units[unit]);
	} else {
		r->unit = te_str(imp, &c[PB_COUNTER_DESCRIPTOR__UNIT_NAME]);
	}
}

/* Return: whether the parser should see the descriptor too. */
static bool track_descriptor(struct tp_import *imp, struct tp_te *te, uint32_t idx,
			     const struct tp_packet_hdr *h, const uint8_t *data, size_t len)
{
	const struct tp_seq_gen *g;
	struct pz_field d[21];
	struct te_track r;
	uint64_t v;

	memset(&r, 0, sizeof(r));
	r.pid = r.tid = TP_NULL_INT;
	r.sibling_order_rank = INT32_MIN;
	r.seq_id = h->seq_id;
	if (pz_decode_table(data, len, d, 21) != PZ_OK || !d[PB_TRACK_DESCRIPTOR__UUID].id) {
		tp_stat_add(imp, "track_descriptor_missing_uuid", -1, h->machine, 1);
		return false;
	}
	r.uuid = d[PB_TRACK_DESCRIPTOR__UUID].value;
	r.machine = h->machine;
	r.parent_uuid = d[PB_TRACK_DESCRIPTOR__PARENT_UUID].value;
	if (d[PB_TRACK_DESCRIPTOR__CHILD_ORDERING].id) {
		v = d[PB_TRACK_DESCRIPTOR__CHILD_ORDERING].value;
		if (v > PBE_TRACK_DESCRIPTOR_CHILD_TRACKS_ORDERING__EXPLICIT) {
			tp_stat_add(imp, "track_descriptor_invalid_child_ordering", -1, h->machine,
				    1);
			return false;
		}
		r.child_ordering = (uint8_t)v;
	}
	r.explicit_process_order = d[PB_TRACK_DESCRIPTOR__PROCESS_ORDERING].value ==
				   PBE_TRACK_DESCRIPTOR_PROCESS_ORDERING__PROCESS_ORDERING_EXPLICIT;
	r.explicit_thread_order = d[PB_TRACK_DESCRIPTOR__THREAD_ORDERING].value ==
				  PBE_TRACK_DESCRIPTOR_THREAD_ORDERING__THREAD_ORDERING_EXPLICIT;
	if (d[PB_TRACK_DESCRIPTOR__SIBLING_ORDER_RANK].id)
		r.sibling_order_rank = pz_field_int32(&d[PB_TRACK_DESCRIPTOR__SIBLING_ORDER_RANK]);
	switch (d[PB_TRACK_DESCRIPTOR__SIBLING_MERGE_BEHAVIOR].value) {
	case MERGE_NONE:
		r.merge = TE_MERGE_NONE;
		break;
	case MERGE_BY_KEY:
		r.merge = TE_MERGE_BY_KEY;
		if (d[PB_TRACK_DESCRIPTOR__SIBLING_MERGE_KEY].id) {
			r.merge_key = te_str(imp, &d[PB_TRACK_DESCRIPTOR__SIBLING_MERGE_KEY]);
		} else if (d[PB_TRACK_DESCRIPTOR__SIBLING_MERGE_KEY_INT].id) {
			char k[64];

			snprintf(k, sizeof(k), "sibling_merge_key_int:%lld",
				 (long long)d[PB_TRACK_DESCRIPTOR__SIBLING_MERGE_KEY_INT].value);
			r.merge_key = tp_db_str(imp->db, k);
		}
		break;
	default:
		r.merge = TE_MERGE_BY_NAME;
		break;
	}
	if (d[PB_TRACK_DESCRIPTOR__NAME].id)
		r.name = te_str(imp, &d[PB_TRACK_DESCRIPTOR__NAME]);
	else if (d[PB_TRACK_DESCRIPTOR__STATIC_NAME].id)
		r.name = te_str(imp, &d[PB_TRACK_DESCRIPTOR__STATIC_NAME]);
	else if (d[PB_TRACK_DESCRIPTOR__ATRACE_NAME].id)
		r.name = te_str(imp, &d[PB_TRACK_DESCRIPTOR__ATRACE_NAME]);
	r.description = te_str(imp, &d[PB_TRACK_DESCRIPTOR__DESCRIPTION]);

	if (d[PB_TRACK_DESCRIPTOR__THREAD].id) {
		struct pz_field t[3];
		const struct pz_field *th = &d[PB_TRACK_DESCRIPTOR__THREAD];

		if (pz_decode_table(th->data, th->size, t, 3) != PZ_OK ||
		    !t[PB_THREAD_DESCRIPTOR__PID].id || !t[PB_THREAD_DESCRIPTOR__TID].id) {
			tp_stat_add(imp, "track_descriptor_thread_missing_pid_tid", -1, h->machine,
				    1);
			return false;
		}
		r.pid = pz_field_int32(&t[PB_THREAD_DESCRIPTOR__PID]);
		r.tid = pz_field_int64(&t[PB_THREAD_DESCRIPTOR__TID]);
		r.separate = d[PB_TRACK_DESCRIPTOR__DISALLOW_MERGING_WITH_SYSTEM_TRACKS].value != 0;
		te_track_reserve(imp, &r);
		g = tp_seq_gen(imp, tp_seq_gen_of(imp, idx));
		if (g && g->valid)
			thread_descriptor(imp, te, idx, th->data, th->size);
		return true;
	}
	if (d[PB_TRACK_DESCRIPTOR__PROCESS].id) {
		struct pz_field p[2];
		const struct pz_field *pr = &d[PB_TRACK_DESCRIPTOR__PROCESS];

		if (pz_decode_table(pr->data, pr->size, p, 2) != PZ_OK ||
		    !p[PB_PROCESS_DESCRIPTOR__PID].id) {
			tp_stat_add(imp, "track_descriptor_process_missing_pid", -1, h->machine, 1);
			return false;
		}
		r.pid = pz_field_int32(&p[PB_PROCESS_DESCRIPTOR__PID]);
		te_track_reserve(imp, &r);
		return true;
	}
	if (d[PB_TRACK_DESCRIPTOR__COUNTER].id &&
	    d[PB_TRACK_DESCRIPTOR__COUNTER].wire_type == PZ_WIRE_LEN)
		counter_descriptor(imp, &r, d[PB_TRACK_DESCRIPTOR__COUNTER].data,
				   d[PB_TRACK_DESCRIPTOR__COUNTER].size);
	/* A counter descriptor wins over a state one; a thread or process
	 * descriptor (above) takes no state events either. */
	r.is_state = !r.is_counter && d[PB_TRACK_DESCRIPTOR__STATE].id != 0;
	te_track_reserve(imp, &r);
	return true;
}

/* -------------------------------------------------------------- counters ---- */

/* Up to @max values of repeated field @id (packed or not) as raw 64 bits. */
static size_t repeated_u64(const uint8_t *msg, size_t len, uint32_t id, bool fixed, uint64_t *out,
			   size_t max, bool *overflow)
{
	struct pz_reader r;
	struct pz_field f;
	size_t n = 0;

	pz_reader_init(&r, msg, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_packed it;
		uint64_t v;
		int rc;

		if (f.id != id)
			continue;
		if (f.wire_type != PZ_WIRE_LEN) {
			if (n == max) {
				*overflow = true;
				return n;
			}
			out[n++] = f.value;
			continue;
		}
		pz_packed_init(&it, &f);
		for (;;) {
			rc = fixed ? pz_packed_next_fixed64(&it, &v)
				   : pz_packed_next_varint(&it, &v);
			if (rc <= 0)
				break;
			if (n == max) {
				*overflow = true;
				return n;
			}
			out[n++] = v;
		}
	}
	return n;
}

/* Absolute value of a counter sample on @uuid; false if it is no counter. */
static bool counter_value(struct tp_import *imp, struct te_seq *s, uint32_t machine,
			  uint64_t uuid, double *value)
{
	struct te_track *t = te_track_find(imp, machine, uuid);
	uint64_t v;
	double sum;

	if (!t || !t->is_counter)
		return false;
	if (t->unit_multiplier > 0)
		*value *= (double)t->unit_multiplier;
	if (!t->is_incremental)
		return true;
	sum = 0;
	if (hmap_get(&s->counters, uuid, &v))
		memcpy(&sum, &v, sizeof(sum));
	sum += *value;
	memcpy(&v, &sum, sizeof(v));
	hmap_put(&s->counters, uuid, v);
	*value = sum;
	return true;
}

/*
 * Values of one extra-counter list: @vals[i] on the i-th uuid of the event's
 * list, or else of the defaults' list. Return: false to drop the event.
 */
static bool extra_counters(struct tp_import *imp, struct te_seq *s, uint32_t machine,
			   const uint8_t *ev, size_t len, const struct tp_seq_gen *g,
			   uint32_t val_id, uint32_t uuid_id, uint32_t def_id, bool doubles,
			   struct te_rec *rec)
{
	uint64_t vals[TE_MAX_EXTRA_COUNTERS + 1], uuids[TE_MAX_EXTRA_COUNTERS + 1];
	bool over = false, uover = false;
	size_t nv, nu, i;

	nv = repeated_u64(ev, len, val_id, doubles, vals, TE_MAX_EXTRA_COUNTERS + 1, &over);
	if (!nv)
		return true;
	nu = repeated_u64(ev, len, uuid_id, false, uuids, TE_MAX_EXTRA_COUNTERS + 1, &uover);
	if (!nu && g->defaults)
		nu = repeated_u64(g->defaults, g->defaults_len, def_id, false, uuids,
				  TE_MAX_EXTRA_COUNTERS + 1, &uover);
	if (!nu) {
		tp_stat_add(imp, "track_event_extra_counter_missing_track_uuids", -1, 0, 1);
		return false;
	}
	for (i = 0; i < nv; i++) {
		double value;

		if (i >= nu || !uuids[i]) {
			tp_stat_add(imp, "track_event_extra_counter_track_uuid_mismatch", -1, 0, 1);
			return false;
		}
		if (rec->n_extra >= TE_MAX_EXTRA_COUNTERS) {
			tp_stat_add(imp, "track_event_extra_counter_exceeds_max", -1, 0, 1);
			return false;
		}
		if (doubles)
			memcpy(&value, &vals[i], sizeof(value));
		else
			value = (double)(int64_t)vals[i];
		if (!counter_value(imp, s, machine, uuids[i], &value)) {
			tp_stat_add(imp, "track_event_extra_counter_invalid_track", -1, 0, 1);
			return false;
		}
		rec->extra[rec->n_extra].uuid = uuids[i];
		rec->extra[rec->n_extra].value = value;
		rec->n_extra++;
	}
	return true;
}

/* ----------------------------------------------------------- track events ---- */

static bool track_event(struct tp_import *imp, struct tp_te *te, uint32_t idx,
			const struct tp_packet_hdr *h, const int64_t *trace_ts, const uint8_t *data,
			size_t len, struct tp_event *ev)
{
	struct pz_field e[47];
	struct te_seq *s = &te->seqs[idx];
	struct te_rec rec;
	const struct tp_seq_gen *g;
	uint32_t gen;
	int64_t ts;
	bool convert = false;

	if (!h->has_seq_id) {
		tp_stat_add(imp, "track_event_missing_sequence_id", -1, h->machine, 1);
		return false;
	}
	if (pz_decode_table(data, len, e, 47) != PZ_OK) {
		tp_stat_add(imp, "track_event_tokenizer_errors", -1, h->machine, 1);
		return false;
	}
	gen = tp_seq_cur_gen(imp, idx);
	if (gen == UINT32_MAX)
		return false;
	rec.gen = gen;
	rec.flags = 0;
	rec.n_extra = 0;

	if (e[PB_TRACK_EVENT__TIMESTAMP_DELTA_US].id) {
		if (!s->ts_valid) {
			tp_stat_add(imp, "track_event_skipped_timestamp_delta_without_valid_state",
				    -1, h->machine, 1);
			return false;
		}
		s->ref_ts_ns = tp_sat_add(
			s->ref_ts_ns,
			tp_sat_mul(pz_field_int64(&e[PB_TRACK_EVENT__TIMESTAMP_DELTA_US]), 1000));
		ts = s->ref_ts_ns;
		convert = true;
	} else if (pz_field_int64(&e[PB_TRACK_EVENT__TIMESTAMP_ABSOLUTE_US])) {
		ts = tp_sat_mul(pz_field_int64(&e[PB_TRACK_EVENT__TIMESTAMP_ABSOLUTE_US]), 1000);
		convert = true;
	} else if (trace_ts) {
		ts = *trace_ts;
	} else {
		tp_stat_add(imp, "track_event_missing_timestamp", -1, h->machine, 1);
		return false;
	}
	/* Negative times are malformed; drop them before an offset wraps them. */
	if (ts < 0) {
		tp_stat_add(imp, "track_event_invalid_timestamp", -1, h->machine, 1);
		return false;
	}
	/* Legacy timestamp fields are MONOTONIC; converted when snapshots allow. */
	if (convert) {
		int64_t out;

		if (tp_to_trace_time(imp, tp_clock_qualify(TP_CLOCK_MONOTONIC, 0, h->machine),
				     h->machine, ts, false, false, &out) == 0)
			ts = out;
	}

	if (e[PB_TRACK_EVENT__THREAD_TIME_DELTA_US].id) {
		if (!s->ts_valid) {
			tp_stat_add(imp,
				    "track_event_skipped_thread_time_delta_without_valid_state", -1,
				    h->machine, 1);
			return false;
		}
		s->ref_thread_ts_ns = tp_sat_add(
			s->ref_thread_ts_ns,
			tp_sat_mul(pz_field_int64(&e[PB_TRACK_EVENT__THREAD_TIME_DELTA_US]), 1000));
		rec.thread_ts = s->ref_thread_ts_ns;
		rec.flags |= TE_REC_THREAD_TS;
	} else if (e[PB_TRACK_EVENT__THREAD_TIME_ABSOLUTE_US].id) {
		rec.thread_ts =
			tp_sat_mul(pz_field_int64(&e[PB_TRACK_EVENT__THREAD_TIME_ABSOLUTE_US]),
				   1000);
		rec.flags |= TE_REC_THREAD_TS;
	}
	if (e[PB_TRACK_EVENT__THREAD_INSTRUCTION_COUNT_DELTA].id) {
		if (!s->ts_valid) {
			tp_stat_add(
				imp,
				"track_event_skipped_thread_instruction_delta_without_valid_state",
				-1, h->machine, 1);
			return false;
		}
		s->ref_thread_instr =
			tp_sat_add(s->ref_thread_instr,
				pz_field_int64(&e[PB_TRACK_EVENT__THREAD_INSTRUCTION_COUNT_DELTA]));
		rec.thread_instr = s->ref_thread_instr;
		rec.flags |= TE_REC_THREAD_INSTR;
	} else if (e[PB_TRACK_EVENT__THREAD_INSTRUCTION_COUNT_ABSOLUTE].id) {
		rec.thread_instr =
			pz_field_int64(&e[PB_TRACK_EVENT__THREAD_INSTRUCTION_COUNT_ABSOLUTE]);
		rec.flags |= TE_REC_THREAD_INSTR;
	}

	g = tp_seq_gen(imp, gen);
	if (e[PB_TRACK_EVENT__TYPE].value == PBE_TRACK_EVENT_TYPE__TYPE_COUNTER) {
		uint64_t uuid = 0;
		bool has_uuid = false;
		double value;

		if (e[PB_TRACK_EVENT__TRACK_UUID].id) {
			uuid = e[PB_TRACK_EVENT__TRACK_UUID].value;
			has_uuid = true;
		} else if (g->defaults) {
			struct pz_field d[12];

			if (pz_decode_table(g->defaults, g->defaults_len, d, 12) == PZ_OK &&
			    d[PB_TRACK_EVENT_DEFAULTS__TRACK_UUID].id) {
				uuid = d[PB_TRACK_EVENT_DEFAULTS__TRACK_UUID].value;
				has_uuid = true;
			}
		}
		if (!has_uuid) {
			tp_stat_add(imp, "track_event_counter_missing_track_uuid", -1, h->machine,
				    1);
			return false;
		}
		if (e[PB_TRACK_EVENT__COUNTER_VALUE].id) {
			value = (double)pz_field_int64(&e[PB_TRACK_EVENT__COUNTER_VALUE]);
		} else if (e[PB_TRACK_EVENT__DOUBLE_COUNTER_VALUE].id) {
			value = pz_field_double(&e[PB_TRACK_EVENT__DOUBLE_COUNTER_VALUE]);
		} else {
			tp_stat_add(imp, "track_event_counter_missing_value", -1, h->machine, 1);
			return false;
		}
		if (!counter_value(imp, s, h->machine, uuid, &value)) {
			tp_stat_add(imp, "track_event_counter_invalid_track_uuid", -1, h->machine,
				    1);
			return false;
		}
		rec.counter_value = value;
		rec.flags |= TE_REC_COUNTER;
	}
	if (e[PB_TRACK_EVENT__TYPE].value == PBE_TRACK_EVENT_TYPE__TYPE_STATE &&
	    !e[PB_TRACK_EVENT__TRACK_UUID].id) {
		struct pz_field d[12];

		if (!g->defaults || pz_decode_table(g->defaults, g->defaults_len, d, 12) != PZ_OK ||
		    !d[PB_TRACK_EVENT_DEFAULTS__TRACK_UUID].id) {
			tp_stat_add(imp, "track_event_state_missing_track_uuid", -1, h->machine, 1);
			return false;
		}
	}
	if (!extra_counters(imp, s, h->machine, data, len, g, PB_TRACK_EVENT__EXTRA_COUNTER_VALUES,
			    PB_TRACK_EVENT__EXTRA_COUNTER_TRACK_UUIDS,
			    PB_TRACK_EVENT_DEFAULTS__EXTRA_COUNTER_TRACK_UUIDS, false, &rec) ||
	    !extra_counters(imp, s, h->machine, data, len, g, PB_TRACK_EVENT__EXTRA_DOUBLE_COUNTER_VALUES,
			    PB_TRACK_EVENT__EXTRA_DOUBLE_COUNTER_TRACK_UUIDS,
			    PB_TRACK_EVENT_DEFAULTS__EXTRA_DOUBLE_COUNTER_TRACK_UUIDS, true, &rec))
		return false;
	ev->aux = UINT32_MAX;
	if ((rec.flags || rec.n_extra) && !te_rec_store(te, &rec, &ev->aux)) {
		tp_stat_add(imp, "tokenizer_out_of_memory", -1, h->machine, 1);
		return false;
	}
	ev->ts = ts;
	ev->kind = TP_EV_TRACK_EVENT;
	ev->data = data;
	ev->len = (uint32_t)len;
	ev->cpu = gen;
	return true;
}

/* Streaming profile samples: only their timestamps are checked here. */
static void streaming_profile(struct tp_import *imp, struct tp_te *te, uint32_t idx,
			      const struct tp_packet_hdr *h, const uint8_t *data, size_t len)
{
	struct te_seq *s = &te->seqs[idx];
	struct pz_reader r;
	struct pz_field f;

	if (s->ref_ts_ns < 0) {
		tp_stat_add(imp, "streaming_profile_invalid_timestamp", -1, h->machine, 1);
		return;
	}
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_packed it;
		uint64_t v;

		if (f.id != PB_STREAMING_PROFILE_PACKET__TIMESTAMP_DELTA_US)
			continue;
		if (f.wire_type == PZ_WIRE_VARINT) {
			s->ref_ts_ns = tp_sat_add(s->ref_ts_ns, tp_sat_mul((int64_t)f.value, 1000));
			if (s->ref_ts_ns < 0)
				goto invalid;
			continue;
		}
		if (f.wire_type != PZ_WIRE_LEN)
			continue;
		pz_packed_init(&it, &f);
		while (pz_packed_next_varint(&it, &v) > 0) {
			s->ref_ts_ns = tp_sat_add(s->ref_ts_ns, tp_sat_mul((int64_t)v, 1000));
			if (s->ref_ts_ns < 0)
				goto invalid;
		}
	}
	return;
invalid:
	tp_stat_add(imp, "streaming_profile_invalid_timestamp", -1, h->machine, 1);
}

/*
 * TrackEventRangeOfInterest: its start is kept (events before it are
 * dropped when parsed, with --crop-track-events) and stored as metadata;
 * without a start_us it is counted and ignored (Perfetto's tokenizer).
 */
static void range_of_interest(struct tp_import *imp, struct tp_te *te, uint32_t machine,
			      const uint8_t *data, size_t len)
{
	struct pz_field f[2];

	if (pz_decode_table(data, len, f, 2) != PZ_OK ||
	    !f[PB_TRACK_EVENT_RANGE_OF_INTEREST__START_US].id) {
		tp_stat_add(imp, "track_event_range_of_interest_missing_start_us", -1, machine, 1);
		return;
	}
	te->roi_start_us = pz_field_int64(&f[PB_TRACK_EVENT_RANGE_OF_INTEREST__START_US]);
	te->has_roi = true;
	tp_metadata_set_int(imp, "range_of_interest_start_us", 0, te->roi_start_us);
}

bool tp_te_tokenize(struct tp_import *imp, int slot, const struct tp_packet_hdr *h,
		    const int64_t *trace_ts, uint32_t field, const uint8_t *data, size_t len,
		    struct tp_event *ev)
{
	const struct tp_seq_gen *g;
	struct tp_te *te;
	uint32_t idx;

	te = te_get(imp);
	if (!te) {
		tp_stat_add(imp, "track_event_tokenizer_errors", -1, h->machine, 1);
		return false;
	}
	if (field == PB_TRACE_PACKET__TRANSLATION_TABLE) {
		te_translation_table(imp, data, len);
		return false;
	}
	if (field == PB_TRACE_PACKET__TRACK_EVENT_RANGE_OF_INTEREST) {
		range_of_interest(imp, te, h->machine, data, len);
		return false;
	}
	if (slot < 0)
		return field != PB_TRACE_PACKET__TRACK_EVENT;
	idx = (uint32_t)slot;
	switch (field) {
	case PB_TRACE_PACKET__TRACK_EVENT:
		return track_event(imp, te, idx, h, trace_ts, data, len, ev);
	case PB_TRACE_PACKET__TRACK_DESCRIPTOR:
		return track_descriptor(imp, te, idx, h, data, len);
	case PB_TRACE_PACKET__THREAD_DESCRIPTOR:
		if (!h->has_seq_id) {
			tp_stat_add(imp, "thread_descriptor_missing_sequence_id", -1, h->machine,
				    1);
			return false;
		}
		g = tp_seq_gen(imp, tp_seq_cur_gen(imp, idx));
		if (!g || !g->valid) {
			tp_stat_add(imp, "thread_descriptor_skipped_incremental_state_invalid", -1,
				    h->machine, 1);
			return false;
		}
		thread_descriptor(imp, te, idx, data, len);
		return true;
	case PB_TRACE_PACKET__STREAMING_PROFILE_PACKET:
		streaming_profile(imp, te, idx, h, data, len);
		return false;
	default:
		return true;
	}
}
