/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bigmem.h - growable arrays that may reach many megabytes (the cells of
 * a trace processor column). Past BIGMEM_MIN_BYTES an array lives in its
 * own anonymous mapping, 2 MiB aligned and marked for transparent huge
 * pages: its first touch costs one fault per 2 MiB instead of one per 4
 * KiB (on a paravirtualized VM a 4 KiB first touch costs about 20 us,
 * which was a sixth of a trace import), and it grows by moving its page
 * tables (mremap), never by copying. Smaller arrays use malloc. The
 * caller keeps each array's size in bytes: it says which kind it is.
 */
#ifndef PFC_BASE_BIGMEM_H
#define PFC_BASE_BIGMEM_H

#include <stddef.h>

#define BIGMEM_MIN_BYTES ((size_t)2 << 20)

/*
 * bigmem_realloc() - Resizes the array @p of @old_bytes (NULL and 0: a
 * new one) to @new_bytes, keeping its first min(@old_bytes, @new_bytes)
 * bytes; bytes past them are unspecified.
 * Return: the array, or NULL (then @p is unchanged and still valid).
 */
void *bigmem_realloc(void *p, size_t old_bytes, size_t new_bytes);

/* bigmem_calloc() - A new array of @bytes zero bytes, or NULL. */
void *bigmem_calloc(size_t bytes);

/* bigmem_free() - Frees the array @p of @bytes (NULL: nothing). */
void bigmem_free(void *p, size_t bytes);

#endif
