// SPDX-License-Identifier: Apache-2.0
/*
 * names.c - finds messages by name in the generated descriptor registry and
 * suggests the nearest field or enum name for a misspelling ("did you
 * mean 'buffers'?"). Lookups scan the registry: it has a few hundred entries
 * and configs are parsed once.
 */
#include "pbtxt/pbtxt_int.h"

#include <ctype.h>
#include <string.h>

#include "protos/pb_registry.h"

#define PACKAGE_PREFIX "perfetto.protos."

static const char *strip_package(const char *full)
{
	size_t n = strlen(PACKAGE_PREFIX);

	return strncmp(full, PACKAGE_PREFIX, n) == 0 ? full + n : full;
}

const char *pbtxt_message_name(const ProtobufCMessageDescriptor *desc)
{
	return strip_package(desc->name);
}

const char *pbtxt_enum_name(const ProtobufCEnumDescriptor *desc)
{
	return strip_package(desc->name);
}

const ProtobufCMessageDescriptor *pbtxt_find_message(const char *name)
{
	const ProtobufCMessageDescriptor *const *md, *found = NULL;
	int n_short = 0;

	for (md = pb_registry_messages; *md; md++) {
		const char *rel = strip_package((*md)->name);

		if (strcmp((*md)->name, name) == 0 || strcmp(rel, name) == 0)
			return *md;
		if (strcmp((*md)->short_name, name) == 0) {
			found = *md;
			n_short++;
		}
	}
	/* A bare nested name ("BufferConfig") only if it is unambiguous. */
	return n_short == 1 ? found : NULL;
}

unsigned pbtxt_edit_distance(const char *a, size_t alen, const char *b, size_t blen)
{
	unsigned row[64 + 1], prev_diag, tmp;
	size_t i, j;

	if (alen > 64 || blen > 64)
		return 1000;
	for (j = 0; j <= blen; j++)
		row[j] = (unsigned)j;
	for (i = 1; i <= alen; i++) {
		prev_diag = row[0];
		row[0] = (unsigned)i;
		for (j = 1; j <= blen; j++) {
			/* Case does not count: 'discard' suggests 'DISCARD'. */
			unsigned best = prev_diag + (tolower((unsigned char)a[i - 1]) !=
						     tolower((unsigned char)b[j - 1]));

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev_diag = tmp;
		}
	}
	return row[blen];
}

/* A typo is at most a third of the word's letters away (at least 1, at most 3). */
static unsigned typo_budget(size_t len)
{
	unsigned b = (unsigned)(len / 3);

	return b < 1 ? 1 : (b > 3 ? 3 : b);
}

const char *pbtxt_suggest_field(const ProtobufCMessageDescriptor *desc, const char *name,
				size_t len)
{
	unsigned best = typo_budget(len) + 1, d, i;
	const char *pick = NULL;

	for (i = 0; i < desc->n_fields; i++) {
		const char *f = desc->fields[i].name;

		d = pbtxt_edit_distance(name, len, f, strlen(f));
		if (d < best) {
			best = d;
			pick = f;
		}
	}
	return pick;
}

const char *pbtxt_suggest_enum(const ProtobufCEnumDescriptor *desc, const char *name, size_t len)
{
	unsigned best = typo_budget(len) + 1, d, i;
	const char *pick = NULL;

	for (i = 0; i < desc->n_values; i++) {
		const char *v = desc->values[i].name;

		d = pbtxt_edit_distance(name, len, v, strlen(v));
		if (d < best) {
			best = d;
			pick = v;
		}
	}
	return pick;
}
