// SPDX-License-Identifier: Apache-2.0
/*
 * protozero_bench.c - encodes and decodes a sched_switch-shaped FtraceEvent
 * and a nested TracePacket (an FtraceEventBundle of 8 such events) with our
 * zero-copy writer/reader, then packs and unpacks the same messages with
 * protobuf-c in the same process, and prints ns per message and the ratios.
 * Both sides' output is cross-checked before timing. `--smoke` runs a few
 * iterations only (CI keeps the benchmark compiling and working).
 * Targets (issue 2): encode >= 3x faster than protobuf-c pack, decode >= 3x
 * faster than protobuf-c unpack.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace/trace_packet.pb-c.h"

#define EVENTS_PER_BUNDLE 8

struct sched_switch_view {
	uint64_t ts;
	int32_t pid;
	const uint8_t *prev_comm, *next_comm;
	uint32_t prev_comm_len, next_comm_len;
	int32_t prev_pid, prev_prio, next_pid, next_prio;
	int64_t prev_state;
};

static volatile uint64_t g_sink;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ------------------------------------------------------------- ours ---- */

static void pz_write_event(struct pz_msg *ev, uint64_t ts, int i)
{
	struct pz_msg sw;

	pz_append_varint(ev, PB_FTRACE_EVENT__TIMESTAMP, ts);
	pz_append_varint(ev, PB_FTRACE_EVENT__PID, 1234 + i);
	pz_begin_nested(ev, PB_FTRACE_EVENT__SCHED_SWITCH, &sw);
	pz_append_string(&sw, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_COMM, "dataloader_7");
	pz_append_varint(&sw, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_PID, 1234 + i);
	pz_append_varint(&sw, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_PRIO, 120);
	pz_append_int(&sw, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_STATE, 1);
	pz_append_string(&sw, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_COMM, "swapper/1");
	pz_append_varint(&sw, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PID, 0);
	pz_append_varint(&sw, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PRIO, 120);
	pz_end(&sw);
}

static size_t pz_encode_event(uint8_t *buf, size_t cap, uint64_t ts)
{
	struct pz_stream s;
	struct pz_msg ev;

	pz_stream_init_flat(&s, buf, cap);
	pz_msg_begin(&ev, &s, NULL);
	pz_write_event(&ev, ts, 0);
	return pz_end(&ev);
}

static size_t pz_encode_packet(uint8_t *buf, size_t cap, uint64_t ts)
{
	struct pz_stream s;
	struct pz_msg pkt, bundle, ev;
	int i;

	pz_stream_init_flat(&s, buf, cap);
	pz_msg_begin(&pkt, &s, NULL);
	pz_append_varint(&pkt, PB_TRACE_PACKET__TIMESTAMP, ts);
	pz_begin_nested(&pkt, PB_TRACE_PACKET__FTRACE_EVENTS, &bundle);
	pz_append_varint(&bundle, PB_FTRACE_EVENT_BUNDLE__CPU, 3);
	for (i = 0; i < EVENTS_PER_BUNDLE; i++) {
		pz_begin_nested(&bundle, PB_FTRACE_EVENT_BUNDLE__EVENT, &ev);
		pz_write_event(&ev, ts + (uint64_t)i, i);
		pz_end(&ev);
	}
	return pz_end(&pkt);
}

static int pz_decode_switch(const uint8_t *p, size_t len, struct sched_switch_view *v)
{
	struct pz_reader r;
	struct pz_field f;
	int rc;

	pz_reader_init(&r, p, len);
	while ((rc = pz_reader_next(&r, &f)) > 0) {
		switch (f.id) {
		case PB_SCHED_SWITCH_FTRACE_EVENT__PREV_COMM:
			v->prev_comm = f.data;
			v->prev_comm_len = f.size;
			break;
		case PB_SCHED_SWITCH_FTRACE_EVENT__PREV_PID:
			v->prev_pid = pz_field_int32(&f);
			break;
		case PB_SCHED_SWITCH_FTRACE_EVENT__PREV_PRIO:
			v->prev_prio = pz_field_int32(&f);
			break;
		case PB_SCHED_SWITCH_FTRACE_EVENT__PREV_STATE:
			v->prev_state = pz_field_int64(&f);
			break;
		case PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_COMM:
			v->next_comm = f.data;
			v->next_comm_len = f.size;
			break;
		case PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PID:
			v->next_pid = pz_field_int32(&f);
			break;
		case PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PRIO:
			v->next_prio = pz_field_int32(&f);
			break;
		}
	}
	return rc;
}

static int pz_decode_event(const uint8_t *p, size_t len, struct sched_switch_view *v)
{
	struct pz_reader r;
	struct pz_field f;
	int rc;

	pz_reader_init(&r, p, len);
	while ((rc = pz_reader_next(&r, &f)) > 0) {
		if (f.id == PB_FTRACE_EVENT__TIMESTAMP)
			v->ts = f.value;
		else if (f.id == PB_FTRACE_EVENT__PID)
			v->pid = pz_field_int32(&f);
		else if (f.id == PB_FTRACE_EVENT__SCHED_SWITCH && pz_decode_switch(f.data, f.size, v) < 0)
			return -1;
	}
	return rc;
}

/* Decodes every event of the packet; returns how many, or -1. */
static int pz_decode_packet(const uint8_t *p, size_t len, struct sched_switch_view *out)
{
	struct pz_reader r, rb;
	struct pz_field f, fb;
	int n = 0;

	pz_reader_init(&r, p, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id != PB_TRACE_PACKET__FTRACE_EVENTS)
			continue;
		pz_reader_init(&rb, f.data, f.size);
		while (pz_reader_next(&rb, &fb) > 0) {
			if (fb.id == PB_FTRACE_EVENT_BUNDLE__EVENT && n < EVENTS_PER_BUNDLE &&
			    pz_decode_event(fb.data, fb.size, &out[n++]) < 0)
				return -1;
		}
		if (rb.err)
			return -1;
	}
	return r.err ? -1 : n;
}

/* -------------------------------------------------------- protobuf-c ---- */

struct pbc_event {
	Perfetto__Protos__FtraceEvent ev;
	Perfetto__Protos__SchedSwitchFtraceEvent sw;
};

static void pbc_fill_event(struct pbc_event *e, uint64_t ts, int i)
{
	perfetto__protos__ftrace_event__init(&e->ev);
	perfetto__protos__sched_switch_ftrace_event__init(&e->sw);
	e->ev.has_timestamp = 1;
	e->ev.timestamp = ts;
	e->ev.has_pid = 1;
	e->ev.pid = (uint32_t)(1234 + i);
	e->ev.event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_SWITCH;
	e->ev.sched_switch = &e->sw;
	e->sw.prev_comm = "dataloader_7";
	e->sw.has_prev_pid = 1;
	e->sw.prev_pid = 1234 + i;
	e->sw.has_prev_prio = 1;
	e->sw.prev_prio = 120;
	e->sw.has_prev_state = 1;
	e->sw.prev_state = 1;
	e->sw.next_comm = "swapper/1";
	e->sw.has_next_pid = 1;
	e->sw.next_pid = 0;
	e->sw.has_next_prio = 1;
	e->sw.next_prio = 120;
}

struct pbc_packet {
	Perfetto__Protos__TracePacket pkt;
	Perfetto__Protos__FtraceEventBundle bundle;
	struct pbc_event events[EVENTS_PER_BUNDLE];
	Perfetto__Protos__FtraceEvent *event_ptrs[EVENTS_PER_BUNDLE];
};

static void pbc_fill_packet(struct pbc_packet *p, uint64_t ts)
{
	int i;

	perfetto__protos__trace_packet__init(&p->pkt);
	perfetto__protos__ftrace_event_bundle__init(&p->bundle);
	p->pkt.has_timestamp = 1;
	p->pkt.timestamp = ts;
	p->pkt.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS;
	p->pkt.ftrace_events = &p->bundle;
	p->bundle.has_cpu = 1;
	p->bundle.cpu = 3;
	for (i = 0; i < EVENTS_PER_BUNDLE; i++) {
		pbc_fill_event(&p->events[i], ts + (uint64_t)i, i);
		p->event_ptrs[i] = &p->events[i].ev;
	}
	p->bundle.n_event = EVENTS_PER_BUNDLE;
	p->bundle.event = p->event_ptrs;
}

/* ------------------------------------------------------------ checks ---- */

static int check_event(const struct sched_switch_view *v, uint64_t ts, int i)
{
	return v->ts == ts && v->pid == 1234 + i && v->prev_pid == 1234 + i &&
	       v->prev_prio == 120 && v->prev_state == 1 && v->next_pid == 0 &&
	       v->next_prio == 120 && v->prev_comm_len == 12 &&
	       memcmp(v->prev_comm, "dataloader_7", 12) == 0 && v->next_comm_len == 9 &&
	       memcmp(v->next_comm, "swapper/1", 9) == 0;
}

/* Our bytes must unpack with protobuf-c, and protobuf-c's must decode with ours. */
static int cross_check(void)
{
	uint8_t ours[4096], theirs[4096];
	struct sched_switch_view views[EVENTS_PER_BUNDLE];
	struct pbc_packet pp;
	Perfetto__Protos__TracePacket *up;
	size_t n_ours, n_theirs;
	int i, ok = 1;

	n_ours = pz_encode_packet(ours, sizeof(ours), 1000);
	up = perfetto__protos__trace_packet__unpack(NULL, n_ours, ours);
	if (!up || !up->ftrace_events || up->ftrace_events->n_event != EVENTS_PER_BUNDLE ||
	    up->timestamp != 1000)
		ok = 0;
	for (i = 0; ok && i < EVENTS_PER_BUNDLE; i++) {
		Perfetto__Protos__FtraceEvent *e = up->ftrace_events->event[i];

		ok = e->timestamp == 1000u + (unsigned)i && e->sched_switch &&
		     strcmp(e->sched_switch->prev_comm, "dataloader_7") == 0 &&
		     e->sched_switch->prev_pid == 1234 + i && e->sched_switch->next_prio == 120;
	}
	if (up)
		perfetto__protos__trace_packet__free_unpacked(up, NULL);

	pbc_fill_packet(&pp, 1000);
	n_theirs = perfetto__protos__trace_packet__pack(&pp.pkt, theirs);
	memset(views, 0, sizeof(views));
	if (pz_decode_packet(theirs, n_theirs, views) != EVENTS_PER_BUNDLE)
		ok = 0;
	for (i = 0; ok && i < EVENTS_PER_BUNDLE; i++)
		ok = check_event(&views[i], 1000u + (unsigned)i, i);
	if (!ok)
		fprintf(stderr, "protozero_bench: cross-check between protozero and protobuf-c FAILED\n");
	return ok;
}

/* ------------------------------------------------------------ timing ---- */

struct result {
	const char *what;
	double ours_ns, theirs_ns;
};

static void print_result(const struct result *r, double target)
{
	double ratio = r->theirs_ns / r->ours_ns;

	printf("%-28s protozero %8.1f ns   protobuf-c %8.1f ns   ratio %5.2fx  (target >= %.0fx: %s)\n",
	       r->what, r->ours_ns, r->theirs_ns, ratio, target, ratio >= target ? "met" : "MISSED");
}

int main(int argc, char **argv)
{
	long iters = 2000000, i;
	static uint8_t buf[8192];
	struct sched_switch_view v[EVENTS_PER_BUNDLE];
	struct pbc_event pe;
	struct pbc_packet pp;
	size_t ev_len, pkt_len, pbc_ev_len, pbc_pkt_len;
	uint8_t ev_bytes[512], pkt_bytes[4096];
	struct result res[4];
	double t0;

	if (argc > 1 && strcmp(argv[1], "--smoke") == 0)
		iters = 2000;
	if (!cross_check())
		return 1;

	/* Encode: one event. */
	t0 = now_ns();
	for (i = 0; i < iters; i++)
		g_sink += pz_encode_event(buf, sizeof(buf), (uint64_t)i);
	res[0].ours_ns = (now_ns() - t0) / (double)iters;
	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		pbc_fill_event(&pe, (uint64_t)i, 0);
		g_sink += perfetto__protos__ftrace_event__pack(&pe.ev, buf);
	}
	res[0].theirs_ns = (now_ns() - t0) / (double)iters;
	res[0].what = "encode sched_switch event";

	/* Encode: nested packet. */
	t0 = now_ns();
	for (i = 0; i < iters / 8; i++)
		g_sink += pz_encode_packet(buf, sizeof(buf), (uint64_t)i);
	res[1].ours_ns = (now_ns() - t0) / (double)(iters / 8);
	t0 = now_ns();
	for (i = 0; i < iters / 8; i++) {
		pbc_fill_packet(&pp, (uint64_t)i);
		g_sink += perfetto__protos__trace_packet__pack(&pp.pkt, buf);
	}
	res[1].theirs_ns = (now_ns() - t0) / (double)(iters / 8);
	res[1].what = "encode packet (8 events)";

	/* Decode inputs: each side decodes the other's canonical bytes too. */
	ev_len = pz_encode_event(ev_bytes, sizeof(ev_bytes), 42);
	pkt_len = pz_encode_packet(pkt_bytes, sizeof(pkt_bytes), 42);
	pbc_fill_event(&pe, 42, 0);
	pbc_ev_len = perfetto__protos__ftrace_event__pack(&pe.ev, buf);
	pbc_fill_packet(&pp, 42);
	pbc_pkt_len = perfetto__protos__trace_packet__pack(&pp.pkt, buf + 1024);

	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		pz_decode_event(buf, pbc_ev_len, &v[0]);
		g_sink += (uint64_t)v[0].next_prio;
	}
	res[2].ours_ns = (now_ns() - t0) / (double)iters;
	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		Perfetto__Protos__FtraceEvent *e =
			perfetto__protos__ftrace_event__unpack(NULL, pbc_ev_len, buf);

		g_sink += (uint64_t)e->sched_switch->next_prio;
		perfetto__protos__ftrace_event__free_unpacked(e, NULL);
	}
	res[2].theirs_ns = (now_ns() - t0) / (double)iters;
	res[2].what = "decode sched_switch event";

	t0 = now_ns();
	for (i = 0; i < iters / 8; i++)
		g_sink += (uint64_t)pz_decode_packet(buf + 1024, pbc_pkt_len, v);
	res[3].ours_ns = (now_ns() - t0) / (double)(iters / 8);
	t0 = now_ns();
	for (i = 0; i < iters / 8; i++) {
		Perfetto__Protos__TracePacket *p =
			perfetto__protos__trace_packet__unpack(NULL, pbc_pkt_len, buf + 1024);

		g_sink += p->ftrace_events->n_event;
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	}
	res[3].theirs_ns = (now_ns() - t0) / (double)(iters / 8);
	res[3].what = "decode packet (8 events)";

	printf("protozero_bench: %ld iterations (%s); event %zu bytes (protobuf-c %zu), "
	       "packet %zu bytes (protobuf-c %zu)\n",
	       iters, iters < 100000 ? "smoke" : "full", ev_len, pbc_ev_len, pkt_len, pbc_pkt_len);
	for (i = 0; i < 4; i++)
		print_result(&res[i], 3.0);
	return 0;
}
