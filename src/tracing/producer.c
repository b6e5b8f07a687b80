// SPDX-License-Identifier: Apache-2.0
/*
 * producer.c - the ProducerPort client: handshake, data source registration,
 * the GetAsyncCommand stream (SetupTracing maps the SMB or creates the
 * emulation buffer, then setup/start/stop/flush go to the embedder), and the
 * outbound queue that carries requests made on writer threads (CommitData,
 * RegisterTraceWriter, notifications) to the loop thread, in order.
 */
#include "tracing/producer.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/evloop.h"
#include "base/hmap.h"
#include "base/log.h"
#include "base/sock_default.h"
#include "base/version.h"
#include "ipc/ipc.h"
#include "ipc/producer_port.pb-c.h"
#include "tracing/tracing_int.h"

/* Delay before sending again when the IPC send queue was full. */
#define PRODUCER_RETRY_MS 1u
/* Spare request buffers kept for reuse, so steady commits do not allocate. */
#define PRODUCER_SPARE_OPS 16u

enum producer_state { PRODUCER_CONNECTING, PRODUCER_CONNECTED, PRODUCER_DISCONNECTED };

/* One serialized request made on any thread, sent later by the loop. */
struct out_op {
	struct out_op *next;
	const char *method; /* static string */
	const ProtobufCMessageDescriptor *desc;
	bool is_commit;
	size_t len;
	size_t cap;
	uint8_t *data;
	/* Emulation: the chunks this commit carries, page << 8 | chunk; they
	 * are released to the arbiter once the commit is handed to the socket. */
	uint32_t *chunks;
	size_t n_chunks, cap_chunks;
};

struct ds_entry {
	char *name;
	uint8_t *req; /* serialized RegisterDataSourceRequest */
	size_t req_len;
};

struct sync_ctx {
	struct producer *p;
	producer_sync_cb cb;
	void *user;
	struct sync_ctx *next;
};

struct producer {
	struct evloop *loop;
	struct ipc_client *ipc;
	struct ipc_binding *port;
	char *name;
	struct producer_opts opts;
	struct producer_callbacks cbs;
	void *user;

	/* Loop thread only. */
	enum producer_state state;
	bool use_emulation;
	struct ds_entry *ds;
	size_t n_ds;
	struct hmap setup_ids; /* instance ids that got SetupDataSource */
	struct shm *shm;
	struct shm *own_shm;       /* offered with InitializeConnection, not yet answered */
	size_t own_page_size;
	int received_fd; /* the last fd the service sent, not yet used */
	struct sync_ctx *syncs;
	uint64_t batch_timer_id;
	bool has_batch_timer;
	uint64_t retry_timer_id;
	bool has_retry_timer;
	unsigned cb_depth; /* > 0 inside one of our callbacks */

	atomic_bool is_up; /* connected, for other threads */

	/* Writers; lock order: w_lock, then the arbiter's lock, then q_lock. */
	pthread_mutex_t w_lock;
	struct trace_writer **writers;
	size_t n_writers;

	pthread_mutex_t q_lock; /* everything below */
	struct arbiter *arb;    /* set once at SetupTracing */
	struct out_op *q_head, *q_tail;
	size_t q_bytes;
	struct out_op *spare;
	size_t n_spare;
	bool is_drain_posted;
	unsigned n_posted; /* tasks on the loop that still point here */
	bool is_dead;      /* producer_destroy() ran */
	struct producer_stats stats;
};

static void drain(struct producer *p);

/* ------------------------------------------------- lifetime ---- */

static void free_ops(struct out_op *op)
{
	while (op) {
		struct out_op *next = op->next;

		free(op->data);
		free(op->chunks);
		free(op);
		op = next;
	}
}

static void free_memory(struct producer *p)
{
	free_ops(p->q_head);
	free_ops(p->spare);
	pthread_mutex_destroy(&p->q_lock);
	pthread_mutex_destroy(&p->w_lock);
	free(p);
}

/* Frees @p if it was destroyed and nothing refers to it any more. Return:
 * true if the caller must not touch @p again. */
static bool release(struct producer *p)
{
	bool is_gone;

	pthread_mutex_lock(&p->q_lock);
	is_gone = p->is_dead;
	if (is_gone && p->n_posted == 0 && p->cb_depth == 0) {
		pthread_mutex_unlock(&p->q_lock);
		free_memory(p);
		return true;
	}
	pthread_mutex_unlock(&p->q_lock);
	return is_gone;
}

/* Posts @cb for @p; q_lock held. */
static int post_locked(struct producer *p, evloop_task_cb cb)
{
	int err = evloop_post(p->loop, cb, p);

	if (err == 0)
		p->n_posted++;
	return err;
}

/* A posted task starts: Return: false if @p is gone (maybe freed now). */
static bool task_enter(struct producer *p)
{
	bool is_dead;

	pthread_mutex_lock(&p->q_lock);
	p->n_posted--;
	is_dead = p->is_dead;
	pthread_mutex_unlock(&p->q_lock);
	if (is_dead) {
		release(p);
		return false;
	}
	return true;
}

/* Around calls into the embedder, which may destroy @p. */
static void cb_enter(struct producer *p)
{
	p->cb_depth++;
}

/* Return: true if @p is gone after the callback. */
static bool cb_leave(struct producer *p)
{
	p->cb_depth--;
	if (p->cb_depth > 0)
		return p->is_dead;
	return release(p);
}

/* ------------------------------------------- outbound queue ---- */

static void drain_task(void *user)
{
	struct producer *p = user;

	if (!task_enter(p))
		return;
	pthread_mutex_lock(&p->q_lock);
	p->is_drain_posted = false;
	pthread_mutex_unlock(&p->q_lock);
	drain(p);
}

static struct out_op *op_get_locked(struct producer *p, size_t len)
{
	struct out_op *op = p->spare;

	if (op) {
		p->spare = op->next;
		p->n_spare--;
	} else {
		op = calloc(1, sizeof(*op));
		if (!op)
			return NULL;
	}
	if (op->cap < len) {
		uint8_t *d = realloc(op->data, len);

		if (!d) {
			free(op->data);
			free(op);
			return NULL;
		}
		op->data = d;
		op->cap = len;
	}
	op->next = NULL;
	op->n_chunks = 0;
	return op;
}

/* Records the emulated chunks of commit @req on @op. Return: 0 or -ENOMEM. */
static int op_note_chunks(struct out_op *op, const Perfetto__Protos__CommitDataRequest *req)
{
	size_t i;

	if (req->n_chunks_to_move > op->cap_chunks) {
		uint32_t *c = realloc(op->chunks, req->n_chunks_to_move * sizeof(*c));

		if (!c)
			return -ENOMEM;
		op->chunks = c;
		op->cap_chunks = req->n_chunks_to_move;
	}
	for (i = 0; i < req->n_chunks_to_move; i++) {
		const Perfetto__Protos__CommitDataRequest__ChunksToMove *m = req->chunks_to_move[i];

		if (m->has_data)
			op->chunks[op->n_chunks++] = m->page << 8 | (m->chunk & 0xff);
	}
	return 0;
}

/* The commit left (or was dropped): its emulated chunks may be reused. */
static void op_release_chunks(struct producer *p, struct out_op *op)
{
	size_t i;

	for (i = 0; i < op->n_chunks && p->arb; i++)
		arb_emulated_release(p->arb, op->chunks[i] >> 8, op->chunks[i] & 0xff);
	op->n_chunks = 0;
}

static void op_put_locked(struct producer *p, struct out_op *op)
{
	op->n_chunks = 0;
	if (p->n_spare >= PRODUCER_SPARE_OPS || op->cap > ARB_MAX_COMMIT_BYTES + 1024) {
		free(op->data);
		free(op->chunks);
		free(op);
		return;
	}
	op->next = p->spare;
	p->spare = op;
	p->n_spare++;
}

/* Serializes @msg for @method and queues it for the loop. Any thread.
 * @commit: the CommitDataRequest @msg is, if any (its emulated chunks are
 * released after the send). */
static int enqueue(struct producer *p, const char *method, const ProtobufCMessage *msg,
		   bool is_commit, const Perfetto__Protos__CommitDataRequest *commit)
{
	size_t len = protobuf_c_message_get_packed_size(msg);
	struct out_op *op;
	int err = 0;

	pthread_mutex_lock(&p->q_lock);
	if (p->is_dead) {
		err = -ENOTCONN;
		goto out;
	}
	if (p->q_bytes + len > PRODUCER_MAX_QUEUED_BYTES) {
		err = -ENOBUFS;
		goto out;
	}
	op = op_get_locked(p, len ? len : 1);
	if (!op) {
		err = -ENOMEM;
		goto out;
	}
	if (commit && p->use_emulation && op_note_chunks(op, commit) < 0) {
		op_put_locked(p, op);
		err = -ENOMEM;
		goto out;
	}
	op->len = protobuf_c_message_pack(msg, op->data);
	op->method = method;
	op->desc = msg->descriptor;
	op->is_commit = is_commit;
	if (p->q_tail)
		p->q_tail->next = op;
	else
		p->q_head = op;
	p->q_tail = op;
	p->q_bytes += op->len;
	/* One task drains everything queued until it runs. */
	if (!p->is_drain_posted && post_locked(p, drain_task) == 0)
		p->is_drain_posted = true;
out:
	if (err < 0 && is_commit)
		p->stats.commits_dropped++;
	pthread_mutex_unlock(&p->q_lock);
	return err;
}

static int send_raw(struct producer *p, const char *method, const ProtobufCMessageDescriptor *desc,
		    const uint8_t *data, size_t len, ipc_reply_cb cb, void *user)
{
	struct pb_raw_msg m;
	int err;

	if (p->state != PRODUCER_CONNECTED || !p->ipc)
		return -ENOTCONN;
	err = pb_raw_msg_init(&m, desc, data, len);
	if (err < 0)
		return err;
	return ipc_client_invoke(p->ipc, p->port, method, &m.u.base, -1, cb, user, cb == NULL);
}

static void retry_timer_cb(void *user)
{
	struct producer *p = user;

	p->has_retry_timer = false;
	drain(p);
}

/* Sends every queued request, oldest first. When the IPC send queue is full
 * (a slow service or a TCP link) the rest waits for a retry. Loop thread. */
static void drain(struct producer *p)
{
	struct out_op *list, *op, *next, *unsent = NULL;
	uint64_t n_sent = 0, n_dropped = 0, bytes = 0;
	size_t unsent_bytes = 0;

	pthread_mutex_lock(&p->q_lock);
	list = p->q_head;
	p->q_head = p->q_tail = NULL;
	p->q_bytes = 0;
	pthread_mutex_unlock(&p->q_lock);
	for (op = list; op; op = op->next) {
		int err = send_raw(p, op->method, op->desc, op->data, op->len, NULL, NULL);

		if (err == -ENOBUFS) {
			unsent = op;
			break;
		}
		op_release_chunks(p, op);
		if (!op->is_commit)
			continue;
		if (err < 0) {
			n_dropped++;
		} else {
			n_sent++;
			bytes += op->len;
		}
	}
	for (op = unsent; op; op = op->next)
		unsent_bytes += op->len;
	pthread_mutex_lock(&p->q_lock);
	for (op = list; op != unsent; op = next) {
		next = op->next;
		op_put_locked(p, op);
	}
	if (unsent) {
		/* Back to the front, ahead of what was queued meanwhile. */
		for (op = unsent; op->next; op = op->next)
			;
		op->next = p->q_head;
		if (!p->q_head)
			p->q_tail = op;
		p->q_head = unsent;
		p->q_bytes += unsent_bytes;
	}
	p->stats.commits_sent += n_sent;
	p->stats.commits_dropped += n_dropped;
	p->stats.commit_bytes_sent += bytes;
	pthread_mutex_unlock(&p->q_lock);
	if (unsent && !p->has_retry_timer &&
	    evloop_add_timer(p->loop, PRODUCER_RETRY_MS, 0, retry_timer_cb, p,
			     &p->retry_timer_id) == 0)
		p->has_retry_timer = true;
}

/* ------------------------------------------------ arbiter glue ---- */

/* Arbiter lock held, any thread: copy the request out and return. */
static int on_arb_commit(const struct Perfetto__Protos__CommitDataRequest *req, void *user)
{
	struct producer *p = user;

	return enqueue(p, "CommitData", &req->base, true, req);
}

static void batch_timer_cb(void *user)
{
	struct producer *p = user;

	p->has_batch_timer = false;
	if (p->arb)
		arb_commit_pending(p->arb);
	drain(p);
}

static void batch_task(void *user)
{
	struct producer *p = user;

	if (!task_enter(p))
		return;
	if (p->opts.batch_commits_ms == 0) {
		batch_timer_cb(p);
		return;
	}
	if (!p->has_batch_timer &&
	    evloop_add_timer(p->loop, p->opts.batch_commits_ms, 0, batch_timer_cb, p,
			     &p->batch_timer_id) == 0)
		p->has_batch_timer = true;
	else if (!p->has_batch_timer)
		batch_timer_cb(p);
}

/* Arbiter lock held, any thread: a batch started; commit it from the loop. */
static void on_arb_schedule(void *user)
{
	struct producer *p = user;

	pthread_mutex_lock(&p->q_lock);
	if (!p->is_dead && post_locked(p, batch_task) < 0)
		LOG_D("producer: cannot post a commit task, the batch waits for the next one");
	pthread_mutex_unlock(&p->q_lock);
}

/* ------------------------------------------------- connection ---- */

/*
 * The IPC client hands a received fd to whichever reply it processes next,
 * and an fd travels with the first byte of its frame: the SMB fd can reach
 * the reply just before SetupTracing. Like Perfetto, keep the last one.
 */
static void stash_fd(struct producer *p, int fd)
{
	if (fd < 0)
		return;
	if (p->received_fd >= 0)
		close(p->received_fd);
	p->received_fd = fd;
}

static int take_fd(struct producer *p)
{
	int fd = p->received_fd;

	p->received_fd = -1;
	if (fd < 0 && p->ipc)
		fd = ipc_client_take_fd(p->ipc);
	return fd < 0 ? -1 : fd;
}

static void fail(struct producer *p, int err)
{
	if (p->state == PRODUCER_DISCONNECTED)
		return;
	p->state = PRODUCER_DISCONNECTED;
	atomic_store(&p->is_up, false);
	ipc_client_destroy(p->ipc);
	p->ipc = NULL;
	p->port = NULL;
	if (p->cbs.on_disconnected) {
		cb_enter(p);
		p->cbs.on_disconnected(p, err, p->user);
		cb_leave(p);
	}
}

static void on_register_ds_reply(const struct ipc_reply *r, void *user)
{
	const Perfetto__Protos__RegisterDataSourceResponse *resp = (const void *)r->msg;

	stash_fd(user, r->fd);
	if (resp && resp->error && resp->error[0])
		LOG_D("producer: RegisterDataSource refused: %s", resp->error);
}

static void send_ds(struct producer *p, const struct ds_entry *e)
{
	int err = send_raw(p, "RegisterDataSource",
			   &perfetto__protos__register_data_source_request__descriptor, e->req,
			   e->req_len, on_register_ds_reply, p);

	if (err < 0)
		LOG_D("producer: RegisterDataSource %s: %d", e->name, err);
}

static int start_arbiter(struct producer *p, struct shm *shm, size_t page_size);

static void on_init_reply(const struct ipc_reply *r, void *user)
{
	const Perfetto__Protos__InitializeConnectionResponse *resp = (const void *)r->msg;
	struct producer *p = user;
	size_t i;

	stash_fd(p, r->fd);
	if (!r->success || !resp) {
		/* A dropped connection reports itself through on_disconnected. */
		if (p->ipc && ipc_client_is_connected(p->ipc))
			fail(p, -EPROTO);
		return;
	}
	p->use_emulation = (resp->has_use_shmem_emulation && resp->use_shmem_emulation) ||
			   !ipc_client_supports_fds(p->ipc);
	if (p->own_shm) {
		struct shm *own = p->own_shm;

		p->own_shm = NULL;
		/* The service took our SMB: writers can start before SetupTracing. */
		if (resp->has_using_shmem_provided_by_producer &&
		    resp->using_shmem_provided_by_producer && !p->use_emulation)
			start_arbiter(p, own, p->own_page_size);
		else
			shm_destroy(own);
	}
	p->state = PRODUCER_CONNECTED;
	atomic_store(&p->is_up, true);
	for (i = 0; i < p->n_ds; i++)
		send_ds(p, &p->ds[i]);
	if (p->cbs.on_connected) {
		cb_enter(p);
		p->cbs.on_connected(p, p->user);
		cb_leave(p);
	}
}

/* Puts an arbiter over @shm (taken over; destroyed on failure). */
static int start_arbiter(struct producer *p, struct shm *shm, size_t page_size)
{
	struct arb_config cfg = {0};
	struct arbiter *arb = NULL;
	int err;

	cfg.smb_base = shm->base;
	cfg.smb_size = shm->size;
	cfg.page_size = page_size;
	cfg.layout = p->opts.layout;
	cfg.is_emulation = p->use_emulation;
	cfg.batch_commits = true;
	cfg.commit_at_bytes = p->opts.batch_commit_bytes;
	cfg.commit_cb = on_arb_commit;
	cfg.schedule_cb = on_arb_schedule;
	cfg.user = p;
	err = arb_create(&cfg, &arb);
	if (err < 0) {
		shm_destroy(shm);
		return err;
	}
	p->shm = shm;
	pthread_mutex_lock(&p->q_lock);
	p->arb = arb;
	pthread_mutex_unlock(&p->q_lock);
	return 0;
}

static int setup_tracing(struct producer *p,
			 const Perfetto__Protos__GetAsyncCommandResponse__SetupTracing *st, int fd)
{
	struct shm *shm = NULL;
	size_t page_size = SMB_MIN_PAGE_SIZE;
	int err;

	if (p->shm) {
		/* One SMB per connection (ours, if the service adopted it). */
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (st->has_shared_buffer_page_size_kb && st->shared_buffer_page_size_kb)
		page_size = (size_t)st->shared_buffer_page_size_kb * 1024;
	if (page_size > SMB_MAX_PAGE_SIZE) {
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	if (p->use_emulation) {
		/* Nothing can cross TCP/vsock; a stray fd is not ours to use. */
		if (fd >= 0)
			close(fd);
		err = shm_create_private(SHM_EMULATION_SIZE_BYTES, page_size, &shm);
	} else if (fd < 0) {
		err = -EPROTO;
	} else {
		err = shm_map_fd(fd, 0, page_size, 0, &shm);
	}
	if (err < 0)
		return err;
	return start_arbiter(p, shm, page_size);
}

/* The default flush: every writer, on this thread. */
static void flush_all_writers(struct producer *p, uint64_t request_id)
{
	size_t i;

	pthread_mutex_lock(&p->w_lock);
	for (i = 0; i < p->n_writers; i++)
		tw_flush(p->writers[i]);
	pthread_mutex_unlock(&p->w_lock);
	producer_flush_ack(p, request_id);
	drain(p);
}

/* Return: true if @p is gone. */
static bool dispatch(struct producer *p, const Perfetto__Protos__GetAsyncCommandResponse *cmd)
{
	const Perfetto__Protos__DataSourceConfig *cfg;
	uint64_t id;
	int err;

	switch (cmd->cmd_case) {
	case PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_SETUP_TRACING:
		err = setup_tracing(p, cmd->setup_tracing, take_fd(p));
		if (err < 0) {
			LOG_D("producer: SetupTracing failed: %d", err);
			fail(p, err);
			return p->is_dead;
		}
		if (p->cbs.on_tracing_setup)
			p->cbs.on_tracing_setup(p, p->user);
		break;
	case PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_SETUP_DATA_SOURCE:
		id = cmd->setup_data_source->new_instance_id;
		cfg = cmd->setup_data_source->config;
		hmap_put(&p->setup_ids, id, 1);
		if (p->cbs.setup_ds && cfg)
			p->cbs.setup_ds(p, id, cfg, p->user);
		break;
	case PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_START_DATA_SOURCE:
		id = cmd->start_data_source->new_instance_id;
		cfg = cmd->start_data_source->config;
		if (!cfg)
			break;
		/* Older services start without setting up first. */
		if (!hmap_get(&p->setup_ids, id, NULL)) {
			hmap_put(&p->setup_ids, id, 1);
			if (p->cbs.setup_ds)
				p->cbs.setup_ds(p, id, cfg, p->user);
			if (p->is_dead)
				return true;
		}
		if (p->cbs.start_ds)
			p->cbs.start_ds(p, id, cfg, p->user);
		break;
	case PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_STOP_DATA_SOURCE:
		id = cmd->stop_data_source->instance_id;
		hmap_del(&p->setup_ids, id, NULL);
		if (p->cbs.stop_ds)
			p->cbs.stop_ds(p, id, p->user);
		break;
	case PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_FLUSH:
		if (p->cbs.flush)
			p->cbs.flush(p, cmd->flush->data_source_ids, cmd->flush->n_data_source_ids,
				     cmd->flush->request_id, cmd->flush->flags, p->user);
		else
			flush_all_writers(p, cmd->flush->request_id);
		break;
	case PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_CLEAR_INCREMENTAL_STATE:
		if (p->cbs.clear_incremental_state)
			p->cbs.clear_incremental_state(
				p, cmd->clear_incremental_state->data_source_ids,
				cmd->clear_incremental_state->n_data_source_ids, p->user);
		break;
	default:
		LOG_D("producer: unknown command %d from the service, ignoring", cmd->cmd_case);
		break;
	}
	return p->is_dead;
}

static void on_command(const struct ipc_reply *r, void *user)
{
	const Perfetto__Protos__GetAsyncCommandResponse *cmd = (const void *)r->msg;
	struct producer *p = user;

	cb_enter(p);
	stash_fd(p, r->fd);
	if (r->success && cmd) {
		if (dispatch(p, cmd))
			goto out;
	} else if (r->has_more) {
		LOG_D("producer: undecodable command from the service, ignoring");
	}
	if (!r->has_more && p->ipc && ipc_client_is_connected(p->ipc))
		fail(p, -ECONNRESET); /* the service closed the command stream */
out:
	cb_leave(p);
}

static void on_bind(struct ipc_binding *b, bool success, void *user)
{
	Perfetto__Protos__InitializeConnectionRequest req =
		PERFETTO__PROTOS__INITIALIZE_CONNECTION_REQUEST__INIT;
	Perfetto__Protos__GetAsyncCommandRequest cmd_req =
		PERFETTO__PROTOS__GET_ASYNC_COMMAND_REQUEST__INIT;
	struct producer *p = user;
	int err;

	(void)b;
	if (!success) {
		if (p->ipc && ipc_client_is_connected(p->ipc))
			fail(p, -EPROTONOSUPPORT);
		return;
	}
	req.producer_name = p->name;
	req.sdk_version = (char *)PFC_VERSION_STRING;
	if (p->opts.page_size_hint_bytes) {
		req.has_shared_memory_page_size_hint_bytes = true;
		req.shared_memory_page_size_hint_bytes = p->opts.page_size_hint_bytes;
	}
	if (p->opts.smb_size_hint_bytes) {
		req.has_shared_memory_size_hint_bytes = true;
		req.shared_memory_size_hint_bytes = p->opts.smb_size_hint_bytes;
	}
	if (p->opts.smb_scraping_mode > 0 && p->opts.smb_scraping_mode <= 2) {
		req.has_smb_scraping_mode = true;
		req.smb_scraping_mode = p->opts.smb_scraping_mode;
	}
	/* Offer our own SMB (as Perfetto's SDK does for startup tracing). */
	if (p->opts.provide_smb && ipc_client_supports_fds(p->ipc) && !p->shm) {
		p->own_page_size = p->opts.page_size_hint_bytes ? p->opts.page_size_hint_bytes
								: SMB_MIN_PAGE_SIZE;
		if (shm_create(p->opts.smb_size_hint_bytes ? p->opts.smb_size_hint_bytes
							   : PRODUCER_OWN_SMB_BYTES,
			       p->own_page_size, &p->own_shm) == 0) {
			req.has_producer_provided_shmem = true;
			req.producer_provided_shmem = true;
			req.has_shared_memory_page_size_hint_bytes = true;
			req.shared_memory_page_size_hint_bytes = (uint32_t)p->own_page_size;
		}
	}
	err = ipc_client_invoke(p->ipc, p->port, "InitializeConnection", &req.base,
				p->own_shm ? p->own_shm->fd : -1, on_init_reply, p, false);
	if (err == 0)
		err = ipc_client_invoke(p->ipc, p->port, "GetAsyncCommand", &cmd_req.base, -1,
					on_command, p, false);
	if (err < 0)
		fail(p, err);
}

static void on_ipc_disconnected(struct ipc_client *c, int err, void *user)
{
	(void)c;
	fail(user, err);
}

int producer_connect(struct evloop *loop, const char *sock_name, const char *producer_name,
		     const struct producer_opts *opts, const struct producer_callbacks *cbs,
		     void *user, struct producer **out)
{
	struct ipc_client_callbacks icbs = {.on_disconnected = on_ipc_disconnected};
	struct producer *p = NULL;
	int err;

	if (!loop || !producer_name || !producer_name[0] ||
	    strnlen(producer_name, PRODUCER_MAX_NAME_BYTES + 1) > PRODUCER_MAX_NAME_BYTES)
		return -EINVAL;
	if (!sock_name)
		sock_name = sock_default_producer_for_client();
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->loop = loop;
	p->user = user;
	p->received_fd = -1;
	if (opts)
		p->opts = *opts;
	if (cbs)
		p->cbs = *cbs;
	hmap_init(&p->setup_ids);
	pthread_mutex_init(&p->q_lock, NULL);
	pthread_mutex_init(&p->w_lock, NULL);
	p->name = strdup(producer_name);
	if (!p->name) {
		err = -ENOMEM;
		goto fail;
	}
	err = ipc_client_connect(loop, sock_name, &icbs, p, &p->ipc);
	if (err < 0)
		goto fail;
	err = ipc_client_bind(p->ipc, &perfetto__protos__producer_port__descriptor, on_bind, p,
			      &p->port);
	if (err < 0)
		goto fail;
	*out = p;
	return 0;
fail:
	ipc_client_destroy(p->ipc);
	hmap_fini(&p->setup_ids);
	free(p->name);
	free_memory(p);
	return err;
}

void producer_destroy(struct producer *p)
{
	struct sync_ctx *s;
	size_t i;

	if (!p || p->is_dead)
		return;
	for (i = 0; i < p->n_writers; i++)
		tw_destroy(p->writers[i]);
	p->n_writers = 0;
	free(p->writers);
	p->writers = NULL;
	pthread_mutex_lock(&p->q_lock);
	p->is_dead = true;
	pthread_mutex_unlock(&p->q_lock);
	atomic_store(&p->is_up, false);
	if (p->has_batch_timer)
		evloop_del(p->loop, p->batch_timer_id);
	if (p->has_retry_timer)
		evloop_del(p->loop, p->retry_timer_id);
	ipc_client_destroy(p->ipc);
	p->ipc = NULL;
	p->state = PRODUCER_DISCONNECTED;
	arb_destroy(p->arb);
	p->arb = NULL;
	shm_destroy(p->shm);
	shm_destroy(p->own_shm);
	p->shm = NULL;
	if (p->received_fd >= 0)
		close(p->received_fd);
	p->received_fd = -1;
	for (i = 0; i < p->n_ds; i++) {
		free(p->ds[i].name);
		free(p->ds[i].req);
	}
	free(p->ds);
	p->ds = NULL;
	p->n_ds = 0;
	while ((s = p->syncs)) {
		p->syncs = s->next;
		free(s);
	}
	hmap_fini(&p->setup_ids);
	free(p->name);
	p->name = NULL;
	release(p);
}

/* ------------------------------------------------ data sources ---- */

static int build_ds_request(const struct producer_ds_desc *d, uint8_t **out, size_t *out_len)
{
	Perfetto__Protos__DataSourceDescriptor dsd = PERFETTO__PROTOS__DATA_SOURCE_DESCRIPTOR__INIT;
	size_t body, hdr, len;
	uint8_t *buf;

	dsd.name = (char *)d->name;
	if (d->will_notify_on_stop)
		dsd.has_will_notify_on_stop = dsd.will_notify_on_stop = true;
	if (d->will_notify_on_start)
		dsd.has_will_notify_on_start = dsd.will_notify_on_start = true;
	if (d->handles_incremental_state_clear)
		dsd.has_handles_incremental_state_clear = dsd.handles_incremental_state_clear = true;
	if (d->no_flush)
		dsd.has_no_flush = dsd.no_flush = true;
	/* Protobuf merges concatenated messages, so the extra fields are
	 * simply appended to the descriptor. */
	body = protobuf_c_message_get_packed_size(&dsd.base) + d->extra_pb_len;
	hdr = 1 + pz_varint_size(body);
	len = hdr + body;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	buf[0] = (uint8_t)pz_make_tag(1, PZ_WIRE_LEN);
	pz_varint_encode(body, buf + 1);
	protobuf_c_message_pack(&dsd.base, buf + hdr);
	if (d->extra_pb_len)
		memcpy(buf + len - d->extra_pb_len, d->extra_pb, d->extra_pb_len);
	*out = buf;
	*out_len = len;
	return 0;
}

int producer_register_ds(struct producer *p, const struct producer_ds_desc *desc)
{
	struct ds_entry e = {0}, *grown;
	size_t i;
	int err;

	if (!p || !desc || !desc->name || !desc->name[0] ||
	    strnlen(desc->name, PRODUCER_MAX_NAME_BYTES + 1) > PRODUCER_MAX_NAME_BYTES ||
	    (desc->extra_pb_len && !desc->extra_pb))
		return -EINVAL;
	if (p->state == PRODUCER_DISCONNECTED)
		return -ENOTCONN;
	for (i = 0; i < p->n_ds; i++)
		if (strcmp(p->ds[i].name, desc->name) == 0)
			return -EEXIST;
	if (p->n_ds >= PRODUCER_MAX_DATA_SOURCES)
		return -ENOSPC;
	e.name = strdup(desc->name);
	if (!e.name)
		return -ENOMEM;
	err = build_ds_request(desc, &e.req, &e.req_len);
	if (err < 0)
		goto fail;
	grown = realloc(p->ds, (p->n_ds + 1) * sizeof(*p->ds));
	if (!grown) {
		err = -ENOMEM;
		goto fail;
	}
	p->ds = grown;
	p->ds[p->n_ds++] = e;
	if (p->state == PRODUCER_CONNECTED)
		send_ds(p, &e);
	return 0;
fail:
	free(e.name);
	free(e.req);
	return err;
}

int producer_update_ds(struct producer *p, const struct producer_ds_desc *desc)
{
	uint8_t *req = NULL;
	size_t i, len;
	int err;

	if (!p || !desc || !desc->name || (desc->extra_pb_len && !desc->extra_pb))
		return -EINVAL;
	if (p->state == PRODUCER_DISCONNECTED)
		return -ENOTCONN;
	for (i = 0; i < p->n_ds; i++)
		if (strcmp(p->ds[i].name, desc->name) == 0)
			break;
	if (i == p->n_ds)
		return -ENOENT;
	err = build_ds_request(desc, &req, &len);
	if (err < 0)
		return err;
	free(p->ds[i].req);
	p->ds[i].req = req;
	p->ds[i].req_len = len;
	/* UpdateDataSourceRequest has RegisterDataSourceRequest's layout. */
	if (p->state == PRODUCER_CONNECTED)
		send_raw(p, "UpdateDataSource", &perfetto__protos__update_data_source_request__descriptor,
			 req, len, NULL, NULL);
	return 0;
}

int producer_unregister_ds(struct producer *p, const char *name)
{
	Perfetto__Protos__UnregisterDataSourceRequest req =
		PERFETTO__PROTOS__UNREGISTER_DATA_SOURCE_REQUEST__INIT;
	size_t i;

	if (!p || !name)
		return -EINVAL;
	if (p->state == PRODUCER_DISCONNECTED)
		return -ENOTCONN;
	for (i = 0; i < p->n_ds; i++)
		if (strcmp(p->ds[i].name, name) == 0)
			break;
	if (i == p->n_ds)
		return -ENOENT;
	if (p->state == PRODUCER_CONNECTED) {
		req.data_source_name = p->ds[i].name;
		ipc_client_invoke(p->ipc, p->port, "UnregisterDataSource", &req.base, -1, NULL,
				  NULL, true);
	}
	free(p->ds[i].name);
	free(p->ds[i].req);
	p->ds[i] = p->ds[--p->n_ds];
	return 0;
}

/* ------------------------------------------------------ writers ---- */

int producer_create_writer(struct producer *p, uint16_t target_buffer, struct trace_writer **out)
{
	Perfetto__Protos__RegisterTraceWriterRequest req =
		PERFETTO__PROTOS__REGISTER_TRACE_WRITER_REQUEST__INIT;
	struct tw_config cfg = {0};
	struct trace_writer *tw = NULL;
	struct arbiter *arb;
	int err;

	if (!p || !out)
		return -EINVAL;
	if (!atomic_load(&p->is_up))
		return -ENOTCONN;
	pthread_mutex_lock(&p->q_lock);
	arb = p->arb;
	pthread_mutex_unlock(&p->q_lock);
	if (!arb)
		return -EAGAIN;
	cfg.target_buffer = target_buffer;
	cfg.policy = p->opts.full_policy;
	cfg.stall_timeout_ms = p->opts.stall_timeout_ms;
	pthread_mutex_lock(&p->w_lock);
	if (!p->writers) {
		p->writers = calloc(PRODUCER_MAX_WRITERS, sizeof(*p->writers));
		if (!p->writers) {
			err = -ENOMEM;
			goto out;
		}
	}
	if (p->n_writers >= PRODUCER_MAX_WRITERS) {
		err = -EBUSY;
		goto out;
	}
	err = tw_create(arb, &cfg, &tw);
	if (err < 0)
		goto out;
	/* Queued before any commit of this writer can be. */
	req.has_trace_writer_id = true;
	req.trace_writer_id = tw_writer_id(tw);
	req.has_target_buffer = true;
	req.target_buffer = target_buffer;
	err = enqueue(p, "RegisterTraceWriter", &req.base, false, NULL);
	if (err < 0) {
		tw_destroy(tw);
		goto out;
	}
	p->writers[p->n_writers++] = tw;
	*out = tw;
out:
	pthread_mutex_unlock(&p->w_lock);
	return err;
}

int producer_register_writer_id(struct producer *p, uint16_t target_buffer, uint16_t *out_id)
{
	Perfetto__Protos__RegisterTraceWriterRequest req =
		PERFETTO__PROTOS__REGISTER_TRACE_WRITER_REQUEST__INIT;
	struct arbiter *arb;
	int id, err;

	if (!p || !out_id)
		return -EINVAL;
	if (!atomic_load(&p->is_up))
		return -ENOTCONN;
	pthread_mutex_lock(&p->q_lock);
	arb = p->arb;
	pthread_mutex_unlock(&p->q_lock);
	if (!arb)
		return -EAGAIN;
	id = arb_writer_id_alloc(arb);
	if (id < 0)
		return id;
	req.has_trace_writer_id = true;
	req.trace_writer_id = (uint32_t)id;
	req.has_target_buffer = true;
	req.target_buffer = target_buffer;
	/* Queued before any commit of this writer can be. */
	err = enqueue(p, "RegisterTraceWriter", &req.base, false, NULL);
	if (err < 0) {
		arb_writer_id_free(arb, (uint16_t)id);
		return err;
	}
	*out_id = (uint16_t)id;
	return 0;
}

void producer_unregister_writer_id(struct producer *p, uint16_t writer_id)
{
	Perfetto__Protos__UnregisterTraceWriterRequest req =
		PERFETTO__PROTOS__UNREGISTER_TRACE_WRITER_REQUEST__INIT;
	struct arbiter *arb;

	if (!p || !writer_id)
		return;
	pthread_mutex_lock(&p->q_lock);
	arb = p->arb;
	pthread_mutex_unlock(&p->q_lock);
	req.has_trace_writer_id = true;
	req.trace_writer_id = writer_id;
	enqueue(p, "UnregisterTraceWriter", &req.base, false, NULL);
	if (arb)
		arb_writer_id_free(arb, writer_id);
}

void producer_destroy_writer(struct producer *p, struct trace_writer *tw)
{
	Perfetto__Protos__UnregisterTraceWriterRequest req =
		PERFETTO__PROTOS__UNREGISTER_TRACE_WRITER_REQUEST__INIT;
	size_t i;

	if (!p || !tw)
		return;
	pthread_mutex_lock(&p->w_lock);
	for (i = 0; i < p->n_writers; i++) {
		if (p->writers[i] == tw) {
			p->writers[i] = p->writers[--p->n_writers];
			break;
		}
	}
	req.has_trace_writer_id = true;
	req.trace_writer_id = tw_writer_id(tw);
	/* The final commit goes through the queue first, then this. */
	tw_destroy(tw);
	pthread_mutex_unlock(&p->w_lock);
	enqueue(p, "UnregisterTraceWriter", &req.base, false, NULL);
}

/* -------------------------------------------- notifications ---- */

int producer_flush_ack(struct producer *p, uint64_t request_id)
{
	Perfetto__Protos__CommitDataRequest req = PERFETTO__PROTOS__COMMIT_DATA_REQUEST__INIT;
	struct arbiter *arb;
	int err = 0;

	if (!p)
		return -EINVAL;
	if (!atomic_load(&p->is_up))
		return -ENOTCONN;
	pthread_mutex_lock(&p->q_lock);
	arb = p->arb;
	p->stats.flushes_acked++;
	pthread_mutex_unlock(&p->q_lock);
	if (arb) {
		arb_flush(arb, request_id);
	} else {
		req.has_flush_request_id = true;
		req.flush_request_id = request_id;
		err = enqueue(p, "CommitData", &req.base, true, NULL);
	}
	return err;
}

/* Commits the chunks that wait for the batching timer, so a request sent
 * next (a data source stopped, a Sync) never overtakes them. Any thread. */
static void commit_batch(struct producer *p)
{
	struct arbiter *arb;

	pthread_mutex_lock(&p->q_lock);
	arb = p->arb;
	pthread_mutex_unlock(&p->q_lock);
	if (arb)
		arb_commit_pending(arb);
}

static int notify(struct producer *p, const char *method, const ProtobufCMessage *msg)
{
	if (!p)
		return -EINVAL;
	if (!atomic_load(&p->is_up))
		return -ENOTCONN;
	commit_batch(p);
	return enqueue(p, method, msg, false, NULL);
}

int producer_notify_started(struct producer *p, uint64_t instance_id)
{
	Perfetto__Protos__NotifyDataSourceStartedRequest req =
		PERFETTO__PROTOS__NOTIFY_DATA_SOURCE_STARTED_REQUEST__INIT;

	req.has_data_source_id = true;
	req.data_source_id = instance_id;
	return notify(p, "NotifyDataSourceStarted", &req.base);
}

int producer_notify_stopped(struct producer *p, uint64_t instance_id)
{
	Perfetto__Protos__NotifyDataSourceStoppedRequest req =
		PERFETTO__PROTOS__NOTIFY_DATA_SOURCE_STOPPED_REQUEST__INIT;

	req.has_data_source_id = true;
	req.data_source_id = instance_id;
	return notify(p, "NotifyDataSourceStopped", &req.base);
}

int producer_activate_triggers(struct producer *p, const char *const *names, size_t n)
{
	Perfetto__Protos__ActivateTriggersRequest req =
		PERFETTO__PROTOS__ACTIVATE_TRIGGERS_REQUEST__INIT;
	size_t i;

	if (!names && n)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!names[i] || strnlen(names[i], PRODUCER_MAX_NAME_BYTES + 1) >
					 PRODUCER_MAX_NAME_BYTES)
			return -EINVAL;
	req.n_trigger_names = n;
	req.trigger_names = (char **)names;
	return notify(p, "ActivateTriggers", &req.base);
}

static void on_sync_reply(const struct ipc_reply *r, void *user)
{
	struct sync_ctx *s = user, **pp;
	struct producer *p = s->p;

	stash_fd(p, r->fd);
	for (pp = &p->syncs; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	if (s->cb) {
		cb_enter(p);
		s->cb(p, r->success, s->user);
		free(s);
		cb_leave(p);
		return;
	}
	free(s);
}

int producer_sync(struct producer *p, producer_sync_cb cb, void *user)
{
	Perfetto__Protos__SyncRequest req = PERFETTO__PROTOS__SYNC_REQUEST__INIT;
	struct sync_ctx *s;
	int err;

	if (!p)
		return -EINVAL;
	if (p->state != PRODUCER_CONNECTED)
		return -ENOTCONN;
	/* Requests queued by other threads, and batched chunks, go first. */
	commit_batch(p);
	drain(p);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->p = p;
	s->cb = cb;
	s->user = user;
	err = ipc_client_invoke(p->ipc, p->port, "Sync", &req.base, -1, on_sync_reply, s, false);
	if (err < 0) {
		free(s);
		return err;
	}
	s->next = p->syncs;
	p->syncs = s;
	return 0;
}

/* ------------------------------------------------------ getters ---- */

bool producer_is_connected(const struct producer *p)
{
	return p && p->state == PRODUCER_CONNECTED;
}

int producer_socket_fd(const struct producer *p)
{
	return p ? ipc_client_socket_fd(p->ipc) : -1;
}

bool producer_uses_shmem_emulation(const struct producer *p)
{
	return p && p->use_emulation;
}

struct arbiter *producer_arbiter(struct producer *p)
{
	struct arbiter *arb;

	pthread_mutex_lock(&p->q_lock);
	arb = p->arb;
	pthread_mutex_unlock(&p->q_lock);
	return arb;
}

void producer_get_stats(struct producer *p, struct producer_stats *out)
{
	pthread_mutex_lock(&p->q_lock);
	*out = p->stats;
	pthread_mutex_unlock(&p->q_lock);
}
