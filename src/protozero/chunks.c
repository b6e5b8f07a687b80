// SPDX-License-Identifier: Apache-2.0
/*
 * chunks.c - a writer stream over a chain of fixed-size heap chunks, for
 * messages whose final size is unknown (text-format encoding, service
 * packets). Chunks never move, so reserved size fields stay valid. The
 * shared-memory trace writer uses the same grow hook with SMB chunks.
 */
#include "protozero/protozero.h"

#include <errno.h>
#include <stdlib.h>

static int chunks_grow(struct pz_stream *s, void *user)
{
	struct pz_chunks *c = user;
	struct pz_chunk *ch;

	if (c->tail)
		c->tail->used = (size_t)(s->cur - c->tail->data);
	if (c->max_bytes && c->allocated + c->chunk_size > c->max_bytes)
		return -EFBIG;
	ch = malloc(sizeof(*ch) + c->chunk_size);
	if (!ch)
		return -ENOMEM;
	ch->next = NULL;
	ch->used = 0;
	if (c->tail)
		c->tail->next = ch;
	else
		c->head = ch;
	c->tail = ch;
	c->allocated += c->chunk_size;
	s->cur = ch->data;
	s->end = ch->data + c->chunk_size;
	return 0;
}

int pz_chunks_init(struct pz_chunks *c, size_t chunk_size, size_t max_bytes)
{
	memset(c, 0, sizeof(*c));
	if (chunk_size < 16)
		return -EINVAL;
	c->chunk_size = chunk_size;
	c->max_bytes = max_bytes;
	return pz_stream_init(&c->s, chunks_grow, c);
}

void pz_chunks_fini(struct pz_chunks *c)
{
	struct pz_chunk *ch = c->head, *next;

	while (ch) {
		next = ch->next;
		free(ch);
		ch = next;
	}
	c->head = c->tail = NULL;
}

/* The tail's fill level lives in the stream until the next switch. */
static size_t chunk_used(const struct pz_chunks *c, const struct pz_chunk *ch)
{
	if (ch == c->tail && c->s.cur >= ch->data && c->s.cur <= ch->data + c->chunk_size)
		return (size_t)(c->s.cur - ch->data);
	return ch->used;
}

size_t pz_chunks_size(const struct pz_chunks *c)
{
	const struct pz_chunk *ch;
	size_t n = 0;

	for (ch = c->head; ch; ch = ch->next)
		n += chunk_used(c, ch);
	return n;
}

int64_t pz_chunks_copy(const struct pz_chunks *c, uint8_t *dst, size_t cap)
{
	const struct pz_chunk *ch;
	size_t n = 0, u;

	for (ch = c->head; ch; ch = ch->next) {
		u = chunk_used(c, ch);
		if (n + u > cap)
			return -ENOSPC;
		memcpy(dst + n, ch->data, u);
		n += u;
	}
	return (int64_t)n;
}
