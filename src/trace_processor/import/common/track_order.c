// SPDX-License-Identifier: Apache-2.0
/*
 * track_order.c - the order in which Perfetto's slice tracker visits its
 * per-track slice stacks at the end of a trace. Perfetto keeps them in an
 * open-addressing hash map keyed by track id and walks that map slot by
 * slot when it stores the args of slices still open, so those arg sets are
 * numbered in slot order. tp_track_map_order() recomputes the slots from
 * the facts of that map (v58): the hash of an id, power-of-two capacity
 * starting at 1024, growth before an insert once size reaches 3/4 of it
 * (x8 while the table is under 1 MiB at 44 bytes a slot, x2 after), every
 * entry re-inserted in old slot order on growth, quadratic probing
 * (h + 2s^2 + s), never an erase. No Perfetto code is used.
 */
#include <errno.h>
#include <stdlib.h>

#include "trace_processor/import/common/common.h"

#define FIRST_CAP 1024u
#define SLOT_BYTES 44u /* a 4-byte track id and a 40-byte stack entry */
#define FREE_SLOT UINT32_MAX

/* The hash of a track id: a seeded combine of the id's 64-bit mix. */
static uint64_t id_hash(uint32_t id)
{
	const uint64_t seed = 0xe17a1465u;
	uint64_t h = id;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return seed ^ (h + 0x9e3779b9u + (seed << 6) + (seed >> 2));
}

/* Puts entry @e (key @key) in the first free slot of its probe sequence. */
static void place(uint32_t *slots, size_t cap, uint32_t key, uint32_t e)
{
	uint64_t h = id_hash(key);
	size_t s;

	for (s = 0; s < cap; s++) {
		size_t i = (size_t)((h + 2 * (uint64_t)s * s + s) & (cap - 1));

		if (slots[i] == FREE_SLOT) {
			slots[i] = e;
			return;
		}
	}
}

static size_t next_cap(size_t cap)
{
	if (!cap)
		return FIRST_CAP;
	return cap * (cap * SLOT_BYTES < 1024u * 1024u ? 8 : 2);
}

int tp_track_map_order(const uint32_t *keys, size_t n, uint32_t *order)
{
	uint32_t *slots = NULL, *grown;
	size_t cap = 0, size = 0, i, j, k;

	for (k = 0; k < n; k++) {
		if (size >= cap * 75 / 100) {
			size_t ncap = next_cap(cap);

			grown = malloc(ncap * sizeof(*grown));
			if (!grown) {
				free(slots);
				return -ENOMEM;
			}
			for (i = 0; i < ncap; i++)
				grown[i] = FREE_SLOT;
			for (i = 0; i < cap; i++)
				if (slots[i] != FREE_SLOT)
					place(grown, ncap, keys[slots[i]], slots[i]);
			free(slots);
			slots = grown;
			cap = ncap;
		}
		place(slots, cap, keys[k], (uint32_t)k);
		size++;
	}
	for (i = 0, j = 0; i < cap; i++)
		if (slots[i] != FREE_SLOT)
			order[j++] = slots[i];
	free(slots);
	return 0;
}
