/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tp_storage.h - the trace processor's columnar storage: a string pool and
 * tables whose columns are flat arrays (int64, double or string id), one
 * row per index. Importers append rows and set cells; the SQLite layer
 * (tp_vtab.h) reads the arrays directly. The row index is the table's `id`.
 *
 * NULL is a sentinel per type: INT64_MIN for integers (INT32_MIN in the
 * narrow TP_I32 columns), NaN for doubles, string id 0 for strings. Every
 * column can hold NULL. Read integers with tp_get_int() unless the column
 * is known to be TP_INT (tp_col_int() is the raw int64 array).
 */
#ifndef PFC_TRACE_PROCESSOR_TP_STORAGE_H
#define PFC_TRACE_PROCESSOR_TP_STORAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hmap.h"

#define TP_NULL_INT INT64_MIN
#define TP_NULL_STR 0u

/* ------------------------------------------------------------ strings ---- */

/* Interned strings; ids are dense from 1 (0 is NULL). */
struct tp_strings {
	char *blob;          /* NUL-terminated strings back to back */
	size_t blob_len, blob_cap;
	uint64_t *offs;      /* id -> offset in blob */
	uint32_t n, cap;
	struct hmap index;   /* FNV-1a of the bytes -> id (collisions chained by probing) */
};

int tp_strings_init(struct tp_strings *s);
void tp_strings_fini(struct tp_strings *s);
/* Return: the id of @len bytes at @str (interned on first sight); 0 if out of memory. */
uint32_t tp_str_intern(struct tp_strings *s, const char *str, size_t len);
uint32_t tp_str_intern_c(struct tp_strings *s, const char *str);
/*
 * tp_str_find() - The id of exactly the @len bytes at @str if they are
 * interned, without interning them (SQL equality filters use it).
 * Return: the id, or 0 if absent; bytes holding a NUL are never interned.
 */
uint32_t tp_str_find(const struct tp_strings *s, const char *str, size_t len);
/* Return: the string (NUL-terminated, borrowed), or NULL for id 0 or a bad id. */
const char *tp_str_get(const struct tp_strings *s, uint32_t id);

/* ------------------------------------------------------------- tables ---- */

enum tp_type {
	TP_INT,     /* int64_t */
	TP_REAL,    /* double */
	TP_STR,     /* uint32_t string id */
	TP_ID,      /* the row index itself; no storage */
	TP_I32,     /* int32_t: ids, CPUs, priorities, flags (never TP_SORTED) */
};

enum tp_col_flags {
	TP_SORTED = 1u << 0,   /* non-decreasing over rows (NULLs never appear) */
	TP_HIDDEN = 1u << 1,   /* not in SELECT * */
};

struct tp_col_spec {
	const char *name;
	enum tp_type type;
	unsigned flags;
};

struct tp_index;
struct tp_order;

struct tp_col {
	const struct tp_col_spec *spec;
	void *data;                 /* n_rows cells; NULL for TP_ID */
	struct tp_index *index;     /* built on the first equality filter */
};

struct tp_table {
	const char *name;
	const struct tp_col_spec *specs;
	uint32_t n_cols;
	struct tp_col *cols;
	size_t n_rows, cap;
	uint64_t generation;        /* bumped on every change: indexes go stale */
	struct tp_order *orders;    /* cached row orders (tp_table_order) */
	uint32_t n_orders;
};

int tp_table_init(struct tp_table *t, const char *name, const struct tp_col_spec *specs,
		  uint32_t n_cols);
void tp_table_fini(struct tp_table *t);

/* Appends a row of NULLs. Return: its index, or -ENOMEM. */
int64_t tp_table_append(struct tp_table *t);

static inline int64_t *tp_col_int(const struct tp_table *t, uint32_t c)
{
	return (int64_t *)t->cols[c].data;
}
static inline double *tp_col_real(const struct tp_table *t, uint32_t c)
{
	return (double *)t->cols[c].data;
}
static inline uint32_t *tp_col_str(const struct tp_table *t, uint32_t c)
{
	return (uint32_t *)t->cols[c].data;
}

static inline int32_t *tp_col_i32(const struct tp_table *t, uint32_t c)
{
	return (int32_t *)t->cols[c].data;
}

/* Any integer-like cell (TP_INT, TP_I32, TP_ID, a TP_STR id); TP_NULL_INT for NULL. */
static inline int64_t tp_get_int(const struct tp_table *t, uint32_t c, size_t row)
{
	switch (t->specs[c].type) {
	case TP_I32: {
		int32_t v = tp_col_i32(t, c)[row];

		return v == INT32_MIN ? TP_NULL_INT : v;
	}
	case TP_ID:
		return (int64_t)row;
	case TP_STR:
		return tp_col_str(t, c)[row];
	default:
		return tp_col_int(t, c)[row];
	}
}

/* Setters mark the table changed (cached indexes are rebuilt on use). */
static inline void tp_set_int(struct tp_table *t, uint32_t c, size_t row, int64_t v)
{
	if (t->specs[c].type == TP_I32)
		tp_col_i32(t, c)[row] = v == TP_NULL_INT ? INT32_MIN : (int32_t)v;
	else
		tp_col_int(t, c)[row] = v;
	t->generation++;
}
static inline void tp_set_real(struct tp_table *t, uint32_t c, size_t row, double v)
{
	tp_col_real(t, c)[row] = v;
	t->generation++;
}
static inline void tp_set_str(struct tp_table *t, uint32_t c, size_t row, uint32_t v)
{
	tp_col_str(t, c)[row] = v;
	t->generation++;
}

/*
 * tp_col_lookup() - Rows whose integer or string-id cell equals @v, from a
 * sorted index built on first use (and rebuilt when the table changed).
 * Return: the number of rows; *out_rows points at them in ascending row
 * order (borrowed, valid until the table changes); -ENOMEM.
 */
int64_t tp_col_lookup(struct tp_table *t, uint32_t c, int64_t v, const uint32_t **out_rows);

/* Builds the equality index of column @c now (e.g. after an import). */
int tp_col_index_build(struct tp_table *t, uint32_t c);

/* Distinct values in column @c when its index was last built; 0: unknown. */
size_t tp_col_distinct_hint(const struct tp_table *t, uint32_t c);

/*
 * tp_table_order() - Every row, ordered by the cells of column @c1, then
 * of @c2 (-1: none), then by row. NULLs come first. String columns order
 * by their text in byte order (SQLite's BINARY) given @strings, the pool
 * their ids point into; without it (NULL) by string id, which only groups.
 * Built with a counting sort when the key range is small, else a
 * comparison sort, and cached until the table changes (callers must pass
 * the same @strings each time).
 * Return: n_rows and *out_rows (borrowed); -ENOMEM.
 */
int64_t tp_table_order(struct tp_table *t, uint32_t c1, int c2, const struct tp_strings *strings,
		       const uint32_t **out_rows);

#endif
