// SPDX-License-Identifier: Apache-2.0
/*
 * svc_gc.c - keeps service-wide bookkeeping from growing over a daemon's
 * life: the (machine, producer, writer) -> trusted_packet_sequence_id map
 * loses the entries of producers that are gone once no session is left
 * that could still hold their chunks. Called when a producer goes and when
 * a session is freed; ids are never reused, so a trace never sees one id
 * stand for two sequences.
 */
#include "traced/svc_int.h"

/* The producer id inside a sequence key (see svc_sequence_id()). */
static uint32_t key_producer(uint64_t key)
{
	return (uint32_t)(key >> 16) & 0xffffff;
}

void svc_gc_sequence_ids(struct svc *svc)
{
	struct hmap_iter it;
	uint64_t key;

	/* A session's buffers may hold a gone producer's chunks until it ends. */
	if (svc->n_sessions)
		return;
	hmap_iter_init(&it, &svc->sequence_ids);
	while (hmap_iter_next(&it, &key, NULL)) {
		if (!svc_producer_by_id(svc, key_producer(key)))
			hmap_iter_del(&it);
	}
}
