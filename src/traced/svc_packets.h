/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_packets.h - the packets the service writes itself: clock snapshots,
 * system info, the session's trace config, the sync marker, the trace
 * uuid and lifecycle events. Each writer fills one TracePacket already
 * begun by the caller and stamps the service's trusted fields.
 */
#ifndef PFC_TRACED_SVC_PACKETS_H
#define PFC_TRACED_SVC_PACKETS_H

#include <stddef.h>
#include <stdint.h>

#include "base/clock.h"
#include "protozero/protozero.h"

struct svc_sync_round;

/* Packets written by the service use this sequence id. */
#define SVC_PACKET_SEQUENCE_ID 1
/* The 16-byte synchronization marker readers use to resync a stream. */
extern const uint8_t svc_sync_marker[16];

/* Stamps trusted_uid and trusted_packet_sequence_id = 1. */
void svc_stamp_trusted(struct pz_msg *pkt, uint32_t uid);
/* timestamp = the snapshot's BOOTTIME; clock_snapshot of its six clocks. */
void svc_write_clock_snapshot(struct pz_msg *pkt, uint32_t uid, const struct clock_snapshot *cs);
/* A remote machine's SystemInfo (bytes from InitRelay), stamped with its id. */
void svc_write_remote_system_info(struct pz_msg *pkt, uint32_t uid, uint32_t machine_id,
				  const uint8_t *system_info, size_t len);
/* One clock-sync round (PING, UPDATE) as a RemoteClockSync packet. */
void svc_write_remote_clock_sync(struct pz_msg *pkt, uint32_t uid, const struct svc_sync_round *r);
/* uname, page size, cpus, RAM, timezone, service version, machine name. */
void svc_write_system_info(struct pz_msg *pkt, uint32_t uid, const char *machine_name);
void svc_write_trace_config(struct pz_msg *pkt, uint32_t uid, const uint8_t *cfg, size_t len);
void svc_write_sync_marker(struct pz_msg *pkt, uint32_t uid);
void svc_write_trace_uuid(struct pz_msg *pkt, uint32_t uid, uint64_t msb, uint64_t lsb);
/* A TracingServiceEvent with one boolean member set, e.g.
 * PB_TRACING_SERVICE_EVENT__TRACING_STARTED. */
void svc_write_service_event(struct pz_msg *pkt, uint32_t uid, uint32_t event_field);

/* $PERFETTO_MACHINE_NAME, else the uname sysname (as Perfetto does). */
const char *svc_machine_name(void);

#endif
