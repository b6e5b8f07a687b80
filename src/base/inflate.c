// SPDX-License-Identifier: Apache-2.0
/* inflate.c - one-call zlib decompression with a size bound (see inflate.h). */
#include "base/inflate.h"

#include <errno.h>
#include <string.h>
#include <zlib.h>

int64_t inflate_all(const uint8_t *in, size_t len, size_t max_out, struct buf *out)
{
	size_t start = out->len;
	z_stream zs;
	int zr = Z_OK;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit(&zs) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)len;
	while (zr == Z_OK) {
		if (out->len - start >= max_out) {
			zr = Z_MEM_ERROR;
			break;
		}
		if (buf_reserve(out, 256 * 1024) < 0) {
			inflateEnd(&zs);
			out->len = start;
			return -ENOMEM;
		}
		zs.next_out = out->data + out->len;
		zs.avail_out = (uInt)(out->cap - out->len);
		zr = inflate(&zs, Z_NO_FLUSH);
		out->len = (size_t)(zs.next_out - out->data);
		if (zr == Z_BUF_ERROR && zs.avail_in == 0)
			break; /* input ended before the stream did */
	}
	inflateEnd(&zs);
	if (zr != Z_STREAM_END || out->len - start > max_out) {
		int err = zr == Z_MEM_ERROR || out->len - start > max_out ? -EFBIG : -EBADMSG;

		out->len = start;
		return err;
	}
	return (int64_t)(out->len - start);
}
