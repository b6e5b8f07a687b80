/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hp_book.h - heapprofd's bookkeeping of one heap of one process: which
 * sampled blocks are live (address -> callstack, bytes) and, per
 * callstack, the bytes and blocks allocated and freed since profiling
 * began, plus each callstack's share at the heap's peak (dump_at_max),
 * kept lazily: a callstack's value at the last peak is saved only when
 * it next changes. Main thread only.
 */
#ifndef PFC_HEAPPROFD_HP_BOOK_H
#define PFC_HEAPPROFD_HP_BOOK_H

#include <stddef.h>
#include <stdint.h>

#include "base/hmap.h"

struct hp_site {
	uint64_t cstack;
	uint64_t allocated, freed, alloc_count, free_count;
	uint64_t peak_bytes, peak_count, peak_gen; /* value at the last peak */
};

struct hp_book {
	struct hmap live;  /* addr -> site index << 40 | bytes */
	struct hmap index; /* cstack -> site index */
	struct hp_site *sites;
	size_t n_sites, cap_sites;
	uint64_t cur_bytes, max_bytes, peak_gen;
	uint64_t samples, frees_unknown;
};

void hp_book_init(struct hp_book *b);
void hp_book_fini(struct hp_book *b);
/* Return: 0 or -ENOMEM. */
int hp_book_alloc(struct hp_book *b, uint64_t addr, uint64_t bytes, uint64_t cstack);
void hp_book_free(struct hp_book *b, uint64_t addr);
/* A site's bytes and blocks at the heap's peak. */
void hp_book_peak(const struct hp_book *b, const struct hp_site *s, uint64_t *out_bytes,
		  uint64_t *out_count);

#endif
