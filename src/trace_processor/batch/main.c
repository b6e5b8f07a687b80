// SPDX-License-Identifier: Apache-2.0
/* main.c - the pfc_batch_query program (batch.h). */
#include "trace_processor/batch/batch.h"

int main(int argc, char **argv)
{
	return batch_main(argc, argv);
}
