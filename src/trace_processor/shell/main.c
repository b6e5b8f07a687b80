// SPDX-License-Identifier: Apache-2.0
/* main.c - the `trace_processor_shell` binary: everything is in tp_shell_main(). */
#include "trace_processor/shell/shell.h"

int main(int argc, char **argv)
{
	return tp_shell_main(argc, argv);
}
