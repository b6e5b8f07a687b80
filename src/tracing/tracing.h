/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracing.h - the producer side of the data path: shared memory buffers
 * (memfd or a private emulation buffer), the arbiter that hands SMB chunks to
 * trace writers and batches CommitDataRequests, and the per-thread trace
 * writer that streams TracePackets into chunks. Used by the producer client
 * glue, the SDK and traced_probes; the SMB layout itself is in smb_abi.h.
 */
#ifndef PFC_TRACING_TRACING_H
#define PFC_TRACING_TRACING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/commit_data_request.pb-c.h"
#include "protozero/protozero.h"
#include "tracing/smb_abi.h"

/* ------------------------------------------------------------- shm ---- */

/* Largest SMB we create or accept from a peer. */
#define SHM_MAX_SIZE_BYTES (32u * 1024 * 1024)
/* Private SMB used when the socket cannot carry fds (Perfetto's size). */
#define SHM_EMULATION_SIZE_BYTES (1024u * 1024)
/* Require F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_SEAL on a received memfd. */
#define SHM_MAP_REQUIRE_SEALS (1u << 0)

struct shm {
	int fd;        /* -1 for a private buffer */
	uint8_t *base; /* page aligned */
	size_t size;
};

/* 0 if @size is a power-of-two multiple of a valid @page_size and at most
 * SHM_MAX_SIZE_BYTES, else -EINVAL. */
int shm_check_size(size_t size, size_t page_size);

/**
 * shm_create() - A sealed memfd ("perfetto_shmem"), or an O_TMPFILE file when
 * memfd is unavailable, mapped shared read-write.
 * Return: 0 and *out (free with shm_destroy()), -EINVAL for a bad size, or
 * the -errno of the failed syscall.
 * Context: setup only; allocates.
 */
int shm_create(size_t size, size_t page_size, struct shm **out);

/**
 * shm_map_fd() - Map an SMB fd received from a peer.
 * @fd: taken over: closed on failure, owned by *out on success.
 * @expected_size: exact size required, or 0 to accept any valid size.
 * @page_size: the page size the SMB will be used with.
 * @flags: SHM_MAP_REQUIRE_SEALS or 0.
 * Return: 0 and *out, -EBADF, -EINVAL (size does not match or is not a
 * valid SMB size, seals missing), or the -errno of fstat/mmap.
 */
int shm_map_fd(int fd, size_t expected_size, size_t page_size, unsigned flags,
	       struct shm **out);

/* A private, zeroed, page-aligned buffer for SMB emulation. Same returns. */
int shm_create_private(size_t size, size_t page_size, struct shm **out);

/* Unmaps and closes. Accepts NULL. */
void shm_destroy(struct shm *shm);

/* --------------------------------------------------------- arbiter ---- */

struct arbiter;

/*
 * Receives one CommitDataRequest. Called with the arbiter lock held, on the
 * thread that completed a chunk or asked for a flush: serialize or copy
 * @req and return; never call back into the arbiter (arb_emulated_release()
 * excepted). @req and everything it points to are borrowed until the
 * callback returns.
 *
 * In emulation mode the chunks a request carries inline stay Complete (not
 * reusable) until the embedder has handed the request to the socket and
 * calls arb_emulated_release() for each (page, chunk) of its chunks_to_move:
 * the private SMB is then the bound on data waiting to be sent, and writers
 * stall (or drop, as their policy says) when the link is slower than they
 * are, instead of the embedder dropping whole commits. Return 0 if the
 * request was taken, or -errno if it was not (the arbiter then frees its
 * emulated chunks at once: their data is lost and the service sees the
 * chunk-id gap).
 */
typedef int (*arb_commit_cb)(const struct Perfetto__Protos__CommitDataRequest *req, void *user);
/* Batching mode: a batch just became non-empty; the embedder should call
 * arb_commit_pending() after its batching delay. Same context rules. */
typedef void (*arb_schedule_cb)(void *user);

enum arb_full_policy {
	ARB_FULL_STALL = 0, /* wait for the service, then drop after a timeout */
	ARB_FULL_DROP = 1,  /* drop at once, visibly */
};

/* Named limits of one commit. */
#define ARB_MAX_COMMIT_BYTES (128u * 1024 - 512)
#define ARB_MAX_PATCHES 512u
#define ARB_DEFAULT_STALL_TIMEOUT_MS 10000u

struct arb_config {
	uint8_t *smb_base;  /* the mapping (borrowed; outlives the arbiter) */
	size_t smb_size;
	size_t page_size;   /* SetupTracing's shared_buffer_page_size_kb * 1024 */
	enum smb_layout layout; /* how pages are partitioned; 0 = Div1 */
	bool is_emulation;  /* copy chunk bytes into ChunksToMove.data */
	bool batch_commits; /* wait for arb_commit_pending() (or a full batch) */
	/* With batch_commits: commit at once, on the writer's thread, once
	 * this many SMB bytes wait in the batch (0, or more than half the SMB:
	 * half the SMB). Small batches keep the commit's packing, done under
	 * the lock writers return chunks with, short. */
	size_t commit_at_bytes;
	arb_commit_cb commit_cb;
	arb_schedule_cb schedule_cb; /* optional, batching mode only */
	void *user;
};

struct arb_stats {
	uint64_t chunks_acquired;
	uint64_t chunks_committed;
	uint64_t commits;
	uint64_t patches_sent;
	uint64_t stalls;         /* acquisitions that had to wait */
	uint64_t chunks_dropped; /* acquisitions that gave up (SMB full) */
};

/**
 * arb_create() - An arbiter over one SMB.
 * Return: 0 and *out (arb_destroy()), -EINVAL for a bad geometry or a
 * missing commit_cb, -ENOMEM.
 * Context: setup only; allocates every commit buffer here.
 */
int arb_create(const struct arb_config *cfg, struct arbiter **out);
/* Accepts NULL. Trace writers must be destroyed first. */
void arb_destroy(struct arbiter *arb);

/* Allocates a writer id in 1..SMB_MAX_WRITER_ID. Return: id or -EBUSY. */
int arb_writer_id_alloc(struct arbiter *arb);
void arb_writer_id_free(struct arbiter *arb, uint16_t writer_id);

/* Sends the pending batch now (the embedder's batching timer). Return: 0. */
int arb_commit_pending(struct arbiter *arb);
/* Sends the pending batch, possibly empty, tagged with @flush_request_id.
 * Trace writers must have been flushed on their threads first. Return: 0. */
int arb_flush(struct arbiter *arb, uint64_t flush_request_id);

/**
 * arb_emulated_release() - Emulation mode: the commit carrying chunk (@page,
 * @idx) left the process; the chunk may be written again.
 * Return: 0; -EINVAL if that chunk is not a committed one.
 * Context: any thread, arbiter lock held or not (one atomic transition).
 */
int arb_emulated_release(struct arbiter *arb, uint32_t page, uint32_t idx);

/* Chunk-level writing, for trace writers (trace_writer.c) and writers that
 * manage chunks themselves (the SDK's per-thread writers). */
struct tw_patch_list;
/*
 * Takes a chunk for @writer_id: stamps @init, honours @policy (stalling
 * commits the pending batch so the service can free chunks).
 * Return: 0 and *out, or -ENOSPC when the SMB stays full.
 */
int arb_chunk_acquire(struct arbiter *arb, const struct smb_chunk_init *init,
		      enum arb_full_policy policy, uint32_t stall_timeout_ms, struct smb_chunk *out);

/*
 * Marks @chunk complete (or copies and frees it in emulation mode), queues it
 * with every ready patch of @patches, and commits if the batch is due.
 * @chunk may be NULL to send ready patches only.
 */
void arb_chunk_return(struct arbiter *arb, const struct smb_chunk *chunk, uint16_t writer_id,
		      uint16_t target_buffer, struct tw_patch_list *patches);

const struct smb *arb_smb(const struct arbiter *arb);
void arb_get_stats(struct arbiter *arb, struct arb_stats *out);

/* ----------------------------------------------------- trace writer ---- */

struct trace_writer;

struct tw_config {
	uint16_t target_buffer;
	enum arb_full_policy policy;
	uint32_t stall_timeout_ms; /* 0 = ARB_DEFAULT_STALL_TIMEOUT_MS */
};

struct tw_stats {
	uint64_t packets_written;  /* started in a real chunk */
	uint64_t packets_dropped;  /* started or ended in drop mode */
	uint64_t chunks_committed;
};

/**
 * tw_create() - A trace writer for one thread, with its own writer id.
 * Return: 0 and *out (tw_destroy()), -EBUSY (no writer ids left), -ENOMEM.
 * Context: setup; allocates. The writer is then used by one thread at a time.
 */
int tw_create(struct arbiter *arb, const struct tw_config *cfg, struct trace_writer **out);

/**
 * tw_new_packet() - Finish the open packet, if any, and start a TracePacket.
 * Return: the packet's root message (borrowed; valid until the next
 * tw_new_packet/tw_finish_packet/tw_flush/tw_destroy). Never NULL: when the
 * SMB is full under the drop policy the packet goes to a scratch area and is
 * counted as dropped.
 * Context: owning thread; never allocates; locks only to change chunks.
 */
struct pz_msg *tw_new_packet(struct trace_writer *tw);
/* Ends the open packet (and its open nested messages). */
void tw_finish_packet(struct trace_writer *tw);
/* Finishes the packet, returns the current chunk even if partly filled and
 * sends every pending commit. */
void tw_flush(struct trace_writer *tw);
/* Flushes, releases the writer id and frees. Accepts NULL. */
void tw_destroy(struct trace_writer *tw);

uint16_t tw_writer_id(const struct trace_writer *tw);
void tw_get_stats(const struct trace_writer *tw, struct tw_stats *out);

#endif
