/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inflate.h - unpacking zlib data in one call, for readers of
 * TracePacket.compressed_packets (trace tools and tests). The output is
 * bounded so a hostile stream cannot exhaust memory.
 */
#ifndef PFC_BASE_INFLATE_H
#define PFC_BASE_INFLATE_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/*
 * inflate_all() - Append the zlib-decompressed @in to @out.
 * @max_out: most bytes to produce.
 * Return: bytes appended; -EBADMSG (not zlib, truncated or corrupt),
 * -EFBIG (more than @max_out), -ENOMEM. @out keeps what it had on failure.
 */
int64_t inflate_all(const uint8_t *in, size_t len, size_t max_out, struct buf *out);

#endif
