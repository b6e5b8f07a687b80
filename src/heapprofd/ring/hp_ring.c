// SPDX-License-Identifier: Apache-2.0
/*
 * hp_ring.c - the shared ring (see hp_ring.h): memfd creation and the
 * double mapping, the client's lock-free reserve/publish, the daemon's
 * validating peek/consume. Called by the client inside malloc, so only
 * syscalls and memcpy/memset.
 */
#include "heapprofd/ring/hp_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

uint64_t hp_ring_round_size(uint64_t bytes)
{
	uint64_t s = HP_RING_MIN_DATA_BYTES;

	if (bytes >= HP_RING_MAX_DATA_BYTES)
		return HP_RING_MAX_DATA_BYTES;
	while (s < bytes)
		s <<= 1;
	return s;
}

static bool valid_size(uint64_t s)
{
	return s >= HP_RING_MIN_DATA_BYTES && s <= HP_RING_MAX_DATA_BYTES && (s & (s - 1)) == 0;
}

int hp_ring_create_memfd(uint64_t data_size)
{
	struct hp_ring_hdr hdr;
	int fd;

	if (!valid_size(data_size))
		return -EINVAL;
	fd = memfd_create("heapprofd_ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)(HP_RING_HDR_BYTES + data_size)) < 0)
		goto fail;
	/* The size can no longer change: a client cannot shrink the file under
	 * the daemon's mapping (a SIGBUS on read). */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto fail;
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = HP_RING_MAGIC;
	hdr.version = HP_RING_VERSION;
	hdr.data_size = data_size;
	if (getrandom(&hdr.stamp_key, sizeof(hdr.stamp_key), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(hdr.stamp_key)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		hdr.stamp_key = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^
				((uint64_t)getpid() << 17) ^ 0x9e3779b97f4a7c15ull;
	}
	/* Zero is the data's first stamp. */
	hdr.stamp_key |= 1ull << 63;
	if (pwrite(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
		goto fail;
	return fd;
fail:
	{
		int err = errno ? -errno : -EIO;

		close(fd);
		return err;
	}
}

int hp_ring_map(int fd, uint64_t expect_size, struct hp_ring *out)
{
	struct stat st;
	uint64_t size = expect_size;
	uint8_t *base, *p;
	size_t total;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!size) {
		struct hp_ring_hdr hdr;

		if (pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
			return -EINVAL;
		if (hdr.magic != HP_RING_MAGIC || hdr.version != HP_RING_VERSION)
			return -EINVAL;
		size = hdr.data_size;
	}
	if (!valid_size(size) || (uint64_t)st.st_size != HP_RING_HDR_BYTES + size)
		return -EINVAL;
	total = HP_RING_HDR_BYTES + 2 * (size_t)size;
	base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	/* Populated: a page fault per page first written costs more than the
	 * sample that writes it (measured: ~16 us per sample at 32 KiB, in a
	 * VM), and every page of the ring is used. */
	p = mmap(base, HP_RING_HDR_BYTES + size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	p = mmap(base + HP_RING_HDR_BYTES + size, size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, HP_RING_HDR_BYTES);
	if (p == MAP_FAILED)
		goto fail;
	out->hdr = (struct hp_ring_hdr *)base;
	out->data = base + HP_RING_HDR_BYTES;
	out->data_size = size;
	out->map_bytes = total;
	out->read_pos = atomic_load_explicit(&out->hdr->read_pos, memory_order_acquire);
	out->stamp_key = *(volatile uint64_t *)&out->hdr->stamp_key;
	return 0;
fail:
	{
		int err = -errno;

		munmap(base, total);
		return err;
	}
}

void hp_ring_unmap(struct hp_ring *r)
{
	if (r->hdr)
		munmap(r->hdr, r->map_bytes);
	r->hdr = NULL;
	r->data = NULL;
}

/* ------------------------------------------------------------ writer ---- */

uint8_t *hp_ring_reserve(struct hp_ring *r, uint32_t len, uint64_t *out_pos)
{
	struct hp_ring_hdr *h = r->hdr;
	uint64_t need = ((uint64_t)len + HP_RING_ALIGN - 1) & ~(uint64_t)(HP_RING_ALIGN - 1);
	uint64_t w = atomic_load_explicit(&h->write_pos, memory_order_relaxed);

	if (need > r->data_size / 2)
		return NULL;
	for (;;) {
		uint64_t rd = atomic_load_explicit(&h->read_pos, memory_order_acquire);

		if (atomic_load_explicit(&h->flags, memory_order_relaxed) & HP_RING_F_SHUTDOWN)
			return NULL;
		/* A daemon's read_pos ahead of write_pos is garbage: full. */
		if (w - rd > r->data_size || r->data_size - (w - rd) < need)
			return NULL;
		if (atomic_compare_exchange_weak_explicit(&h->write_pos, &w, w + need,
							  memory_order_acq_rel,
							  memory_order_relaxed)) {
			*out_pos = w;
			return r->data + (w & (r->data_size - 1));
		}
	}
}

bool hp_ring_publish(struct hp_ring *r, uint8_t *rec, uint64_t pos, uint32_t len, uint32_t type)
{
	struct hp_rec_hdr *rh = (struct hp_rec_hdr *)rec;
	uint32_t alen = (len + HP_RING_ALIGN - 1) & ~(HP_RING_ALIGN - 1);

	rh->len = alen;
	rh->type = type;
	/* seq_cst, paired with the reader's in hp_ring_sleep(): either the
	 * reader sees this stamp or this writer sees reader_sleeping. */
	atomic_store_explicit((_Atomic uint64_t *)&rh->stamp, pos ^ r->stamp_key,
			      memory_order_seq_cst);
	/* No shared counter of records written here: an atomic add on a line
	 * every writer thread and the reader touch cost more than the rest of
	 * the publish (perf, 4 writer threads: 10% of the workload's time). */
	if (!atomic_load_explicit(&r->hdr->reader_sleeping, memory_order_seq_cst))
		return false;
	/* A sleeping reader still drains every HP_RING_READ_PERIOD_MS: wake it
	 * early only once the ring holds HP_RING_WAKE_SHARE of its size (one
	 * wake-up per sample would cost a syscall and a context switch each). */
	if (atomic_load_explicit(&r->hdr->write_pos, memory_order_relaxed) -
		    atomic_load_explicit(&r->hdr->read_pos, memory_order_relaxed) <
	    r->data_size / HP_RING_WAKE_SHARE)
		return false;
	return atomic_exchange_explicit(&r->hdr->reader_sleeping, 0, memory_order_seq_cst) != 0;
}

uint32_t hp_ring_wait_begin(struct hp_ring *r)
{
	uint32_t seq = atomic_load_explicit(&r->hdr->read_seq, memory_order_acquire);

	/* seq_cst, paired with hp_ring_wake_writers(): either this writer's
	 * next reserve sees the room the reader made, or the reader sees
	 * this flag. */
	atomic_store_explicit(&r->hdr->writers_waiting, 1, memory_order_seq_cst);
	return seq;
}

void hp_ring_wait_space(struct hp_ring *r, uint32_t seq, uint32_t timeout_us)
{
	struct timespec ts = {(time_t)(timeout_us / 1000000u), (long)(timeout_us % 1000000u) * 1000};

	/* Shared between processes: not FUTEX_PRIVATE_FLAG. */
	(void)syscall(SYS_futex, (uint32_t *)&r->hdr->read_seq, FUTEX_WAIT, seq, &ts, NULL, 0);
}

/* ------------------------------------------------------------ reader ---- */

enum hp_ring_read hp_ring_peek(struct hp_ring *r, const uint8_t **out_rec, uint32_t *out_len,
			       uint32_t *out_type)
{
	uint8_t *rec = r->data + (r->read_pos & (r->data_size - 1));
	struct hp_rec_hdr *rh = (struct hp_rec_hdr *)rec;
	uint32_t len, type;
	uint64_t w, avail;

	/* The stamp first: it is published after its space was reserved, so
	 * write_pos read after it covers the record. */
	if (atomic_load_explicit((_Atomic uint64_t *)&rh->stamp, memory_order_acquire) !=
	    (r->read_pos ^ r->stamp_key))
		return HP_RING_EMPTY;
	len = *(volatile uint32_t *)&rh->len;
	w = atomic_load_explicit(&r->hdr->write_pos, memory_order_acquire);
	avail = w - r->read_pos;
	if (avail > r->data_size || len < sizeof(*rh) || (len & (HP_RING_ALIGN - 1)) ||
	    len > avail || len > r->data_size / 2)
		return HP_RING_CORRUPT;
	type = *(volatile uint32_t *)&rh->type;
	*out_rec = rec;
	*out_len = len;
	*out_type = type;
	return HP_RING_RECORD;
}

void hp_ring_consume(struct hp_ring *r, uint32_t len)
{
	/* Nothing is zeroed (a writer's stores would then fetch every line
	 * back from this CPU): the stamp left here names this position, never
	 * one a later record has. */
	r->read_pos += len;
	atomic_store_explicit(&r->hdr->read_pos, r->read_pos, memory_order_release);
}

bool hp_ring_sleep(struct hp_ring *r)
{
	struct hp_rec_hdr *rh = (struct hp_rec_hdr *)(r->data + (r->read_pos & (r->data_size - 1)));

	atomic_store_explicit(&r->hdr->reader_sleeping, 1, memory_order_seq_cst);
	if (atomic_load_explicit((_Atomic uint64_t *)&rh->stamp, memory_order_seq_cst) ==
	    (r->read_pos ^ r->stamp_key)) {
		atomic_store_explicit(&r->hdr->reader_sleeping, 0, memory_order_relaxed);
		return false;
	}
	return true;
}

uint64_t hp_ring_free_bytes(const struct hp_ring *r)
{
	uint64_t used = atomic_load_explicit(&r->hdr->write_pos, memory_order_relaxed) - r->read_pos;

	return used > r->data_size ? 0 : r->data_size - used;
}

void hp_ring_wake_writers(struct hp_ring *r)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (!atomic_load_explicit(&r->hdr->writers_waiting, memory_order_relaxed))
		return;
	atomic_store_explicit(&r->hdr->writers_waiting, 0, memory_order_relaxed);
	atomic_fetch_add_explicit(&r->hdr->read_seq, 1, memory_order_seq_cst);
	(void)syscall(SYS_futex, (uint32_t *)&r->hdr->read_seq, FUTEX_WAKE, INT32_MAX, NULL, NULL,
		      0);
}

void hp_ring_shutdown(struct hp_ring *r)
{
	atomic_fetch_or_explicit(&r->hdr->flags, HP_RING_F_SHUTDOWN, memory_order_release);
	/* Waiting writers see it now. */
	atomic_store_explicit(&r->hdr->writers_waiting, 1, memory_order_relaxed);
	hp_ring_wake_writers(r);
}

/* ----------------------------------------------------------- records ---- */

int hp_rec_parse_alloc(const uint8_t *rec, uint32_t len, struct hp_rec_alloc *out,
		       const uint8_t **out_stack)
{
	struct hp_rec_alloc a;

	if (len < sizeof(struct hp_rec_hdr) + sizeof(a))
		return -EBADMSG;
	memcpy(&a, rec + sizeof(struct hp_rec_hdr), sizeof(a));
	if (a.stack_len > len - sizeof(struct hp_rec_hdr) - sizeof(a) || a.heap_id == 0 ||
	    a.heap_id >= HP_RING_MAX_HEAPS)
		return -EBADMSG;
	*out = a;
	*out_stack = rec + sizeof(struct hp_rec_hdr) + sizeof(a);
	return 0;
}

int hp_rec_parse_free(const uint8_t *rec, uint32_t len, struct hp_rec_free *out)
{
	struct hp_rec_free f;

	if (len < sizeof(struct hp_rec_hdr) + sizeof(f))
		return -EBADMSG;
	memcpy(&f, rec + sizeof(struct hp_rec_hdr), sizeof(f));
	if (f.heap_id == 0 || f.heap_id >= HP_RING_MAX_HEAPS)
		return -EBADMSG;
	*out = f;
	return 0;
}
