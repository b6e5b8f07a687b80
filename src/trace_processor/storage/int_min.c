// SPDX-License-Identifier: Apache-2.0
/*
 * int_min.c - the int cells that hold INT64_MIN itself rather than NULL
 * (INT64_MIN is the NULL marker of every int cell encoding). A table keeps
 * them in one sorted list of (column, row); the import adds to it (an
 * unsigned arg of exactly 2^63 reads as int64 INT64_MIN, as in Perfetto)
 * and the SQL layer asks it when a cell reads NULL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/storage/storage.h"

static int cmp(uint32_t c1, uint64_t r1, uint32_t c2, uint64_t r2)
{
	if (c1 != c2)
		return c1 < c2 ? -1 : 1;
	if (r1 != r2)
		return r1 < r2 ? -1 : 1;
	return 0;
}

/* The first index whose (col, row) is >= (@c, @row). */
static size_t lower(const struct tp_table *t, uint32_t c, uint64_t row)
{
	size_t lo = 0, hi = t->n_mins;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp(t->mins[mid].col, t->mins[mid].row, c, row) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int tp_set_int_min(struct tp_table *t, uint32_t c, size_t row)
{
	size_t at;
	int rc = tp_set_int(t, c, row, TP_NULL_INT);

	if (rc < 0)
		return rc;
	at = lower(t, c, row);
	if (at < t->n_mins && t->mins[at].col == c && t->mins[at].row == row)
		return 0;
	if (t->n_mins == t->cap_mins) {
		size_t cap = t->cap_mins ? 2 * t->cap_mins : 16;
		struct tp_int_min *p = realloc(t->mins, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->mins = p;
		t->cap_mins = cap;
	}
	memmove(&t->mins[at + 1], &t->mins[at], (t->n_mins - at) * sizeof(t->mins[0]));
	t->mins[at].col = c;
	t->mins[at].row = row;
	t->n_mins++;
	return 0;
}

bool tp_int_is_min(const struct tp_table *t, uint32_t c, size_t row)
{
	size_t at;

	if (!t->n_mins)
		return false;
	at = lower(t, c, row);
	return at < t->n_mins && t->mins[at].col == c && t->mins[at].row == row;
}

bool tp_col_has_min(const struct tp_table *t, uint32_t c)
{
	size_t at;

	if (!t->n_mins)
		return false;
	at = lower(t, c, 0);
	return at < t->n_mins && t->mins[at].col == c;
}
