// SPDX-License-Identifier: Apache-2.0
/*
 * profiling.c - linux.perf samples as Perfetto imports them: each
 * sequence is one perf session; a sample's timebase count goes to the
 * perf_cpu_counter track of its (session, cpu); its callstack (interned
 * on the sequence) becomes rows of stack_profile_mapping, _frame and
 * _callsite, deduplicated as Perfetto does (mappings per process and
 * interned entry, frames per mapping, callsites per parent and frame);
 * records of lost data or of the producer become stats.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/common/common.h"
#include "trace_processor/import/profiling/profiling.h"
#include "trace_processor/import/profiling/profiling_int.h"

#define MAX_PATH_PARTS 64
#define MAX_NAME_BYTES 4096
#define MAX_FOLLOWERS 64 /* counters read at each sample */

struct tp_profiling *tp_prof_state(struct tp_import *imp)
{
	struct tp_profiling *p = imp->profiling;

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	hmap_init(&p->index);
	p->ss_inline_mapping = -1;
	p->art_meta_mapping = -1;
	p->te_inline_mapping = -1;
	p->s_cpu_clock = tp_db_str(imp->db, "cpu-clock");
	p->s_empty = tp_db_str(imp->db, "");
	imp->profiling = p;
	return p;
}

void tp_profiling_fini(struct tp_import *imp)
{
	struct tp_profiling *p = imp->profiling;

	if (!p)
		return;
	hmap_fini(&p->index);
	free(p->keys);
	for (size_t i = 0; i < p->n_streams; i++)
		free(p->streams[i].followers);
	free(p->streams);
	tp_heap_profile_fini(p);
	tp_heap_graph_fini(p);
	tp_prof_symbol_frames_fini(p);
	free(p);
	imp->profiling = NULL;
}

static uint64_t key_hash(const struct key *k)
{
	return tp_hash_mix(tp_hash_mix(tp_hash_mix(k->kind, k->a), k->b), k->c);
}

static bool key_eq(const struct key *x, const struct key *y)
{
	return x->kind == y->kind && x->a == y->a && x->b == y->b && x->c == y->c;
}

/* The row remembered for @k, or -1; *out_h: where to remember it. */
int64_t tp_prof_key_find(const struct tp_profiling *p, const struct key *k, uint64_t *out_h)
{
	uint64_t h = key_hash(k), v;

	while (hmap_get(&p->index, h, &v)) {
		if (key_eq(&p->keys[v], k))
			return p->keys[v].row;
		h++;
	}
	*out_h = h;
	return -1;
}

void tp_prof_key_put(struct tp_profiling *p, uint64_t h, const struct key *k, int64_t row)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		struct key *keys;

		if (cap > MAX_KEYS)
			return;
		keys = realloc(p->keys, cap * sizeof(*keys));
		if (!keys)
			return;
		p->keys = keys;
		p->cap = cap;
	}
	if (hmap_put(&p->index, h, p->n) < 0)
		return;
	p->keys[p->n] = *k;
	p->keys[p->n].row = row;
	p->n++;
}

void tp_prof_key_set(struct tp_profiling *p, const struct key *k, int64_t row)
{
	uint64_t h = key_hash(k), v;

	while (hmap_get(&p->index, h, &v)) {
		if (key_eq(&p->keys[v], k)) {
			p->keys[v].row = row;
			return;
		}
		h++;
	}
	tp_prof_key_put(p, h, k, row);
}

/* ----------------------------------------------------------- sessions ---- */

static int64_t session_of(struct tp_import *imp, struct tp_profiling *p, uint32_t seq_id)
{
	struct key k = {KEY_SESSION, seq_id, 0, 0, 0};
	struct tp_table *t = &imp->db->perf_session;
	uint64_t h;
	int64_t row = tp_prof_key_find(p, &k, &h);

	if (row >= 0)
		return row;
	row = tp_table_append(t);
	if (row < 0)
		return -1;
	tp_set_int(t, PERF_SESS_PERF_SESSION_ID, (size_t)row, row);
	tp_set_str(t, PERF_SESS_SOURCE, (size_t)row, tp_db_str(imp->db, "linux.perf"));
	tp_prof_key_put(p, h, &k, row);
	return row;
}

/* Where the event fields of a PerfEvents.Timebase or a FollowerEvent are. */
struct event_fields {
	uint32_t counter, tracepoint, raw, name, modifiers;
};

static const struct event_fields k_timebase = {
	PB_PERF_EVENTS_TIMEBASE__COUNTER, PB_PERF_EVENTS_TIMEBASE__TRACEPOINT,
	PB_PERF_EVENTS_TIMEBASE__RAW_EVENT, PB_PERF_EVENTS_TIMEBASE__NAME,
	PB_PERF_EVENTS_TIMEBASE__MODIFIERS};
static const struct event_fields k_follower = {
	PB_FOLLOWER_EVENT__COUNTER, PB_FOLLOWER_EVENT__TRACEPOINT, PB_FOLLOWER_EVENT__RAW_EVENT,
	PB_FOLLOWER_EVENT__NAME, PB_FOLLOWER_EVENT__MODIFIERS};

/* perf's name of a generic counter (PerfEvents.Counter). */
static const char *counter_name(uint64_t c)
{
	static const char *const names[] = {
		[1] = "cpu-clock", [2] = "page-faults", [3] = "task-clock",
		[4] = "context-switches", [5] = "cpu-migrations", [6] = "minor-faults",
		[7] = "major-faults", [8] = "alignment-faults", [9] = "emulation-faults",
		[10] = "cpu-cycles", [11] = "instructions", [12] = "cache-references",
		[13] = "cache-misses", [14] = "branch-instructions", [15] = "branch-misses",
		[16] = "bus-cycles", [17] = "stalled-cycles-frontend",
		[18] = "stalled-cycles-backend", [19] = "ref-cycles", [20] = "dummy"};

	return c < sizeof(names) / sizeof(names[0]) && names[c] ? names[c] : "unknown";
}

/*
 * What a session's timebase counts, as Perfetto names it: time for the
 * clocks, "cycles" and "instructions" for those hardware counters, "count"
 * for any other counter or a tracepoint; NULL for a raw event or none.
 */
static const char *timebase_unit(const uint8_t *data, uint32_t len)
{
	struct pz_reader r;
	struct pz_field f;
	bool has_counter = false, has_tracepoint = false;
	uint64_t counter = 0;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_PERF_EVENTS_TIMEBASE__COUNTER && f.wire_type != PZ_WIRE_LEN) {
			counter = f.value;
			has_counter = true;
		} else if (f.id == PB_PERF_EVENTS_TIMEBASE__TRACEPOINT) {
			has_tracepoint = true;
		}
	}
	if (has_counter) {
		switch (counter) {
		case PBE_PERF_EVENTS_COUNTER__SW_CPU_CLOCK:
		case PBE_PERF_EVENTS_COUNTER__SW_TASK_CLOCK:
			return "ns";
		case PBE_PERF_EVENTS_COUNTER__HW_CPU_CYCLES:
		case PBE_PERF_EVENTS_COUNTER__HW_BUS_CYCLES:
		case PBE_PERF_EVENTS_COUNTER__HW_REF_CPU_CYCLES:
			return "cycles";
		case PBE_PERF_EVENTS_COUNTER__HW_INSTRUCTIONS:
			return "instructions";
		default:
			return "count";
		}
	}
	return has_tracepoint ? "count" : NULL;
}

/*
 * The counter name of an event (@data, @len; fields @ef): its own name,
 * else the counter's, the tracepoint's or a raw event's type and configs,
 * with perf's modifier suffix (":u", ":k", ":h" in the order given).
 */
static uint32_t event_name(struct tp_import *imp, const uint8_t *data, uint32_t len,
			   const struct event_fields *ef)
{
	char buf[512];
	size_t n = 0;
	struct pz_reader r;
	struct pz_field f;
	const uint8_t *name = NULL, *tp = NULL, *raw = NULL;
	uint32_t name_len = 0, tp_len = 0, raw_len = 0;
	uint64_t counter = 0;
	bool has_counter = false;
	char mods[64];
	size_t n_mods = 0;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == ef->name && f.wire_type == PZ_WIRE_LEN) {
			name = f.data;
			name_len = f.size;
		} else if (f.id == ef->counter && f.wire_type != PZ_WIRE_LEN) {
			counter = f.value;
			has_counter = true;
		} else if (f.id == ef->tracepoint && f.wire_type == PZ_WIRE_LEN) {
			tp = f.data;
			tp_len = f.size;
		} else if (f.id == ef->raw && f.wire_type == PZ_WIRE_LEN) {
			raw = f.data;
			raw_len = f.size;
		} else if (f.id == ef->modifiers) {
			struct pz_varints it;
			uint64_t m;

			pz_varints_init(&it, &f);
			while (pz_varints_next(&it, &m)) {
				if (n_mods < sizeof(mods) && m >= 1 && m <= 3)
					mods[n_mods++] = "ukh"[m - 1];
			}
		}
	}
	if (name_len > 0) {
		n = name_len < sizeof(buf) - 80 ? name_len : sizeof(buf) - 80;
		memcpy(buf, name, n);
	} else if (has_counter) {
		n = (size_t)snprintf(buf, sizeof(buf), "%s", counter_name(counter));
	} else if (tp) {
		struct pz_field t[2];

		if (pz_decode_table(tp, tp_len, t, 2) == PZ_OK && t[1].wire_type == PZ_WIRE_LEN) {
			n = t[1].size < sizeof(buf) - 80 ? t[1].size : sizeof(buf) - 80;
			memcpy(buf, t[1].data, n);
		}
	} else if (raw) {
		struct pz_field t[5];

		if (pz_decode_table(raw, raw_len, t, 5) == PZ_OK)
			n = (size_t)snprintf(buf, sizeof(buf),
					     "raw.0x%" PRIx32 ".0x%" PRIx64 ".0x%" PRIx64
					     ".0x%" PRIx64,
					     (uint32_t)t[PB_PERF_EVENTS_RAW_EVENT__TYPE].value,
					     t[PB_PERF_EVENTS_RAW_EVENT__CONFIG].value,
					     t[PB_PERF_EVENTS_RAW_EVENT__CONFIG1].value,
					     t[PB_PERF_EVENTS_RAW_EVENT__CONFIG2].value);
	} else {
		n = (size_t)snprintf(buf, sizeof(buf), "unknown");
	}
	if (n_mods && n + 1 + n_mods < sizeof(buf)) {
		buf[n++] = ':';
		memcpy(buf + n, mods, n_mods);
		n += n_mods;
	}
	return tp_str_intern(&imp->db->strings, buf, n);
}

/* The perf_cpu_counter track of event @name on (@session, @cpu). */
static int64_t counter_track(struct tp_import *imp, int64_t session, uint32_t cpu,
			     uint32_t machine, uint32_t name, bool is_timebase)
{
	struct tp_dim dims[3] = {{"cpu", TP_DIM_UINT, cpu},
				 {"perf_session_id", TP_DIM_UINT, session},
				 {"name", TP_DIM_STR, name}};
	struct tp_argset src = {0};
	int64_t row, set;

	row = tp_track_dims(imp, "perf_cpu_counter", name, true, machine, dims, 3, 0);
	if (row < 0)
		return row;
	tp_argset_bool(imp, &src, tp_db_str(imp->db, "is_timebase"), is_timebase);
	set = tp_argset_commit(imp, &src);
	tp_argset_fini(&src);
	if (set != TP_NULL_INT)
		tp_set_int(&imp->db->track, TRACK_SOURCE_ARG_SET_ID, (size_t)row, set);
	return row;
}

/*
 * The counter tracks of (@session, @cpu), made on its first sample from
 * the sequence's PerfSampleDefaults (@defaults, may be NULL): the
 * timebase's, then one per follower. Without defaults the producer is
 * taken to sample on the cpu clock, as Perfetto assumes of the first
 * traced_perf releases. Return: the stream, or NULL.
 */
static struct stream *stream_of(struct tp_import *imp, struct tp_profiling *p, int64_t session,
				uint32_t cpu, uint32_t machine, const struct tp_seq_gen *g)
{
	struct key k = {KEY_CPU_TRACK, (uint64_t)session, cpu, machine, 0};
	struct stream *st;
	struct pz_reader r;
	struct pz_field f;
	uint64_t h;
	int64_t idx = tp_prof_key_find(p, &k, &h);
	uint32_t name = p->s_cpu_clock;
	const char *unit = "ns";
	const uint8_t *defaults = g ? g->perf_defaults : NULL;
	uint32_t defaults_len = g ? g->perf_defaults_len : 0;

	if (idx >= 0)
		return &p->streams[idx];
	if (p->n_streams == p->cap_streams) {
		size_t cap = p->cap_streams ? p->cap_streams * 2 : 16;
		struct stream *s;

		if (cap > MAX_KEYS)
			return NULL;
		s = realloc(p->streams, cap * sizeof(*s));
		if (!s)
			return NULL;
		p->streams = s;
		p->cap_streams = cap;
	}
	st = &p->streams[p->n_streams];
	memset(st, 0, sizeof(*st));
	if (defaults) {
		struct pz_field d[5];

		if (pz_decode_table(defaults, defaults_len, d, 5) == PZ_OK) {
			const struct pz_field *tb = &d[PB_PERF_SAMPLE_DEFAULTS__TIMEBASE];

			name = event_name(imp, tb->id ? tb->data : NULL, tb->id ? tb->size : 0,
					  &k_timebase);
			unit = timebase_unit(tb->id ? tb->data : NULL, tb->id ? tb->size : 0);
			if (d[PB_PERF_SAMPLE_DEFAULTS__PROCESS_SHARD_COUNT].value > 0) {
				tp_stat_set(imp, "perf_process_shard_count", session, machine,
					    (int64_t)d[PB_PERF_SAMPLE_DEFAULTS__PROCESS_SHARD_COUNT]
						    .value);
				tp_stat_set(imp, "perf_chosen_process_shard", session, machine,
					    (int64_t)d[PB_PERF_SAMPLE_DEFAULTS__CHOSEN_PROCESS_SHARD]
						    .value);
			}
		}
	}
	/* The session's first stream names its unit, as in Perfetto. */
	if (unit && tp_get_str(&imp->db->perf_session, PERF_SESS_TIMEBASE_UNIT, (size_t)session) ==
			    TP_NULL_STR)
		tp_set_str(&imp->db->perf_session, PERF_SESS_TIMEBASE_UNIT, (size_t)session,
			   tp_db_str(imp->db, unit));
	st->timebase = counter_track(imp, session, cpu, machine, name, true);
	if (defaults) {
		pz_reader_init(&r, defaults, defaults_len);
		while (pz_reader_next(&r, &f) > 0) {
			int64_t *fl;

			if (f.id != PB_PERF_SAMPLE_DEFAULTS__FOLLOWERS || f.wire_type != PZ_WIRE_LEN ||
			    st->n_followers >= MAX_FOLLOWERS)
				continue;
			fl = realloc(st->followers, (st->n_followers + 1) * sizeof(*fl));
			if (!fl)
				break;
			st->followers = fl;
			fl[st->n_followers++] =
				counter_track(imp, session, cpu, machine,
					      event_name(imp, f.data, f.size, &k_follower), false);
		}
	}
	tp_prof_key_put(p, h, &k, (int64_t)p->n_streams);
	p->n_streams++;
	return st;
}

/* ------------------------------------------------------- interned data ---- */

/* Field 2 (str) of an InternedString entry, or false if it has none. */
static bool interned_bytes(const struct tp_interned *e, const uint8_t **out, uint32_t *out_len)
{
	struct pz_field f[3];

	if (pz_decode_table(e->msg, e->len, f, 3) != PZ_OK || f[2].wire_type != PZ_WIRE_LEN) {
		*out = (const uint8_t *)"";
		*out_len = 0;
		return true;
	}
	*out = f[2].data;
	*out_len = f[2].size;
	return true;
}

static const struct tp_interned *lookup(struct tp_import *imp, uint32_t gen, uint32_t field,
					uint64_t iid, const char *stat, uint32_t machine)
{
	const struct tp_interned *e = tp_seq_interned(imp, gen, field, iid);

	if (!e)
		tp_stat_add(imp, stat, -1, machine, 1);
	return e;
}

int64_t tp_prof_mapping_row(struct tp_import *imp, uint32_t build_id, uint32_t name,
			   const uint64_t v[5])
{
	struct tp_table *t = &imp->db->sp_mapping;
	int64_t row = tp_table_append(t);

	if (row < 0)
		return -1;
	tp_set_str(t, SP_MAP_BUILD_ID, (size_t)row, build_id);
	tp_set_int(t, SP_MAP_EXACT_OFFSET, (size_t)row, (int64_t)v[0]);
	tp_set_int(t, SP_MAP_START_OFFSET, (size_t)row, (int64_t)v[1]);
	tp_set_int(t, SP_MAP_START, (size_t)row, (int64_t)v[2]);
	tp_set_int(t, SP_MAP_END, (size_t)row, (int64_t)v[3]);
	tp_set_int(t, SP_MAP_LOAD_BIAS, (size_t)row, (int64_t)v[4]);
	tp_set_str(t, SP_MAP_NAME, (size_t)row, name);
	return row;
}

/* The build id as lowercase hex, interned ("" for none). */
uint32_t tp_prof_build_id_hex(struct tp_import *imp, const uint8_t *raw, uint32_t len)
{
	static const char digits[] = "0123456789abcdef";
	char buf[2 * 256];
	uint32_t i;

	if (len > 256)
		len = 256;
	for (i = 0; i < len; i++) {
		buf[2 * i] = digits[raw[i] >> 4];
		buf[2 * i + 1] = digits[raw[i] & 15];
	}
	return tp_str_intern(&imp->db->strings, buf, 2 * (size_t)len);
}

int64_t tp_prof_shared_mapping(struct tp_import *imp, struct tp_profiling *p, uint32_t build_id,
			       uint32_t name, const uint64_t v[5])
{
	struct key mk = {KEY_MAPPING, 0, name, build_id, 0};
	uint64_t x = 0, h;
	int64_t row;
	unsigned i;

	for (i = 0; i < 5; i++)
		x = tp_hash_mix(x, v[i]);
	mk.a = x;
	row = tp_prof_key_find(p, &mk, &h);
	if (row < 0) {
		row = tp_prof_mapping_row(imp, build_id, name, v);
		if (row >= 0)
			tp_prof_key_put(p, h, &mk, row);
	}
	return row;
}

/*
 * The mapping of interned Mapping @iid as seen by process @upid: a
 * mapping with an address range belongs to its process; one without (or
 * the kernel's) is shared by every mapping equal to it. Return: its row,
 * or -1 (counted).
 */
static int64_t mapping_of(struct tp_import *imp, struct tp_profiling *p, uint32_t gen,
			  int64_t upid, uint64_t iid, uint32_t machine)
{
	const struct tp_interned *e;
	struct pz_reader r;
	struct pz_field f;
	struct key k = {KEY_MAPPING_IID, (uint64_t)(upid + 1), 0, 0, 0};
	uint64_t h, v[5] = {0}, bid_iid = 0;
	int64_t row;
	char name[MAX_NAME_BYTES];
	size_t name_len = 0;
	uint32_t build_id, name_id;
	bool path_ok = true, shared;

	e = lookup(imp, gen, PB_INTERNED_DATA__MAPPINGS, iid, "stackprofile_invalid_mapping_id",
		   machine);
	if (!e)
		return -1;
	k.b = tp_seq_interned_index(imp, e);
	row = tp_prof_key_find(p, &k, &h);
	if (row >= 0)
		return row;
	pz_reader_init(&r, e->msg, e->len);
	while (pz_reader_next(&r, &f) > 0) {
		switch (f.id) {
		case PB_MAPPING__BUILD_ID: bid_iid = f.value; break;
		case PB_MAPPING__EXACT_OFFSET: v[0] = f.value; break;
		case PB_MAPPING__START_OFFSET: v[1] = f.value; break;
		case PB_MAPPING__START: v[2] = f.value; break;
		case PB_MAPPING__END: v[3] = f.value; break;
		case PB_MAPPING__LOAD_BIAS: v[4] = f.value; break;
		case PB_MAPPING__PATH_STRING_IDS: {
			/* Packed or not: each id is one path component, '/' before it. */
			struct pz_varints it;
			uint64_t sid;

			pz_varints_init(&it, &f);
			while (path_ok && pz_varints_next(&it, &sid)) {
				const struct tp_interned *s;
				const uint8_t *b;
				uint32_t bl;

				s = lookup(imp, gen, PB_INTERNED_DATA__MAPPING_PATHS, sid,
					   "stackprofile_invalid_string_id", machine);
				if (!s) {
					path_ok = false;
					break;
				}
				interned_bytes(s, &b, &bl);
				if (name_len + 1 + bl <= sizeof(name)) {
					name[name_len++] = '/';
					memcpy(name + name_len, b, bl);
					name_len += bl;
				}
			}
			break;
		}
		default:
			break;
		}
	}
	/* A single full path gets one '/' too many: drop it. */
	if (name_len >= 2 && name[0] == '/' && name[1] == '/') {
		memmove(name, name + 1, name_len - 1);
		name_len--;
	}
	if (bid_iid) {
		const struct tp_interned *s;
		const uint8_t *b;
		uint32_t bl;

		s = lookup(imp, gen, PB_INTERNED_DATA__BUILD_IDS, bid_iid,
			   "stackprofile_invalid_string_id", machine);
		if (!s)
			return -1;
		interned_bytes(s, &b, &bl);
		build_id = tp_prof_build_id_hex(imp, b, bl);
	} else {
		build_id = p->s_empty;
	}
	name_id = tp_str_intern(&imp->db->strings, name, name_len);
	shared = v[2] == v[3] || upid < 0 ||
		 (name_len >= 17 && memcmp(name, "[kernel.kallsyms]", 17) == 0);
	if (shared) {
		row = tp_prof_shared_mapping(imp, p, build_id, name_id, v);
	} else {
		row = tp_prof_mapping_row(imp, build_id, name_id, v);
	}
	if (row >= 0)
		tp_prof_key_put(p, h, &k, row);
	return row;
}

static const char *frame_kind(uint64_t kind)
{
	static const char *const names[] = {NULL,  "native", "kernel", "interpreted",
					    "jit", "gc",     "runtime"};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : NULL;
}

int64_t tp_prof_frame_row(struct tp_import *imp, struct tp_profiling *p, int64_t mapping,
			  uint64_t rel_pc, uint32_t name)
{
	struct tp_table *t = &imp->db->sp_frame;
	struct key k = {KEY_FRAME, (uint64_t)mapping, rel_pc, name, 0};
	uint64_t h;
	int64_t row = tp_prof_key_find(p, &k, &h);

	if (row >= 0)
		return row;
	row = tp_table_append(t);
	if (row < 0)
		return -1;
	tp_set_str(t, SP_FRAME_NAME, (size_t)row, name);
	tp_set_int(t, SP_FRAME_MAPPING, (size_t)row, mapping);
	tp_set_int(t, SP_FRAME_REL_PC, (size_t)row, (int64_t)rel_pc);
	tp_prof_key_put(p, h, &k, row);
	return row;
}

/*
 * The frame of interned Frame @iid in process @upid; its row, or -1
 * (counted). A frame naming no mapping is on its sequence's dummy mapping,
 * one per (name, source file, line) with a symbol; one of a mapping gets
 * a symbol when it gives its source file or line.
 */
static int64_t frame_of(struct tp_import *imp, struct tp_profiling *p, uint32_t gen, int64_t upid,
			uint64_t iid, uint32_t machine)
{
	const struct tp_interned *e;
	struct pz_field f[9];
	struct tp_table *t = &imp->db->sp_frame;
	uint32_t name = 0, type = 0, file = 0;
	int64_t line = TP_NULL_INT, mapping, row;

	struct key fk = {KEY_FRAME_IID, (uint64_t)(upid + 1), 0, 0, 0};
	uint64_t h;

	e = lookup(imp, gen, PB_INTERNED_DATA__FRAMES, iid, "stackprofile_invalid_frame_id",
		   machine);
	if (!e)
		return -1;
	/* An interned frame resolves to one row per process: remembered. */
	fk.b = tp_seq_interned_index(imp, e);
	row = tp_prof_key_find(p, &fk, &h);
	if (row >= 0)
		return row;
	if (pz_decode_table(e->msg, e->len, f, 9) != PZ_OK)
		return -1;
	if (f[PB_FRAME__FUNCTION_NAME_ID].value) {
		const struct tp_interned *s;
		const uint8_t *b;
		uint32_t bl;

		s = lookup(imp, gen, PB_INTERNED_DATA__FUNCTION_NAMES,
			   f[PB_FRAME__FUNCTION_NAME_ID].value, "stackprofile_invalid_string_id",
			   machine);
		if (!s)
			return -1;
		interned_bytes(s, &b, &bl);
		name = tp_str_intern(&imp->db->strings, (const char *)b, bl);
	}
	if (f[PB_FRAME__SOURCE_PATH_IID].id) {
		const struct tp_interned *s;
		const uint8_t *b;
		uint32_t bl;

		s = lookup(imp, gen, PB_INTERNED_DATA__SOURCE_PATHS,
			   f[PB_FRAME__SOURCE_PATH_IID].value, "stackprofile_invalid_string_id",
			   machine);
		if (!s)
			return -1;
		interned_bytes(s, &b, &bl);
		file = tp_str_intern(&imp->db->strings, (const char *)b, bl);
	}
	if (f[PB_FRAME__LINE_NUMBER].id)
		line = (uint32_t)f[PB_FRAME__LINE_NUMBER].value;
	if (f[PB_FRAME__MAPPING_ID].value) {
		size_t before = t->n_rows;

		mapping = mapping_of(imp, p, gen, upid, f[PB_FRAME__MAPPING_ID].value, machine);
		if (mapping < 0)
			return -1;
		row = tp_prof_frame_row(imp, p, mapping, f[PB_FRAME__REL_PC].value, name);
		if (row >= 0 && t->n_rows > before && (file || line != TP_NULL_INT)) {
			int64_t set = tp_prof_symbol(imp, name, file, line);

			if (set >= 0)
				tp_set_int(t, SP_FRAME_SYMBOL_SET_ID, (size_t)row, set);
		}
	} else {
		/* The sequence's own dummy mapping. */
		const struct tp_seq_gen *g = tp_seq_gen(imp, gen);
		struct key k = {KEY_SEQ_DUMMY_MAPPING, g ? (uint64_t)g->slot + 1 : 0, 0, 0, 0};
		uint64_t mh;
		int64_t m = tp_prof_key_find(p, &k, &mh);

		row = tp_prof_dummy_frame(imp, p, &m, "", name, file, line);
		if (m >= 0 && tp_prof_key_find(p, &k, &mh) < 0)
			tp_prof_key_put(p, mh, &k, m);
	}
	if (row < 0)
		return -1;
	if (f[PB_FRAME__KIND].id) {
		const char *kind = frame_kind(f[PB_FRAME__KIND].value);

		if (kind)
			type = tp_db_str(imp->db, kind);
	} else if (f[PB_FRAME__KIND_STR].id == PB_FRAME__KIND_STR) {
		type = tp_str_intern(&imp->db->strings, (const char *)f[PB_FRAME__KIND_STR].data,
				     f[PB_FRAME__KIND_STR].size);
	}
	if (type)
		tp_set_str(t, SP_FRAME_TYPE, (size_t)row, type);
	/* Found again: the keys added since may have taken the slot found first. */
	if (tp_prof_key_find(p, &fk, &h) < 0)
		tp_prof_key_put(p, h, &fk, row);
	return row;
}

int64_t tp_prof_callsite(struct tp_import *imp, struct tp_profiling *p, int64_t parent,
			int64_t frame, uint32_t depth)
{
	struct key k = {KEY_CALLSITE, (uint64_t)(parent + 1), (uint64_t)frame, 0, 0};
	struct tp_table *t = &imp->db->sp_callsite;
	uint64_t h;
	int64_t row = tp_prof_key_find(p, &k, &h);

	if (row >= 0)
		return row;
	row = tp_table_append(t);
	if (row < 0)
		return -1;
	tp_set_int(t, SP_CS_DEPTH, (size_t)row, depth);
	if (parent >= 0)
		tp_set_int(t, SP_CS_PARENT_ID, (size_t)row, parent);
	tp_set_int(t, SP_CS_FRAME_ID, (size_t)row, frame);
	tp_prof_key_put(p, h, &k, row);
	return row;
}

/* The leaf callsite of interned Callstack @iid (frames root first), or -1 (counted). */
int64_t tp_prof_callstack(struct tp_import *imp, struct tp_profiling *p, uint32_t gen,
			    int64_t upid, uint64_t iid, uint32_t machine)
{
	const struct tp_interned *e;
	struct pz_reader r;
	struct pz_field f;
	int64_t parent = -1;
	uint32_t depth = 0;

	struct key ck = {KEY_CALLSTACK_IID, (uint64_t)(upid + 1), 0, 0, 0};
	uint64_t h;
	int64_t row;

	e = lookup(imp, gen, PB_INTERNED_DATA__CALLSTACKS, iid,
		   "stackprofile_invalid_callstack_id", machine);
	if (!e)
		return -1;
	/*
	 * A profile names the same few callstacks over and over: the leaf of
	 * an interned callstack is remembered per process, so a sample costs
	 * one lookup, not one per frame.
	 */
	ck.b = tp_seq_interned_index(imp, e);
	row = tp_prof_key_find(p, &ck, &h);
	if (row >= 0)
		return row;
	pz_reader_init(&r, e->msg, e->len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_varints it;
		uint64_t fid;

		if (f.id != PB_CALLSTACK__FRAME_IDS)
			continue;
		pz_varints_init(&it, &f);
		while (pz_varints_next(&it, &fid)) {
			int64_t frame = frame_of(imp, p, gen, upid, fid, machine);

			if (frame < 0)
				return -1;
			parent = tp_prof_callsite(imp, p, parent, frame, depth++);
			if (parent < 0)
				return -1;
		}
	}
	if (parent < 0)
		tp_stat_add(imp, "stackprofile_empty_callstack", -1, machine, 1);
	else if (tp_prof_key_find(p, &ck, &h) < 0)
		tp_prof_key_put(p, h, &ck, parent);
	return parent;
}

int64_t tp_prof_symbol(struct tp_import *imp, uint32_t name, uint32_t source_file,
		       int64_t line_number)
{
	struct tp_table *t = &imp->db->sp_symbol;
	int64_t set = (int64_t)t->n_rows, row = tp_table_append(t);

	if (row < 0)
		return -1;
	tp_set_int(t, SP_SYM_SYMBOL_SET_ID, (size_t)row, set);
	tp_set_str(t, SP_SYM_NAME, (size_t)row, name);
	if (source_file)
		tp_set_str(t, SP_SYM_SOURCE_FILE, (size_t)row, source_file);
	if (line_number != TP_NULL_INT)
		tp_set_int(t, SP_SYM_LINE_NUMBER, (size_t)row, line_number);
	return set;
}

int64_t tp_prof_dummy_frame(struct tp_import *imp, struct tp_profiling *p, int64_t *mapping,
			    const char *mapping_name, uint32_t name, uint32_t file, int64_t line)
{
	struct tp_table *t = &imp->db->sp_frame;
	struct key k = {KEY_DUMMY_FRAME, 0, 0, 0, 0};
	uint64_t h;
	int64_t row, set;

	if (*mapping < 0) {
		/* A mapping over the whole address space, as Perfetto's dummy ones. */
		uint64_t v[5] = {0, 0, 0, UINT64_MAX, 0};

		*mapping = tp_prof_mapping_row(imp, p->s_empty, tp_db_str(imp->db, mapping_name), v);
		if (*mapping < 0)
			return -1;
	}
	k.a = (uint64_t)*mapping << 32 | name;
	k.b = file ? (uint64_t)file + 1 : 0;
	k.c = line != TP_NULL_INT ? (uint64_t)line + 1 : 0;
	row = tp_prof_key_find(p, &k, &h);
	if (row >= 0)
		return row;
	set = tp_prof_symbol(imp, name, file, line);
	row = tp_table_append(t);
	if (row < 0)
		return -1;
	tp_set_str(t, SP_FRAME_NAME, (size_t)row, name);
	tp_set_int(t, SP_FRAME_MAPPING, (size_t)row, *mapping);
	tp_set_int(t, SP_FRAME_REL_PC, (size_t)row, 0);
	if (set >= 0)
		tp_set_int(t, SP_FRAME_SYMBOL_SET_ID, (size_t)row, set);
	tp_prof_key_put(p, h, &k, row);
	return row;
}

#define MAX_INLINE_FRAMES 4096

int64_t tp_prof_inline_callstack(struct tp_import *imp, struct tp_profiling *p, int64_t *mapping,
				 const char *mapping_name, const uint8_t *d, size_t len)
{
	struct pz_reader r;
	struct pz_field f;
	int64_t parent = -1;
	uint32_t depth = 0;

	pz_reader_init(&r, d, len);
	while (pz_reader_next(&r, &f) > 0 && depth < MAX_INLINE_FRAMES) {
		struct pz_field fr[4];
		uint32_t name, file = 0;
		int64_t line = TP_NULL_INT, frame;

		if (f.id != PB_INLINE_CALLSTACK__FRAMES || f.wire_type != PZ_WIRE_LEN ||
		    pz_decode_table(f.data, f.size, fr, 4) != PZ_OK)
			continue;
		name = fr[PB_INLINE_CALLSTACK_FRAME__FUNCTION_NAME].id &&
				       fr[PB_INLINE_CALLSTACK_FRAME__FUNCTION_NAME].wire_type ==
					       PZ_WIRE_LEN
			       ? tp_str_intern(
					 &imp->db->strings,
					 (const char *)fr[PB_INLINE_CALLSTACK_FRAME__FUNCTION_NAME].data,
					 fr[PB_INLINE_CALLSTACK_FRAME__FUNCTION_NAME].size)
			       : p->s_empty;
		if (fr[PB_INLINE_CALLSTACK_FRAME__SOURCE_FILE].id &&
		    fr[PB_INLINE_CALLSTACK_FRAME__SOURCE_FILE].wire_type == PZ_WIRE_LEN)
			file = tp_str_intern(&imp->db->strings,
					     (const char *)fr[PB_INLINE_CALLSTACK_FRAME__SOURCE_FILE].data,
					     fr[PB_INLINE_CALLSTACK_FRAME__SOURCE_FILE].size);
		if (fr[PB_INLINE_CALLSTACK_FRAME__LINE_NUMBER].id)
			line = (uint32_t)fr[PB_INLINE_CALLSTACK_FRAME__LINE_NUMBER].value;
		frame = tp_prof_dummy_frame(imp, p, mapping, mapping_name, name, file, line);
		if (frame < 0)
			return -1;
		parent = tp_prof_callsite(imp, p, parent, frame, depth++);
		if (parent < 0)
			return -1;
	}
	return parent;
}

int64_t tp_prof_event_callstack(struct tp_import *imp, uint32_t gen, int64_t upid, uint64_t iid,
				const uint8_t *data, size_t len, uint32_t machine)
{
	struct tp_profiling *p = tp_prof_state(imp);

	if (!p)
		return -1;
	if (data)
		return tp_prof_inline_callstack(imp, p, &p->te_inline_mapping, "track_event_inline",
						data, len);
	return tp_prof_callstack(imp, p, gen, upid, iid, machine);
}

/* ------------------------------------------------------------ samples ---- */

static const char *cpu_mode_name(uint64_t mode)
{
	static const char *const names[] = {"unknown", "kernel", "user",
					    "hypervisor", "guest_kernel", "guest_user"};

	return mode < sizeof(names) / sizeof(names[0]) ? names[mode] : "unknown";
}

static const char *unwind_error_name(uint64_t err)
{
	static const char *const names[] = {
		"unknown",        "none",          "memory_invalid",
		"unwind_info",    "unsupported",   "invalid_map",
		"max_frames_exceeded", "repeated_frame", "invalid_elf",
		"system_call",    "thread_timeout", "thread_does_not_exist",
		"bad_arch",       "maps_parse",    "invalid_parameter",
		"ptrace_call"};

	return err < sizeof(names) / sizeof(names[0]) ? names[err] : "unknown";
}

void tp_prof_counter_set_add(struct tp_import *imp, int64_t *set, int64_t counter)
{
	struct tp_table *t = &imp->db->profiler_counter_set;
	int64_t row;

	if (counter < 0)
		return;
	row = tp_table_append(t);
	if (row < 0)
		return;
	if (*set < 0)
		*set = row;
	tp_set_int(t, PCS_COUNTER_SET_ID, (size_t)row, *set);
	tp_set_int(t, PCS_COUNTER_ID, (size_t)row, counter);
}

/* The follower counts of a sample, each on its follower's track, added to
 * the sample's counter set *@set. */
static void follower_counts(struct tp_import *imp, const uint8_t *data, size_t len,
			    const struct stream *st, int64_t ts, int64_t *set)
{
	struct pz_reader r;
	struct pz_field f;
	uint32_t i = 0;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0 && i < st->n_followers) {
		struct pz_varints it;
		uint64_t v;

		if (f.id != PB_PERF_SAMPLE__FOLLOWER_COUNTS)
			continue;
		pz_varints_init(&it, &f);
		while (i < st->n_followers &&
		       pz_varints_next(&it, &v)) {
			if (st->followers[i] >= 0)
				tp_prof_counter_set_add(imp, set,
						tp_counter_add(imp, ts, st->followers[i], (double)v));
			i++;
		}
	}
}

void tp_perf_sample(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
		    size_t len)
{
	struct tp_profiling *p = tp_prof_state(imp);
	struct pz_field f[20];
	struct tp_table *t;
	uint32_t seq_id, cpu, gen;
	int64_t session, utid, upid, cs = -1, row, set = -1;
	struct stream *st;

	if (!p)
		return;
	if (pz_decode_table(data, len, f, 20) != PZ_OK)
		return;
	seq_id = tp_seq_id(imp, ev->seq_idx);
	cpu = (uint32_t)f[PB_PERF_SAMPLE__CPU].value;
	session = session_of(imp, p, seq_id);
	if (session < 0)
		return;
	gen = ev->aux ? ev->aux - 1 : UINT32_MAX;
	st = stream_of(imp, p, session, cpu, ev->machine,
		       gen != UINT32_MAX ? tp_seq_gen(imp, gen) : NULL);

	/* Not a sample: the kernel dropped records of this CPU's buffer. */
	if (f[PB_PERF_SAMPLE__KERNEL_RECORDS_LOST].value > 0) {
		tp_stat_add(imp, "perf_cpu_lost_records", cpu, ev->machine,
			    (int64_t)f[PB_PERF_SAMPLE__KERNEL_RECORDS_LOST].value);
		return;
	}
	/* Not a sample: the producer stopped the data source. */
	if (f[PB_PERF_SAMPLE__PRODUCER_EVENT].id) {
		struct pz_field pe[2];

		if (pz_decode_table(f[PB_PERF_SAMPLE__PRODUCER_EVENT].data,
				    f[PB_PERF_SAMPLE__PRODUCER_EVENT].size, pe, 2) == PZ_OK &&
		    pe[PB_PERF_SAMPLE_PRODUCER_EVENT__SOURCE_STOP_REASON].value ==
			    PBE_PERF_SAMPLE_PRODUCER_EVENT_DATA_SOURCE_STOP_REASON__PROFILER_STOP_GUARDRAIL)
			tp_stat_set(imp, "perf_guardrail_stop_ts", session, ev->machine, ev->ts);
		return;
	}
	if (f[PB_PERF_SAMPLE__SAMPLE_SKIPPED_REASON].id) {
		switch (f[PB_PERF_SAMPLE__SAMPLE_SKIPPED_REASON].value) {
		case PBE_PERF_SAMPLE_SAMPLE_SKIP_REASON__PROFILER_SKIP_READ_STAGE:
		case PBE_PERF_SAMPLE_SAMPLE_SKIP_REASON__PROFILER_SKIP_UNWIND_STAGE:
			tp_stat_add(imp, "perf_samples_skipped", -1, ev->machine, 1);
			break;
		case PBE_PERF_SAMPLE_SAMPLE_SKIP_REASON__PROFILER_SKIP_UNWIND_ENQUEUE:
			tp_stat_add(imp, "perf_samples_skipped_dataloss", -1, ev->machine, 1);
			break;
		default:
			break;
		}
	}
	if (f[PB_PERF_SAMPLE__TIMEBASE_COUNT].id && st && st->timebase >= 0)
		tp_prof_counter_set_add(imp, &set,
				tp_counter_add(imp, ev->ts, st->timebase,
					       (double)f[PB_PERF_SAMPLE__TIMEBASE_COUNT].value));
	if (st)
		follower_counts(imp, data, len, st, ev->ts, &set);

	utid = tp_proc_update_thread(imp, ev->machine, (uint32_t)f[PB_PERF_SAMPLE__TID].value,
				     (uint32_t)f[PB_PERF_SAMPLE__PID].value);
	upid = tp_proc_get_process_main(imp, ev->machine, (uint32_t)f[PB_PERF_SAMPLE__PID].value);
	if (f[PB_PERF_SAMPLE__CALLSTACK_IID].id) {
		if (gen == UINT32_MAX)
			tp_stat_add(imp, "stackprofile_invalid_callstack_id", -1, ev->machine, 1);
		else
			cs = tp_prof_callstack(imp, p, gen, upid,
					  f[PB_PERF_SAMPLE__CALLSTACK_IID].value, ev->machine);
	}

	t = &imp->db->perf_sample;
	row = tp_table_append(t);
	if (row < 0)
		return;
	tp_set_int(t, PERF_TS, (size_t)row, ev->ts);
	if (utid >= 0)
		tp_set_int(t, PERF_UTID, (size_t)row, utid);
	if (f[PB_PERF_SAMPLE__CPU].id) {
		/* The core gets its cpu table row, as in Perfetto. */
		int64_t ucpu = tp_sched_ucpu(imp, ev->machine, cpu);

		tp_set_int(t, PERF_CPU, (size_t)row, cpu);
		if (ucpu >= 0)
			tp_set_int(t, PERF_UCPU, (size_t)row, ucpu);
	}
	tp_set_str(t, PERF_CPU_MODE, (size_t)row,
		   tp_db_str(imp->db, cpu_mode_name(f[PB_PERF_SAMPLE__CPU_MODE].value)));
	if (cs >= 0)
		tp_set_int(t, PERF_CALLSITE_ID, (size_t)row, cs);
	if (f[PB_PERF_SAMPLE__UNWIND_ERROR].id)
		tp_set_str(t, PERF_UNWIND_ERROR, (size_t)row,
			   tp_db_str(imp->db, unwind_error_name(f[PB_PERF_SAMPLE__UNWIND_ERROR].value)));
	tp_set_int(t, PERF_PERF_SESSION_ID, (size_t)row, session);
	if (set >= 0)
		tp_set_int(t, PERF_COUNTER_SET_ID, (size_t)row, set);
}

void tp_profiling_finish(struct tp_import *imp)
{
	struct tp_table *m = &imp->db->sp_mapping;
	const struct tp_strings *s = &imp->db->strings;

	/* A binary pushed to /data/local/tmp without a build id cannot be symbolized. */
	for (size_t r = 0; r < m->n_rows; r++) {
		const char *path = tp_str_get(s, tp_get_str(m, SP_MAP_NAME, r));
		const char *build_id = tp_str_get(s, tp_get_str(m, SP_MAP_BUILD_ID, r));

		if (path && strncmp(path, "/data/local/tmp/", 16) == 0 && (!build_id || !*build_id))
			tp_stat_add(imp, "symbolization_tmp_build_id_not_found", -1, 0, 1);
	}
	tp_heap_graph_finish(imp);
}
