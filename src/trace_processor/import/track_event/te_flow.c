// SPDX-License-Identifier: Apache-2.0
/*
 * te_flow.c - TrackEvent flows: arrows between slices by id, v2 flow ids
 * (flow_ids, terminating_flow_ids), legacy bind ids and v1 flow events
 * (s, t, f; an f not bound to its enclosing slice waits for the next slice
 * on its track, which the slice code tells us about: te_flow_begun()).
 * Called by te_parse.c in parse order.
 */
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/track_event/te_int.h"

static void insert_flow(struct tp_import *imp, uint64_t flow_id, uint32_t out, uint32_t in)
{
	struct tp_te *te = imp->te;
	struct tp_table *f = &imp->db->flow;
	int64_t row = tp_table_append(f);
	uint64_t v;

	if (row < 0)
		return;
	tp_set_int(f, FLOW_SLICE_OUT, (size_t)row, out);
	tp_set_int(f, FLOW_SLICE_IN, (size_t)row, in);
	tp_set_int(f, FLOW_TRACE_ID, (size_t)row, (int64_t)flow_id);
	if (hmap_get(&te->v1_flow_names, flow_id, &v)) {
		struct tp_argset a = {0};
		int64_t set;

		tp_argset_str(imp, &a, te->k.name, (uint32_t)(v >> 32));
		tp_argset_str(imp, &a, te->k.cat, (uint32_t)v);
		set = tp_argset_commit(imp, &a);
		tp_argset_fini(&a);
		if (set != TP_NULL_INT)
			tp_set_int(f, FLOW_ARG_SET_ID, (size_t)row, set);
	}
}

/*
 * Flow ids are per machine, as in Perfetto (a flow tracker per machine
 * context): the map's key is the id on the host and a bijective mix of id
 * and machine elsewhere, so two machines' ids never meet.
 */
static uint64_t flow_key(uint32_t machine, uint64_t flow_id)
{
	return machine ? hash_mix64(flow_id ^ ((uint64_t)machine * 0x9e3779b97f4a7c15ull)) : flow_id;
}

static void flow_begin(struct tp_import *imp, uint64_t key, uint32_t row)
{
	if (hmap_get(&imp->te->flows, key, NULL)) {
		tp_stat_add(imp, "flow_duplicate_id", -1, 0, 1);
		return;
	}
	hmap_put(&imp->te->flows, key, row);
}

/* Links the flow's last slice and @row, earlier slice first. */
static void flow_link(struct tp_import *imp, uint64_t key, uint64_t flow_id, uint32_t row,
		      bool step, bool close)
{
	struct tp_table *s = &imp->db->slice;
	uint64_t v;
	uint32_t old, out, in;

	if (!hmap_get(&imp->te->flows, key, &v)) {
		tp_stat_add(imp, step ? "flow_step_without_start" : "flow_end_without_start", -1, 0,
			    1);
		return;
	}
	old = (uint32_t)v;
	out = tp_get_int(s, SLICE_TS, old) > tp_get_int(s, SLICE_TS, row) ? row : old;
	in = out == row ? old : row;
	if (step)
		hmap_put(&imp->te->flows, key, row);
	else if (close)
		hmap_del(&imp->te->flows, key, NULL);
	insert_flow(imp, flow_id, out, in);
}

/* One v2 id of @row (a slice of @machine). */
static void flow_id_v2(struct tp_import *imp, uint32_t machine, uint64_t id, uint32_t row,
		       bool terminating)
{
	uint64_t k = flow_key(machine, id);

	if (terminating) {
		if (hmap_get(&imp->te->flows, k, NULL))
			flow_link(imp, k, id, row, false, true);
	} else if (!hmap_get(&imp->te->flows, k, NULL)) {
		flow_begin(imp, k, row);
	} else {
		flow_link(imp, k, id, row, true, false);
	}
}

/* Each id of repeated fixed64/varint field @id of @msg. */
static void each_id(struct tp_import *imp, uint32_t machine, const uint8_t *msg, size_t len,
		    uint32_t id, uint32_t row, bool terminating)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, msg, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_packed it;
		uint64_t v;

		if (f.id != id)
			continue;
		if (f.wire_type != PZ_WIRE_LEN) {
			flow_id_v2(imp, machine, f.value, row, terminating);
			continue;
		}
		pz_packed_init(&it, &f);
		while ((id == PB_TRACK_EVENT__FLOW_IDS || id == PB_TRACK_EVENT__TERMINATING_FLOW_IDS
				? pz_packed_next_fixed64(&it, &v)
				: pz_packed_next_varint(&it, &v)) > 0)
			flow_id_v2(imp, machine, v, row, terminating);
	}
}

static bool has_field(const uint8_t *msg, size_t len, uint32_t id)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, msg, len);
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == id)
			return true;
	return false;
}

void te_flow_v2(struct tp_import *imp, uint32_t machine, uint32_t row, const uint8_t *event,
		size_t len)
{
	if (has_field(event, len, PB_TRACK_EVENT__FLOW_IDS))
		each_id(imp, machine, event, len, PB_TRACK_EVENT__FLOW_IDS, row, false);
	else
		each_id(imp, machine, event, len, PB_TRACK_EVENT__FLOW_IDS_OLD, row, false);
	if (has_field(event, len, PB_TRACK_EVENT__TERMINATING_FLOW_IDS))
		each_id(imp, machine, event, len, PB_TRACK_EVENT__TERMINATING_FLOW_IDS, row, true);
	else
		each_id(imp, machine, event, len, PB_TRACK_EVENT__TERMINATING_FLOW_IDS_OLD, row,
			true);
}

void te_flow_end(struct tp_import *imp, uint32_t machine, uint64_t flow_id, uint32_t row)
{
	uint64_t k = flow_key(machine, flow_id);

	if (hmap_get(&imp->te->flows, k, NULL))
		flow_link(imp, k, flow_id, row, false, true);
}

void te_flow_bind(struct tp_import *imp, uint32_t machine, uint32_t row, uint64_t bind_id,
		  uint64_t direction)
{
	uint64_t k = flow_key(machine, bind_id);

	switch (direction) {
	case PBE_TRACK_EVENT_LEGACY_EVENT_FLOW_DIRECTION__FLOW_OUT:
		flow_begin(imp, k, row);
		break;
	case PBE_TRACK_EVENT_LEGACY_EVENT_FLOW_DIRECTION__FLOW_INOUT:
		flow_link(imp, k, bind_id, row, true, false);
		break;
	case PBE_TRACK_EVENT_LEGACY_EVENT_FLOW_DIRECTION__FLOW_IN:
		flow_link(imp, k, bind_id, row, false, false);
		break;
	default:
		tp_stat_add(imp, "flow_without_direction", -1, 0, 1);
		break;
	}
}

void te_flow_v1(struct tp_import *imp, uint32_t machine, int64_t track, char phase,
		uint64_t source_id, uint32_t cat, uint32_t name, bool bind_enclosing)
{
	struct tp_te *te = imp->te;
	uint64_t k = tp_hash_mix(tp_hash_mix(tp_hash_mix(source_id, cat), name), machine);
	uint64_t flow_id, v;
	int64_t row;

	if (hmap_get(&te->v1_flows, k, &v)) {
		flow_id = v;
	} else {
		flow_id = te->next_v1_flow++;
		hmap_put(&te->v1_flows, k, flow_id);
		hmap_put(&te->v1_flow_names, flow_id, ((uint64_t)name << 32) | cat);
	}
	if (phase == 'f' && !bind_enclosing) {
		struct te_pending *p;

		if (!hmap_get(&te->pending_flows, (uint64_t)track, &v)) {
			if (te->n_pending == te->cap_pending) {
				size_t cap = te->cap_pending ? 2 * te->cap_pending : 16;
				struct te_pending *np = realloc(te->pending, cap * sizeof(*np));

				if (!np)
					return;
				te->pending = np;
				te->cap_pending = cap;
			}
			memset(&te->pending[te->n_pending], 0, sizeof(te->pending[0]));
			te->pending[te->n_pending].track = track;
			v = te->n_pending++;
			hmap_put(&te->pending_flows, (uint64_t)track, v);
		}
		p = &te->pending[v];
		if (p->n == p->cap) {
			uint32_t cap = p->cap ? 2 * p->cap : 4;
			uint64_t *ids;

			if (cap > 65536)
				return;
			ids = realloc(p->ids, cap * sizeof(*ids));
			if (!ids)
				return;
			p->ids = ids;
			p->cap = cap;
		}
		p->ids[p->n++] = flow_id;
		return;
	}
	row = tp_slice_top(imp, track);
	if (row < 0) {
		tp_stat_add(imp, "flow_no_enclosing_slice", -1, 0, 1);
		return;
	}
	/* v1 ids are numbered per (source id, category, name, machine): unique. */
	if (phase == 's')
		flow_begin(imp, flow_id, (uint32_t)row);
	else
		flow_link(imp, flow_id, flow_id, (uint32_t)row, phase == 't', false);
}

void te_flow_begun(struct tp_import *imp, int64_t track, uint32_t row)
{
	struct tp_te *te = imp->te;
	struct te_pending *p;
	uint64_t v, out;
	uint32_t i;

	if (!te->n_pending || !hmap_get(&te->pending_flows, (uint64_t)track, &v))
		return;
	p = &te->pending[v];
	for (i = 0; i < p->n; i++)
		if (hmap_get(&te->flows, p->ids[i], &out))
			insert_flow(imp, p->ids[i], (uint32_t)out, row);
	p->n = 0;
}

void te_flow_fini(struct tp_te *te)
{
	size_t i;

	hmap_fini(&te->flows);
	hmap_fini(&te->v1_flows);
	hmap_fini(&te->v1_flow_names);
	hmap_fini(&te->pending_flows);
	for (i = 0; i < te->n_pending; i++)
		free(te->pending[i].ids);
	free(te->pending);
}
