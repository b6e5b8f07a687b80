/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hash.h - the project's two hash functions: a 64-bit integer mixer for hash
 * tables keyed by ids, and FNV-1a 64 over bytes, whose exact values are part
 * of the output (machine ids derived from boot ids), so they must never change.
 */
#ifndef PFC_BASE_HASH_H
#define PFC_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A64_OFFSET_BASIS 0xcbf29ce484222325ull
#define FNV1A64_PRIME 0x100000001b3ull

/**
 * hash_mix64() - Scramble a 64-bit key so every input bit affects every
 * output bit (the splitmix64 / murmur3 finalizer).
 * @x: the key; sequential ids are fine.
 *
 * Return: the mixed value; a bijection, so distinct keys never collide.
 * Context: any thread; pure.
 */
static inline uint64_t hash_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/**
 * fnv1a64_update() - Continue an FNV-1a 64 hash over more bytes.
 * @h: the hash so far (start with FNV1A64_OFFSET_BASIS).
 * @data: bytes to hash (borrowed).  @len: their count.
 *
 * Return: the updated hash.
 * Context: any thread; pure.
 */
static inline uint64_t fnv1a64_update(uint64_t h, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= FNV1A64_PRIME;
	}
	return h;
}

/**
 * fnv1a64() - FNV-1a 64 hash of a byte range.
 * @data: bytes to hash (borrowed).  @len: their count.
 *
 * Return: the hash; FNV1A64_OFFSET_BASIS for an empty range.
 * Context: any thread; pure.
 */
static inline uint64_t fnv1a64(const void *data, size_t len)
{
	return fnv1a64_update(FNV1A64_OFFSET_BASIS, data, len);
}

#endif
