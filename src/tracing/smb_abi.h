/* SPDX-License-Identifier: Apache-2.0 */
/*
 * smb_abi.h - the shared memory buffer (SMB) ABI shared with Perfetto: page
 * and chunk headers, page layouts, chunk state transitions, and the
 * bounds-checked fragment parser. Producers (arbiter, trace writers) and the
 * service (traced) both use it; the service treats every byte as untrusted.
 * Assumes one writer per chunk and many threads racing on page bitmaps.
 *
 *  SMB = n_pages x page_size (4..64 KiB, a multiple of 4 KiB; little endian)
 *
 *  page:  +--------------------------------------------------------------+
 *         | page header (8 bytes)                                        |
 *         |  u32 header_bitmap (atomic)   u32 reserved                   |
 *         |  bit 31 | 30..28 layout | 27..26 state[13] ... 1..0 state[0]  |
 *         +--------------------------------------------------------------+
 *         | chunk 0 | chunk 1 | ... | chunk N-1 | (tail slack)            |
 *         +--------------------------------------------------------------+
 *  layout 1=Div1 2=Div2 3=Div4 4=Div7 5=Div14 (N chunks); 0 = not partitioned
 *  chunk size = align4((page_size - 8) / N): 4088/2044/1020/584/292 @ 4 KiB
 *  chunk state (2 bits): 0 Free, 1 BeingWritten, 2 BeingRead, 3 Complete
 *
 *  chunk: +--------------+-------------+-------------------------------+
 *         | u32 chunk_id | u16 writer  | u16 packets: count:10 flags:6 |
 *         +--------------+-------------+-------------------------------+
 *         | [4-byte redundant varint size][fragment bytes] ...         |
 *         +-------------------------------------------------------------+
 *  flags: 1 first fragment continues the previous chunk of the writer,
 *         2 last fragment continues on the next chunk, 4 needs patching.
 *
 *  Producer: Free -> BeingWritten -> Complete.  Service: Complete ->
 *  BeingRead -> Free.  Freeing the last used chunk clears the whole page
 *  header (layout 0) so the page can be repartitioned.
 */
#ifndef PFC_TRACING_SMB_ABI_H
#define PFC_TRACING_SMB_ABI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SMB_PAGE_HEADER_SIZE 8u
#define SMB_CHUNK_HEADER_SIZE 8u
#define SMB_PACKET_HEADER_SIZE 4u
#define SMB_MAX_CHUNKS_PER_PAGE 14u
#define SMB_CHUNK_ALIGN 4u
#define SMB_CHUNK_STATE_BITS 2u
#define SMB_CHUNK_STATE_MASK 0x3u
#define SMB_LAYOUT_SHIFT 28u
#define SMB_LAYOUT_MASK 0x70000000u
#define SMB_ALL_CHUNKS_MASK 0x0FFFFFFFu
#define SMB_MIN_PAGE_SIZE 4096u
/* The ABI limit (chunk sizes are 16-bit); Perfetto's service uses <= 32 KiB. */
#define SMB_MAX_PAGE_SIZE 65536u
#define SMB_MAX_PACKETS_PER_CHUNK 1023u
#define SMB_PACKET_COUNT_MASK 0x3FFu
#define SMB_PACKET_FLAGS_SHIFT 10u
/* Largest valid writer id (Perfetto kMaxWriterID); 0 is invalid. */
#define SMB_MAX_WRITER_ID 1023u
/* Fragment size meaning "the writer abandoned this packet": 2^28 - 1. */
#define SMB_PACKET_SIZE_DROP ((1u << 28) - 1)

enum smb_layout {
	SMB_LAYOUT_NONE = 0,
	SMB_LAYOUT_DIV1 = 1,
	SMB_LAYOUT_DIV2 = 2,
	SMB_LAYOUT_DIV4 = 3,
	SMB_LAYOUT_DIV7 = 4,
	SMB_LAYOUT_DIV14 = 5,
};

enum smb_chunk_state {
	SMB_CHUNK_FREE = 0,
	SMB_CHUNK_BEING_WRITTEN = 1,
	SMB_CHUNK_BEING_READ = 2,
	SMB_CHUNK_COMPLETE = 3,
};

#define SMB_CHUNK_FIRST_CONTINUES (1u << 0)
#define SMB_CHUNK_LAST_CONTINUES (1u << 1)
#define SMB_CHUNK_NEEDS_PATCHING (1u << 2)
#define SMB_CHUNK_KNOWN_FLAGS 0x7u

/* Lives at offset 0 of every page. */
struct smb_page_header {
	_Atomic uint32_t header_bitmap;
	uint32_t reserved;
};

/* Lives at offset 0 of every chunk; fields are set on Free->BeingWritten. */
struct smb_chunk_header {
	_Atomic uint32_t chunk_id;
	_Atomic uint16_t writer_id;
	_Atomic uint16_t packets; /* count in bits 9..0, flags in bits 15..10 */
};

_Static_assert(sizeof(_Atomic uint32_t) == 4 && sizeof(_Atomic uint16_t) == 2,
	       "atomics must be plain words to overlay shared memory");
_Static_assert(sizeof(struct smb_page_header) == SMB_PAGE_HEADER_SIZE, "page header size");
_Static_assert(offsetof(struct smb_page_header, header_bitmap) == 0, "bitmap offset");
_Static_assert(offsetof(struct smb_page_header, reserved) == 4, "reserved offset");
_Static_assert(sizeof(struct smb_chunk_header) == SMB_CHUNK_HEADER_SIZE, "chunk header size");
_Static_assert(offsetof(struct smb_chunk_header, chunk_id) == 0, "chunk_id offset");
_Static_assert(offsetof(struct smb_chunk_header, writer_id) == 4, "writer_id offset");
_Static_assert(offsetof(struct smb_chunk_header, packets) == 6, "packets offset");
_Static_assert(_Alignof(struct smb_chunk_header) == SMB_CHUNK_ALIGN, "chunk alignment");

/* A process-local view of one mapping (never stored in shared memory). */
struct smb {
	uint8_t *base;
	size_t size;
	size_t page_size;
	size_t n_pages;
};

/* One chunk, resolved to an address inside a struct smb. */
struct smb_chunk {
	uint8_t *begin; /* the chunk header */
	uint32_t size;  /* header included */
	uint32_t page;
	uint32_t idx;
};

/* Header values a producer stamps on a chunk when it takes it. */
struct smb_chunk_init {
	uint32_t chunk_id;
	uint16_t writer_id;
	uint16_t packets;
};

static inline uint16_t smb_packets_pack(unsigned count, unsigned flags)
{
	return (uint16_t)((count & SMB_PACKET_COUNT_MASK) | (flags << SMB_PACKET_FLAGS_SHIFT));
}
static inline unsigned smb_packets_count(uint16_t packets)
{
	return packets & SMB_PACKET_COUNT_MASK;
}
static inline unsigned smb_packets_flags(uint16_t packets)
{
	return packets >> SMB_PACKET_FLAGS_SHIFT;
}

static inline unsigned smb_bitmap_layout(uint32_t bitmap)
{
	return (bitmap & SMB_LAYOUT_MASK) >> SMB_LAYOUT_SHIFT;
}
static inline enum smb_chunk_state smb_bitmap_chunk_state(uint32_t bitmap, unsigned idx)
{
	return (enum smb_chunk_state)((bitmap >> (idx * SMB_CHUNK_STATE_BITS)) &
				      SMB_CHUNK_STATE_MASK);
}

/* Chunks in a page of @layout; 0 for "not partitioned" and reserved values. */
unsigned smb_layout_n_chunks(unsigned layout);
/* align4((page_size - 8) / N), or 0 for a layout with no chunks. */
uint32_t smb_chunk_size_for_layout(size_t page_size, unsigned layout);

/**
 * smb_init() - Describe a mapping as an SMB.
 * @base: the mapping (borrowed, page aligned). @size: bytes, a multiple of
 * @page_size. @page_size: 4..64 KiB, a multiple of 4 KiB.
 *
 * Return: 0, or -EINVAL if the geometry is not a valid SMB.
 * Context: any thread; touches no memory.
 */
int smb_init(struct smb *smb, void *base, size_t size, size_t page_size);

static inline struct smb_page_header *smb_page_header(const struct smb *smb, size_t page)
{
	return (struct smb_page_header *)(smb->base + page * smb->page_size);
}
static inline struct smb_chunk_header *smb_chunk_header(const struct smb_chunk *c)
{
	return (struct smb_chunk_header *)c->begin;
}
static inline uint8_t *smb_chunk_payload(const struct smb_chunk *c)
{
	return c->begin + SMB_CHUNK_HEADER_SIZE;
}
static inline uint32_t smb_chunk_payload_size(const struct smb_chunk *c)
{
	return c->size - SMB_CHUNK_HEADER_SIZE;
}

/* Page header bitmap with acquire order (0 if @page is out of range). */
uint32_t smb_page_bitmap(const struct smb *smb, size_t page);
bool smb_page_is_free(const struct smb *smb, size_t page);
/* Bit i set when chunk i exists and is Free; 0 for an unpartitioned page. */
uint32_t smb_page_free_chunks(const struct smb *smb, size_t page);

/**
 * smb_page_try_partition() - Producer: split a free page into @layout (CAS).
 * Return: 0, -EBUSY if the page is not free any more, -EINVAL for bad args.
 * Context: any thread; lock-free.
 */
int smb_page_try_partition(const struct smb *smb, size_t page, enum smb_layout layout);

/**
 * smb_chunk_try_acquire_write() - Producer: Free -> BeingWritten (CAS), then
 * stamp @init into the chunk header with release order.
 * Return: 0 and *out, -EBUSY if the chunk is not free, -EINVAL for bad args.
 * Context: any thread; lock-free.
 */
int smb_chunk_try_acquire_write(const struct smb *smb, size_t page, size_t idx,
				const struct smb_chunk_init *init, struct smb_chunk *out);
/* Producer: BeingWritten -> Complete. Return: 0 or -EINVAL (wrong state). */
int smb_chunk_mark_complete(const struct smb *smb, const struct smb_chunk *c);
/* Service: Complete -> BeingRead, validating (page, idx) and the layout.
 * Return: 0 and *out, -ERANGE/-EBADMSG for bad refs or layouts, -EBUSY if
 * the chunk is not Complete. */
int smb_chunk_try_acquire_read(const struct smb *smb, size_t page, size_t idx,
			       struct smb_chunk *out);
/* Service: BeingRead -> Free (the page is cleared when all its chunks are). */
int smb_chunk_release_free(const struct smb *smb, const struct smb_chunk *c);
/* Emulation (producer owns both ends): Complete -> Free. */
int smb_chunk_free_emulated(const struct smb *smb, const struct smb_chunk *c);
/* Current state of a chunk, or -ERANGE/-EBADMSG for a bad (page, idx). */
int smb_chunk_state(const struct smb *smb, size_t page, size_t idx);

/**
 * smb_chunk_resolve() - Service: turn an untrusted (page, idx) into a chunk,
 * checking the page index, the layout bits and the chunk index against the
 * mapping. Does not change any state.
 * Return: 0 and *out, -ERANGE (page or chunk index out of range) or
 * -EBADMSG (page not partitioned or reserved layout).
 * Context: any thread; reads the page header once (acquire).
 */
int smb_chunk_resolve(const struct smb *smb, size_t page, size_t idx, struct smb_chunk *out);

/* Packet count + flags with acquire order. */
static inline uint16_t smb_chunk_packets(const struct smb_chunk *c)
{
	return atomic_load_explicit(&smb_chunk_header(c)->packets, memory_order_acquire);
}
/* Producer only (one writer per chunk): count++ with release order. Return: new count. */
unsigned smb_chunk_inc_packet_count(const struct smb_chunk *c);
/* Producer only: OR @flags in with release order. */
void smb_chunk_set_flags(const struct smb_chunk *c, unsigned flags);

/* ------------------------------------------------ fragment parsing ---- */

/* A parsed chunk header, decoded from bytes (works on copies too). */
struct smb_chunk_info {
	uint32_t chunk_id;
	uint16_t writer_id;
	uint16_t n_packets;
	uint8_t flags;
};

struct smb_frag {
	const uint8_t *data; /* view into the chunk */
	uint32_t size;
	bool continues_prev; /* first fragment of a chunk with FIRST_CONTINUES */
	bool continues_next; /* last fragment of a chunk with LAST_CONTINUES */
	bool is_dropped;     /* size was SMB_PACKET_SIZE_DROP: discard the packet */
};

struct smb_frag_iter {
	const uint8_t *p;
	const uint8_t *end;
	struct smb_chunk_info info;
	uint16_t idx;
	bool done;
};

/**
 * smb_chunk_parse() - Start iterating the fragments of one chunk.
 * @chunk: chunk bytes starting at the 8-byte header (borrowed; may be shared
 * memory the producer still scribbles on, or a ChunksToMove.data copy).
 * @size: bytes of the chunk, header included.
 *
 * Return: 0, or -EBADMSG when the header is impossible: shorter than a
 * header, writer id 0 or above SMB_MAX_WRITER_ID, more packets than the
 * payload can hold. Unknown flag bits are masked off (forward compatible).
 * Context: any thread; never allocates; reads only [chunk, chunk + size).
 */
int smb_chunk_parse(struct smb_frag_iter *it, const uint8_t *chunk, size_t size);

/**
 * smb_frag_next() - Next fragment of the chunk.
 * Return: 1 with *out, 0 after the last one, -EBADMSG when a fragment
 * header is not a varint of at most 4 bytes or its length passes the end of
 * the chunk. A dropped fragment (SMB_PACKET_SIZE_DROP) is returned once with
 * is_dropped set and ends the iteration.
 */
int smb_frag_next(struct smb_frag_iter *it, struct smb_frag *out);

#endif
