// SPDX-License-Identifier: Apache-2.0
/* main_trigger.c - the `trigger_perfetto` binary: see trigger_perfetto.c. */
#include "perfetto_cmd/perfetto_cmd.h"

int main(int argc, char **argv)
{
	return trigger_perfetto_main(argc, argv);
}
