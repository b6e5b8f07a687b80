/* SPDX-License-Identifier: Apache-2.0 */
/*
 * relay_int.h - private to src/relay (and its unit test): the machine's
 * identity (relay_identity.c), the byte proxy of local producer
 * connections (relay_proxy.c) and the RelayPort
 * control connection (relay_client.c). relay_main.c wires them onto one
 * event loop; everything runs on that loop's thread.
 */
#ifndef PFC_RELAY_RELAY_INT_H
#define PFC_RELAY_RELAY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "base/buf.h"
#include "common/system_info.pb-c.h"
#include "ipc/ipc.h"
#include "ipc/relay_port.pb-c.h"

struct evloop;

/* Where Linux publishes the id of the current boot. */
#define RELAY_BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"
/* Longest machine id hint kept: a boot_id is 36 characters, the fallback at
 * most 16 hex digits. A longer boot_id file is not a boot id. */
#define RELAY_MACHINE_ID_HINT_MAX 128
/* Longest machine name ($PERFETTO_MACHINE_NAME), terminating NUL included. */
#define RELAY_MACHINE_NAME_MAX 256

/* Bytes buffered per direction of one proxied connection: one whole IPC
 * frame, like Perfetto's kIPCBufferSize ring per direction. A full buffer
 * stops reading from its source until the destination drains it. */
#define RELAY_PROXY_BUF_BYTES IPC_MAX_FRAME_BYTES
/* Local producer connections proxied at once; more are closed at accept. */
#define RELAY_MAX_CONNECTIONS 64
/* fds one recv() from a local producer may bring; they are all closed. */
#define RELAY_MAX_FDS_PER_RECV 4
/* Connections accepted per wakeup of the listening socket. */
#define RELAY_MAX_ACCEPTS_PER_WAKEUP 16
/* How long an upstream connection may take to be established. */
#define RELAY_CONNECT_TIMEOUT_MS 10000
/* How long a closing connection may take to flush its last bytes. */
#define RELAY_DRAIN_TIMEOUT_MS 5000
/* How long relay_listen() waits to learn whether a socket is served. */
#define RELAY_PROBE_TIMEOUT_MS 1000
#define RELAY_LISTEN_BACKLOG 64

/* Control connection retries: from 1 s, doubling, up to 30 s (Perfetto's). */
#define RELAY_RETRY_INITIAL_MS 1000u
#define RELAY_RETRY_MAX_MS 30000u
/* Pause between clock-sync rounds when the host does not say (Perfetto's
 * 30 s), and the range a host-given next_sync_delay_ms is clamped to. A
 * host may ask for shorter pauses (down to none: back-to-back rounds run
 * hot, with symmetric delays) for at most RELAY_SYNC_MAX_QUICK rounds in a
 * row, so no host can make the relay spin. */
#define RELAY_SYNC_DEFAULT_MS 30000u
#define RELAY_SYNC_MIN_MS 100u
#define RELAY_SYNC_MAX_MS 30000u
#define RELAY_SYNC_MAX_QUICK 8u

/* ---------------------------------------------------------- identity ---- */

/* What the relay tells the host about this machine. */
struct relay_identity {
	char machine_id_hint[RELAY_MACHINE_ID_HINT_MAX];
	char machine_name[RELAY_MACHINE_NAME_MAX];
};

/**
 * relay_identity_init() - Work out this machine's id hint and name.
 * @id: caller storage, written only on success.
 * @boot_id_path: the boot id file; NULL for RELAY_BOOT_ID_PATH (tests pass
 *                a crafted or missing file).
 *
 * Return: 0; -ENAMETOOLONG if $PERFETTO_MACHINE_NAME does not fit in
 * RELAY_MACHINE_NAME_MAX.
 * Context: any thread; blocks briefly on procfs.
 */
int relay_identity_init(struct relay_identity *id, const char *boot_id_path);

/**
 * relay_machine_id_hint() - The hint the host turns into this machine's id:
 * the boot id file without its trailing newline, else the hex digest of
 * relay_boot_hash() over statx("/dev") birth time and uname(), else "".
 * @boot_id_path: as in relay_identity_init().
 * @out, @size: destination (RELAY_MACHINE_ID_HINT_MAX fits).
 *
 * Return: 0; -ENAMETOOLONG if @size is too small.
 * Context: any thread; blocks briefly on procfs.
 */
int relay_machine_id_hint(const char *boot_id_path, char *out, size_t size);

/**
 * relay_boot_hash() - Perfetto's pseudo boot id: FNV-1a 64 over the raw
 * bytes of @btime, then the raw bytes of @u (whole struct, padding
 * included, so callers zero both before filling them).
 *
 * Return: the digest.
 * Context: any thread; pure.
 */
uint64_t relay_boot_hash(const struct statx_timestamp *btime, const struct utsname *u);

/**
 * relay_pseudo_boot_id() - relay_boot_hash() as Perfetto writes it: lower
 * case hex, no prefix, no leading zeros.
 * @btime, @u: the sources (borrowed).  @out, @size: destination.
 *
 * Return: 0; -ENAMETOOLONG if @size is under 17.
 * Context: any thread; pure.
 */
int relay_pseudo_boot_id(const struct statx_timestamp *btime, const struct utsname *u, char *out,
			 size_t size);

/**
 * relay_machine_name() - $PERFETTO_MACHINE_NAME when set (even empty, as
 * Perfetto's GetPerfettoMachineName), else uname's sysname ("" if uname
 * fails).
 * @out, @size: destination.
 *
 * Return: 0; -ENAMETOOLONG if the name does not fit in @size.
 */
int relay_machine_name(char *out, size_t size);

/**
 * relay_peer_identity_frame() - Append the frame a relayed connection
 * starts with: [u32 LE length][IPCFrame{request_id: 0, set_peer_identity:
 * {pid, uid, machine_id_hint, machine_name}}].
 * @pid, @uid: the local producer's (SO_PEERCRED), -1 when unknown.
 * @id: this machine (borrowed).  @out: destination buffer.
 *
 * Return: bytes appended; -EMSGSIZE; -ENOMEM.
 * Context: any thread; allocates.
 */
int relay_peer_identity_frame(int32_t pid, int32_t uid, const struct relay_identity *id,
			      struct buf *out);

/* A SystemInfo for InitRelay; the message points into this struct. */
struct relay_system_info {
	Perfetto__Protos__SystemInfo si;
	Perfetto__Protos__Utsname un;
	struct utsname u;
};

/**
 * relay_system_info_init() - Describe this machine as Perfetto's relay
 * does: tracing_service_version, timezone_off_mins, utsname, page_size,
 * num_cpus, system_ram_bytes, and (our addition) machine_name.
 * @s: caller storage.  @machine_name: borrowed; must outlive @s.
 * Fields the system does not report are left unset.
 * Context: any thread.
 */
void relay_system_info_init(struct relay_system_info *s, const char *machine_name);

/* ------------------------------------------------------------- proxy ---- */

struct relay_proxy;

struct relay_proxy_options {
	const char *remote_name;               /* PERFETTO_RELAY_SOCK_NAME (borrowed) */
	const struct relay_identity *identity; /* borrowed; outlives the proxy */
	size_t max_connections;                /* 0 = RELAY_MAX_CONNECTIONS */
};

struct relay_proxy_stats {
	size_t n_connections;      /* live pairs, connecting ones included */
	size_t buffered_bytes;     /* bytes waiting in every pair's buffers */
	uint64_t n_accepted;
	uint64_t n_rejected;       /* closed at accept: over max_connections */
	uint64_t n_upstream_failed; /* the host could not be reached */
	/* fds sent by local producers and closed (those past
	 * RELAY_MAX_FDS_PER_RECV in one message are closed uncounted) */
	uint64_t n_fds_dropped;
};

/**
 * relay_listen() - Listen on the local producer socket, unless another
 * process (a traced) already serves it. A stale socket file is replaced.
 * @name: the socket name.  @out_fd: the listening fd (non-blocking,
 * close-on-exec); the caller closes it or hands it to relay_proxy_create().
 *
 * Return: 0; -EBUSY if something accepts connections on @name; a
 * sock_listen() error otherwise.
 * Context: blocks up to RELAY_PROBE_TIMEOUT_MS.
 */
int relay_listen(const char *name, int *out_fd);

/**
 * relay_proxy_create() - Proxy every connection accepted on @listen_fd to
 * a new connection to @o->remote_name, after a forged SetPeerIdentity.
 * @loop: borrowed; outlives the proxy.  @listen_fd: ownership moves to the
 * proxy, also on failure.  @o: copied (its pointers are borrowed).
 * @out: the proxy; free it with relay_proxy_destroy().
 *
 * Return: 0; -EINVAL; -ENOMEM; an evloop error.
 * Context: loop thread; allocates.
 */
int relay_proxy_create(struct evloop *loop, int listen_fd, const struct relay_proxy_options *o,
		       struct relay_proxy **out);

/** relay_proxy_destroy() - Close every connection and the listener; NULL is allowed. */
void relay_proxy_destroy(struct relay_proxy *p);

/** relay_proxy_get_stats() - Counters and the current buffer use. */
void relay_proxy_get_stats(const struct relay_proxy *p, struct relay_proxy_stats *out);

/* ------------------------------------------------------------ client ---- */

struct relay_client;

enum relay_client_state {
	RELAY_CLIENT_WAITING,    /* for the next connection attempt */
	RELAY_CLIENT_CONNECTING, /* connecting, sending SetPeerIdentity, binding */
	RELAY_CLIENT_PING,       /* a PING is in flight */
	RELAY_CLIENT_UPDATE,     /* an UPDATE is in flight */
	RELAY_CLIENT_IDLE,       /* between rounds */
};

struct relay_client_options {
	const char *remote_name;               /* borrowed */
	const struct relay_identity *identity; /* borrowed; outlives the client */
	/* Retry backoff; 0 = RELAY_RETRY_INITIAL_MS / RELAY_RETRY_MAX_MS. */
	uint32_t retry_initial_ms;
	uint32_t retry_max_ms;
};

struct relay_client_stats {
	enum relay_client_state state;
	uint64_t n_attempts;     /* connections started */
	uint64_t n_bound;        /* connections that bound RelayPort */
	uint64_t n_bind_refused; /* hosts that do not serve RelayPort */
	uint64_t n_rounds;       /* PING + UPDATE rounds completed */
	uint32_t retry_delay_ms; /* what the next failure will wait */
	uint32_t sync_delay_ms;  /* the pause after the last round */
};

/**
 * relay_retry_next_ms() - The backoff step: @cur_ms doubled, at most @max_ms.
 * Context: pure.
 */
uint32_t relay_retry_next_ms(uint32_t cur_ms, uint32_t max_ms);

/**
 * relay_sync_delay_ms() - The pause after a completed round: the host's
 * next_sync_delay_ms, at most RELAY_SYNC_MAX_MS; below RELAY_SYNC_MIN_MS
 * only for RELAY_SYNC_MAX_QUICK rounds in a row (then RELAY_SYNC_MIN_MS);
 * RELAY_SYNC_DEFAULT_MS when @resp is NULL or does not carry it.
 * @quick_rounds: the run of short pauses so far, updated (caller storage,
 * 0 at the start).
 * Context: pure but for *@quick_rounds.
 */
uint32_t relay_sync_delay_ms(const Perfetto__Protos__SyncClockResponse *resp,
			     uint32_t *quick_rounds);

/**
 * relay_client_create() - Start the control connection: connect, send
 * SetPeerIdentity (own pid/euid), bind RelayPort, InitRelay, then clock
 * sync rounds; reconnect with backoff whenever any of it fails.
 * @loop: borrowed; outlives the client.  @o: copied (pointers borrowed).
 * @out: the client; free it with relay_client_destroy().
 *
 * Return: 0; -EINVAL; -ENOMEM. Connection failures are retried, not returned.
 * Context: loop thread; allocates.
 */
int relay_client_create(struct evloop *loop, const struct relay_client_options *o,
			struct relay_client **out);

/** relay_client_destroy() - Close the connection, cancel timers; NULL is allowed. */
void relay_client_destroy(struct relay_client *c);

/** relay_client_get_stats() - State and counters. */
void relay_client_get_stats(const struct relay_client *c, struct relay_client_stats *out);

#endif
