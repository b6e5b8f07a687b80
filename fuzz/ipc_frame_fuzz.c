// SPDX-License-Identifier: Apache-2.0
/*
 * ipc_frame_fuzz.c - libFuzzer target for the IPC frame decoder: the input
 * is fed to a frame reader in pieces whose sizes come from the input itself,
 * and every complete frame is decoded and freed, as a host does with bytes
 * from an untrusted peer.
 */
#include "ipc/ipc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ipc_frame_reader r;
	Perfetto__Protos__IPCFrame *f;
	size_t off = 0;
	int rc = 0;

	ipc_frame_reader_init(&r);
	while (off < size && rc >= 0) {
		/* The first byte of each step picks how many bytes arrive at once. */
		size_t step = 1 + data[off] % 97;
		int took;

		if (step > size - off)
			step = size - off;
		took = ipc_frame_reader_feed(&r, data + off, step);
		if (took < 0)
			break;
		off += (size_t)took;
		while ((rc = ipc_frame_reader_pop(&r, &f)) > 0)
			ipc_frame_free(f);
		if (took == 0 && rc == 0)
			break;
	}
	ipc_frame_reader_fini(&r);
	return 0;
}
