// SPDX-License-Identifier: Apache-2.0
/* main.c - the `tracebox` binary: everything is in tracebox_main(). */
#include "tracebox/tracebox.h"

int main(int argc, char **argv)
{
	return tracebox_main(argc, argv);
}
