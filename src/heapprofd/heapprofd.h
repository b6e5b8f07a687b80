/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heapprofd.h - the heapprofd daemon: native heap profiles of processes
 * that run with the heapprofd client (libheapprofd_glibc_preload.so). It
 * serves the android.heapprofd data source for traced; processes reach it
 * on its socket (central mode: a daemon that runs for the machine) or
 * through the socket they inherited when they forked it (child mode, one
 * private heapprofd per process, as Perfetto on Linux).
 */
#ifndef PFC_HEAPPROFD_HEAPPROFD_H
#define PFC_HEAPPROFD_HEAPPROFD_H

#include <stdint.h>

#define HEAPPROFD_DATA_SOURCE_NAME "android.heapprofd"
#define HEAPPROFD_PRODUCER_NAME "heapprofd"
/* Clients of a central heapprofd at once. */
#define HEAPPROFD_MAX_CLIENTS 1024u

struct evloop;
struct hp_daemon;

struct hp_daemon_opts {
	const char *listen_name;   /* central mode: the socket clients connect to */
	int inherit_fd;            /* child mode: the client's socket (-1: none) */
	uint32_t exclusive_pid;    /* child mode: the one process served */
};

int hp_daemon_create(struct evloop *loop, const struct hp_daemon_opts *o, struct hp_daemon **out);
void hp_daemon_destroy(struct hp_daemon *d);

/* `heapprofd` command line; tracebox's applet. */
int heapprofd_main(int argc, char **argv);

/* The default central socket: /run/perfetto/heapprofd.sock, or
 * $PERFETTO_HEAPPROFD_SOCK_NAME. */
const char *heapprofd_default_sock(void);

#endif
