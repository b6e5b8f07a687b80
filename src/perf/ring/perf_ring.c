// SPDX-License-Identifier: Apache-2.0
/*
 * perf_ring.c - perf_event_open per CPU and the mmap'ed ring of the group
 * leader (see perf_ring.h). The kernel's data_head is read with acquire
 * order and our data_tail stored with release order, as perf_event.h asks.
 */
#include "perf/ring/perf_ring.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf/ring/perf_record.h"

struct perf_ring {
	int cpu;
	int leader_fd;
	int follower_fds[PERF_MAX_FOLLOWER_COUNTS];
	size_t n_followers;
	struct perf_event_mmap_page *meta;
	size_t map_bytes;
	uint8_t *data;
	uint64_t data_size;
	uint64_t scanned; /* perf_ring_scan() has seen the records below this */
	uint8_t rec[PERF_RECORD_MAX_BYTES];
};

static int event_open(const struct perf_event_attr *a, int cpu, int group_fd)
{
	long fd = syscall(SYS_perf_event_open, a, -1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

static int set_filter(int fd, const char *const *filters, size_t i)
{
	if (!filters || !filters[i] || !filters[i][0])
		return 0;
	return ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filters[i]) < 0 ? -errno : 0;
}

/* Bytes left free when the reader is woken (see perf_ring_open()). */
static size_t ring_slack(const struct perf_event_attr *a, size_t size)
{
	/* A sample reserves its whole stack size, plus header, registers,
	 * callchain and counts (~512 B). */
	size_t per_sample = 512 + ((a->sample_type & PERF_SAMPLE_STACK_USER) ? a->sample_stack_user : 0);
	size_t room = 16 * per_sample;

	if (room > size / 2)
		room = size / 2;
	return room > size / 4 ? room : size / 4;
}

int perf_ring_open(const struct perf_event_attr *leader, const struct perf_event_attr *followers,
		   size_t n_followers, const char *const *filters, int cpu, uint32_t n_pages,
		   struct perf_ring **out)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), i;
	struct perf_event_attr la = *leader;
	struct perf_ring *r;
	void *map;
	int rc;

	if (n_followers > PERF_MAX_FOLLOWER_COUNTS)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->cpu = cpu;
	r->leader_fd = -1;
	/* Wake the reader while a quarter of the ring is free, or more: half
	 * the ring or 16 samples' room, whichever is less (a timer alone
	 * cannot keep up with 64 KiB stack samples at high rates). Each
	 * wake-up preempts the workload, so fewer of them is cheaper; the
	 * room left is the reader's time to get there. */
	la.watermark = 1;
	la.wakeup_watermark = (uint32_t)(page * n_pages - ring_slack(&la, page * n_pages));
	rc = event_open(&la, cpu, -1);
	if (rc < 0)
		goto fail;
	r->leader_fd = rc;
	rc = set_filter(r->leader_fd, filters, 0);
	if (rc < 0)
		goto fail;
	for (i = 0; i < n_followers; i++) {
		rc = event_open(&followers[i], cpu, r->leader_fd);
		if (rc < 0)
			goto fail;
		r->follower_fds[i] = rc;
		r->n_followers = i + 1;
		rc = set_filter(r->follower_fds[i], filters, i + 1);
		if (rc < 0)
			goto fail;
	}
	r->map_bytes = page * (1 + (size_t)n_pages);
	map = mmap(NULL, r->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, r->leader_fd, 0);
	if (map == MAP_FAILED) {
		rc = -errno;
		goto fail;
	}
	r->meta = map;
	r->data = (uint8_t *)map + page;
	r->data_size = (uint64_t)page * n_pages;
	*out = r;
	return 0;
fail:
	perf_ring_close(r);
	return rc;
}

void perf_ring_close(struct perf_ring *r)
{
	size_t i;

	if (!r)
		return;
	if (r->meta)
		munmap(r->meta, r->map_bytes);
	for (i = 0; i < r->n_followers; i++)
		close(r->follower_fds[i]);
	if (r->leader_fd >= 0)
		close(r->leader_fd);
	free(r);
}

int perf_ring_enable(struct perf_ring *r)
{
	return ioctl(r->leader_fd, PERF_EVENT_IOC_ENABLE, 0) < 0 ? -errno : 0;
}

int perf_ring_disable(struct perf_ring *r)
{
	return ioctl(r->leader_fd, PERF_EVENT_IOC_DISABLE, 0) < 0 ? -errno : 0;
}

int perf_ring_cpu(const struct perf_ring *r)
{
	return r->cpu;
}

int perf_ring_fd(const struct perf_ring *r)
{
	return r->leader_fd;
}

int perf_ring_read_values(struct perf_ring *r, uint8_t *buf, size_t cap)
{
	ssize_t n = read(r->leader_fd, buf, cap);

	return n < 0 ? -errno : (int)n;
}

uint64_t perf_ring_head(const struct perf_ring *r)
{
	return __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
}

int perf_ring_scan(struct perf_ring *r, uint64_t type_mask, perf_record_cb cb, void *user)
{
	uint64_t head = perf_ring_head(r);
	uint64_t pos = r->meta->data_tail;
	const uint8_t *rec;
	int n = 0, len;

	if (r->scanned > pos && r->scanned <= head)
		pos = r->scanned;
	for (;;) {
		uint64_t at = pos;

		len = perf_ring_take_types(r->data, r->data_size, head, &pos, r->rec, type_mask,
					   &rec);
		if (len <= 0)
			break;
		if (rec && !cb(rec, (size_t)len, user)) {
			pos = at; /* shown again by the next scan */
			len = 0;
			break;
		}
		n++;
	}
	r->scanned = pos;
	return len < 0 ? len : n;
}

int perf_ring_read(struct perf_ring *r, uint64_t until, size_t max_records, perf_record_cb cb,
		   void *user)
{
	uint64_t head = perf_ring_head(r);
	uint64_t tail = r->meta->data_tail;
	const uint8_t *rec;
	size_t n = 0;
	int rc = 0, len;

	/* Positions only grow (u64 byte counts), so "before" is "<"; until
	 * is a head the kernel reported, so a record boundary. */
	if (until < head)
		head = until < tail ? tail : until;
	/* Records are used in place: the space goes back to the kernel only
	 * after the callbacks have seen them (data_tail stored below). */
	while (!max_records || n < max_records) {
		uint64_t at = tail;

		len = perf_ring_take(r->data, r->data_size, head, &tail, r->rec, &rec);
		if (len < 0) {
			rc = len;
			break;
		}
		if (len == 0)
			break;
		if (!cb(rec, (size_t)len, user)) {
			tail = at; /* left in the ring for the next read */
			break;
		}
		n++;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return rc < 0 ? rc : (int)n;
}
