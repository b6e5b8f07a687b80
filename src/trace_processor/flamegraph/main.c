// SPDX-License-Identifier: Apache-2.0
/* main.c - the `pfc_flamegraph` binary: everything is in tp_flamegraph_main(). */
#include "trace_processor/flamegraph/flamegraph.h"

int main(int argc, char **argv)
{
	return tp_flamegraph_main(argc, argv);
}
