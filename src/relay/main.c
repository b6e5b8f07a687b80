// SPDX-License-Identifier: Apache-2.0
/* main.c - the `traced_relay` binary: everything is in relay_main(). */
#include "relay/relay.h"

int main(int argc, char **argv)
{
	return relay_main(argc, argv);
}
