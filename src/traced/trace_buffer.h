/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_buffer.h - the service's central trace buffer, one per
 * TraceConfig.buffers entry of a session. The producer ports copy committed
 * SMB chunks in and apply patches; the consumer port (or the periodic file
 * writer) reads reassembled packets out, sequence by sequence. One thread
 * (the service's event loop); every byte that came from a producer is
 * untrusted and checked.
 *
 * Arena (allocated once, size rounded up to 4 KiB), records tile [0, used_end):
 *
 *   0                              wr                     used_end   size
 *   | chunk | free | chunk | pad | chunk | chunk | ... | chunk | pad |
 *     ^ 40-byte header + fragment bytes, 8-byte aligned
 *   Writes go at wr; in RING_BUFFER mode the records in their way are
 *   evicted (oldest first, as they are in buffer order); a record that is
 *   only partly covered leaves a "pad" record behind. A read turns a fully
 *   consumed chunk into a "free" record in place.
 *
 * Each (producer_id, writer_id) sequence keeps a doubly linked list of its
 * chunks ordered by chunk_id (modulo 2^32), threaded through the records by
 * offset, so the buffer holds no pointers and clones with a memcpy.
 */
#ifndef PFC_TRACED_TRACE_BUFFER_H
#define PFC_TRACED_TRACE_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pz_msg;
struct trace_buffer;

/* Values match TraceConfig.BufferConfig.FillPolicy. */
enum tb_fill_policy {
	TB_RING_BUFFER = 1,
	TB_DISCARD = 2,
};

/* Chunk flags, as in the SMB chunk header (bits 0..2 of its flags:6). */
#define TB_CHUNK_FIRST_CONTINUES (1u << 0)
#define TB_CHUNK_LAST_CONTINUES (1u << 1)
#define TB_CHUNK_NEEDS_PATCHING (1u << 2)
#define TB_CHUNK_ABI_FLAGS 0x7u

/* Bytes a patch writes (the size of a fragment header). */
#define TB_PATCH_SIZE 4
/* Fragment size a trace writer uses to say "the packet was dropped". */
#define TB_PACKET_SIZE_DROP ((1u << 28) - 1)
/* Largest buffer: records are addressed by 32-bit offsets. */
#define TB_MAX_SIZE_BYTES (1u << 31)
/* Upper bound of the sequence table (its size is derived from the buffer size). */
#define TB_MAX_SEQUENCES (1u << 20)
/* Bytes of bookkeeping in front of every chunk's fragments in the arena. */
#define TB_CHUNK_HEADER_BYTES 40u

/* The trusted identity of the producer connection a chunk came from. */
struct tb_client {
	uint32_t producer_id;
	uint32_t uid;
	int32_t pid;
	uint32_t machine_id; /* 0 for the host */
};

/* A piece of a packet: a view into the buffer (or its slice table). */
struct tb_slice {
	const uint8_t *data;
	size_t size;
};

/*
 * One packet read out. @slices is owned by the buffer and, like the bytes
 * it points at, stays valid until the next tb_read_next_packet(),
 * tb_copy_chunk(), tb_try_patch() or tb_destroy() on that buffer.
 */
struct tb_packet {
	const struct tb_slice *slices;
	size_t n_slices;
	size_t size_bytes; /* sum of the slice sizes */
	struct tb_client client;
	uint16_t writer_id;
	/* TracePacket.DataLossReason bits; 0 when nothing was lost before it. */
	uint32_t previous_packet_dropped;
};

/* TraceStats.BufferStats, with Perfetto's meanings; sizes are record sizes. */
struct tb_stats {
	uint64_t buffer_size;
	uint64_t bytes_written;
	uint64_t bytes_overwritten;
	uint64_t bytes_read;
	uint64_t padding_bytes_written;
	uint64_t padding_bytes_cleared;
	uint64_t chunks_written;
	uint64_t chunks_rewritten;
	uint64_t chunks_overwritten;
	uint64_t chunks_discarded;
	uint64_t chunks_read;
	uint64_t chunks_committed_out_of_order;
	uint64_t write_wrap_count;
	uint64_t patches_succeeded;
	uint64_t patches_failed;
	uint64_t readaheads_succeeded;
	uint64_t readaheads_failed;
	uint64_t abi_violations;
	uint64_t trace_writer_packet_loss;
	/* Not in BufferStats: chunks refused because the sequence table was full. */
	uint64_t chunks_dropped_seq_limit;
	/* Not in BufferStats: packets dropped by a final read (never completed). */
	uint64_t packets_dropped_final;
};

/**
 * tb_record_size() - Arena bytes a chunk with @payload_bytes of fragments takes.
 * @payload_bytes: stored fragment bytes (fragment headers included).
 *
 * Return: the record size (header + payload, rounded up to 8).
 * Context: any; pure.
 */
size_t tb_record_size(size_t payload_bytes);

/**
 * tb_create() - Allocate a trace buffer.
 * @size_bytes: wanted size, rounded up to 4 KiB; 1 .. TB_MAX_SIZE_BYTES.
 * @policy: TB_RING_BUFFER or TB_DISCARD.
 * @out_tb: set to the new buffer (owned; free with tb_destroy()).
 *
 * Return: 0, -EINVAL (size or policy out of range) or -ENOMEM.
 * Context: allocates every byte the buffer will ever use.
 */
int tb_create(size_t size_bytes, enum tb_fill_policy policy, struct trace_buffer **out_tb);

/** tb_destroy() - Free @tb and everything it owns; NULL is fine. */
void tb_destroy(struct trace_buffer *tb);

/**
 * tb_copy_chunk() - Copy a committed (or scraped) chunk into the buffer.
 * @tb: the buffer.  @client: trusted identity of the committing producer.
 * @writer_id, @chunk_id, @num_fragments, @chunk_flags: from the (untrusted)
 * SMB chunk header; only TB_CHUNK_ABI_FLAGS bits of @chunk_flags are used.
 * @payload: the chunk bytes after its 8-byte header (borrowed, untrusted).
 * It may be the producer's shared memory, still being written to: the copy
 * is scanned once here for accounting and validated again when read.
 * @payload_size: bytes in @payload (the chunk size minus 8).
 * @is_complete: false for a chunk scraped while still being written: its
 * last fragment is ignored and the sequence waits for the real commit,
 * which replaces it in place.
 *
 * Only the fragments are stored, not the unused tail of the chunk.
 * A commit of a chunk id already in the buffer replaces a scraped copy if
 * it carries more data and is ignored otherwise.
 *
 * Return: 0 if stored (or an equal re-commit was ignored); -EBADMSG if the
 * chunk broke the ABI (counted in abi_violations; a valid prefix of its
 * fragments may still be stored); -EMSGSIZE if it is larger than the
 * buffer; -ENOSPC if dropped because a DISCARD buffer is full
 * (chunks_discarded) or the sequence table is full; -ESTALE if that chunk
 * id was already consumed (chunks_discarded); -EPERM on a clone; -EINVAL
 * for NULL arguments.
 * Context: event loop; never allocates; memcpy plus O(1) bookkeeping for an
 * in-order commit (a recommit or out-of-order commit walks back from the
 * newest chunk of the sequence).
 */
int tb_copy_chunk(struct trace_buffer *tb, const struct tb_client *client, uint16_t writer_id,
		  uint32_t chunk_id, uint16_t num_fragments, uint8_t chunk_flags,
		  const uint8_t *payload, size_t payload_size, bool is_complete);

/**
 * tb_try_patch() - Apply one out-of-band patch to a chunk still in the buffer.
 * @tb: the buffer.  @producer_id: trusted id of the patching producer.
 * @writer_id, @chunk_id: the chunk to patch (untrusted).
 * @offset: from the start of the chunk payload (untrusted).
 * @data: TB_PATCH_SIZE bytes to write.
 * @other_patches_pending: false clears the chunk's needs-patching state,
 * which makes it readable.
 *
 * Return: 0 (patches_succeeded), -ENOENT if no such chunk of that producer
 * is in the buffer, -ERANGE if @offset is out of the chunk (both count in
 * patches_failed), -EPERM on a clone, -EINVAL for NULL arguments.
 * Context: event loop; never allocates.
 */
int tb_try_patch(struct trace_buffer *tb, uint32_t producer_id, uint16_t writer_id,
		 uint32_t chunk_id, uint32_t offset, const uint8_t data[TB_PATCH_SIZE],
		 bool other_patches_pending);

/**
 * tb_begin_read() - Start a read pass over every sequence.
 * @tb: the buffer.
 * @is_final: the session is over: nothing else will be committed, so
 * chunks waiting for patches or for a complete commit are read as they are,
 * and packets that can never be completed are dropped (and counted).
 *
 * Context: event loop; never allocates.
 */
void tb_begin_read(struct trace_buffer *tb, bool is_final);

/**
 * tb_read_next_packet() - Return the next complete packet of this pass.
 * @tb: the buffer.  @out_packet: filled with views into the buffer.
 *
 * Packets come sequence by sequence, each sequence in chunk id order.
 * Returned fragments are consumed; a packet whose continuation has not been
 * committed yet stays for a later pass.
 *
 * Return: 1 with a packet, 0 when this pass has nothing more, -ENOMEM if
 * the slice table could not grow (the packet stays in the buffer).
 * Context: event loop; allocates only to grow the slice table for a packet
 * that spans more chunks than any before it.
 */
int tb_read_next_packet(struct trace_buffer *tb, struct tb_packet *out_packet);

/**
 * tb_clone() - Make a read-only snapshot of @tb (for CloneSession).
 * @tb: the buffer (not changed).  @out_copy: set to the copy (owned;
 * tb_destroy()); copies and patches on it fail with -EPERM.
 *
 * Return: 0 or -ENOMEM.
 * Context: allocates as much as tb_create() and copies the used bytes.
 */
int tb_clone(const struct trace_buffer *tb, struct trace_buffer **out_copy);

/**
 * tb_note_abi_violation() - Count a chunk meant for @tb that the service
 * rejected before it got here (bad SMB page or chunk index, writer id 0).
 */
void tb_note_abi_violation(struct trace_buffer *tb);

/** tb_stats() - Copy @tb's counters into @out_stats. */
void tb_stats(const struct trace_buffer *tb, struct tb_stats *out_stats);

/**
 * tb_write_stats() - Append @tb's counters as the fields of a
 * TraceStats.BufferStats message.
 * @tb: the buffer.  @buffer_stats_msg: an open BufferStats message (e.g.
 * started with pz_begin_nested(stats, PB_TRACE_STATS__BUFFER_STATS, ...)).
 *
 * Context: never allocates (the stream may grow through its callback).
 */
void tb_write_stats(const struct trace_buffer *tb, struct pz_msg *buffer_stats_msg);

/** tb_size() - The arena size in bytes (after rounding). */
size_t tb_size(const struct trace_buffer *tb);

#endif
