// SPDX-License-Identifier: Apache-2.0
/* main.c - the heapprofd binary (heapprofd.h). */
#include "heapprofd/heapprofd.h"

int main(int argc, char **argv)
{
	return heapprofd_main(argc, argv);
}
