// SPDX-License-Identifier: Apache-2.0
/*
 * symtab.c - per-ELF function tables and their cache (see symtab.h).
 */
#include "perf/unwind/symtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"

int symtab_add(struct symtab *t, uint64_t addr, uint64_t size, const char *name)
{
	size_t len = strlen(name) + 1;

	if (t->names_len + len > UINT32_MAX)
		return -ENOMEM;
	if (t->names_len + len > t->names_cap) {
		size_t cap = t->names_cap ? t->names_cap * 2 : 4096;
		char *p;

		while (cap < t->names_len + len)
			cap *= 2;
		p = realloc(t->names, cap);
		if (!p)
			return -ENOMEM;
		t->names = p;
		t->names_cap = cap;
	}
	if (t->n_syms == t->syms_cap) {
		size_t cap = t->syms_cap ? t->syms_cap * 2 : 64;
		void *p = realloc(t->syms, cap * sizeof(*t->syms));

		if (!p)
			return -ENOMEM;
		t->syms = p;
		t->syms_cap = cap;
	}
	t->syms[t->n_syms].addr = addr;
	t->syms[t->n_syms].size = size;
	t->syms[t->n_syms].name_off = (uint32_t)t->names_len;
	memcpy(t->names + t->names_len, name, len);
	t->names_len += len;
	t->n_syms++;
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct symtab_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Sized symbols first among aliases: they say where a function ends. */
	return (x->size == 0) - (y->size == 0);
}

void symtab_finish(struct symtab *t)
{
	if (t->n_syms)
		sort_n(t->syms, t->n_syms, sizeof(*t->syms), cmp_sym);
}

const char *symtab_lookup(const struct symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n_syms;
	const struct symtab_sym *s;

	if (!t->n_syms || addr < t->syms[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	/* The first of the aliases at that address (sized ones sort first). */
	while (lo > 0 && t->syms[lo - 1].addr == t->syms[lo].addr)
		lo--;
	s = &t->syms[lo];
	if (s->size && addr - s->addr >= s->size)
		return NULL;
	return t->names + s->name_off;
}

void symtab_cache_init(struct symtab_cache *c)
{
	hmap_init(&c->tabs);
	c->tick = 0;
}

static void symtab_free(struct symtab *t)
{
	free(t->syms);
	free(t->names);
	free(t);
}

void symtab_cache_fini(struct symtab_cache *c)
{
	struct hmap_iter it;
	uint64_t k, v;

	hmap_iter_init(&it, &c->tabs);
	while (hmap_iter_next(&it, &k, &v))
		symtab_free((struct symtab *)(uintptr_t)v);
	hmap_fini(&c->tabs);
}

struct symtab *symtab_cache_get(struct symtab_cache *c, uint64_t key)
{
	struct symtab *t;
	uint64_t v;

	if (!hmap_get(&c->tabs, key, &v))
		return NULL;
	t = (struct symtab *)(uintptr_t)v;
	t->refs++;
	t->last_use = ++c->tick;
	return t;
}

struct symtab *symtab_cache_create(struct symtab_cache *c, uint64_t key)
{
	struct symtab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->key = key;
	t->refs = 1;
	t->last_use = ++c->tick;
	if (hmap_put(&c->tabs, key, (uint64_t)(uintptr_t)t) < 0) {
		free(t);
		return NULL;
	}
	return t;
}

/* Frees the least recently used unreferenced table, if any. */
static void evict_one(struct symtab_cache *c)
{
	struct hmap_iter it;
	uint64_t k, v, best_use = UINT64_MAX, best_key = 0;
	struct symtab *best = NULL;

	hmap_iter_init(&it, &c->tabs);
	while (hmap_iter_next(&it, &k, &v)) {
		struct symtab *t = (struct symtab *)(uintptr_t)v;

		if (!t->refs && t->last_use < best_use) {
			best_use = t->last_use;
			best_key = k;
			best = t;
		}
	}
	if (best) {
		hmap_del(&c->tabs, best_key, NULL);
		symtab_free(best);
	}
}

void symtab_cache_put(struct symtab_cache *c, struct symtab *t)
{
	if (!t)
		return;
	if (t->refs)
		t->refs--;
	if (hmap_len(&c->tabs) > SYMTAB_CACHE_MAX)
		evict_one(c);
}
