// SPDX-License-Identifier: Apache-2.0
/*
 * hp_book.c - per-heap bookkeeping (see hp_book.h). A free of an address
 * never sampled (allocated before profiling began) is counted and
 * ignored; an allocation at an address still live means its free was
 * lost, so that block is freed first.
 */
#include "heapprofd/hp_book.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define BYTES_MASK ((1ull << 40) - 1)

void hp_book_init(struct hp_book *b)
{
	memset(b, 0, sizeof(*b));
	hmap_init(&b->live);
	hmap_init(&b->index);
}

void hp_book_fini(struct hp_book *b)
{
	hmap_fini(&b->live);
	hmap_fini(&b->index);
	free(b->sites);
	memset(b, 0, sizeof(*b));
}

/* Before @s changes: keep its value at the last peak. */
static void touch(struct hp_book *b, struct hp_site *s)
{
	if (s->peak_gen != b->peak_gen) {
		s->peak_bytes = s->allocated - s->freed;
		s->peak_count = s->alloc_count - s->free_count;
		s->peak_gen = b->peak_gen;
	}
}

static struct hp_site *site_of(struct hp_book *b, uint64_t cstack, size_t *out_idx)
{
	uint64_t idx;

	if (!hmap_get(&b->index, cstack, &idx)) {
		if (b->n_sites == b->cap_sites) {
			size_t cap = b->cap_sites ? b->cap_sites * 2 : 64;
			struct hp_site *n = realloc(b->sites, cap * sizeof(*n));

			if (!n)
				return NULL;
			b->sites = n;
			b->cap_sites = cap;
		}
		idx = b->n_sites;
		if (hmap_put(&b->index, cstack, idx) < 0)
			return NULL;
		memset(&b->sites[idx], 0, sizeof(b->sites[idx]));
		b->sites[idx].cstack = cstack;
		b->sites[idx].peak_gen = b->peak_gen;
		b->n_sites++;
	}
	*out_idx = (size_t)idx;
	return &b->sites[idx];
}

static bool drop(struct hp_book *b, uint64_t addr);

int hp_book_alloc(struct hp_book *b, uint64_t addr, uint64_t bytes, uint64_t cstack)
{
	struct hp_site *s;
	size_t idx;

	drop(b, addr);
	s = site_of(b, cstack, &idx);
	if (!s)
		return -ENOMEM;
	if (bytes > BYTES_MASK)
		bytes = BYTES_MASK;
	if (hmap_put(&b->live, addr, (uint64_t)idx << 40 | bytes) < 0)
		return -ENOMEM;
	touch(b, s);
	s->allocated += bytes;
	s->alloc_count++;
	b->samples++;
	b->cur_bytes += bytes;
	if (b->cur_bytes > b->max_bytes) {
		b->max_bytes = b->cur_bytes;
		b->peak_gen++;
	}
	return 0;
}

/* Frees @addr if it is live. Return: whether it was. */
static bool drop(struct hp_book *b, uint64_t addr)
{
	struct hp_site *s;
	uint64_t v, bytes;

	if (hmap_del(&b->live, addr, &v) < 0)
		return false;
	s = &b->sites[v >> 40];
	bytes = v & BYTES_MASK;
	touch(b, s);
	s->freed += bytes;
	s->free_count++;
	b->cur_bytes -= bytes;
	return true;
}

void hp_book_free(struct hp_book *b, uint64_t addr)
{
	if (!drop(b, addr))
		b->frees_unknown++;
}

void hp_book_peak(const struct hp_book *b, const struct hp_site *s, uint64_t *out_bytes,
		  uint64_t *out_count)
{
	if (s->peak_gen == b->peak_gen) {
		*out_bytes = s->peak_bytes;
		*out_count = s->peak_count;
	} else {
		*out_bytes = s->allocated - s->freed;
		*out_count = s->alloc_count - s->free_count;
	}
}
