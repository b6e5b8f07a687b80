// SPDX-License-Identifier: Apache-2.0
/*
 * sdk_clock.c - event timestamps without a system call: where the TSC is
 * invariant (constant_tsc and nonstop_tsc), ns = base_ns + (tsc - base_tsc)
 * * mult >> shift. The first rate is the kernel's (perf's user-page
 * time_mult/time_shift) or one measured over 2 ms; the control thread then
 * measures the rate against CLOCK_BOOTTIME itself (10 ms, 30 ms, 100 ms,
 * 300 ms after init, then every second, over spans of up to a minute), so
 * the rate follows BOOTTIME's own, NTP's slewing included, and re-anchors
 * the map at BOOTTIME each time. The trace maps this clock to BOOTTIME
 * through ClockSnapshots on every sequence (sdk_event.c), taken anew with
 * each map, so the rate's error never accumulates past one refinement.
 * Elsewhere events read CLOCK_BOOTTIME.
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
/* A reader may hold a map for as long as it is preempted between loading
 * the pointer and reading it: 64 slots are a minute at the steady pace. */
#define N_MAPS 64
static struct sdk_clock_map g_maps[N_MAPS];
static unsigned g_n_published;
const struct sdk_clock_map *_Atomic sdk_clock_cur = &g_maps[0];

/* A TSC reading paired with BOOTTIME; @width_tsc is the TSC ticks the pair
 * took to read (its uncertainty). */
struct clock_pair {
	uint64_t tsc, ns, width_tsc;
};

/* Where the measured rate starts (@g_cal) and the next start once spans
 * pass a minute (@g_next, half a minute later), so the rate is BOOTTIME's
 * of the last minute or so. */
static struct clock_pair g_cal, g_next;
/* The narrowest pair seen: a refinement whose pair is far wider (the
 * thread was interrupted between its readings) is skipped. */
static uint64_t g_min_width_tsc = UINT64_MAX;
#define CAL_MAX_SPAN_NS (60ull * NS_PER_SEC)

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

/* A TSC reading and BOOTTIME taken as close together as possible: the
 * narrowest of eight tries, the TSC at the middle of the call. */
static struct clock_pair pair(void)
{
	struct clock_pair best = {0, 0, UINT64_MAX};
	uint64_t t0, t1, ns;
	int i;

	for (i = 0; i < 8; i++) {
		t0 = sdk_rdtsc();
		ns = sdk_clock_boottime();
		t1 = sdk_rdtsc();
		if (t1 >= t0 && t1 - t0 < best.width_tsc) {
			best.width_tsc = t1 - t0;
			best.tsc = t0 + (t1 - t0) / 2;
			best.ns = ns;
		}
	}
	return best;
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
	struct clock_pair a, b;
	uint32_t mult, shift;
	struct timespec wait = {0, 2 * 1000 * 1000};

	sdk_clock_use_tsc = false;
	if (!tsc_is_invariant())
		return;
	a = pair();
	if (!kernel_rate(&mult, &shift)) {
		/* A first rate from 2 ms; sdk_clock_refine() soon improves it. */
		nanosleep(&wait, NULL);
		b = pair();
		if (b.tsc <= a.tsc || b.ns <= a.ns)
			return;
		rate_from(b.tsc - a.tsc, b.ns - a.ns, &mult, &shift);
	}
	g_cal = a;
	g_next.tsc = 0;
	g_min_width_tsc = a.width_tsc;
	publish(a.tsc, a.ns, mult, shift);
	sdk_clock_use_tsc = true;
}

void sdk_clock_refine(void)
{
	struct clock_pair p;
	uint32_t mult, shift;

	if (!sdk_clock_use_tsc)
		return;
	p = pair();
	if (p.width_tsc < g_min_width_tsc)
		g_min_width_tsc = p.width_tsc;
	/* Interrupted mid-pair (a pair normally takes well under 1 us): its
	 * BOOTTIME is uncertain by the width, so wait for the next tick. */
	if (p.width_tsc > 4 * g_min_width_tsc + 2000)
		return;
	if (p.tsc <= g_cal.tsc || p.ns <= g_cal.ns)
		return;
	rate_from(p.tsc - g_cal.tsc, p.ns - g_cal.ns, &mult, &shift);
	if (p.ns - g_cal.ns >= CAL_MAX_SPAN_NS / 2 && g_next.tsc == 0)
		g_next = p;
	if (p.ns - g_cal.ns >= CAL_MAX_SPAN_NS && g_next.tsc != 0) {
		g_cal = g_next;
		g_next.tsc = 0;
	}
	/* Re-anchored at BOOTTIME now, whether or not the rate changed, so the
	 * clock's error since the last map does not carry over. */
	publish(p.tsc, p.ns, mult, shift);
}
