/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_int.h - the tracing service's state, shared by the files of
 * src/traced: producers and their data sources, sessions with their buffers
 * and data source instances, consumers. Everything runs on the service's
 * one event loop; objects are found by id, never kept as pointers across
 * callbacks that may free them.
 */
#ifndef PFC_TRACED_SVC_INT_H
#define PFC_TRACED_SVC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/evloop.h"
#include "base/hmap.h"
#include "config/trace_config.pb-c.h"
#include "ipc/ipc.h"
#include "traced/trace_buffer.h"
#include "traced/traced.h"
#include "tracing/tracing.h"

/* Limits (Perfetto's values where it has one). */
#define SVC_MAX_SESSIONS 15
#define SVC_MAX_SESSIONS_PER_UID 5
#define SVC_MAX_BUFFERS_PER_SESSION 128
#define SVC_MAX_PRODUCERS 1024
#define SVC_MAX_DATA_SOURCES_PER_PRODUCER 256
#define SVC_MAX_DS_INSTANCES_PER_SESSION 1024
#define SVC_MAX_TRACE_WRITERS_PER_PRODUCER 4096
#define SVC_MAX_TOTAL_BUFFER_KB (4u * 1024 * 1024)
#define SVC_MAX_DURATION_MS (7u * 24 * 3600 * 1000)
#define SVC_DEFAULT_SMB_BYTES (256u * 1024)
#define SVC_DEFAULT_PAGE_BYTES 4096u
#define SVC_MAX_PAGE_BYTES 32768u
#define SVC_DEFAULT_FLUSH_TIMEOUT_MS 5000u
#define SVC_DEFAULT_STOP_TIMEOUT_MS 5000u
#define SVC_DEFAULT_SNAPSHOT_INTERVAL_MS 10000u
#define SVC_DEFAULT_FILE_WRITE_PERIOD_MS 5000u
#define SVC_MIN_FILE_WRITE_PERIOD_MS 100u
#define SVC_START_TIMEOUT_MS 20000u
/* A ReadBuffers reply carries at most this much packet data. */
/* Reply bytes sent per loop turn, and the queue level at which a read waits. */
#define SVC_READ_STEP_BYTES (2u << 20)
#define SVC_READ_MAX_QUEUED_BYTES (4u << 20)
#define SVC_READ_RETRY_MS 1
/* Bytes written per file-write pass before yielding to the loop. */
#define SVC_MAX_DETACH_KEY 128
#define SVC_MAX_PENDING_FLUSHES 64
#define SVC_MAX_TRIGGERS_PER_SESSION 64
/* Triggers remembered for max_per_24_h (Perfetto keeps every one of the
 * last 24 h; past this many the oldest are forgotten early). */
#define SVC_MAX_TRIGGER_HISTORY 4096
/* CLONE_SNAPSHOT triggers waiting out their stop_delay_ms, per session. */
#define SVC_MAX_PENDING_CLONE_TRIGGERS 16
/* Clock snapshots kept between reads (Perfetto's ring size), and the drift
 * between BOOTTIME and another clock that justifies a new one. */
#define SVC_CLOCK_RING 16
#define SVC_CLOCK_DRIFT_NS (10u * 1000 * 1000)

/* RelayPort (traced_relay on other machines). */
#define SVC_MAX_RELAYS 256
#define SVC_MAX_SYSTEM_INFO_BYTES (16u * 1024)
/* Clock readings kept per SyncClock exchange (a relay sends six). */
#define SVC_MAX_SYNC_CLOCKS 16
/*
 * What our traced asks relays for between clock-sync rounds (Perfetto's
 * relay waits 30 s). Each round becomes its own RemoteClockSync packet, so
 * a shorter interval only tracks drift better: 5 s costs ~350 bytes a round
 * per machine, about 6 MB a day.
 */
#define SVC_RELAY_SYNC_DELAY_MS 5000u
/*
 * A round's offset estimate is off by about the asymmetry of its delays,
 * which scheduling noise makes vary from round to round, and which is
 * largest when the PING wakes two idle processes while the UPDATE finds
 * them running: every 5 s our relay runs a burst of back-to-back rounds
 * (no pause: every exchange runs hot) and only the one with the shortest
 * round trip goes into traces, as NTP filters its samples. A relay's very first round
 * goes in at once (a trace needs some sync), cold as it is. Relays that do
 * not honour next_sync_delay_ms (Perfetto's: 30 s) get every round in.
 */
#define SVC_RELAY_BURST_ROUNDS 4u
#define SVC_RELAY_BURST_DELAY_MS 0u
/* A PING this soon after the last UPDATE shows the relay keeps our pace. */
#define SVC_RELAY_PACED_NS (1000ull * 1000 * 1000)
/* Completed rounds a relay keeps for new sessions and clones. */
#define SVC_RELAY_HISTORY 32u
/* Rounds a session holds until its next read; past this the older half is
 * thinned (every other round dropped), so a long ring-buffer session keeps
 * rounds across its whole span at a coarser step. */
#define SVC_MAX_PENDING_ROUNDS 4096u

/* ObservableEvents.DataSourceInstanceState values. */
#define SVC_DS_OBSERVED_STOPPED 1
#define SVC_DS_OBSERVED_STARTED 2

enum ds_state {
	DS_CONFIGURED, /* SetupDataSource sent */
	DS_STARTING,   /* StartDataSource sent, waiting for NotifyDataSourceStarted */
	DS_STARTED,
	DS_STOPPING,   /* StopDataSource sent, waiting for NotifyDataSourceStopped */
	DS_STOPPED,
};

enum session_state {
	SESSION_CONFIGURED, /* set up; waiting for StartTracing or a START trigger */
	SESSION_STARTED,
	SESSION_STOPPING,   /* final flush and data source stop in progress */
	SESSION_STOPPED,    /* buffers readable until freed */
};

struct svc;

struct svc_data_source {
	struct svc_data_source *next;
	char *name;
	uint64_t id;                 /* DataSourceDescriptor.id, if the producer set one */
	bool will_notify_on_start;
	bool will_notify_on_stop;
	bool handles_incremental_state_clear;
	uint8_t *descriptor;         /* the DataSourceDescriptor bytes, for --query */
	size_t descriptor_len;
};

struct svc_producer {
	struct svc_producer *next;
	uint32_t id;
	struct ipc_host *host;
	uint64_t client_id;
	char *name;
	char *sdk_version;
	uid_t uid;
	pid_t pid;
	uint32_t machine_id;
	char *machine_name;
	bool initialized;             /* InitializeConnection seen */
	bool emulation;               /* chunks arrive inline in CommitData */
	uint32_t smb_size_hint;
	uint32_t page_size_hint;
	struct shm *smb;              /* service-side mapping of the producer's SMB */
	struct smb smb_view;
	size_t page_size;
	bool has_async_stream;
	struct ipc_call async_call;   /* GetAsyncCommand stream */
	bool setup_sent;              /* SetupTracing sent on this connection */
	bool smb_provided_by_producer; /* adopted at InitializeConnection */
	bool smb_scraping;            /* asked for SMB_SCRAPING_ENABLED (svc_scrape.c) */
	struct svc_data_source *data_sources;
	size_t n_data_sources;
	struct hmap writer_buffers;   /* writer_id -> target buffer (RegisterTraceWriter) */
};

struct svc_ds_instance {
	uint64_t instance_id;
	uint32_t producer_id;
	char *ds_name;
	enum ds_state state;
	bool will_notify_on_start;
	bool will_notify_on_stop;
	bool handles_incremental_state_clear;
	uint8_t *config;              /* DataSourceConfig bytes sent to the producer */
	size_t config_len;
};

/* One clock reading of a clock-sync exchange. */
struct svc_clock_reading {
	uint32_t clock_id;
	uint64_t ts_ns;
};

/* One SyncClock call: the relay's readings and the host's, taken on arrival. */
struct svc_sync_exchange {
	uint32_t n_client, n_host;
	struct svc_clock_reading client[SVC_MAX_SYNC_CLOCKS];
	struct svc_clock_reading host[CLOCK_SNAPSHOT_CLOCKS];
};

/* A completed clock-sync round of one machine: PING, then UPDATE. */
struct svc_sync_round {
	uint32_t machine_id;
	struct svc_sync_exchange ping, update;
};

/* A RelayPort client: one traced_relay, i.e. one remote machine. */
struct svc_relay {
	struct svc_relay *next;
	struct ipc_host *host;
	uint64_t client_id;
	uint32_t machine_id;
	char *machine_name;
	uint8_t *system_info; /* SystemInfo bytes from InitRelay; NULL = none yet */
	size_t system_info_len;
	bool has_ping;        /* a PING waits for its UPDATE */
	struct svc_sync_exchange ping;
	/* The burst in progress (see SVC_RELAY_BURST_ROUNDS). */
	bool keeps_pace;
	uint32_t burst_n;
	uint64_t burst_best_rtt_ns;
	struct svc_sync_round burst_best;
	uint64_t last_update_ns; /* host BOOTTIME of the last UPDATE */
	/* The published rounds, oldest first (a clone gets them all). */
	struct svc_sync_round history[SVC_RELAY_HISTORY];
	size_t n_history;
	uint64_t n_rounds;
};

/* A trigger as Perfetto's TriggerInfo: what a clone_trigger_hit event and a
 * clone_snapshot_trigger packet say. */
struct svc_trigger_info {
	char *name;
	char *producer_name;
	uint32_t producer_uid;
	uint64_t boot_time_ns;
	uint64_t delay_ms;
};

/* A CLONE_SNAPSHOT trigger whose consumer is told after stop_delay_ms. */
struct svc_pending_clone_trigger {
	uint64_t timer_id;
	struct svc_trigger_info info;
};

struct svc_buffer {
	uint32_t global_id;           /* what producers use as target_buffer */
	struct trace_buffer *tb;
};

struct svc_flush {
	uint64_t request_id;
	uint64_t session_id;
	uint32_t *pending_producers;  /* producers that still owe an ack */
	size_t n_pending;
	uint64_t timer_id;
	void *timer_ctx;
	/* What to do when done. */
	void (*done)(struct svc *svc, uint64_t session_id, bool success, void *user);
	void *user;
	bool in_use;
};

struct svc_session {
	struct svc_session *next;
	struct svc *svc;
	uint64_t id;
	enum session_state state;
	uid_t consumer_uid;
	/* The consumer that owns it (0 = detached). */
	struct ipc_host *consumer_host;
	uint64_t consumer_client_id;
	bool has_enable_call;
	struct ipc_call enable_call;  /* answered when tracing ends */
	char detach_key[SVC_MAX_DETACH_KEY];
	bool detached;

	Perfetto__Protos__TraceConfig *config;
	uint8_t *config_bytes;
	size_t config_len;
	char *unique_name;

	struct svc_buffer *buffers;
	size_t n_buffers;
	struct svc_ds_instance *instances;
	size_t n_instances;

	uint64_t uuid_msb, uuid_lsb;
	uint64_t start_realtime_ns;
	bool did_emit_initial_packets;
	bool did_notify_all_started;
	bool is_clone;               /* read-only snapshot made by CloneSession */
	bool discard_data;           /* STOP trigger never came: return no buffer data */
	void *timer_ctx;             /* what the session's timers get (id, not pointer) */

	/* Timers (evloop watch ids; 0 = none). */
	uint64_t duration_timer;
	uint64_t flush_timer;
	uint64_t clear_timer;        /* incremental_state_config.clear_period_ms */
	uint64_t snapshot_timer;
	uint64_t file_timer;
	uint64_t trigger_timer;
	uint64_t stop_timer;
	uint64_t start_timer;
	uint64_t read_timer;

	/* A ReadBuffers stream paced to the consumer's socket. */
	bool read_pending;
	struct ipc_call read_call;

	/* Triggers. */
	bool trigger_fired;
	char *fired_triggers[SVC_MAX_TRIGGERS_PER_SESSION];
	char *fired_trigger_producers[SVC_MAX_TRIGGERS_PER_SESSION];
	uint32_t fired_trigger_uids[SVC_MAX_TRIGGERS_PER_SESSION];
	uint64_t fired_trigger_ts[SVC_MAX_TRIGGERS_PER_SESSION]; /* BOOTTIME ns */
	size_t n_fired_triggers;
	size_t n_fired_triggers_emitted;
	/* CLONE_SNAPSHOT: notifications waiting out their delay (timer ctx
	 * points into this array; cancelled and freed with the session). */
	struct svc_pending_clone_trigger pending_clones[SVC_MAX_PENDING_CLONE_TRIGGERS];
	void *pending_clone_ctx[SVC_MAX_PENDING_CLONE_TRIGGERS];
	/* A clone made for a CLONE_SNAPSHOT trigger (clone_snapshot_trigger packet). */
	bool has_clone_trigger;
	bool did_emit_clone_trigger;
	struct svc_trigger_info clone_trigger;

	/* write_into_file. */
	int file_fd;
	uint64_t bytes_written_into_file;
	uint64_t max_file_size_bytes;
	bool file_full;                /* max_file_size_bytes reached */

	/* Packets the service wants emitted on the next read (stats, events). */
	struct buf pending_service_packets; /* already framed as Trace.packet */

	/* Clock snapshots, emitted in the order taken: the one taken at start
	 * (emitted once), then those taken since the last read. */
	bool has_initial_clocks;
	struct clock_snapshot initial_clocks;
	struct clock_snapshot clock_ring[SVC_CLOCK_RING];
	size_t n_clock_ring;
	bool did_emit_clocks;

	/* Remote machines: clock-sync rounds to emit on the next read, and the
	 * machines whose SystemInfo this session has emitted. */
	struct svc_sync_round *rounds;
	size_t n_rounds, cap_rounds;
	uint64_t rounds_thinned;
	uint32_t *sysinfo_machines;
	size_t n_sysinfo_machines, cap_sysinfo_machines;

	/* Packets that failed validation, for TraceStats. */
	uint64_t invalid_packets;
	uint64_t flushes_requested;
	uint64_t flushes_succeeded;
	uint64_t flushes_failed;
	uint64_t flush_warn_ms;       /* when svc_flush.c last logged a timeout */
	uint64_t flush_timeouts_quiet; /* timeouts since then, not logged */
	uint64_t chunks_scraped;      /* copied by svc_scrape.c, not committed */
};

struct svc_observer {
	struct ipc_host *host;
	uint64_t client_id;
	struct ipc_call call;
	bool instances;
	bool all_started;
	bool clone_trigger_hit;
};

/* One matched trigger, for max_per_24_h. */
struct svc_trigger_history {
	uint64_t boot_time_ns;
	uint64_t name_hash;
};

struct svc {
	struct evloop *loop;
	struct svc_options opts;
	struct ipc_host *producer_hosts[SVC_MAX_PRODUCER_SOCKETS];
	size_t n_producer_hosts;
	struct ipc_host *consumer_host;
	char machine_name[64];

	struct svc_producer *producers;
	size_t n_producers;
	uint32_t next_producer_id;
	struct svc_session *sessions;
	size_t n_sessions;
	uint64_t next_session_id;
	uint64_t next_instance_id;
	uint32_t next_buffer_id;
	uint64_t next_flush_id;
	struct hmap buffers_by_id;      /* global buffer id -> session id */
	struct hmap sequence_ids;       /* (machine, producer, writer) -> sequence id */
	uint32_t next_sequence_id;
	struct svc_flush flushes[SVC_MAX_PENDING_FLUSHES];
	struct svc_observer observers[16];
	size_t n_observers;
	struct svc_relay *relays;
	size_t n_relays;
	/* Matched triggers of the last 24 h, oldest first. */
	struct svc_trigger_history *trigger_history;
	size_t n_trigger_history;

	/* TraceStats counters across the service's life. */
	uint64_t producers_seen;
	uint64_t data_sources_seen;
	uint64_t chunks_discarded;
	uint64_t patches_discarded;

	/* Scratch for validating packets that span several slices. */
	struct buf scratch;
};

/* svc_core.c */
struct svc_producer *svc_producer_by_id(struct svc *svc, uint32_t id);
struct svc_producer *svc_producer_by_client(struct svc *svc, struct ipc_host *host,
					    uint64_t client_id);
struct svc_session *svc_session_by_id(struct svc *svc, uint64_t id);
struct svc_session *svc_session_by_consumer(struct svc *svc, struct ipc_host *host,
					    uint64_t client_id);
struct svc_buffer *svc_buffer_by_global_id(struct svc *svc, uint32_t global_id,
					   struct svc_session **out_session);
void svc_producer_destroy(struct svc *svc, struct svc_producer *p);
/* Replies to @call with an empty message of type @desc. */
void svc_reply_empty(struct ipc_host *host, const struct ipc_call *call,
		     const ProtobufCMessageDescriptor *desc);
/* Sends one GetAsyncCommand reply (a command) to a producer. */
int svc_send_async(struct svc *svc, struct svc_producer *p, const ProtobufCMessage *cmd, int fd);
uint32_t svc_sequence_id(struct svc *svc, uint32_t machine_id, uint32_t producer_id,
			 uint16_t writer_id);
void svc_notify_observers_instance(struct svc *svc, const char *producer_name,
				   const char *ds_name, int state);
void svc_notify_observers_all_started(struct svc *svc);
/* Tells the consumer owning @s (if it observes TYPE_CLONE_TRIGGER_HIT). */
void svc_notify_clone_trigger(struct svc *svc, const struct svc_session *s,
			      const struct svc_trigger_info *t);

/* What session timers get: the id, never a pointer (the session may be gone). */
struct svc_timer_ctx {
	struct svc *svc;
	uint64_t session_id;
};

/* svc_session.c */
/* The session's timer context, allocated on first use; NULL if out of memory. */
struct svc_timer_ctx *svc_session_timer_ctx(struct svc *svc, struct svc_session *s);
/* A zeroed session with a fresh id, owned by the consumer @client_id of @host
 * (not yet linked into @svc); NULL if out of memory. */
struct svc_session *svc_session_new(struct svc *svc, struct ipc_host *host, uint64_t client_id,
				    uid_t uid, enum session_state state);
int svc_session_enable(struct svc *svc, struct ipc_host *host, uint64_t client_id, uid_t uid,
		       const Perfetto__Protos__TraceConfig *cfg, int out_fd,
		       const struct ipc_call *call, char *err, size_t err_size);
int svc_session_start(struct svc *svc, struct svc_session *s);
/* Flush, stop data sources, then notify the consumer. */
void svc_session_disable(struct svc *svc, struct svc_session *s);
void svc_session_free(struct svc *svc, struct svc_session *s);
void svc_session_on_producer_gone(struct svc *svc, uint32_t producer_id);
/* A producer with data sources just registered one: maybe join running sessions. */
void svc_session_on_ds_registered(struct svc *svc, struct svc_producer *p,
				  struct svc_data_source *ds);
void svc_session_on_ds_started(struct svc *svc, uint32_t producer_id, uint64_t instance_id);
void svc_session_on_ds_stopped(struct svc *svc, uint32_t producer_id, uint64_t instance_id);
/* A one-shot or periodic timer whose callback gets the session's timer ctx. */
uint64_t svc_session_add_timer(struct svc *svc, struct svc_session *s, uint64_t first_ms,
			       uint64_t period_ms, evloop_task_cb cb);
/* The STOP_TRACING / START_TRACING stop delay elapsed. */
void svc_session_on_stop_delay(void *timer_ctx);

/* svc_triggers.c */
void svc_session_on_triggers(struct svc *svc, struct svc_producer *p, char **names, size_t n);
/* Cancels and frees the session's pending CLONE_SNAPSHOT notifications. */
void svc_triggers_session_gone(struct svc *svc, struct svc_session *s);
void svc_trigger_info_fini(struct svc_trigger_info *t);
/* True for a session whose own reads return nothing (CLONE_SNAPSHOT: only
 * its clones are read, as in Perfetto). */
bool svc_session_reads_nothing(const struct svc_session *s);
/*
 * svc_flush_start() - Ask every producer of @s to commit its data.
 * @done: called once, when all acked (success) or at the timeout.
 */
int svc_flush_start(struct svc *svc, struct svc_session *s, uint32_t timeout_ms, uint64_t flags,
		    void (*done)(struct svc *, uint64_t, bool, void *), void *user);
void svc_flush_on_ack(struct svc *svc, uint32_t producer_id, uint64_t request_id);
/* svc_clear_incremental_state() - ClearIncrementalState to every producer
 * of @s, naming its live instances (incremental_state_config). */
void svc_clear_incremental_state(struct svc *svc, const struct svc_session *s);
void svc_flush_on_producer_gone(struct svc *svc, uint32_t producer_id);
void svc_flush_on_session_gone(struct svc *svc, uint64_t session_id);
/* @trigger: the CLONE_SNAPSHOT trigger this clone is for, or NULL (copied). */
int svc_session_clone(struct svc *svc, struct svc_session *src, struct ipc_host *host,
		      uint64_t client_id, uid_t uid, const struct svc_trigger_info *trigger,
		      struct svc_session **out);

/* svc_instances.c */
bool svc_regex_full_match(const char *pattern, const char *s);
bool svc_producer_matches(const struct svc_session *s,
			  const Perfetto__Protos__TraceConfig__DataSource *cds,
			  const struct svc_producer *p);
int svc_target_buffer_index(const struct svc_session *s,
			    const Perfetto__Protos__DataSourceConfig *c);
int svc_instance_create(struct svc *svc, struct svc_session *s, struct svc_producer *p,
			const struct svc_data_source *ds,
			const Perfetto__Protos__TraceConfig__DataSource *cds);
int svc_instances_create_all(struct svc *svc, struct svc_session *s);
int svc_instance_start(struct svc *svc, struct svc_session *s, struct svc_ds_instance *inst);
void svc_instance_stop(struct svc *svc, struct svc_ds_instance *inst);
void svc_instance_free(struct svc_ds_instance *inst);

/* svc_commit.c */
void svc_commit_data(struct svc *svc, struct svc_producer *p,
		     const Perfetto__Protos__CommitDataRequest *req);

/* svc_scrape.c: copy uncommitted chunks out of producers' SMBs. */
/* Scrapes @p's SMB into the buffers of @s. Return: chunks copied. */
size_t svc_scrape_producer(struct svc *svc, struct svc_session *s, struct svc_producer *p);
/* Scrapes every producer into @s (a flush ended, or @s is stopping). */
void svc_scrape_session(struct svc *svc, struct svc_session *s);
/* Scrapes @p into every session it writes to (before it goes away). */
void svc_scrape_on_producer_gone(struct svc *svc, struct svc_producer *p);

/* svc_gc.c: drops sequence ids of gone producers when no session is left. */
void svc_gc_sequence_ids(struct svc *svc);

/* svc_read.c */
/* Streams the session's data to a consumer as ReadBuffers replies. */
void svc_read_to_consumer(struct svc *svc, struct svc_session *s, const struct ipc_call *call);
/* Appends the session's data to its write_into_file fd. Return: 0 or -errno. */
int svc_read_to_file(struct svc *svc, struct svc_session *s, bool is_final);
/* Queues service packets (clock snapshot, stats...) for the next read. */
void svc_queue_trace_stats(struct svc *svc, struct svc_session *s);
void svc_queue_service_event(struct svc *svc, struct svc_session *s, uint32_t field);
/* Writes TraceStats for @s (or service-wide with @s NULL) into @msg. */
void svc_write_trace_stats(struct svc *svc, struct svc_session *s, struct pz_msg *msg);

/* svc_clocks.c */
/* Takes the session's first clock snapshot (at start). */
void svc_clocks_snapshot_initial(struct svc_session *s);
/* Adds a snapshot to the ring if none is there yet or the clocks drifted. */
void svc_clocks_maybe_snapshot(struct svc_session *s);
/* Queues @r on @s for its next read (thinning old rounds past the limit). */
void svc_session_push_round(struct svc_session *s, const struct svc_sync_round *r);

/* svc_relay_port.c */
int svc_relay_port_expose(struct svc *svc, struct ipc_host *host);
/* Gives a new session every connected relay's latest clock-sync round. */
void svc_relays_on_session_start(struct svc *svc, struct svc_session *s);
/* Gives a clone every round the relays still keep (its data may be older). */
void svc_relays_on_clone(struct svc *svc, struct svc_session *clone);
void svc_relays_destroy(struct svc *svc);

/* svc_producer_port.c / svc_consumer_port.c */
int svc_producer_port_expose(struct svc *svc, struct ipc_host *host);
int svc_consumer_port_expose(struct svc *svc, struct ipc_host *host);
void svc_consumer_notify_disabled(struct svc *svc, struct svc_session *s, const char *error);

/* svc_query.c: ConsumerPort.QueryServiceState (an ipc_method_cb; user = svc). */
void svc_query_service_state(struct ipc_host *host, const struct ipc_call *call,
			     const ProtobufCMessage *args, void *user);

#endif
