// SPDX-License-Identifier: Apache-2.0
/*
 * trace_check.c - test helper: reads a trace file written by perfetto or
 * traced and prints what it holds as key=value lines for the integration
 * scripts (packets by kind, the last TraceStats buffer counters) and checks
 * the test producer's sequences: within each packet sequence, TestEvent
 * seq_value numbers must go 0, 1, 2... with no gap or duplicate.
 *   trace_check TRACE [--expect-seqs N] [--expect-per-seq N] [--allow-loss]
 * Exits 0 if the file parses and the expectations hold, 1 otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/file.h"
#include "base/hmap.h"
#include "pb_fields.h"
#include "protozero/protozero.h"

#define MAX_TRACE_BYTES (2ull << 30)

struct seq_state {
	uint64_t next_counter;
	uint64_t packets;
	uint64_t gaps;
	uint64_t dups;
};

static struct {
	uint64_t packets, test_packets, clock_snapshots, trace_configs, system_infos, trace_stats;
	uint64_t sync_markers, uuids, triggers, service_events, other, dropped_flags, bad_packets;
	uint64_t test_payload_bytes;
	uint64_t bytes_written, bytes_overwritten, chunks_overwritten, chunks_discarded;
	uint64_t patches_failed, abi_violations, invalid_packets;
	struct seq_state seqs[4096];
	uint32_t seq_ids[4096];
	size_t n_seqs;
} g;

static struct seq_state *seq(uint32_t id)
{
	size_t i;

	for (i = 0; i < g.n_seqs; i++) {
		if (g.seq_ids[i] == id)
			return &g.seqs[i];
	}
	if (g.n_seqs == 4096)
		return NULL;
	g.seq_ids[g.n_seqs] = id;
	memset(&g.seqs[g.n_seqs], 0, sizeof(g.seqs[0]));
	return &g.seqs[g.n_seqs++];
}

static void read_buffer_stats(const uint8_t *p, size_t n)
{
	struct pz_field f[32];

	if (pz_decode_table(p, n, f, 32) != PZ_OK)
		return;
	g.bytes_written += f[PB_TRACE_STATS_BUFFER_STATS__BYTES_WRITTEN].value;
	g.bytes_overwritten += f[PB_TRACE_STATS_BUFFER_STATS__BYTES_OVERWRITTEN].value;
	g.chunks_overwritten += f[PB_TRACE_STATS_BUFFER_STATS__CHUNKS_OVERWRITTEN].value;
	g.chunks_discarded += f[PB_TRACE_STATS_BUFFER_STATS__CHUNKS_DISCARDED].value;
	g.patches_failed += f[PB_TRACE_STATS_BUFFER_STATS__PATCHES_FAILED].value;
	g.abi_violations += f[PB_TRACE_STATS_BUFFER_STATS__ABI_VIOLATIONS].value;
}

static void read_trace_stats(const uint8_t *p, size_t n)
{
	struct pz_reader r;
	struct pz_field f;

	/* Only the last TraceStats counts (it is cumulative). */
	g.bytes_written = g.bytes_overwritten = g.chunks_overwritten = g.chunks_discarded = 0;
	g.patches_failed = g.abi_violations = 0;
	pz_reader_init(&r, p, n);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_TRACE_STATS__BUFFER_STATS)
			read_buffer_stats(f.data, f.size);
		else if (f.id == PB_TRACE_STATS__INVALID_PACKETS)
			g.invalid_packets = f.value;
	}
}

static void read_test_event(const uint8_t *p, size_t n, uint32_t seq_id)
{
	struct pz_field f[8];
	struct seq_state *s = seq(seq_id);
	uint64_t counter;

	g.test_packets++;
	if (pz_decode_table(p, n, f, 8) != PZ_OK || !s) {
		g.bad_packets++;
		return;
	}
	g.test_payload_bytes += f[PB_TEST_EVENT__PAYLOAD].size + f[PB_TEST_EVENT__STR].size;
	counter = f[PB_TEST_EVENT__SEQ_VALUE].value;
	s->packets++;
	if (counter == s->next_counter)
		s->next_counter++;
	else if (counter < s->next_counter)
		s->dups++;
	else {
		s->gaps++;
		s->next_counter = counter + 1;
	}
}

static void read_packet(const uint8_t *p, size_t n)
{
	struct pz_reader r;
	struct pz_field f;
	const uint8_t *test = NULL;
	size_t test_len = 0;
	uint32_t seq_id = 0;
	int rc;

	g.packets++;
	pz_reader_init(&r, p, n);
	while ((rc = pz_reader_next(&r, &f)) > 0) {
		switch (f.id) {
		case PB_TRACE_PACKET__FOR_TESTING:
			test = f.data;
			test_len = f.size;
			break;
		case PB_TRACE_PACKET__TRUSTED_PACKET_SEQUENCE_ID:
			seq_id = (uint32_t)f.value;
			break;
		case PB_TRACE_PACKET__PREVIOUS_PACKET_DROPPED:
			if (f.value)
				g.dropped_flags++;
			break;
		case PB_TRACE_PACKET__CLOCK_SNAPSHOT:
			g.clock_snapshots++;
			break;
		case PB_TRACE_PACKET__TRACE_CONFIG:
			g.trace_configs++;
			break;
		case PB_TRACE_PACKET__SYSTEM_INFO:
			g.system_infos++;
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
		case PB_TRACE_PACKET__TRIGGER:
			g.triggers++;
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
	if (test)
		read_test_event(test, test_len, seq_id);
}

int main(int argc, char **argv)
{
	long expect_seqs = -1, expect_per_seq = -1;
	bool allow_loss = false;
	struct buf b = BUF_INIT;
	struct pz_reader r;
	struct pz_field f;
	uint64_t gaps = 0, dups = 0;
	int i, rc, ok = 1;
	size_t k, n_test_seqs = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: trace_check TRACE [--expect-seqs N] [--expect-per-seq N] "
				"[--allow-loss]\n");
		return 2;
	}
	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--expect-seqs") == 0 && i + 1 < argc)
			expect_seqs = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--expect-per-seq") == 0 && i + 1 < argc)
			expect_per_seq = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--allow-loss") == 0)
			allow_loss = true;
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
		ok = 0;
	}
	for (k = 0; k < g.n_seqs; k++) {
		if (!g.seqs[k].packets)
			continue;
		n_test_seqs++;
		gaps += g.seqs[k].gaps;
		dups += g.seqs[k].dups;
		if (expect_per_seq >= 0 && (long)g.seqs[k].packets != expect_per_seq) {
			printf("seq_%u_packets=%llu\n", g.seq_ids[k],
			       (unsigned long long)g.seqs[k].packets);
			ok = 0;
		}
	}
	printf("bytes=%zu\npackets=%llu\ntest_packets=%llu\ntest_sequences=%zu\n", b.len,
	       (unsigned long long)g.packets, (unsigned long long)g.test_packets, n_test_seqs);
	printf("test_payload_bytes=%llu\n", (unsigned long long)g.test_payload_bytes);
	printf("gaps=%llu\nduplicates=%llu\ndropped_flags=%llu\nbad_packets=%llu\n",
	       (unsigned long long)gaps, (unsigned long long)dups,
	       (unsigned long long)g.dropped_flags, (unsigned long long)g.bad_packets);
	printf("clock_snapshots=%llu\ntrace_configs=%llu\nsystem_infos=%llu\ntrace_stats=%llu\n",
	       (unsigned long long)g.clock_snapshots, (unsigned long long)g.trace_configs,
	       (unsigned long long)g.system_infos, (unsigned long long)g.trace_stats);
	printf("sync_markers=%llu\nuuids=%llu\ntriggers=%llu\nservice_events=%llu\n",
	       (unsigned long long)g.sync_markers, (unsigned long long)g.uuids,
	       (unsigned long long)g.triggers, (unsigned long long)g.service_events);
	printf("stats_bytes_written=%llu\nstats_bytes_overwritten=%llu\n"
	       "stats_chunks_overwritten=%llu\nstats_chunks_discarded=%llu\n"
	       "stats_patches_failed=%llu\nstats_abi_violations=%llu\nstats_invalid_packets=%llu\n",
	       (unsigned long long)g.bytes_written, (unsigned long long)g.bytes_overwritten,
	       (unsigned long long)g.chunks_overwritten, (unsigned long long)g.chunks_discarded,
	       (unsigned long long)g.patches_failed, (unsigned long long)g.abi_violations,
	       (unsigned long long)g.invalid_packets);
	if (expect_seqs >= 0 && (long)n_test_seqs != expect_seqs)
		ok = 0;
	if (!allow_loss && (gaps || dups))
		ok = 0;
	if (dups || g.bad_packets)
		ok = 0;
	buf_fini(&b);
	printf("ok=%d\n", ok);
	return ok ? 0 : 1;
}
