// SPDX-License-Identifier: Apache-2.0
/* main.c - the `traced` binary: everything is in traced_main(). */
#include "traced/traced.h"

int main(int argc, char **argv)
{
	return traced_main(argc, argv);
}
