// SPDX-License-Identifier: Apache-2.0
/* main.c - the `traced_probes` binary: everything is in probes_main(). */
#include "probes/probes.h"

int main(int argc, char **argv)
{
	return probes_main(argc, argv);
}
