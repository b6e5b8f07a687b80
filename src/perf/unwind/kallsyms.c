// SPDX-License-Identifier: Apache-2.0
/*
 * kallsyms.c - /proc/kallsyms as a sorted table (see kallsyms.h). About
 * 200k lines on a distribution kernel: parsed once, a few MB kept.
 */
#include "perf/unwind/kallsyms.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/file.h"
#include "base/sort.h"

/* /proc/kallsyms is far below this; it bounds what we read. */
#define KALLSYMS_MAX_BYTES (64u * 1024 * 1024)

static int cmp_sym(const void *a, const void *b)
{
	const struct kallsyms_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int kallsyms_parse(struct kallsyms *ks, const char *text, size_t len)
{
	size_t cap = 0, ncap = 0, pos = 0;

	memset(ks, 0, sizeof(*ks));
	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - line) : len - pos, i = 0, name_len;
		uint64_t addr = 0;
		int d, nd = 0;
		char type;

		pos += ll + (nl ? 1 : 0);
		while (i < ll && (d = hexval(line[i])) >= 0 && nd < 16) {
			addr = addr << 4 | (uint64_t)d;
			i++;
			nd++;
		}
		if (nd == 0 || i + 3 > ll || line[i] != ' ' || line[i + 2] != ' ')
			continue;
		type = line[i + 1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (addr == 0)
			continue;
		i += 3;
		name_len = 0;
		while (i + name_len < ll && line[i + name_len] != '\t' && line[i + name_len] != ' ')
			name_len++;
		if (name_len == 0)
			continue;
		if (ks->n_syms == cap) {
			size_t ncap2 = cap ? cap * 2 : 4096;
			void *p = realloc(ks->syms, ncap2 * sizeof(*ks->syms));

			if (!p)
				goto oom;
			ks->syms = p;
			cap = ncap2;
		}
		if (ks->names_len + name_len + 1 > ncap) {
			size_t ncap2 = ncap ? ncap * 2 : 65536;
			void *p;

			while (ncap2 < ks->names_len + name_len + 1)
				ncap2 *= 2;
			if (ncap2 > UINT32_MAX)
				break;
			p = realloc(ks->names, ncap2);
			if (!p)
				goto oom;
			ks->names = p;
			ncap = ncap2;
		}
		ks->syms[ks->n_syms].addr = addr;
		ks->syms[ks->n_syms].name_off = (uint32_t)ks->names_len;
		memcpy(ks->names + ks->names_len, line + i, name_len);
		ks->names[ks->names_len + name_len] = '\0';
		ks->names_len += name_len + 1;
		ks->n_syms++;
	}
	if (ks->n_syms)
		sort_n(ks->syms, ks->n_syms, sizeof(*ks->syms), cmp_sym);
	return 0;
oom:
	kallsyms_fini(ks);
	return -ENOMEM;
}

int kallsyms_load(struct kallsyms *ks, const char *path)
{
	struct buf b;
	int rc;

	buf_init(&b);
	rc = file_read_all(path, &b, KALLSYMS_MAX_BYTES);
	if (rc >= 0)
		rc = kallsyms_parse(ks, (const char *)b.data, b.len);
	buf_fini(&b);
	return rc < 0 ? rc : 0;
}

void kallsyms_fini(struct kallsyms *ks)
{
	free(ks->syms);
	free(ks->names);
	memset(ks, 0, sizeof(*ks));
}

const char *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks->n_syms;

	if (!ks->n_syms || addr < ks->syms[0].addr)
		return NULL;
	/* The last symbol whose address is <= addr. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return ks->names + ks->syms[lo].name_off;
}
