// SPDX-License-Identifier: Apache-2.0
/*
 * te_state.c - the bottom of the TrackEvent importer: its state, made
 * on first use (te_get()), the keys every event uses, interned once, and
 * the small record that carries what the tokenizer resolved for an event
 * (thread times, counter values) to the parser after sorting. Every other
 * TrackEvent file builds on this one.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "protozero/protozero.h"
#include "trace_processor/import/track_event/te_int.h"

uint32_t te_str(struct tp_import *imp, const struct pz_field *f)
{
	if (!f->id || f->wire_type != PZ_WIRE_LEN)
		return 0;
	return tp_str_intern(&imp->db->strings, (const char *)f->data, f->size);
}

/* ----------------------------------------------------------------- keys ---- */

static uint32_t s(struct tp_import *imp, const char *str)
{
	return tp_db_str(imp->db, str);
}

static void keys_init(struct tp_import *imp)
{
	struct te_keys *k = &imp->te->k;

	k->debug = s(imp, "debug");
	k->source = s(imp, "source");
	k->descriptor = s(imp, "descriptor");
	k->trace_id = s(imp, "trace_id");
	k->is_root_in_scope = s(imp, "is_root_in_scope");
	k->utid = s(imp, "utid");
	k->upid = s(imp, "upid");
	k->track_uuid = s(imp, "track_uuid");
	k->parent_track_uuid = s(imp, "parent_track_uuid");
	k->merge_key_type = s(imp, "merge_key_type");
	k->merge_key_value = s(imp, "merge_key_value");
	k->track_compressor_idx = s(imp, "track_compressor_idx");
	k->thread_time = s(imp, "thread_time");
	k->thread_instruction_count = s(imp, "thread_instruction_count");
	k->default_track = s(imp, "Default Track");
	k->category = s(imp, "category");
	k->name = s(imp, "name");
	k->cat = s(imp, "cat");
	k->event_category = s(imp, "event.category");
	k->event_name = s(imp, "event.name");
	k->chrome = s(imp, "chrome");
	k->legacy_passthrough = s(imp, "legacy_event.passthrough_utid");
	k->builtin_counter_type = s(imp, "builtin_counter_type");
	k->y_axis_share_key = s(imp, "y_axis_share_key");
	k->description = s(imp, "description");
	k->child_ordering = s(imp, "child_ordering");
	k->sibling_order_rank = s(imp, "sibling_order_rank");
	k->has_first_packet = s(imp, "has_first_packet_on_sequence");
	k->hist_name = s(imp, "chrome_histogram_sample.name");
	k->hist_name_hash = s(imp, "chrome_histogram_sample.name_hash");
	k->hist_sample = s(imp, "chrome_histogram_sample.sample");
	k->hist_name_iid = s(imp, "chrome_histogram_sample.name_iid");
	k->src_file = s(imp, "source.file_name");
	k->src_function = s(imp, "source.function_name");
	k->src_line = s(imp, "source.line_number");
	k->skipped_packet = s(imp, "skipped_packet");
	k->invalid_incremental_state = s(imp, "invalid_incremental_state");
	k->legacy_phase = s(imp, "legacy_event.phase");
	k->scope = s(imp, "scope");
	k->trace_id_is_process_scoped = s(imp, "trace_id_is_process_scoped");
	k->source_scope = s(imp, "source_scope");
	k->legacy_source_id = s(imp, "legacy_trace_source_id");
	k->correlation_id = s(imp, "correlation_id");
	k->log_body = s(imp, "track_event.log_message.message");
	k->log_file = s(imp, "track_event.log_message.file_name");
	k->log_function = s(imp, "track_event.log_message.function_name");
	k->log_line = s(imp, "track_event.log_message.line_number");
	k->log_prio = s(imp, "track_event.priority");
	k->task_file = s(imp, "task.posted_from.file_name");
	k->task_function = s(imp, "task.posted_from.function_name");
	k->task_line = s(imp, "task.posted_from.line_number");
	k->perf_site = s(imp, "chrome_hashed_performance_mark.site");
	k->perf_site_hash = s(imp, "chrome_hashed_performance_mark.site_hash");
	k->perf_mark = s(imp, "chrome_hashed_performance_mark.mark");
	k->perf_mark_hash = s(imp, "chrome_hashed_performance_mark.mark_hash");
	k->perf_context = s(imp, "chrome_hashed_performance_mark.execution_context_id");
	k->perf_sequence = s(imp, "chrome_hashed_performance_mark.sequence_number");
	k->trigger_name = s(imp, "chrome_trigger.name");
	k->trigger_name_hash = s(imp, "chrome_trigger.name_hash");
	k->triggers = s(imp, "Trace Triggers");
}

struct tp_te *te_get(struct tp_import *imp)
{
	struct tp_te *te = imp->te;

	if (te)
		return te;
	te = calloc(1, sizeof(*te));
	if (!te)
		return NULL;
	te->seqs = calloc(TP_MAX_SEQUENCES, sizeof(*te->seqs));
	if (!te->seqs) {
		free(te);
		return NULL;
	}
	imp->te = te;
	keys_init(imp);
	return te;
}

/* -------------------------------------------------------------- records ---- */

bool te_rec_store(struct tp_te *te, const struct te_rec *r, uint32_t *out_idx)
{
	size_t need = 1 + r->n_extra + !!(r->flags & TE_REC_THREAD_TS) +
		      !!(r->flags & TE_REC_THREAD_INSTR) + !!(r->flags & TE_REC_COUNTER);
	struct te_val *v;
	uint32_t i;

	if (te->n_vals + need >= UINT32_MAX ||
	    tp_array_grow((void **)&te->vals, &te->cap_vals, te->n_vals + need, sizeof(*te->vals), 256) < 0)
		return false;
	*out_idx = (uint32_t)te->n_vals;
	v = &te->vals[te->n_vals];
	te->n_vals += need;
	(v++)->u = r->flags | (uint64_t)r->n_extra << 8;
	if (r->flags & TE_REC_THREAD_TS)
		(v++)->v.i = r->thread_ts;
	if (r->flags & TE_REC_THREAD_INSTR)
		(v++)->v.i = r->thread_instr;
	if (r->flags & TE_REC_COUNTER)
		(v++)->v.d = r->counter_value;
	for (i = 0; i < r->n_extra; i++, v++) {
		v->u = r->extra[i].uuid;
		v->v.d = r->extra[i].value;
	}
	return true;
}

bool te_rec_load(const struct tp_import *imp, const struct tp_event *ev, struct te_rec *out)
{
	const struct tp_te *te = imp->te;
	const struct te_val *v;
	uint32_t i;

	memset(out, 0, offsetof(struct te_rec, extra));
	if (!tp_seq_gen(imp, ev->cpu))
		return false;
	out->gen = ev->cpu;
	if (ev->aux == UINT32_MAX)
		return true;
	if (ev->aux >= te->n_vals)
		return false;
	v = &te->vals[ev->aux];
	out->flags = (uint32_t)(v->u & 0xff);
	out->n_extra = (uint32_t)(v->u >> 8);
	/* Written by rec_store(), so the entries are all there. */
	v++;
	if (out->flags & TE_REC_THREAD_TS)
		out->thread_ts = (v++)->v.i;
	if (out->flags & TE_REC_THREAD_INSTR)
		out->thread_instr = (v++)->v.i;
	if (out->flags & TE_REC_COUNTER)
		out->counter_value = (v++)->v.d;
	for (i = 0; i < out->n_extra && i < TE_MAX_EXTRA_COUNTERS; i++, v++) {
		out->extra[i].uuid = v->u;
		out->extra[i].value = v->v.d;
	}
	return true;
}
