// SPDX-License-Identifier: Apache-2.0
/*
 * cells.c - cell encodings of the columnar storage (cells.h): how wide each
 * one is, what a new column starts in, growing a column, and widening a
 * TP_NARROW, TP_STR or sorted TP_INT column in place when a value does not
 * fit (or keeping it 32-bit with the rare values that do not fit aside:
 * TP_ENC_X32). Called by storage.c and, through tp_set_int(), by every importer.
 * Most columns settle at their final width within the first rows, so
 * widening is rare and O(rows). Integer (TP_NARROW) and string columns
 * start bit-packed (TP_ENC_BITS): a thread state's cpu, utid, state and
 * waker take the bits their values need, not a byte or two each.
 */
#include "trace_processor/storage/cells.h"

#include "base/bigmem.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


/* Bytes per cell of @enc (0 for TP_ENC_ROW). */
static size_t enc_size(enum tp_enc enc)
{
	switch (enc) {
	case TP_ENC_ROW:
	case TP_ENC_BITS: /* not whole bytes: bits_bytes() */
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
	case TP_NARROW:
		return TP_ENC_BITS;
	case TP_ID:
		return TP_ENC_ROW;
	}
	return TP_ENC_ROW;
}

int tp_col_init(struct tp_col *col, const struct tp_col_spec *spec)
{
	col->spec = spec;
	col->enc = tp_enc_initial(spec);
	col->bits = 0;
	col->mask = 0;
	col->base = spec->type == TP_STR ? 1 : 0;
	col->null_v = spec->type == TP_STR ? 0 : TP_NULL_INT;
	return 0;
}

/* Bytes of @cap cells of @bits bits, with the 8 spare bytes. */
static size_t bits_bytes(uint32_t bits, size_t cap)
{
	return ((uint64_t)cap * bits + 7) / 8 + 8;
}

/* TP_ENC_BITS cells [from, from + n) to code 0, whole bytes at once. */
static void bits_fill_null(struct tp_col *col, size_t from, size_t n)
{
	size_t i = from, end = from + n, j = end & ~(size_t)7;

	if (!col->bits)
		return;
	while (i < end && (i & 7))
		tp_bits_put(col->data, col->bits, col->mask, i++, 0);
	if (j > i) {
		/* i and j are multiples of 8: their cells start on a byte. */
		memset((uint8_t *)col->data + (uint64_t)i * col->bits / 8, 0,
		       (uint64_t)(j - i) * col->bits / 8);
		i = j;
	}
	while (i < end)
		tp_bits_put(col->data, col->bits, col->mask, i++, 0);
}

void tp_cells_fill_null(struct tp_col *col, size_t from, size_t n)
{
	void *data = col->data;
	enum tp_enc enc = col->enc;
	size_t i;

	switch (enc) {
	case TP_ENC_BITS:
		bits_fill_null(col, from, n);
		break;
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

/* The bytes of cells [@from, @from + @n) of @col: *@out_addr, and the length. */
static size_t cells_range(const struct tp_col *col, size_t from, size_t n, void **out_addr)
{
	uint8_t *d = col->data;

	if (col->enc == TP_ENC_BITS) {
		*out_addr = d + (uint64_t)from * col->bits / 8;
		return (size_t)((uint64_t)(from + n) * col->bits / 8 - (uint64_t)from * col->bits / 8);
	}
	*out_addr = d + from * enc_size(col->enc);
	return n * enc_size(col->enc);
}

void tp_cells_prefault(const struct tp_col *col, size_t from, size_t n)
{
	void *addr;
	size_t len = cells_range(col, from, n, &addr);

	bigmem_populate_now(addr, len);
}

void tp_cells_prefault_ahead(const struct tp_col *col, size_t from, size_t n)
{
	void *addr;
	size_t len = cells_range(col, from, n, &addr);

	bigmem_populate(addr, len);
}

static size_t n_blocks(size_t cap)
{
	return (cap + TP_D32_BLOCK_ROWS - 1) >> TP_D32_BLOCK_SHIFT;
}

/* Makes @col's cells @bytes long, keeping what fits. Return: 0 or -ENOMEM. */
static int resize(struct tp_col *col, size_t bytes)
{
	void *d = bigmem_realloc(col->data, col->bytes, bytes);

	if (!d)
		return -ENOMEM;
	col->data = d;
	col->bytes = bytes;
	return 0;
}

int tp_col_grow(struct tp_col *col, size_t old_cap, size_t cap)
{
	size_t sz = enc_size(col->enc), i;

	if (col->enc == TP_ENC_BITS)
		return resize(col, bits_bytes(col->bits, cap));
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
	return resize(col, cap * sz);
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

	if (col->enc == TP_ENC_BITS) {
		/* Packed cells overlap the wider ones: copy to a new array. */
		size_t bytes = (cap ? cap : 1) * enc_size(to);
		void *d = bigmem_realloc(NULL, 0, bytes);

		if (!d)
			return -ENOMEM;
		for (i = 0; i < n_cells; i++)
			tp_cell_put(d, to, i, tp_cell_get(col, i));
		bigmem_free(col->data, col->bytes);
		col->data = d;
		col->bytes = bytes;
		col->enc = to;
		col->bits = 0;
		col->mask = 0;
		return 0;
	}
	if (cap && resize(col, cap * enc_size(to)) < 0)
		return -ENOMEM;
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
	bigmem_free(col->data, col->bytes);
	col->bytes = 0;
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

/* Rows past the cells in use a repack maps at once (the table's next ones). */
#define REPACK_AHEAD_ROWS ((size_t)1 << 16)

/*
 * Repacks the @n_cells cells of a TP_ENC_BITS column (room for @cap) with
 * @base and @bits, which hold every value it has.
 */
/* Sets @col's packing after a repack into @data. */
static void set_packing(struct tp_col *col, void *data, int64_t base, uint32_t bits)
{
	col->data = data;
	col->bits = bits;
	col->mask = ((uint64_t)1 << bits) - 1;
	col->base = base;
}

/* Stores the 32 bits @w little-endian at @p. */
static void store32(uint8_t *p, uint32_t w)
{
	uint8_t b[4] = {(uint8_t)w, (uint8_t)(w >> 8), (uint8_t)(w >> 16), (uint8_t)(w >> 24)};

	memcpy(p, b, sizeof(b));
}

/*
 * Rewrites the @n cells of @d from @ob bits (@omask) to @nb >= @ob bits,
 * adding @shift to each code but 0, in place, from the last cell to the
 * first. The new cells are gathered in a register and stored 32 aligned
 * bits at a time, never read back: a read-modify-write of each cell
 * would load the word the cell before it just stored, a stalled store
 * forward per cell (a sixth of an import on millions of rows). A word
 * [w - 32, w) of the new layout is stored once every new cell in it is
 * gathered, that is once cell i with i * nb <= w - 32 is read; the cells
 * left to read end at old bit i * ob <= i * nb, below the word. The bits
 * after the last cell (up to its word's end, inside the 8 spare bytes)
 * become 0.
 */
static void widen_in_place(uint8_t *d, uint32_t ob, uint64_t omask, uint32_t nb, size_t n,
			   uint64_t shift)
{
	uint64_t lo = (uint64_t)n * nb, w = (lo + 31) & ~(uint64_t)31, acc = 0;
	size_t i;

	/* acc holds the new bits [lo, w), bit lo as its bit 0; under 64 of them. */
	for (i = n; i-- > 0;) {
		uint64_t c = tp_bits_get(d, ob, omask, i);

		acc = (acc << nb) | (c ? c + shift : 0);
		lo -= nb;
		if (lo + 32 <= w) {
			unsigned k = (unsigned)(w - 32 - lo);

			store32(d + (w - 32) / 8, (uint32_t)(acc >> k));
			acc &= ((uint64_t)1 << k) - 1;
			w -= 32;
		}
	}
}

static int repack(struct tp_col *col, size_t cap, size_t n_cells, int64_t base, uint32_t bits)
{
	uint64_t acc = 0, shift = (uint64_t)col->base - (uint64_t)base;
	size_t i, out = 0, ahead = cap - n_cells < REPACK_AHEAD_ROWS ? cap - n_cells : REPACK_AHEAD_ROWS;
	uint32_t n_acc = 0;
	struct tp_col tmp = {.enc = TP_ENC_BITS};
	uint8_t *d;

	if (col->bits && bits >= col->bits) {
		/*
		 * In place, from the last cell to the first: new cell i starts
		 * at or after old cell i and ends before new cell i + 1, so no
		 * old cell is overwritten before it is read. Only the pages the
		 * array grows by are new.
		 */
		if (resize(col, bits_bytes(bits, cap)) < 0)
			return -ENOMEM;
		d = col->data;
		widen_in_place(d, col->bits, col->mask, bits, n_cells, shift);
		set_packing(col, d, base, bits);
		return 0;
	}
	d = bigmem_calloc(bits_bytes(bits, cap));
	if (!d)
		return -ENOMEM;
	/* The pages the cells and the table's next rows need, in one call. */
	tmp.data = d;
	tmp.bits = bits;
	tp_cells_prefault(&tmp, 0, n_cells + ahead);
	/* Old codes in order, new ones written 32 bits at a time. */
	for (i = 0; col->bits && i < n_cells; i++) {
		uint64_t c = tp_bits_get(col->data, col->bits, col->mask, i);

		acc |= (c ? c + shift : 0) << n_acc;
		n_acc += bits;
		if (n_acc >= 32) {
			uint8_t b[4] = {(uint8_t)acc, (uint8_t)(acc >> 8), (uint8_t)(acc >> 16),
					(uint8_t)(acc >> 24)};

			/* Only stores: the new cells are zero and written in order. */
			memcpy(d + out, b, sizeof(b));
			out += 4;
			acc >>= 32;
			n_acc -= 32;
		}
	}
	if (n_acc)
		tp_bits_store(d + out, acc); /* the bytes after it are zero (or spare) */
	bigmem_free(col->data, col->bytes);
	col->bytes = bits_bytes(bits, cap);
	set_packing(col, d, base, bits);
	return 0;
}

/* The fewest bits whose codes 1 .. 2^bits - 1 cover @n values. */
static uint32_t bits_for(uint64_t n)
{
	uint32_t b = 0;

	while (b < 64 && (((uint64_t)1 << b) - 1) < n)
		b++;
	return b;
}

/*
 * The smallest and largest code of @col's @n_cells cells (0 if all are
 * NULL; *@out_min is then UINT64_MAX).
 */
static uint64_t bits_code_range(const struct tp_col *col, size_t n_cells, uint64_t *out_min)
{
	uint64_t mn = UINT64_MAX, mx = 0;
	size_t i;

	for (i = 0; col->bits && i < n_cells; i++) {
		uint64_t c = tp_bits_get(col->data, col->bits, col->mask, i);

		if (c && c < mn)
			mn = c;
		if (c > mx)
			mx = c;
	}
	*out_min = mn;
	return mx;
}

/* tp_col_set_wide() of a TP_ENC_BITS column: @v is not NULL and does not fit. */
static int set_bits(struct tp_col *col, size_t cap, size_t n_cells, size_t row, int64_t v)
{
	uint64_t c_min, c_max = 0, mask;
	int64_t lo, hi;
	uint32_t bits;
	int rc;

	if (col->spec->type == TP_STR) {
		if (v == 0) {
			tp_bits_put(col->data, col->bits, col->mask, row, 0);
			return 0;
		}
		if (v < 0 || v > UINT32_MAX)
			return -ERANGE;
		lo = 1;
		hi = v;
	} else {
		/* The values it holds (not the codes it could hold) and @v;
		 * above them, the base stays and needs no scan. */
		if (col->bits && v > col->base) {
			c_min = 1;
			c_max = col->mask;
		} else {
			c_max = bits_code_range(col, n_cells, &c_min);
		}
		if (!c_max) {
			/* The first value: small counts and ids count from 0. */
			lo = v >= 0 && v < 64 ? 0 : v;
			hi = v;
		} else {
			int64_t mn = col->base + (int64_t)(c_min - 1);
			int64_t mx = col->base + (int64_t)(c_max - 1);

			lo = v < mn ? v : mn;
			hi = v > mx ? v : mx;
		}
		/* Integers take at most 31 bits: a column of 32-bit values
		 * keeps a rare outlier aside (X32) instead. */
		if ((uint64_t)hi - (uint64_t)lo >= ((uint64_t)1 << (TP_BITS_MAX - 1)) - 2) {
			int64_t mn, mx;

			c_max = bits_code_range(col, n_cells, &c_min);
			mn = col->base + (int64_t)(c_min - 1);
			mx = col->base + (int64_t)(c_max - 1);

			if (!c_max || (mn > INT32_MIN && mx <= INT32_MAX))
				return set_x32(col, cap, n_cells, row, v);
			rc = widen(col, cap, n_cells, TP_ENC_I64);
			if (rc < 0)
				return rc;
			tp_cell_put(col->data, col->enc, row, v);
			return 0;
		}
	}
	bits = bits_for((uint64_t)hi - (uint64_t)lo + 1);
	mask = ((uint64_t)1 << bits) - 1;
	/* Growing downwards, the spare codes go below: the next lower
	 * values fit too (repacks stay O(log range) per column). */
	if (c_max && v == lo && (uint64_t)hi - (uint64_t)INT64_MIN > mask)
		lo = hi - (int64_t)(mask - 1);
	rc = repack(col, cap, n_cells, lo, bits);
	if (rc < 0)
		return rc;
	tp_bits_put(col->data, col->bits, col->mask, row, (uint64_t)v - (uint64_t)lo + 1);
	return 0;
}

int tp_col_set_wide(struct tp_col *col, size_t cap, size_t n_cells, size_t row, int64_t v)
{
	int rc;

	switch (col->enc) {
	case TP_ENC_BITS:
		if (v == TP_NULL_INT) {
			tp_bits_put(col->data, col->bits, col->mask, row, 0);
			return 0;
		}
		return set_bits(col, cap, n_cells, row, v);
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
