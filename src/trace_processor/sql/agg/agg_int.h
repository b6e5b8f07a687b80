/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agg_int.h - the native GROUP BY path's own parts, private to sql/agg/
 * (agg.h has its entry points).
 *
 * SQLite reads a virtual table one row and one cell at a time (~100 ns a
 * row), which bounds "SUM(dur) FROM sched GROUP BY utid" over millions of
 * rows. tp_agg recognises the common shape of such queries
 *
 *   SELECT <keys, aggregates, columns fixed by the keys, expressions of them>
 *   FROM t [[LEFT] JOIN u USING (c) | ON t.c = u.id] ...   (N:1 joins on ids)
 *   [WHERE col <op> literal [AND ...]]
 *   [GROUP BY col [, col ...]] [HAVING ...] [ORDER BY ...] [LIMIT ...]
 *
 * computes the groups in C over whole column blocks (agg_exec.c), keeps
 * them as a small result, and hands SQLite a rewritten statement that reads
 * that result through the __tp_agg virtual table (agg_vtab.c). Anything
 * outside the shape (subqueries, DISTINCT, OR, window functions, a view the
 * user redefined, an integer overflow in SUM, ...) falls back to SQLite, so
 * answers never differ from SQLite's own (row order among ties aside, which
 * SQL leaves open anyway). PFC_TP_NO_FAST_AGG=1 in the environment turns
 * the path off (benchmarks and tests compare both).
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_AGG_AGG_INT_H
#define PFC_TRACE_PROCESSOR_SQL_AGG_AGG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sqlite3;
struct tp_db;
struct tp_table;
struct tp_strings;

#define TP_AGG_MAX_TABLES 4   /* the FROM table and up to 3 joined ones */
#define TP_AGG_MAX_KEYS 4     /* GROUP BY columns */
#define TP_AGG_MAX_OUTS 32    /* distinct keys, columns and aggregates */
#define TP_AGG_MAX_FILTERS 16 /* WHERE comparisons */

/* A column of one of the plan's tables. */
struct tp_agg_ref {
	uint8_t tab;
	uint32_t col;
};

/* Table @tab >= 1 is reached from row src.tab: its row is src's cell. */
struct tp_agg_join {
	struct tp_agg_ref src;
	bool is_left;
};

enum tp_agg_fn {
	TP_AGG_COLUMN,     /* a key, or a column the keys fix: the group's first row */
	TP_AGG_COUNT_STAR,
	TP_AGG_COUNT,
	TP_AGG_SUM,
	TP_AGG_TOTAL,
	TP_AGG_AVG,
	TP_AGG_MIN,
	TP_AGG_MAX,
};

struct tp_agg_out {
	enum tp_agg_fn fn;
	struct tp_agg_ref ref; /* unused for TP_AGG_COUNT_STAR */
};

enum tp_agg_cmp { TP_AGG_EQ, TP_AGG_NE, TP_AGG_LT, TP_AGG_LE, TP_AGG_GT, TP_AGG_GE,
		  TP_AGG_IS_NULL, TP_AGG_NOT_NULL,
		  TP_AGG_IN,       /* one of in[] (integers or string ids) */
		  TP_AGG_GLOB,     /* text matches pattern as SQLite's GLOB / LIKE */
		  TP_AGG_LIKE };

#define TP_AGG_MAX_IN 16
#define TP_AGG_MAX_PATTERN 128

/*
 * "cell <cmp> v": integers, and string ids for EQ, NE and IN; GLOB and LIKE
 * on strings. is_not negates IN, GLOB and LIKE (NULL still matches nothing).
 */
struct tp_agg_filter {
	struct tp_agg_ref ref;
	enum tp_agg_cmp cmp;
	bool is_not;
	int64_t v;
	int64_t in[TP_AGG_MAX_IN];
	unsigned n_in;
	char pattern[TP_AGG_MAX_PATTERN];
	unsigned slot; /* its index in the plan the parser made (for memos) */
};

struct tp_agg_plan {
	struct tp_table *tabs[TP_AGG_MAX_TABLES];
	struct tp_agg_join joins[TP_AGG_MAX_TABLES]; /* [0] unused */
	unsigned n_tabs;
	struct tp_agg_filter filters[TP_AGG_MAX_FILTERS];
	unsigned n_filters;
	bool matches_nothing; /* a WHERE no row can meet (string never seen) */
	struct tp_agg_ref keys[TP_AGG_MAX_KEYS];
	unsigned n_keys;      /* 0: one group, even over no rows */
	struct tp_agg_out outs[TP_AGG_MAX_OUTS];
	unsigned n_outs;
};

/* One cell of a result. */
enum tp_agg_type { TP_AGG_NULL, TP_AGG_INT, TP_AGG_REAL, TP_AGG_STR };

struct tp_agg_cell {
	enum tp_agg_type type;
	union {
		int64_t i;
		double r;
		uint32_t s; /* string id */
	} u;
};

/* The groups, in GROUP BY order: n_rows x n_cols cells, row-major. */
struct tp_agg_result {
	uint64_t handle;
	size_t n_rows;
	unsigned n_cols;
	struct tp_agg_cell *cells;
};

/*
 * What the SQL schema held when the path started (agg_schema.c): a
 * statement naming a table or view that was since shadowed, dropped or
 * redefined is left to SQLite.
 */
struct tp_agg_view;

struct tp_agg_schema {
	struct sqlite3 *conn;
	int main_version, temp_version;
	struct tp_agg_view *views;   /* our views' names and text */
	size_t n_views;
	bool is_same;                /* no DDL since the snapshot (tp_agg_schema_check) */
};

/*
 * tp_agg_schema_init() - Snapshot the schema of @conn (borrowed; outlives
 * @s). Return: 0, or -ENOMEM or -EIO (@s can still be finalized).
 */
int tp_agg_schema_init(struct tp_agg_schema *s, struct sqlite3 *conn);
void tp_agg_schema_fini(struct tp_agg_schema *s);
/* Whether any DDL ran since the snapshot: sets s->is_same (each prepare). */
void tp_agg_schema_check(struct tp_agg_schema *s);
/*
 * tp_agg_schema_is_ours() - True if the table name [@name, +@len) still
 * means our table or view (no temp object shadows it, the user did not
 * drop and redefine it).
 */
bool tp_agg_schema_is_ours(const struct tp_agg_schema *s, const char *name, size_t len);

/*
 * tp_agg_parse() - Match the statement text [@sql, @end) against the shape
 * above and plan it over @db, whose names mean our tables per @schema. On
 * a match fills @plan and writes into *@out a malloc'd statement that
 * reads result @handle from __tp_agg.
 * Return: 1 and *out set; 0 if the statement is not of the shape; -ENOMEM.
 */
int tp_agg_parse(const struct tp_agg_schema *schema, struct tp_db *db, const char *sql,
		 const char *end, uint64_t handle, struct tp_agg_plan *plan, char **out);

/*
 * tp_agg_exec() - Run @plan over its tables into @res (n_cols = n_outs).
 * Return: 0; 1 if SQLite must answer instead (SUM overflowed, a value our
 * cells cannot hold); -ENOMEM.
 */
int tp_agg_exec(const struct tp_agg_plan *plan, const struct tp_strings *strings,
		struct tp_agg_result *res);

void tp_agg_result_fini(struct tp_agg_result *res);

#endif
