/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hp_ring.h - the shared ring between a profiled process (the heapprofd
 * client, many writer threads) and heapprofd (one reader thread): one
 * memfd, mapped by both, with a header page and a data area that is
 * mapped twice back to back so a record that wraps is contiguous. Writers
 * reserve space with one compare-and-swap (no lock), copy, then publish
 * the record by writing its stamp (its position xor the ring's key); the
 * reader takes the record at read_pos once its stamp is the one expected
 * there, and moves read_pos. Nothing is zeroed: what a record leaves
 * behind never carries the stamp of a later position. The reader treats
 * every byte here as untrusted (another process writes it). No
 * allocation, no libc beyond memcpy/memset: the client calls this from
 * inside malloc.
 *
 *   memfd offset 0                         4096
 *   +------------------------------------+--------------------------+
 *   | struct hp_ring_hdr (one page)      | data (data_size bytes,   |
 *   |  magic version data_size           |  a power of two)         |
 *   |  write_pos (own cache line)        +--------------------------+
 *   |  read_pos (own cache line)           mapped again right after
 *   |  flags, counters                     the first copy (wrap)
 *   +------------------------------------+
 *
 *   record (8-aligned, at data + (pos & (data_size - 1))):
 *   +-----------+-----------+-------------------+---------------------+
 *   | len (u32) | type(u32) | stamp (u64):      | payload             |
 *   |           |           | pos ^ stamp_key   | (len - 16 bytes)    |
 *   +-----------+-----------+-------------------+---------------------+
 *   a stamp other than pos ^ stamp_key: not yet published (old bytes)
 */
#ifndef PFC_HEAPPROFD_RING_HP_RING_H
#define PFC_HEAPPROFD_RING_HP_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HP_RING_MAGIC 0x48505247u /* "GRPH" */
#define HP_RING_VERSION 2u
#define HP_RING_HDR_BYTES 4096u
#define HP_RING_MIN_DATA_BYTES 8192u
#define HP_RING_MAX_DATA_BYTES (1ull << 30)
/* Upstream's default shmem_size_bytes. */
#define HP_RING_DEFAULT_DATA_BYTES (8u << 20)
#define HP_RING_ALIGN 8u
#define HP_RING_MAX_HEAPS 256u /* heap ids are below this */

/* Record types. */
enum hp_rec_type {
	HP_REC_ALLOC = 1,
	HP_REC_FREE = 2,
};

/* hdr.flags bits. */
#define HP_RING_F_SHUTDOWN (1u << 0) /* the reader is gone: stop writing */
#define HP_RING_F_CORRUPT (1u << 1)  /* the reader found garbage */

/* hdr.client_error values (ProcessHeapSamples.ClientError). */
enum hp_client_error {
	HP_CLIENT_ERROR_NONE = 0,
	HP_CLIENT_ERROR_HIT_TIMEOUT = 1,
	HP_CLIENT_ERROR_INVALID_STACK_BOUNDS = 2,
};

struct hp_ring_hdr {
	uint32_t magic;
	uint32_t version;
	uint64_t data_size;
	uint8_t pad0[48];
	_Atomic uint64_t write_pos; /* bytes ever reserved by writers */
	uint8_t pad1[56];
	_Atomic uint64_t read_pos; /* bytes ever consumed by the reader */
	uint8_t pad2[56];
	_Atomic uint32_t reader_sleeping; /* 1: a writer must send the wake-up byte */
	_Atomic uint32_t flags;
	_Atomic uint32_t client_error;
	uint32_t pad3;
	/* Written by the client, read as hints only. */
	_Atomic uint64_t records_dropped; /* the ring was full (no block_client) */
	_Atomic uint64_t bytes_dropped;
	_Atomic uint64_t blocked_us;      /* writers waited for space (block_client) */
	_Atomic uint64_t records_written; /* unused (kept for the layout) */
	/* Random, nonzero, set by the daemon when it makes the ring; each
	 * side keeps the copy it read when mapping. */
	uint64_t stamp_key;
	uint8_t pad4[8];
	/* block_client: a writer that found the ring full sets
	 * writers_waiting and sleeps on read_seq (a futex); the reader, having
	 * made room, bumps read_seq and wakes it. */
	_Atomic uint32_t read_seq;
	_Atomic uint32_t writers_waiting;
};

_Static_assert(sizeof(struct hp_ring_hdr) <= HP_RING_HDR_BYTES, "header fits its page");
_Static_assert(offsetof(struct hp_ring_hdr, write_pos) == 64, "write_pos layout");
_Static_assert(offsetof(struct hp_ring_hdr, read_pos) == 128, "read_pos layout");
_Static_assert(offsetof(struct hp_ring_hdr, reader_sleeping) == 192, "flags layout");
_Static_assert(offsetof(struct hp_ring_hdr, stamp_key) == 240, "stamp key layout");
_Static_assert(offsetof(struct hp_ring_hdr, read_seq) == 256, "read_seq layout");

struct hp_rec_hdr {
	uint32_t len; /* whole record, header included */
	uint32_t type;
	uint64_t stamp; /* written last: the record's position ^ stamp_key */
};
_Static_assert(sizeof(struct hp_rec_hdr) == 16, "record header");

#define HP_REGS_N 17u /* perf_regs.h order on x86-64: ax bx cx dx si di bp sp ip r8-r15 */

/* HP_REC_ALLOC payload, followed by stack_len bytes of the stack from
 * regs[sp] upwards. */
struct hp_rec_alloc {
	uint32_t heap_id;
	uint32_t tid;
	uint64_t ts_ns;       /* CLOCK_BOOTTIME */
	uint64_t addr;
	uint64_t sample_size; /* bytes this sample stands for */
	uint64_t alloc_size;  /* bytes asked for */
	uint64_t regs[HP_REGS_N];
	uint32_t stack_len;
	uint32_t pad;
};
_Static_assert(sizeof(struct hp_rec_alloc) == 184, "alloc record layout");

/* HP_REC_FREE payload. */
struct hp_rec_free {
	uint32_t heap_id;
	uint32_t pad;
	uint64_t addr;
};
_Static_assert(sizeof(struct hp_rec_free) == 16, "free record layout");

/* A mapping of a ring (either side). */
struct hp_ring {
	struct hp_ring_hdr *hdr;
	uint8_t *data;       /* data_size bytes, then the same bytes again */
	uint64_t data_size;
	size_t map_bytes;    /* the whole reservation */
	uint64_t read_pos;   /* reader: its own copy, authoritative */
	uint64_t stamp_key;  /* the header's, read when mapped */
};

/**
 * hp_ring_create_memfd() - A new zeroed ring of @data_size bytes (a power
 * of two in [HP_RING_MIN_DATA_BYTES, HP_RING_MAX_DATA_BYTES]) in a memfd.
 * Return: the fd (close it when mapped and passed on) or -errno.
 * Context: the daemon; allocates in the kernel only.
 */
int hp_ring_create_memfd(uint64_t data_size);
/**
 * hp_ring_map() - Map the ring in @fd (borrowed). @expect_size: the data
 * size the daemon chose (the client passes 0 to take the header's, which
 * is checked against the file's size).
 * Return: 0 and *@out, -EINVAL for a file that is no ring, or -errno.
 * Context: any thread; no malloc (mmap only).
 */
int hp_ring_map(int fd, uint64_t expect_size, struct hp_ring *out);
void hp_ring_unmap(struct hp_ring *r);

/* Round @bytes to a valid data size (power of two, within the limits). */
uint64_t hp_ring_round_size(uint64_t bytes);

/* ------------------------------------------------------------ writer ---- */

/**
 * hp_ring_reserve() - Reserve @len bytes (rounded up to 8) for a record.
 * @out_pos: the record's position, for hp_ring_publish().
 * Return: the record's start (it holds old bytes until published) or NULL
 * if the ring has no room now (or the reader shut it down).
 * Context: any thread of the client, also inside malloc; lock-free.
 */
uint8_t *hp_ring_reserve(struct hp_ring *r, uint32_t len, uint64_t *out_pos);
/* A sleeping reader looks at the ring at least this often (ms) ... */
#define HP_RING_READ_PERIOD_MS 10u
/* ... and is woken before that once the ring holds 1/this of its size. */
#define HP_RING_WAKE_SHARE 8u
/**
 * hp_ring_publish() - Make a reserved record (at @pos) visible with @type.
 * Return: true if the reader sleeps and must be woken (send one byte):
 * the ring holds at least 1/HP_RING_WAKE_SHARE of its size (below that
 * the reader's periodic look finds the record); one writer is told so
 * per sleep.
 */
bool hp_ring_publish(struct hp_ring *r, uint8_t *rec, uint64_t pos, uint32_t len, uint32_t type);

/**
 * hp_ring_wait_begin() - A writer that found no room will wait: marks it
 * in the header. Try hp_ring_reserve() again after this, then
 * hp_ring_wait_space() with the value returned.
 */
uint32_t hp_ring_wait_begin(struct hp_ring *r);
/* Sleep until the reader makes room (read_seq moves from @seq) or
 * @timeout_us pass. */
void hp_ring_wait_space(struct hp_ring *r, uint32_t seq, uint32_t timeout_us);

/* ------------------------------------------------------------ reader ---- */

enum hp_ring_read {
	HP_RING_EMPTY = 0,   /* nothing published at read_pos yet */
	HP_RING_RECORD = 1,  /* *out is a record */
	HP_RING_CORRUPT = -1 /* the client broke the ring; stop reading it */
};

/**
 * hp_ring_peek() - The record at the read position, validated: its length
 * is 8-aligned, at least a header, within what the writers reserved and
 * within the ring. The record may still be changed by a hostile client
 * while it is read: copy fixed fields before trusting them.
 * Context: the reader thread.
 */
enum hp_ring_read hp_ring_peek(struct hp_ring *r, const uint8_t **out_rec, uint32_t *out_len,
			       uint32_t *out_type);
/* Consume the record hp_ring_peek() returned (moves read_pos). */
void hp_ring_consume(struct hp_ring *r, uint32_t len);
/**
 * hp_ring_sleep() - Tell writers the reader will sleep: afterwards the
 * ring is peeked once more (a record published meanwhile is not missed).
 * Return: true if it may sleep (nothing is published at the read position).
 */
bool hp_ring_sleep(struct hp_ring *r);
/* Bytes writers may reserve now, as the reader sees it. */
uint64_t hp_ring_free_bytes(const struct hp_ring *r);
/* The reader consumed records: wakes writers waiting for room (one check
 * of the header when none waits). */
void hp_ring_wake_writers(struct hp_ring *r);
/* The reader is gone: writers stop. */
void hp_ring_shutdown(struct hp_ring *r);

/**
 * hp_rec_parse_alloc() / hp_rec_parse_free() - A record's fixed part,
 * copied out of shared memory and checked (heap id in range, the stack
 * within the record). @out_stack: the stack bytes, still in the ring.
 * Return: 0, or -EBADMSG for a record that breaks the rules.
 */
int hp_rec_parse_alloc(const uint8_t *rec, uint32_t len, struct hp_rec_alloc *out,
		       const uint8_t **out_stack);
int hp_rec_parse_free(const uint8_t *rec, uint32_t len, struct hp_rec_free *out);

#endif
