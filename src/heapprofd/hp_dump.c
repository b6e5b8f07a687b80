// SPDX-License-Identifier: Apache-2.0
/*
 * hp_dump.c - heap dumps as ProfilePackets (see hp_dump.h). The interned
 * data goes first, in its own packets, so a reader resolves every
 * callstack id of the samples that follow; the last ProfilePacket of a
 * dump has continued unset, which is where Perfetto's trace processor
 * commits the dump.
 */
#include "heapprofd/hp_dump.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "tracing/tracing.h"

/* Callstacks interned per packet, samples per ProfilePacket: packets stay
 * well under Perfetto's 400 kB dump packets. */
#define HP_STACKS_PER_PACKET 256u
#define HP_SAMPLES_PER_PACKET 4096u
#define HP_MAX_DEPTH 512u

enum { SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2 };

uint64_t hp_now_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void hp_seq_init(struct hp_seq *q, struct trace_writer *tw)
{
	memset(q, 0, sizeof(*q));
	q->tw = tw;
	perf_intern_init(&q->intern);
}

void hp_seq_fini(struct hp_seq *q)
{
	perf_intern_fini(&q->intern);
}

void hp_seq_clear(struct hp_seq *q)
{
	perf_intern_clear(&q->intern);
	q->started = false;
}

/* A packet of the sequence; the first clears the incremental state. */
static struct pz_msg *new_packet(struct hp_seq *q)
{
	struct pz_msg *pkt = tw_new_packet(q->tw);

	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP, now_boot_ns());
	if (!q->started) {
		pz_append_varint(pkt, PB_TRACE_PACKET__SEQUENCE_FLAGS,
				 SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE);
		q->started = true;
	} else {
		pz_append_varint(pkt, PB_TRACE_PACKET__SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
	}
	return pkt;
}

static void write_header(struct pz_msg *d, const struct hp_dump_hdr *h)
{
	struct pz_msg st;

	pz_append_varint(d, PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__PID, h->pid);
	pz_append_varint(d, PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__TIMESTAMP, h->ts_end);
	pz_append_varint(d, PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__START_TIMESTAMP, h->ts_start);
	pz_append_bool(d, PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__FROM_STARTUP, h->from_startup);
	pz_append_bool(d, PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__DISCONNECTED, h->disconnected);
	pz_append_bool(d, PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__BUFFER_OVERRAN,
		       h->buffer_overran);
	pz_append_varint(d, PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__CLIENT_ERROR, h->client_error);
	pz_append_bool(d, PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__BUFFER_CORRUPTED,
		       h->buffer_corrupted);
	pz_append_bool(d, PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__HIT_GUARDRAIL, false);
	if (h->heap_name && h->heap_name[0])
		pz_append_string(d, PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__HEAP_NAME, h->heap_name);
	pz_append_varint(d, PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__SAMPLING_INTERVAL_BYTES,
			 h->interval);
	pz_append_varint(d, PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__ORIG_SAMPLING_INTERVAL_BYTES,
			 h->interval);
	pz_begin_nested(d, PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__STATS, &st);
	pz_append_varint(&st, PB_PROFILE_PACKET_PROCESS_STATS__UNWINDING_ERRORS, h->unwinding_errors);
	pz_append_varint(&st, PB_PROFILE_PACKET_PROCESS_STATS__HEAP_SAMPLES, h->heap_samples);
	pz_append_varint(&st, PB_PROFILE_PACKET_PROCESS_STATS__MAP_REPARSES, 0);
	pz_append_varint(&st, PB_PROFILE_PACKET_PROCESS_STATS__TOTAL_UNWINDING_TIME_US, h->unwind_us);
	pz_append_varint(&st, PB_PROFILE_PACKET_PROCESS_STATS__CLIENT_SPINLOCK_BLOCKED_US,
			 h->blocked_us);
	pz_end(&st);
}

void hp_dump_rejected(struct hp_seq *q, uint32_t pid)
{
	struct pz_msg *pkt = new_packet(q), pp, d;

	pz_begin_nested(pkt, PB_TRACE_PACKET__PROFILE_PACKET, &pp);
	pz_begin_nested(&pp, PB_PROFILE_PACKET__PROCESS_DUMPS, &d);
	pz_append_varint(&d, PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__PID, pid);
	pz_append_bool(&d, PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__REJECTED_CONCURRENT, true);
	pz_end(&d);
	pz_append_varint(&pp, PB_PROFILE_PACKET__INDEX, q->next_index++);
	pz_end(&pp);
	tw_finish_packet(q->tw);
}

/* The interned id of @s's callstack, writing what is new into @interned. */
static uint64_t intern_stack(struct hp_seq *q, const struct hp_cstack *s, struct pz_msg *interned)
{
	struct intern_frame frames[HP_MAX_DEPTH];
	size_t n = s->n < HP_MAX_DEPTH ? s->n : HP_MAX_DEPTH, i;

	for (i = 0; i < n; i++) {
		const struct hp_frame *f = &s->frames[i];

		memset(&frames[i], 0, sizeof(frames[i]));
		frames[i].function = f->function;
		frames[i].map_path = f->map_path;
		frames[i].build_id = f->build_id;
		frames[i].build_id_len = f->build_id_len;
		frames[i].map_start = f->map_start;
		frames[i].map_end = f->map_end;
		frames[i].rel_pc = f->rel_pc;
	}
	return perf_intern_callstack(&q->intern, frames, n, interned);
}

int hp_dump_write(struct hp_seq *q, const struct hp_dump_hdr *h, const struct hp_book *b,
		  hp_cstack_lookup_cb lookup, void *user)
{
	uint64_t *iids = calloc(b->n_sites ? b->n_sites : 1, sizeof(*iids));
	struct pz_msg *pkt = NULL, interned, pp, d;
	size_t i, in_packet = 0, n_out = 0, written = 0;

	if (!iids)
		return -ENOMEM;
	/* Interned data first. */
	for (i = 0; i < b->n_sites; i++) {
		const struct hp_cstack *s = lookup(b->sites[i].cstack, user);

		if (!s)
			continue;
		if (!pkt) {
			pkt = new_packet(q);
			pz_begin_nested(pkt, PB_TRACE_PACKET__INTERNED_DATA, &interned);
		}
		iids[i] = intern_stack(q, s, &interned);
		if (++in_packet == HP_STACKS_PER_PACKET) {
			pz_end(&interned);
			tw_finish_packet(q->tw);
			pkt = NULL;
			in_packet = 0;
		}
	}
	if (pkt) {
		pz_end(&interned);
		tw_finish_packet(q->tw);
	}
	for (i = 0; i < b->n_sites; i++) {
		if (iids[i])
			n_out++;
	}
	/* Then the samples, in packets of bounded size; an empty dump is
	 * still one packet (the process and its stats). */
	pkt = NULL;
	in_packet = 0;
	for (i = 0; i <= b->n_sites; i++) {
		const struct hp_site *s = i < b->n_sites ? &b->sites[i] : NULL;
		struct pz_msg smp;

		if (s && !iids[i])
			continue;
		if (!pkt && (s || written == 0)) {
			pkt = new_packet(q);
			pz_begin_nested(pkt, PB_TRACE_PACKET__PROFILE_PACKET, &pp);
			pz_begin_nested(&pp, PB_PROFILE_PACKET__PROCESS_DUMPS, &d);
			write_header(&d, h);
		}
		if (!s)
			break;
		pz_begin_nested(&d, PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__SAMPLES, &smp);
		pz_append_varint(&smp, PB_PROFILE_PACKET_HEAP_SAMPLE__CALLSTACK_ID, iids[i]);
		if (h->dump_at_max) {
			uint64_t bytes, count;

			hp_book_peak(b, s, &bytes, &count);
			pz_append_varint(&smp, PB_PROFILE_PACKET_HEAP_SAMPLE__SELF_MAX, bytes);
			pz_append_varint(&smp, PB_PROFILE_PACKET_HEAP_SAMPLE__SELF_MAX_COUNT, count);
		} else {
			pz_append_varint(&smp, PB_PROFILE_PACKET_HEAP_SAMPLE__SELF_ALLOCATED,
					 s->allocated);
			pz_append_varint(&smp, PB_PROFILE_PACKET_HEAP_SAMPLE__SELF_FREED, s->freed);
			pz_append_varint(&smp, PB_PROFILE_PACKET_HEAP_SAMPLE__ALLOC_COUNT,
					 s->alloc_count);
			pz_append_varint(&smp, PB_PROFILE_PACKET_HEAP_SAMPLE__FREE_COUNT,
					 s->free_count);
		}
		pz_end(&smp);
		written++;
		if (++in_packet == HP_SAMPLES_PER_PACKET && written < n_out) {
			pz_end(&d);
			pz_append_bool(&pp, PB_PROFILE_PACKET__CONTINUED, true);
			pz_append_varint(&pp, PB_PROFILE_PACKET__INDEX, q->next_index++);
			pz_end(&pp);
			tw_finish_packet(q->tw);
			pkt = NULL;
			in_packet = 0;
		}
	}
	if (pkt) {
		pz_end(&d);
		pz_append_varint(&pp, PB_PROFILE_PACKET__INDEX, q->next_index++);
		pz_end(&pp);
		tw_finish_packet(q->tw);
	}
	free(iids);
	return 0;
}
