// SPDX-License-Identifier: Apache-2.0
/*
 * svc_read.c - getting a session's data out: the service's own packets
 * first (clock snapshot, config, uuid, system info, events, triggers), then
 * every buffer's packets, each checked (producers may not write trusted or
 * service-only fields) and stamped with the trusted fields of the sequence
 * it came from. Output goes to a consumer as ReadBuffers replies of bounded
 * size, or into the session's write_into_file fd.
 */
#include "traced/svc_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base/evloop.h"
#include "base/file.h"
#include "base/log.h"
#include "ipc/consumer_port.pb-c.h"
#include "pb_fields.h"
#include "traced/svc_packets.h"

/* Fields only the service may set; a producer packet carrying one is dropped. */
static const uint32_t k_reserved_fields[] = {
	PB_TRACE_PACKET__TRUSTED_UID,
	PB_TRACE_PACKET__TRUSTED_PACKET_SEQUENCE_ID,
	PB_TRACE_PACKET__TRACE_CONFIG,
	PB_TRACE_PACKET__TRACE_STATS,
	PB_TRACE_PACKET__SYNCHRONIZATION_MARKER,
	PB_TRACE_PACKET__COMPRESSED_PACKETS,
	PB_TRACE_PACKET__SERVICE_EVENT,
	PB_TRACE_PACKET__TRUSTED_PID,
	PB_TRACE_PACKET__MACHINE_ID,
	PB_TRACE_PACKET__TRACE_PROVENANCE,
	PB_TRACE_PACKET__PROTOVMS,
	PB_TRACE_PACKET__ZSTD_COMPRESSED_PACKETS,
};

/* Where packets go: a consumer's ReadBuffers stream or a file. */
struct sink {
	struct svc *svc;
	/* consumer: packets are encoded straight into the reply frames */
	struct ipc_host *host;
	const struct ipc_call *call;
	struct ipc_raw_reply rr;
	struct pz_msg *proto;       /* the open ReadBuffersResponse, if any */
	size_t sent_bytes;          /* packet bytes put into replies so far */
	size_t budget;              /* stop after this many (0 = no limit) */
	/* file */
	int fd;
	struct buf out;
	uint64_t *bytes_written;
	uint64_t max_bytes;         /* max_file_size_bytes; 0 = no limit */
	/* TraceConfig.compression: packets go through zlib into one
	 * compressed_packets packet per batch (as Perfetto's deflate). */
	bool compress;
	bool z_open;
	z_stream zs;
	struct buf zout;
	size_t z_in;
};

/* Uncompressed bytes per compressed_packets packet. */
#define COMPRESS_BATCH_BYTES (1u << 20)

/* A Slice needs at most this beyond its data: tags, lengths, the last flag. */
#define SLICE_FRAMING_BYTES 16u
/* Below this much room a frame is sent rather than filled with tiny slices. */
#define MIN_SLICE_ROOM 256u

static int sink_end_reply(struct sink *k, bool has_more)
{
	if (!k->proto)
		return 0;
	k->proto = NULL;
	return ipc_host_reply_end(&k->rr, has_more);
}

static int sink_open_reply(struct sink *k)
{
	if (k->proto)
		return 0;
	return ipc_host_reply_begin(k->host, k->call, &k->rr, &k->proto);
}

/* Writes one packet as ReadBuffersResponse slices, starting new frames as they fill. */
static int sink_consumer_packet(struct sink *k, const struct tb_slice *slices, size_t n,
				const uint8_t *suffix, size_t suffix_len, size_t total)
{
	struct tb_slice extra = {suffix, suffix_len};
	size_t piece = 0, piece_off = 0, left = total;
	int rc;

	do {
		uint8_t hdr[1 + PZ_MAX_VARINT_BYTES];
		struct pz_msg sl;
		size_t room, take, h;

		rc = sink_open_reply(k);
		if (rc < 0)
			return rc;
		room = ipc_raw_reply_room(&k->rr);
		if (room < MIN_SLICE_ROOM + SLICE_FRAMING_BYTES) {
			rc = sink_end_reply(k, true);
			if (rc < 0)
				return rc;
			continue;
		}
		take = left < room - SLICE_FRAMING_BYTES ? left : room - SLICE_FRAMING_BYTES;
		pz_begin_nested(k->proto, PB_READ_BUFFERS_RESPONSE__SLICES, &sl);
		hdr[0] = (uint8_t)pz_make_tag(PB_READ_BUFFERS_RESPONSE_SLICE__DATA, PZ_WIRE_LEN);
		h = 1 + pz_varint_encode(take, hdr + 1);
		pz_append_raw(&sl, hdr, h);
		left -= take;
		/* Copy @take bytes from the packet's pieces (buffer slices, then the suffix). */
		while (take) {
			const struct tb_slice *p = piece < n ? &slices[piece] : &extra;
			size_t avail = p->size - piece_off, c = avail < take ? avail : take;

			pz_append_raw(&sl, p->data + piece_off, c);
			piece_off += c;
			take -= c;
			if (piece_off == p->size) {
				piece++;
				piece_off = 0;
			}
		}
		if (left == 0)
			pz_append_bool(&sl, PB_READ_BUFFERS_RESPONSE_SLICE__LAST_SLICE_FOR_PACKET, true);
		pz_end(&sl);
	} while (left);
	k->sent_bytes += total;
	return 0;
}

static int sink_file_flush(struct sink *k)
{
	int rc = 0;

	if (k->out.len) {
		rc = file_write_all(k->fd, k->out.data, k->out.len);
		if (rc == 0 && k->bytes_written)
			*k->bytes_written += k->out.len;
		buf_reset(&k->out);
	}
	return rc;
}

/* Emits one packet made of @slices plus @suffix (the trusted fields). */
static int sink_packet_plain(struct sink *k, const struct tb_slice *slices, size_t n,
			     const uint8_t *suffix, size_t suffix_len)
{
	uint8_t hdr[1 + PZ_MAX_VARINT_BYTES];
	size_t total = suffix_len, i, h;
	int rc = 0;

	for (i = 0; i < n; i++)
		total += slices[i].size;
	if (k->fd >= 0) {
		hdr[0] = (uint8_t)pz_make_tag(PB_TRACE__PACKET, PZ_WIRE_LEN);
		h = 1 + pz_varint_encode(total, hdr + 1);
		/* The file never grows past max_file_size_bytes: stop before. */
		if (k->max_bytes && *k->bytes_written + k->out.len + h + total > k->max_bytes)
			return -EFBIG;
		rc = buf_append(&k->out, hdr, h);
		for (i = 0; i < n && !rc; i++)
			rc = buf_append(&k->out, slices[i].data, slices[i].size);
		if (!rc && suffix_len)
			rc = buf_append(&k->out, suffix, suffix_len);
		if (!rc && k->out.len >= (1u << 20))
			rc = sink_file_flush(k);
		return rc;
	}
	return sink_consumer_packet(k, slices, n, suffix, suffix_len, total);
}

/* Runs deflate over @len bytes (or finishes with @flush = Z_FINISH). */
static int z_feed(struct sink *k, const void *data, size_t len, int flush)
{
	int zr;

	k->zs.next_in = (Bytef *)(uintptr_t)data;
	k->zs.avail_in = (uInt)len;
	do {
		if (buf_reserve(&k->zout, 64 * 1024) < 0)
			return -ENOMEM;
		k->zs.next_out = k->zout.data + k->zout.len;
		k->zs.avail_out = (uInt)(k->zout.cap - k->zout.len);
		zr = deflate(&k->zs, flush);
		k->zout.len = (size_t)(k->zs.next_out - k->zout.data);
		if (zr == Z_STREAM_ERROR)
			return -EIO;
	} while (k->zs.avail_in || (flush == Z_FINISH && zr != Z_STREAM_END));
	return 0;
}

/* Ends the current compressed batch and emits it as one packet. */
static int sink_flush_compressed(struct sink *k)
{
	uint8_t hdr[2 * PZ_MAX_VARINT_BYTES];
	struct tb_slice sl[2];
	size_t h;
	int rc;

	if (!k->z_open)
		return 0;
	k->z_open = false;
	rc = z_feed(k, NULL, 0, Z_FINISH);
	deflateEnd(&k->zs);
	if (rc < 0)
		return rc;
	/* TracePacket { compressed_packets: <zlib of Trace-framed packets> };
	 * the tag of field 50 takes two bytes. */
	h = pz_varint_encode(pz_make_tag(PB_TRACE_PACKET__COMPRESSED_PACKETS, PZ_WIRE_LEN), hdr);
	h += pz_varint_encode(k->zout.len, hdr + h);
	sl[0].data = hdr;
	sl[0].size = h;
	sl[1].data = k->zout.data;
	sl[1].size = k->zout.len;
	rc = sink_packet_plain(k, sl, 2, NULL, 0);
	buf_reset(&k->zout);
	k->z_in = 0;
	return rc;
}

static int sink_packet(struct sink *k, const struct tb_slice *slices, size_t n,
		       const uint8_t *suffix, size_t suffix_len)
{
	uint8_t hdr[1 + PZ_MAX_VARINT_BYTES];
	size_t total = suffix_len, i;
	int rc;

	if (!k->compress)
		return sink_packet_plain(k, slices, n, suffix, suffix_len);
	if (!k->z_open) {
		memset(&k->zs, 0, sizeof(k->zs));
		if (deflateInit(&k->zs, 6) != Z_OK)
			return sink_packet_plain(k, slices, n, suffix, suffix_len);
		k->z_open = true;
	}
	for (i = 0; i < n; i++)
		total += slices[i].size;
	/* Inside, the packets are framed as a Trace, as in a file. */
	hdr[0] = (uint8_t)pz_make_tag(PB_TRACE__PACKET, PZ_WIRE_LEN);
	rc = z_feed(k, hdr, 1 + pz_varint_encode(total, hdr + 1), Z_NO_FLUSH);
	for (i = 0; i < n && !rc; i++)
		rc = z_feed(k, slices[i].data, slices[i].size, Z_NO_FLUSH);
	if (!rc && suffix_len)
		rc = z_feed(k, suffix, suffix_len, Z_NO_FLUSH);
	k->z_in += total;
	if (!rc && k->z_in >= COMPRESS_BATCH_BYTES)
		rc = sink_flush_compressed(k);
	return rc;
}

/* Deflate when the config asks for it (zstd is not built in: deflate then,
 * or nothing if only zstd was asked for). */
static bool wants_compression(const struct svc_session *s)
{
	const Perfetto__Protos__TraceConfig *c = s->config;

	bool deflate = c->compression && c->compression->deflate;

	/* compression_type is deprecated, but older configs still set it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	deflate = deflate || (c->has_compression_type && c->compression_type == 1);
#pragma GCC diagnostic pop
	return deflate;
}

/* ------------------------------------------------- service packets ---- */

/* Writes one service packet built by @fill into the sink. */
static int emit_service_packet(struct sink *k, uint32_t uid,
			       void (*fill)(struct pz_msg *, uint32_t, const void *), const void *arg)
{
	uint8_t stack[8192];
	struct pz_chunks c;
	struct pz_msg pkt;
	struct tb_slice sl;
	int rc;

	rc = pz_chunks_init(&c, sizeof(stack), 16u << 20);
	if (rc < 0)
		return rc;
	pz_msg_begin(&pkt, &c.s, NULL);
	fill(&pkt, uid, arg);
	pz_end(&pkt);
	if (!pz_stream_ok(&c.s) || pz_chunks_copy(&c, stack, sizeof(stack)) < 0) {
		/* Larger than the stack copy: flatten into the heap. */
		size_t n = pz_chunks_size(&c);
		uint8_t *heap = malloc(n ? n : 1);

		if (!heap || !pz_stream_ok(&c.s)) {
			free(heap);
			pz_chunks_fini(&c);
			return -ENOMEM;
		}
		pz_chunks_copy(&c, heap, n);
		sl.data = heap;
		sl.size = n;
		rc = sink_packet(k, &sl, 1, NULL, 0);
		free(heap);
	} else {
		sl.data = stack;
		sl.size = pz_chunks_size(&c);
		rc = sink_packet(k, &sl, 1, NULL, 0);
	}
	pz_chunks_fini(&c);
	return rc;
}

static void fill_clock(struct pz_msg *pkt, uint32_t uid, const void *arg)
{
	svc_write_clock_snapshot(pkt, uid, arg);
}

struct remote_info_arg {
	uint32_t machine_id;
	const uint8_t *data;
	size_t len;
};

static void fill_remote_system_info(struct pz_msg *pkt, uint32_t uid, const void *arg)
{
	const struct remote_info_arg *a = arg;

	svc_write_remote_system_info(pkt, uid, a->machine_id, a->data, a->len);
}

static void fill_round(struct pz_msg *pkt, uint32_t uid, const void *arg)
{
	svc_write_remote_clock_sync(pkt, uid, arg);
}

static void fill_sync(struct pz_msg *pkt, uint32_t uid, const void *arg)
{
	(void)arg;
	svc_write_sync_marker(pkt, uid);
}

static void fill_config(struct pz_msg *pkt, uint32_t uid, const void *arg)
{
	const struct svc_session *s = arg;

	svc_write_trace_config(pkt, uid, s->config_bytes, s->config_len);
}

static void fill_uuid(struct pz_msg *pkt, uint32_t uid, const void *arg)
{
	const struct svc_session *s = arg;

	svc_write_trace_uuid(pkt, uid, s->uuid_msb, s->uuid_lsb);
}

static void fill_system_info(struct pz_msg *pkt, uint32_t uid, const void *arg)
{
	const struct svc *svc = arg;

	svc_write_system_info(pkt, uid, svc->machine_name);
}

struct trigger_arg {
	const struct svc_session *s;
	size_t idx;
};

static void fill_trigger(struct pz_msg *pkt, uint32_t uid, const void *arg)
{
	const struct trigger_arg *t = arg;
	struct pz_msg trig;

	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP, t->s->fired_trigger_ts[t->idx]);
	svc_stamp_trusted(pkt, uid);
	pz_begin_nested(pkt, PB_TRACE_PACKET__TRIGGER, &trig);
	pz_append_string(&trig, PB_TRIGGER__TRIGGER_NAME, t->s->fired_triggers[t->idx]);
	pz_append_string(&trig, PB_TRIGGER__PRODUCER_NAME, t->s->fired_trigger_producers[t->idx]);
	pz_append_varint(&trig, PB_TRIGGER__TRUSTED_PRODUCER_UID, t->s->fired_trigger_uids[t->idx]);
	pz_end(&trig);
}

static void fill_clone_trigger(struct pz_msg *pkt, uint32_t uid, const void *arg)
{
	const struct svc_trigger_info *t = arg;
	struct pz_msg trig;

	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP, t->boot_time_ns);
	svc_stamp_trusted(pkt, uid);
	pz_begin_nested(pkt, PB_TRACE_PACKET__CLONE_SNAPSHOT_TRIGGER, &trig);
	pz_append_string(&trig, PB_TRIGGER__TRIGGER_NAME, t->name);
	pz_append_string(&trig, PB_TRIGGER__PRODUCER_NAME, t->producer_name);
	pz_append_varint(&trig, PB_TRIGGER__TRUSTED_PRODUCER_UID,
			 (uint64_t)(int64_t)(int32_t)t->producer_uid);
	pz_append_varint(&trig, PB_TRIGGER__STOP_DELAY_MS, t->delay_ms);
	pz_end(&trig);
}

struct stats_arg {
	struct svc *svc;
	struct svc_session *s;
};

static void fill_stats(struct pz_msg *pkt, uint32_t uid, const void *arg)
{
	const struct stats_arg *a = arg;
	struct pz_msg st;

	svc_stamp_trusted(pkt, uid);
	pz_begin_nested(pkt, PB_TRACE_PACKET__TRACE_STATS, &st);
	svc_write_trace_stats(a->svc, a->s, &st);
	pz_end(&st);
}

void svc_write_trace_stats(struct svc *svc, struct svc_session *s, struct pz_msg *msg)
{
	struct svc_producer *p;
	struct svc_session *it;
	uint64_t n_ds = 0, n_buffers = 0;
	size_t i;

	if (s) {
		for (i = 0; i < s->n_buffers; i++) {
			struct pz_msg b;

			pz_begin_nested(msg, PB_TRACE_STATS__BUFFER_STATS, &b);
			tb_write_stats(s->buffers[i].tb, &b);
			pz_end(&b);
		}
	}
	for (p = svc->producers; p; p = p->next)
		n_ds += p->n_data_sources;
	for (it = svc->sessions; it; it = it->next)
		n_buffers += it->n_buffers;
	pz_append_varint(msg, PB_TRACE_STATS__PRODUCERS_CONNECTED, svc->n_producers);
	pz_append_varint(msg, PB_TRACE_STATS__PRODUCERS_SEEN, svc->producers_seen);
	pz_append_varint(msg, PB_TRACE_STATS__DATA_SOURCES_REGISTERED, n_ds);
	pz_append_varint(msg, PB_TRACE_STATS__DATA_SOURCES_SEEN, svc->data_sources_seen);
	pz_append_varint(msg, PB_TRACE_STATS__TRACING_SESSIONS, svc->n_sessions);
	pz_append_varint(msg, PB_TRACE_STATS__TOTAL_BUFFERS, n_buffers);
	pz_append_varint(msg, PB_TRACE_STATS__CHUNKS_DISCARDED, svc->chunks_discarded);
	pz_append_varint(msg, PB_TRACE_STATS__PATCHES_DISCARDED, svc->patches_discarded);
	if (s) {
		pz_append_varint(msg, PB_TRACE_STATS__INVALID_PACKETS, s->invalid_packets);
		pz_append_varint(msg, PB_TRACE_STATS__FLUSHES_REQUESTED, s->flushes_requested);
		pz_append_varint(msg, PB_TRACE_STATS__FLUSHES_SUCCEEDED, s->flushes_succeeded);
		pz_append_varint(msg, PB_TRACE_STATS__FLUSHES_FAILED, s->flushes_failed);
	}
}

/* Packets queued between reads (snapshots, stats, events) are kept as
 * [u32 length][packet] records in pending_service_packets. */
static void queue_packet(struct svc *svc, struct svc_session *s,
			 void (*fill)(struct pz_msg *, uint32_t, const void *), const void *arg)
{
	struct pz_chunks c;
	struct pz_msg pkt;
	uint32_t n;
	struct buf *q = &s->pending_service_packets;

	if (q->len > (4u << 20) || pz_chunks_init(&c, 4096, 1u << 20) < 0)
		return;
	pz_msg_begin(&pkt, &c.s, NULL);
	fill(&pkt, (uint32_t)getuid(), arg);
	pz_end(&pkt);
	n = (uint32_t)pz_chunks_size(&c);
	if (pz_stream_ok(&c.s) && buf_reserve(q, sizeof(n) + n) == 0) {
		memcpy(q->data + q->len, &n, sizeof(n));
		pz_chunks_copy(&c, q->data + q->len + sizeof(n), n);
		q->len += sizeof(n) + n;
	}
	pz_chunks_fini(&c);
	(void)svc;
}

void svc_queue_trace_stats(struct svc *svc, struct svc_session *s)
{
	struct stats_arg a = {svc, s};

	queue_packet(svc, s, fill_stats, &a);
}

static void fill_event(struct pz_msg *pkt, uint32_t uid, const void *arg)
{
	svc_write_service_event(pkt, uid, *(const uint32_t *)arg);
}

void svc_queue_service_event(struct svc *svc, struct svc_session *s, uint32_t field)
{
	const Perfetto__Protos__TraceConfig__BuiltinDataSource *b = s->config->builtin_data_sources;

	if (b && b->has_disable_service_events && b->disable_service_events)
		return;
	queue_packet(svc, s, fill_event, &field);
}

static int emit_queued(struct sink *k, struct svc_session *s)
{
	struct buf *q = &s->pending_service_packets;
	size_t off = 0;
	int rc = 0;

	while (off + sizeof(uint32_t) <= q->len && !rc) {
		struct tb_slice sl;
		uint32_t n;

		memcpy(&n, q->data + off, sizeof(n));
		sl.data = q->data + off + sizeof(n);
		sl.size = n;
		rc = sink_packet(k, &sl, 1, NULL, 0);
		off += sizeof(n) + n;
	}
	buf_reset(q);
	return rc;
}

static bool clocks_disabled(const struct svc_session *s)
{
	const Perfetto__Protos__TraceConfig__BuiltinDataSource *b = s->config->builtin_data_sources;

	return b && b->has_disable_clock_snapshotting && b->disable_clock_snapshotting;
}

/*
 * Clock snapshots in the order they were taken: the one from the start of
 * the session (once), then the ring. A session read before it ever took one
 * (a clone, or a read before start) gets one taken now.
 */
static int emit_clock_snapshots(struct sink *k, struct svc_session *s, uint32_t uid)
{
	struct clock_snapshot now;
	size_t i;
	int rc = 0;

	if (clocks_disabled(s))
		return 0;
	if (s->has_initial_clocks) {
		s->has_initial_clocks = false;
		s->did_emit_clocks = true;
		rc = emit_service_packet(k, uid, fill_clock, &s->initial_clocks);
	}
	for (i = 0; i < s->n_clock_ring && !rc; i++) {
		s->did_emit_clocks = true;
		rc = emit_service_packet(k, uid, fill_clock, &s->clock_ring[i]);
	}
	s->n_clock_ring = 0;
	if (!rc && !s->did_emit_clocks) {
		s->did_emit_clocks = true;
		clock_snapshot_capture(&now);
		rc = emit_service_packet(k, uid, fill_clock, &now);
	}
	return rc;
}

static bool sysinfo_emitted(const struct svc_session *s, uint32_t machine_id)
{
	size_t i;

	for (i = 0; i < s->n_sysinfo_machines; i++) {
		if (s->sysinfo_machines[i] == machine_id)
			return true;
	}
	return false;
}

/* Each remote machine's SystemInfo, once per session (also for machines
 * whose relay connected after the first read). */
static int emit_remote_system_info(struct sink *k, struct svc_session *s, uint32_t uid)
{
	struct svc_relay *r;
	int rc = 0;

	for (r = k->svc->relays; r && !rc; r = r->next) {
		struct remote_info_arg a = {r->machine_id, r->system_info, r->system_info_len};

		if (!r->system_info || sysinfo_emitted(s, r->machine_id))
			continue;
		if (s->n_sysinfo_machines == s->cap_sysinfo_machines) {
			size_t cap = s->cap_sysinfo_machines ? 2 * s->cap_sysinfo_machines : 4;
			uint32_t *n = realloc(s->sysinfo_machines, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			s->sysinfo_machines = n;
			s->cap_sysinfo_machines = cap;
		}
		s->sysinfo_machines[s->n_sysinfo_machines++] = r->machine_id;
		rc = emit_service_packet(k, uid, fill_remote_system_info, &a);
	}
	return rc;
}

/* Clock-sync rounds of remote machines, one RemoteClockSync packet each. */
static int emit_rounds(struct sink *k, struct svc_session *s, uint32_t uid)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < s->n_rounds && !rc; i++)
		rc = emit_service_packet(k, uid, fill_round, &s->rounds[i]);
	s->n_rounds = 0;
	return rc;
}

static int emit_service_packets(struct sink *k, struct svc_session *s)
{
	const Perfetto__Protos__TraceConfig__BuiltinDataSource *b = s->config->builtin_data_sources;
	uint32_t uid = (uint32_t)getuid();
	int rc;

	rc = emit_clock_snapshots(k, s, uid);
	if (!rc && !s->did_emit_initial_packets) {
		s->did_emit_initial_packets = true;
		rc = emit_service_packet(k, uid, fill_sync, NULL);
		if (!rc && !(b && b->has_disable_trace_config && b->disable_trace_config))
			rc = emit_service_packet(k, uid, fill_config, s);
		if (!rc)
			rc = emit_service_packet(k, uid, fill_uuid, s);
		if (!rc && !(b && b->has_disable_system_info && b->disable_system_info))
			rc = emit_service_packet(k, uid, fill_system_info, k->svc);
	}
	if (!rc && !(b && b->has_disable_system_info && b->disable_system_info))
		rc = emit_remote_system_info(k, s, uid);
	if (!rc && s->has_clone_trigger && !s->did_emit_clone_trigger) {
		s->did_emit_clone_trigger = true;
		rc = emit_service_packet(k, uid, fill_clone_trigger, &s->clone_trigger);
	}
	while (!rc && s->n_fired_triggers_emitted < s->n_fired_triggers) {
		struct trigger_arg t = {s, s->n_fired_triggers_emitted++};

		rc = emit_service_packet(k, uid, fill_trigger, &t);
	}
	if (!rc)
		rc = emit_queued(k, s);
	if (!rc && !clocks_disabled(s))
		rc = emit_rounds(k, s, uid);
	return rc;
}

/* ---------------------------------------------------- buffer packets ---- */

/* The packet's top level must parse and must not set a reserved field. */
static bool packet_is_valid(struct svc *svc, const struct tb_packet *pk)
{
	const uint8_t *data = pk->slices[0].data;
	size_t len = pk->slices[0].size, i, off = 0;
	struct pz_reader r;
	struct pz_field f;
	int rc;

	if (pk->n_slices > 1) {
		if (buf_reserve(&svc->scratch, pk->size_bytes) < 0)
			return false;
		for (i = 0; i < pk->n_slices; i++) {
			memcpy(svc->scratch.data + off, pk->slices[i].data, pk->slices[i].size);
			off += pk->slices[i].size;
		}
		data = svc->scratch.data;
		len = off;
	}
	pz_reader_init(&r, data, len);
	while ((rc = pz_reader_next(&r, &f)) > 0) {
		for (i = 0; i < PFC_ARRAY_SIZE(k_reserved_fields); i++) {
			if (f.id == k_reserved_fields[i])
				return false;
		}
	}
	return rc == 0;
}

static size_t trusted_suffix(struct svc *svc, const struct tb_packet *pk, uint8_t *out)
{
	uint32_t seq = svc_sequence_id(svc, pk->client.machine_id, pk->client.producer_id,
				       pk->writer_id);
	size_t n = 0;

#define PUT_VARINT(field, v)                                                         \
	do {                                                                         \
		n += pz_varint_encode(pz_make_tag((field), PZ_WIRE_VARINT), out + n); \
		n += pz_varint_encode((v), out + n);                                 \
	} while (0)
	PUT_VARINT(PB_TRACE_PACKET__TRUSTED_UID, (uint64_t)(int64_t)(int32_t)pk->client.uid);
	PUT_VARINT(PB_TRACE_PACKET__TRUSTED_PACKET_SEQUENCE_ID, seq);
	PUT_VARINT(PB_TRACE_PACKET__TRUSTED_PID, (uint64_t)(int64_t)pk->client.pid);
	if (pk->client.machine_id)
		PUT_VARINT(PB_TRACE_PACKET__MACHINE_ID, pk->client.machine_id);
	if (pk->previous_packet_dropped)
		PUT_VARINT(PB_TRACE_PACKET__PREVIOUS_PACKET_DROPPED, pk->previous_packet_dropped);
#undef PUT_VARINT
	return n;
}

static int emit_buffers(struct sink *k, struct svc_session *s, bool is_final)
{
	uint8_t suffix[6 * (2 * PZ_MAX_VARINT_BYTES)];
	struct tb_packet pk;
	size_t i;
	int rc = 0, r;

	if (s->discard_data)
		return 0;
	for (i = 0; i < s->n_buffers && !rc; i++) {
		tb_begin_read(s->buffers[i].tb, is_final);
		while ((r = tb_read_next_packet(s->buffers[i].tb, &pk)) > 0) {
			if (pk.n_slices == 0 || !packet_is_valid(k->svc, &pk)) {
				s->invalid_packets++;
				continue;
			}
			rc = sink_packet(k, pk.slices, pk.n_slices, suffix,
					 trusted_suffix(k->svc, &pk, suffix));
			if (rc < 0)
				break;
			/* Yield to the loop; the next turn resumes with the next packet. */
			if (k->budget && k->sent_bytes >= k->budget) {
				rc = -EAGAIN;
				break;
			}
		}
	}
	return rc;
}

static void sink_fini(struct sink *k)
{
	if (k->proto)
		ipc_host_reply_abort(&k->rr);
	if (k->z_open)
		deflateEnd(&k->zs);
	buf_fini(&k->zout);
	buf_fini(&k->out);
}

static void on_read_retry(void *user);

/* Continues a paced read once the consumer's socket has drained. */
static void schedule_read(struct svc *svc, struct svc_session *s)
{
	struct svc_timer_ctx *t = svc_session_timer_ctx(svc, s);
	uint64_t id = 0;

	if (s->read_timer || !t)
		return;
	if (evloop_add_timer(svc->loop, SVC_READ_RETRY_MS, 0, on_read_retry, t, &id) == 0)
		s->read_timer = id;
}

static void on_read_retry(void *user)
{
	struct svc_timer_ctx *t = user;
	struct svc *svc = t->svc;
	struct svc_session *s = svc_session_by_id(svc, t->session_id);

	if (!s || !s->read_pending)
		return;
	s->read_timer = 0;
	if (ipc_host_pending_bytes(svc->consumer_host, s->read_call.client_id) >
	    SVC_READ_MAX_QUEUED_BYTES) {
		schedule_read(svc, s);
		return;
	}
	svc_read_to_consumer(svc, s, &s->read_call);
}

void svc_read_to_consumer(struct svc *svc, struct svc_session *s, const struct ipc_call *call)
{
	struct sink k = {.svc = svc, .host = svc->consumer_host, .call = call, .fd = -1,
			 .budget = SVC_READ_STEP_BYTES};
	bool final = s->state == SESSION_STOPPED;
	struct ipc_call c = *call;
	int rc;

	k.call = &c;
	k.compress = wants_compression(s);
	if (svc_session_reads_nothing(s)) {
		/* CLONE_SNAPSHOT: the data leaves only through clones (Perfetto). */
		s->read_pending = false;
		if (sink_open_reply(&k) == 0)
			sink_end_reply(&k, false);
		sink_fini(&k);
		return;
	}
	rc = emit_service_packets(&k, s);
	if (!rc)
		rc = emit_buffers(&k, s, final);
	if (rc == -EAGAIN) {
		/* What was compressed so far goes out before the pause. */
		rc = sink_flush_compressed(&k);
		if (rc == 0)
			rc = sink_end_reply(&k, true);
		if (rc == 0) {
			s->read_call = c;
			s->read_pending = true;
			schedule_read(svc, s);
			sink_fini(&k);
			return;
		}
	}
	s->read_pending = false;
	if (!rc && final) {
		struct stats_arg a = {svc, s};

		rc = emit_service_packet(&k, (uint32_t)getuid(), fill_stats, &a);
	}
	if (!rc)
		rc = sink_flush_compressed(&k);
	if (rc < 0 && rc != -ENOTCONN)
		LOG_W("session %llu: reading buffers failed: %s", (unsigned long long)s->id,
		      strerror(-rc));
	if (rc != -ENOTCONN && sink_open_reply(&k) == 0)
		sink_end_reply(&k, false);
	sink_fini(&k);
}

int svc_read_to_file(struct svc *svc, struct svc_session *s, bool is_final)
{
	struct sink k = {.svc = svc, .fd = s->file_fd, .bytes_written = &s->bytes_written_into_file,
			 .max_bytes = s->max_file_size_bytes};
	int rc, werr;

	k.compress = wants_compression(s);
	rc = emit_service_packets(&k, s);
	if (!rc)
		rc = emit_buffers(&k, s, is_final);
	if (!rc && is_final) {
		struct stats_arg a = {svc, s};

		rc = emit_service_packet(&k, (uint32_t)getuid(), fill_stats, &a);
	}
	if (!rc)
		rc = sink_flush_compressed(&k);
	/* Whatever fitted is written, also when the size limit stopped us. */
	werr = sink_file_flush(&k);
	if (!rc)
		rc = werr;
	if (rc == -EFBIG)
		s->file_full = true;
	if (!rc && is_final)
		fdatasync(s->file_fd);
	if (rc < 0 && rc != -EFBIG)
		LOG_W("session %llu: writing the trace file failed: %s", (unsigned long long)s->id,
		      strerror(-rc));
	sink_fini(&k);
	return rc;
}
