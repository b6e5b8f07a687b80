/* SPDX-License-Identifier: Apache-2.0 */
/*
 * clock.h - the kernel clocks as uint64 nanoseconds. BOOTTIME is the default
 * trace clock; the others are recorded in clock snapshots so the trace
 * processor can convert between them. Any thread; never allocates.
 */
#ifndef PFC_BASE_CLOCK_H
#define PFC_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

#define NS_PER_SEC 1000000000ull
#define NS_PER_MS 1000000ull
#define NS_PER_US 1000ull

/**
 * clock_get_ns() - Read a clock in nanoseconds.
 * @clk: any clockid_t accepted by clock_gettime().
 *
 * Return: the time, or 0 if the kernel rejects @clk (every clock the
 * project uses exists on Linux >= 2.6.39, so 0 means a caller bug).
 * Context: any thread; vDSO, does not block.
 */
uint64_t clock_get_ns(clockid_t clk);

/** clock_boottime_ns() - CLOCK_BOOTTIME: monotonic, counts suspend. */
uint64_t clock_boottime_ns(void);
/** clock_monotonic_ns() - CLOCK_MONOTONIC: NTP-slewed, stops in suspend. */
uint64_t clock_monotonic_ns(void);
/** clock_monotonic_raw_ns() - CLOCK_MONOTONIC_RAW: not slewed by NTP. */
uint64_t clock_monotonic_raw_ns(void);
/** clock_realtime_ns() - CLOCK_REALTIME: wall-clock time since the epoch. */
uint64_t clock_realtime_ns(void);

/* Clocks in one snapshot: the six builtin clocks of Perfetto's capture. */
#define CLOCK_SNAPSHOT_CLOCKS 6

/* Perfetto's BuiltinClock ids (protos/common/builtin_clock.proto). */
enum clock_builtin_id {
	CLOCK_ID_REALTIME = 1,
	CLOCK_ID_REALTIME_COARSE = 2,
	CLOCK_ID_MONOTONIC = 3,
	CLOCK_ID_MONOTONIC_COARSE = 4,
	CLOCK_ID_MONOTONIC_RAW = 5,
	CLOCK_ID_BOOTTIME = 6,
};

/* One reading of the builtin clocks, taken back to back. */
struct clock_snapshot {
	struct {
		uint32_t id;  /* enum clock_builtin_id */
		uint64_t ts_ns;
	} clocks[CLOCK_SNAPSHOT_CLOCKS];
};

/**
 * clock_snapshot_capture() - Read the builtin clocks, in Perfetto's order:
 * BOOTTIME, REALTIME_COARSE, MONOTONIC_COARSE, REALTIME, MONOTONIC,
 * MONOTONIC_RAW (BOOTTIME first: it is the reference the others are read
 * against).
 * @out: filled.
 * Context: any thread; vDSO, does not block.
 */
void clock_snapshot_capture(struct clock_snapshot *out);

#endif
