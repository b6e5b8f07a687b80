// SPDX-License-Identifier: Apache-2.0
/* main.c - the `traced_perf` binary: everything is in perf_main(). */
#include "perf/perf.h"

int main(int argc, char **argv)
{
	return perf_main(argc, argv);
}
