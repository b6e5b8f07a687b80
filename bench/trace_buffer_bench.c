// SPDX-License-Identifier: Apache-2.0
/*
 * trace_buffer_bench.c - pushes 1 GiB of 4 KiB SMB chunks (4 packets each,
 * 16 writers round-robin, taken from a 16 MiB source ring standing in for
 * the SMBs) through a 64 MiB ring trace buffer, with a read pass after
 * every 8 MiB, and prints GB/s and ns per chunk for copy and read. A second
 * run copies without reading (every chunk overwrites an unread one), and a
 * plain memcpy of the same chunks into a 64 MiB ring gives the baseline.
 * `--smoke` moves 16 MiB through a 4 MiB buffer (CI keeps it working).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "protozero/protozero.h"
#include "traced/trace_buffer.h"

#define CHUNK_BYTES 4096u
#define PAYLOAD_BYTES (CHUNK_BYTES - 8u)
#define PACKETS_PER_CHUNK 4u
#define PACKET_BYTES (PAYLOAD_BYTES / PACKETS_PER_CHUNK - 4u)
#define N_WRITERS 16u

static struct {
	size_t total_bytes;
	size_t buffer_bytes;
	size_t source_bytes;
	size_t read_every_bytes;
} g_args = {1ull << 30, 64u << 20, 16u << 20, 8u << 20};

static volatile uint64_t g_sink;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint8_t *make_source(size_t n_chunks)
{
	uint8_t *src = malloc(n_chunks * PAYLOAD_BYTES);
	size_t i, k, j;

	if (!src)
		return NULL;
	for (i = 0; i < n_chunks; i++) {
		uint8_t *p = src + i * PAYLOAD_BYTES;

		for (k = 0; k < PACKETS_PER_CHUNK; k++) {
			pz_write_redundant_varint(p, PACKET_BYTES);
			for (j = 0; j < PACKET_BYTES; j++)
				p[4 + j] = (uint8_t)(i + k + j);
			p += 4 + PACKET_BYTES;
		}
	}
	return src;
}

/* One read pass. Return: packets read; adds their bytes to *bytes. */
static uint64_t drain(struct trace_buffer *tb, uint64_t *bytes)
{
	struct tb_packet pkt;
	uint64_t n = 0, sum = 0;
	size_t i;

	tb_begin_read(tb, false);
	while (tb_read_next_packet(tb, &pkt) == 1) {
		for (i = 0; i < pkt.n_slices; i++)
			sum += pkt.slices[i].data[0];
		*bytes += pkt.size_bytes;
		n++;
	}
	g_sink += sum;
	return n;
}

struct run_result {
	double copy_ns, read_ns;
	uint64_t packets, packet_bytes;
	struct tb_stats st;
};

static int run(const uint8_t *src, size_t n_src, size_t n_chunks, bool do_reads,
	       struct run_result *res)
{
	static const struct tb_client client = {.producer_id = 1, .uid = 1000, .pid = 1};
	struct trace_buffer *tb = NULL;
	size_t read_every = g_args.read_every_bytes / CHUNK_BYTES;
	uint32_t ids[N_WRITERS] = {0};
	double t0;
	size_t i;
	int err;

	memset(res, 0, sizeof(*res));
	err = tb_create(g_args.buffer_bytes, TB_RING_BUFFER, &tb);
	if (err < 0)
		return err;
	t0 = now_ns();
	for (i = 0; i < n_chunks; i++) {
		uint16_t w = (uint16_t)(i % N_WRITERS);

		err = tb_copy_chunk(tb, &client, (uint16_t)(w + 1), ids[w]++, PACKETS_PER_CHUNK, 0,
				    src + (i % n_src) * PAYLOAD_BYTES, PAYLOAD_BYTES, true);
		if (err < 0)
			goto out;
		if (do_reads && (i + 1) % read_every == 0) {
			double t1 = now_ns();

			res->copy_ns += t1 - t0;
			res->packets += drain(tb, &res->packet_bytes);
			t0 = now_ns();
			res->read_ns += t0 - t1;
		}
	}
	res->copy_ns += now_ns() - t0;
	t0 = now_ns();
	res->packets += drain(tb, &res->packet_bytes);
	res->read_ns += now_ns() - t0;
	tb_stats(tb, &res->st);
out:
	tb_destroy(tb);
	return err;
}

static double run_memcpy(const uint8_t *src, size_t n_src, size_t n_chunks)
{
	size_t n_dst = g_args.buffer_bytes / CHUNK_BYTES;
	uint8_t *dst = aligned_alloc(4096, g_args.buffer_bytes);
	double t0, total;
	size_t i;

	if (!dst)
		return -1;
	/* Left untouched, like the trace buffer's arena: both fault pages in. */
	t0 = now_ns();
	for (i = 0; i < n_chunks; i++)
		memcpy(dst + (i % n_dst) * CHUNK_BYTES, src + (i % n_src) * PAYLOAD_BYTES,
		       PAYLOAD_BYTES);
	total = now_ns() - t0;
	g_sink += dst[12345];
	free(dst);
	return total;
}

int main(int argc, char **argv)
{
	size_t n_src, n_chunks;
	struct run_result rd, ow;
	double mc_ns, gib;
	uint8_t *src;
	int err;

	if (argc > 1 && strcmp(argv[1], "--smoke") == 0) {
		g_args.total_bytes = 16u << 20;
		g_args.buffer_bytes = 4u << 20;
		g_args.source_bytes = 2u << 20;
		g_args.read_every_bytes = 1u << 20;
	} else if (argc > 1) {
		fprintf(stderr, "usage: %s [--smoke]\n", argv[0]);
		return 2;
	}
	n_src = g_args.source_bytes / CHUNK_BYTES;
	n_chunks = g_args.total_bytes / CHUNK_BYTES;
	src = make_source(n_src);
	if (!src)
		return 1;

	err = run(src, n_src, n_chunks, true, &rd);
	if (err == 0)
		err = run(src, n_src, n_chunks, false, &ow);
	if (err < 0) {
		fprintf(stderr, "trace_buffer_bench: copy failed: %s\n", strerror(-err));
		return 1;
	}
	/* Interleaved reads keep up: every packet must come out exactly once. */
	if (rd.packets != (uint64_t)n_chunks * PACKETS_PER_CHUNK || rd.st.chunks_overwritten) {
		fprintf(stderr, "trace_buffer_bench: read %llu packets, expected %llu\n",
			(unsigned long long)rd.packets,
			(unsigned long long)n_chunks * PACKETS_PER_CHUNK);
		return 1;
	}
	mc_ns = run_memcpy(src, n_src, n_chunks);
	gib = (double)n_chunks * CHUNK_BYTES;

	printf("trace_buffer: %zu MiB of %u-byte chunks through a %zu MiB ring, %u writers\n",
	       g_args.total_bytes >> 20, CHUNK_BYTES, g_args.buffer_bytes >> 20, N_WRITERS);
	printf("  copy (reads interleaved): %6.2f GB/s  %6.1f ns/chunk\n", gib / rd.copy_ns,
	       rd.copy_ns / (double)n_chunks);
	printf("  read (%u packets/chunk):   %6.2f GB/s  %6.1f ns/chunk  %5.1f ns/packet\n",
	       PACKETS_PER_CHUNK, (double)rd.packet_bytes / rd.read_ns,
	       rd.read_ns / (double)n_chunks, rd.read_ns / (double)rd.packets);
	printf("  copy (no reads, overwriting): %6.2f GB/s  %6.1f ns/chunk  (%llu chunks "
	       "overwritten)\n",
	       gib / ow.copy_ns, ow.copy_ns / (double)n_chunks,
	       (unsigned long long)ow.st.chunks_overwritten);
	printf("  memcpy baseline:          %6.2f GB/s  %6.1f ns/chunk\n", gib / mc_ns,
	       mc_ns / (double)n_chunks);
	printf("  ratio copy/memcpy: %.2fx time (reads interleaved), %.2fx (overwriting)\n",
	       rd.copy_ns / mc_ns, ow.copy_ns / mc_ns);
	free(src);
	return 0;
}
