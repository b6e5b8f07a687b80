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

#endif
