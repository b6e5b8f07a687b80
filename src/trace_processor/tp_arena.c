// SPDX-License-Identifier: Apache-2.0
/*
 * tp_arena.c - memory that lives until the import ends: the file's chunks
 * and inflated compressed_packets, which sorted events point into.
 */
#include <errno.h>
#include <stdlib.h>

#include "trace_processor/tp_int.h"

struct tp_block {
	struct tp_block *next;
	size_t size;
	uint8_t data[];
};

void tp_arena_init(struct tp_arena *a)
{
	a->blocks = NULL;
	a->bytes = 0;
}

void tp_arena_fini(struct tp_arena *a)
{
	while (a->blocks) {
		struct tp_block *b = a->blocks;

		a->blocks = b->next;
		free(b);
	}
	a->bytes = 0;
}

uint8_t *tp_arena_alloc(struct tp_arena *a, size_t size)
{
	struct tp_block *b = malloc(sizeof(*b) + (size ? size : 1));

	if (!b)
		return NULL;
	b->next = a->blocks;
	b->size = size;
	a->blocks = b;
	a->bytes += size;
	return b->data;
}


int tp_array_grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t c = *cap ? *cap : first;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		c *= 2;
	}
	p = realloc(*arr, c * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}
