/* SPDX-License-Identifier: Apache-2.0 */
/*
 * producer.h - the producer side of the ProducerPort protocol: connects to
 * traced, registers data sources, follows the service's commands (setup,
 * start, stop, flush) and moves committed SMB chunks to the service. Used by
 * traced_probes, the C SDK and test producers. Control runs on one evloop
 * thread; trace writers are used from any thread, one writer per thread.
 */
#ifndef PFC_TRACING_PRODUCER_H
#define PFC_TRACING_PRODUCER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/data_source_config.pb-c.h"
#include "tracing/tracing.h"

struct evloop;
struct producer;

/* Data sources one producer may register (the service has its own limit). */
#define PRODUCER_MAX_DATA_SOURCES 256u
/* Writers one producer keeps track of at once. */
#define PRODUCER_MAX_WRITERS SMB_MAX_WRITER_ID
/* Serialized requests waiting for the loop thread; over it commits are
 * dropped (counted in producer_stats.commits_dropped). */
#define PRODUCER_MAX_QUEUED_BYTES (16u * 1024 * 1024)
/* Longest producer or data source name we send. */
#define PRODUCER_MAX_NAME_BYTES 256u

/* The connection is initialized; data sources registered so far are sent. */
typedef void (*producer_connected_cb)(struct producer *p, void *user);
/* The connection failed or ended (@err: -errno, or 0 for an orderly close).
 * Called once; the producer is then inert: destroy it (and reconnect with a
 * new one if wanted). */
typedef void (*producer_disconnected_cb)(struct producer *p, int err, void *user);
/* The SMB is mapped: producer_create_writer() works from now on. */
typedef void (*producer_tracing_setup_cb)(struct producer *p, void *user);
/* SetupDataSource / StartDataSource. @cfg is borrowed for the call; its
 * target_buffer is what producer_create_writer() wants. */
typedef void (*producer_ds_cb)(struct producer *p, uint64_t instance_id,
			       const Perfetto__Protos__DataSourceConfig *cfg, void *user);
/* StopDataSource. With will_notify_on_stop, call producer_notify_stopped()
 * when the instance has flushed its writers. */
typedef void (*producer_stop_cb)(struct producer *p, uint64_t instance_id, void *user);
/* Flush of @instance_ids (borrowed, @n of them). Flush the writers of those
 * instances on their own threads, then call producer_flush_ack(). */
typedef void (*producer_flush_cb)(struct producer *p, const uint64_t *instance_ids, size_t n,
				  uint64_t request_id, uint64_t flags, void *user);
/* ClearIncrementalState for @instance_ids (borrowed). */
typedef void (*producer_clear_cb)(struct producer *p, const uint64_t *instance_ids, size_t n,
				  void *user);
/* Sync finished (@success false if the connection ended first). */
typedef void (*producer_sync_cb)(struct producer *p, bool success, void *user);

/* Every callback may be NULL and runs on the loop thread. */
struct producer_callbacks {
	producer_connected_cb on_connected;
	producer_disconnected_cb on_disconnected;
	producer_tracing_setup_cb on_tracing_setup;
	producer_ds_cb setup_ds;
	producer_ds_cb start_ds;
	producer_stop_cb stop_ds;
	/* NULL: the producer flushes every writer itself on the loop thread and
	 * acks at once. Only right when writers are idle or live on the loop
	 * thread, since a trace writer is not thread-safe. */
	producer_flush_cb flush;
	producer_clear_cb clear_incremental_state;
};

struct producer_opts {
	uint32_t smb_size_hint_bytes;  /* 0: the service's default */
	uint32_t page_size_hint_bytes; /* 0: the service's default */
	/* Commit batching: 0 sends completed chunks as soon as the loop gets
	 * to them (chunks finished meanwhile share a request); > 0 waits that
	 * many ms first, as Perfetto's batch_commits_duration_ms. */
	uint32_t batch_commits_ms;
	/* ... and commits a batch at once when this many bytes of the SMB
	 * wait in it (0: half the SMB). */
	uint32_t batch_commit_bytes;
	/* What writers do when the SMB is full. Writers on the loop thread
	 * need ARB_FULL_DROP: a stall there waits for commits that only the
	 * loop can send. In emulation mode chunks are copied out at once, so
	 * writers never wait; the queue bound applies instead. */
	enum arb_full_policy full_policy;
	uint32_t stall_timeout_ms; /* ARB_FULL_STALL only; 0 = default */
	/* SMB layout (how pages are cut into chunks); 0 = one chunk per page. */
	enum smb_layout layout;
	/* InitializeConnection.smb_scraping_mode: 0 unspecified, 1 on, 2 off. */
	int smb_scraping_mode;
	/* Allocate the SMB here and offer it with InitializeConnection (UNIX
	 * sockets only); sized by the hints, default PRODUCER_OWN_SMB_BYTES. */
	bool provide_smb;
};

#define PRODUCER_OWN_SMB_BYTES (256u * 1024)

/* What RegisterDataSource announces. Strings are copied. */
struct producer_ds_desc {
	const char *name;
	bool will_notify_on_start;
	bool will_notify_on_stop;
	bool handles_incremental_state_clear;
	bool no_flush;
	/* Optional serialized DataSourceDescriptor merged after the fields
	 * above (e.g. a track_event_descriptor); borrowed, copied. */
	const uint8_t *extra_pb;
	size_t extra_pb_len;
};

struct producer_stats {
	uint64_t commits_sent;      /* CommitData requests handed to the IPC */
	uint64_t commits_dropped;   /* queue over its limit, or the IPC refused */
	uint64_t commit_bytes_sent; /* serialized CommitData bytes */
	uint64_t flushes_acked;
};

/**
 * producer_connect() - Connect to the service and start the handshake.
 * @loop: the event loop (borrowed; must outlive the producer).
 * @sock_name: the producer socket (Perfetto's grammar); NULL for the default.
 * @producer_name: e.g. "perfetto.traced_probes" (copied).
 * @opts: NULL for defaults (copied).  @cbs: callbacks (copied).  @user: theirs.
 * @out: the producer; free it with producer_destroy().
 *
 * Binds ProducerPort, sends InitializeConnection and opens the command
 * stream. Failures after this returns arrive through on_disconnected.
 * Return: 0; -EINVAL (no name, name too long); an immediate connect error
 * (-ENOENT, -ECONNREFUSED...); -ENOMEM.
 * Context: loop thread (the one that runs @loop); allocates.
 */
int producer_connect(struct evloop *loop, const char *sock_name, const char *producer_name,
		     const struct producer_opts *opts, const struct producer_callbacks *cbs,
		     void *user, struct producer **out);

/**
 * producer_destroy() - Disconnect and free. Trace writers must be destroyed
 * first (the ones left are destroyed here, which is only safe if no thread
 * is using them). No callbacks run. NULL is allowed.
 * Context: loop thread, also from inside the producer's own callbacks.
 */
void producer_destroy(struct producer *p);

/**
 * producer_register_ds() - Register a data source; sent once connected.
 * @p: the producer.  @desc: the descriptor (borrowed; copied).
 *
 * Return: 0; -EINVAL (no name, name too long); -EEXIST (same name);
 * -ENOSPC (PRODUCER_MAX_DATA_SOURCES); -ENOTCONN (disconnected); -ENOMEM.
 * Context: loop thread.
 */
int producer_register_ds(struct producer *p, const struct producer_ds_desc *desc);

/**
 * producer_update_ds() - Replace a registered data source's descriptor
 * (UpdateDataSource), e.g. when new track event categories appear.
 * Return: 0; -EINVAL; -ENOENT (not registered); -ENOTCONN; -ENOMEM.
 * Context: loop thread.
 */
int producer_update_ds(struct producer *p, const struct producer_ds_desc *desc);

/** producer_unregister_ds() - Forget a data source. Return: 0, -ENOENT, -ENOTCONN. */
int producer_unregister_ds(struct producer *p, const char *name);

/**
 * producer_create_writer() - A trace writer into the service's buffer
 * @target_buffer (DataSourceConfig.target_buffer), registered with the
 * service (RegisterTraceWriter).
 * @out: the writer, used by one thread at a time; free it with
 * producer_destroy_writer().
 *
 * Return: 0; -EAGAIN (no SMB yet: wait for on_tracing_setup or start_ds);
 * -ENOTCONN; -EBUSY (no writer ids left); -ENOMEM.
 * Context: any thread; allocates.
 */
int producer_create_writer(struct producer *p, uint16_t target_buffer,
			   struct trace_writer **out);

/**
 * producer_register_writer_id() - A writer id registered with the service
 * (RegisterTraceWriter) for @target_buffer, for callers that write chunks
 * themselves through producer_arbiter() (the SDK's writers).
 * Return: 0 and *out_id; -EAGAIN (no SMB yet); -ENOTCONN; -EBUSY (no ids
 * left); -ENOMEM.
 * Context: any thread.
 */
int producer_register_writer_id(struct producer *p, uint16_t target_buffer, uint16_t *out_id);

/** producer_unregister_writer_id() - UnregisterTraceWriter; the id is free again. Any thread. */
void producer_unregister_writer_id(struct producer *p, uint16_t writer_id);

/**
 * producer_destroy_writer() - Flush @tw, free it and tell the service
 * (UnregisterTraceWriter). NULL is allowed.
 * Context: the writer's thread.
 */
void producer_destroy_writer(struct producer *p, struct trace_writer *tw);

/**
 * producer_flush_ack() - Commit everything pending and acknowledge flush
 * @request_id. Call after flushing the writers the flush asked for.
 * Return: 0, -ENOTCONN, -ENOMEM.
 * Context: any thread.
 */
int producer_flush_ack(struct producer *p, uint64_t request_id);

/** producer_notify_started() - NotifyDataSourceStarted. Return: 0, -ENOTCONN, -ENOMEM. Any thread. */
int producer_notify_started(struct producer *p, uint64_t instance_id);
/** producer_notify_stopped() - NotifyDataSourceStopped. Return: as above. Any thread. */
int producer_notify_stopped(struct producer *p, uint64_t instance_id);

/**
 * producer_activate_triggers() - ActivateTriggers with @n names (borrowed).
 * Return: 0, -EINVAL, -ENOTCONN, -ENOMEM. Any thread.
 */
int producer_activate_triggers(struct producer *p, const char *const *names, size_t n);

/**
 * producer_sync() - Call @cb once the service has processed everything sent
 * before (requests queued by other threads included).
 * Return: 0, -ENOTCONN, -ENOMEM. Context: loop thread.
 */
int producer_sync(struct producer *p, producer_sync_cb cb, void *user);

/** producer_is_connected() - True between on_connected and on_disconnected. */
bool producer_is_connected(const struct producer *p);
/** producer_uses_shmem_emulation() - True when chunks travel inline (TCP, vsock). */
bool producer_uses_shmem_emulation(const struct producer *p);
/** producer_arbiter() - The arbiter (borrowed), NULL before SetupTracing. */
struct arbiter *producer_arbiter(struct producer *p);
/** producer_socket_fd() - The socket (borrowed), or -1: a forked child
 * closes it so the service sees the parent leave. */
int producer_socket_fd(const struct producer *p);
/** producer_get_stats() - Counters. Any thread. */
void producer_get_stats(struct producer *p, struct producer_stats *out);

#endif
