/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf_intern.h - the interning state of one linux.perf sequence: strings
 * (function names, mapping path components, build ids), mappings, frames
 * and callstacks get iids the first time the sequence meets them, and
 * their definitions go into that packet's InternedData. Cleared with the
 * sequence's incremental state (then everything is defined again).
 */
#ifndef PFC_PERF_PERF_INTERN_H
#define PFC_PERF_PERF_INTERN_H

#include <stddef.h>
#include <stdint.h>

#include "base/hmap.h"
#include "protozero/protozero.h"

/* A frame to intern: its mapping and symbol. */
struct intern_frame {
	const char *function;   /* NULL: none */
	const char *map_path;   /* NULL: no mapping (an error frame) */
	const uint8_t *build_id;
	uint32_t build_id_len;
	uint64_t map_start, map_end, load_bias;
	uint64_t rel_pc;
};

struct perf_intern {
	struct hmap names, paths, build_ids, mappings, frames, callstacks; /* hash -> iid */
	uint64_t next_iid[6];
};

void perf_intern_init(struct perf_intern *in);
void perf_intern_fini(struct perf_intern *in);
/* Forget every iid (incremental state cleared). */
void perf_intern_clear(struct perf_intern *in);

/**
 * perf_intern_callstack() - The iid of the callstack @frames (@n of them,
 * leaf first), writing into @interned (an open InternedData) whatever the
 * sequence has not seen yet.
 * Return: the callstack iid (> 0), or 0 if out of memory.
 * Context: loop thread; allocates only when a table grows.
 */
uint64_t perf_intern_callstack(struct perf_intern *in, const struct intern_frame *frames,
			       size_t n, struct pz_msg *interned);

#endif
