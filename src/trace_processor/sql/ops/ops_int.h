/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ops_int.h - private to sql/ops/: what the operator families share. The
 * values built-ins pass to each other through SQLite as pointers (a table,
 * an array, a graph, partitioned intervals, ...), the small in-memory
 * table those values and the table functions are made of, the frame of a
 * table function (an eponymous virtual table whose hidden columns are its
 * arguments), and each family's registration function, which ops.c calls.
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_OPS_OPS_INT_H
#define PFC_TRACE_PROCESSOR_SQL_OPS_OPS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sqlite3;
struct sqlite3_context;
struct sqlite3_value;
struct tp_db;

/* ------------------------------------------------------- pointer types ---- */

/*
 * The names SQLite's pointer passing checks (sqlite3_result_pointer), as
 * upstream names them: a value made by one built-in is read only by those
 * that ask for the same name.
 */
#define OPS_PTR_TABLE "TABLE"
#define OPS_PTR_ARRAY_LONG "ARRAY<LONG>"
#define OPS_PTR_ARRAY_DOUBLE "ARRAY<DOUBLE>"
#define OPS_PTR_ARRAY_STRING "ARRAY<STRING>"
#define OPS_PTR_STRUCT "STRUCT"
#define OPS_PTR_ROW_DATAFRAME "ROW_DATAFRAME"
#define OPS_PTR_GRAPH "GRAPH"
#define OPS_PTR_INTERVALS "INTERVAL_TREE_PARTITIONS"
#define OPS_PTR_TIMESTAMPS "SORTED_TIMESTAMPS"
#define OPS_PTR_COUNTERS "COUNTER_TRACK_PARTITIONS"
#define OPS_PTR_WAKEUP_GRAPH "WAKEUP_GRAPH"
#define OPS_PTR_TREE "TREE"

/* ---------------------------------------------------------------- table ---- */

/* Most columns of a row built from arguments (a row dataframe, a struct,
 * the partition columns of an interval aggregate). */
#define OPS_MAX_COLS 64

enum ops_type { OPS_NULL = 0, OPS_INT, OPS_REAL, OPS_TEXT };

/* One cell. Text is borrowed: from the string pool of the trace (which
 * outlives the connection) or from the owning table's arena. */
struct ops_cell {
	union {
		int64_t i;
		double d;
		const char *s;
	} u;
	uint8_t type;
};

struct ops_arena_block;

/* A table built in memory by a built-in: named columns of cells, read by
 * __intrinsic_table_ptr and the table functions. */
struct ops_table {
	uint32_t n_cols;
	char **names;                 /* owned; NULL entries for unnamed columns */
	struct ops_cell **cols;       /* n_cols arrays of cap cells */
	size_t n_rows, cap;
	struct ops_arena_block *text; /* owned copies of text cells */
	/* More names for columns (ops_table_alias()): owned. */
	char **alias_names;
	uint32_t *alias_cols;
	uint32_t n_aliases;
};

/*
 * ops_table_create() - An empty table of @n_cols columns named @names
 * (copied; @names may be NULL for unnamed columns).
 * Return: the table (ops_table_destroy() it), or NULL if out of memory.
 */
struct ops_table *ops_table_create(uint32_t n_cols, const char *const *names);
/* Frees @t (a void * so it is also the destructor SQLite calls). NULL is ok. */
void ops_table_destroy(void *t);
/* Drops every row, keeping the columns and the memory. */
void ops_table_clear(struct ops_table *t);
/* Appends a row of NULLs. Return: its index, or -ENOMEM. */
int64_t ops_table_append(struct ops_table *t);
/* Reserves room for @n rows in all. Return: 0 or -ENOMEM. */
int ops_table_reserve(struct ops_table *t, size_t n);
/* Another name for column @col: ops_table_find() finds it by both, so a
 * column that is all NULL can stand for several. Return: 0 or -ENOMEM. */
int ops_table_alias(struct ops_table *t, const char *name, uint32_t col);
/* The column named @name (exact, or an alias), or -1. */
int ops_table_find(const struct ops_table *t, const char *name);

static inline void ops_set_int(struct ops_table *t, uint32_t c, size_t r, int64_t v)
{
	t->cols[c][r].u.i = v;
	t->cols[c][r].type = OPS_INT;
}
static inline void ops_set_real(struct ops_table *t, uint32_t c, size_t r, double v)
{
	t->cols[c][r].u.d = v;
	t->cols[c][r].type = OPS_REAL;
}
/* @s must outlive the table (e.g. a string of the trace's pool); NULL is NULL. */
static inline void ops_set_static_text(struct ops_table *t, uint32_t c, size_t r, const char *s)
{
	t->cols[c][r].u.s = s;
	t->cols[c][r].type = s ? OPS_TEXT : OPS_NULL;
}
static inline void ops_set_null(struct ops_table *t, uint32_t c, size_t r)
{
	t->cols[c][r].type = OPS_NULL;
}
/* An integer, or NULL for the storage layer's NULL (TP_NULL_INT). */
void ops_set_int_or_null(struct ops_table *t, uint32_t c, size_t r, int64_t v);
/* Copies @len bytes of @s into the table. Return: 0 or -ENOMEM. */
int ops_set_text(struct ops_table *t, uint32_t c, size_t r, const char *s, size_t len);
/* Copies SQLite value @v (a blob becomes NULL). Return: 0 or -ENOMEM. */
int ops_set_value(struct ops_table *t, uint32_t c, size_t r, struct sqlite3_value *v);
/* Copies a cell of another table. Return: 0 or -ENOMEM. */
int ops_set_cell(struct ops_table *t, uint32_t c, size_t r, const struct ops_cell *cell);
/* Makes @cell SQLite's result. */
void ops_cell_result(struct sqlite3_context *ctx, const struct ops_cell *cell);
/* Hands @t to SQLite as a TABLE pointer result (SQLite frees it). */
void ops_table_result(struct sqlite3_context *ctx, struct ops_table *t);
/* Copies text into an arena owned by @t (stable until it is destroyed). */
const char *ops_table_strdup(struct ops_table *t, const char *s, size_t len);

/* ----------------------------------------------------- table functions ---- */

/*
 * A table function: "SELECT * FROM name(a, b)" (or WHERE on its hidden
 * argument columns _fn_arg0...). Columns as upstream declares them: the
 * outputs, the arguments (hidden, always NULL) and _auto_id (hidden, the
 * row number).
 */
struct ops_tfn {
	const char *name;
	const char *const *cols;  /* "name TYPE" of each output column */
	uint32_t n_cols;
	uint32_t n_args;
	/*
	 * Fills @out (n_cols columns, no rows) for the arguments @argv.
	 * Return: 0, or -1 with *@err set (sqlite3_malloc'd) to the message.
	 */
	int (*run)(void *user, struct sqlite3_value **argv, struct ops_table *out, char **err);
	void *user;
};

/*
 * ops_tfn_register() - Add table function @fn to @conn. @fn (and its user
 * pointer) is borrowed and outlives @conn.
 * Return: SQLite's result code.
 */
int ops_tfn_register(struct sqlite3 *conn, const struct ops_tfn *fn);
/* The same for a @fn copied into the module, which calls @destroy_user on
 * fn->user when it goes (also when this fails). */
int ops_tfn_register_owned(struct sqlite3 *conn, const struct ops_tfn *fn,
			   void (*destroy_user)(void *));

/* --------------------------------------------------------------- values ---- */

/* ARRAY<LONG> / ARRAY<DOUBLE> / ARRAY<STRING>. */
struct ops_array {
	size_t n, cap;
	int64_t *ints;
	double *reals;
	char **strs; /* owned */
};
void ops_array_destroy(void *a);

/* GRAPH: outgoing edges per node id (dense ids from 0). */
struct ops_graph {
	uint32_t n_nodes;
	uint32_t *edge_start; /* n_nodes + 1 offsets into edges (CSR) */
	uint32_t *edges;
	size_t n_edges;
};
void ops_graph_destroy(void *g);

/* ROW_DATAFRAME: rows of named cells, with an optional id index. */
struct ops_row_df {
	struct ops_table *t;
	int id_col;               /* column named "id", or -1 */
	uint32_t *id_to_row;      /* id -> row, UINT32_MAX for none */
	size_t n_ids;
};
void ops_row_df_destroy(void *d);

/*
 * A map from 64-bit hashes to indexes that iterates in upstream's order
 * (order_map.c): its FlatHashMap's slots, given the same insertions and the
 * byte size of upstream's slot (@slot_bytes, which decides its growth).
 */
struct ops_order_map {
	uint64_t *keys;
	uint32_t *vals;
	uint8_t *used;
	size_t cap, size, load_limit, slot_bytes;
};
void ops_order_map_init(struct ops_order_map *m, size_t slot_bytes);
void ops_order_map_fini(struct ops_order_map *m);
/* Return: 1 if inserted, 0 if @key was there already, -ENOMEM. */
int ops_order_map_insert(struct ops_order_map *m, uint64_t key, uint32_t val);
/* The value of @key (borrowed), or NULL. */
const uint32_t *ops_order_map_find(const struct ops_order_map *m, uint64_t key);
/* Upstream's Murmur-based hash of a partition key (@n cells). */
uint64_t ops_key_hash(const struct ops_cell *key, uint32_t n);

/* One interval of a partition (end = start + dur; both non-negative). */
struct ops_interval {
	uint64_t start, end;
	uint32_t id;
};

/* The intervals of one partition, sorted by start. */
struct ops_partition {
	struct ops_interval *v;
	size_t n, cap;
	bool is_nonoverlapping;
	uint64_t last_end;
	struct ops_cell *key; /* n_keys values of the partition columns */
	uint64_t hash;        /* the partition's identity, as upstream's */
};

/* INTERVAL_TREE_PARTITIONS: what __intrinsic_interval_tree_intervals_agg made. */
struct ops_partitions {
	uint32_t n_keys;
	char **key_names;          /* owned */
	struct ops_partition *p;   /* in first-seen order */
	size_t n, cap;
	struct ops_order_map map;  /* hash -> index in p */
	uint32_t *order;           /* indexes of p in upstream's iteration order */
	struct ops_table *strings; /* owns the text of the keys */
};
void ops_partitions_destroy(void *p);
/* The partition of hash @hash, or NULL. */
struct ops_partition *ops_partitions_find(const struct ops_partitions *ps, uint64_t hash);

/* SORTED_TIMESTAMPS. */
struct ops_timestamps {
	int64_t *ts;
	size_t n, cap;
};
void ops_timestamps_destroy(void *p);

/* COUNTER_TRACK_PARTITIONS: per track, the counter rows kept (in order of
 * first appearance of the track). */
struct ops_counter_track {
	int64_t track_id;
	int64_t *id, *ts;
	double *val;
	size_t n, cap;
	int64_t last_equal_id, last_equal_ts;
	double last_equal_val;
};
struct ops_counters {
	struct ops_counter_track *tracks; /* in upstream's iteration order */
	size_t n, cap;
};
void ops_counters_destroy(void *p);

/* --------------------------------------------------------------- helpers ---- */

/* Sets @ctx's error to a printf-style message. */
void ops_error(struct sqlite3_context *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Grows *@p (elements of @size bytes, capacity *@cap) to hold @need. 0 or -ENOMEM. */
int ops_grow(void **p, size_t *cap, size_t need, size_t size);

/* ------------------------------------------------------------- families ---- */

int ops_table_ptr_register(struct sqlite3 *conn);                  /* table.c */
int ops_types_register(struct sqlite3 *conn);                      /* types.c */
int ops_interval_register(struct sqlite3 *conn);                   /* interval.c */
int ops_counter_register(struct sqlite3 *conn);                    /* counter.c */
int ops_mipmap_register(struct sqlite3 *conn);                     /* mipmap.c */
int ops_layout_register(struct sqlite3 *conn, struct tp_db *db);   /* layout.c */
int ops_slice_fns_register(struct sqlite3 *conn, struct tp_db *db); /* slice_fns.c */
int ops_heap_graph_fg_register(struct sqlite3 *conn, struct tp_db *db); /* heap_graph_fg.c */
int ops_winscope_sf_register(struct sqlite3 *conn, struct tp_db *db);  /* winscope_sf.c */
int ops_winscope_args_register(struct sqlite3 *conn, struct tp_db *db); /* winscope_args.c */
/*
 * winscope_proto_bytes() - The proto a Winscope row keeps as base64 in
 * string @str_id of @db (winscope_sf.c), decoded into *@out (malloc'd).
 * Return: 0, or -1 if the string is absent, not base64, or out of memory.
 */
int winscope_proto_bytes(struct tp_db *db, int64_t str_id, uint8_t **out, size_t *len);
int ops_args_register(struct sqlite3 *conn, struct tp_db *db);     /* args.c */
int ops_flamegraph_register(struct sqlite3 *conn);                 /* flamegraph.c */
int ops_span_join_register(struct sqlite3 *conn);                  /* span_join.c */
int ops_clock_register(struct sqlite3 *conn, struct tp_db *db);    /* clock.c */
int ops_graph_search_register(struct sqlite3 *conn);               /* graph_search.c */
int ops_critical_path_register(struct sqlite3 *conn);              /* critical_path.c */
int ops_dominator_register(struct sqlite3 *conn);                  /* dominator.c */
int ops_tree_partition_register(struct sqlite3 *conn);             /* tree_partition.c */
int ops_graph_scan_register(struct sqlite3 *conn);                 /* graph_scan.c */
int ops_tree_table_register(struct sqlite3 *conn);                 /* tree_table.c */

#endif
