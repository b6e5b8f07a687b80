// SPDX-License-Identifier: Apache-2.0
/*
 * hmap.c - linear-probing hash map with backward-shift deletion (Knuth's
 * Algorithm R), so lookups stop at the first empty slot and no tombstones
 * pile up under insert/delete churn. Keys are scrambled with hash_mix64().
 */
#include "base/hmap.h"
#include "base/hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HMAP_MIN_CAP 16
/* Grow when len would exceed cap * LOAD_NUM / LOAD_DEN. */
#define HMAP_LOAD_NUM 7
#define HMAP_LOAD_DEN 10

void hmap_init(struct hmap *m)
{
	m->slots = NULL;
	m->used = NULL;
	m->cap = 0;
	m->len = 0;
}

void hmap_fini(struct hmap *m)
{
	if (!m)
		return;
	free(m->slots);
	free(m->used);
	hmap_init(m);
}

static size_t home_of(const struct hmap *m, uint64_t key)
{
	return (size_t)hash_mix64(key) & (m->cap - 1);
}

/* Whether @n entries stay under the load limit of a table of @cap slots. */
static bool fits(size_t cap, size_t n)
{
	size_t max = cap / HMAP_LOAD_DEN * HMAP_LOAD_NUM;

	max += cap % HMAP_LOAD_DEN * HMAP_LOAD_NUM / HMAP_LOAD_DEN;
	return n <= max;
}

/* Returns the slot holding @key, or the empty slot where it would go. */
static size_t probe(const struct hmap *m, uint64_t key, bool *out_found)
{
	size_t mask = m->cap - 1, i = home_of(m, key);

	while (m->used[i]) {
		if (m->slots[i].key == key) {
			*out_found = true;
			return i;
		}
		i = (i + 1) & mask;
	}
	*out_found = false;
	return i;
}

static int rehash(struct hmap *m, size_t new_cap)
{
	struct hmap old = *m;
	bool found;
	size_t i, j;

	m->slots = malloc(new_cap * sizeof(*m->slots));
	m->used = calloc(new_cap, 1);
	if (!m->slots || !m->used) {
		free(m->slots);
		free(m->used);
		*m = old;
		return -ENOMEM;
	}
	m->cap = new_cap;
	for (i = 0; i < old.cap; i++) {
		if (!old.used[i])
			continue;
		j = probe(m, old.slots[i].key, &found);
		m->slots[j] = old.slots[i];
		m->used[j] = 1;
	}
	free(old.slots);
	free(old.used);
	return 0;
}

int hmap_reserve(struct hmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : HMAP_MIN_CAP;

	while (!fits(cap, n)) {
		if (cap > SIZE_MAX / 2 / sizeof(struct hmap_slot))
			return -ENOMEM;
		cap *= 2;
	}
	if (cap == m->cap)
		return 0;
	return rehash(m, cap);
}

int hmap_put(struct hmap *m, uint64_t key, uint64_t val)
{
	bool found = false;
	size_t i;
	int err;

	if (m->cap) {
		i = probe(m, key, &found);
		if (found) {
			m->slots[i].val = val;
			return 0;
		}
	}
	if (!m->cap || !fits(m->cap, m->len + 1)) {
		err = hmap_reserve(m, m->len + 1);
		if (err)
			return err;
	}
	i = probe(m, key, &found);
	m->slots[i].key = key;
	m->slots[i].val = val;
	m->used[i] = 1;
	m->len++;
	return 1;
}

bool hmap_get(const struct hmap *m, uint64_t key, uint64_t *out_val)
{
	bool found;
	size_t i;

	if (!m->len)
		return false;
	i = probe(m, key, &found);
	if (found && out_val)
		*out_val = m->slots[i].val;
	return found;
}

/* True if @h lies in the cyclic interval (lo, hi]. */
static bool in_cyclic_range(size_t lo, size_t h, size_t hi)
{
	if (lo <= hi)
		return lo < h && h <= hi;
	return lo < h || h <= hi;
}

/*
 * Empties slot @hole and pulls later entries of its cluster back so that
 * every entry stays reachable from its home slot. Entries only move into
 * positions at or after @hole, which hmap_iter_del() relies on.
 */
static void remove_at(struct hmap *m, size_t hole)
{
	size_t mask = m->cap - 1, j = hole, h;

	for (;;) {
		j = (j + 1) & mask;
		if (!m->used[j])
			break;
		h = home_of(m, m->slots[j].key);
		/* An entry whose home is in (hole, j] must stay where it is. */
		if (in_cyclic_range(hole, h, j))
			continue;
		m->slots[hole] = m->slots[j];
		hole = j;
	}
	m->used[hole] = 0;
	m->len--;
}

int hmap_del(struct hmap *m, uint64_t key, uint64_t *out_val)
{
	bool found;
	size_t i;

	if (!m->len)
		return -ENOENT;
	i = probe(m, key, &found);
	if (!found)
		return -ENOENT;
	if (out_val)
		*out_val = m->slots[i].val;
	remove_at(m, i);
	return 0;
}

size_t hmap_len(const struct hmap *m)
{
	return m->len;
}

void hmap_clear(struct hmap *m)
{
	if (m->cap)
		memset(m->used, 0, m->cap);
	m->len = 0;
}

void hmap_iter_init(struct hmap_iter *it, struct hmap *m)
{
	size_t i;

	it->m = m;
	it->start = 0;
	it->steps = 0;
	it->has_cur = false;
	/*
	 * Start just after an empty slot: entries never shift across one, so a
	 * deletion cannot move an unvisited entry behind the cursor. The load
	 * limit guarantees an empty slot exists.
	 */
	for (i = 0; i < m->cap; i++) {
		if (!m->used[i]) {
			it->start = i;
			return;
		}
	}
	it->steps = m->cap;
}

static size_t iter_pos(const struct hmap_iter *it, size_t steps)
{
	return (it->start + 1 + steps) & (it->m->cap - 1);
}

bool hmap_iter_next(struct hmap_iter *it, uint64_t *out_key, uint64_t *out_val)
{
	struct hmap *m = it->m;
	size_t pos;

	it->has_cur = false;
	while (m->cap && it->steps < m->cap - 1) {
		pos = iter_pos(it, it->steps++);
		if (!m->used[pos])
			continue;
		if (out_key)
			*out_key = m->slots[pos].key;
		if (out_val)
			*out_val = m->slots[pos].val;
		it->has_cur = true;
		return true;
	}
	return false;
}

int hmap_iter_del(struct hmap_iter *it)
{
	if (!it->has_cur)
		return -ENOENT;
	it->has_cur = false;
	it->steps--;
	/* A later entry may have moved into this slot: look at it again. */
	remove_at(it->m, iter_pos(it, it->steps));
	return 0;
}
