/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kallsyms.h - kernel function names for kernel callchain addresses: the
 * text symbols of /proc/kallsyms, sorted by address, looked up by binary
 * search (the symbol at or below an address). Loaded once per daemon, on
 * the first session that records kernel frames.
 */
#ifndef PFC_PERF_KALLSYMS_H
#define PFC_PERF_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct kallsyms_sym {
	uint64_t addr;
	uint32_t name_off; /* into names */
};

struct kallsyms {
	struct kallsyms_sym *syms; /* sorted by addr */
	size_t n_syms;
	char *names; /* NUL-separated */
	size_t names_len;
};

/**
 * kallsyms_parse() - Build the table from kallsyms text (@text, @len).
 * Lines that do not parse are skipped; zero addresses (kptr_restrict)
 * leave the table empty, and every lookup then answers NULL.
 * Return: 0 or -ENOMEM. Context: allocates.
 */
int kallsyms_parse(struct kallsyms *ks, const char *text, size_t len);
/* Reads and parses @path (normally /proc/kallsyms). */
int kallsyms_load(struct kallsyms *ks, const char *path);
void kallsyms_fini(struct kallsyms *ks);

/* The name of the function holding @addr (borrowed), or NULL. */
const char *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr);

#endif
