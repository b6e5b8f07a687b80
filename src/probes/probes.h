/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probes.h - traced_probes: the producer for the kernel and /proc. It
 * registers linux.ftrace, linux.process_stats, linux.sys_stats and
 * linux.system_info with traced, serves any number of sessions at once and
 * reconnects with backoff when the service restarts.
 */
#ifndef PFC_PROBES_PROBES_H
#define PFC_PROBES_PROBES_H

#include <stdio.h>

/* Producer name, as Perfetto's. */
#define PROBES_PRODUCER_NAME "perfetto.traced_probes"
/* SMB the probes ask for (large pages: ftrace bundles are big). */
#define PROBES_SMB_BYTES (2u * 1024 * 1024)
#define PROBES_SMB_PAGE_BYTES (32u * 1024)

struct evloop;
struct probes;

/* Starts connecting (and keeps reconnecting) to the producer socket. */
int probes_create(struct evloop *loop, struct probes **out);
/* Stops every data source (restoring ftrace) and disconnects. */
void probes_destroy(struct probes *pr);

/* `traced_probes` (also tracebox's applet). */
int probes_main(int argc, char **argv);
/* The --help text, categories included. */
void probes_usage(FILE *f);

#endif
