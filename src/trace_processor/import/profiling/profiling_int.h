// SPDX-License-Identifier: Apache-2.0
/*
 * profiling_int.h - private to import/profiling: the importer's state and
 * the interning of mappings, frames and callsites that linux.perf samples
 * (profiling.c) and heapprofd's ProfilePackets (heap_profile.c) share.
 */
#ifndef PFC_TRACE_PROCESSOR_IMPORT_PROFILING_PROFILING_INT_H
#define PFC_TRACE_PROCESSOR_IMPORT_PROFILING_PROFILING_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"

struct tp_import;
struct tp_heap_profile;
struct tp_heap_graph;
struct tp_symbol_frames;

#define MAX_KEYS (1u << 24) /* rows the importer remembers (mappings, frames, ...) */

/* What a remembered key names. */
enum key_kind {
	KEY_SESSION = 1, /* a = sequence id */
	KEY_CPU_TRACK,   /* a = session, b = cpu, c = machine; row: a stream */
	KEY_MAPPING_IID, /* a = upid + 1, b = interned entry index */
	KEY_MAPPING,     /* a = hash of the fields, b = name, c = build id */
	KEY_FRAME,       /* a = mapping, b = rel_pc, c = name */
	KEY_CALLSITE,    /* a = parent + 1, b = frame */
	KEY_FRAME_IID,   /* a = upid + 1, b = interned entry index; row: its frame */
	KEY_CALLSTACK_IID, /* a = upid + 1, b = interned entry index; row: its leaf callsite */
	/* heap_profile.c: (a) is the sequence's state index << 32 | its epoch
	 * (bumped when a dump is finalized) for what a ProfilePacket interns. */
	KEY_HP_SEQ,      /* a = sequence id; row: index of its state */
	KEY_HP_STRING,   /* b = iid; row: index of the bytes */
	KEY_HP_MAPPING,  /* b = iid; row: stack_profile_mapping row */
	KEY_HP_FRAME,    /* b = iid; row: stack_profile_frame row */
	KEY_HP_CALLSTACK, /* b = iid; row: stack_profile_callsite row */
	KEY_HP_PREV,     /* a = state, b = upid, c = callsite; row: index of totals */
	KEY_HP_SEEN,     /* a = state << 32 | upid, b = iid, c = heap << 32 | callsite */
	KEY_HP_CORR,     /* a = state, b = iid; row: index of totals */
	KEY_HP_DUMP,     /* a = upid, b = window end, c = heap + 1 (0: none) */
	/* stack_sample.c */
	KEY_SS_SESSION,  /* a = sequence id */
	KEY_SS_TASK,     /* a = upid + 1, b = utid + 1, c = async context + 1 */
	KEY_SS_EXEC,     /* a = ucpu + 1, b = cpu_mode string id */
	KEY_SS_ASYNC,    /* a = interned entry index */
	KEY_SEQ_DUMMY_MAPPING, /* a = sequence slot + 1; row: the mapping of its frames naming none */
	KEY_DUMMY_FRAME, /* a = mapping << 32 | name, b = source file + 1, c = line + 1 (0: none) */
};

struct key {
	uint64_t kind, a, b, c;
	int64_t row;
};

/* The counter tracks of one (session, cpu). */
struct stream {
	int64_t timebase;
	int64_t *followers;
	uint32_t n_followers;
};

struct tp_profiling {
	struct stream *streams;
	size_t n_streams, cap_streams;
	struct hmap index; /* hash of a key -> its index in keys (probing on collision) */
	struct key *keys;
	size_t n, cap;
	int64_t ss_inline_mapping; /* mapping of StackSample inline frames; -1 until needed */
	int64_t art_meta_mapping;  /* mapping of ART's OOME stack frames; -1 until needed */
	int64_t te_inline_mapping; /* mapping of track events' inline frames; -1 until needed */
	uint32_t s_cpu_clock, s_empty;
	struct tp_heap_profile *heap; /* heap_profile.c; NULL until a ProfilePacket */
	struct tp_heap_graph *graph;  /* heap_graph.c; NULL until a heap graph or mapping */
	struct tp_symbol_frames *symbol_frames; /* module_symbols.c; NULL until ModuleSymbols */
};

/* The importer's state, made on first use (NULL: out of memory). */
struct tp_profiling *tp_prof_state(struct tp_import *imp);
/* The row remembered for @k, or -1; *out_h: where to remember it. */
int64_t tp_prof_key_find(const struct tp_profiling *p, const struct key *k, uint64_t *out_h);
void tp_prof_key_put(struct tp_profiling *p, uint64_t h, const struct key *k, int64_t row);
/* Remembers @row for @k, replacing the row it had. */
void tp_prof_key_set(struct tp_profiling *p, const struct key *k, int64_t row);
/* A new stack_profile_mapping row with fields @v (exact_offset,
 * start_offset, start, end, load_bias). */
int64_t tp_prof_mapping_row(struct tp_import *imp, uint32_t build_id, uint32_t name,
			    const uint64_t v[5]);
/* The mapping row of these fields, shared by every mapping equal to it. */
int64_t tp_prof_shared_mapping(struct tp_import *imp, struct tp_profiling *p, uint32_t build_id,
			       uint32_t name, const uint64_t v[5]);
/* @raw as lowercase hex, interned. */
uint32_t tp_prof_build_id_hex(struct tp_import *imp, const uint8_t *raw, uint32_t len);
/* The frame row of (@mapping, @rel_pc, @name), added if new. */
int64_t tp_prof_frame_row(struct tp_import *imp, struct tp_profiling *p, int64_t mapping,
			  uint64_t rel_pc, uint32_t name);
/* The callsite row of @frame under @parent (-1: a root) at @depth. */
int64_t tp_prof_callsite(struct tp_import *imp, struct tp_profiling *p, int64_t parent,
			 int64_t frame, uint32_t depth);
/* The leaf callsite of the Callstack @iid interned in generation @gen of
 * a sequence, for process @upid; -1 (counted in stats) if it resolves not. */
int64_t tp_prof_callstack(struct tp_import *imp, struct tp_profiling *p, uint32_t gen,
			  int64_t upid, uint64_t iid, uint32_t machine);

/* Adds counter row @counter to the counter set named by *@set (a new set,
 * named by its first row, when *@set < 0). */
void tp_prof_counter_set_add(struct tp_import *imp, int64_t *set, int64_t counter);
/* A new stack_profile_symbol set of one row; its symbol_set_id. */
int64_t tp_prof_symbol(struct tp_import *imp, uint32_t name, uint32_t source_file,
		       int64_t line_number);

/*
 * tp_prof_dummy_frame() - The frame of function @name at @file:@line (0,
 * TP_NULL_INT: unknown) on the dummy mapping *@mapping (made named
 * @mapping_name on first use): one per (name, file, line), each with its
 * stack_profile_symbol row. Return: its row, or -1.
 */
int64_t tp_prof_dummy_frame(struct tp_import *imp, struct tp_profiling *p, int64_t *mapping,
			    const char *mapping_name, uint32_t name, uint32_t file, int64_t line);

/*
 * tp_prof_inline_callstack() - The leaf callsite of an inline callstack
 * (@d, @len: frames (1) of function name (1), source file (2) and line
 * (3), root first: StackSample's and TrackEvent's InlineCallstack alike),
 * its frames dummy ones of *@mapping. Return: -1 if it has no frames.
 */
int64_t tp_prof_inline_callstack(struct tp_import *imp, struct tp_profiling *p, int64_t *mapping,
				 const char *mapping_name, const uint8_t *d, size_t len);

/* heap_profile.c */
void tp_heap_profile_fini(struct tp_profiling *p);
/* module_symbols.c */
void tp_prof_symbol_frames_fini(struct tp_profiling *p);
void tp_heap_graph_fini(struct tp_profiling *p);
/* The app package of a /data/app/... location (heap_graph.c), or 0. */
uint32_t tp_prof_package_of_location(struct tp_import *imp, const char *loc);
/* Renames the Java frames from the DeobfuscationMapping payloads @maps
 * (each a 4-byte length, then the bytes) (deobfuscate_frames.c). */
void tp_prof_deobfuscate_frames(struct tp_import *imp, const uint8_t *maps, size_t len);

#endif
