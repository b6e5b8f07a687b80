// SPDX-License-Identifier: Apache-2.0
/*
 * svc_packets.c - writers for the service's own packets (see svc_packets.h).
 * They run once per session or per snapshot interval, never per producer
 * packet, so reading /proc or calling uname() here is fine.
 */
#include "traced/svc_packets.h"

#include "traced/svc_int.h"

#include <stdlib.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/version.h"
#include "pb_fields.h"

const uint8_t svc_sync_marker[16] = {0x82, 0x47, 0x7a, 0x76, 0xb2, 0x8d, 0x42, 0xba,
				     0x81, 0xdc, 0x33, 0x32, 0x6d, 0x57, 0xa0, 0x79};

void svc_stamp_trusted(struct pz_msg *pkt, uint32_t uid)
{
	pz_append_varint(pkt, PB_TRACE_PACKET__TRUSTED_UID, uid);
	pz_append_varint(pkt, PB_TRACE_PACKET__TRUSTED_PACKET_SEQUENCE_ID, SVC_PACKET_SEQUENCE_ID);
}

void svc_write_clock_snapshot(struct pz_msg *pkt, uint32_t uid, const struct clock_snapshot *cs)
{
	struct pz_msg snap, c;
	size_t i;

	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP, cs->clocks[0].ts_ns);
	svc_stamp_trusted(pkt, uid);
	pz_begin_nested(pkt, PB_TRACE_PACKET__CLOCK_SNAPSHOT, &snap);
	for (i = 0; i < CLOCK_SNAPSHOT_CLOCKS; i++) {
		pz_begin_nested(&snap, PB_CLOCK_SNAPSHOT__CLOCKS, &c);
		pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID, cs->clocks[i].id);
		pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP, cs->clocks[i].ts_ns);
		pz_end(&c);
	}
	pz_append_varint(&snap, PB_CLOCK_SNAPSHOT__PRIMARY_TRACE_CLOCK,
			 PBE_BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME);
	pz_end(&snap);
}

void svc_write_remote_system_info(struct pz_msg *pkt, uint32_t uid, uint32_t machine_id,
				  const uint8_t *system_info, size_t len)
{
	pz_append_bytes(pkt, PB_TRACE_PACKET__SYSTEM_INFO, system_info, len);
	pz_append_varint(pkt, PB_TRACE_PACKET__MACHINE_ID, machine_id);
	svc_stamp_trusted(pkt, uid);
}

static void write_readings(struct pz_msg *parent, uint32_t field,
			   const struct svc_clock_reading *r, size_t n)
{
	struct pz_msg snap, c;
	size_t i;

	pz_begin_nested(parent, field, &snap);
	for (i = 0; i < n; i++) {
		pz_begin_nested(&snap, PB_CLOCK_SNAPSHOT__CLOCKS, &c);
		pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID, r[i].clock_id);
		pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP, r[i].ts_ns);
		pz_end(&c);
	}
	pz_end(&snap);
}

static void write_exchange(struct pz_msg *sync, const struct svc_sync_exchange *x)
{
	struct pz_msg e;

	pz_begin_nested(sync, PB_REMOTE_CLOCK_SYNC__SYNCED_CLOCKS, &e);
	write_readings(&e, PB_REMOTE_CLOCK_SYNC_SYNCED_CLOCKS__CLIENT_CLOCKS, x->client, x->n_client);
	write_readings(&e, PB_REMOTE_CLOCK_SYNC_SYNCED_CLOCKS__HOST_CLOCKS, x->host, x->n_host);
	pz_end(&e);
}

void svc_write_remote_clock_sync(struct pz_msg *pkt, uint32_t uid, const struct svc_sync_round *r)
{
	struct pz_msg sync;

	/* As Perfetto: machine id and uid, no sequence (nothing else refers to it). */
	pz_append_varint(pkt, PB_TRACE_PACKET__MACHINE_ID, r->machine_id);
	pz_append_varint(pkt, PB_TRACE_PACKET__TRUSTED_UID, uid);
	pz_begin_nested(pkt, PB_TRACE_PACKET__REMOTE_CLOCK_SYNC, &sync);
	write_exchange(&sync, &r->ping);
	write_exchange(&sync, &r->update);
	pz_end(&sync);
}

const char *svc_machine_name(void)
{
	static __thread struct utsname u;
	const char *env = getenv("PERFETTO_MACHINE_NAME");

	/* Set but empty still counts, as in Perfetto. */
	if (env)
		return env;
	if (uname(&u) == 0)
		return u.sysname;
	return "Linux";
}

void svc_write_system_info(struct pz_msg *pkt, uint32_t uid, const char *machine_name)
{
	struct pz_msg si, un;
	struct utsname u;
	struct tm tm;
	time_t now = time(NULL);
	long page = sysconf(_SC_PAGESIZE), pages = sysconf(_SC_PHYS_PAGES);
	long ncpu = sysconf(_SC_NPROCESSORS_CONF), hz = sysconf(_SC_CLK_TCK);

	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP, clock_boottime_ns());
	svc_stamp_trusted(pkt, uid);
	pz_begin_nested(pkt, PB_TRACE_PACKET__SYSTEM_INFO, &si);
	if (uname(&u) == 0) {
		pz_begin_nested(&si, PB_SYSTEM_INFO__UTSNAME, &un);
		pz_append_string(&un, PB_UTSNAME__SYSNAME, u.sysname);
		pz_append_string(&un, PB_UTSNAME__VERSION, u.version);
		pz_append_string(&un, PB_UTSNAME__RELEASE, u.release);
		pz_append_string(&un, PB_UTSNAME__MACHINE, u.machine);
		pz_end(&un);
	}
	if (hz > 0)
		pz_append_varint(&si, PB_SYSTEM_INFO__HZ, (uint64_t)hz);
	pz_append_string(&si, PB_SYSTEM_INFO__TRACING_SERVICE_VERSION, PFC_VERSION_STRING);
	if (page > 0)
		pz_append_varint(&si, PB_SYSTEM_INFO__PAGE_SIZE, (uint64_t)page);
	if (localtime_r(&now, &tm))
		pz_append_int(&si, PB_SYSTEM_INFO__TIMEZONE_OFF_MINS, tm.tm_gmtoff / 60);
	if (ncpu > 0)
		pz_append_varint(&si, PB_SYSTEM_INFO__NUM_CPUS, (uint64_t)ncpu);
	if (page > 0 && pages > 0)
		pz_append_varint(&si, PB_SYSTEM_INFO__SYSTEM_RAM_BYTES,
				 (uint64_t)page * (uint64_t)pages);
	if (machine_name && *machine_name)
		pz_append_string(&si, PB_SYSTEM_INFO__MACHINE_NAME, machine_name);
	pz_end(&si);
}

void svc_write_trace_config(struct pz_msg *pkt, uint32_t uid, const uint8_t *cfg, size_t len)
{
	svc_stamp_trusted(pkt, uid);
	pz_append_bytes(pkt, PB_TRACE_PACKET__TRACE_CONFIG, cfg, len);
}

void svc_write_sync_marker(struct pz_msg *pkt, uint32_t uid)
{
	svc_stamp_trusted(pkt, uid);
	pz_append_bytes(pkt, PB_TRACE_PACKET__SYNCHRONIZATION_MARKER, svc_sync_marker,
			sizeof(svc_sync_marker));
}

void svc_write_trace_uuid(struct pz_msg *pkt, uint32_t uid, uint64_t msb, uint64_t lsb)
{
	struct pz_msg u;

	svc_stamp_trusted(pkt, uid);
	pz_begin_nested(pkt, PB_TRACE_PACKET__TRACE_UUID, &u);
	pz_append_int(&u, PB_TRACE_UUID__MSB, (int64_t)msb);
	pz_append_int(&u, PB_TRACE_UUID__LSB, (int64_t)lsb);
	pz_end(&u);
}

void svc_write_service_event(struct pz_msg *pkt, uint32_t uid, uint32_t event_field)
{
	struct pz_msg ev;

	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP, clock_boottime_ns());
	svc_stamp_trusted(pkt, uid);
	pz_begin_nested(pkt, PB_TRACE_PACKET__SERVICE_EVENT, &ev);
	pz_append_bool(&ev, event_field, true);
	pz_end(&ev);
}
