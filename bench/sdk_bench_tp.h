/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sdk_bench_tp.h - the LTTng-UST tracepoint provider of sdk_bench's peer
 * (bench/sdk_bench_lttng.c): pfc_bench:slice, which the bench's session
 * enables, and pfc_bench:off with the same fields, which it does not. The
 * fields (a short name and a 64-bit value) are what a slice begin with one
 * annotation carries. Read several times by lttng/tracepoint.h.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER pfc_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./sdk_bench_tp.h"

#if !defined(PFC_BENCH_SDK_BENCH_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define PFC_BENCH_SDK_BENCH_TP_H

#include <stdint.h>

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(pfc_bench, slice, LTTNG_UST_TP_ARGS(const char *, name, int64_t, value),
			   LTTNG_UST_TP_FIELDS(lttng_ust_field_string(name, name)
					       lttng_ust_field_integer(int64_t, value, value)))

LTTNG_UST_TRACEPOINT_EVENT(pfc_bench, off, LTTNG_UST_TP_ARGS(const char *, name, int64_t, value),
			   LTTNG_UST_TP_FIELDS(lttng_ust_field_string(name, name)
					       lttng_ust_field_integer(int64_t, value, value)))

#endif

#include <lttng/tracepoint-event.h>
