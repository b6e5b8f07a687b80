/* SPDX-License-Identifier: Apache-2.0 */
/*
 * flamegraph_int.h - private to the flamegraph operator of sql/ops/
 * (flamegraph.c: the SQL face; flamegraph_build.c: the algorithm). What
 * __intrinsic_flamegraph_config() describes, the source tree a
 * CREATE VIRTUAL TABLE ... USING __intrinsic_flamegraph((SELECT ...)) loaded,
 * and the merged, laid out flamegraph one query of that table builds.
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_OPS_FLAMEGRAPH_INT_H
#define PFC_TRACE_PROCESSOR_SQL_OPS_FLAMEGRAPH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace_processor/sql/ops/ops_int.h"

/* No parent / no node. */
#define FG_NONE UINT32_MAX
/* Upstream's limit: the SHOW_STACK filters are bits of one 64-bit mask. */
#define FG_MAX_SHOW_STACK 61

enum fg_view { FG_TOP_DOWN, FG_BOTTOM_UP, FG_PIVOT, FG_FROM_FRAME };
enum fg_agg { FG_SUM, FG_ONE_OR_SUMMARY, FG_CONCAT };
enum fg_filter { FG_SHOW_STACK, FG_HIDE_STACK, FG_HIDE_FRAME };

struct fg_regex {
	char *pattern; /* owned */
	bool caseless;
};

struct fg_filter_spec {
	enum fg_filter kind;
	struct fg_regex re;
};

struct fg_agg_spec {
	enum fg_agg agg;
	char *input, *output; /* owned */
};

/* One query's configuration: what __intrinsic_flamegraph_config() made. */
struct fg_query {
	enum fg_view view;
	bool has_view_pattern;
	struct fg_regex view_pattern;
	struct fg_filter_spec *filters;
	size_t n_filters, cap_filters;
	char **grouping; /* owned names */
	size_t n_grouping, cap_grouping;
	char **values;
	size_t n_values, cap_values;
	struct fg_agg_spec *aggs;
	size_t n_aggs, cap_aggs;
};
/* Frees @q and all it owns (also SQLite's pointer destructor). */
void fg_query_free(void *q);

/*
 * The source: its rows in parent-before-child order (as upstream orders
 * them), columns id, parent_id, name, value, then the properties. A
 * column's kind is OPS_NULL when it holds no value, OPS_REAL when it mixes
 * integers and reals (its integers then read as reals).
 */
struct fg_source {
	struct ops_table *t; /* the rows, already in tree order */
	uint8_t *kinds;      /* per column */
	uint32_t *parent;    /* per row: the parent's row, or FG_NONE */
	double value_sum;    /* the super root's cumulative value */
};
void fg_source_free(struct fg_source *s);

/*
 * fg_source_load() - Make @s from the rows of @t (taken; column names as
 * the SELECT named them). Return: 0, or -1 with *@err (sqlite3_malloc'd).
 */
int fg_source_load(struct fg_source *s, struct ops_table *t, char **err);

/*
 * A built flamegraph in render order (breadth first, siblings widest
 * first). @t has the columns depth, name, the grouping columns,
 * self_<v> and cumulative_<v> of each value column and the aggregates.
 */
struct fg_result {
	struct ops_table *t;
	uint32_t *parent_row; /* output row of the parent, or FG_NONE */
	double *x_start;
};
void fg_result_free(struct fg_result *r);

/*
 * fg_build() - Build the flamegraph of @src under @q into @out.
 * Return: 0, or -1 with *@err (sqlite3_malloc'd) saying why.
 */
int fg_build(const struct fg_source *src, const struct fg_query *q, struct fg_result *out,
	     char **err);

/*
 * fg_layout() - Lay out @n nodes (parents before children; @depth < 0 for
 * the upward half, @parent FG_NONE for roots, @width >= 0): breadth first
 * from the roots of both halves merged by x, siblings widest first (ties in
 * node order), each half's roots side by side from x = 0 and each node's
 * children packed from its own x. Fills, per output row, @order (the node),
 * @parent_row (the parent's output row or FG_NONE) and @x_start.
 * Return: 0 or -ENOMEM.
 */
int fg_layout(const int64_t *depth, const uint32_t *parent, const double *width, size_t n,
	      uint32_t *order, uint32_t *parent_row, double *x_start);

#endif
