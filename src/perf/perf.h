/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf.h - traced_perf: the producer of linux.perf, Perfetto's CPU
 * profiler (perf_event_open sampling with callstacks). A daemon of its
 * own, apart from traced_probes: it needs perf privileges, reads other
 * processes' binaries, and unwinding costs CPU that must not delay ftrace.
 * Serves any number of sessions; reconnects with backoff.
 */
#ifndef PFC_PERF_PERF_H
#define PFC_PERF_PERF_H

#include <stdio.h>

/* Producer and data source names, as Perfetto's. */
#define PERF_PRODUCER_NAME "perfetto.traced_perf"
#define PERF_DATA_SOURCE_NAME "linux.perf"
#define PERF_SMB_BYTES (4u * 1024 * 1024)
#define PERF_SMB_PAGE_BYTES (32u * 1024)

struct evloop;
struct perf_daemon;

/* Starts connecting (and keeps reconnecting) to the producer socket. */
int perf_daemon_create(struct evloop *loop, struct perf_daemon **out);
/* Stops every data source and disconnects. Accepts NULL. */
void perf_daemon_destroy(struct perf_daemon *d);

/* `traced_perf` (also tracebox's applet). */
int perf_main(int argc, char **argv);

#endif
