// SPDX-License-Identifier: Apache-2.0
/*
 * perf_packets.c - linux.perf packets (see perf_packets.h). Samples carry
 * the perf clock's timestamps and inherit their clock from the defaults;
 * the defaults and loss packets are stamped with BOOTTIME, as upstream.
 */
#include "perf/perf_packets.h"

#include "base/clock.h"
#include "pb_fields.h"

enum {
	SEQ_INCREMENTAL_STATE_CLEARED = 1,
	SEQ_NEEDS_INCREMENTAL_STATE = 2,
	BUILTIN_CLOCK_BOOTTIME = 6,
	MODIFIER_USER = 1,
	MODIFIER_KERNEL = 2,
	MODIFIER_HV = 3,
};

/* Timebase and FollowerEvent share the event's field numbers but for the
 * oneof's; @ids gives them per message. */
struct event_ids {
	uint32_t counter, tracepoint, raw, name, modifiers;
};

static const struct event_ids k_timebase_ids = {
	PB_PERF_EVENTS_TIMEBASE__COUNTER, PB_PERF_EVENTS_TIMEBASE__TRACEPOINT,
	PB_PERF_EVENTS_TIMEBASE__RAW_EVENT, PB_PERF_EVENTS_TIMEBASE__NAME,
	PB_PERF_EVENTS_TIMEBASE__MODIFIERS,
};
static const struct event_ids k_follower_ids = {
	PB_FOLLOWER_EVENT__COUNTER, PB_FOLLOWER_EVENT__TRACEPOINT, PB_FOLLOWER_EVENT__RAW_EVENT,
	PB_FOLLOWER_EVENT__NAME, PB_FOLLOWER_EVENT__MODIFIERS,
};

static void write_event(struct pz_msg *m, const struct perf_event_desc *d,
			const struct event_ids *ids)
{
	struct pz_msg sub;

	switch (d->kind) {
	case PERF_EV_COUNTER:
		pz_append_varint(m, ids->counter, d->counter);
		break;
	case PERF_EV_TRACEPOINT:
		pz_begin_nested(m, ids->tracepoint, &sub);
		pz_append_string(&sub, PB_PERF_EVENTS_TRACEPOINT__NAME, d->tp_name);
		if (d->tp_filter[0])
			pz_append_string(&sub, PB_PERF_EVENTS_TRACEPOINT__FILTER, d->tp_filter);
		pz_end(&sub);
		break;
	case PERF_EV_RAW:
		pz_begin_nested(m, ids->raw, &sub);
		pz_append_varint(&sub, PB_PERF_EVENTS_RAW_EVENT__TYPE, d->type);
		pz_append_varint(&sub, PB_PERF_EVENTS_RAW_EVENT__CONFIG, d->config);
		pz_append_varint(&sub, PB_PERF_EVENTS_RAW_EVENT__CONFIG1, d->config1);
		pz_append_varint(&sub, PB_PERF_EVENTS_RAW_EVENT__CONFIG2, d->config2);
		pz_end(&sub);
		break;
	}
	if (d->name[0])
		pz_append_string(m, ids->name, d->name);
	if (d->exclude_user || d->exclude_kernel || d->exclude_hv) {
		if (!d->exclude_user)
			pz_append_varint(m, ids->modifiers, MODIFIER_USER);
		if (!d->exclude_kernel)
			pz_append_varint(m, ids->modifiers, MODIFIER_KERNEL);
		if (!d->exclude_hv)
			pz_append_varint(m, ids->modifiers, MODIFIER_HV);
	}
}

void perf_write_defaults(struct pz_msg *pkt, const struct perf_config *c)
{
	struct pz_msg defaults, psd, tb, f;
	size_t i;

	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP, (uint64_t)clock_boottime_ns());
	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP_CLOCK_ID, BUILTIN_CLOCK_BOOTTIME);
	pz_append_varint(pkt, PB_TRACE_PACKET__SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	pz_begin_nested(pkt, PB_TRACE_PACKET__TRACE_PACKET_DEFAULTS, &defaults);
	pz_append_varint(&defaults, PB_TRACE_PACKET_DEFAULTS__TIMESTAMP_CLOCK_ID, c->builtin_clock);
	pz_begin_nested(&defaults, PB_TRACE_PACKET_DEFAULTS__PERF_SAMPLE_DEFAULTS, &psd);
	pz_begin_nested(&psd, PB_PERF_SAMPLE_DEFAULTS__TIMEBASE, &tb);
	if (c->frequency)
		pz_append_varint(&tb, PB_PERF_EVENTS_TIMEBASE__FREQUENCY, c->frequency);
	else
		pz_append_varint(&tb, PB_PERF_EVENTS_TIMEBASE__PERIOD, c->period);
	write_event(&tb, &c->timebase, &k_timebase_ids);
	pz_end(&tb);
	for (i = 0; i < c->n_followers; i++) {
		pz_begin_nested(&psd, PB_PERF_SAMPLE_DEFAULTS__FOLLOWERS, &f);
		write_event(&f, &c->followers[i], &k_follower_ids);
		pz_end(&f);
	}
	if (c->scope.shard_count) {
		pz_append_varint(&psd, PB_PERF_SAMPLE_DEFAULTS__PROCESS_SHARD_COUNT,
				 c->scope.shard_count);
		pz_append_varint(&psd, PB_PERF_SAMPLE_DEFAULTS__CHOSEN_PROCESS_SHARD,
				 c->scope.chosen_shard);
	}
	pz_end(&psd);
	pz_end(&defaults);
}

void perf_write_sample_header(struct pz_msg *pkt, uint64_t ts)
{
	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP, ts);
	pz_append_varint(pkt, PB_TRACE_PACKET__SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
}

static uint32_t cpu_mode_enum(uint16_t misc_mode)
{
	switch (misc_mode) {
	case PERF_RECORD_MISC_KERNEL:
		return 1;
	case PERF_RECORD_MISC_USER:
		return 2;
	case PERF_RECORD_MISC_HYPERVISOR:
		return 3;
	case PERF_RECORD_MISC_GUEST_KERNEL:
		return 4;
	case PERF_RECORD_MISC_GUEST_USER:
		return 5;
	default:
		return 0;
	}
}

void perf_write_sample_common(struct pz_msg *ps, uint32_t cpu, const struct perf_sample *s)
{
	uint32_t i;

	pz_append_varint(ps, PB_PERF_SAMPLE__CPU, cpu);
	pz_append_varint(ps, PB_PERF_SAMPLE__PID, s->pid);
	pz_append_varint(ps, PB_PERF_SAMPLE__TID, s->tid);
	pz_append_varint(ps, PB_PERF_SAMPLE__CPU_MODE, cpu_mode_enum(s->cpu_mode));
	pz_append_varint(ps, PB_PERF_SAMPLE__TIMEBASE_COUNT, s->timebase_count);
	for (i = 0; i < s->n_followers; i++)
		pz_append_varint(ps, PB_PERF_SAMPLE__FOLLOWER_COUNTS, s->follower_counts[i]);
}

void perf_write_guardrail_stop(struct pz_msg *pkt)
{
	struct pz_msg ps, ev;

	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP, (uint64_t)clock_boottime_ns());
	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP_CLOCK_ID, BUILTIN_CLOCK_BOOTTIME);
	pz_append_varint(pkt, PB_TRACE_PACKET__SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
	pz_begin_nested(pkt, PB_TRACE_PACKET__PERF_SAMPLE, &ps);
	pz_begin_nested(&ps, PB_PERF_SAMPLE__PRODUCER_EVENT, &ev);
	pz_append_varint(&ev, PB_PERF_SAMPLE_PRODUCER_EVENT__SOURCE_STOP_REASON,
			 PBE_PERF_SAMPLE_PRODUCER_EVENT_DATA_SOURCE_STOP_REASON__PROFILER_STOP_GUARDRAIL);
	pz_end(&ev);
	pz_end(&ps);
}

void perf_write_lost(struct pz_msg *pkt, uint32_t cpu, uint64_t lost)
{
	struct pz_msg ps;

	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP, (uint64_t)clock_boottime_ns());
	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP_CLOCK_ID, BUILTIN_CLOCK_BOOTTIME);
	pz_append_varint(pkt, PB_TRACE_PACKET__SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
	pz_begin_nested(pkt, PB_TRACE_PACKET__PERF_SAMPLE, &ps);
	pz_append_varint(&ps, PB_PERF_SAMPLE__CPU, cpu);
	pz_append_varint(&ps, PB_PERF_SAMPLE__KERNEL_RECORDS_LOST, lost);
	pz_end(&ps);
}
