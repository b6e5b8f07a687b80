// SPDX-License-Identifier: Apache-2.0
/*
 * sdk_clock.c - event timestamps without a system call: where the TSC is
 * invariant (constant_tsc and nonstop_tsc), ns = base_ns + (tsc - base_tsc)
 * * mult >> shift, with the kernel's own TSC rate when it publishes it
 * (perf's user-page time_mult/time_shift), else a rate measured against
 * CLOCK_BOOTTIME and refined by the control thread over longer spans. The
 * trace maps this clock to BOOTTIME through ClockSnapshots on every
 * sequence (sdk_event.c), so the rate's small error never accumulates past
 * a snapshot period. Elsewhere events read CLOCK_BOOTTIME.
 */
#include "sdk/sdk_int.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"

bool sdk_clock_use_tsc;
#define N_MAPS 4
static struct sdk_clock_map g_maps[N_MAPS];
static unsigned g_n_published;
const struct sdk_clock_map *_Atomic sdk_clock_cur = &g_maps[0];

/* The measured rate, while no kernel rate is known: its reference points. */
static uint64_t g_cal_tsc, g_cal_ns;
static bool g_rate_from_kernel;

uint64_t sdk_clock_boottime(void)
{
	return clock_get_ns(CLOCK_BOOTTIME);
}

/* constant_tsc and nonstop_tsc: the TSC ticks at one rate, in every state. */
static bool tsc_is_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
	char line[4096];
	bool constant = false, nonstop = false;
	FILE *f = fopen("/proc/cpuinfo", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	return constant && nonstop;
#else
	return false;
#endif
}

/* The kernel's TSC -> ns rate from a perf event's user page, if offered. */
static bool kernel_rate(uint32_t *out_mult, uint32_t *out_shift)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pg;
	long page = sysconf(_SC_PAGESIZE);
	uint32_t seq, mult = 0, shift = 0;
	bool ok = false;
	int fd, tries;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return false;
	pg = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (pg == MAP_FAILED)
		return false;
	for (tries = 0; tries < 100; tries++) {
		seq = pg->lock;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		ok = pg->cap_user_time && pg->time_mult;
		mult = pg->time_mult;
		shift = pg->time_shift;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (pg->lock == seq)
			break;
	}
	munmap(pg, (size_t)page);
	if (!ok || shift > 63)
		return false;
	*out_mult = mult;
	*out_shift = shift;
	return true;
}

/* A TSC reading and BOOTTIME taken as close together as possible. */
static void pair(uint64_t *out_tsc, uint64_t *out_ns)
{
	uint64_t best = UINT64_MAX, t0, t1, ns;
	int i;

	for (i = 0; i < 5; i++) {
		t0 = sdk_rdtsc();
		ns = sdk_clock_boottime();
		t1 = sdk_rdtsc();
		if (t1 - t0 < best) {
			best = t1 - t0;
			*out_tsc = t0 + (t1 - t0) / 2;
			*out_ns = ns;
		}
	}
}

/* mult/shift for @ns nanoseconds in @ticks ticks (shift 24: 2^-24 resolution). */
static void rate_from(uint64_t ticks, uint64_t ns, uint32_t *out_mult, uint32_t *out_shift)
{
	unsigned shift = 24;
	unsigned __int128 m = ((unsigned __int128)ns << shift) / (ticks ? ticks : 1);

	while (m > UINT32_MAX && shift > 0) {
		shift--;
		m >>= 1;
	}
	*out_mult = (uint32_t)m;
	*out_shift = shift;
}

/* Publishes a new map in the next slot of the ring (control thread, or
 * sdk_clock_init() before any reader). */
static void publish(uint64_t base_tsc, uint64_t base_ns, uint32_t mult, uint32_t shift)
{
	struct sdk_clock_map *m = &g_maps[++g_n_published % N_MAPS];

	m->base_tsc = base_tsc;
	m->base_ns = base_ns;
	m->mult = mult;
	m->shift = shift;
	m->version = g_n_published;
	atomic_store_explicit(&sdk_clock_cur, m, memory_order_release);
}

void sdk_clock_init(void)
{
	uint64_t tsc, ns, tsc2, ns2;
	uint32_t mult, shift;
	struct timespec wait = {0, 2 * 1000 * 1000};

	sdk_clock_use_tsc = false;
	if (!tsc_is_invariant())
		return;
	pair(&tsc, &ns);
	if (kernel_rate(&mult, &shift)) {
		g_rate_from_kernel = true;
	} else {
		/* A first rate from 2 ms; sdk_clock_refine() improves it. */
		nanosleep(&wait, NULL);
		pair(&tsc2, &ns2);
		if (tsc2 <= tsc)
			return;
		rate_from(tsc2 - tsc, ns2 - ns, &mult, &shift);
		g_cal_tsc = tsc;
		g_cal_ns = ns;
	}
	publish(tsc, ns, mult, shift);
	sdk_clock_use_tsc = true;
}

void sdk_clock_refine(void)
{
	uint64_t tsc, ns;
	uint32_t mult, shift;

	if (!sdk_clock_use_tsc || g_rate_from_kernel)
		return;
	pair(&tsc, &ns);
	/* Only a longer span than the last improves the rate; past an hour
	 * there is nothing left to gain. */
	if (tsc <= g_cal_tsc || ns - g_cal_ns > 3600ull * NS_PER_SEC)
		return;
	rate_from(tsc - g_cal_tsc, ns - g_cal_ns, &mult, &shift);
	if (mult == atomic_load(&sdk_clock_cur)->mult && shift == atomic_load(&sdk_clock_cur)->shift)
		return;
	/* Re-anchored at now, so the clock stays close to BOOTTIME. */
	publish(tsc, ns, mult, shift);
}
