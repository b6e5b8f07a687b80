// SPDX-License-Identifier: Apache-2.0
/*
 * hp_dl.c - libhp_dl.so, a library tests/heapprofd/hp_cases.c dlopens
 * (heapprofd_cases.sh): dl_leak keeps 8 MiB, so its allocations must be
 * attributed to this library's mapping and function.
 */
#include <stdlib.h>
#include <string.h>

static void *volatile g_dl_sink;

__attribute__((noinline)) void dl_leak(void)
{
	size_t i;

	for (i = 0; i < (8u << 20) / 65536; i++) {
		char *p = malloc(65536);

		memset(p, 2, 64);
		g_dl_sink = p;
	}
}
