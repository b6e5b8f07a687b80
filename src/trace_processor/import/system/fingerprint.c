// SPDX-License-Identifier: Apache-2.0
/*
 * fingerprint.c - splits an Android build fingerprint
 * (BRAND/PRODUCT/DEVICE:RELEASE/ID/INCREMENTAL:TYPE/TAGS, the CDD format)
 * into the incremental build and the SDK level its release names, for the
 * android_incremental_build and android_sdk_version metadata.
 */
#include <string.h>

#include "trace_processor/import/system/fingerprint.h"

static const char *find_char(const char *p, const char *end, char c)
{
	const void *r = memchr(p, c, (size_t)(end - p));

	return r ? (const char *)r : NULL;
}

/* The SDK level of an Android release name; -1 when it is not known. */
static int64_t release_sdk(const char *s, size_t n)
{
	static const struct {
		const char *rel;
		int64_t sdk;
	} t[] = {
		{"12", 31},  {"11", 30},    {"10", 29},    {"9", 28},     {"8.1", 27},
		{"8.0", 26}, {"7.1", 25},   {"7.0", 24},   {"6.0", 23},   {"5.1", 22},
		{"5.1.1", 22}, {"5.0", 21}, {"5.0.1", 21}, {"5.0.2", 21},
	};
	size_t i;

	/* Pre-release letters of S and T were all reported as S's level. */
	if (n > 0 && (s[0] == 'S' || s[0] == 'T'))
		return 31;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strlen(t[i].rel) == n && memcmp(t[i].rel, s, n) == 0)
			return t[i].sdk;
	return -1;
}

bool tp_fingerprint_parse(const char *fp, size_t n, struct tp_fingerprint *out)
{
	const char *end = fp + n;
	const char *colon, *rel_slash, *id_slash, *inc_colon;

	colon = find_char(fp, end, ':');
	if (!colon)
		return false;
	rel_slash = find_char(colon, end, '/');
	if (!rel_slash)
		return false;
	id_slash = find_char(rel_slash + 1, end, '/');
	if (!id_slash)
		return false;
	inc_colon = find_char(id_slash, end, ':');
	if (!inc_colon)
		return false;
	out->sdk = release_sdk(colon + 1, (size_t)(rel_slash - colon - 1));
	out->incremental = id_slash + 1;
	out->incremental_len = (size_t)(inc_colon - id_slash - 1);
	return true;
}
