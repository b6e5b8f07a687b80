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

void clock_snapshot_capture(struct clock_snapshot *out)
{
	static const struct {
		uint32_t id;
		clockid_t clk;
	} k[CLOCK_SNAPSHOT_CLOCKS] = {
		{CLOCK_ID_BOOTTIME, CLOCK_BOOTTIME},
		{CLOCK_ID_REALTIME_COARSE, CLOCK_REALTIME_COARSE},
		{CLOCK_ID_MONOTONIC_COARSE, CLOCK_MONOTONIC_COARSE},
		{CLOCK_ID_REALTIME, CLOCK_REALTIME},
		{CLOCK_ID_MONOTONIC, CLOCK_MONOTONIC},
		{CLOCK_ID_MONOTONIC_RAW, CLOCK_MONOTONIC_RAW},
	};
	struct timespec ts[CLOCK_SNAPSHOT_CLOCKS];
	int i;

	/* Every clock is read before any is converted, so the readings are as
	 * close together as the vDSO allows. */
	for (i = 0; i < CLOCK_SNAPSHOT_CLOCKS; i++) {
		if (clock_gettime(k[i].clk, &ts[i]) != 0)
			ts[i].tv_sec = ts[i].tv_nsec = 0;
	}
	for (i = 0; i < CLOCK_SNAPSHOT_CLOCKS; i++) {
		out->clocks[i].id = k[i].id;
		out->clocks[i].ts_ns = (uint64_t)ts[i].tv_sec * NS_PER_SEC + (uint64_t)ts[i].tv_nsec;
	}
}
