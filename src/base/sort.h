/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sort.h - qsort for arrays that may be empty: C leaves qsort(NULL, 0, ...)
 * undefined (glibc declares the base nonnull), and an empty array's base is
 * often NULL here, so every sort goes through sort_n.
 */
#ifndef PFC_BASE_SORT_H
#define PFC_BASE_SORT_H

#include <stdlib.h>

static inline void sort_n(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

#endif
