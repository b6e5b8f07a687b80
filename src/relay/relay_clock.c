// SPDX-License-Identifier: Apache-2.0
/*
 * relay_clock.c - one capture of this machine's clocks for a SyncClock
 * request, in the order Perfetto's CaptureClockSnapshots() uses (the host
 * and the trace processor pair readings by clock id, the order keeps the
 * bytes identical). Called by relay_client.c right before each request.
 */
#include "relay/relay_int.h"

#include <time.h>

#include "base/clock.h"
#include "common/builtin_clock.pb-c.h"

static const struct {
	clockid_t posix;
	uint32_t builtin;
} k_clocks[RELAY_N_CLOCKS] = {
	{CLOCK_BOOTTIME, PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME},
	{CLOCK_REALTIME_COARSE, PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_REALTIME_COARSE},
	{CLOCK_MONOTONIC_COARSE, PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC_COARSE},
	{CLOCK_REALTIME, PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_REALTIME},
	{CLOCK_MONOTONIC, PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC},
	{CLOCK_MONOTONIC_RAW, PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC_RAW},
};

void relay_clock_capture(struct relay_clock_reading out[RELAY_N_CLOCKS])
{
	struct timespec ts[RELAY_N_CLOCKS];
	size_t i;

	/* Read every clock before converting any, so the readings are as close
	 * together as the vDSO allows. */
	for (i = 0; i < RELAY_N_CLOCKS; i++) {
		if (clock_gettime(k_clocks[i].posix, &ts[i]) != 0)
			ts[i].tv_sec = ts[i].tv_nsec = 0;
	}
	for (i = 0; i < RELAY_N_CLOCKS; i++) {
		out[i].clock_id = k_clocks[i].builtin;
		out[i].ts_ns = (uint64_t)ts[i].tv_sec * NS_PER_SEC + (uint64_t)ts[i].tv_nsec;
	}
}
