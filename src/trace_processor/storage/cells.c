// SPDX-License-Identifier: Apache-2.0
/*
 * cells.c - cell encodings of the columnar storage (cells.h): how wide each
 * one is, what a new column starts in, growing a column, and widening a
 * TP_NARROW, TP_STR or sorted TP_INT column in place when a value does not
 * fit (or keeping it 32-bit with the rare values that do not fit aside:
 * TP_ENC_X32). Called by storage.c and, through tp_set_int(), by every importer.
 * Most columns settle at their final width within the first rows, so
 * widening is rare and O(rows).
 */
#include "trace_processor/storage/cells.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>

/* Bytes per cell of @enc (0 for TP_ENC_ROW). */
static size_t enc_size(enum tp_enc enc)
{
	switch (enc) {
	case TP_ENC_ROW:
		return 0;
	case TP_ENC_I8:
	case TP_ENC_U8:
		return 1;
	case TP_ENC_I16:
	case TP_ENC_U16:
		return 2;
	case TP_ENC_I32:
	case TP_ENC_U32:
	case TP_ENC_D32:
	case TP_ENC_X32:
		return 4;
	case TP_ENC_I64:
	case TP_ENC_F64:
		return 8;
	}
	return 0;
}

enum tp_enc tp_enc_initial(const struct tp_col_spec *spec)
{
	switch (spec->type) {
	case TP_INT:
		return (spec->flags & TP_SORTED) ? TP_ENC_D32 : TP_ENC_I64;
	case TP_REAL:
		return TP_ENC_F64;
	case TP_STR:
		return TP_ENC_U8;
	case TP_ID:
		return TP_ENC_ROW;
	case TP_NARROW:
		return TP_ENC_I8;
	}
	return TP_ENC_ROW;
}

void tp_cells_fill_null(void *data, enum tp_enc enc, size_t from, size_t n)
{
	size_t i;

	switch (enc) {
	case TP_ENC_I8:
		memset((int8_t *)data + from, 0x80, n);
		break;
	case TP_ENC_U8:
	case TP_ENC_U16:
	case TP_ENC_U32:
		memset((char *)data + from * enc_size(enc), 0, n * enc_size(enc));
		break;
	case TP_ENC_D32:
		memset((uint32_t *)data + from, 0xff, n * sizeof(uint32_t));
		break;
	case TP_ENC_I16:
		for (i = 0; i < n; i++)
			((int16_t *)data)[from + i] = INT16_MIN;
		break;
	case TP_ENC_I32:
	case TP_ENC_X32:
		for (i = 0; i < n; i++)
			((int32_t *)data)[from + i] = INT32_MIN;
		break;
	case TP_ENC_I64:
		for (i = 0; i < n; i++)
			((int64_t *)data)[from + i] = TP_NULL_INT;
		break;
	case TP_ENC_F64:
		for (i = 0; i < n; i++)
			((double *)data)[from + i] = (double)NAN;
		break;
	case TP_ENC_ROW:
		break;
	}
}

void tp_cells_prefault(void *data, enum tp_enc enc, size_t from, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	static size_t psz;
	uintptr_t lo = (uintptr_t)data + from * enc_size(enc), hi = lo + n * enc_size(enc);

	if (!psz) {
		long p = sysconf(_SC_PAGESIZE);

		psz = p > 0 ? (size_t)p : 4096;
	}
	/* Whole pages inside the range only: the cells around are others'. */
	lo = (lo + psz - 1) & ~(uintptr_t)(psz - 1);
	hi &= ~(uintptr_t)(psz - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
	(void)data;
	(void)enc;
	(void)from;
	(void)n;
#endif
}

static size_t n_blocks(size_t cap)
{
	return (cap + TP_D32_BLOCK_ROWS - 1) >> TP_D32_BLOCK_SHIFT;
}

int tp_col_grow(struct tp_col *col, size_t old_cap, size_t cap)
{
	size_t sz = enc_size(col->enc), i;
	void *d;

	if (!sz)
		return 0;
	if (col->enc == TP_ENC_D32 && n_blocks(cap) > n_blocks(old_cap)) {
		int64_t *b = realloc(col->bases, n_blocks(cap) * sizeof(*b));

		if (!b)
			return -ENOMEM;
		for (i = n_blocks(old_cap); i < n_blocks(cap); i++)
			b[i] = TP_NULL_INT;
		col->bases = b;
	}
	d = realloc(col->data, cap * sz);
	if (!d)
		return -ENOMEM;
	col->data = d;
	return 0;
}

/*
 * The narrowest encoding of @v's family that holds it (never narrower than
 * @cur); offsets from block bases (D32) fall back to plain int64.
 */
static enum tp_enc enc_for(enum tp_enc cur, int64_t v)
{
	enum tp_enc e;

	if (cur == TP_ENC_D32)
		return TP_ENC_I64;
	if (cur == TP_ENC_U8 || cur == TP_ENC_U16 || cur == TP_ENC_U32)
		e = v <= UINT8_MAX ? TP_ENC_U8 : v <= UINT16_MAX ? TP_ENC_U16 : TP_ENC_U32;
	else if (v > INT8_MIN && v <= INT8_MAX)
		e = TP_ENC_I8;
	else if (v > INT16_MIN && v <= INT16_MAX)
		e = TP_ENC_I16;
	else if (v > INT32_MIN && v <= INT32_MAX)
		e = TP_ENC_I32;
	else
		e = TP_ENC_I64;
	return e > cur ? e : cur;
}

/*
 * Re-encodes @col's @n_cells cells (room for @cap) as @to (wider, same
 * family). Cells move from the last to the first: cell i's new bytes only
 * cover old cells >= i, which are already moved.
 */
static int widen(struct tp_col *col, size_t cap, size_t n_cells, enum tp_enc to)
{
	size_t i;

	if (cap) {
		void *d = realloc(col->data, cap * enc_size(to));

		if (!d)
			return -ENOMEM;
		col->data = d;
	}
	/* Rows a table appended ahead as NULL are among the cells in use too. */
	for (i = n_cells; i-- > 0;)
		tp_cell_put(col->data, to, i, tp_cell_get(col, i));
	col->enc = to;
	free(col->bases);
	col->bases = NULL;
	hmap_fini(col->exc);
	free(col->exc);
	col->exc = NULL;
	return 0;
}

/*
 * TP_ENC_X32 keeps a value outside 32 bits aside while such values are at
 * most one in X32_SHARE of the cells (plus X32_MIN_EXC): each costs a map
 * entry (about 32 bytes) where int64 cells would cost 4 more bytes a row.
 */
#define X32_SHARE 128u
#define X32_MIN_EXC 64u

int64_t tp_cell_exception(const struct tp_col *col, size_t row)
{
	uint64_t v;

	return col->exc && hmap_get(col->exc, row, &v) ? (int64_t)v : TP_NULL_INT;
}

void tp_col_free(struct tp_col *col)
{
	free(col->data);
	free(col->bases);
	hmap_fini(col->exc);
	free(col->exc);
	col->data = NULL;
	col->bases = NULL;
	col->exc = NULL;
}

/* A signed narrow column (@n_cells cells in use) as TP_ENC_X32. */
static int to_x32(struct tp_col *col, size_t cap, size_t n_cells)
{
	size_t i;
	int rc;

	if (col->enc != TP_ENC_I32) {
		rc = widen(col, cap, n_cells, TP_ENC_I32);
		if (rc < 0)
			return rc;
	}
	col->exc = calloc(1, sizeof(*col->exc));
	if (!col->exc)
		return -ENOMEM;
	hmap_init(col->exc);
	/* INT32_MAX itself becomes an exception. */
	for (i = 0; i < n_cells; i++)
		if (((int32_t *)col->data)[i] == INT32_MAX &&
		    hmap_put(col->exc, i, (uint64_t)(int64_t)INT32_MAX) < 0) {
			hmap_fini(col->exc);
			free(col->exc);
			col->exc = NULL;
			return -ENOMEM;
		}
	col->enc = TP_ENC_X32;
	return 0;
}

/* tp_col_set_wide() of a TP_ENC_X32 column, or one about to become one. */
static int set_x32(struct tp_col *col, size_t cap, size_t n_cells, size_t row, int64_t v)
{
	int32_t *cell;
	int rc;

	if (col->enc != TP_ENC_X32) {
		rc = to_x32(col, cap, n_cells);
		if (rc < 0)
			return rc;
	}
	cell = &((int32_t *)col->data)[row];
	if (*cell == INT32_MAX)
		hmap_del(col->exc, row, NULL);
	if (v == TP_NULL_INT || (v > INT32_MIN && v < INT32_MAX)) {
		*cell = v == TP_NULL_INT ? INT32_MIN : (int32_t)v;
		return 0;
	}
	if (hmap_len(col->exc) < X32_MIN_EXC + n_cells / X32_SHARE) {
		rc = hmap_put(col->exc, row, (uint64_t)v);
		if (rc < 0)
			return rc;
		*cell = INT32_MAX;
		return 0;
	}
	rc = widen(col, cap, n_cells, TP_ENC_I64);
	if (rc < 0)
		return rc;
	tp_cell_put(col->data, col->enc, row, v);
	return 0;
}

int tp_col_set_wide(struct tp_col *col, size_t cap, size_t n_cells, size_t row, int64_t v)
{
	int rc;

	switch (col->enc) {
	case TP_ENC_U8:
	case TP_ENC_U16:
	case TP_ENC_U32:
		if (v == TP_NULL_INT) {
			tp_cell_put(col->data, col->enc, row, v);
			return 0;
		}
		if (v < 0 || v > UINT32_MAX)
			return -ERANGE;
		break;
	case TP_ENC_I8:
	case TP_ENC_I16:
	case TP_ENC_I32:
		if (v != TP_NULL_INT && (v <= INT32_MIN || v > INT32_MAX))
			return set_x32(col, cap, n_cells, row, v);
		break;
	case TP_ENC_X32:
		return set_x32(col, cap, n_cells, row, v);
	case TP_ENC_D32:
		break;
	case TP_ENC_I64:
	case TP_ENC_F64:
	case TP_ENC_ROW:
		return -ERANGE;
	}
	rc = widen(col, cap, n_cells, enc_for(col->enc, v));
	if (rc < 0)
		return rc;
	tp_cell_put(col->data, col->enc, row, v);
	return 0;
}
