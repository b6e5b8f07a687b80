// SPDX-License-Identifier: Apache-2.0
/*
 * test_producer.c - a producer program for integration tests and the service
 * benchmark. It registers one data source; when an instance runs, N threads
 * each write M TracePackets whose for_testing field encodes the thread
 * (counter) and sequence number (seq_value), padded with checkable payload
 * bytes, so a test can verify every packet arrived once and in order.
 * With --track-events the packets are TrackEvent instants instead (on one
 * track per thread, each carrying the raw timestamp it was written with as
 * the debug annotation "raw_ts"), for tests of where the trace processor
 * puts them in time. --reconnect keeps the producer alive across service
 * restarts (it reconnects with a backoff instead of exiting).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/evloop.h"
#include "base/compiler.h"
#include "base/subproc.h"
#include "pb_fields.h"
#include "tracing/producer.h"

#define NOTIFY_ENV "TEST_PRODUCER_NOTIFY_FD"
#define MAX_THREADS 64u
#define MAX_PACKET_BYTES (64u * 1024 * 1024)
#define MAX_NESTED_DEPTH 32u
/* Bytes of a packet that are not payload filler (an estimate). */
#define PACKET_OVERHEAD_BYTES 48u

static struct {
	const char *name;
	const char *ds;
	const char *sock;
	const char *trigger;
	uint64_t trigger_after_ms;
	const char *trigger_when_done; /* activated once every writer finished */
	uint64_t shm_kb;               /* SMB size hint, 0 = default */
	uint64_t page_kb;              /* SMB page size hint, 0 = default */
	bool own_smb;                  /* offer our own SMB at connect */
	uint64_t packet_interval_us;   /* sleep after each packet, 0 = none */
	unsigned threads;
	uint64_t packets;
	uint64_t packet_size;
	unsigned nested_depth;
	bool emit_on_start;
	bool notify_start;
	bool notify_stop;
	bool exit_after_stop;
	bool track_events;
	bool reconnect;
	bool flush_while_emitting;
	bool smb_scraping;             /* InitializeConnection asks for scraping */
} g_args = {.threads = 1, .packets = 10, .packet_size = 64};

struct worker {
	struct app *app;
	pthread_t thread;
	unsigned index;
	int err;
	atomic_uint_fast64_t flushed_gen; /* the last flush generation it honoured */
};

struct app {
	struct evloop *loop;
	atomic_bool quitting; /* SIGINT/SIGTERM: writers stop at their next packet */
	struct producer *p;
	int exit_code;
	uint64_t instance_id;
	uint16_t target_buffer;
	bool is_running;  /* an instance is started and not stopped */
	bool is_emitting; /* threads are writing */
	bool has_emitted; /* this instance's packets are written */
	bool is_stopping; /* stop arrived; finish when threads are done */
	struct worker workers[MAX_THREADS];
	atomic_uint n_done;
	uint64_t *pending_flushes;
	uint64_t *pending_gens;       /* --flush-while-emitting: flush_gen of each */
	atomic_uint_fast64_t flush_gen;
	size_t n_pending_flushes;
	size_t cap_pending_flushes;
	uint64_t reconnect_timer;
	unsigned backoff_ms;
};

static void usage(void)
{
	fprintf(stderr,
		"usage: test_producer --name NAME --ds DATA_SOURCE [--threads N]\n"
		"  [--packets-per-thread N] [--packet-size BYTES] [--nested-depth D]\n"
		"  [--emit-on-start] [--notify-start] [--notify-stop]\n"
		"  [--trigger NAME --trigger-after-ms MS] [--trigger-when-done NAME]\n"
		"  [--sock NAME] [--exit-after-stop] [--shm-kb KB] [--page-kb KB] [--own-smb]\n"
		"  [--packet-interval-us US] [--track-events] [--reconnect] [--smb-scraping]\n"
		"  [--flush-while-emitting]\n"
		"Without --emit-on-start the packets are written when the data source\n"
		"stops, before the stop is acknowledged. --packet-interval-us paces\n"
		"each thread (a sleep after every packet). --flush-while-emitting makes\n"
		"each thread commit its chunk when a flush comes (checked after every\n"
		"packet) and acks the flush then, instead of when all are written.\n");
	exit(2);
}

static uint64_t parse_num(const char *flag, const char *v, uint64_t max)
{
	uint64_t out;

	if (!v || sv_parse_u64(sv_from_cstr(v), max, &out) < 0) {
		fprintf(stderr, "test_producer: bad value for %s: %s\n", flag, v ? v : "(none)");
		exit(2);
	}
	return out;
}

static void parse_args(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--name") && v)
			g_args.name = argv[++i];
		else if (!strcmp(a, "--ds") && v)
			g_args.ds = argv[++i];
		else if (!strcmp(a, "--sock") && v)
			g_args.sock = argv[++i];
		else if (!strcmp(a, "--trigger") && v)
			g_args.trigger = argv[++i];
		else if (!strcmp(a, "--shm-kb") && v)
			g_args.shm_kb = parse_num(a, argv[++i], 32 * 1024);
		else if (!strcmp(a, "--page-kb") && v)
			g_args.page_kb = parse_num(a, argv[++i], 64);
		else if (!strcmp(a, "--own-smb"))
			g_args.own_smb = true;
		else if (!strcmp(a, "--trigger-when-done") && v)
			g_args.trigger_when_done = argv[++i];
		else if (!strcmp(a, "--trigger-after-ms"))
			g_args.trigger_after_ms = parse_num(a, argv[++i], 24ull * 3600 * 1000);
		else if (!strcmp(a, "--packet-interval-us"))
			g_args.packet_interval_us = parse_num(a, argv[++i], 10ull * 1000 * 1000);
		else if (!strcmp(a, "--threads"))
			g_args.threads = (unsigned)parse_num(a, argv[++i], MAX_THREADS);
		else if (!strcmp(a, "--packets-per-thread"))
			g_args.packets = parse_num(a, argv[++i], UINT32_MAX);
		else if (!strcmp(a, "--packet-size"))
			g_args.packet_size = parse_num(a, argv[++i], MAX_PACKET_BYTES);
		else if (!strcmp(a, "--nested-depth"))
			g_args.nested_depth = (unsigned)parse_num(a, argv[++i], MAX_NESTED_DEPTH);
		else if (!strcmp(a, "--emit-on-start"))
			g_args.emit_on_start = true;
		else if (!strcmp(a, "--notify-start"))
			g_args.notify_start = true;
		else if (!strcmp(a, "--notify-stop"))
			g_args.notify_stop = true;
		else if (!strcmp(a, "--exit-after-stop"))
			g_args.exit_after_stop = true;
		else if (!strcmp(a, "--track-events"))
			g_args.track_events = true;
		else if (!strcmp(a, "--reconnect"))
			g_args.reconnect = true;
		else if (!strcmp(a, "--flush-while-emitting"))
			g_args.flush_while_emitting = true;
		else if (!strcmp(a, "--smb-scraping"))
			g_args.smb_scraping = true;
		else
			usage();
	}
	if (!g_args.name || !g_args.ds || g_args.threads == 0)
		usage();
}

/* ------------------------------------------------------ writing ---- */

/*
 * Filler byte i of packet @seq of thread @t is 'a' + (t*7 + seq*3 + i) % 26
 * (trace_check recomputes it). Every packet's filler is a window of one
 * repeating alphabet, so it is taken from @pattern (fill_len + 26 bytes of
 * 'a'..'z' repeated) at the packet's offset instead of computed per byte.
 */
static const char *filler_window(const char *pattern, unsigned t, uint64_t seq)
{
	return pattern + (t * 7 + seq * 3) % 26;
}

/*
 * TracePacket{timestamp, for_testing{str "t<thread>", seq_value, counter =
 * thread, is_last, payload{remaining_nesting_depth, nested{...},
 * single_string = filler}}}; the filler sits in the innermost payload.
 */
static void write_one(struct trace_writer *tw, unsigned t, uint64_t seq, bool is_last,
		      const char *pattern, size_t fill_len)
{
	const char *fill = filler_window(pattern, t, seq);
	struct pz_msg *pkt = tw_new_packet(tw);
	struct pz_msg ev, levels[MAX_NESTED_DEPTH + 1];
	char label[24];
	unsigned d;

	snprintf(label, sizeof(label), "t%u", t);
	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP, clock_boottime_ns());
	pz_begin_nested(pkt, PB_TRACE_PACKET__FOR_TESTING, &ev);
	pz_append_string(&ev, PB_TEST_EVENT__STR, label);
	pz_append_varint(&ev, PB_TEST_EVENT__SEQ_VALUE, (uint32_t)seq);
	pz_append_varint(&ev, PB_TEST_EVENT__COUNTER, t);
	if (is_last)
		pz_append_bool(&ev, PB_TEST_EVENT__IS_LAST, true);
	pz_begin_nested(&ev, PB_TEST_EVENT__PAYLOAD, &levels[0]);
	for (d = 0; d < g_args.nested_depth; d++) {
		pz_append_varint(&levels[d], PB_TEST_EVENT_TEST_PAYLOAD__REMAINING_NESTING_DEPTH,
				 g_args.nested_depth - d);
		pz_begin_nested(&levels[d], PB_TEST_EVENT_TEST_PAYLOAD__NESTED, &levels[d + 1]);
	}
	pz_append_bytes(&levels[d], PB_TEST_EVENT_TEST_PAYLOAD__SINGLE_STRING, fill, fill_len);
	tw_finish_packet(tw);
}

/* The track of thread @t, named "test-thread-<t>". */
static void write_track_descriptor(struct trace_writer *tw, unsigned t)
{
	struct pz_msg *pkt = tw_new_packet(tw);
	struct pz_msg td;
	char name[32];

	snprintf(name, sizeof(name), "test-thread-%u", t);
	pz_append_varint(pkt, PB_TRACE_PACKET__SEQUENCE_FLAGS,
			 PBE_TRACE_PACKET_SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED);
	pz_begin_nested(pkt, PB_TRACE_PACKET__TRACK_DESCRIPTOR, &td);
	pz_append_varint(&td, PB_TRACK_DESCRIPTOR__UUID, 1000 + t);
	pz_append_string(&td, PB_TRACK_DESCRIPTOR__NAME, name);
	pz_end(&td);
	tw_finish_packet(tw);
}

/* TrackEvent{instant "ev<seq>"} with debug annotation raw_ts = its timestamp. */
static void write_track_event(struct trace_writer *tw, unsigned t, uint64_t seq)
{
	struct pz_msg *pkt = tw_new_packet(tw);
	struct pz_msg te, da;
	uint64_t ts = clock_boottime_ns();
	char name[32];

	snprintf(name, sizeof(name), "ev%llu", (unsigned long long)seq);
	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP, ts);
	pz_append_varint(pkt, PB_TRACE_PACKET__SEQUENCE_FLAGS,
			 PBE_TRACE_PACKET_SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE);
	pz_begin_nested(pkt, PB_TRACE_PACKET__TRACK_EVENT, &te);
	pz_append_varint(&te, PB_TRACK_EVENT__TYPE, PBE_TRACK_EVENT_TYPE__TYPE_INSTANT);
	pz_append_varint(&te, PB_TRACK_EVENT__TRACK_UUID, 1000 + t);
	pz_append_string(&te, PB_TRACK_EVENT__NAME, name);
	pz_begin_nested(&te, PB_TRACK_EVENT__DEBUG_ANNOTATIONS, &da);
	pz_append_string(&da, PB_DEBUG_ANNOTATION__NAME, "raw_ts");
	pz_append_int(&da, PB_DEBUG_ANNOTATION__INT_VALUE, (int64_t)ts);
	pz_end(&da);
	pz_end(&te);
	tw_finish_packet(tw);
}

static void worker_done_task(void *user);

/* --flush-while-emitting: acks the flushes every thread has honoured. */
static void flushed_task(void *user)
{
	struct app *app = user;
	uint64_t min = UINT64_MAX;
	size_t k, kept = 0;
	unsigned i;

	if (!app->is_emitting)
		return;
	for (i = 0; i < g_args.threads; i++) {
		uint64_t g = atomic_load(&app->workers[i].flushed_gen);

		if (g < min)
			min = g;
	}
	for (k = 0; k < app->n_pending_flushes; k++) {
		if (app->pending_gens[k] <= min) {
			producer_flush_ack(app->p, app->pending_flushes[k]);
		} else {
			app->pending_flushes[kept] = app->pending_flushes[k];
			app->pending_gens[kept++] = app->pending_gens[k];
		}
	}
	app->n_pending_flushes = kept;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct app *app = w->app;
	struct trace_writer *tw = NULL;
	size_t overhead = PACKET_OVERHEAD_BYTES + 8u * g_args.nested_depth;
	size_t fill_len = g_args.packet_size > overhead ? g_args.packet_size - overhead : 0;
	char *fill = malloc(fill_len + 26);
	uint64_t seq;
	size_t i;

	if (!fill) {
		w->err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < fill_len + 26; i++)
		fill[i] = (char)('a' + i % 26);
	w->err = producer_create_writer(app->p, app->target_buffer, &tw);
	if (w->err < 0)
		goto out;
	if (g_args.track_events)
		write_track_descriptor(tw, w->index);
	for (seq = 0; seq < g_args.packets && !atomic_load(&app->quitting); seq++) {
		if (g_args.track_events)
			write_track_event(tw, w->index, seq);
		else
			write_one(tw, w->index, seq, seq + 1 == g_args.packets, fill, fill_len);
		if (g_args.packet_interval_us) {
			struct timespec ts = {(time_t)(g_args.packet_interval_us / 1000000),
					      (long)(g_args.packet_interval_us % 1000000) * 1000};

			nanosleep(&ts, NULL);
		}
		if (g_args.flush_while_emitting) {
			uint64_t gen = atomic_load(&app->flush_gen);

			if (gen != atomic_load(&w->flushed_gen)) {
				tw_flush(tw);
				atomic_store(&w->flushed_gen, gen);
				evloop_post(app->loop, flushed_task, app);
			}
		}
	}
	/* Flushes, then unregisters the writer. */
	producer_destroy_writer(app->p, tw);
out:
	free(fill);
	atomic_fetch_add(&app->n_done, 1);
	evloop_post(app->loop, worker_done_task, app);
	return NULL;
}

static void start_emitting(struct app *app)
{
	unsigned i;

	app->is_emitting = true;
	atomic_store(&app->n_done, 0);
	for (i = 0; i < g_args.threads; i++) {
		app->workers[i] = (struct worker){.app = app, .index = i};
		if (pthread_create(&app->workers[i].thread, NULL, worker_main, &app->workers[i])) {
			fprintf(stderr, "test_producer: cannot start a thread\n");
			exit(1);
		}
	}
}

static void on_synced_exit(struct producer *p, bool success, void *user)
{
	struct app *app = user;

	(void)p;
	(void)success;
	evloop_quit(app->loop);
}

static void finish_stop(struct app *app)
{
	app->is_stopping = false;
	app->is_running = false;
	if (g_args.notify_stop)
		producer_notify_stopped(app->p, app->instance_id);
	fprintf(stderr, "test_producer: %s stopped after %llu packets\n", g_args.name,
		(unsigned long long)(g_args.threads * g_args.packets));
	if (g_args.exit_after_stop && producer_sync(app->p, on_synced_exit, app) < 0)
		evloop_quit(app->loop);
}

static void worker_done_task(void *user)
{
	struct app *app = user;
	unsigned i;
	size_t k;

	if (atomic_load(&app->n_done) < g_args.threads || !app->is_emitting)
		return;
	for (i = 0; i < g_args.threads; i++) {
		pthread_join(app->workers[i].thread, NULL);
		if (app->workers[i].err < 0) {
			fprintf(stderr, "test_producer: writer %u failed: %d\n", i,
				app->workers[i].err);
			app->exit_code = 1;
		}
	}
	app->is_emitting = false;
	app->has_emitted = true;
	/* Tests wait on this line instead of guessing how long writing takes. */
	fprintf(stderr, "test_producer: %s: every writer is done\n", g_args.name);
	/* Every writer has flushed: the flushes that waited can be acked. */
	for (k = 0; k < app->n_pending_flushes; k++)
		producer_flush_ack(app->p, app->pending_flushes[k]);
	app->n_pending_flushes = 0;
	if (g_args.trigger_when_done) {
		const char *names[1] = {g_args.trigger_when_done};

		if (producer_activate_triggers(app->p, names, 1) < 0)
			fprintf(stderr, "test_producer: cannot send trigger %s\n",
				g_args.trigger_when_done);
	}
	if (app->is_stopping)
		finish_stop(app);
}

/* --------------------------------------------------- callbacks ---- */

static void on_ready_synced(struct producer *p, bool success, void *user)
{
	struct app *app = user;

	(void)p;
	if (!success)
		return;
	app->backoff_ms = 0;
	fprintf(stderr, "test_producer: %s ready, data source %s\n", g_args.name, g_args.ds);
	notify_ready_from_env(NOTIFY_ENV);
}

static void trigger_cb(void *user)
{
	struct app *app = user;
	const char *names[1] = {g_args.trigger};

	if (producer_activate_triggers(app->p, names, 1) < 0)
		fprintf(stderr, "test_producer: cannot send trigger %s\n", g_args.trigger);
}

static void on_connected(struct producer *p, void *user)
{
	struct app *app = user;

	/* The registration has reached the service once Sync answers. */
	producer_sync(p, on_ready_synced, app);
	if (g_args.trigger)
		evloop_add_timer(app->loop, g_args.trigger_after_ms, 0, trigger_cb, app, NULL);
}

static int start_producer(struct app *app);

/* --reconnect: after a lost connection, wait and connect again. */
static void reconnect_cb(void *user)
{
	struct app *app = user;
	unsigned i;

	app->reconnect_timer = 0;
	if (app->is_emitting) {
		for (i = 0; i < g_args.threads; i++)
			pthread_join(app->workers[i].thread, NULL);
		app->is_emitting = false;
	}
	app->is_running = app->is_stopping = false;
	app->n_pending_flushes = 0;
	producer_destroy(app->p);
	app->p = NULL;
	if (start_producer(app) == 0)
		return;
	app->backoff_ms = app->backoff_ms ? PFC_MIN(app->backoff_ms * 2, 2000u) : 100u;
	evloop_add_timer(app->loop, app->backoff_ms, 0, reconnect_cb, app, &app->reconnect_timer);
}

static void on_disconnected(struct producer *p, int err, void *user)
{
	struct app *app = user;

	(void)p;
	fprintf(stderr, "test_producer: disconnected from the service (%d)\n", err);
	if (g_args.reconnect) {
		app->backoff_ms = app->backoff_ms ? PFC_MIN(app->backoff_ms * 2, 2000u) : 100u;
		if (!app->reconnect_timer)
			evloop_add_timer(app->loop, app->backoff_ms, 0, reconnect_cb, app,
					 &app->reconnect_timer);
		return;
	}
	app->exit_code = 1;
	evloop_quit(app->loop);
}

static void on_start(struct producer *p, uint64_t id, const Perfetto__Protos__DataSourceConfig *cfg,
		     void *user)
{
	struct app *app = user;

	if (app->is_running || app->is_emitting) {
		fprintf(stderr, "test_producer: instance %llu ignored, one is running\n",
			(unsigned long long)id);
		return;
	}
	app->instance_id = id;
	app->target_buffer = (uint16_t)cfg->target_buffer;
	app->is_running = true;
	app->has_emitted = false;
	if (g_args.emit_on_start)
		start_emitting(app);
	if (g_args.notify_start)
		producer_notify_started(p, id);
}

static void on_stop(struct producer *p, uint64_t id, void *user)
{
	struct app *app = user;

	(void)p;
	if (!app->is_running || id != app->instance_id)
		return;
	app->is_stopping = true;
	if (!app->has_emitted && !app->is_emitting)
		start_emitting(app);
	if (!app->is_emitting)
		finish_stop(app);
}

static void on_flush(struct producer *p, const uint64_t *ids, size_t n, uint64_t request_id,
		     uint64_t flags, void *user)
{
	struct app *app = user;

	(void)ids;
	(void)n;
	(void)flags;
	if (!app->is_emitting) {
		producer_flush_ack(p, request_id);
		return;
	}
	/* Writers belong to their threads: ack when they are done. */
	if (app->n_pending_flushes == app->cap_pending_flushes) {
		size_t cap = app->cap_pending_flushes ? 2 * app->cap_pending_flushes : 8;
		uint64_t *grown = realloc(app->pending_flushes, cap * sizeof(*grown));
		uint64_t *gens = grown ? realloc(app->pending_gens, cap * sizeof(*gens)) : NULL;

		if (grown)
			app->pending_flushes = grown;
		if (!gens) {
			producer_flush_ack(p, request_id);
			return;
		}
		app->pending_gens = gens;
		app->cap_pending_flushes = cap;
	}
	app->pending_gens[app->n_pending_flushes] = atomic_fetch_add(&app->flush_gen, 1) + 1;
	app->pending_flushes[app->n_pending_flushes++] = request_id;
}

static void on_signal(int signo, void *user)
{
	struct app *app = user;

	(void)signo;
	atomic_store(&app->quitting, true);
	evloop_quit(app->loop);
}

/* Connects and registers the data source. Return: 0 or -errno (printed). */
static int start_producer(struct app *app)
{
	struct producer_callbacks cbs = {0};
	struct producer_ds_desc ds = {0};
	struct producer_opts opts = {0};
	int err;

	cbs.on_connected = on_connected;
	cbs.on_disconnected = on_disconnected;
	cbs.start_ds = on_start;
	cbs.stop_ds = on_stop;
	cbs.flush = on_flush;
	opts.full_policy = ARB_FULL_STALL;
	opts.smb_size_hint_bytes = (uint32_t)(g_args.shm_kb * 1024);
	opts.page_size_hint_bytes = (uint32_t)(g_args.page_kb * 1024);
	opts.provide_smb = g_args.own_smb;
	opts.smb_scraping_mode = g_args.smb_scraping ? 1 : 0;
	err = producer_connect(app->loop, g_args.sock, g_args.name, &opts, &cbs, app, &app->p);
	if (err < 0) {
		fprintf(stderr, "test_producer: cannot connect to %s: %s\n",
			g_args.sock ? g_args.sock : "the default producer socket", strerror(-err));
		return err;
	}
	ds.name = g_args.ds;
	ds.will_notify_on_start = g_args.notify_start;
	ds.will_notify_on_stop = g_args.notify_stop;
	err = producer_register_ds(app->p, &ds);
	if (err < 0) {
		fprintf(stderr, "test_producer: bad data source %s: %s\n", g_args.ds,
			strerror(-err));
		producer_destroy(app->p);
		app->p = NULL;
		return err;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct app app = {0};

	parse_args(argc, argv);
	if (evloop_create(&app.loop) < 0) {
		fprintf(stderr, "test_producer: cannot create the event loop\n");
		return 1;
	}
	evloop_add_signal(app.loop, SIGINT, on_signal, &app, NULL);
	evloop_add_signal(app.loop, SIGTERM, on_signal, &app, NULL);
	if (start_producer(&app) < 0) {
		if (!g_args.reconnect)
			return 1;
		app.backoff_ms = 100;
		evloop_add_timer(app.loop, app.backoff_ms, 0, reconnect_cb, &app,
				 &app.reconnect_timer);
	}
	evloop_run(app.loop);
	if (app.is_emitting) {
		struct timespec until;
		unsigned i;

		/* A writer stuck on a full shared memory that a dead traced
		 * never drains would hold the exit for ever: 2 s, then go. */
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 2;
		for (i = 0; i < g_args.threads; i++) {
			if (pthread_timedjoin_np(app.workers[i].thread, NULL, &until) != 0) {
				fprintf(stderr, "test_producer: writers still blocked, exiting\n");
				fflush(stderr);
				_exit(app.exit_code);
			}
		}
	}
	producer_destroy(app.p);
	evloop_destroy(app.loop);
	free(app.pending_flushes);
	free(app.pending_gens);
	return app.exit_code;
}
