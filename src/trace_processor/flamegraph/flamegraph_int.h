/* SPDX-License-Identifier: Apache-2.0 */
/*
 * flamegraph_int.h - the parts of pfc_flamegraph and how they meet:
 * select.c streams the chosen samples out of the trace into a count per
 * (group, leaf callsite); fold.c names the frames and turns those counts
 * into folded stacks sorted frame by frame; svg.c lays the folded stacks
 * out as a flame graph, with the script and style of svg_js.c. cli.c
 * parses the command line and runs them in that order. One thread.
 */
#ifndef PFC_TRACE_PROCESSOR_FLAMEGRAPH_FLAMEGRAPH_INT_H
#define PFC_TRACE_PROCESSOR_FLAMEGRAPH_FLAMEGRAPH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/hmap.h"

struct tp;

#define FG_PROG "pfc_flamegraph"

/* What a root frame above the stacks names, if any. */
enum fg_group {
	FG_GROUP_NONE,
	FG_GROUP_PROCESS, /* NAME-PID */
	FG_GROUP_THREAD,  /* NAME-PID;NAME-TID */
};

/* What a heap profile's flame graph weighs (--heap). */
enum fg_heap {
	FG_HEAP_NONE,       /* CPU samples (perf_sample) */
	FG_HEAP_UNRELEASED, /* bytes allocated and not freed, per stack */
	FG_HEAP_ALLOCATED,  /* bytes allocated, freed or not */
};

/* Which samples to fold. Lists hold values of one option, OR-ed. */
#define FG_MAX_FILTERS 64
struct fg_selection {
	int64_t pids[FG_MAX_FILTERS], tids[FG_MAX_FILTERS], utids[FG_MAX_FILTERS];
	const char *process_names[FG_MAX_FILTERS], *thread_names[FG_MAX_FILTERS];
	size_t n_pids, n_tids, n_utids, n_process_names, n_thread_names;
	const char *start, *end; /* as given: ns, +REL or -REL with a unit */
	const char *sql;         /* rows with a callsite_id or an id column */
	bool weight_timebase;    /* weigh each sample by its timebase count */
	enum fg_heap heap;       /* heap_profile_allocation instead of perf_sample */
};

/*
 * The counts of the selected samples: (group << 32 | callsite) -> weight,
 * where group is a utid (FG_GROUP_THREAD), a upid (FG_GROUP_PROCESS) or 0.
 */
struct fg_counts {
	struct hmap by_key;
	uint64_t n_samples;       /* rows selected, with or without a callstack */
	uint64_t n_no_stack;      /* of which had no callstack (left out) */
	uint64_t weight_total;    /* the weight of the samples with a callstack */
	int64_t start_ts, end_ts; /* the window actually applied, for the note */
	bool has_window;
};

/* One folded stack: frames root first joined by ';' (owned), its weight. */
struct fg_stack {
	char *text;
	size_t len;
	uint64_t count;
};

struct fg_folded {
	struct fg_stack *v;
	size_t n, cap;
	uint64_t total;
};

/* How frames are named and stacks grouped (fold.c). */
struct fg_fold_opts {
	enum fg_group group;
	bool annotate_kernel; /* "_[k]" after kernel frames in the folded text */
	bool reverse;         /* leaf first: who calls the hot functions */
};

/* How the SVG looks (svg.c). */
struct fg_svg_opts {
	const char *title;
	const char *subtitle; /* may be NULL */
	unsigned width_px;
	double min_width_px;    /* narrower frames are left out */
	unsigned group_levels;  /* root frames that name processes/threads */
	const char *count_name; /* "samples", or the weight's unit */
};

/* select.c */
struct sqlite3_stmt;
int fg_prepare(struct tp *tp, const char *sql, struct sqlite3_stmt **out);
int fg_select(struct tp *tp, const struct fg_selection *sel, enum fg_group group,
	      struct fg_counts *out, char *why, size_t why_size);
int fg_trace_sample_count(struct tp *tp, int64_t *out);
int fg_trace_heap_count(struct tp *tp, int64_t *out);
void fg_counts_fini(struct fg_counts *c);

/* fold.c */
int fg_fold(struct tp *tp, const struct fg_counts *counts, const struct fg_fold_opts *opt,
	    struct fg_folded *out);
int fg_folded_add(struct fg_folded *f, const char *text, size_t len, uint64_t count);
void fg_folded_sort_merge(struct fg_folded *f);
int fg_folded_write(const struct fg_folded *f, FILE *out);
int fg_folded_parse(const char *data, size_t len, struct fg_folded *out, size_t *out_bad_line);
void fg_folded_fini(struct fg_folded *f);
size_t fg_name_sanitize(const char *in, size_t len, char *out, size_t out_size, bool is_frame);

/* svg.c */
int fg_svg_write(const struct fg_folded *f, const struct fg_svg_opts *opt, FILE *out);

/* svg_js.c */
extern const char fg_svg_style[];
extern const char fg_svg_script[];

#endif
