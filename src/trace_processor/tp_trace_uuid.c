// SPDX-License-Identifier: Apache-2.0
/*
 * tp_trace_uuid.c - the trace_uuid metadata row. The reader (tp.c) feeds
 * the file's first bytes here before anything is parsed, so a trace
 * without a TraceUuid packet is still named (by an FNV-1a hash of its first
 * 4 KiB, as Perfetto does); a TraceUuid packet parsed later replaces it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/hash.h"
#include "trace_processor/tp_int.h"

#define UUID_HASH_BYTES 4096

static void set_row(struct tp_import *imp, uint64_t msb, uint64_t lsb)
{
	char s[40];

	snprintf(s, sizeof(s), "%08" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%012" PRIx64,
		 msb >> 32, (msb >> 16) & 0xffff, msb & 0xffff, lsb >> 48,
		 lsb & (uint64_t)0xffffffffffff);
	tp_metadata_set_str(imp, "trace_uuid", 0, s, strlen(s));
}

void tp_trace_uuid_set(struct tp_import *imp, uint64_t msb, uint64_t lsb, bool from_config)
{
	/* A TraceUuid packet always wins; the config's (deprecated) uuid only if first. */
	if ((!msb && !lsb) || (from_config && imp->uuid_in_trace))
		return;
	set_row(imp, msb, lsb);
	imp->uuid_in_trace = true;
}

void tp_trace_uuid_hash(struct tp_import *imp, const uint8_t *data, size_t len)
{
	size_t n = UUID_HASH_BYTES - imp->uuid_hashed;

	if (!len || !n)
		return;
	if (!imp->uuid_hashed)
		imp->uuid_hash = FNV1A64_OFFSET_BASIS;
	if (n > len)
		n = len;
	imp->uuid_hash = fnv1a64_update(imp->uuid_hash, data, n);
	imp->uuid_hashed += n;
	/* The hash is the uuid's low half. */
	set_row(imp, 0, imp->uuid_hash);
}
