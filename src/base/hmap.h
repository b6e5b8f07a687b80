/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hmap.h - open-addressing hash map from uint64_t keys to uint64_t values
 * (ids to ids, or ids to pointers cast to uintptr_t). Linear probing over a
 * power-of-two table that doubles at 70% load; deletion shifts entries back,
 * so there are no tombstones. One thread at a time; lookups never allocate.
 */
#ifndef PFC_BASE_HMAP_H
#define PFC_BASE_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap_slot {
	uint64_t key;
	uint64_t val;
};

struct hmap {
	struct hmap_slot *slots; /* cap entries */
	uint8_t *used;           /* cap flags: 1 if slots[i] holds an entry */
	size_t cap;              /* 0 or a power of two */
	size_t len;
};

/*
 * Iteration order is unspecified. The only change allowed while iterating is
 * hmap_iter_del() of the entry just returned; any other put or del ends the
 * iteration's validity.
 */
struct hmap_iter {
	struct hmap *m;
	size_t start; /* an empty slot: entries never move across it */
	size_t steps; /* slots visited so far */
	bool has_cur;
};

#define HMAP_INIT {NULL, NULL, 0, 0}

/** hmap_init() - Make @m an empty map; allocates nothing yet. */
void hmap_init(struct hmap *m);

/** hmap_fini() - Free @m's memory; @m may be NULL. @m is empty afterwards. */
void hmap_fini(struct hmap *m);

/**
 * hmap_reserve() - Make room for @n entries in total without regrowing.
 * @m: the map.  @n: the number of entries expected.
 *
 * Return: 0 or -ENOMEM (the map is unchanged then).
 * Context: allocates.
 */
int hmap_reserve(struct hmap *m, size_t n);

/**
 * hmap_put() - Insert @key, or replace its value if present.
 * @m: the map.  @key: any value.  @val: any value.
 *
 * Return: 1 if the key was new, 0 if its value was replaced, -ENOMEM (the
 * map is unchanged then).
 * Context: may allocate (when the table grows).
 */
int hmap_put(struct hmap *m, uint64_t key, uint64_t val);

/**
 * hmap_get() - Look @key up.
 * @m: the map.  @key: the key.
 * @out_val: set to the value if found; may be NULL to test membership.
 *
 * Return: true if found.
 * Context: never allocates.
 */
bool hmap_get(const struct hmap *m, uint64_t key, uint64_t *out_val);

/**
 * hmap_del() - Remove @key.
 * @m: the map.  @key: the key.
 * @out_val: set to the removed value; may be NULL.
 *
 * Return: 0, or -ENOENT if @key was not present.
 * Context: never allocates.
 */
int hmap_del(struct hmap *m, uint64_t key, uint64_t *out_val);

/** hmap_len() - Number of entries in @m. */
size_t hmap_len(const struct hmap *m);

/** hmap_clear() - Remove every entry but keep the table for reuse. */
void hmap_clear(struct hmap *m);

/** hmap_iter_init() - Start iterating over @m (borrowed for the iteration). */
void hmap_iter_init(struct hmap_iter *it, struct hmap *m);

/**
 * hmap_iter_next() - Step to the next entry.
 * @it: the iterator.  @out_key, @out_val: set to the entry (either may be NULL).
 *
 * Return: true with an entry, false when every entry has been seen.
 */
bool hmap_iter_next(struct hmap_iter *it, uint64_t *out_key, uint64_t *out_val);

/**
 * hmap_iter_del() - Remove the entry hmap_iter_next() just returned; the
 * iteration still visits every other entry exactly once.
 * @it: the iterator.
 *
 * Return: 0, or -ENOENT if there is no current entry (nothing returned yet,
 * or it was already removed).
 */
int hmap_iter_del(struct hmap_iter *it);

#endif
