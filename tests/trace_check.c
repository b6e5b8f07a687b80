// SPDX-License-Identifier: Apache-2.0
/*
 * trace_check.c - test helper: reads a trace file written by perfetto or
 * traced and prints what it holds as key=value lines for the integration
 * scripts (packets by kind, the last TraceStats counters) and checks the
 * test producer's sequences: within each packet sequence, TestEvent
 * seq_value numbers must go 0, 1, 2... with no gap or duplicate.
 *   trace_check TRACE [--expect-seqs N] [--expect-per-seq N] [--allow-loss]
 *                     [--allow-head-loss] [--verify-payload] [--check-stats]
 *   --allow-loss       gaps anywhere are fine (duplicates never are).
 *                      unflagged_gaps= counts the gaps inside a sequence
 *                      whose next packet does not say previous_packet_dropped.
 *   --allow-head-loss  each sequence may start late (its oldest packets
 *                      were overwritten), but from its first packet on it
 *                      must be contiguous and end with the is_last packet.
 *   --verify-payload   walk each TestEvent's nested payload down to the
 *                      innermost single_string and check every filler byte
 *                      ('a' + (t*7 + seq*3 + i) % 26, t = counter, seq =
 *                      seq_value), and that the nesting depth counts down.
 *   --check-stats      the last TraceStats must add up: per buffer
 *                      chunks_written = chunks_read + chunks_overwritten
 *                      (+ discarded-on-read none) and bytes_written =
 *                      bytes_read + bytes_overwritten, and the producer
 *                      packets in the file cannot exceed bytes_read.
 * It also reports the multi-machine parts: remote_clock_syncs (packets),
 * remote_sync_rounds (PING/UPDATE pairs), remote_system_infos (SystemInfo
 * packets with a machine_id), machine_ids (distinct, sorted; of every
 * packet) and test_machine_ids (of the test producers' packets; those
 * with none, host producers', are counted in
 * test_packets_without_machine_id), the signed
 * client-minus-host BOOTTIME of every exchange (remote_sync_offset_min/max)
 * and the longest round trip of a round, host or client side
 * (remote_sync_round_max_ns), and
 * clock_snapshots_backwards (snapshots whose BOOTTIME is older than the one
 * before them in file order).
 * --print-seqs adds one line per test sequence: "seq id=N first=F last=L
 * packets=P inner_gaps=G dups=D" (seq_value range), for tests that split
 * one stream over several files.
 * --print-sync-rounds adds one line per clock-sync round: "sync_round
 * machine=M t1c=.. t1h=.. t2c=.. t2h=.." (BOOTTIME of the PING's client and
 * host readings, then the UPDATE's), for the clock-sync benchmark.
 * trace_check --boottime-now prints CLOCK_BOOTTIME in ns (what producers
 * stamp packets with) for scripts that compare against packet timestamps.
 * Exits 0 if the file parses and the expectations hold, 1 otherwise; the
 * reason is printed as why=... lines.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/file.h"
#include "base/hmap.h"
#include "base/inflate.h"
#include "pb_fields.h"
#include "protozero/protozero.h"

#define MAX_TRACE_BYTES (2ull << 30)
#define MAX_SEQS 4096
#define MAX_PIDS 64
#define MAX_BUFFERS 64

struct seq_state {
	uint64_t next_counter;
	uint64_t packets;
	uint64_t gaps;
	uint64_t inner_gaps; /* gaps after the first packet seen */
	uint64_t unflagged_gaps; /* inner gaps the next packet does not flag as a drop */
	uint64_t dups;
	uint64_t first;
	uint64_t last;
	bool has_last;       /* the is_last packet arrived */
	bool after_last;     /* something came after is_last */
};

struct buffer_stats {
	uint64_t bytes_written, bytes_overwritten, bytes_read, chunks_written, chunks_read;
	uint64_t chunks_overwritten, chunks_discarded, patches_failed, patches_succeeded;
	uint64_t abi_violations, write_wrap_count, padding_written, padding_cleared;
	uint64_t writer_packet_loss, buffer_size, chunks_rewritten, readaheads_failed;
};

static struct {
	uint64_t packets, test_packets, clock_snapshots, trace_configs, system_infos, trace_stats;
	uint64_t sync_markers, uuids, triggers, service_events, other, dropped_flags, bad_packets;
	uint32_t dropped_bits;
	uint64_t test_payload_bytes, test_packet_bytes;
	uint64_t payload_bad, filler_min, filler_max;
	uint64_t test_ts_min, test_ts_max, trigger_ts; /* TracePacket.timestamp */
	/* The last TraceStats. */
	struct buffer_stats bs[MAX_BUFFERS];
	size_t n_bs;
	uint64_t invalid_packets, svc_chunks_discarded, patches_discarded;
	uint64_t producers_connected, flushes_requested, flushes_succeeded, flushes_failed;
	char trigger_names[512];
	uint64_t remote_clock_syncs, remote_sync_rounds, remote_system_infos;
	int64_t sync_offset_min, sync_offset_max;
	uint64_t sync_round_max;
	bool has_sync_offset;
	uint64_t last_snapshot_ts, snapshots_backwards;
	uint32_t machine_ids[64], test_machine_ids[64];
	size_t n_machine_ids, n_test_machine_ids;
	uint64_t test_without_machine_id;
	struct seq_state seqs[MAX_SEQS];
	uint32_t seq_ids[MAX_SEQS];
	size_t n_seqs;
	int32_t pids[MAX_PIDS];
	size_t n_pids;
} g;

static struct seq_state *seq(uint32_t id)
{
	size_t i;

	for (i = 0; i < g.n_seqs; i++) {
		if (g.seq_ids[i] == id)
			return &g.seqs[i];
	}
	if (g.n_seqs == MAX_SEQS)
		return NULL;
	g.seq_ids[g.n_seqs] = id;
	memset(&g.seqs[g.n_seqs], 0, sizeof(g.seqs[0]));
	return &g.seqs[g.n_seqs++];
}

static void note_pid(int32_t pid)
{
	size_t i;

	for (i = 0; i < g.n_pids; i++) {
		if (g.pids[i] == pid)
			return;
	}
	if (g.n_pids < MAX_PIDS)
		g.pids[g.n_pids++] = pid;
}

static void read_buffer_stats(const uint8_t *p, size_t n)
{
	struct pz_field f[32];
	struct buffer_stats *b;

	if (g.n_bs == MAX_BUFFERS || pz_decode_table(p, n, f, 32) != PZ_OK)
		return;
	b = &g.bs[g.n_bs++];
	b->bytes_written = f[PB_TRACE_STATS_BUFFER_STATS__BYTES_WRITTEN].value;
	b->bytes_overwritten = f[PB_TRACE_STATS_BUFFER_STATS__BYTES_OVERWRITTEN].value;
	b->bytes_read = f[PB_TRACE_STATS_BUFFER_STATS__BYTES_READ].value;
	b->chunks_written = f[PB_TRACE_STATS_BUFFER_STATS__CHUNKS_WRITTEN].value;
	b->chunks_read = f[PB_TRACE_STATS_BUFFER_STATS__CHUNKS_READ].value;
	b->chunks_overwritten = f[PB_TRACE_STATS_BUFFER_STATS__CHUNKS_OVERWRITTEN].value;
	b->chunks_discarded = f[PB_TRACE_STATS_BUFFER_STATS__CHUNKS_DISCARDED].value;
	b->patches_failed = f[PB_TRACE_STATS_BUFFER_STATS__PATCHES_FAILED].value;
	b->patches_succeeded = f[PB_TRACE_STATS_BUFFER_STATS__PATCHES_SUCCEEDED].value;
	b->abi_violations = f[PB_TRACE_STATS_BUFFER_STATS__ABI_VIOLATIONS].value;
	b->write_wrap_count = f[PB_TRACE_STATS_BUFFER_STATS__WRITE_WRAP_COUNT].value;
	b->padding_written = f[PB_TRACE_STATS_BUFFER_STATS__PADDING_BYTES_WRITTEN].value;
	b->padding_cleared = f[PB_TRACE_STATS_BUFFER_STATS__PADDING_BYTES_CLEARED].value;
	b->writer_packet_loss = f[PB_TRACE_STATS_BUFFER_STATS__TRACE_WRITER_PACKET_LOSS].value;
	b->buffer_size = f[PB_TRACE_STATS_BUFFER_STATS__BUFFER_SIZE].value;
	b->chunks_rewritten = f[PB_TRACE_STATS_BUFFER_STATS__CHUNKS_REWRITTEN].value;
	b->readaheads_failed = f[PB_TRACE_STATS_BUFFER_STATS__READAHEADS_FAILED].value;
}

static void read_trace_stats(const uint8_t *p, size_t n)
{
	struct pz_reader r;
	struct pz_field f;

	/* Only the last TraceStats counts (it is cumulative). */
	g.n_bs = 0;
	g.invalid_packets = g.svc_chunks_discarded = g.patches_discarded = 0;
	g.producers_connected = g.flushes_requested = g.flushes_succeeded = g.flushes_failed = 0;
	pz_reader_init(&r, p, n);
	while (pz_reader_next(&r, &f) > 0) {
		switch (f.id) {
		case PB_TRACE_STATS__BUFFER_STATS:
			read_buffer_stats(f.data, f.size);
			break;
		case PB_TRACE_STATS__INVALID_PACKETS:
			g.invalid_packets = f.value;
			break;
		case PB_TRACE_STATS__CHUNKS_DISCARDED:
			g.svc_chunks_discarded = f.value;
			break;
		case PB_TRACE_STATS__PATCHES_DISCARDED:
			g.patches_discarded = f.value;
			break;
		case PB_TRACE_STATS__PRODUCERS_CONNECTED:
			g.producers_connected = f.value;
			break;
		case PB_TRACE_STATS__FLUSHES_REQUESTED:
			g.flushes_requested = f.value;
			break;
		case PB_TRACE_STATS__FLUSHES_SUCCEEDED:
			g.flushes_succeeded = f.value;
			break;
		case PB_TRACE_STATS__FLUSHES_FAILED:
			g.flushes_failed = f.value;
			break;
		default:
			break;
		}
	}
}

static void read_trigger(const uint8_t *p, size_t n)
{
	struct pz_field f[4];
	size_t used = strlen(g.trigger_names);

	g.triggers++;
	if (pz_decode_table(p, n, f, 4) != PZ_OK || !f[PB_TRIGGER__TRIGGER_NAME].id)
		return;
	snprintf(g.trigger_names + used, sizeof(g.trigger_names) - used, "%s%.*s", used ? "," : "",
		 (int)f[PB_TRIGGER__TRIGGER_NAME].size, (const char *)f[PB_TRIGGER__TRIGGER_NAME].data);
}

/*
 * TestPayload{remaining_nesting_depth = D, nested{remaining = D-1, ...
 * nested{single_string = filler}}}: the filler sits in the innermost level.
 * Return: true if the levels count down and every filler byte matches.
 */
static bool verify_payload(const uint8_t *p, size_t n, uint64_t t, uint64_t seqv)
{
	struct pz_field f[8];
	uint64_t want_depth = 0;
	bool first = true;
	uint32_t i;

	for (;;) {
		if (pz_decode_table(p, n, f, 8) != PZ_OK)
			return false;
		if (!f[PB_TEST_EVENT_TEST_PAYLOAD__NESTED].id)
			break;
		/* A level with nested carries its remaining depth. */
		if (!f[PB_TEST_EVENT_TEST_PAYLOAD__REMAINING_NESTING_DEPTH].id)
			return false;
		if (!first && f[PB_TEST_EVENT_TEST_PAYLOAD__REMAINING_NESTING_DEPTH].value != want_depth)
			return false;
		want_depth = f[PB_TEST_EVENT_TEST_PAYLOAD__REMAINING_NESTING_DEPTH].value - 1;
		first = false;
		p = f[PB_TEST_EVENT_TEST_PAYLOAD__NESTED].data;
		n = f[PB_TEST_EVENT_TEST_PAYLOAD__NESTED].size;
	}
	if (!first && want_depth != 0)
		return false;
	if (!f[PB_TEST_EVENT_TEST_PAYLOAD__SINGLE_STRING].id)
		return f[0].id == 0 && n == 0; /* an empty filler is not written */
	p = f[PB_TEST_EVENT_TEST_PAYLOAD__SINGLE_STRING].data;
	n = f[PB_TEST_EVENT_TEST_PAYLOAD__SINGLE_STRING].size;
	for (i = 0; i < n; i++) {
		if (p[i] != (uint8_t)('a' + (t * 7 + seqv * 3 + i) % 26))
			return false;
	}
	if (g.filler_max == 0 && g.filler_min == 0)
		g.filler_min = g.filler_max = n;
	if (n < g.filler_min)
		g.filler_min = n;
	if (n > g.filler_max)
		g.filler_max = n;
	return true;
}

static bool g_verify_payload;

static void read_test_event(const uint8_t *p, size_t n, uint32_t seq_id, size_t packet_len,
			    bool flagged_drop)
{
	struct pz_field f[8];
	struct seq_state *s = seq(seq_id);
	uint64_t counter;

	g.test_packets++;
	g.test_packet_bytes += packet_len; /* what the producer wrote */
	if (pz_decode_table(p, n, f, 8) != PZ_OK || !s) {
		g.bad_packets++;
		return;
	}
	g.test_payload_bytes += f[PB_TEST_EVENT__PAYLOAD].size + f[PB_TEST_EVENT__STR].size;
	counter = f[PB_TEST_EVENT__SEQ_VALUE].value;
	if (g_verify_payload && !verify_payload(f[PB_TEST_EVENT__PAYLOAD].data,
						f[PB_TEST_EVENT__PAYLOAD].size,
						f[PB_TEST_EVENT__COUNTER].value, counter)) {
		if (g.payload_bad < 5)
			printf("bad_payload seq_id=%u t=%llu seq=%llu\n", seq_id,
			       (unsigned long long)f[PB_TEST_EVENT__COUNTER].value,
			       (unsigned long long)counter);
		g.payload_bad++;
	}
	if (s->has_last)
		s->after_last = true;
	if (s->packets == 0)
		s->first = counter;
	s->packets++;
	s->last = counter;
	if (f[PB_TEST_EVENT__IS_LAST].id && f[PB_TEST_EVENT__IS_LAST].value)
		s->has_last = true;
	if (counter == s->next_counter) {
		s->next_counter++;
	} else if (counter < s->next_counter) {
		s->dups++;
	} else {
		s->gaps++;
		if (s->packets > 1) {
			s->inner_gaps++;
			if (!flagged_drop)
				s->unflagged_gaps++;
		}
		s->next_counter = counter + 1;
	}
}

static bool is_service_field(uint32_t id)
{
	return id == PB_TRACE_PACKET__TRUSTED_UID || id == PB_TRACE_PACKET__TRUSTED_PACKET_SEQUENCE_ID ||
	       id == PB_TRACE_PACKET__TRUSTED_PID || id == PB_TRACE_PACKET__MACHINE_ID ||
	       id == PB_TRACE_PACKET__PREVIOUS_PACKET_DROPPED ||
	       id == PB_TRACE_PACKET__FIRST_PACKET_ON_SEQUENCE;
}

static void read_packet(const uint8_t *p, size_t n);

static void note_id(uint32_t *ids, size_t *n, size_t cap, uint32_t id)
{
	size_t i;

	for (i = 0; i < *n; i++) {
		if (ids[i] == id)
			return;
	}
	if (*n < cap)
		ids[(*n)++] = id;
}

/* BOOTTIME (clock 6) of a ClockSnapshot, or 0. */
static uint64_t snapshot_boottime(const uint8_t *p, size_t n)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, p, n);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field c[3];

		if (f.id != PB_CLOCK_SNAPSHOT__CLOCKS || f.wire_type != PZ_WIRE_LEN ||
		    pz_decode_table(f.data, f.size, c, 3) != PZ_OK)
			continue;
		if (c[PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID].value == 6)
			return c[PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP].value;
	}
	return 0;
}

/* RemoteClockSync: offsets of each exchange and the host-side round length. */
static bool g_print_rounds;

/*
 * RemoteClockSync: offsets of each exchange, and the rounds in it. As
 * Perfetto's trace processor pairs them, a round is two consecutive
 * exchanges whose client BOOTTIME readings are less than 30 s apart (our
 * traced writes one round per packet; Perfetto's writes up to five
 * exchanges in one).
 */
static void read_remote_sync(const uint8_t *p, size_t n, uint64_t machine)
{
	uint64_t host[16], client[16];
	struct pz_reader r;
	struct pz_field f;
	size_t k = 0, i;

	g.remote_clock_syncs++;
	pz_reader_init(&r, p, n);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field x[4];
		uint64_t c, h;
		int64_t off;

		if (f.id != PB_REMOTE_CLOCK_SYNC__SYNCED_CLOCKS || f.wire_type != PZ_WIRE_LEN ||
		    pz_decode_table(f.data, f.size, x, 4) != PZ_OK)
			continue;
		c = snapshot_boottime(x[PB_REMOTE_CLOCK_SYNC_SYNCED_CLOCKS__CLIENT_CLOCKS].data,
				      x[PB_REMOTE_CLOCK_SYNC_SYNCED_CLOCKS__CLIENT_CLOCKS].size);
		h = snapshot_boottime(x[PB_REMOTE_CLOCK_SYNC_SYNCED_CLOCKS__HOST_CLOCKS].data,
				      x[PB_REMOTE_CLOCK_SYNC_SYNCED_CLOCKS__HOST_CLOCKS].size);
		if (!c || !h)
			continue;
		off = (int64_t)(c - h);
		if (!g.has_sync_offset || off < g.sync_offset_min)
			g.sync_offset_min = off;
		if (!g.has_sync_offset || off > g.sync_offset_max)
			g.sync_offset_max = off;
		g.has_sync_offset = true;
		if (k < PFC_ARRAY_SIZE(host)) {
			host[k] = h;
			client[k] = c;
			k++;
		}
	}
	for (i = 1; i < k; i++) {
		if (client[i] < client[i - 1] || client[i] - client[i - 1] >= 30ull * 1000000000)
			continue;
		if (g_print_rounds)
			printf("sync_round machine=%llu t1c=%llu t1h=%llu t2c=%llu t2h=%llu\n",
			       (unsigned long long)machine, (unsigned long long)client[i - 1],
			       (unsigned long long)host[i - 1], (unsigned long long)client[i],
			       (unsigned long long)host[i]);
		g.remote_sync_rounds++;
		/* Each side's round trip bounds the error of one of the estimates. */
		if (host[i] > host[i - 1] && host[i] - host[i - 1] > g.sync_round_max)
			g.sync_round_max = host[i] - host[i - 1];
		if (client[i] - client[i - 1] > g.sync_round_max)
			g.sync_round_max = client[i] - client[i - 1];
	}
}

/* TracePacket.compressed_packets: zlib of Trace-framed packets. */
static uint64_t g_compressed_packets, g_compressed_bad;

static void read_compressed(const uint8_t *p, size_t n)
{
	struct buf out = BUF_INIT;
	struct pz_reader r;
	struct pz_field f;

	g_compressed_packets++;
	if (inflate_all(p, n, 1u << 30, &out) < 0) {
		g_compressed_bad++;
		buf_fini(&out);
		return;
	}
	pz_reader_init(&r, out.data, out.len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_TRACE__PACKET && f.wire_type == PZ_WIRE_LEN)
			read_packet(f.data, f.size);
	}
	if (r.err)
		g_compressed_bad++;
	buf_fini(&out);
}

static void read_packet(const uint8_t *p, size_t n)
{
	struct pz_reader r;
	struct pz_field f;
	const uint8_t *test = NULL;
	size_t test_len = 0;
	uint32_t seq_id = 0;
	int32_t pid = 0;
	uint64_t ts = 0, machine = 0;
	bool is_trigger = false, is_system_info = false;
	struct pz_field sync = {0};
	size_t service_bytes = 0;
	bool flagged_drop = false;
	int rc;

	g.packets++;
	pz_reader_init(&r, p, n);
	for (;;) {
		size_t before = pz_reader_offset(&r);

		if ((rc = pz_reader_next(&r, &f)) <= 0)
			break;
		/* Fields the service appends are not bytes the producer wrote. */
		if (is_service_field(f.id))
			service_bytes += pz_reader_offset(&r) - before;
		switch (f.id) {
		case PB_TRACE_PACKET__FOR_TESTING:
			test = f.data;
			test_len = f.size;
			break;
		case PB_TRACE_PACKET__TRUSTED_PACKET_SEQUENCE_ID:
			seq_id = (uint32_t)f.value;
			break;
		case PB_TRACE_PACKET__TRUSTED_PID:
			pid = (int32_t)f.value;
			break;
		case PB_TRACE_PACKET__TIMESTAMP:
			ts = f.value;
			break;
		case PB_TRACE_PACKET__PREVIOUS_PACKET_DROPPED:
			if (f.value) {
				flagged_drop = true;
				g.dropped_flags++;
				g.dropped_bits |= (uint32_t)f.value;
			}
			break;
		case PB_TRACE_PACKET__CLOCK_SNAPSHOT: {
			uint64_t boot = snapshot_boottime(f.data, f.size);

			g.clock_snapshots++;
			if (boot && boot < g.last_snapshot_ts)
				g.snapshots_backwards++;
			if (boot)
				g.last_snapshot_ts = boot;
			break;
		}
		case PB_TRACE_PACKET__REMOTE_CLOCK_SYNC:
			sync = f;
			break;
		case PB_TRACE_PACKET__MACHINE_ID:
			machine = f.value;
			break;
		case PB_TRACE_PACKET__TRACE_CONFIG:
			g.trace_configs++;
			break;
		case PB_TRACE_PACKET__SYSTEM_INFO:
			g.system_infos++;
			is_system_info = true;
			break;
		case PB_TRACE_PACKET__TRACE_STATS:
			g.trace_stats++;
			read_trace_stats(f.data, f.size);
			break;
		case PB_TRACE_PACKET__SYNCHRONIZATION_MARKER:
			g.sync_markers++;
			break;
		case PB_TRACE_PACKET__TRACE_UUID:
			g.uuids++;
			break;
		case PB_TRACE_PACKET__COMPRESSED_PACKETS:
			read_compressed(f.data, f.size);
			break;
		case PB_TRACE_PACKET__TRIGGER:
			read_trigger(f.data, f.size);
			is_trigger = true;
			break;
		case PB_TRACE_PACKET__SERVICE_EVENT:
			g.service_events++;
			break;
		default:
			break;
		}
	}
	if (rc < 0)
		g.bad_packets++;
	if (sync.id)
		read_remote_sync(sync.data, sync.size, machine);
	if (machine)
		note_id(g.machine_ids, &g.n_machine_ids, PFC_ARRAY_SIZE(g.machine_ids),
			(uint32_t)machine);
	if (machine && test)
		note_id(g.test_machine_ids, &g.n_test_machine_ids,
			PFC_ARRAY_SIZE(g.test_machine_ids), (uint32_t)machine);
	else if (test)
		g.test_without_machine_id++;
	if (machine && is_system_info)
		g.remote_system_infos++;
	if (is_trigger && ts && !g.trigger_ts)
		g.trigger_ts = ts;
	if (test && ts) {
		if (!g.test_ts_min || ts < g.test_ts_min)
			g.test_ts_min = ts;
		if (ts > g.test_ts_max)
			g.test_ts_max = ts;
	}
	if (test) {
		note_pid(pid);
		read_test_event(test, test_len, seq_id, n - service_bytes, flagged_drop);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

#define U(x) ((unsigned long long)(x))

int main(int argc, char **argv)
{
	long expect_seqs = -1, expect_per_seq = -1;
	bool allow_loss = false, allow_head_loss = false, check_stats = false;
	struct buf b = BUF_INIT;
	struct pz_reader r;
	struct pz_field f;
	struct buffer_stats tot;
	uint64_t gaps = 0, inner_gaps = 0, unflagged_gaps = 0, dups = 0, counts[MAX_SEQS];
	size_t k, n_test_seqs = 0, n_with_last = 0, n_after_last = 0;
	int i, rc, ok = 1;
	bool print_seqs = false;

	if (argc < 2) {
		fprintf(stderr, "usage: trace_check TRACE [--expect-seqs N] [--expect-per-seq N] "
				"[--allow-loss] [--allow-head-loss] [--verify-payload] "
				"[--check-stats] [--print-sync-rounds]\n");
		return 2;
	}
	if (strcmp(argv[1], "--boottime-now") == 0) {
		printf("%llu\n", U(clock_boottime_ns()));
		return 0;
	}
	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--expect-seqs") == 0 && i + 1 < argc)
			expect_seqs = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--expect-per-seq") == 0 && i + 1 < argc)
			expect_per_seq = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--allow-loss") == 0)
			allow_loss = true;
		else if (strcmp(argv[i], "--allow-head-loss") == 0)
			allow_head_loss = true;
		else if (strcmp(argv[i], "--verify-payload") == 0)
			g_verify_payload = true;
		else if (strcmp(argv[i], "--print-sync-rounds") == 0)
			g_print_rounds = true;
		else if (strcmp(argv[i], "--print-seqs") == 0)
			print_seqs = true;
		else if (strcmp(argv[i], "--check-stats") == 0)
			check_stats = true;
		else {
			fprintf(stderr, "trace_check: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	rc = file_read_all(argv[1], &b, MAX_TRACE_BYTES);
	if (rc < 0) {
		fprintf(stderr, "trace_check: cannot read %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	pz_reader_init(&r, b.data, b.len);
	while ((rc = pz_reader_next(&r, &f)) > 0) {
		if (f.id != PB_TRACE__PACKET || f.wire_type != PZ_WIRE_LEN) {
			g.other++;
			continue;
		}
		read_packet(f.data, f.size);
	}
	if (rc < 0) {
		printf("parse_error=%s at_offset=%zu\n", pz_read_error_str(r.err), pz_reader_offset(&r));
		printf("why=the file does not parse as a Trace\n");
		ok = 0;
	}
	for (k = 0; k < g.n_seqs; k++) {
		const struct seq_state *s = &g.seqs[k];

		if (!s->packets)
			continue;
		counts[n_test_seqs++] = s->packets;
		if (print_seqs)
			printf("seq id=%u first=%llu last=%llu packets=%llu inner_gaps=%llu dups=%llu\n",
			       g.seq_ids[k], U(s->first), U(s->last), U(s->packets), U(s->inner_gaps),
			       U(s->dups));
		gaps += s->gaps;
		inner_gaps += s->inner_gaps;
		unflagged_gaps += s->unflagged_gaps;
		dups += s->dups;
		n_with_last += s->has_last;
		n_after_last += s->after_last;
		if (expect_per_seq >= 0 && (long)s->packets != expect_per_seq) {
			printf("seq_%u_packets=%llu\n", g.seq_ids[k], U(s->packets));
			printf("why=sequence %u has %llu test packets, want %ld\n", g.seq_ids[k],
			       U(s->packets), expect_per_seq);
			ok = 0;
		}
		if (allow_head_loss && (!s->has_last || s->inner_gaps)) {
			printf("why=sequence %u: first %llu last %llu, is_last %s, %llu gaps after "
			       "its first packet\n", g.seq_ids[k], U(s->first), U(s->last),
			       s->has_last ? "present" : "missing", U(s->inner_gaps));
			ok = 0;
		}
	}
	qsort(counts, n_test_seqs, sizeof(counts[0]), cmp_u64);
	qsort(g.pids, g.n_pids, sizeof(g.pids[0]), cmp_i32);
	memset(&tot, 0, sizeof(tot));
	for (k = 0; k < g.n_bs; k++) {
		tot.bytes_written += g.bs[k].bytes_written;
		tot.bytes_overwritten += g.bs[k].bytes_overwritten;
		tot.bytes_read += g.bs[k].bytes_read;
		tot.chunks_written += g.bs[k].chunks_written;
		tot.chunks_read += g.bs[k].chunks_read;
		tot.chunks_overwritten += g.bs[k].chunks_overwritten;
		tot.chunks_discarded += g.bs[k].chunks_discarded;
		tot.patches_failed += g.bs[k].patches_failed;
		tot.patches_succeeded += g.bs[k].patches_succeeded;
		tot.abi_violations += g.bs[k].abi_violations;
		tot.write_wrap_count += g.bs[k].write_wrap_count;
		tot.writer_packet_loss += g.bs[k].writer_packet_loss;
		tot.chunks_rewritten += g.bs[k].chunks_rewritten;
		tot.readaheads_failed += g.bs[k].readaheads_failed;
		if (check_stats && (g.bs[k].chunks_written !=
					    g.bs[k].chunks_read + g.bs[k].chunks_overwritten ||
				    g.bs[k].bytes_written !=
					    g.bs[k].bytes_read + g.bs[k].bytes_overwritten)) {
			printf("why=buffer %zu stats do not add up: chunks written %llu != read %llu + "
			       "overwritten %llu, or bytes written %llu != read %llu + overwritten "
			       "%llu\n", k, U(g.bs[k].chunks_written), U(g.bs[k].chunks_read),
			       U(g.bs[k].chunks_overwritten), U(g.bs[k].bytes_written),
			       U(g.bs[k].bytes_read), U(g.bs[k].bytes_overwritten));
			ok = 0;
		}
	}
	if (check_stats && !g.trace_stats) {
		printf("why=no trace_stats packet\n");
		ok = 0;
	}
	/* Every producer packet byte came out of a chunk that was read. */
	if (check_stats && g.test_packet_bytes > tot.bytes_read) {
		printf("why=%llu bytes of producer packets but only %llu bytes read from buffers\n",
		       U(g.test_packet_bytes), U(tot.bytes_read));
		ok = 0;
	}
	printf("compressed_packets=%llu\ncompressed_bad=%llu\n", U(g_compressed_packets),
	       U(g_compressed_bad));
	if (g_compressed_bad)
		ok = 0;
	printf("bytes=%zu\npackets=%llu\ntest_packets=%llu\ntest_sequences=%zu\n", b.len,
	       U(g.packets), U(g.test_packets), n_test_seqs);
	printf("test_payload_bytes=%llu\ntest_packet_bytes=%llu\n", U(g.test_payload_bytes),
	       U(g.test_packet_bytes));
	printf("seq_packet_counts=");
	for (k = 0; k < n_test_seqs; k++)
		printf("%s%llu", k ? "," : "", U(counts[k]));
	printf("\ntest_pids=");
	for (k = 0; k < g.n_pids; k++)
		printf("%s%d", k ? "," : "", g.pids[k]);
	printf("\nseqs_with_last=%zu\nseqs_after_last=%zu\n", n_with_last, n_after_last);
	printf("gaps=%llu\ninner_gaps=%llu\nunflagged_gaps=%llu\nduplicates=%llu\n"
	       "dropped_flags=%llu\ndropped_bits=%u\nbad_packets=%llu\n",
	       U(gaps), U(inner_gaps), U(unflagged_gaps), U(dups), U(g.dropped_flags),
	       g.dropped_bits, U(g.bad_packets));
	if (g_verify_payload)
		printf("payload_bad=%llu\nfiller_min=%llu\nfiller_max=%llu\n", U(g.payload_bad),
		       U(g.filler_min), U(g.filler_max));
	printf("clock_snapshots=%llu\ntrace_configs=%llu\nsystem_infos=%llu\ntrace_stats=%llu\n",
	       U(g.clock_snapshots), U(g.trace_configs), U(g.system_infos), U(g.trace_stats));
	printf("sync_markers=%llu\nuuids=%llu\ntriggers=%llu\ntrigger_names=%s\nservice_events=%llu\n",
	       U(g.sync_markers), U(g.uuids), U(g.triggers), g.trigger_names, U(g.service_events));
	printf("test_ts_min=%llu\ntest_ts_max=%llu\ntrigger_ts=%llu\n", U(g.test_ts_min),
	       U(g.test_ts_max), U(g.trigger_ts));
	printf("remote_clock_syncs=%llu\nremote_sync_rounds=%llu\nremote_system_infos=%llu\n",
	       U(g.remote_clock_syncs), U(g.remote_sync_rounds), U(g.remote_system_infos));
	printf("remote_sync_offset_min=%lld\nremote_sync_offset_max=%lld\n"
	       "remote_sync_round_max_ns=%llu\nclock_snapshots_backwards=%llu\n",
	       (long long)g.sync_offset_min, (long long)g.sync_offset_max, U(g.sync_round_max),
	       U(g.snapshots_backwards));
	qsort(g.machine_ids, g.n_machine_ids, sizeof(g.machine_ids[0]), cmp_u32);
	printf("machine_ids=");
	for (k = 0; k < g.n_machine_ids; k++)
		printf("%s%u", k ? "," : "", g.machine_ids[k]);
	qsort(g.test_machine_ids, g.n_test_machine_ids, sizeof(g.test_machine_ids[0]), cmp_u32);
	printf("\ntest_machine_ids=");
	for (k = 0; k < g.n_test_machine_ids; k++)
		printf("%s%u", k ? "," : "", g.test_machine_ids[k]);
	printf("\ntest_packets_without_machine_id=%llu\n", U(g.test_without_machine_id));
	printf("stats_buffers=%zu\n", g.n_bs);
	printf("stats_bytes_written=%llu\nstats_bytes_overwritten=%llu\nstats_bytes_read=%llu\n"
	       "stats_chunks_written=%llu\nstats_chunks_read=%llu\n"
	       "stats_chunks_overwritten=%llu\nstats_chunks_discarded=%llu\n"
	       "stats_patches_succeeded=%llu\nstats_patches_failed=%llu\n"
	       "stats_abi_violations=%llu\nstats_write_wrap_count=%llu\n"
	       "stats_writer_packet_loss=%llu\nstats_chunks_rewritten=%llu\n"
	       "stats_readaheads_failed=%llu\n",
	       U(tot.bytes_written), U(tot.bytes_overwritten), U(tot.bytes_read),
	       U(tot.chunks_written), U(tot.chunks_read), U(tot.chunks_overwritten),
	       U(tot.chunks_discarded), U(tot.patches_succeeded), U(tot.patches_failed),
	       U(tot.abi_violations), U(tot.write_wrap_count), U(tot.writer_packet_loss),
	       U(tot.chunks_rewritten), U(tot.readaheads_failed));
	printf("stats_invalid_packets=%llu\nstats_svc_chunks_discarded=%llu\n"
	       "stats_patches_discarded=%llu\nstats_producers_connected=%llu\n"
	       "stats_flushes_requested=%llu\nstats_flushes_succeeded=%llu\n"
	       "stats_flushes_failed=%llu\n",
	       U(g.invalid_packets), U(g.svc_chunks_discarded), U(g.patches_discarded),
	       U(g.producers_connected), U(g.flushes_requested), U(g.flushes_succeeded),
	       U(g.flushes_failed));
	if (expect_seqs >= 0 && (long)n_test_seqs != expect_seqs) {
		printf("why=%zu test sequences, want %ld\n", n_test_seqs, expect_seqs);
		ok = 0;
	}
	if (!allow_loss && !allow_head_loss && gaps) {
		printf("why=%llu gaps in seq_value\n", U(gaps));
		ok = 0;
	}
	if (dups) {
		printf("why=%llu duplicate or out-of-order packets\n", U(dups));
		ok = 0;
	}
	if (g.bad_packets) {
		printf("why=%llu packets do not decode\n", U(g.bad_packets));
		ok = 0;
	}
	if (n_after_last) {
		printf("why=%zu sequences have packets after is_last\n", n_after_last);
		ok = 0;
	}
	if (g.payload_bad) {
		printf("why=%llu packets fail --verify-payload\n", U(g.payload_bad));
		ok = 0;
	}
	buf_fini(&b);
	printf("ok=%d\n", ok);
	return ok ? 0 : 1;
}
