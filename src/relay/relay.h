/* SPDX-License-Identifier: Apache-2.0 */
/*
 * relay.h - traced_relay, the daemon of every non-host machine: it listens
 * on the machine's producer socket and forwards each local producer to the
 * host's traced over TCP or vsock, and keeps one control connection to the
 * host for the machine's description and clock sync. `traced_relay` and
 * tracebox's applet run it through relay_main().
 */
#ifndef PFC_RELAY_RELAY_H
#define PFC_RELAY_RELAY_H

/**
 * relay_main() - The `traced_relay` command line.
 * @argc, @argv: as given to main(); argv[0] names the program in messages.
 *
 * Reads PERFETTO_RELAY_SOCK_NAME (required), PERFETTO_PRODUCER_SOCK_NAME,
 * PERFETTO_MACHINE_NAME and TRACED_RELAY_NOTIFY_FD; flags --background,
 * --set-socket-permissions GROUP:MODE, --version, -h/--help.
 *
 * Return: the process exit status: 0 after --version, --help or a SIGTERM /
 * SIGINT; 1 for a usage error, a missing PERFETTO_RELAY_SOCK_NAME, a
 * producer socket that another process serves, or a failure to start.
 * Context: the main thread of a process; runs an event loop until told to
 * stop; may fork (--background).
 */
int relay_main(int argc, char **argv);

#endif
