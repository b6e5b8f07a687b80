/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cells.h - one column of the columnar storage: its type, how its cells are
 * encoded right now and the code that reads, writes, grows and widens
 * them (cells.c). The bottom of the storage layer, below the tables of
 * storage.h, which is the only header the other layers include (it
 * includes this one). Knows nothing of tables: a column is its cells.
 *
 * NULL is a sentinel per type: INT64_MIN for integers (the minimum of the
 * current width in TP_NARROW columns), NaN for doubles, string id 0 for
 * strings. Every column can hold NULL.
 */
#ifndef PFC_TRACE_PROCESSOR_STORAGE_CELLS_H
#define PFC_TRACE_PROCESSOR_STORAGE_CELLS_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/compiler.h"
#include "base/hmap.h"

#define TP_NULL_INT INT64_MIN
#define TP_NULL_STR 0u

enum tp_type {
	TP_INT,     /* int64_t */
	TP_REAL,    /* double */
	TP_STR,     /* string id, packed in as few bits as the largest id needs */
	TP_ID,      /* the row index itself; no storage */
	TP_NARROW,  /* integer packed in 0-32 bits as an offset from the column's
		     * base, repacked on the first value that does not fit; past
		     * 32 bits: 32-bit cells with rare exceptions, else 64-bit
		     * (never TP_SORTED) */
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
 * or 2^32 - 1 or more above it). A TP_NARROW column whose value does not
 * fit 32 bits moves to TP_ENC_X32 instead of int64 while such values are
 * rare (a few long thread states among millions): its cells stay 32-bit
 * and each of those values is kept by row in the column's exceptions.
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
	TP_ENC_X32,   /* I32 cells, INT32_MAX: the value is in the exceptions */
	TP_ENC_BITS,  /* bit-packed codes, see below */
};

/*
 * TP_ENC_BITS: cell i is a code of col->bits bits (0 to 32) at bit
 * i * bits of the cells, little-endian; code 0 is NULL and code c the
 * value base + c - 1. A column that held only NULLs so far has 0 bits and
 * no cells to speak of. A string column keeps base 1 (the code is the id).
 * A value outside [base, base + 2^bits - 2] repacks the column into more
 * bits or a lower base (a new array: O(rows), a few times per column). The
 * cells are followed by 8 spare bytes, so that a cell is read and written
 * as one unaligned 64-bit word.
 */
#define TP_BITS_MAX 32u

#define TP_D32_BLOCK_SHIFT 16
#define TP_D32_BLOCK_ROWS ((size_t)1 << TP_D32_BLOCK_SHIFT)

struct tp_col_spec {
	const char *name;
	enum tp_type type;
	unsigned flags;
};

struct tp_index;

struct tp_col {
	const struct tp_col_spec *spec;
	void *data;                 /* cap cells of enc; NULL for TP_ID */
	size_t bytes;               /* data's size (base/bigmem.h) */
	int64_t *bases;             /* TP_ENC_D32: per block, TP_NULL_INT until set */
	struct hmap *exc;           /* TP_ENC_X32: row -> value of each INT32_MAX cell */
	enum tp_enc enc;
	uint32_t bits;              /* TP_ENC_BITS: bits per cell */
	uint64_t mask;              /* TP_ENC_BITS: (1 << bits) - 1 */
	int64_t base;               /* TP_ENC_BITS: the value of code 1 */
	int64_t null_v;             /* TP_ENC_BITS: what code 0 reads as (0 for strings) */
	struct tp_index *index;     /* the table's equality index (storage.c) */
};

/* Reads and writes of TP_ENC_BITS codes. */
static PFC_ALWAYS_INLINE uint64_t tp_bits_load(const void *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

static PFC_ALWAYS_INLINE void tp_bits_store(void *p, uint64_t w)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	memcpy(p, &w, sizeof(w));
}

static PFC_ALWAYS_INLINE uint64_t tp_bits_get(const void *data, uint32_t bits, uint64_t mask,
					      size_t row)
{
	uint64_t bit = (uint64_t)row * bits;

	return (tp_bits_load((const uint8_t *)data + (bit >> 3)) >> (bit & 7)) & mask;
}

/* @code must fit @mask. */
static PFC_ALWAYS_INLINE void tp_bits_put(void *data, uint32_t bits, uint64_t mask, size_t row,
					  uint64_t code)
{
	uint64_t bit = (uint64_t)row * bits, w;
	uint8_t *p = (uint8_t *)data + (bit >> 3);
	unsigned sh = (unsigned)(bit & 7);

	w = tp_bits_load(p);
	w = (w & ~(mask << sh)) | (code << sh);
	tp_bits_store(p, w);
}

/* The encoding a new column of @spec starts in. */
enum tp_enc tp_enc_initial(const struct tp_col_spec *spec);
/* tp_col_init() - Makes @col (zeroed) an empty column of @spec. Return: 0. */
int tp_col_init(struct tp_col *col, const struct tp_col_spec *spec);
/*
 * tp_col_grow() - Makes room for @cap cells in @col (which has room for
 * @old_cap): the cells and, for TP_ENC_D32, the block bases.
 * Return: 0 or -ENOMEM (the column still holds @old_cap cells then).
 */
int tp_col_grow(struct tp_col *col, size_t old_cap, size_t cap);

/*
 * tp_cells_prefault() - Maps the whole pages of cells [@from, @from + @n)
 * of @col in one system call (MADV_POPULATE_WRITE) instead of one page
 * fault per page as they are first written; a hint (errors are ignored).
 */
void tp_cells_prefault(const struct tp_col *col, size_t from, size_t n);
/*
 * tp_cells_prefault_ahead() - The same for cells the table reaches later:
 * through the thread's populator (base/bigmem.h), possibly on another
 * thread.
 */
void tp_cells_prefault_ahead(const struct tp_col *col, size_t from, size_t n);

/* tp_col_free() - Frees @col's cells, block bases and exceptions. */
void tp_col_free(struct tp_col *col);

/*
 * tp_cells_fill_null() - Writes NULL into cells [@from, @from + @n) of
 * @col (tables fill runs of rows ahead).
 */
void tp_cells_fill_null(struct tp_col *col, size_t from, size_t n);

/*
 * tp_cell_put() - Writes @v (TP_NULL_INT: NULL) into cell @row of @data
 * laid out as @enc, for the storage code itself: @v must fit @enc. F64
 * cells (NaN) and D32 cells (UINT32_MAX) only take NULL here.
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
	case TP_ENC_X32:
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
	case TP_ENC_BITS: /* not through here: tp_cells_fill_null() */
		break;
	}
}

/* The value of TP_ENC_X32 cell @row, which holds INT32_MAX (cells.c). */
int64_t tp_cell_exception(const struct tp_col *col, size_t row);

/*
 * Any integer-like cell (TP_INT, TP_NARROW, TP_ID, a TP_STR id);
 * TP_NULL_INT for NULL. Hot loops call this per cell: keep it one switch,
 * always inlined.
 */
static PFC_ALWAYS_INLINE int64_t tp_cell_get(const struct tp_col *col, size_t row)
{
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
	case TP_ENC_X32: {
		int32_t v = ((const int32_t *)col->data)[row];

		if (PFC_UNLIKELY(v == INT32_MAX))
			return tp_cell_exception(col, row);
		return v == INT32_MIN ? TP_NULL_INT : v;
	}
	case TP_ENC_BITS: {
		uint64_t c = tp_bits_get(col->data, col->bits, col->mask, row);

		return c ? col->base + (int64_t)(c - 1) : col->null_v;
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

/*
 * tp_col_set_wide() - Store @v in cell @row, which @col's encoding cannot
 * hold: widens the whole column first (its @n_cells cells in use, room
 * for @cap). tp_set_int() calls it; nothing else should.
 * Return: 0; -ERANGE for a string id outside 0..UINT32_MAX or a column
 * that holds no integers; -ENOMEM (the cell keeps its old value).
 */
int tp_col_set_wide(struct tp_col *col, size_t cap, size_t n_cells, size_t row, int64_t v);

#endif
