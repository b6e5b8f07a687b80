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

/*
 * Mapping pages ahead of their first write (MADV_POPULATE_WRITE) moves
 * the cost of zeroing them out of the writer's loop; a thread can hand
 * that work to another thread. Mapping pages is only a hint that never
 * changes memory contents, so a request done late, or after the array
 * moved or was freed, is harmless.
 */
typedef void (*bigmem_populate_fn)(void *ctx, void *addr, size_t len);

/*
 * bigmem_set_populator() - Sends the calling thread's bigmem_populate()
 * calls to @fn (NULL: they are done at once again).
 */
void bigmem_set_populator(bigmem_populate_fn fn, void *ctx);

/* bigmem_populate() - Maps the whole pages in [@addr, @addr + @len), through
 * the calling thread's populator if it has one. */
void bigmem_populate(void *addr, size_t len);

/* bigmem_populate_now() - The same, on the calling thread, at once. */
void bigmem_populate_now(void *addr, size_t len);

#endif
