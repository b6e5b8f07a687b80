// SPDX-License-Identifier: Apache-2.0
/* main.c - the `perfetto` binary: everything is in perfetto_cmd_main(). */
#include "perfetto_cmd/perfetto_cmd.h"

int main(int argc, char **argv)
{
	return perfetto_cmd_main(argc, argv);
}
