// SPDX-License-Identifier: Apache-2.0
/*
 * array.c - the growable arrays of the import: tp_array_grow() doubles
 * a caller's array and capacity until it holds what it needs. Used by
 * every layer of the import for its tables of state.
 */
#include <errno.h>
#include <stdlib.h>

#include "trace_processor/import/common/common.h"

int tp_array_grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t c = *cap ? *cap : first;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		c *= 2;
	}
	p = realloc(*arr, c * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}
