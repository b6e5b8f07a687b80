/* SPDX-License-Identifier: Apache-2.0 */
/*
 * traced.h - the tracing service as a library: `traced` and tracebox run it
 * through traced_main(); tests and benchmarks may embed it on their own
 * event loop with svc_create(). It owns the producer and consumer sockets,
 * the sessions and their central buffers.
 */
#ifndef PFC_TRACED_TRACED_H
#define PFC_TRACED_TRACED_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SVC_MAX_PRODUCER_SOCKETS 8

struct evloop;
struct svc;

struct svc_options {
	/* Producer sockets to listen on (Perfetto's grammar). */
	const char *producer_socks[SVC_MAX_PRODUCER_SOCKETS];
	size_t n_producer_socks;
	/* Expose RelayPort on these producer sockets (bit i = producer_socks[i]). */
	unsigned relay_mask;
	const char *consumer_sock;
	/* --set-socket-permissions: group and mode per socket kind; NULL = keep. */
	const char *producer_group;
	mode_t producer_mode;
	const char *consumer_group;
	mode_t consumer_mode;
	bool has_permissions;
};

/*
 * svc_create() - Start a service on @loop: listen on every socket of @opts.
 * @opts: copied (the strings are borrowed and must outlive the service).
 * Return: 0, or -errno from listening (the message names the socket).
 */
int svc_create(struct evloop *loop, const struct svc_options *opts, struct svc **out);
void svc_destroy(struct svc *svc);

/* `traced` (also tracebox's applet). */
int traced_main(int argc, char **argv);

#endif
