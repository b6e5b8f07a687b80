// SPDX-License-Identifier: Apache-2.0
/*
 * order_map.c - a map from 64-bit hashes to indexes whose iteration order
 * is upstream's: the open addressing of its FlatHashMap (quadratic probing
 * from the hash, 1024 slots at first, growing by 8 while the table is under
 * 1 MiB, then by 2, at 75% load, reinserting in slot order), and upstream's
 * 64-bit Murmur hash of partition values. Built-ins whose output upstream
 * walks in hash-map order (partitions of interval intersection, counter
 * tracks) use it so their rows come out in the same order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/ops/ops_int.h"

#define MAP_MIN_CAP 1024
#define MAP_SMALL_BYTES (1024 * 1024)
#define MAP_LOAD_PCT 75

static size_t probe(uint64_t hash, size_t step, size_t cap)
{
	return (size_t)(hash + 2 * step * step + step) & (cap - 1);
}

void ops_order_map_init(struct ops_order_map *m, size_t slot_bytes)
{
	memset(m, 0, sizeof(*m));
	m->slot_bytes = slot_bytes;
}

void ops_order_map_fini(struct ops_order_map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

static int place(struct ops_order_map *m, uint64_t key, uint32_t val)
{
	size_t step;

	for (step = 0; step < m->cap; step++) {
		size_t i = probe(key, step, m->cap);

		if (!m->used[i]) {
			m->used[i] = 1;
			m->keys[i] = key;
			m->vals[i] = val;
			m->size++;
			return 0;
		}
	}
	return -ENOSPC;
}

static int grow(struct ops_order_map *m)
{
	struct ops_order_map old = *m;
	size_t factor = old.cap * old.slot_bytes < MAP_SMALL_BYTES ? 8 : 2;
	size_t cap = old.cap * factor > MAP_MIN_CAP ? old.cap * factor : MAP_MIN_CAP;
	size_t i;

	m->keys = malloc(cap * sizeof(*m->keys));
	m->vals = malloc(cap * sizeof(*m->vals));
	m->used = calloc(cap, 1);
	if (!m->keys || !m->vals || !m->used) {
		free(m->keys);
		free(m->vals);
		free(m->used);
		*m = old;
		return -ENOMEM;
	}
	m->cap = cap;
	m->size = 0;
	m->load_limit = cap * MAP_LOAD_PCT / 100;
	for (i = 0; i < old.cap; i++) {
		if (old.used[i])
			place(m, old.keys[i], old.vals[i]);
	}
	free(old.keys);
	free(old.vals);
	free(old.used);
	return 0;
}

const uint32_t *ops_order_map_find(const struct ops_order_map *m, uint64_t key)
{
	size_t step;

	for (step = 0; step < m->cap; step++) {
		size_t i = probe(key, step, m->cap);

		if (!m->used[i])
			return NULL;
		if (m->keys[i] == key)
			return &m->vals[i];
	}
	return NULL;
}

int ops_order_map_insert(struct ops_order_map *m, uint64_t key, uint32_t val)
{
	if (ops_order_map_find(m, key))
		return 0;
	/* Upstream grows before inserting once the load limit is reached. */
	if (m->size >= m->load_limit && grow(m) < 0)
		return -ENOMEM;
	return place(m, key, val) < 0 ? -ENOMEM : 1;
}

/* -------------------------------------------------------------- hashing ---- */

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

static uint64_t hash_bytes(const unsigned char *p, size_t len)
{
	const uint64_t m = 0xc6a4a7935bd1e995ull;
	uint64_t h = 0xe17a1465ull ^ (len * m);
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t k;

		memcpy(&k, p + i, sizeof(k));
		k *= m;
		k ^= k >> 47;
		k *= m;
		h ^= k;
		h *= m;
	}
	switch (len & 7) {
	case 7:
		h ^= (uint64_t)p[i + 6] << 48;
		/* fall through */
	case 6:
		h ^= (uint64_t)p[i + 5] << 40;
		/* fall through */
	case 5:
		h ^= (uint64_t)p[i + 4] << 32;
		/* fall through */
	case 4:
		h ^= (uint64_t)p[i + 3] << 24;
		/* fall through */
	case 3:
		h ^= (uint64_t)p[i + 2] << 16;
		/* fall through */
	case 2:
		h ^= (uint64_t)p[i + 1] << 8;
		/* fall through */
	case 1:
		h ^= (uint64_t)p[i];
		h *= m;
	}
	h ^= h >> 47;
	h *= m;
	h ^= h >> 47;
	return h;
}

static uint64_t combine(uint64_t h, uint64_t piece)
{
	return h ^ (piece + 0x9e3779b9ull + (h << 6) + (h >> 2));
}

uint64_t ops_key_hash(const struct ops_cell *key, uint32_t n)
{
	/* Upstream's value types: NULL 0, integer 1, real 2, text 3. */
	static const uint64_t type_ids[] = {[OPS_NULL] = 0, [OPS_INT] = 1, [OPS_REAL] = 2,
					    [OPS_TEXT] = 3};
	uint64_t h = 0xe17a1465ull;
	uint32_t i;

	for (i = 0; i < n; i++) {
		const struct ops_cell *c = &key[i];
		uint64_t bits;
		double d;

		h = combine(h, mix(type_ids[c->type]));
		switch (c->type) {
		case OPS_INT:
			h = combine(h, mix((uint64_t)c->u.i));
			break;
		case OPS_REAL:
			d = c->u.d;
			if (d == 0.0)
				d = 0.0; /* -0.0 hashes as 0.0 */
			else if (d != d)
				d = __builtin_nan("");
			memcpy(&bits, &d, sizeof(bits));
			h = combine(h, mix(bits));
			break;
		case OPS_TEXT:
			h = combine(h, hash_bytes((const unsigned char *)c->u.s, strlen(c->u.s)));
			break;
		default:
			h = combine(h, mix(0));
			break;
		}
	}
	return h;
}
