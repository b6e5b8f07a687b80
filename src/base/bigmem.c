// SPDX-License-Identifier: Apache-2.0
/*
 * bigmem.c - malloc for small arrays, huge-page mappings for big ones
 * (bigmem.h). A big array of n bytes maps n rounded up to 2 MiB at a 2
 * MiB aligned address. Growing first tries to extend the mapping where it
 * is; otherwise it reserves a new aligned range and moves the mapping
 * there (mremap with MREMAP_FIXED), so that huge pages move whole.
 */
#include "base/bigmem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>
#include <unistd.h>

#define HUGE_BYTES ((size_t)2 << 20)

static size_t map_len(size_t bytes)
{
	return (bytes + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1);
}

static void advise_huge(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
	(void)madvise(p, len, MADV_HUGEPAGE); /* a hint: without THP, 4 KiB pages */
#else
	(void)p;
	(void)len;
#endif
}

/*
 * A range of @len bytes (a multiple of HUGE_BYTES) at an aligned address,
 * mapped PROT_NONE when @placeholder (mremap moves a mapping over it),
 * else readable, writable and zero. Return: it, or NULL.
 */
static void *map_aligned(size_t len, int placeholder)
{
	uint8_t *raw, *p;
	size_t lead;

	if (len > SIZE_MAX - HUGE_BYTES)
		return NULL;
	raw = mmap(NULL, len + HUGE_BYTES, placeholder ? PROT_NONE : PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | (placeholder ? MAP_NORESERVE : 0), -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	p = (uint8_t *)(((uintptr_t)raw + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1));
	lead = (size_t)(p - raw);
	if (lead)
		munmap(raw, lead);
	munmap(p + len, HUGE_BYTES - lead);
	return p;
}

static void *big_new(size_t bytes)
{
	size_t len = map_len(bytes);
	void *p = map_aligned(len, 0);

	if (p)
		advise_huge(p, len);
	return p;
}

/* Grows the big array @p from @old_bytes to @new_bytes. */
static void *big_grow(void *p, size_t old_bytes, size_t new_bytes)
{
	size_t old_len = map_len(old_bytes), len = map_len(new_bytes);
	void *q;

	if (len <= old_len)
		return p;
	q = mremap(p, old_len, len, 0);
	if (q == MAP_FAILED) {
		void *dst = map_aligned(len, 1);

		if (!dst)
			return NULL;
		q = mremap(p, old_len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
		if (q == MAP_FAILED) {
			munmap(dst, len);
			return NULL;
		}
	}
	advise_huge(q, len);
	return q;
}

void *bigmem_realloc(void *p, size_t old_bytes, size_t new_bytes)
{
	void *q;

	if (!p)
		old_bytes = 0;
	if (new_bytes < BIGMEM_MIN_BYTES && old_bytes < BIGMEM_MIN_BYTES)
		return realloc(p, new_bytes ? new_bytes : 1);
	if (old_bytes >= BIGMEM_MIN_BYTES && new_bytes >= BIGMEM_MIN_BYTES) {
		if (new_bytes >= old_bytes)
			return big_grow(p, old_bytes, new_bytes);
		if (map_len(new_bytes) < map_len(old_bytes))
			munmap((uint8_t *)p + map_len(new_bytes), map_len(old_bytes) - map_len(new_bytes));
		return p;
	}
	if (old_bytes >= BIGMEM_MIN_BYTES) {
		/* Down to a small array. */
		q = malloc(new_bytes ? new_bytes : 1);
		if (!q)
			return NULL;
		memcpy(q, p, new_bytes);
		munmap(p, map_len(old_bytes));
		return q;
	}
	q = big_new(new_bytes);
	if (!q)
		return NULL;
	if (p)
		memcpy(q, p, old_bytes);
	free(p);
	return q;
}

void *bigmem_calloc(size_t bytes)
{
	if (bytes < BIGMEM_MIN_BYTES)
		return calloc(1, bytes ? bytes : 1);
	return big_new(bytes);
}

void bigmem_free(void *p, size_t bytes)
{
	if (!p)
		return;
	if (bytes < BIGMEM_MIN_BYTES)
		free(p);
	else
		munmap(p, map_len(bytes));
}

static _Thread_local bigmem_populate_fn g_populate;
static _Thread_local void *g_populate_ctx;

void bigmem_set_populator(bigmem_populate_fn fn, void *ctx)
{
	g_populate = fn;
	g_populate_ctx = ctx;
}

void bigmem_populate_now(void *addr, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	static size_t psz;
	uintptr_t lo = (uintptr_t)addr, hi = lo + len;

	if (!psz) {
		long ps = sysconf(_SC_PAGESIZE);

		psz = ps > 0 ? (size_t)ps : 4096;
	}
	/* Whole pages inside the range only: the bytes around are others'. */
	lo = (lo + psz - 1) & ~(uintptr_t)(psz - 1);
	hi &= ~(uintptr_t)(psz - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
	(void)addr;
	(void)len;
#endif
}

void bigmem_populate(void *addr, size_t len)
{
	if (g_populate)
		g_populate(g_populate_ctx, addr, len);
	else
		bigmem_populate_now(addr, len);
}
