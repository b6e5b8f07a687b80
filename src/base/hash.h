/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hash.h - the project's hash functions: a 64-bit integer mixer for hash
 * tables keyed by ids; FNV-1a 64 over bytes, whose exact values are part of
 * the output (machine ids derived from boot ids), so they must never change;
 * and hash_bytes64(), eight bytes a step, for in-memory tables on hot paths
 * (its values may change between versions: never store them).
 */
#ifndef PFC_BASE_HASH_H
#define PFC_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/**
 * hash_bytes64() - A 64-bit hash of a byte range, a word at a time.
 * @data: bytes to hash (borrowed).  @len: their count.
 * @seed: distinguishes uses (any value).
 *
 * Return: the hash; every input bit affects every output bit. Not stable
 * across versions: for in-memory tables only.
 * Context: any thread; pure.
 */
static inline uint64_t hash_bytes64(const void *data, size_t len, uint64_t seed)
{
	const uint8_t *p = data;
	uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ull), w;

	while (len >= 8) {
		memcpy(&w, p, 8);
		h = hash_mix64(h ^ w);
		p += 8;
		len -= 8;
	}
	if (len) {
		w = 0;
		memcpy(&w, p, len);
		h = hash_mix64(h ^ w ^ 0xff51afd7ed558ccdull);
	}
	return hash_mix64(h);
}

#endif
