/* SPDX-License-Identifier: Apache-2.0 */
/*
 * symtab.h - function symbols of one ELF file, shared by every process
 * that maps it: addresses are the ELF's own (a pc minus its module's load
 * bias), names are copied, so a table outlives the Dwfl it was read from.
 * The unwinder keeps them in a cache keyed by build id (by path when an
 * ELF has none): a big binary that many short processes run (a compiler)
 * is read and sorted once, not once per process.
 */
#ifndef PFC_PERF_SYMTAB_H
#define PFC_PERF_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

#include "base/hmap.h"

/* ELF files whose tables are kept; unused ones beyond this are freed. */
#define SYMTAB_CACHE_MAX 256u

struct symtab_sym {
	uint64_t addr, size; /* ELF virtual address */
	uint32_t name_off;   /* into names */
};

struct symtab {
	uint64_t key;
	uint32_t refs;
	uint64_t last_use;
	struct symtab_sym *syms; /* sorted by addr */
	size_t n_syms, syms_cap;
	char *names;
	size_t names_len, names_cap;
};

struct symtab_cache {
	struct hmap tabs; /* key -> struct symtab * */
	uint64_t tick;
};

/* Adds a symbol while building @t. Return: 0 or -ENOMEM. */
int symtab_add(struct symtab *t, uint64_t addr, uint64_t size, const char *name);
/* Sorts @t once every symbol is in. */
void symtab_finish(struct symtab *t);
/* The function holding ELF address @addr (borrowed), or NULL. */
const char *symtab_lookup(const struct symtab *t, uint64_t addr);

void symtab_cache_init(struct symtab_cache *c);
void symtab_cache_fini(struct symtab_cache *c);
/* The table under @key with a reference taken, or NULL. */
struct symtab *symtab_cache_get(struct symtab_cache *c, uint64_t key);
/* A new empty table under @key (one reference), or NULL (out of memory). */
struct symtab *symtab_cache_create(struct symtab_cache *c, uint64_t key);
/* Drops a reference; unreferenced tables are freed past SYMTAB_CACHE_MAX. */
void symtab_cache_put(struct symtab_cache *c, struct symtab *t);

#endif
