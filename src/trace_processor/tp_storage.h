/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tp_storage.h - the trace processor's columnar storage: a string pool and
 * tables whose columns are flat arrays, one row per index. Importers append
 * rows and set cells; the SQLite layer (tp_vtab.h) reads the cells in place.
 * The row index is the table's `id`. Integer and string-id columns of big
 * tables are stored as narrow as their values allow, and sorted integer
 * columns as 32-bit offsets from a base per block of rows (tp_cells.c).
 *
 * NULL is a sentinel per type: INT64_MIN for integers (the minimum of the
 * current width in TP_NARROW columns), NaN for doubles, string id 0 for
 * strings. Every column can hold NULL. Read cells with tp_get_int(),
 * tp_get_str() and tp_get_real(); tp_col_int() and tp_col_real() are the raw
 * arrays of unsorted TP_INT and of TP_REAL columns only.
 */
#ifndef PFC_TRACE_PROCESSOR_TP_STORAGE_H
#define PFC_TRACE_PROCESSOR_TP_STORAGE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/compiler.h"
#include "base/hmap.h"
#include "base/log.h"

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
	TP_STR,     /* string id, in 8, 16 or 32 bits (widened as ids grow) */
	TP_ID,      /* the row index itself; no storage */
	TP_NARROW,  /* integer in 8, 16, 32 or 64 bits, widened on the first value
		     * that does not fit (never TP_SORTED) */
};

enum tp_col_flags {
	TP_SORTED = 1u << 0,   /* non-decreasing over rows (NULLs never appear) */
	TP_HIDDEN = 1u << 1,   /* not in SELECT * */
};

/*
 * How a column's cells are laid out right now. Signed encodings use their
 * minimum as NULL (so an 8-bit cell holds -127..127); string ids are
 * unsigned and 0 is NULL. TP_ENC_D32 (TP_SORTED integer columns) stores
 * cell - base of its block of TP_D32_BLOCK_ROWS rows, UINT32_MAX for NULL;
 * a block's base is the first value set in it. A column only ever moves
 * to a wider encoding (D32 to I64, when a cell is below its block's base
 * or 2^32 - 1 or more above it).
 */
enum tp_enc {
	TP_ENC_ROW,   /* TP_ID: no cells */
	TP_ENC_I8,
	TP_ENC_I16,
	TP_ENC_I32,
	TP_ENC_I64,
	TP_ENC_U8,
	TP_ENC_U16,
	TP_ENC_U32,
	TP_ENC_F64,
	TP_ENC_D32,
};

#define TP_D32_BLOCK_SHIFT 16
#define TP_D32_BLOCK_ROWS ((size_t)1 << TP_D32_BLOCK_SHIFT)

struct tp_col_spec {
	const char *name;
	enum tp_type type;
	unsigned flags;
};

struct tp_index;
struct tp_order;

struct tp_col {
	const struct tp_col_spec *spec;
	void *data;                 /* cap cells of enc; NULL for TP_ID */
	int64_t *bases;             /* TP_ENC_D32: per block, TP_NULL_INT until set */
	enum tp_enc enc;
	struct tp_index *index;     /* built on the first equality filter */
};

struct tp_table {
	const char *name;
	const struct tp_col_spec *specs;
	uint32_t n_cols;
	struct tp_col *cols;
	size_t n_rows, cap;
	size_t n_filled;            /* cells [n_rows, n_filled) already hold NULL */
	uint64_t generation;        /* bumped on every change: indexes go stale */
	struct tp_order *orders;    /* cached row orders (tp_table_order) */
	uint32_t n_orders;
};

int tp_table_init(struct tp_table *t, const char *name, const struct tp_col_spec *specs,
		  uint32_t n_cols);
void tp_table_fini(struct tp_table *t);

/* Appends a row of NULLs. Return: its index, or -ENOMEM. */
int64_t tp_table_append(struct tp_table *t);

/* The raw cells of an unsorted TP_INT column (always int64). */
static inline int64_t *tp_col_int(const struct tp_table *t, uint32_t c)
{
	DCHECK(t->cols[c].enc == TP_ENC_I64);
	return (int64_t *)t->cols[c].data;
}
/* The raw cells of a TP_REAL column. */
static inline double *tp_col_real(const struct tp_table *t, uint32_t c)
{
	DCHECK(t->cols[c].enc == TP_ENC_F64);
	return (double *)t->cols[c].data;
}

/* Bytes per cell of @enc (0 for TP_ENC_ROW). */
size_t tp_enc_size(enum tp_enc enc);
/* The encoding a new column starts in (tp_table_init). */
enum tp_enc tp_enc_initial(const struct tp_col_spec *spec);
/*
 * tp_col_grow() - Makes room for @cap cells in @col (which has room for
 * @old_cap): the cells and, for TP_ENC_D32, the block bases.
 * Return: 0 or -ENOMEM (the column still holds @old_cap cells then).
 */
int tp_col_grow(struct tp_col *col, size_t old_cap, size_t cap);

/*
 * tp_cells_fill_null() - Writes NULL into cells [@from, @from + @n) of
 * @data laid out as @enc (tp_table_append fills runs of rows ahead).
 */
void tp_cells_fill_null(void *data, enum tp_enc enc, size_t from, size_t n);

/*
 * tp_cell_put() - Writes @v (TP_NULL_INT: NULL) into cell @row of @data
 * laid out as @enc, for the storage code itself: @v must fit @enc, and
 * table generations are not touched. F64 cells (NaN) and D32 cells
 * (UINT32_MAX) only take NULL here.
 */
static inline void tp_cell_put(void *data, enum tp_enc enc, size_t row, int64_t v)
{
	bool null = v == TP_NULL_INT;

	switch (enc) {
	case TP_ENC_I8:
		((int8_t *)data)[row] = null ? INT8_MIN : (int8_t)v;
		break;
	case TP_ENC_I16:
		((int16_t *)data)[row] = null ? INT16_MIN : (int16_t)v;
		break;
	case TP_ENC_I32:
		((int32_t *)data)[row] = null ? INT32_MIN : (int32_t)v;
		break;
	case TP_ENC_I64:
		((int64_t *)data)[row] = v;
		break;
	case TP_ENC_U8:
		((uint8_t *)data)[row] = null ? 0 : (uint8_t)v;
		break;
	case TP_ENC_U16:
		((uint16_t *)data)[row] = null ? 0 : (uint16_t)v;
		break;
	case TP_ENC_U32:
		((uint32_t *)data)[row] = null ? 0 : (uint32_t)v;
		break;
	case TP_ENC_F64:
		((double *)data)[row] = (double)NAN;
		break;
	case TP_ENC_D32:
		((uint32_t *)data)[row] = UINT32_MAX;
		break;
	case TP_ENC_ROW:
		break;
	}
}

/*
 * Any integer-like cell (TP_INT, TP_NARROW, TP_ID, a TP_STR id);
 * TP_NULL_INT for NULL. Hot loops call this per cell: keep it one switch,
 * always inlined.
 */
static PFC_ALWAYS_INLINE int64_t tp_get_int(const struct tp_table *t, uint32_t c, size_t row)
{
	const struct tp_col *col = &t->cols[c];

	switch (col->enc) {
	case TP_ENC_I8: {
		int8_t v = ((const int8_t *)col->data)[row];

		return v == INT8_MIN ? TP_NULL_INT : v;
	}
	case TP_ENC_I16: {
		int16_t v = ((const int16_t *)col->data)[row];

		return v == INT16_MIN ? TP_NULL_INT : v;
	}
	case TP_ENC_I32: {
		int32_t v = ((const int32_t *)col->data)[row];

		return v == INT32_MIN ? TP_NULL_INT : v;
	}
	case TP_ENC_U8:
		return ((const uint8_t *)col->data)[row];
	case TP_ENC_U16:
		return ((const uint16_t *)col->data)[row];
	case TP_ENC_U32:
		return ((const uint32_t *)col->data)[row];
	case TP_ENC_D32: {
		uint32_t v = ((const uint32_t *)col->data)[row];

		return v == UINT32_MAX ? TP_NULL_INT
				       : col->bases[row >> TP_D32_BLOCK_SHIFT] + (int64_t)v;
	}
	case TP_ENC_ROW:
		return (int64_t)row;
	case TP_ENC_I64:
	case TP_ENC_F64:
		break;
	}
	return ((const int64_t *)col->data)[row];
}

/* A string-id cell (TP_STR); TP_NULL_STR for NULL. */
static inline uint32_t tp_get_str(const struct tp_table *t, uint32_t c, size_t row)
{
	return (uint32_t)tp_get_int(t, c, row);
}

/* A TP_REAL cell; NaN for NULL. */
static inline double tp_get_real(const struct tp_table *t, uint32_t c, size_t row)
{
	return ((const double *)t->cols[c].data)[row];
}

/*
 * tp_col_set_wide() - Store @v in a cell its column's encoding cannot hold:
 * widens the whole column first. tp_set_int() calls it; nothing else should.
 * Return: 0; -ERANGE for a string id outside 0..UINT32_MAX or a column
 * that holds no integers; -ENOMEM (the cell keeps its old value).
 */
int tp_col_set_wide(struct tp_table *t, uint32_t c, size_t row, int64_t v);

/*
 * Setters mark the table changed (cached indexes are rebuilt on use).
 * tp_set_int() takes any integer-like column; TP_NULL_INT stores NULL.
 * Return: 0 or the errors of tp_col_set_wide().
 */
static PFC_ALWAYS_INLINE int tp_set_int(struct tp_table *t, uint32_t c, size_t row, int64_t v)
{
	struct tp_col *col = &t->cols[c];

	t->generation++;
	switch (col->enc) {
	case TP_ENC_I64:
		((int64_t *)col->data)[row] = v;
		return 0;
	case TP_ENC_I8:
		if (v == TP_NULL_INT || (v > INT8_MIN && v <= INT8_MAX)) {
			((int8_t *)col->data)[row] = v == TP_NULL_INT ? INT8_MIN : (int8_t)v;
			return 0;
		}
		break;
	case TP_ENC_I16:
		if (v == TP_NULL_INT || (v > INT16_MIN && v <= INT16_MAX)) {
			((int16_t *)col->data)[row] = v == TP_NULL_INT ? INT16_MIN : (int16_t)v;
			return 0;
		}
		break;
	case TP_ENC_I32:
		if (v == TP_NULL_INT || (v > INT32_MIN && v <= INT32_MAX)) {
			((int32_t *)col->data)[row] = v == TP_NULL_INT ? INT32_MIN : (int32_t)v;
			return 0;
		}
		break;
	case TP_ENC_U8:
		if (v >= 0 && v <= UINT8_MAX) {
			((uint8_t *)col->data)[row] = (uint8_t)v;
			return 0;
		}
		break;
	case TP_ENC_U16:
		if (v >= 0 && v <= UINT16_MAX) {
			((uint16_t *)col->data)[row] = (uint16_t)v;
			return 0;
		}
		break;
	case TP_ENC_U32:
		if (v >= 0 && v <= UINT32_MAX) {
			((uint32_t *)col->data)[row] = (uint32_t)v;
			return 0;
		}
		break;
	case TP_ENC_D32: {
		int64_t *base = &col->bases[row >> TP_D32_BLOCK_SHIFT];

		if (v == TP_NULL_INT) {
			((uint32_t *)col->data)[row] = UINT32_MAX;
			return 0;
		}
		if (*base == TP_NULL_INT)
			*base = v;
		if (v >= *base && (uint64_t)v - (uint64_t)*base < UINT32_MAX) {
			((uint32_t *)col->data)[row] = (uint32_t)((uint64_t)v - (uint64_t)*base);
			return 0;
		}
		break;
	}
	case TP_ENC_ROW:
	case TP_ENC_F64:
		break;
	}
	return tp_col_set_wide(t, c, row, v);
}
static inline void tp_set_real(struct tp_table *t, uint32_t c, size_t row, double v)
{
	tp_col_real(t, c)[row] = v;
	t->generation++;
}
static inline int tp_set_str(struct tp_table *t, uint32_t c, size_t row, uint32_t v)
{
	return tp_set_int(t, c, row, v);
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
 * Return: n_rows and *out_rows (borrowed: see tp_rows_hold()); -ENOMEM.
 */
int64_t tp_table_order(struct tp_table *t, uint32_t c1, int c2, const struct tp_strings *strings,
		       const uint32_t **out_rows);

/*
 * tp_rows_hold(), tp_rows_release() - Keep the rows tp_table_order() gave
 * alive while reading them (the cache keeps 4 orders per table and drops
 * the oldest when a fifth is asked for, maybe by another cursor of the
 * same statement). Every hold needs one release; NULL is ignored.
 */
void tp_rows_hold(const uint32_t *rows);
void tp_rows_release(const uint32_t *rows);

#endif
