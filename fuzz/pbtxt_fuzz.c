// SPDX-License-Identifier: Apache-2.0
/*
 * pbtxt_fuzz.c - libFuzzer target for the text-format parser and the
 * binary printer: the input is parsed as a TraceConfig in text format (and
 * a successful parse must print back and re-parse to the same bytes), and
 * the same input is printed as a binary TraceConfig.
 */
#include <stdlib.h>
#include <string.h>

#include "pbtxt/pbtxt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const ProtobufCMessageDescriptor *desc = pbtxt_find_message("TraceConfig");
	struct buf bin = BUF_INIT, text = BUF_INIT, again = BUF_INIT;
	struct pbtxt_error err;

	if (pbtxt_parse(desc, (const char *)data, size, &bin, &err) == 0) {
		if (pbtxt_print(desc, bin.data, bin.len, &text, &err) != 0)
			abort();
		if (pbtxt_parse(desc, (const char *)text.data, text.len, &again, &err) != 0)
			abort();
		if (again.len != bin.len || (bin.len && memcmp(again.data, bin.data, bin.len) != 0))
			abort();
	}
	buf_reset(&text);
	(void)pbtxt_print(desc, data, size, &text, &err);
	buf_fini(&bin);
	buf_fini(&text);
	buf_fini(&again);
	return 0;
}
