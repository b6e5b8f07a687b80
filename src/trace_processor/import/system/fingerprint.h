// SPDX-License-Identifier: Apache-2.0
/*
 * fingerprint.h - parts of an Android build fingerprint (fingerprint.c).
 */
#ifndef PFC_TRACE_PROCESSOR_IMPORT_SYSTEM_FINGERPRINT_H
#define PFC_TRACE_PROCESSOR_IMPORT_SYSTEM_FINGERPRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tp_fingerprint {
	int64_t sdk;             /* SDK level of the release, -1 if unknown */
	const char *incremental; /* VERSION.INCREMENTAL, inside the input */
	size_t incremental_len;
};

/* False when the fingerprint does not have the CDD shape. */
bool tp_fingerprint_parse(const char *fp, size_t n, struct tp_fingerprint *out);

#endif
