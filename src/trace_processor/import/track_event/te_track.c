// SPDX-License-Identifier: Apache-2.0
/*
 * te_track.c - descriptor tracks: reserved (or updated) by uuid per
 * machine when the tokenizer meets a TrackDescriptor, in file order; at
 * parse time a reserved uuid is resolved once (its thread or process,
 * following parents) and becomes a track row when its first event
 * arrives: the thread's own track, a thread/process/global track of its
 * own, a counter track, or one of a set of merged tracks (siblings of one
 * name share tracks while their slices do not overlap). Also the legacy
 * per-thread counters and instant tracks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "trace_processor/import/track_event/te_int.h"

/* ---------------------------------------------------------- reservation ---- */

/*
 * The key of (@machine, @uuid) in te->uuids: the uuid itself on the host
 * (so host lookups cost what they always did), a mix of both elsewhere.
 * Keys may collide: entries are checked and the next key of the probe
 * sequence tried.
 */
static uint64_t uuid_key(uint32_t machine, uint64_t uuid)
{
	return machine ? (uuid ^ ((uint64_t)machine * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull
		       : uuid;
}

static uint64_t uuid_probe(uint64_t key)
{
	return key * 0xc4ceb9fe1a85ec53ull + 1;
}

struct te_track *te_track_find(struct tp_import *imp, uint32_t machine, uint64_t uuid)
{
	uint64_t k = uuid_key(machine, uuid), v;

	if (!imp->te)
		return NULL;
	while (hmap_get(&imp->te->uuids, k, &v)) {
		struct te_track *t = &imp->te->tracks[v];

		if (t->uuid == uuid && t->machine == machine)
			return t;
		k = uuid_probe(k);
	}
	return NULL;
}

/* Adds track index @idx under (@machine, @uuid), known to be absent. */
static int uuid_put(struct tp_te *te, uint32_t machine, uint64_t uuid, size_t idx)
{
	uint64_t k = uuid_key(machine, uuid), v;

	while (hmap_get(&te->uuids, k, &v))
		k = uuid_probe(k);
	return hmap_put(&te->uuids, k, idx);
}

static bool same_track(const struct te_track *a, const struct te_track *b)
{
	if (a->has_counter_details != b->has_counter_details)
		return false;
	if (a->has_counter_details &&
	    (a->category != b->category || a->unit_multiplier != b->unit_multiplier ||
	     a->is_incremental != b->is_incremental || a->builtin_type != b->builtin_type ||
	     a->y_axis_share_key != b->y_axis_share_key))
		return false;
	return a->parent_uuid == b->parent_uuid && a->pid == b->pid && a->tid == b->tid &&
	       a->is_counter == b->is_counter && a->is_state == b->is_state &&
	       a->merge == b->merge &&
	       a->merge_key == b->merge_key;
}

struct te_track *te_track_reserve(struct tp_import *imp, const struct te_track *r)
{
	struct tp_te *te = te_get(imp);
	struct te_track *t;

	if (!te)
		return NULL;
	if (r->uuid == 0 && r->parent_uuid) {
		tp_stat_add(imp, "track_descriptor_default_track_with_parent", -1, 0, 1);
		return NULL;
	}
	t = te_track_find(imp, r->machine, r->uuid);
	if (!t) {
		if (te->n_tracks >= TE_MAX_TRACKS ||
		    tp_array_grow((void **)&te->tracks, &te->cap_tracks, te->n_tracks + 1,
			 sizeof(*te->tracks), 64) < 0 ||
		    uuid_put(te, r->machine, r->uuid, te->n_tracks) < 0) {
			tp_stat_add(imp, "track_event_tokenizer_errors", -1, 0, 1);
			return NULL;
		}
		t = &te->tracks[te->n_tracks++];
		*t = *r;
		t->resolved = TE_UNRESOLVED;
		t->track = -1;
		t->cset = -1;
		t->utid = t->upid = -1;
		return t;
	}
	if (!same_track(t, r)) {
		tp_stat_add(imp, "track_descriptor_conflicting_reservation", -1, 0, 1);
		return NULL;
	}
	if (r->name) {
		bool fixed = r->merge == TE_MERGE_NONE;

		/* A name fills a gap; tracks that never merge also take renames. */
		if (!t->name || fixed)
			t->name = r->name;
		if (fixed && t->track >= 0)
			tp_set_str(&imp->db->track, TRACK_NAME, (size_t)t->track, r->name);
	}
	return t;
}

/* -------------------------------------------------- threads and processes ---- */

int64_t te_get_process(struct tp_import *imp, uint32_t machine, int64_t pid)
{
	int64_t upid = tp_proc_find_process(imp, machine, pid);

	if (upid >= 0)
		return upid;
	upid = tp_proc_get_process(imp, machine, pid);
	/* A new process gets its main thread (tid == pid) at once. */
	if (upid >= 0)
		te_update_thread(imp, machine, pid, pid);
	return upid;
}

int64_t te_update_thread(struct tp_import *imp, uint32_t machine, int64_t tid, int64_t pid)
{
	struct tp_table *th = &imp->db->thread;
	int64_t upid = te_get_process(imp, machine, pid), utid;

	if (upid < 0)
		return -1;
	utid = tp_proc_find_thread(imp, machine, tid);
	if (utid >= 0 && (size_t)utid < th->n_rows) {
		int64_t cur = tp_col_int(th, THREAD_UPID)[utid];

		if (tp_col_int(th, THREAD_END_TS)[utid] == TP_NULL_INT &&
		    (cur == TP_NULL_INT || cur == upid)) {
			if (cur == TP_NULL_INT)
				tp_proc_set_thread_process(imp, utid, machine, pid);
			return utid;
		}
		/* The tid now belongs to another process: a new thread. */
		utid = tp_proc_new_thread(imp, machine, TP_NULL_INT, tid);
	} else {
		utid = tp_proc_get_thread(imp, machine, tid);
	}
	if (utid < 0)
		return -1;
	tp_proc_set_thread_process(imp, utid, machine, pid);
	return utid;
}

/* ----------------------------------------------------------------- rows ---- */

struct new_track {
	const char *type;
	uint32_t name;
	uint8_t counter; /* is_counter: 0 slice, 1 counter, 2 state track */
	int64_t utid, upid; /* -1: none */
	uint32_t unit;
	uint32_t description;
	uint32_t machine;
	struct tp_argset *dims;
	struct tp_argset *src;
};

static int64_t add_track(struct tp_import *imp, const struct new_track *n)
{
	struct tp_table *t = &imp->db->track;
	int64_t row = tp_table_append(t), set;

	if (row < 0) {
		tp_argset_fini(n->dims);
		tp_argset_fini(n->src);
		return -1;
	}
	if (n->name)
		tp_set_str(t, TRACK_NAME, (size_t)row, n->name);
	tp_set_str(t, TRACK_TYPE, (size_t)row, tp_db_str(imp->db, n->type));
	tp_set_int(t, TRACK_IS_COUNTER, (size_t)row, n->counter);
	tp_set_int(t, TRACK_MACHINE_ID, (size_t)row, n->machine);
	if (n->utid >= 0)
		tp_set_int(t, TRACK_UTID, (size_t)row, n->utid);
	if (n->upid >= 0)
		tp_set_int(t, TRACK_UPID, (size_t)row, n->upid);
	if (n->unit)
		tp_set_str(t, TRACK_UNIT, (size_t)row, n->unit);
	if (n->description)
		tp_set_str(t, TRACK_DESCRIPTION, (size_t)row, n->description);
	if (n->dims) {
		set = tp_argset_commit(imp, n->dims);
		if (set != TP_NULL_INT)
			tp_set_int(t, TRACK_DIMENSION_ARG_SET_ID, (size_t)row, set);
		tp_argset_fini(n->dims);
	}
	if (n->src) {
		set = tp_argset_commit(imp, n->src);
		if (set != TP_NULL_INT)
			tp_set_int(t, TRACK_SOURCE_ARG_SET_ID, (size_t)row, set);
		tp_argset_fini(n->src);
	}
	return row;
}

int64_t te_thread_track(struct tp_import *imp, int64_t utid)
{
	struct tp_table *t = &imp->db->track;
	int64_t track = tp_track_thread(imp, utid);

	/* The thread's track is identified by its utid, like Perfetto's. */
	if (track >= 0 && tp_col_int(t, TRACK_DIMENSION_ARG_SET_ID)[track] == TP_NULL_INT) {
		struct tp_argset dims = {0};
		int64_t set;

		tp_argset_uint(imp, &dims, imp->te->k.utid, (uint64_t)utid);
		set = tp_argset_commit(imp, &dims);
		tp_argset_fini(&dims);
		if (set != TP_NULL_INT)
			tp_set_int(t, TRACK_DIMENSION_ARG_SET_ID, (size_t)track, set);
	}
	return track;
}

static uint32_t machine_of_thread(struct tp_import *imp, int64_t utid)
{
	if (utid >= 0 && (size_t)utid < imp->db->thread.n_rows)
		return (uint32_t)tp_col_int(&imp->db->thread, THREAD_MACHINE_ID)[utid];
	return 0;
}

static uint32_t machine_of_process(struct tp_import *imp, int64_t upid)
{
	if (upid >= 0 && (size_t)upid < imp->db->process.n_rows)
		return (uint32_t)tp_col_int(&imp->db->process, PROCESS_MACHINE_ID)[upid];
	return 0;
}

enum misc_kind {
	MISC_THREAD_TIME = 1,
	MISC_THREAD_INSTR,
	MISC_PROCESS_INSTANT,
	MISC_GLOBAL_INSTANT
};

static int64_t misc_track(struct tp_import *imp, enum misc_kind kind, int64_t owner,
			  const struct new_track *n)
{
	uint64_t k = tp_hash_mix(kind, (uint64_t)owner), v;
	int64_t track;

	if (hmap_get(&imp->te->misc_tracks, k, &v)) {
		tp_argset_fini(n->dims);
		tp_argset_fini(n->src);
		return (int64_t)v;
	}
	track = add_track(imp, n);
	if (track >= 0)
		hmap_put(&imp->te->misc_tracks, k, (uint64_t)track);
	return track;
}

int64_t te_legacy_counter_track(struct tp_import *imp, int64_t utid, bool instructions)
{
	struct tp_te *te = imp->te;
	struct tp_argset dims = {0};
	struct new_track n = {
		.type = instructions ? "thread_instructions" : "thread_time",
		.name = instructions ? te->k.thread_instruction_count : te->k.thread_time,
		.counter = true,
		.utid = utid,
		.upid = -1,
		.machine = machine_of_thread(imp, utid),
		.dims = &dims,
	};

	tp_argset_uint(imp, &dims, te->k.utid, (uint64_t)utid);
	return misc_track(imp, instructions ? MISC_THREAD_INSTR : MISC_THREAD_TIME, utid, &n);
}

int64_t te_legacy_instant_track(struct tp_import *imp, int64_t upid, bool global)
{
	struct tp_te *te = imp->te;
	struct tp_argset dims = {0}, src = {0};
	struct new_track n = {
		.type = global ? "legacy_chrome_global_instants" : "chrome_process_instant",
		.utid = -1,
		.upid = global ? -1 : upid,
		.machine = global ? 0 : machine_of_process(imp, upid),
		.dims = global ? NULL : &dims,
		.src = &src,
	};

	if (!global)
		tp_argset_uint(imp, &dims, te->k.upid, (uint64_t)upid);
	tp_argset_str(imp, &src, te->k.source, te->k.chrome);
	return misc_track(imp, global ? MISC_GLOBAL_INSTANT : MISC_PROCESS_INSTANT,
			  global ? 0 : upid, &n);
}

/* ------------------------------------------------------- legacy async ---- */

/* The name the first event with this id had (Perfetto names the set by it). */
static uint32_t async_root_name(struct tp_te *te, bool process_scoped, int64_t upid, int64_t id,
				uint32_t name)
{
	uint64_t h = tp_hash_mix(tp_hash_mix(process_scoped, (uint64_t)upid), (uint64_t)id), v;

	if (hmap_get(&te->async_root_names, h, &v))
		return (uint32_t)v;
	hmap_put(&te->async_root_names, h, name);
	return name;
}

static struct te_async_set *async_set(struct tp_import *imp, bool process_scoped, int64_t upid,
				      uint32_t scope, uint32_t root)
{
	struct tp_te *te = imp->te;
	uint64_t h = tp_hash_mix(tp_hash_mix(tp_hash_mix(process_scoped, (uint64_t)upid), scope),
				 root),
		 v;
	struct te_async_set *a;
	size_t i;

	for (i = 0; hmap_get(&te->async_sets, h + i, &v); i++) {
		a = &te->async[v];
		if (a->process_scoped == process_scoped && a->upid == upid && a->scope == scope &&
		    a->root_name == root)
			return a;
	}
	if (te->n_async == te->cap_async) {
		size_t cap = te->cap_async ? 2 * te->cap_async : 8;
		struct te_async_set *p = realloc(te->async, cap * sizeof(*p));

		if (!p)
			return NULL;
		te->async = p;
		te->cap_async = cap;
	}
	if (hmap_put(&te->async_sets, h + i, te->n_async) < 0)
		return NULL;
	a = &te->async[te->n_async++];
	memset(a, 0, sizeof(*a));
	a->process_scoped = process_scoped;
	a->upid = upid;
	a->scope = scope;
	a->root_name = root;
	a->group = tp_track_group_new(imp);
	return a;
}

/* The slot of @cookie: its own, else one with nothing open, else a new one. */
static int64_t async_slot(struct te_async_set *a, int64_t cookie)
{
	uint32_t i;

	for (i = 0; i < a->n; i++)
		if (a->tracks[i].cookie == cookie)
			return i;
	for (i = 0; i < a->n; i++) {
		if (a->tracks[i].nest == 0) {
			a->tracks[i].cookie = cookie;
			return i;
		}
	}
	if (a->n == a->cap) {
		uint32_t cap = a->cap ? 2 * a->cap : 4;
		struct te_ctrack *p;

		if (cap > 65536)
			return -1;
		p = realloc(a->tracks, cap * sizeof(*p));
		if (!p)
			return -1;
		a->tracks = p;
		a->cap = cap;
	}
	a->tracks[a->n].cookie = cookie;
	a->tracks[a->n].nest = 0;
	a->tracks[a->n].track = -1;
	return a->n++;
}

int64_t te_legacy_async_track(struct tp_import *imp, uint32_t machine, uint32_t name,
			      int64_t upid, int64_t id, bool process_scoped, uint32_t scope,
			      enum te_async_kind kind)
{
	struct tp_te *te = imp->te;
	int64_t owner = process_scoped ? upid : -1, slot, track;
	uint32_t shown = process_scoped ? te_translate(&te->tr_process_track, name) : name;
	uint32_t root = async_root_name(te, process_scoped, owner, id, shown);
	struct te_async_set *a = async_set(imp, process_scoped, owner, scope, root);
	struct te_ctrack *t;

	if (!a || (slot = async_slot(a, id)) < 0)
		return -1;
	t = &a->tracks[slot];
	if (kind == TE_ASYNC_BEGIN)
		t->nest++;
	else if (kind == TE_ASYNC_END && t->nest > 0)
		t->nest--;
	if (t->track < 0) {
		struct tp_argset dims = {0}, src = {0};
		struct new_track n = {
			.type = process_scoped ? "legacy_async_process_slice"
					       : "legacy_async_global_slice",
			.name = shown,
			.utid = -1,
			.upid = owner,
			.machine = process_scoped ? machine_of_process(imp, upid) : machine,
			.dims = &dims,
			.src = &src,
		};

		if (process_scoped)
			tp_argset_uint(imp, &dims, te->k.upid, (uint64_t)upid);
		tp_argset_str(imp, &dims, te->k.scope, scope);
		tp_argset_str(imp, &dims, te->k.name, root);
		tp_argset_uint(imp, &dims, te->k.track_compressor_idx, (uint64_t)slot);
		tp_argset_str(imp, &src, te->k.source, te->k.chrome);
		tp_argset_bool(imp, &src, te->k.trace_id_is_process_scoped, process_scoped);
		tp_argset_uint(imp, &src, te->k.upid, (uint64_t)(upid < 0 ? 0 : upid));
		tp_argset_str(imp, &src, te->k.source_scope, scope);
		track = add_track(imp, &n);
		if (track < 0)
			return -1;
		tp_set_int(&imp->db->track, TRACK_TRACK_GROUP_ID, (size_t)track, a->group);
		a->tracks[slot].track = track;
	}
	return a->tracks[slot].track;
}

/* ------------------------------------------------------------ resolution ---- */

static bool hierarchy_ok(struct tp_import *imp, uint32_t machine, uint64_t uuid)
{
	uint64_t seen[TE_MAX_HIERARCHY], cur = uuid;
	uint32_t i, j;

	for (i = 0; i < TE_MAX_HIERARCHY; i++) {
		struct te_track *t;

		if (cur == 0)
			return true;
		for (j = 0; j < i; j++) {
			if (seen[j] == cur) {
				tp_stat_add(imp, "track_event_track_hierarchy_loop", -1, 0, 1);
				return false;
			}
		}
		t = te_track_find(imp, machine, cur);
		if (!t) {
			tp_stat_add(imp, "track_hierarchy_missing_uuid", -1, 0, 1);
			return false;
		}
		seen[i] = cur;
		cur = t->parent_uuid;
	}
	tp_stat_add(imp, "track_event_track_hierarchy_too_deep", -1, 0, 1);
	return false;
}

struct te_track *te_track_resolve(struct tp_import *imp, uint64_t uuid, uint32_t machine)
{
	struct tp_te *te = imp->te;
	struct te_track *t = te_track_find(imp, machine, uuid), *parent = NULL, *root;
	bool explicit_process = false, explicit_thread = false;
	uint64_t v;
	size_t idx;

	if (!t) {
		struct te_track r;

		memset(&r, 0, sizeof(r));
		r.uuid = uuid;
		r.machine = machine;
		r.pid = r.tid = TP_NULL_INT;
		r.sibling_order_rank = INT32_MIN;
		r.name = uuid == 0 ? te->k.default_track : 0;
		t = te_track_reserve(imp, &r);
		if (!t)
			return NULL;
	}
	if (t->resolved == TE_RESOLVED)
		return t;
	if (t->resolved == TE_BROKEN || !hierarchy_ok(imp, machine, uuid)) {
		t->resolved = TE_BROKEN;
		return NULL;
	}
	/* Parents resolve first; the table may move, so keep an index. */
	idx = (size_t)(t - te->tracks);
	root = te_track_find(imp, machine, 0);
	if (root) {
		explicit_process = root->explicit_process_order;
		explicit_thread = root->explicit_thread_order;
	}
	if (t->parent_uuid) {
		parent = te_track_resolve(imp, t->parent_uuid, machine);
		t = &te->tracks[idx];
	}
	if (t->tid != TP_NULL_INT) {
		int64_t utid = te_update_thread(imp, machine, t->tid, t->pid);

		t = &te->tracks[idx];
		if (utid < 0)
			goto broken;
		if (hmap_get(&te->utid_uuid, (uint64_t)utid, &v) && v != t->uuid) {
			/* Another descriptor claimed this thread: the tid was reused. */
			utid = tp_proc_new_thread(imp, machine, TP_NULL_INT, t->tid);
			if (utid < 0)
				goto broken;
			tp_proc_set_thread_process(imp, utid, machine, t->pid);
		}
		hmap_put(&te->utid_uuid, (uint64_t)utid, t->uuid);
		/* A rank given under explicit ordering is the thread's sort hint. */
		if (explicit_thread && t->sibling_order_rank != INT32_MIN)
			tp_proc_set_sort_index(imp, true, utid, t->sibling_order_rank);
		t->scope = TE_SCOPE_THREAD;
		t->utid = utid;
		t->upid = tp_col_int(&imp->db->thread, THREAD_UPID)[utid];
		t->is_root = true;
	} else if (t->pid != TP_NULL_INT) {
		int64_t upid = te_get_process(imp, machine, t->pid);

		t = &te->tracks[idx];
		if (upid < 0)
			goto broken;
		if (hmap_get(&te->upid_uuid, (uint64_t)upid, &v) && v != t->uuid) {
			upid = tp_proc_new_process(imp, machine, TP_NULL_INT, t->pid);
			if (upid < 0)
				goto broken;
		}
		hmap_put(&te->upid_uuid, (uint64_t)upid, t->uuid);
		if (explicit_process && t->sibling_order_rank != INT32_MIN)
			tp_proc_set_sort_index(imp, false, upid, t->sibling_order_rank);
		t->scope = TE_SCOPE_PROCESS;
		t->upid = upid;
		t->is_root = true;
	} else if (parent && parent->scope != TE_SCOPE_GLOBAL) {
		t->scope = parent->scope;
		t->utid = parent->utid;
		t->upid = parent->upid;
		t->is_root = false;
	} else {
		t->scope = TE_SCOPE_GLOBAL;
		t->is_root = false;
	}
	t->resolved = TE_RESOLVED;
	return t;
broken:
	te->tracks[idx].resolved = TE_BROKEN;
	return NULL;
}

/* ------------------------------------------------------------ descriptor ---- */

static const char *const k_orderings[] = {NULL, "lexicographic", "chronological", "explicit"};

/* The args every descriptor track carries (its source). */
static void source_args(struct tp_import *imp, const struct te_track *t, uint32_t seq_id,
			bool root_in_scope, struct tp_argset *a)
{
	struct tp_te *te = imp->te;

	tp_argset_str(imp, a, te->k.source, te->k.descriptor);
	tp_argset_int(imp, a, te->k.trace_id, (int64_t)t->uuid);
	tp_argset_bool(imp, a, te->k.is_root_in_scope, root_in_scope);
	if (t->has_counter_details) {
		if (t->category)
			tp_argset_str(imp, a, te->k.category, t->category);
		if (t->builtin_type)
			tp_argset_str(imp, a, te->k.builtin_counter_type, t->builtin_type);
		if (t->y_axis_share_key)
			tp_argset_str(imp, a, te->k.y_axis_share_key, t->y_axis_share_key);
	}
	if (seq_id != TE_NO_SEQ && tp_seq_had_first_packet(imp, seq_id))
		tp_argset_bool(imp, a, te->k.has_first_packet, true);
	if (t->child_ordering && t->child_ordering < 4)
		tp_argset_str(imp, a, te->k.child_ordering,
			      tp_db_str(imp->db, k_orderings[t->child_ordering]));
	if (t->sibling_order_rank != INT32_MIN)
		tp_argset_int(imp, a, te->k.sibling_order_rank, t->sibling_order_rank);
	if (t->description)
		tp_argset_str(imp, a, te->k.description, t->description);
}

/* A track of its own for descriptor track @t (not merged). */
static int64_t own_track(struct tp_import *imp, const struct te_track *t, enum te_scope scope,
			 int64_t owner, uint32_t name, uint32_t seq_id, bool root_in_scope)
{
	struct tp_te *te = imp->te;
	struct tp_argset dims = {0}, src = {0};
	struct new_track n = {
		.name = name,
		.counter = t->is_counter ? 1 : t->is_state ? 2 : 0,
		.utid = -1,
		.upid = -1,
		.unit = t->is_counter ? t->unit : 0,
		.description = t->description,
		.dims = &dims,
		.src = &src,
	};

	switch (scope) {
	case TE_SCOPE_THREAD:
		n.type = t->is_counter ? "thread_counter_track_event"
			 : t->is_state ? "thread_state_track_event"
					: "thread_track_event";
		n.utid = owner;
		n.machine = machine_of_thread(imp, owner);
		tp_argset_uint(imp, &dims, te->k.utid, (uint64_t)owner);
		break;
	case TE_SCOPE_PROCESS:
		n.type = t->is_counter ? "process_counter_track_event"
			 : t->is_state ? "process_state_track_event"
					: "process_track_event";
		n.upid = owner;
		n.machine = machine_of_process(imp, owner);
		tp_argset_uint(imp, &dims, te->k.upid, (uint64_t)owner);
		break;
	default:
		n.type = t->is_counter ? "global_counter_track_event"
			 : t->is_state ? "global_state_track_event"
					: "global_track_event";
		n.machine = t->machine;
		break;
	}
	tp_argset_int(imp, &dims, te->k.track_uuid, (int64_t)t->uuid);
	source_args(imp, t, seq_id, root_in_scope, &src);
	return add_track(imp, &n);
}

/* The set of merged tracks for @t's parent, scope and merge key. */
static int64_t cset_for(struct tp_import *imp, const struct te_track *t, enum te_scope scope,
			int64_t owner, uint32_t name, bool set_parent, int64_t parent_track,
			bool root_in_scope)
{
	struct tp_te *te = imp->te;
	uint32_t type = t->merge, value = t->merge == TE_MERGE_BY_KEY ? t->merge_key : name;
	uint64_t h = tp_hash_mix(scope, (uint64_t)owner), v;
	struct te_cset *c;
	size_t i;

	h = tp_hash_mix(tp_hash_mix(tp_hash_mix(h, t->parent_uuid), type), value);
	h = tp_hash_mix(h, t->machine);

	for (i = 0; hmap_get(&te->csets_by_hash, h + i, &v); i++) {
		c = &te->csets[v];
		if (c->scope == scope && c->owner == owner && c->parent_uuid == t->parent_uuid &&
		    c->merge_type == type && c->merge_value == value && c->machine == t->machine)
			return (int64_t)v;
	}
	if (te->n_csets == te->cap_csets) {
		size_t cap = te->cap_csets ? 2 * te->cap_csets : 16;
		struct te_cset *p = realloc(te->csets, cap * sizeof(*p));

		if (!p)
			return -1;
		te->csets = p;
		te->cap_csets = cap;
	}
	if (hmap_put(&te->csets_by_hash, h + i, te->n_csets) < 0)
		return -1;
	c = &te->csets[te->n_csets];
	memset(c, 0, sizeof(*c));
	c->hash = h + i;
	c->scope = (uint8_t)scope;
	c->owner = owner;
	c->parent_uuid = t->parent_uuid;
	c->machine = t->machine;
	c->merge_type = type;
	c->merge_value = value;
	c->name = name;
	c->uuid = t->uuid;
	c->is_root_in_scope = root_in_scope;
	c->set_parent = set_parent;
	c->parent_track = parent_track;
	c->group = tp_track_group_new(imp);
	return (int64_t)te->n_csets++;
}

/* The track at @idx of merged set @cs, created on first use. */
static int64_t cset_track(struct tp_import *imp, int64_t cs, uint32_t idx, uint32_t seq_id)
{
	struct tp_te *te = imp->te;
	struct te_cset *c = &te->csets[cs];
	struct tp_argset dims = {0}, src = {0};
	struct new_track n = {
		.name = c->name,
		.utid = -1,
		.upid = -1,
		.dims = &dims,
		.src = &src,
	};
	struct te_track *owner;
	int64_t track;

	if (c->tracks[idx].track >= 0)
		return c->tracks[idx].track;
	switch (c->scope) {
	case TE_SCOPE_THREAD:
		n.type = "thread_merged_track_event";
		n.utid = c->owner;
		n.machine = machine_of_thread(imp, c->owner);
		tp_argset_uint(imp, &dims, te->k.utid, (uint64_t)c->owner);
		break;
	case TE_SCOPE_PROCESS:
		n.type = "process_merged_track_event";
		n.upid = c->owner;
		n.machine = machine_of_process(imp, c->owner);
		tp_argset_uint(imp, &dims, te->k.upid, (uint64_t)c->owner);
		break;
	default:
		n.type = "global_merged_track_event";
		n.machine = c->machine;
		break;
	}
	tp_argset_int(imp, &dims, te->k.parent_track_uuid, (int64_t)c->parent_uuid);
	tp_argset_uint(imp, &dims, te->k.merge_key_type, c->merge_type);
	tp_argset_str(imp, &dims, te->k.merge_key_value, c->merge_value);
	tp_argset_uint(imp, &dims, te->k.track_compressor_idx, idx);
	owner = te_track_find(imp, c->machine, c->uuid);
	if (owner)
		source_args(imp, owner, seq_id, c->is_root_in_scope, &src);
	track = add_track(imp, &n);
	c = &te->csets[cs];
	if (track < 0)
		return -1;
	c->tracks[idx].track = track;
	tp_set_int(&imp->db->track, TRACK_TRACK_GROUP_ID, (size_t)track, c->group);
	if (c->set_parent && c->parent_track >= 0)
		tp_set_int(&imp->db->track, TRACK_PARENT_ID, (size_t)track, c->parent_track);
	return track;
}

/* Index of the merged track for @cookie: its own, a free one, or a new one. */
static int64_t cset_slot(struct te_cset *c, int64_t cookie)
{
	uint32_t i;

	for (i = 0; i < c->n; i++)
		if (c->tracks[i].cookie == cookie)
			return i;
	for (i = 0; i < c->n; i++) {
		if (c->tracks[i].nest == 0) {
			c->tracks[i].cookie = cookie;
			return i;
		}
	}
	if (c->n == c->cap) {
		uint32_t cap = c->cap ? 2 * c->cap : 4;
		struct te_ctrack *p;

		if (cap > 65536)
			return -1;
		p = realloc(c->tracks, cap * sizeof(*p));
		if (!p)
			return -1;
		c->tracks = p;
		c->cap = cap;
	}
	c->tracks[c->n].cookie = cookie;
	c->tracks[c->n].nest = 0;
	c->tracks[c->n].track = -1;
	return c->n++;
}

static int64_t intern_track(struct tp_import *imp, uint64_t uuid, uint32_t event_name,
			    uint32_t machine, uint32_t seq_id);

/* A parent's track: its own, or the first of its merged set. */
static int64_t parent_track(struct tp_import *imp, uint64_t uuid, uint32_t machine, uint32_t seq_id)
{
	struct te_track *p;
	int64_t slot;

	if (intern_track(imp, uuid, 0, machine, seq_id) < 0)
		return -1;
	p = te_track_find(imp, machine, uuid);
	if (!p)
		return -1;
	if (p->track >= 0)
		return p->track;
	if (p->cset < 0)
		return -1;
	/* Children hang off the set's first track. */
	slot = imp->te->csets[p->cset].n ? 0 : cset_slot(&imp->te->csets[p->cset], 0);
	return slot < 0 ? -1 : cset_track(imp, p->cset, (uint32_t)slot, seq_id);
}

/* Makes @uuid's track (or merged set). Return: 0, or -1 if broken. */
static int64_t intern_track(struct tp_import *imp, uint64_t uuid, uint32_t event_name,
			    uint32_t machine, uint32_t seq_id)
{
	struct tp_te *te = imp->te;
	struct te_track *t = te_track_resolve(imp, uuid, machine), *p = NULL;
	int64_t ptrack = -1, track = -1, cs;
	size_t idx;
	uint32_t name;
	bool p_root = true;

	if (!t)
		return -1;
	if (t->interned)
		return 0;
	idx = (size_t)(t - te->tracks);
	if (t->parent_uuid) {
		ptrack = parent_track(imp, t->parent_uuid, machine, seq_id);
		p = te_track_find(imp, machine, t->parent_uuid);
		t = &te->tracks[idx];
		if (p && p->resolved == TE_RESOLVED)
			p_root = p->is_root;
		else
			p = NULL;
	}
	if (t->is_root) {
		if (t->scope == TE_SCOPE_THREAD) {
			if (t->is_counter || t->separate)
				track = own_track(imp, t, TE_SCOPE_THREAD, t->utid, t->name, seq_id,
						  true);
			else
				track = te_thread_track(imp, t->utid);
		} else {
			track = own_track(imp, t, TE_SCOPE_PROCESS, t->upid,
					  te_translate(&te->tr_process_track, t->name), seq_id,
					  true);
		}
		t = &te->tracks[idx];
		t->track = track;
		t->interned = track >= 0;
		return track >= 0 ? 0 : -1;
	}
	name = t->name ? t->name : event_name;
	if (p && p->scope != TE_SCOPE_GLOBAL) {
		enum te_scope sc = (enum te_scope)p->scope;
		int64_t owner = sc == TE_SCOPE_THREAD ? p->utid : p->upid;

		if (sc == TE_SCOPE_PROCESS)
			name = te_translate(&te->tr_process_track, name);
		if (t->is_counter) {
			uint32_t cname = sc == TE_SCOPE_PROCESS
						 ? te_translate(&te->tr_process_track, t->name)
						 : t->name;

			track = own_track(imp, t, sc, owner, cname, seq_id, false);
		} else if (t->merge == TE_MERGE_NONE || t->is_state) {
			track = own_track(imp, t, sc, owner, name, seq_id, false);
		} else {
			cs = cset_for(imp, t, sc, owner, name, !p_root, ptrack, false);
			t = &te->tracks[idx];
			t->cset = cs;
			t->interned = cs >= 0;
			return cs >= 0 ? 0 : -1;
		}
		t = &te->tracks[idx];
		if (track >= 0 && !p_root && ptrack >= 0)
			tp_set_int(&imp->db->track, TRACK_PARENT_ID, (size_t)track, ptrack);
	} else {
		bool root_in_scope = uuid == 0;

		if (t->is_counter || t->merge == TE_MERGE_NONE || t->is_state) {
			track = own_track(imp, t, TE_SCOPE_GLOBAL, 0,
					  t->is_counter ? t->name : name, seq_id, root_in_scope);
		} else {
			cs = cset_for(imp, t, TE_SCOPE_GLOBAL, 0, name, true, ptrack,
				      root_in_scope);
			t = &te->tracks[idx];
			t->cset = cs;
			t->interned = cs >= 0;
			return cs >= 0 ? 0 : -1;
		}
		t = &te->tracks[idx];
		if (track >= 0 && ptrack >= 0)
			tp_set_int(&imp->db->track, TRACK_PARENT_ID, (size_t)track, ptrack);
	}
	t->track = track;
	t->interned = track >= 0;
	return track >= 0 ? 0 : -1;
}

int64_t te_track_for_event(struct tp_import *imp, uint64_t uuid, uint32_t event_name,
			   enum te_use use, uint32_t machine, uint32_t seq_id)
{
	struct te_track *t;
	struct te_cset *c;
	int64_t slot;

	if (uuid == 0)
		seq_id = TE_NO_SEQ;
	if (intern_track(imp, uuid, event_name, machine, seq_id) < 0)
		return -1;
	t = te_track_find(imp, machine, uuid);
	if (!t)
		return -1;
	if (t->track >= 0)
		return t->track;
	if (t->cset < 0 || use == TE_USE_OTHER)
		return -1;
	c = &imp->te->csets[t->cset];
	slot = cset_slot(c, (int64_t)uuid);
	if (slot < 0)
		return -1;
	if (use == TE_USE_BEGIN)
		c->tracks[slot].nest++;
	else if (use == TE_USE_END && c->tracks[slot].nest > 0)
		c->tracks[slot].nest--;
	return cset_track(imp, t->cset, (uint32_t)slot, seq_id);
}

void te_track_fini(struct tp_te *te)
{
	size_t i;

	hmap_fini(&te->uuids);
	free(te->tracks);
	for (i = 0; i < te->n_csets; i++)
		free(te->csets[i].tracks);
	free(te->csets);
	hmap_fini(&te->csets_by_hash);
	hmap_fini(&te->utid_uuid);
	hmap_fini(&te->upid_uuid);
	hmap_fini(&te->misc_tracks);
	hmap_fini(&te->named_by_descriptor);
	for (i = 0; i < te->n_async; i++)
		free(te->async[i].tracks);
	free(te->async);
	hmap_fini(&te->async_sets);
	hmap_fini(&te->async_root_names);
}
