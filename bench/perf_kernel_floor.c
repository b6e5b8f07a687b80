// SPDX-License-Identifier: Apache-2.0
/*
 * perf_kernel_floor.c - the kernel's own share of a CPU profile: opens on
 * every CPU the events traced_perf opens for a linux.perf session sampling
 * cpu-clock at --freq Hz with kernel frames and DWARF user frames (the
 * same perf_event_attr and ring size, from src/perf/perf_config), and
 * throws every record away unread, moving each ring's tail to its head
 * every read period. A workload beside it loses what the kernel's side of
 * sampling costs (the timer interrupt, the kernel callchain, user
 * registers and the user stack copy into the ring): a floor no profiler
 * that copies user stacks goes under. bench/perf_bench.sh runs it every
 * round next to "sampling alone" and the profilers.
 *   perf_kernel_floor [--seconds S] [--freq F] [--no-callstacks] [--smoke]
 * (1 s by default, 0.2 s with --smoke). Without the right to sample every
 * CPU (root, or perf_event_paranoid) it says so and exits 0, skipped.
 * Prints: perf_kernel_floor: C CPUs, F Hz, callstacks|no callstacks,
 *         rings of P pages, S s, B bytes written by the kernel
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perf/perf_config.h"

#define MAX_CPUS 1024

struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	size_t map_len;
};

static int open_ring(const struct perf_event_attr *a, int cpu, uint32_t pages, struct ring *r)
{
	long page = sysconf(_SC_PAGESIZE);

	r->fd = (int)syscall(SYS_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	r->map_len = (size_t)(pages + 1) * (size_t)page;
	r->meta = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->meta == MAP_FAILED) {
		int err = -errno;

		close(r->fd);
		return err;
	}
	return 0;
}

/* Frees what the kernel wrote without reading it. Return: bytes freed. */
static uint64_t discard(struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;

	__atomic_store_n(&r->meta->data_tail, head, __ATOMIC_RELEASE);
	return head - tail;
}

static void sleep_ms(uint32_t ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	Perfetto__Protos__PerfEventConfig pb = PERFETTO__PROTOS__PERF_EVENT_CONFIG__INIT;
	Perfetto__Protos__PerfEvents__Timebase tb = PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INIT;
	Perfetto__Protos__PerfEventConfig__CallstackSampling cs =
		PERFETTO__PROTOS__PERF_EVENT_CONFIG__CALLSTACK_SAMPLING__INIT;
	static struct ring rings[MAX_CPUS];
	struct perf_event_attr attr;
	struct perf_config cfg;
	double seconds = 1;
	uint64_t freq = 1000, bytes = 0, ms, elapsed;
	bool callstacks = true;
	uint32_t pages, period_ms;
	long n_cpus;
	char err[256];
	int i, rc;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--freq") && i + 1 < argc)
			freq = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--no-callstacks"))
			callstacks = false;
		else if (!strcmp(argv[i], "--smoke"))
			seconds = 0.2;
		else {
			fprintf(stderr, "usage: perf_kernel_floor [--seconds S] [--freq F] "
					"[--no-callstacks] [--smoke]\n");
			return 2;
		}
	}
	if (seconds <= 0 || freq == 0) {
		fprintf(stderr, "perf_kernel_floor: --seconds and --freq must be positive\n");
		return 2;
	}
	tb.interval_case = PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INTERVAL_FREQUENCY;
	tb.frequency = freq;
	tb.event_case = PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__EVENT_COUNTER;
	tb.counter = PERFETTO__PROTOS__PERF_EVENTS__COUNTER__SW_CPU_CLOCK;
	tb.has_timestamp_clock = 1;
	tb.timestamp_clock = PERFETTO__PROTOS__PERF_EVENTS__PERF_CLOCK__PERF_CLOCK_MONOTONIC;
	pb.timebase = &tb;
	if (callstacks) {
		cs.has_kernel_frames = 1;
		cs.kernel_frames = 1;
		cs.has_user_frames = 1;
		cs.user_frames = PERFETTO__PROTOS__PERF_EVENT_CONFIG__UNWIND_MODE__UNWIND_DWARF;
		pb.callstack_sampling = &cs;
	}
	if (perf_config_parse(&pb, NULL, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "perf_kernel_floor: %s\n", err);
		return 1;
	}
	n_cpus = sysconf(_SC_NPROCESSORS_CONF);
	if (n_cpus < 1 || n_cpus > MAX_CPUS)
		n_cpus = n_cpus < 1 ? 1 : MAX_CPUS;
	pages = perf_config_ring_pages(&cfg, (size_t)n_cpus);
	period_ms = cfg.read_period_ms ? cfg.read_period_ms : 100;
	perf_config_leader_attr(&cfg, &attr);
	for (i = 0; i < n_cpus; i++) {
		rc = open_ring(&attr, i, pages, &rings[i]);
		if (rc == -ENODEV) { /* an offline CPU */
			rings[i].fd = -1;
			continue;
		}
		if (rc < 0 && i == 0 && (rc == -EACCES || rc == -EPERM || rc == -ENOSYS)) {
			printf("perf_kernel_floor: skipped: cannot sample every CPU here (%s)\n",
			       strerror(-rc));
			return 0;
		}
		if (rc < 0) {
			fprintf(stderr, "perf_kernel_floor: cpu %d: %s\n", i, strerror(-rc));
			return 1;
		}
	}
	for (i = 0; i < n_cpus; i++) {
		if (rings[i].fd >= 0)
			ioctl(rings[i].fd, PERF_EVENT_IOC_ENABLE, 0);
	}
	ms = (uint64_t)(seconds * 1000);
	for (elapsed = 0; elapsed < ms; elapsed += period_ms) {
		sleep_ms(period_ms);
		for (i = 0; i < n_cpus; i++) {
			if (rings[i].fd >= 0)
				bytes += discard(&rings[i]);
		}
	}
	for (i = 0; i < n_cpus; i++) {
		if (rings[i].fd < 0)
			continue;
		ioctl(rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
		bytes += discard(&rings[i]);
		munmap(rings[i].meta, rings[i].map_len);
		close(rings[i].fd);
	}
	perf_config_fini(&cfg);
	printf("perf_kernel_floor: %ld CPUs, %llu Hz, %s, rings of %u pages, %.1f s, %llu bytes "
	       "written by the kernel\n",
	       n_cpus, (unsigned long long)freq, callstacks ? "callstacks" : "no callstacks",
	       pages, seconds, (unsigned long long)bytes);
	return 0;
}
