// SPDX-License-Identifier: Apache-2.0
/*
 * clock.c - clock_gettime() wrappers returning uint64 nanoseconds, used for
 * timestamps, timeouts and clock snapshots.
 */
#include "base/clock.h"

uint64_t clock_get_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t clock_boottime_ns(void)
{
	return clock_get_ns(CLOCK_BOOTTIME);
}

uint64_t clock_monotonic_ns(void)
{
	return clock_get_ns(CLOCK_MONOTONIC);
}

uint64_t clock_monotonic_raw_ns(void)
{
	return clock_get_ns(CLOCK_MONOTONIC_RAW);
}

uint64_t clock_realtime_ns(void)
{
	return clock_get_ns(CLOCK_REALTIME);
}
