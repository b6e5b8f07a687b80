// SPDX-License-Identifier: Apache-2.0
/*
 * arena.c - memory that lives until parsing ends: the file's chunks and
 * inflated compressed_packets, which sorted events point into. The
 * reader and the tokenizer allocate from it; nothing is freed before.
 */
#include <stdlib.h>

#include "trace_processor/read/read_int.h"

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
