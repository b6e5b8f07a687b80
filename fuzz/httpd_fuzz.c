// SPDX-License-Identifier: Apache-2.0
/*
 * httpd_fuzz.c - libFuzzer target for trace_processor_shell --httpd: the
 * input is what one client sends on one connection (HTTP requests, then
 * WebSocket frames carrying TraceProcessorRpc messages after an upgrade),
 * arriving in pieces whose sizes come from the input itself; it runs the
 * HTTP and WebSocket parsers, the RPC framing and the RPC methods on one
 * engine kept across inputs, as the server does with untrusted bytes.
 */
#include <stdlib.h>

#include "trace_processor/rpc/rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tp_rpc *r;

	if (!r && tp_rpc_create(NULL, NULL, NULL, 0, &r) < 0)
		abort();
	tp_httpd_feed(r, data, size);
	return 0;
}
