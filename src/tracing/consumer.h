/* SPDX-License-Identifier: Apache-2.0 */
/*
 * consumer.h - the consumer side of the ConsumerPort protocol (the perfetto
 * CLI and tests): enable/start/stop tracing, flush, read the buffers back as
 * whole packets, attach/detach, clone, stats and service state; plus the
 * buffered writer of the Trace file framing. Everything runs on one evloop
 * thread; results arrive through callbacks with a void *user.
 */
#ifndef PFC_TRACING_CONSUMER_H
#define PFC_TRACING_CONSUMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/tracing_service_state.pb-c.h"

struct evloop;
struct consumer;

/* Largest packet read_buffers reassembles; a longer one is dropped and the
 * read ends with -EMSGSIZE. */
#define CONSUMER_MAX_PACKET_BYTES (256u * 1024 * 1024)
/* Largest merged reply of a streamed query (service state). */
#define CONSUMER_MAX_QUERY_BYTES (64u * 1024 * 1024)
/* Longest detach key / session name we send. */
#define CONSUMER_MAX_KEY_BYTES 1024u

/* ConsumerPort is bound: calls may be made from now on. */
typedef void (*consumer_connected_cb)(struct consumer *c, void *user);
/* The connection failed or ended (@err -errno, 0 for an orderly close).
 * Pending calls have been failed before. Called once. */
typedef void (*consumer_disconnected_cb)(struct consumer *c, int err, void *user);

struct consumer_callbacks {
	consumer_connected_cb on_connected;       /* may be NULL */
	consumer_disconnected_cb on_disconnected; /* may be NULL */
};

/* The session ended: @error is NULL, or the service's reason (borrowed). */
typedef void (*consumer_disabled_cb)(const char *error, void *user);
/* A call finished: 0, or -errno (-ECONNRESET: the connection went away;
 * -EIO: the service refused; -ETIMEDOUT: a flush did not complete). */
typedef void (*consumer_done_cb)(int err, void *user);
/* One whole TracePacket (borrowed for the call). */
typedef void (*consumer_packet_cb)(const uint8_t *packet, size_t len, void *user);
/* A result message as bytes (borrowed): TraceStats, TraceConfig,
 * TracingServiceCapabilities or ObservableEvents. @len is 0 on error. */
typedef void (*consumer_bytes_cb)(int err, const uint8_t *data, size_t len, void *user);
/* Observed events; @is_last is set on the final call (the stream ended). */
typedef void (*consumer_events_cb)(int err, const uint8_t *events, size_t len, bool is_last,
				   void *user);
/* The merged service state: decoded (NULL on error) and as bytes. */
typedef void (*consumer_state_cb)(int err, const Perfetto__Protos__TracingServiceState *state,
				  const uint8_t *data, size_t len, void *user);

struct consumer_clone_result {
	int err;           /* 0 if the service answered (see success) */
	bool success;
	const char *error; /* borrowed; NULL if none */
	int64_t uuid_msb;
	int64_t uuid_lsb;
	bool was_write_into_file;
};
typedef void (*consumer_clone_cb)(const struct consumer_clone_result *r, void *user);

/* What to clone: @session_id, or @unique_session_name when set. */
struct consumer_clone_args {
	uint64_t session_id;
	const char *unique_session_name;
	bool skip_trace_filter;
	bool for_bugreport;
	/* The CLONE_SNAPSHOT trigger this clone is for (name NULL: none). */
	const char *clone_trigger_name;
	const char *clone_trigger_producer_name;
	int32_t clone_trigger_trusted_producer_uid;
	uint64_t clone_trigger_boot_time_ns;
	uint64_t clone_trigger_delay_ms;
};

/**
 * consumer_connect() - Connect and bind ConsumerPort.
 * @loop: the event loop (borrowed; outlives the consumer).
 * @sock_name: the consumer socket; NULL for the default.
 * @cbs: callbacks (copied; may be NULL).  @user: passed to them.
 * @out: the consumer; free it with consumer_destroy().
 *
 * Return: 0; an immediate connect error (-ENOENT, -ECONNREFUSED...); -ENOMEM.
 * Context: loop thread; allocates.
 */
int consumer_connect(struct evloop *loop, const char *sock_name,
		     const struct consumer_callbacks *cbs, void *user, struct consumer **out);

/**
 * consumer_destroy() - Close and free; pending calls are forgotten (their
 * callbacks never run). NULL is allowed; allowed inside any callback.
 */
void consumer_destroy(struct consumer *c);

/** consumer_is_connected() - True between on_connected and on_disconnected. */
bool consumer_is_connected(const struct consumer *c);

/**
 * consumer_set_max_packet_bytes() - Lower the reassembly limit of later
 * read_buffers calls (memory-constrained embedders, tests).
 * Return: 0, or -EINVAL for 0 or more than CONSUMER_MAX_PACKET_BYTES.
 */
int consumer_set_max_packet_bytes(struct consumer *c, size_t max_bytes);

/*
 * Every call below returns 0 once the request is queued; -ENOTCONN before
 * on_connected or after the connection ended; -EOPNOTSUPP if the service
 * does not offer the method; -EINVAL for bad arguments; -ENOMEM. Callbacks
 * marked optional may be NULL. Context: loop thread.
 */

/**
 * consumer_enable_tracing() - EnableTracing with a serialized TraceConfig.
 * @cfg, @len: the TraceConfig bytes (borrowed; checked to decode).
 * @out_fd: the file the service writes into (write_into_file without
 *          output_path), or -1; borrowed (a duplicate is sent).
 * @on_disabled: required; called once when the session ends.
 */
int consumer_enable_tracing(struct consumer *c, const uint8_t *cfg, size_t len, int out_fd,
			    consumer_disabled_cb on_disabled, void *user);
/**
 * consumer_enable_tracing_notify() - After consumer_attach(): ask to be told
 * when the attached session ends (EnableTracing with attach_notification_only).
 * @on_disabled: required; called once.
 */
int consumer_enable_tracing_notify(struct consumer *c, consumer_disabled_cb on_disabled,
				   void *user);
/** consumer_change_trace_config() - ChangeTraceConfig (e.g. trigger updates). */
int consumer_change_trace_config(struct consumer *c, const uint8_t *cfg, size_t len);
/** consumer_start_tracing() - StartTracing, for deferred_start sessions. */
int consumer_start_tracing(struct consumer *c);
/** consumer_disable_tracing() - DisableTracing; on_disabled follows. */
int consumer_disable_tracing(struct consumer *c);
/** consumer_flush() - Flush with @timeout_ms (0: the service default). @cb optional. */
int consumer_flush(struct consumer *c, uint32_t timeout_ms, uint64_t flags, consumer_done_cb cb,
		   void *user);
/**
 * consumer_read_buffers() - ReadBuffers: @on_packet for every packet, then
 * @on_done with 0, -EMSGSIZE (a packet over CONSUMER_MAX_PACKET_BYTES was
 * dropped), -EBADMSG (malformed reply) or -ECONNRESET. Both required.
 */
int consumer_read_buffers(struct consumer *c, consumer_packet_cb on_packet,
			  consumer_done_cb on_done, void *user);
/** consumer_free_buffers() - FreeBuffers (ends the session). @cb optional. */
int consumer_free_buffers(struct consumer *c, consumer_done_cb cb, void *user);
/** consumer_detach() - Detach the session under @key. @cb optional. */
int consumer_detach(struct consumer *c, const char *key, consumer_done_cb cb, void *user);
/** consumer_attach() - Attach to @key; @cb gets the session's TraceConfig bytes. */
int consumer_attach(struct consumer *c, const char *key, consumer_bytes_cb cb, void *user);
/** consumer_get_trace_stats() - @cb gets TraceStats bytes. */
int consumer_get_trace_stats(struct consumer *c, consumer_bytes_cb cb, void *user);
/** consumer_query_capabilities() - @cb gets TracingServiceCapabilities bytes. */
int consumer_query_capabilities(struct consumer *c, consumer_bytes_cb cb, void *user);
/**
 * consumer_query_service_state() - QueryServiceState; the streamed replies
 * are merged (repeated fields appended) before @cb runs, once.
 */
int consumer_query_service_state(struct consumer *c, bool sessions_only, consumer_state_cb cb,
				 void *user);
/** consumer_clone_session() - CloneSession; @args borrowed. */
int consumer_clone_session(struct consumer *c, const struct consumer_clone_args *args,
			   consumer_clone_cb cb, void *user);
/**
 * consumer_observe_events() - ObserveEvents for @n ObservableEvents.Type
 * values (borrowed); @cb runs per event batch until the stream ends.
 */
int consumer_observe_events(struct consumer *c, const int *types, size_t n, consumer_events_cb cb,
			    void *user);

/* ------------------------------------------------- trace files ---- */

/*
 * Writes packets as a Trace message: 0x0A <varint length> <packet>. Bytes are
 * buffered and written with blocking writes (EINTR retried). The first
 * error sticks and is returned by every later call.
 */
struct trace_file_writer {
	int fd; /* borrowed */
	uint8_t *buf;
	size_t cap;
	size_t len;
	uint64_t bytes_written; /* framing included, flushed or not */
	uint64_t packets;
	int err;
};

/* Default buffer: 1 MiB. */
#define TRACE_FILE_BUF_BYTES (1024u * 1024)

/**
 * trace_file_writer_init() - Start writing to @fd (borrowed; not closed).
 * @buf_bytes: buffer size, 0 for TRACE_FILE_BUF_BYTES.
 * Return: 0, -EINVAL, -ENOMEM.
 */
int trace_file_writer_init(struct trace_file_writer *w, int fd, size_t buf_bytes);
/** trace_file_write_packet() - Append one packet. Return: 0 or the sticky -errno. */
int trace_file_write_packet(struct trace_file_writer *w, const uint8_t *packet, size_t len);
/** trace_file_writer_flush() - Write what is buffered. Return: 0 or -errno. */
int trace_file_writer_flush(struct trace_file_writer *w);
/** trace_file_writer_fini() - Flush and free the buffer. Return: as flush. */
int trace_file_writer_fini(struct trace_file_writer *w);

#endif
