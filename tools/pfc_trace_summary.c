// SPDX-License-Identifier: Apache-2.0
/*
 * pfc_trace_summary.c - a quick look at a trace file without the trace
 * processor: what kinds of packets it holds, how long it spans, and the
 * threads that ran longest, computed from the sched_switch events (plain
 * FtraceEvents and compact_sched alike). `make demo` prints it.
 *   pfc_trace_summary TRACE [--top N]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/file.h"
#include "base/hmap.h"
#include "base/inflate.h"
#include "pb_fields.h"
#include "protozero/protozero.h"

#define MAX_TRACE_BYTES (4ull << 30)
#define MAX_CPUS 1024
#define COMM_LEN 16

struct thread {
	int32_t tid;
	char comm[COMM_LEN + 1];
	uint64_t run_ns;
	uint64_t switches_in;
};

struct cpu_state {
	bool has_current;
	uint64_t since_ns;
	int32_t tid;
};

static struct {
	struct thread *threads;
	size_t n_threads, cap_threads;
	struct hmap by_tid;          /* tid -> index + 1 */
	struct hmap tgid_of;         /* tid -> tgid, from ProcessTree */
	struct cpu_state cpus[MAX_CPUS];
	uint64_t packets, ftrace_events, compact_switches, compact_wakings, process_trees;
	uint64_t compressed;          /* compressed_packets unpacked */
	uint64_t first_ts, last_ts;
	uint32_t max_cpu;
} g;

static struct thread *thread_get(int32_t tid)
{
	uint64_t v;
	struct thread *t;

	if (hmap_get(&g.by_tid, (uint64_t)(uint32_t)tid, &v))
		return &g.threads[v - 1];
	if (g.n_threads == g.cap_threads) {
		size_t cap = g.cap_threads ? 2 * g.cap_threads : 256;
		struct thread *n = realloc(g.threads, cap * sizeof(*n));

		if (!n)
			return NULL;
		g.threads = n;
		g.cap_threads = cap;
	}
	t = &g.threads[g.n_threads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	hmap_put(&g.by_tid, (uint64_t)(uint32_t)tid, g.n_threads);
	return t;
}

static void seen_ts(uint64_t ts)
{
	if (!ts)
		return;
	if (!g.first_ts || ts < g.first_ts)
		g.first_ts = ts;
	if (ts > g.last_ts)
		g.last_ts = ts;
}

/* One switch on @cpu at @ts to @tid (named @comm). */
static void on_switch(uint32_t cpu, uint64_t ts, int32_t tid, const uint8_t *comm, size_t len)
{
	struct cpu_state *c;
	struct thread *t;

	if (cpu >= MAX_CPUS)
		return;
	if (cpu > g.max_cpu)
		g.max_cpu = cpu;
	seen_ts(ts);
	c = &g.cpus[cpu];
	if (c->has_current && ts >= c->since_ns && (t = thread_get(c->tid)))
		t->run_ns += ts - c->since_ns;
	c->has_current = true;
	c->since_ns = ts;
	c->tid = tid;
	t = thread_get(tid);
	if (t) {
		t->switches_in++;
		if (comm && len) {
			if (len > COMM_LEN)
				len = COMM_LEN;
			memcpy(t->comm, comm, len);
			t->comm[len] = '\0';
		}
	}
}

static void read_event(uint32_t cpu, const uint8_t *p, size_t n)
{
	struct pz_field f[8], sw[8];
	struct pz_reader r;
	struct pz_field fld;

	g.ftrace_events++;
	if (pz_decode_table(p, n, f, 8) != PZ_OK)
		return;
	seen_ts(f[PB_FTRACE_EVENT__TIMESTAMP].value);
	pz_reader_init(&r, p, n);
	while (pz_reader_next(&r, &fld) > 0) {
		if (fld.id != PB_FTRACE_EVENT__SCHED_SWITCH || fld.wire_type != PZ_WIRE_LEN)
			continue;
		if (pz_decode_table(fld.data, fld.size, sw, 8) != PZ_OK)
			return;
		on_switch(cpu, f[PB_FTRACE_EVENT__TIMESTAMP].value,
			  pz_field_int32(&sw[PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PID]),
			  sw[PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_COMM].data,
			  sw[PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_COMM].size);
	}
}

/* compact_sched: switch_timestamp (deltas), switch_next_pid, comm indices. */
static void read_compact(uint32_t cpu, const uint8_t *p, size_t n)
{
	struct pz_field ts_f = {0}, pid_f = {0}, comm_f = {0};
	const uint8_t *interned[1024];
	size_t interned_len[1024], n_interned = 0;
	struct pz_packed ts_it, pid_it, comm_it;
	struct pz_reader r;
	struct pz_field f;
	uint64_t ts = 0, d, pid, ci;

	pz_reader_init(&r, p, n);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_TIMESTAMP)
			ts_f = f;
		else if (f.id == PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_PID)
			pid_f = f;
		else if (f.id == PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_COMM_INDEX)
			comm_f = f;
		else if (f.id == PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__INTERN_TABLE &&
			 n_interned < PFC_ARRAY_SIZE(interned)) {
			interned[n_interned] = f.data;
			interned_len[n_interned++] = f.size;
		} else if (f.id == PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_PID) {
			g.compact_wakings++;
		}
	}
	if (!ts_f.data)
		return;
	pz_packed_init(&ts_it, &ts_f);
	pz_packed_init(&pid_it, &pid_f);
	pz_packed_init(&comm_it, &comm_f);
	while (pz_packed_next_varint(&ts_it, &d) > 0 && pz_packed_next_varint(&pid_it, &pid) > 0) {
		bool has_comm = pz_packed_next_varint(&comm_it, &ci) > 0 && ci < n_interned;

		ts += d;
		g.compact_switches++;
		on_switch(cpu, ts, (int32_t)pid, has_comm ? interned[ci] : NULL,
			  has_comm ? interned_len[ci] : 0);
	}
}

static void read_bundle(const uint8_t *p, size_t n)
{
	struct pz_reader r;
	struct pz_field f;
	uint32_t cpu = 0;

	/* The cpu field may come after the events: find it first. */
	pz_reader_init(&r, p, n);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_FTRACE_EVENT_BUNDLE__CPU)
			cpu = (uint32_t)f.value;
	}
	pz_reader_init(&r, p, n);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_FTRACE_EVENT_BUNDLE__EVENT)
			read_event(cpu, f.data, f.size);
		else if (f.id == PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED)
			read_compact(cpu, f.data, f.size);
	}
}

static void read_process_tree(const uint8_t *p, size_t n)
{
	struct pz_reader r;
	struct pz_field f, t[8];

	g.process_trees++;
	pz_reader_init(&r, p, n);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id != PB_PROCESS_TREE__THREADS ||
		    pz_decode_table(f.data, f.size, t, 8) != PZ_OK)
			continue;
		hmap_put(&g.tgid_of, (uint64_t)(uint32_t)pz_field_int32(&t[PB_PROCESS_TREE_THREAD__TID]),
			 (uint64_t)(uint32_t)pz_field_int32(&t[PB_PROCESS_TREE_THREAD__TGID]));
	}
}

static void read_trace_packet(const uint8_t *p, size_t n);

/* compressed_packets: zlib of Trace-framed packets (TraceConfig.compression). */
static void read_compressed(const uint8_t *p, size_t n)
{
	struct buf out = BUF_INIT;
	struct pz_reader r;
	struct pz_field f;

	g.compressed++;
	if (inflate_all(p, n, 1u << 30, &out) >= 0) {
		pz_reader_init(&r, out.data, out.len);
		while (pz_reader_next(&r, &f) > 0) {
			if (f.id == PB_TRACE__PACKET && f.wire_type == PZ_WIRE_LEN)
				read_trace_packet(f.data, f.size);
		}
	}
	buf_fini(&out);
}

static void read_trace_packet(const uint8_t *p, size_t n)
{
	struct pz_reader pr;
	struct pz_field pf;

	g.packets++;
	pz_reader_init(&pr, p, n);
	while (pz_reader_next(&pr, &pf) > 0) {
		if (pf.id == PB_TRACE_PACKET__FTRACE_EVENTS)
			read_bundle(pf.data, pf.size);
		else if (pf.id == PB_TRACE_PACKET__PROCESS_TREE)
			read_process_tree(pf.data, pf.size);
		else if (pf.id == PB_TRACE_PACKET__COMPRESSED_PACKETS)
			read_compressed(pf.data, pf.size);
	}
}

static int cmp_run(const void *a, const void *b)
{
	const struct thread *x = a, *y = b;

	return x->run_ns < y->run_ns ? 1 : x->run_ns > y->run_ns ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct buf b = BUF_INIT;
	struct pz_reader r;
	struct pz_field f;
	size_t i, top = 10, shown = 0;
	uint64_t tgid, busy = 0;
	double span;
	int rc;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(argc < 2 ? stderr : stdout, "usage: pfc_trace_summary TRACE [--top N]\n");
		return argc < 2 ? 2 : 0;
	}
	if (argc >= 4 && !strcmp(argv[2], "--top"))
		top = (size_t)strtoul(argv[3], NULL, 10);
	rc = file_read_all(argv[1], &b, MAX_TRACE_BYTES);
	if (rc < 0) {
		fprintf(stderr, "pfc_trace_summary: cannot read %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	hmap_init(&g.by_tid);
	hmap_init(&g.tgid_of);
	pz_reader_init(&r, b.data, b.len);
	while ((rc = pz_reader_next(&r, &f)) > 0) {
		if (f.id != PB_TRACE__PACKET || f.wire_type != PZ_WIRE_LEN)
			continue;
		read_trace_packet(f.data, f.size);
	}
	if (rc < 0) {
		fprintf(stderr, "pfc_trace_summary: %s is not a valid trace (%s at byte %zu)\n",
			argv[1], pz_read_error_str(r.err), pz_reader_offset(&r));
		return 1;
	}
	span = g.last_ts > g.first_ts ? (double)(g.last_ts - g.first_ts) / 1e9 : 0;
	printf("%s: %zu bytes, %llu packets, %.2f s of kernel events on %u CPUs\n", argv[1], b.len,
	       (unsigned long long)g.packets, span, g.max_cpu + 1);
	printf("  sched switches: %llu (compact_sched) + plain ftrace events: %llu; "
	       "process trees: %llu%s\n",
	       (unsigned long long)g.compact_switches, (unsigned long long)g.ftrace_events,
	       (unsigned long long)g.process_trees, g.compressed ? "; zlib-compressed" : "");
	qsort(g.threads, g.n_threads, sizeof(*g.threads), cmp_run);
	for (i = 0; i < g.n_threads; i++) {
		if (g.threads[i].tid > 0)
			busy += g.threads[i].run_ns;
	}
	if (!g.n_threads) {
		printf("  no sched_switch events: nothing to rank\n");
		buf_fini(&b);
		return 0;
	}
	printf("\n  top threads by running time (idle excluded; %.2f CPU-s busy in all):\n",
	       (double)busy / 1e9);
	printf("  %8s %8s  %-16s %12s %8s\n", "tid", "pid", "comm", "running ms", "% busy");
	for (i = 0; i < g.n_threads && shown < top; i++) {
		const struct thread *t = &g.threads[i];

		if (t->tid <= 0)
			continue;
		if (!hmap_get(&g.tgid_of, (uint64_t)(uint32_t)t->tid, &tgid))
			tgid = (uint64_t)(uint32_t)t->tid;
		printf("  %8d %8d  %-16s %12.2f %7.1f%%\n", t->tid, (int32_t)tgid,
		       t->comm[0] ? t->comm : "?", (double)t->run_ns / 1e6,
		       busy ? 100.0 * (double)t->run_ns / (double)busy : 0.0);
		shown++;
	}
	buf_fini(&b);
	free(g.threads);
	hmap_fini(&g.by_tid);
	hmap_fini(&g.tgid_of);
	return 0;
}
