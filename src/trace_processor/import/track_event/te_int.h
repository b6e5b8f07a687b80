/* SPDX-License-Identifier: Apache-2.0 */
/*
 * te_int.h - what the TrackEvent importer's files share, private to them
 * (what the read layer calls is in track_event.h). Bottom to top:
 *
 *   te_state.c      the state (made on first use), keys, event records
 *   te_translate.c  TranslationTable packets and every translation
 *   te_symbols.c    mappings, ModuleSymbols, end-of-trace native symbol args
 *   te_mojo.c       chrome_mojo_event_info args
 *   te_flow.c       flows between slices
 *   te_track.c      descriptor tracks: reserved in file order, resolved to
 *                   thread, process or global tracks; merged tracks
 *   te_token.c      file order: thread descriptors, track reservations,
 *                   event timestamps and counter values
 *   te_parse.c      parse order: one TrackEvent into slices, counters,
 *                   args; descriptors; the slice hooks; finish and fini
 *
 * Sequence generations and interned data are sequence.c's; each event
 * carries the generation it was tokenized in, so sorting cannot mix up
 * states. Slices, their stacks and args are slice.c's and args.c's.
 */
#ifndef PFC_TRACE_PROCESSOR_IMPORT_TRACK_EVENT_TE_INT_H
#define PFC_TRACE_PROCESSOR_IMPORT_TRACK_EVENT_TE_INT_H

#include "trace_processor/import/common/common.h"
#include "trace_processor/import/track_event/track_event.h"

struct pz_field;

/* Limits on what one trace can make us allocate. */
#define TE_MAX_EXTRA_COUNTERS 8  /* extra counter values per event */
#define TE_MAX_TRACKS (1u << 22) /* distinct track uuids */
#define TE_MAX_ARG_DEPTH 32  /* nesting of debug annotations */
#define TE_MAX_HIERARCHY 100 /* ancestors of a descriptor track */
#define TE_KEY_MAX 512       /* bytes of an arg key built from annotations */
#define TE_NO_SEQ UINT32_MAX /* seq_id of an event naming no sequence */

/* ------------------------------------------------------------ sequences ---- */

/* Tokenizer state of one sequence (index: its slot, tp_seq_slot()). */
struct te_seq {
	bool ts_valid; /* reference timestamps set since the last loss */
	int64_t ref_ts_ns;
	int64_t ref_thread_ts_ns;
	int64_t ref_thread_instr;
	struct hmap counters; /* track uuid -> running value (double bits) */
};

struct te_extra {
	uint64_t uuid;
	double value;
};

/* What the tokenizer resolved for one TrackEvent, as the parser sees it. */
struct te_rec {
	uint32_t gen;
	uint32_t flags; /* TE_REC_* */
	uint32_t n_extra;
	int64_t thread_ts;
	int64_t thread_instr;
	double counter_value;
	struct te_extra extra[TE_MAX_EXTRA_COUNTERS];
};

#define TE_REC_THREAD_TS (1u << 0)
#define TE_REC_THREAD_INSTR (1u << 1)
#define TE_REC_COUNTER (1u << 2)

/*
 * How a te_rec is stored: most events have nothing but their generation,
 * which rides in tp_event.cpu. The rest go to te.vals only when present,
 * found by tp_event.aux (UINT32_MAX: none): a header (flags | n_extra << 8),
 * then thread_ts, thread_instr and the counter value (each if flagged),
 * then the extra counters (uuid, value).
 */
struct te_val {
	uint64_t u;
	union {
		double d;
		int64_t i;
	} v;
};

/* --------------------------------------------------------------- tracks ---- */

enum te_merge { TE_MERGE_BY_NAME = 0, TE_MERGE_NONE = 1, TE_MERGE_BY_KEY = 2 };
enum te_scope { TE_SCOPE_THREAD, TE_SCOPE_PROCESS, TE_SCOPE_GLOBAL };
enum te_resolve { TE_UNRESOLVED, TE_RESOLVED, TE_BROKEN };

/* A descriptor track, reserved at tokenization and resolved when first used. */
struct te_track {
	uint64_t uuid;
	uint32_t machine; /* machine table row: uuids are per machine, as Perfetto's contexts */
	uint64_t parent_uuid;
	int64_t pid, tid; /* TP_NULL_INT when absent */
	uint32_t name;    /* string id */
	uint32_t description;
	uint32_t merge_key;
	uint8_t merge; /* enum te_merge */
	bool is_counter;
	bool is_state; /* has a StateDescriptor: for TYPE_STATE events */
	bool separate; /* disallow_merging_with_system_tracks */
	bool has_counter_details;
	/* counter details */
	bool is_incremental;
	int64_t unit_multiplier;
	uint32_t unit, category, builtin_type, y_axis_share_key;
	uint32_t seq_id;            /* sequence of the first reservation */
	int32_t sibling_order_rank; /* INT32_MIN: none */
	uint8_t child_ordering;
	bool explicit_process_order; /* process_ordering EXPLICIT (on the default track) */
	bool explicit_thread_order;  /* thread_ordering EXPLICIT (on the default track) */
	/* resolution (parse time) */
	uint8_t resolved; /* enum te_resolve */
	uint8_t scope;    /* enum te_scope */
	bool is_root;
	int64_t utid, upid;
	int64_t track; /* track id, or -1; merged tracks use cset */
	int64_t cset;  /* merged track set, or -1 */
	bool interned;
};

/* One merged track within a set: slices with one cookie stay on it. */
struct te_ctrack {
	int64_t cookie;
	uint32_t nest;
	int64_t track; /* -1 until created */
};

/* Tracks that merge (same parent and merge key): created as needed. */
struct te_cset {
	uint64_t hash;
	uint8_t scope;
	int64_t owner; /* utid or upid */
	uint64_t parent_uuid;
	uint32_t merge_type;
	uint32_t merge_value; /* string id */
	uint32_t name;
	uint64_t uuid; /* the track whose args the set copies */
	uint32_t machine; /* that track's machine */
	bool is_root_in_scope;
	bool set_parent; /* parent is not a root thread/process track */
	int64_t parent_track;
	uint32_t group;
	struct te_ctrack *tracks;
	uint32_t n, cap;
};

/* The tracks of legacy async events with one scope and first name. */
struct te_async_set {
	bool process_scoped;
	int64_t upid;
	uint32_t scope, root_name; /* string ids */
	uint32_t group;
	struct te_ctrack *tracks;
	uint32_t n, cap;
};

/* ----------------------------------------------------------- the state ---- */

struct tp_te {
	/* tokenizer */
	struct te_seq *seqs; /* TP_MAX_SEQUENCES, allocated on first use */
	struct te_val *vals;
	size_t n_vals, cap_vals;

	/* tracks */
	struct hmap uuids; /* (machine, uuid) key, probed -> index in tracks */
	struct te_track *tracks;
	size_t n_tracks, cap_tracks;
	struct hmap csets_by_hash; /* hash -> index in csets */
	struct te_cset *csets;
	size_t n_csets, cap_csets;
	struct hmap utid_uuid;           /* utid -> uuid of its descriptor track */
	struct hmap upid_uuid;           /* upid -> uuid */
	struct hmap misc_tracks;         /* hash of (kind, owner) -> track id */
	struct hmap named_by_descriptor; /* utid | 1 << 63 for upids -> 1 */
	/* legacy async ids (te_track.c): id -> first name; sets of tracks */
	struct hmap async_root_names; /* hash of (scoped, upid, id) -> name */
	struct hmap async_sets;       /* hash of the set's dimensions -> index */
	struct te_async_set *async;
	size_t n_async, cap_async;

	/* flows (te_flow.c) */
	struct hmap flows;         /* flow id -> slice row */
	struct hmap v1_flows;      /* hash(source id, cat, name) -> flow id */
	struct hmap v1_flow_names; /* flow id -> (name << 32 | cat) */
	uint64_t next_v1_flow;
	struct hmap pending_flows; /* track id -> index in pending */
	struct te_pending {
		int64_t track;
		uint64_t *ids;
		uint32_t n, cap;
	} * pending;
	size_t n_pending, cap_pending;

	/* content annotations: hash(cat, name) -> 1; pairs in annot */
	struct hmap annot_seen;
	uint32_t *annot;
	size_t n_annot, cap_annot;
	bool skipped_invalid; /* a packet was dropped for invalid state */
	bool has_roi;         /* a TrackEventRangeOfInterest was seen */
	int64_t roi_start_us;

	/* translation tables (raw string id -> translated string id) */
	struct hmap tr_slice_name;
	struct hmap tr_process_track;
	struct hmap tr_histogram; /* hash -> string id */
	struct hmap tr_perf_site;
	struct hmap tr_perf_mark;
	struct hmap tr_study;
	struct te_symbols *symbols; /* te_symbols.c; NULL until needed */

	/* interned strings of keys and values used on every event */
	struct te_keys {
		uint32_t debug, source, descriptor, trace_id, is_root_in_scope;
		uint32_t utid, upid, track_uuid, parent_track_uuid, merge_key_type;
		uint32_t merge_key_value, track_compressor_idx, thread_time;
		uint32_t thread_instruction_count, default_track, category, name;
		uint32_t cat, event_category, event_name, chrome, legacy_passthrough;
		uint32_t builtin_counter_type, y_axis_share_key, description;
		uint32_t child_ordering, sibling_order_rank, has_first_packet;
		uint32_t hist_name, hist_name_hash, hist_sample, hist_name_iid;
		uint32_t src_file, src_function, src_line;
		uint32_t skipped_packet, invalid_incremental_state;
		uint32_t legacy_phase, legacy_source_id, correlation_id;
		uint32_t log_body, task_file, task_function, task_line;
		uint32_t log_file, log_function, log_line, log_prio;
		uint32_t perf_site, perf_site_hash, perf_mark, perf_mark_hash;
		uint32_t perf_context, perf_sequence, trigger_name, trigger_name_hash;
		uint32_t triggers, scope, trace_id_is_process_scoped, source_scope;
	} k;
	void *parse_ctx; /* te_parse.c's per-event scratch, reused */
};

/* te_state.c */
/* The TrackEvent state, made on first use; NULL on OOM. */
struct tp_te *te_get(struct tp_import *imp);
/* The string id of a LEN field's bytes; 0 if absent or not LEN. */
uint32_t te_str(struct tp_import *imp, const struct pz_field *f);
/* Stores @r for the parser (tp_event.aux). Return: false on OOM. */
bool te_rec_store(struct tp_te *te, const struct te_rec *r, uint32_t *out_idx);
/* The record of track event @ev. Return: false if @ev has none. */
bool te_rec_load(const struct tp_import *imp, const struct tp_event *ev, struct te_rec *out);

/* te_translate.c */
/* A TranslationTable packet into the maps. */
void te_translation_table(struct tp_import *imp, const uint8_t *data, size_t len);
/* @str translated by @m (one of te.tr_*), or @str. */
uint32_t te_translate(const struct hmap *m, uint32_t str);
/* Adds the names that translation tables give to hashed args in @b. */
void te_translate_args(struct tp_import *imp, struct tp_argset *b);
void te_translate_fini(struct tp_te *te);

/* te_track.c */
struct te_track *te_track_find(struct tp_import *imp, uint32_t machine, uint64_t uuid);
/* Reserves (or updates) the track (@r->machine, @r->uuid); @r holds the
 * descriptor's fields. */
struct te_track *te_track_reserve(struct tp_import *imp, const struct te_track *r);

/* The thread of (@tid, @pid) like Perfetto's UpdateThread; -1 on OOM. */
int64_t te_update_thread(struct tp_import *imp, uint32_t machine, int64_t tid, int64_t pid);
int64_t te_get_process(struct tp_import *imp, uint32_t machine, int64_t pid);
/* Resolves @uuid (and its parents). Return: the track or NULL (broken). */
struct te_track *te_track_resolve(struct tp_import *imp, uint64_t uuid, uint32_t machine);
enum te_use { TE_USE_BEGIN, TE_USE_END, TE_USE_INSTANT, TE_USE_OTHER };
/* The track id for an event of kind @use on @uuid; -1 if broken. An event
 * on the default track (@uuid 0) names no sequence: its track's args never
 * say has_first_packet_on_sequence, as in Perfetto. */
int64_t te_track_for_event(struct tp_import *imp, uint64_t uuid, uint32_t event_name,
			   enum te_use use, uint32_t machine, uint32_t seq_id);
int64_t te_thread_track(struct tp_import *imp, int64_t utid);
int64_t te_legacy_counter_track(struct tp_import *imp, int64_t utid, bool instructions);
int64_t te_legacy_instant_track(struct tp_import *imp, int64_t upid, bool global);
enum te_async_kind { TE_ASYNC_BEGIN, TE_ASYNC_END, TE_ASYNC_INSTANT };
/*
 * te_legacy_async_track() - The track of a legacy async event ('b', 'e',
 * 'n', 'S', 'T', 'p', 'F') named @name with id @id, process-scoped (a
 * local_id, of @upid) or not, in @scope (a string id), as Perfetto's
 * TrackCompressor::InternLegacyAsyncTrack: the first name seen for an id
 * names its set; a begin takes the id's track (or a free one) and nests,
 * an end unnests. Return: the track id, or -1.
 */
int64_t te_legacy_async_track(struct tp_import *imp, uint32_t machine, uint32_t name,
			      int64_t upid, int64_t id, bool process_scoped, uint32_t scope,
			      enum te_async_kind kind);
void te_track_fini(struct tp_te *te);

/* te_flow.c */
void te_flow_v2(struct tp_import *imp, uint32_t machine, uint32_t row, const uint8_t *event,
		size_t len);
void te_flow_v1(struct tp_import *imp, uint32_t machine, int64_t track, char phase,
		uint64_t source_id, uint32_t cat, uint32_t name, bool bind_enclosing);
void te_flow_bind(struct tp_import *imp, uint32_t machine, uint32_t row, uint64_t bind_id,
		  uint64_t direction);
/* Ends flow @flow_id at @row if it is open. */
void te_flow_end(struct tp_import *imp, uint32_t machine, uint64_t flow_id, uint32_t row);
/* Slice @row began on @track: v1 flows waiting for it end there. */
void te_flow_begun(struct tp_import *imp, int64_t track, uint32_t row);
void te_flow_fini(struct tp_te *te);

/* te_mojo.c */
/* Adds ChromeMojoEventInfo @data (interned data of generation @gen) to @b. */
void te_mojo_args(struct tp_import *imp, uint32_t gen, uint32_t machine, struct tp_argset *b,
		  const uint8_t *data, size_t len);

/* te_symbols.c */
#define TE_MOJO_NATIVE_SYMBOL "chrome_mojo_event_info.mojo_interface_method.native_symbol"
/* The mapping id of interned Mapping @iid, or -1 if it (or its build id) is unknown. */
int64_t te_symbols_mapping(struct tp_import *imp, uint32_t gen, uint32_t machine, uint64_t iid);
/* Whether @b holds a native symbol that te_symbols_translate() must see at the end. */
bool te_symbols_pending(const struct tp_te *te, const struct tp_argset *b);
/* Replaces the native symbol in @b by the Mojo method and interface it names. */
void te_symbols_translate(struct tp_import *imp, struct tp_argset *b);
void te_symbols_fini(struct tp_te *te);

/* ------------------------------------------------ debug annotation args ---- */

/* te_json.c: @json (a legacy_json_value) as args under @flat / @key. */
void te_json_args(struct tp_import *imp, struct tp_argset *b, const char *flat, size_t n_flat, const char *key, size_t n_key,
		  const uint8_t *json, size_t len);

#endif
