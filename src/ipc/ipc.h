/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipc.h - Perfetto's socket RPC: the frame codec ([u32 LE length][IPCFrame]),
 * the host (server side of ProducerPort/ConsumerPort/RelayPort, used by
 * traced) and the client (producers, consumers, the relay). Everything runs
 * on one evloop thread; messages are protobuf-c structs, which is fine
 * because IPC is not a hot path (trace data travels in shared memory).
 */
#ifndef PFC_IPC_IPC_H
#define PFC_IPC_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <protobuf-c/protobuf-c.h>

#include "base/buf.h"
#include "ipc/wire_protocol.pb-c.h"
#include "protozero/protozero.h"

struct evloop;

/* A whole frame, 4-byte header included, may not exceed this (Perfetto's
 * kIPCBufferSize). A larger declared length makes the receiver drop the peer. */
#define IPC_MAX_FRAME_BYTES (128u * 1024u)
#define IPC_FRAME_HEADER_BYTES 4u
/* Default bound on the bytes queued for one peer that does not read; over
 * it the host drops that client and the client refuses new calls. */
#define IPC_MAX_SEND_QUEUE_BYTES (8u * 1024u * 1024u)
/* Connections one host keeps at once; further ones are closed at accept. */
#define IPC_HOST_MAX_CLIENTS 1024u
/* Services one host can expose. */
#define IPC_HOST_MAX_SERVICES 16u
/* Descriptor fds queued for sending on one connection. */
#define IPC_MAX_QUEUED_FDS 32u

/* machine_id of local (AF_UNIX) peers and of peers without SetPeerIdentity. */
#define IPC_DEFAULT_MACHINE_ID 0u

/* ------------------------------------------------------------ frames ----- */

/**
 * ipc_frame_next() - Find one complete frame at the start of @buf.
 * @buf: received bytes (borrowed).  @len: valid bytes in @buf.
 * @out_payload: set to the IPCFrame bytes inside @buf (valid while @buf is).
 * @out_payload_len: their count (0 for an empty frame).
 *
 * Return: bytes the frame takes, header included (> 0); 0 if more input is
 * needed; -EMSGSIZE if the declared length makes the frame larger than
 * IPC_MAX_FRAME_BYTES (drop the peer). Out-params are set only when > 0.
 * Context: any thread; pure, never allocates.
 */
int ipc_frame_next(const uint8_t *buf, size_t len, const uint8_t **out_payload,
		   size_t *out_payload_len);

/**
 * ipc_frame_encode() - Append [u32 LE length][@frame] to @out.
 * @frame: the frame (borrowed).  @out: destination buffer.
 *
 * Return: bytes appended; -EMSGSIZE if the frame would exceed
 * IPC_MAX_FRAME_BYTES (nothing appended), -ENOMEM.
 * Context: any thread; allocates.
 */
int ipc_frame_encode(const Perfetto__Protos__IPCFrame *frame, struct buf *out);

/* Frees a frame returned by ipc_frame_reader_pop(); NULL is allowed. */
void ipc_frame_free(Perfetto__Protos__IPCFrame *frame);

/*
 * Incremental decoder: bytes go in with any split or coalescing, whole
 * frames come out. Its buffer never exceeds IPC_MAX_FRAME_BYTES: a complete
 * frame always fits, so the caller pops everything before receiving again.
 */
struct ipc_frame_reader {
	uint8_t *buf;
	size_t cap;
	size_t off; /* start of the first unconsumed byte */
	size_t len; /* end of the received bytes */
};

void ipc_frame_reader_init(struct ipc_frame_reader *r);
/* Frees the buffer; @r may be NULL. */
void ipc_frame_reader_fini(struct ipc_frame_reader *r);

/**
 * ipc_frame_reader_space() - Make room to receive into.
 * @r: the reader.  @out_ptr, @out_size: where up to @out_size bytes may be
 * written, then announced with ipc_frame_reader_commit().
 *
 * Return: 0; -ENOBUFS if the buffer is full (pop frames first); -ENOMEM.
 * Context: may allocate (the buffer grows on demand up to the frame limit).
 */
int ipc_frame_reader_space(struct ipc_frame_reader *r, uint8_t **out_ptr, size_t *out_size);

/* Announces @n bytes written at the pointer from ipc_frame_reader_space(). */
void ipc_frame_reader_commit(struct ipc_frame_reader *r, size_t n);

/**
 * ipc_frame_reader_feed() - Copy bytes in (tests, fuzzers, byte proxies).
 * @r: the reader.  @data, @len: the bytes (borrowed).
 *
 * Return: bytes taken, which is less than @len only when the buffer filled
 * up: pop frames, then feed the rest. -ENOMEM.
 */
int ipc_frame_reader_feed(struct ipc_frame_reader *r, const void *data, size_t len);

/**
 * ipc_frame_reader_pop() - Decode the next complete frame.
 * @r: the reader.  @out_frame: the frame; free it with ipc_frame_free().
 *
 * Empty frames (length 0) are skipped, as Perfetto does.
 * Return: 1 with a frame; 0 if more bytes are needed; -EMSGSIZE (declared
 * length over the limit) or -EBADMSG (not an IPCFrame): drop the peer.
 * Context: allocates the frame.
 */
int ipc_frame_reader_pop(struct ipc_frame_reader *r, Perfetto__Protos__IPCFrame **out_frame);

/**
 * ipc_frame_reader_pop_raw() - Like ipc_frame_reader_pop(), without decoding.
 * @out_payload: the IPCFrame bytes, a view into the reader valid until the
 * next call that adds bytes to it.  @out_len: their count.
 * Return: 1, 0 (need more bytes) or -EMSGSIZE.
 */
int ipc_frame_reader_pop_raw(struct ipc_frame_reader *r, const uint8_t **out_payload,
			     size_t *out_len);

/* -------------------------------------------------------------- host ----- */

struct ipc_host;

/*
 * A call, by value. Keep it as long as needed and reply any number of times
 * (has_more) through ipc_host_reply(); if the client went away meanwhile
 * the reply is dropped. Nothing in it points into the host.
 */
struct ipc_call {
	uint64_t client_id;
	uint64_t request_id;
	uint32_t service_id;
	uint32_t method_id; /* 1-based, declaration order */
	bool drop_reply;    /* the client wants no reply: replies are no-ops */
};

/*
 * Method handler. @args is decoded with the method's input descriptor and
 * borrowed for the duration of the call. Reply now or later. The fd sent with
 * the request, if any, is available through ipc_host_take_fd().
 */
typedef void (*ipc_method_cb)(struct ipc_host *host, const struct ipc_call *call,
			      const ProtobufCMessage *args, void *user);
/* A client connected to / disconnected from the host. */
typedef void (*ipc_client_event_cb)(struct ipc_host *host, uint64_t client_id, void *user);

/* What ipc_host_expose() needs to serve one service. */
struct ipc_service_def {
	const ProtobufCServiceDescriptor *desc; /* name and methods, in order */
	/* Handler per method index (0-based, declaration order); borrowed
	 * array, copied. NULL entries, or entries past n_handlers, are
	 * replied with success=false. */
	const ipc_method_cb *handlers;
	size_t n_handlers;
	/* Called for every client of the host, bound or not; may be NULL. */
	ipc_client_event_cb on_connect;
	ipc_client_event_cb on_disconnect;
	void *user;
};

struct ipc_host_options {
	/* Name reported for AF_UNIX peers; NULL: $PERFETTO_MACHINE_NAME,
	 * else uname's sysname (as Perfetto). */
	const char *machine_name;
	/* Per-client send queue bound; 0 means IPC_MAX_SEND_QUEUE_BYTES. */
	size_t max_send_queue_bytes;
	/* Report use_shmem_emulation even on an AF_UNIX socket. */
	bool force_shmem_emulation;
	/* Live connections kept at once; 0 means IPC_HOST_MAX_CLIENTS. */
	size_t max_clients;
};

struct ipc_client_info {
	uint64_t client_id;
	int family;               /* AF_UNIX, AF_INET, AF_INET6, AF_VSOCK */
	uid_t uid;                /* SO_PEERCRED, or SetPeerIdentity, or 0 */
	pid_t pid;                /* SO_PEERCRED, or SetPeerIdentity, or -1 */
	uint32_t machine_id;      /* 0 for local peers */
	const char *machine_name; /* borrowed; valid while the client exists */
	bool supports_fds;        /* AF_UNIX: fds and shared memory */
};

/**
 * ipc_host_create() - Listen on @sock_name and serve clients on @loop.
 * @loop: the event loop (borrowed; must outlive the host).
 * @sock_name: a socket name in Perfetto's grammar (see base/sock.h).
 * @opts: options, or NULL for defaults (borrowed).
 * @out: the host; free it with ipc_host_destroy().
 *
 * Return: 0; a sock_listen() error; -ENOMEM.
 * Context: loop thread; allocates.
 */
int ipc_host_create(struct evloop *loop, const char *sock_name, const struct ipc_host_options *opts,
		    struct ipc_host **out);

/**
 * ipc_host_create_from_fd() - Like ipc_host_create() on a socket that is
 * already listening (handed over by an init system or a parent).
 * @listen_fd: ownership moves to the host, also on failure (it is closed).
 *
 * Return: 0; -EINVAL (bad fd); -ENOMEM; -errno.
 */
int ipc_host_create_from_fd(struct evloop *loop, int listen_fd, const struct ipc_host_options *opts,
			    struct ipc_host **out);

/**
 * ipc_host_destroy() - Close every connection and the listening socket.
 * No callbacks run. NULL is allowed.
 * Context: loop thread, not from inside one of this host's callbacks.
 */
void ipc_host_destroy(struct ipc_host *host);

/**
 * ipc_host_expose() - Serve a service. Service ids are 1, 2... in expose order.
 * @host: the host.  @def: the service (borrowed; copied, but desc and user
 * are kept as pointers).  @out_service_id: its id; may be NULL.
 *
 * Return: 0; -EEXIST (same service name); -EINVAL (bad def); -ENOSPC
 * (IPC_HOST_MAX_SERVICES); -ENOMEM.
 */
int ipc_host_expose(struct ipc_host *host, const struct ipc_service_def *def,
		    uint32_t *out_service_id);

/**
 * ipc_host_reply() - Send one reply to @call.
 * @host: the host.  @call: from a handler (by value; may be old).
 * @reply: the reply message (borrowed), normally of the method's output
 *         type; NULL sends an empty reply_proto.
 * @has_more: true for every reply of a stream except the last.
 * @fd_to_send: an fd to pass with the reply (borrowed; the host sends a
 *         duplicate), or -1. Ignored on sockets that cannot carry fds.
 *
 * Return: 0 (sent or queued, or dropped because @call has drop_reply);
 * -ENOTCONN if the client is gone (nothing happens); -EMSGSIZE if the frame
 * would exceed IPC_MAX_FRAME_BYTES (nothing sent, the client stays);
 * -ENOBUFS if the client's send queue overflowed, or another -errno if the
 * socket failed: the client is dropped (its disconnect callbacks run later,
 * from the loop, never from inside this call).
 * Context: loop thread; allocates; never blocks.
 */
int ipc_host_reply(struct ipc_host *host, const struct ipc_call *call,
		   const ProtobufCMessage *reply, bool has_more, int fd_to_send);

/*
 * A reply whose message the caller encodes itself, straight into the
 * client's send queue with the protozero writer: no intermediate struct, no
 * extra copy (ReadBuffers moves all trace data this way). Between begin and
 * end the caller must not call any other function of this host.
 */
struct ipc_raw_reply {
	struct ipc_host *host;    /* private from here on */
	uint64_t client_id;
	size_t frame_off;
	struct pz_stream s;
	struct pz_msg frame;
	struct pz_msg reply;
	struct pz_msg proto;
	bool active;
};

/**
 * ipc_host_reply_begin() - Start a successful reply to @call.
 * @r: caller storage for the reply in progress.
 * @out_proto: where to append the fields of the method's reply message.
 *
 * Return: 0; -ENOTCONN (client gone); -ENOBUFS (its send queue has no room
 * for a whole frame: wait for it to drain); -ENOMEM; -EPERM for drop_reply
 * calls (nothing to send).
 * Context: loop thread; never blocks.
 */
int ipc_host_reply_begin(struct ipc_host *host, const struct ipc_call *call,
			 struct ipc_raw_reply *r, struct pz_msg **out_proto);

/* Bytes the reply message may still grow by before the frame is full. */
size_t ipc_raw_reply_room(const struct ipc_raw_reply *r);

/**
 * ipc_host_reply_end() - Finish and send the reply begun with ipc_host_reply_begin().
 * Return: as ipc_host_reply(); -EMSGSIZE if the message outgrew the frame
 * (nothing is sent, the client stays).
 */
int ipc_host_reply_end(struct ipc_raw_reply *r, bool has_more);

/** ipc_host_reply_abort() - Drop a reply begun with ipc_host_reply_begin(). */
void ipc_host_reply_abort(struct ipc_raw_reply *r);

/** ipc_host_reply_error() - A final success=false reply. Return: as ipc_host_reply(). */
int ipc_host_reply_error(struct ipc_host *host, const struct ipc_call *call);

/**
 * ipc_host_take_fd() - Take the last fd the client sent (SCM_RIGHTS). One
 * is kept per client; an older one is closed when a newer one arrives.
 *
 * Return: the fd (the caller owns it), or -ENOENT (none, or no such client).
 */
int ipc_host_take_fd(struct ipc_host *host, uint64_t client_id);

/**
 * ipc_host_client_info() - Who is at the other end of a connection.
 * @out: filled on success; machine_name points into the host.
 *
 * Return: 0 or -ENOENT. Works inside the client's disconnect callbacks too.
 */
int ipc_host_client_info(struct ipc_host *host, uint64_t client_id, struct ipc_client_info *out);

/**
 * ipc_host_drop_client() - Close a connection (a misbehaving peer). Replies
 * to it are dropped from now on; disconnect callbacks run later from the
 * loop, never from inside this call.
 *
 * Return: 0 or -ENOENT (unknown or already dropped).
 */
int ipc_host_drop_client(struct ipc_host *host, uint64_t client_id);

/** ipc_host_pending_bytes() - Bytes queued for a client (to pace streams); 0 if unknown. */
size_t ipc_host_pending_bytes(struct ipc_host *host, uint64_t client_id);

/** ipc_host_use_shmem_emulation() - True if the socket cannot pass fds (TCP, vsock). */
bool ipc_host_use_shmem_emulation(const struct ipc_host *host);

/** ipc_host_listen_fd() - The listening socket (borrowed), e.g. for sock_local_name(). */
int ipc_host_listen_fd(const struct ipc_host *host);

/** ipc_host_n_clients() - Live connections. */
size_t ipc_host_n_clients(const struct ipc_host *host);

/* ------------------------------------------------------------ client ----- */

struct ipc_client;
struct ipc_binding;

/* The connection is up (called once). */
typedef void (*ipc_connected_cb)(struct ipc_client *client, void *user);
/* The connection failed or ended (called once; @err is a -errno or 0 for
 * an orderly close). Every pending call has been failed before this. */
typedef void (*ipc_disconnected_cb)(struct ipc_client *client, int err, void *user);
/* BindService answered: @success false for an unknown service, or when the
 * connection ended first. */
typedef void (*ipc_bind_cb)(struct ipc_binding *binding, bool success, void *user);

struct ipc_client_callbacks {
	ipc_connected_cb on_connected;       /* may be NULL */
	ipc_disconnected_cb on_disconnected; /* may be NULL */
};

/* One reply; everything in it is borrowed for the callback, except fd. */
struct ipc_reply {
	bool success;
	bool has_more; /* more replies follow for this call */
	/* Decoded with @desc (the method's output type); NULL if !success. */
	const ProtobufCMessage *msg;
	const ProtobufCMessageDescriptor *desc;
	const uint8_t *data; /* the raw reply_proto bytes */
	size_t len;
	int fd; /* an fd that came with the reply, owned by the callback; or -1 */
};

/* Called once per reply; the last one has has_more false. A connection
 * that ends first produces a final success=false reply. */
typedef void (*ipc_reply_cb)(const struct ipc_reply *reply, void *user);

/**
 * ipc_client_connect() - Start connecting to a host without blocking.
 * @loop: the event loop (borrowed; must outlive the client).
 * @sock_name: a socket name in Perfetto's grammar.
 * @cbs: callbacks (copied); @user: passed to them.
 * @out: the client; free it with ipc_client_destroy().
 *
 * Binds and calls may be issued at once; they are sent when connected.
 * Return: 0; an immediate connect failure (-ENOENT, -ECONNREFUSED, a
 * sock_addr_parse() error...); -ENOMEM. Later failures arrive through
 * on_disconnected.
 * Context: loop thread; may block resolving a host name.
 */
int ipc_client_connect(struct evloop *loop, const char *sock_name,
		       const struct ipc_client_callbacks *cbs, void *user, struct ipc_client **out);

/**
 * ipc_client_destroy() - Close the connection and free everything, calling
 * no callbacks (pending calls are forgotten). NULL is allowed. May be called
 * from inside the client's own callbacks (the memory is freed afterwards).
 */
void ipc_client_destroy(struct ipc_client *client);

/**
 * ipc_client_send_peer_identity() - Queue a SetPeerIdentity frame
 * (request_id 0), as traced_relay does on its upstream connections.
 * @pid, @uid: the real peer's.  @machine_id_hint, @machine_name: strings
 * (borrowed; NULL for absent).
 *
 * Return: 0; -EBUSY if another frame was queued before (it must go first);
 * -ENOTCONN; -ENOMEM.
 */
int ipc_client_send_peer_identity(struct ipc_client *client, int32_t pid, int32_t uid,
				  const char *machine_id_hint, const char *machine_name);

/**
 * ipc_client_bind() - Bind a service by its name (@desc->short_name, e.g.
 * "ConsumerPort") and learn its method ids by name.
 * @client: the client.  @desc: the service (borrowed; static).
 * @cb, @user: told when the host answers.
 * @out_binding: the binding, owned by the client, valid until it is destroyed.
 *
 * Return: 0; -ENOTCONN; -EINVAL; -ENOBUFS; -ENOMEM.
 */
int ipc_client_bind(struct ipc_client *client, const ProtobufCServiceDescriptor *desc, ipc_bind_cb cb,
		    void *user, struct ipc_binding **out_binding);

/**
 * ipc_client_invoke() - Call a method of a bound service.
 * @client: the client.  @binding: a successful binding of @client.
 * @method: the method name, e.g. "EnableTracing".
 * @args: the request (borrowed), of the method's input type; NULL = empty.
 * @fd_to_send: an fd to pass along (borrowed; a duplicate is sent), or -1.
 * @cb, @user: called per reply; @cb may be NULL only with @drop_reply.
 * @drop_reply: ask the host not to answer.
 *
 * Request ids go 1, 2, 3... per connection.
 * Return: 0; -EOPNOTSUPP (the host did not list the method); -ENOENT (not a
 * method of the service); -EAGAIN (binding not answered yet); -ENOTCONN;
 * -EINVAL (wrong args type, bad binding, no cb); -EMSGSIZE; -ENOBUFS (send
 * queue full); -ENOMEM.
 */
int ipc_client_invoke(struct ipc_client *client, struct ipc_binding *binding, const char *method,
		      const ProtobufCMessage *args, int fd_to_send, ipc_reply_cb cb, void *user,
		      bool drop_reply);

/**
 * ipc_client_invoke_raw() - Like ipc_client_invoke(), but replies are not
 * decoded: the callback gets only the raw bytes (msg is NULL), for callers
 * that parse them with the zero-copy reader (ReadBuffers).
 */
int ipc_client_invoke_raw(struct ipc_client *client, struct ipc_binding *binding,
			  const char *method, const ProtobufCMessage *args, int fd_to_send,
			  ipc_reply_cb cb, void *user);

/** ipc_client_take_fd() - Take an fd received outside a reply. Return: fd or -ENOENT. */
int ipc_client_take_fd(struct ipc_client *client);

/** ipc_client_socket_fd() - The connection's socket (borrowed), or -1. For
 * a forked child that must close it without touching the client. */
int ipc_client_socket_fd(const struct ipc_client *client);

/** ipc_client_is_connected() - True between on_connected and on_disconnected. */
bool ipc_client_is_connected(const struct ipc_client *client);

/** ipc_client_supports_fds() - True once connected over AF_UNIX. */
bool ipc_client_supports_fds(const struct ipc_client *client);

/** ipc_binding_service_id() - The host's id for a bound service, 0 if not bound. */
uint32_t ipc_binding_service_id(const struct ipc_binding *binding);

/**
 * ipc_binding_method_id() - The host's id for @method, 0 if the host did not
 * list it (not supported) or the binding has not been answered.
 */
uint32_t ipc_binding_method_id(const struct ipc_binding *binding, const char *method);

#endif
