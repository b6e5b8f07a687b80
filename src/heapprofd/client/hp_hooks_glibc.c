// SPDX-License-Identifier: Apache-2.0
/*
 * hp_hooks_glibc.c - the malloc family, wrapped for heapprofd
 * (libheapprofd_glibc_preload.so, or linked into a program): each call
 * costs one comparison of the thread's byte budget unless it is sampled,
 * and then goes to glibc's own allocator (__libc_malloc & co). A sampled
 * block is given 32 bytes in front, whose last word is a per-process
 * cookie xor the block's address, so free() knows a sampled block from
 * the word glibc keeps before every block (its size, never that cookie)
 * without any table or lock:
 *
 *   base           p-24      p-16      p-8             p
 *   | pad ...      | offset  | size    | cookie ^ p   | user bytes ...
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "heapprofd/client/hp_client.h"

#define EXPORT __attribute__((visibility("default")))
#define PREFIX 32u

void *__libc_malloc(size_t n);
void __libc_free(void *p);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);

/* glibc's usable size of a block it made (its chunk header: size and
 * flags; an mmapped chunk has no next chunk to borrow from). */
static size_t libc_usable(const void *p)
{
	uint64_t sz = ((const uint64_t *)p)[-1];

	return (size_t)((sz & ~7ull) - ((sz & 2) ? 16 : 8));
}

static inline int is_sampled(const void *p)
{
	return p && __builtin_expect(((const uint64_t *)p)[-1] == (hp_cookie ^ (uintptr_t)p), 0);
}

/* The fast path: the thread's budget covers @n and nothing changed. */
static inline int unsampled(size_t n)
{
	struct hp_thread *t = &hp_tls;

	if (__builtin_expect(t->gen == atomic_load_explicit(&hp_gen, memory_order_relaxed) &&
				     n < t->left,
			     1)) {
		t->left -= n;
		return 1;
	}
	return 0;
}

/* A block of @n bytes aligned to @align (0: malloc's), zeroed if @zero,
 * with the sampled prefix. */
static void *prefixed(size_t n, size_t align, int zero)
{
	size_t off = align > PREFIX ? align : PREFIX;
	uint8_t *base, *p;

	if (n > SIZE_MAX - off)
		return NULL;
	if (align > 16)
		base = __libc_memalign(off, n + off);
	else if (zero)
		base = __libc_calloc(1, n + off);
	else
		base = __libc_malloc(n + off);
	if (!base)
		return NULL;
	if (zero && align > 16)
		memset(base, 0, n + off);
	p = base + off;
	((uint64_t *)p)[-3] = off;
	((uint64_t *)p)[-2] = n;
	((uint64_t *)p)[-1] = hp_cookie ^ (uintptr_t)p;
	return p;
}

static void *plain(size_t n, size_t align, int zero)
{
	if (align > 16)
		return __libc_memalign(align, n);
	return zero ? __libc_calloc(1, n) : __libc_malloc(n);
}

/* Sampling decision, then the allocation (sampled ones are recorded). */
__attribute__((noinline)) void *hp_alloc_slow(size_t n, size_t align, int zero)
{
	struct hp_thread *t = &hp_tls;
	uint64_t ss;
	void *p;

	if (t->in_hook)
		return plain(n, align, zero);
	t->in_hook = 1;
	if (t->gen != atomic_load_explicit(&hp_gen, memory_order_relaxed))
		hp_thread_refresh(t);
	ss = hp_sample_size(t, n);
	if (!ss) {
		t->in_hook = 0;
		return plain(n, align, zero);
	}
	p = prefixed(n, align, zero);
	if (p)
		hp_client_after_sample(t, hp_record_alloc(HP_HEAP_MALLOC, (uintptr_t)p, ss, n));
	t->in_hook = 0;
	return p;
}

__attribute__((noinline)) static void free_sampled(void *p)
{
	struct hp_thread *t = &hp_tls;
	uint8_t *base = (uint8_t *)p - ((uint64_t *)p)[-3];

	/* Reported before glibc may hand the address out again: a later
	 * allocation at it is always behind this free in the ring. */
	((uint64_t *)p)[-1] = 0;
	t->in_hook++;
	hp_record_free(HP_HEAP_MALLOC, (uintptr_t)p);
	t->in_hook--;
	__libc_free(base);
}

EXPORT void *malloc(size_t n)
{
	if (unsampled(n))
		return __libc_malloc(n);
	return hp_alloc_slow(n, 0, 0);
}

EXPORT void free(void *p)
{
	if (is_sampled(p)) {
		free_sampled(p);
		return;
	}
	__libc_free(p);
}

EXPORT void *calloc(size_t nmemb, size_t size)
{
	size_t n;

	if (__builtin_mul_overflow(nmemb, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	if (unsampled(n))
		return __libc_calloc(nmemb, size);
	return hp_alloc_slow(n, 0, 1);
}

EXPORT void *realloc(void *p, size_t n)
{
	size_t old;
	void *q;

	if (!p)
		return malloc(n);
	if (n == 0) {
		free(p);
		return NULL;
	}
	if (!is_sampled(p)) {
		if (unsampled(n))
			return __libc_realloc(p, n);
		old = libc_usable(p);
	} else {
		old = (size_t)((uint64_t *)p)[-2];
	}
	/* A sampled block in or out: a free and an allocation, as upstream
	 * counts a realloc. */
	q = hp_alloc_slow(n, 0, 0);
	if (!q)
		return NULL;
	memcpy(q, p, old < n ? old : n);
	free(p);
	return q;
}

EXPORT void *reallocarray(void *p, size_t nmemb, size_t size)
{
	size_t n;

	if (__builtin_mul_overflow(nmemb, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, n);
}

static int pow2(size_t a)
{
	return a && (a & (a - 1)) == 0;
}

static void *aligned(size_t align, size_t n)
{
	if (align <= 16) {
		if (unsampled(n))
			return __libc_malloc(n);
		return hp_alloc_slow(n, 0, 0);
	}
	if (unsampled(n))
		return __libc_memalign(align, n);
	return hp_alloc_slow(n, align, 0);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (!pow2(align) || align % sizeof(void *))
		return EINVAL;
	p = aligned(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (!pow2(align)) {
		errno = EINVAL;
		return NULL;
	}
	return aligned(align, n);
}

EXPORT void *memalign(size_t align, size_t n)
{
	if (!pow2(align)) {
		/* glibc rounds a bad alignment up to a power of two. */
		size_t a = 16;

		while (a < align && a < ((size_t)1 << 62))
			a <<= 1;
		align = a;
	}
	return aligned(align, n);
}

EXPORT void *valloc(size_t n)
{
	return aligned((size_t)getpagesize(), n);
}

EXPORT void *pvalloc(size_t n)
{
	size_t pg = (size_t)getpagesize();

	if (n > SIZE_MAX - pg) {
		errno = ENOMEM;
		return NULL;
	}
	return aligned(pg, (n + pg - 1) & ~(pg - 1));
}

EXPORT size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (is_sampled(p)) {
		uint8_t *base = (uint8_t *)p - ((uint64_t *)p)[-3];

		return libc_usable(base) - (size_t)((uint64_t *)p)[-3];
	}
	return libc_usable(p);
}

__attribute__((constructor)) static void hp_preload_init(void)
{
	hp_client_init();
}
