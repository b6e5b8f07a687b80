/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sock_default.h - where producers and consumers meet traced when nobody
 * says otherwise, as Perfetto decides it on Linux: the environment
 * variable, else /run/perfetto/... when that directory is usable, else
 * /tmp/perfetto-{producer,consumer}.
 */
#ifndef PFC_BASE_SOCK_DEFAULT_H
#define PFC_BASE_SOCK_DEFAULT_H

/* $PERFETTO_PRODUCER_SOCK_NAME (may be a comma-separated list for traced). */
const char *sock_default_producer(void);
/* Where a producer connects: the first entry of that list. */
const char *sock_default_producer_for_client(void);
/* $PERFETTO_CONSUMER_SOCK_NAME. */
const char *sock_default_consumer(void);

#endif
