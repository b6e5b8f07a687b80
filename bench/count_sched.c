// SPDX-License-Identifier: Apache-2.0
/*
 * count_sched.c - counts the scheduler events in a trace for
 * bench/ftrace_bench.sh, and what was lost on the way:
 *
 *   events   compact_sched switch_timestamp + waking_timestamp entries, plus
 *            plain FtraceEvents (split into sched_switch, sched_waking, other)
 *   lost     FtraceStats overrun + dropped_events summed over CPUs
 *            (END_OF_TRACE minus START_OF_TRACE when both are present),
 *            bundles flagged lost_events, TracePacket.previous_packet_dropped,
 *            and the service's TraceStats chunks_discarded / overwritten.
 *
 *   count_sched TRACE     prints one key=value line (for scripts)
 *   count_sched --smoke   counts a small trace built in memory; exit 0 if right
 *
 * The trace is read with the protozero reader (no allocation per packet);
 * malformed input stops the walk and is reported as parse_error=1.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/inflate.h"
#include "pb_fields.h"
#include "protozero/protozero.h"

#define MAX_CPUS 1024

struct cpu_loss {
	uint64_t overrun;
	uint64_t dropped;
};

struct counts {
	uint64_t packets;
	uint64_t compact_switch;
	uint64_t compact_waking;
	uint64_t plain_switch;
	uint64_t plain_waking;
	uint64_t plain_other;
	uint64_t lost_bundles;
	uint64_t packets_dropped; /* previous_packet_dropped flags */
	uint64_t chunks_discarded;
	uint64_t chunks_overwritten;
	bool has_start, has_end;
	struct cpu_loss start[MAX_CPUS];
	struct cpu_loss end[MAX_CPUS];
	bool is_parse_error;
};

static uint64_t count_packed_varints(const struct pz_field *f, struct counts *c)
{
	struct pz_packed it;
	uint64_t v, n = 0;
	int r;

	if (f->wire_type != PZ_WIRE_LEN) {
		/* An unpacked repeated entry is one value. */
		return 1;
	}
	pz_packed_init(&it, f);
	while ((r = pz_packed_next_varint(&it, &v)) == 1)
		n++;
	if (r < 0)
		c->is_parse_error = true;
	return n;
}

static void walk_compact(const struct pz_field *cf, struct counts *c)
{
	struct pz_reader r;
	struct pz_field f;
	int rc;

	pz_reader_init(&r, cf->data, cf->size);
	while ((rc = pz_reader_next(&r, &f)) == 1) {
		if (f.id == PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_TIMESTAMP)
			c->compact_switch += count_packed_varints(&f, c);
		else if (f.id == PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_TIMESTAMP)
			c->compact_waking += count_packed_varints(&f, c);
	}
	if (rc < 0)
		c->is_parse_error = true;
}

static void walk_event(const struct pz_field *ef, struct counts *c)
{
	struct pz_reader r;
	struct pz_field f;
	int rc;

	pz_reader_init(&r, ef->data, ef->size);
	while ((rc = pz_reader_next(&r, &f)) == 1) {
		if (f.wire_type != PZ_WIRE_LEN)
			continue;
		/* The one length-delimited field of an FtraceEvent is its payload. */
		if (f.id == PB_FTRACE_EVENT__SCHED_SWITCH)
			c->plain_switch++;
		else if (f.id == PB_FTRACE_EVENT__SCHED_WAKING)
			c->plain_waking++;
		else
			c->plain_other++;
		return;
	}
	if (rc < 0)
		c->is_parse_error = true;
	else
		c->plain_other++; /* an event without a payload (unknown to us) */
}

static void walk_bundle(const struct pz_field *bf, struct counts *c)
{
	struct pz_reader r;
	struct pz_field f;
	int rc;

	pz_reader_init(&r, bf->data, bf->size);
	while ((rc = pz_reader_next(&r, &f)) == 1) {
		if (f.id == PB_FTRACE_EVENT_BUNDLE__EVENT && f.wire_type == PZ_WIRE_LEN)
			walk_event(&f, c);
		else if (f.id == PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED && f.wire_type == PZ_WIRE_LEN)
			walk_compact(&f, c);
		else if (f.id == PB_FTRACE_EVENT_BUNDLE__LOST_EVENTS && f.value)
			c->lost_bundles++;
	}
	if (rc < 0)
		c->is_parse_error = true;
}

static void walk_ftrace_stats(const struct pz_field *sf, struct counts *c)
{
	struct cpu_loss tmp[MAX_CPUS];
	struct pz_reader r, cr;
	struct pz_field f, g;
	uint64_t phase = 0;
	int rc;

	memset(tmp, 0, sizeof(tmp));
	pz_reader_init(&r, sf->data, sf->size);
	while ((rc = pz_reader_next(&r, &f)) == 1) {
		uint64_t cpu = 0, overrun = 0, dropped = 0;

		if (f.id == PB_FTRACE_STATS__PHASE) {
			phase = f.value;
			continue;
		}
		if (f.id != PB_FTRACE_STATS__CPU_STATS || f.wire_type != PZ_WIRE_LEN)
			continue;
		pz_reader_init(&cr, f.data, f.size);
		while (pz_reader_next(&cr, &g) == 1) {
			if (g.id == PB_FTRACE_CPU_STATS__CPU)
				cpu = g.value;
			else if (g.id == PB_FTRACE_CPU_STATS__OVERRUN)
				overrun = g.value;
			else if (g.id == PB_FTRACE_CPU_STATS__DROPPED_EVENTS)
				dropped = g.value;
		}
		if (cr.err != PZ_OK)
			c->is_parse_error = true;
		if (cpu < MAX_CPUS) {
			tmp[cpu].overrun = overrun;
			tmp[cpu].dropped = dropped;
		}
	}
	if (rc < 0)
		c->is_parse_error = true;
	if (phase == PBE_FTRACE_STATS_PHASE__START_OF_TRACE && !c->has_start) {
		memcpy(c->start, tmp, sizeof(tmp));
		c->has_start = true;
	} else if (phase == PBE_FTRACE_STATS_PHASE__END_OF_TRACE) {
		/* The last END_OF_TRACE wins. */
		memcpy(c->end, tmp, sizeof(tmp));
		c->has_end = true;
	}
}

static void walk_trace_stats(const struct pz_field *tf, struct counts *c)
{
	struct pz_reader r, br;
	struct pz_field f, g;
	uint64_t discarded = 0, overwritten = 0;

	pz_reader_init(&r, tf->data, tf->size);
	while (pz_reader_next(&r, &f) == 1) {
		if (f.id == PB_TRACE_STATS__CHUNKS_DISCARDED && f.wire_type == PZ_WIRE_VARINT) {
			discarded += f.value;
			continue;
		}
		if (f.id != PB_TRACE_STATS__BUFFER_STATS || f.wire_type != PZ_WIRE_LEN)
			continue;
		pz_reader_init(&br, f.data, f.size);
		while (pz_reader_next(&br, &g) == 1) {
			if (g.id == PB_TRACE_STATS_BUFFER_STATS__CHUNKS_DISCARDED)
				discarded += g.value;
			else if (g.id == PB_TRACE_STATS_BUFFER_STATS__CHUNKS_OVERWRITTEN)
				overwritten += g.value;
		}
	}
	if (r.err != PZ_OK)
		c->is_parse_error = true;
	/* Cumulative: the last TraceStats packet wins. */
	c->chunks_discarded = discarded;
	c->chunks_overwritten = overwritten;
}

static void walk_trace(const uint8_t *data, size_t len, struct counts *c);

/* compressed_packets (TraceConfig.compression): a zlib'd Trace inside. */
static void walk_compressed(const struct pz_field *f, struct counts *c)
{
	struct buf out = BUF_INIT;

	if (inflate_all(f->data, f->size, 1u << 30, &out) < 0)
		c->is_parse_error = true;
	else
		walk_trace(out.data, out.len, c);
	buf_fini(&out);
}

static void walk_packet(const struct pz_field *pf, struct counts *c)
{
	struct pz_reader r;
	struct pz_field f;
	int rc;

	c->packets++;
	pz_reader_init(&r, pf->data, pf->size);
	while ((rc = pz_reader_next(&r, &f)) == 1) {
		if (f.id == PB_TRACE_PACKET__FTRACE_EVENTS && f.wire_type == PZ_WIRE_LEN)
			walk_bundle(&f, c);
		else if (f.id == PB_TRACE_PACKET__FTRACE_STATS && f.wire_type == PZ_WIRE_LEN)
			walk_ftrace_stats(&f, c);
		else if (f.id == PB_TRACE_PACKET__TRACE_STATS && f.wire_type == PZ_WIRE_LEN)
			walk_trace_stats(&f, c);
		else if (f.id == PB_TRACE_PACKET__PREVIOUS_PACKET_DROPPED && f.value)
			c->packets_dropped++;
		else if (f.id == PB_TRACE_PACKET__COMPRESSED_PACKETS && f.wire_type == PZ_WIRE_LEN)
			walk_compressed(&f, c);
	}
	if (rc < 0)
		c->is_parse_error = true;
}

static void walk_trace(const uint8_t *data, size_t len, struct counts *c)
{
	struct pz_reader r;
	struct pz_field f;
	int rc;

	pz_reader_init(&r, data, len);
	while ((rc = pz_reader_next(&r, &f)) == 1)
		if (f.id == PB_TRACE__PACKET && f.wire_type == PZ_WIRE_LEN)
			walk_packet(&f, c);
	if (rc < 0)
		c->is_parse_error = true;
}

static void loss_totals(const struct counts *c, uint64_t *out_overrun, uint64_t *out_dropped)
{
	uint64_t o = 0, d = 0;

	for (unsigned i = 0; i < MAX_CPUS && c->has_end; i++) {
		uint64_t so = c->has_start ? c->start[i].overrun : 0;
		uint64_t sd = c->has_start ? c->start[i].dropped : 0;

		o += c->end[i].overrun >= so ? c->end[i].overrun - so : 0;
		d += c->end[i].dropped >= sd ? c->end[i].dropped - sd : 0;
	}
	*out_overrun = o;
	*out_dropped = d;
}

static void print_counts(const struct counts *c, uint64_t size_bytes)
{
	uint64_t overrun, dropped;
	uint64_t events = c->compact_switch + c->compact_waking + c->plain_switch +
			  c->plain_waking;

	loss_totals(c, &overrun, &dropped);
	printf("events=%" PRIu64 " switch=%" PRIu64 " waking=%" PRIu64 " compact=%" PRIu64
	       " other=%" PRIu64 " overrun=%" PRIu64 " dropped=%" PRIu64
	       " lost_bundles=%" PRIu64 " packets_dropped=%" PRIu64
	       " chunks_discarded=%" PRIu64 " chunks_overwritten=%" PRIu64
	       " has_end_stats=%d packets=%" PRIu64 " bytes=%" PRIu64 " parse_error=%d\n",
	       events, c->compact_switch + c->plain_switch, c->compact_waking + c->plain_waking,
	       c->compact_switch + c->compact_waking, c->plain_other, overrun, dropped,
	       c->lost_bundles, c->packets_dropped, c->chunks_discarded, c->chunks_overwritten,
	       c->has_end ? 1 : 0, c->packets, size_bytes, c->is_parse_error ? 1 : 0);
}

/* Builds one trace with 3 compact switches, 2 compact wakings, 1 plain
 * sched_switch, and END_OF_TRACE stats with overrun 5 on CPU 1. */
static int smoke(void)
{
	static uint8_t buf[4096];
	static struct counts c;
	struct pz_stream s;
	struct pz_msg root, pkt, bundle, cs, ev, sw, st, cpu;
	uint8_t packed[16];
	uint64_t overrun, dropped;
	size_t n;

	pz_stream_init_flat(&s, buf, sizeof(buf));
	pz_msg_begin(&root, &s, NULL);

	pz_begin_nested(&root, PB_TRACE__PACKET, &pkt);
	pz_begin_nested(&pkt, PB_TRACE_PACKET__FTRACE_EVENTS, &bundle);
	pz_append_varint(&bundle, PB_FTRACE_EVENT_BUNDLE__CPU, 1);
	pz_begin_nested(&bundle, PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED, &cs);
	n = 0;
	for (int i = 0; i < 3; i++)
		n += pz_varint_encode(1000 + (uint64_t)i * 300, packed + n);
	pz_append_bytes(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_TIMESTAMP, packed, n);
	n = 0;
	for (int i = 0; i < 2; i++)
		n += pz_varint_encode(7 + (uint64_t)i, packed + n);
	pz_append_bytes(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_TIMESTAMP, packed, n);
	pz_end(&cs);
	pz_begin_nested(&bundle, PB_FTRACE_EVENT_BUNDLE__EVENT, &ev);
	pz_append_varint(&ev, PB_FTRACE_EVENT__TIMESTAMP, 5000);
	pz_append_varint(&ev, PB_FTRACE_EVENT__PID, 42);
	pz_begin_nested(&ev, PB_FTRACE_EVENT__SCHED_SWITCH, &sw);
	pz_append_string(&sw, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_COMM, "a");
	pz_end(&sw);
	pz_end(&ev);
	pz_end(&bundle);
	pz_end(&pkt);

	pz_begin_nested(&root, PB_TRACE__PACKET, &pkt);
	pz_begin_nested(&pkt, PB_TRACE_PACKET__FTRACE_STATS, &st);
	pz_append_varint(&st, PB_FTRACE_STATS__PHASE, PBE_FTRACE_STATS_PHASE__END_OF_TRACE);
	pz_begin_nested(&st, PB_FTRACE_STATS__CPU_STATS, &cpu);
	pz_append_varint(&cpu, PB_FTRACE_CPU_STATS__CPU, 1);
	pz_append_varint(&cpu, PB_FTRACE_CPU_STATS__OVERRUN, 5);
	pz_end(&cpu);
	pz_end(&st);
	pz_end(&pkt);

	if (!pz_stream_ok(&s)) {
		fprintf(stderr, "count_sched: smoke trace did not fit\n");
		return 1;
	}
	walk_trace(buf, (size_t)s.n_bytes, &c);
	loss_totals(&c, &overrun, &dropped);
	print_counts(&c, s.n_bytes);
	if (c.compact_switch != 3 || c.compact_waking != 2 || c.plain_switch != 1 ||
	    overrun != 5 || dropped != 0 || c.packets != 2 || c.is_parse_error) {
		fprintf(stderr, "count_sched: smoke counts are wrong\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct counts c;
	struct stat st;
	void *map;
	int fd;

	if (argc < 2 || strcmp(argv[1], "--smoke") == 0)
		return smoke();
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: %s TRACE | --smoke\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "count_sched: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (st.st_size == 0) {
		print_counts(&c, 0);
		return 0;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		fprintf(stderr, "count_sched: mmap %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	walk_trace(map, (size_t)st.st_size, &c);
	print_counts(&c, (uint64_t)st.st_size);
	munmap(map, (size_t)st.st_size);
	close(fd);
	return c.is_parse_error ? 1 : 0;
}
