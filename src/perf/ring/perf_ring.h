/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf_ring.h - one CPU's perf events for one data source: the timebase
 * (group leader, cpu-wide: every process on that CPU) with its followers,
 * and the leader's mmap'ed ring buffer, read by perf_reader.c's thread on
 * a timer and at half full, and on flush/stop.
 */
#ifndef PFC_PERF_PERF_RING_H
#define PFC_PERF_PERF_RING_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perf_ring;

/**
 * perf_ring_open() - perf_event_open the leader and followers on @cpu for
 * all processes, and map the leader's ring of @n_pages data pages.
 * @filters: n_followers + 1 tracepoint filters (leader first; NULL or ""
 *           for none), set with PERF_EVENT_IOC_SET_FILTER; may be NULL.
 * Return: 0 and *out (perf_ring_close()), or the -errno of the failing
 * perf_event_open/mmap (-ENOENT or -EOPNOTSUPP: no such event on this
 * machine, e.g. hardware counters without a PMU; -EACCES/-EPERM: not
 * allowed; -EINVAL from a filter the kernel does not accept).
 */
int perf_ring_open(const struct perf_event_attr *leader, const struct perf_event_attr *followers,
		   size_t n_followers, const char *const *filters, int cpu, uint32_t n_pages,
		   struct perf_ring **out);
void perf_ring_close(struct perf_ring *r);
int perf_ring_enable(struct perf_ring *r);
int perf_ring_disable(struct perf_ring *r);
int perf_ring_cpu(const struct perf_ring *r);
/* The leader's fd: readable (EPOLLIN) once the ring is half full. */
int perf_ring_fd(const struct perf_ring *r);
/* read() of the leader (its read_format's values) into @buf: bytes, -errno. */
int perf_ring_read_values(struct perf_ring *r, uint8_t *buf, size_t cap);

/*
 * Called for each record, with the record copied out of the ring (@rec,
 * @len bytes; valid during the call). Return false to stop reading: that
 * record stays in the ring and is shown again by the next call.
 */
typedef bool (*perf_record_cb)(const uint8_t *rec, size_t len, void *user);

/**
 * perf_ring_scan() - Show @cb the records of the types in @type_mask (bit
 * 1 << type) the kernel wrote since the last scan, without freeing their
 * space (others are stepped over): the side-band pass (mappings, forks)
 * that must see every ring's records before any ring's samples are used,
 * because a process's MMAP2 records and its samples can land on different
 * CPUs' rings.
 * Return: records scanned, or -EBADMSG at a malformed header (the scan
 * then stops; perf_ring_read() drops the rest).
 * Context: one thread at a time per ring; never allocates.
 */
int perf_ring_scan(struct perf_ring *r, uint64_t type_mask, perf_record_cb cb, void *user);

/* The kernel's write position now: a bound for perf_ring_read(). */
uint64_t perf_ring_head(const struct perf_ring *r);

/**
 * perf_ring_read() - Hand the records in the ring to @cb, then free their
 * space for the kernel.
 * @until: read no record that starts at or past this position (a
 *         perf_ring_head() taken before the rings were scanned; UINT64_MAX:
 *         up to the kernel's head now).
 * @max_records: bound per call (0: until the ring is empty).
 * Return: records read, or -EBADMSG if the ring held a malformed header
 * (everything up to the kernel's head is then dropped and counted).
 * Context: one thread at a time per ring; never allocates.
 */
int perf_ring_read(struct perf_ring *r, uint64_t until, size_t max_records, perf_record_cb cb,
		   void *user);

#endif
