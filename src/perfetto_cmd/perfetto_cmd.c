// SPDX-License-Identifier: Apache-2.0
/*
 * perfetto_cmd.c - the `perfetto` command: records a trace (config file or
 * light mode) through the consumer socket and writes it to a file, and
 * the other modes (query, attach/detach, clone). One event loop drives the
 * consumer connection, the signals and the progress line.
 */
#include "perfetto_cmd/perfetto_cmd.h"

#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/evloop.h"
#include "base/file.h"
#include "base/log.h"
#include "base/sock_default.h"
#include "base/version.h"
#include "common/trace_stats.pb-c.h"
#include "config/trace_config.pb-c.h"
#include "pb_fields.h"
#include "perfetto_cmd/cmd_args.h"
#include "perfetto_cmd/cmd_config.h"
#include "perfetto_cmd/cmd_query.h"
#include "perfetto_cmd/cmd_rotate.h"
#include "perfetto_cmd/cmd_snapshot.h"
#include "protozero/protozero.h"
#include "tracing/consumer.h"

/* How long --background-wait waits for the data sources to start. */
#define CMD_BACKGROUND_WAIT_MS 30000
/* How often the progress line refreshes. */
#define CMD_PROGRESS_PERIOD_MS 1000

static struct cmd_args g_args;

struct run {
	struct evloop *loop;
	struct consumer *c;
	struct buf config;
	uint32_t duration_ms;
	bool write_into_file;     /* the service writes the output itself */
	int out_fd;
	bool out_is_stdout;
	struct trace_file_writer writer;
	bool writer_open;
	uint64_t start_ms;
	uint64_t bytes_in_buffers;
	bool stopping;            /* a signal asked us to stop */
	bool tracing_ended;
	bool progress;            /* stderr is a terminal */
	bool progress_shown;
	int bg_ready_fd;          /* --background-wait: tell the parent */
	int exit_code;
	bool clone_snapshot;      /* trigger_mode CLONE_SNAPSHOT: write OUT.<n> per trigger */
	struct cmd_snapshots *snaps;
	bool quit_when_idle;      /* finished, but snapshots are still being written */
	bool free_when_idle;      /* the session ended: free it once they are written */
	/* --rotate-*: periodic reads into OUT.<n>. */
	struct cmd_rotate_opts rot_opts;
	struct cmd_rotate *rot;
	uint64_t drain_timer;
	bool rot_reading;         /* a periodic read is in flight */
	bool rot_final_pending;   /* the session ended during that read */
};

static void finish(struct run *r, int code)
{
	r->exit_code = code;
	if (!cmd_snapshots_idle(r->snaps)) {
		r->quit_when_idle = true;
		return;
	}
	evloop_quit(r->loop);
}

static void on_freed(int err, void *user);

static void on_snapshots_idle(void *user)
{
	struct run *r = user;

	if (r->free_when_idle) {
		/* The session outlived its snapshots; now it can go. */
		r->free_when_idle = false;
		if (consumer_free_buffers(r->c, on_freed, r) < 0)
			finish(r, r->exit_code);
		return;
	}
	if (r->quit_when_idle)
		evloop_quit(r->loop);
}

static void clear_progress(struct run *r)
{
	if (r->progress_shown) {
		fprintf(stderr, "\r\033[K");
		r->progress_shown = false;
	}
}

/* ------------------------------------------------------------ output ---- */

static int open_output(struct run *r)
{
	int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;

	if (!g_args.out_path) {
		r->out_fd = -1;
		return 0;
	}
	if (strcmp(g_args.out_path, "-") == 0) {
		r->out_fd = STDOUT_FILENO;
		r->out_is_stdout = true;
		return 0;
	}
	if (g_args.no_clobber)
		flags |= O_EXCL;
	r->out_fd = open(g_args.out_path, flags, 0600);
	if (r->out_fd < 0) {
		if (errno == EEXIST)
			fprintf(stderr, "perfetto: %s exists and --no-clobber was given\n",
				g_args.out_path);
		else
			fprintf(stderr, "perfetto: cannot open %s: %s\n", g_args.out_path,
				strerror(errno));
		return -1;
	}
	return 0;
}

static void on_packet(const uint8_t *packet, size_t len, void *user)
{
	struct run *r = user;

	trace_file_write_packet(&r->writer, packet, len);
}

static void on_freed(int err, void *user)
{
	struct run *r = user;

	(void)err;
	finish(r, r->exit_code);
}

static void on_read_done(int err, void *user)
{
	struct run *r = user;
	int werr = trace_file_writer_flush(&r->writer);

	clear_progress(r);
	if (err < 0)
		fprintf(stderr, "perfetto: reading the trace failed: %s\n", strerror(-err));
	if (werr < 0)
		fprintf(stderr, "perfetto: writing %s failed: %s\n", g_args.out_path, strerror(-werr));
	if (!err && !werr)
		fprintf(stderr, "perfetto: wrote %llu bytes (%llu packets) to %s\n",
			(unsigned long long)r->writer.bytes_written,
			(unsigned long long)r->writer.packets,
			r->out_is_stdout ? "stdout" : g_args.out_path);
	r->exit_code = err || werr ? 1 : 0;
	/* Snapshots still queued clone the stopped session: keep it until then. */
	if (!cmd_snapshots_idle(r->snaps)) {
		r->free_when_idle = true;
		return;
	}
	if (consumer_free_buffers(r->c, on_freed, r) < 0)
		finish(r, r->exit_code);
}

static void on_rot_packet(const uint8_t *packet, size_t len, void *user)
{
	struct run *r = user;

	cmd_rotate_packet(r->rot, packet, len);
}

/* The last read of a rotating session: close the files, free the session. */
static void on_rot_final_done(int err, void *user)
{
	struct run *r = user;

	clear_progress(r);
	if (err < 0)
		fprintf(stderr, "perfetto: reading the trace failed: %s\n", strerror(-err));
	cmd_rotate_destroy(r->rot);
	r->rot = NULL;
	if (err < 0)
		r->exit_code = 1;
	if (consumer_free_buffers(r->c, on_freed, r) < 0)
		finish(r, r->exit_code);
}

static void rot_final_read(struct run *r)
{
	if (consumer_read_buffers(r->c, on_rot_packet, on_rot_final_done, r) < 0) {
		fprintf(stderr, "perfetto: cannot read the buffers\n");
		cmd_rotate_destroy(r->rot);
		r->rot = NULL;
		finish(r, 1);
	}
}

static void on_rot_read_done(int err, void *user)
{
	struct run *r = user;

	r->rot_reading = false;
	if (err < 0 && err != -ECONNRESET)
		fprintf(stderr, "perfetto: reading the buffers failed: %s\n", strerror(-err));
	if (r->rot_final_pending) {
		r->rot_final_pending = false;
		rot_final_read(r);
	}
}

/* After the drain's flush (done or timed out): read what the producers committed. */
static void on_drain_flushed(int err, void *user)
{
	struct run *r = user;

	(void)err;
	if (!r->rot || consumer_read_buffers(r->c, on_rot_packet, on_rot_read_done, r) < 0)
		on_rot_read_done(0, r);
}

/*
 * Every drain period: maybe cut, then flush (so each producer's current
 * chunk, e.g. ftrace data of the last moments, lands in the file of its
 * time rather than a later one), then read.
 */
static void on_drain(void *user)
{
	struct run *r = user;
	/* FlushFlags: reason periodic, initiator perfetto_cmd. */
	const uint64_t flags = 1u | (2u << 4);

	if (!r->rot || r->rot_reading || r->tracing_ended || r->stopping)
		return;
	if (cmd_rotate_before_read(r->rot) < 0) {
		/* The disk is full (logged): end the session, keep what is written. */
		r->stopping = true;
		r->exit_code = 2;
		if (consumer_disable_tracing(r->c) < 0)
			finish(r, 1);
		return;
	}
	r->rot_reading = true;
	if (consumer_flush(r->c, cmd_rotate_drain_period_ms(&r->rot_opts), flags, on_drain_flushed,
			   r) < 0)
		on_drain_flushed(0, r);
}

/* Reads the buffers (unless the service already wrote the file). */
static void collect_trace(struct run *r)
{
	if (r->rot) {
		if (r->drain_timer) {
			evloop_del(r->loop, r->drain_timer);
			r->drain_timer = 0;
		}
		if (r->rot_reading)
			r->rot_final_pending = true;
		else
			rot_final_read(r);
		return;
	}
	if (r->write_into_file) {
		struct stat st;

		clear_progress(r);
		if (fstat(r->out_fd, &st) == 0 && !r->out_is_stdout)
			fprintf(stderr, "perfetto: the service wrote %lld bytes to %s\n",
				(long long)st.st_size, g_args.out_path);
		if (consumer_free_buffers(r->c, on_freed, r) < 0)
			finish(r, 0);
		return;
	}
	if (!r->writer_open) {
		if (trace_file_writer_init(&r->writer, r->out_fd, 0) < 0) {
			finish(r, 1);
			return;
		}
		r->writer_open = true;
	}
	if (consumer_read_buffers(r->c, on_packet, on_read_done, r) < 0) {
		fprintf(stderr, "perfetto: cannot read the buffers\n");
		finish(r, 1);
	}
}

static void on_disabled(const char *error, void *user)
{
	struct run *r = user;

	r->tracing_ended = true;
	if (error && *error) {
		clear_progress(r);
		fprintf(stderr, "perfetto: the service stopped the session: %s\n", error);
		r->exit_code = 1;
		/* A session that never started has nothing to read. */
		if (!r->start_ms) {
			finish(r, 1);
			return;
		}
	}
	collect_trace(r);
}

/* ---------------------------------------------------------- progress ---- */

static void on_stats(int err, const uint8_t *data, size_t len, void *user)
{
	Perfetto__Protos__TraceStats *st;
	struct run *r = user;
	uint64_t bytes = 0;
	size_t i;

	if (err || !data)
		return;
	st = perfetto__protos__trace_stats__unpack(NULL, len, data);
	if (!st)
		return;
	for (i = 0; i < st->n_buffer_stats; i++)
		bytes += st->buffer_stats[i]->bytes_written;
	perfetto__protos__trace_stats__free_unpacked(st, NULL);
	r->bytes_in_buffers = bytes;
}

static void on_progress(void *user)
{
	struct run *r = user;
	double elapsed;

	if (r->tracing_ended || r->stopping || !r->start_ms)
		return;
	consumer_get_trace_stats(r->c, on_stats, r);
	elapsed = (double)(clock_monotonic_ns() / 1000000 - r->start_ms) / 1000.0;
	if (r->duration_ms)
		fprintf(stderr, "\r\033[Krecording: %.0f s of %.0f s, %.1f MB in buffers (Ctrl-C stops)",
			elapsed, r->duration_ms / 1000.0, r->bytes_in_buffers / 1e6);
	else
		fprintf(stderr, "\r\033[Krecording: %.0f s, %.1f MB in buffers (Ctrl-C stops)", elapsed,
			r->bytes_in_buffers / 1e6);
	r->progress_shown = true;
}

/* ---------------------------------------------------------- tracing ---- */

static void on_detached(int err, void *user)
{
	struct run *r = user;

	if (err)
		fprintf(stderr, "perfetto: cannot detach with key '%s'\n", g_args.detach_key);
	else
		fprintf(stderr, "perfetto: session detached; reattach with --attach=%s\n",
			g_args.detach_key);
	finish(r, err ? 1 : 0);
}

static void notify_started(struct run *r)
{
	if (g_args.notify_fd >= 0) {
		if (write(g_args.notify_fd, "\0", 1) != 1)
			LOG_W("cannot write to --notify-fd");
		close(g_args.notify_fd);
		g_args.notify_fd = -1;
	}
	if (r->bg_ready_fd >= 0) {
		if (write(r->bg_ready_fd, "1", 1) != 1)
			LOG_W("cannot tell the parent process we started");
		close(r->bg_ready_fd);
		r->bg_ready_fd = -1;
	}
}

static void on_observed(int err, const uint8_t *events, size_t len, bool is_last, void *user)
{
	struct run *r = user;

	(void)is_last;
	if (err)
		return;
	/* A clone trigger is the only other event we ask for. */
	if (!r->snaps || cmd_snapshots_on_event(r->snaps, events, len) == 0)
		notify_started(r);
}

static void start_tracing(struct run *r)
{
	int out_fd = r->write_into_file ? r->out_fd : -1;

	if (consumer_enable_tracing(r->c, r->config.data, r->config.len, out_fd, on_disabled, r) < 0) {
		fprintf(stderr, "perfetto: cannot start the session\n");
		finish(r, 1);
		return;
	}
	r->start_ms = clock_monotonic_ns() / 1000000;
	if (g_args.detach_key) {
		consumer_detach(r->c, g_args.detach_key, on_detached, r);
		return;
	}
	if (r->rot_opts.out_path) {
		uint32_t ms = cmd_rotate_drain_period_ms(&r->rot_opts);

		if (r->duration_ms)
			r->rot_opts.end_ms = r->start_ms + r->duration_ms;
		if (cmd_rotate_create(&r->rot_opts, &r->rot) < 0 ||
		    evloop_add_timer(r->loop, ms, ms, on_drain, r, &r->drain_timer) < 0) {
			consumer_disable_tracing(r->c);
			finish(r, 1);
			return;
		}
	}
	if (r->clone_snapshot) {
		/* TYPE_CLONE_TRIGGER_HIT, and TYPE_ALL_DATA_SOURCES_STARTED for -D. */
		static const int types[] = {4, 2};

		if (consumer_observe_events(r->c, types, g_args.background_wait ? 2 : 1, on_observed,
					    r) < 0) {
			fprintf(stderr, "perfetto: cannot observe clone triggers\n");
			finish(r, 1);
			return;
		}
		if (!g_args.background_wait)
			notify_started(r);
	} else if (g_args.background_wait) {
		static const int types[] = {2 /* TYPE_ALL_DATA_SOURCES_STARTED */};

		if (consumer_observe_events(r->c, types, 1, on_observed, r) < 0)
			notify_started(r);
	} else {
		notify_started(r);
	}
	if (r->progress)
		evloop_add_timer(r->loop, CMD_PROGRESS_PERIOD_MS, CMD_PROGRESS_PERIOD_MS, on_progress, r,
				 NULL);
}

static void on_signal(int signo, void *user)
{
	struct run *r = user;

	(void)signo;
	if (r->stopping) {
		fprintf(stderr, "\nperfetto: second signal, exiting without writing the trace\n");
		r->exit_code = 1;
		evloop_quit(r->loop);
		return;
	}
	r->stopping = true;
	clear_progress(r);
	fprintf(stderr, "perfetto: stopping the session and writing the trace...\n");
	if (r->tracing_ended || consumer_disable_tracing(r->c) < 0)
		finish(r, 1);
}

/* ------------------------------------------------------------- modes ---- */

static void on_attached(int err, const uint8_t *cfg, size_t len, void *user)
{
	struct run *r = user;

	if (err) {
		if (g_args.mode == CMD_MODE_IS_DETACHED) {
			finish(r, 2);
			return;
		}
		fprintf(stderr, "perfetto: no detached session with key '%s'\n", g_args.attach_key);
		finish(r, 1);
		return;
	}
	(void)cfg;
	(void)len;
	if (g_args.mode == CMD_MODE_IS_DETACHED) {
		/* It exists: leave it detached as it was. */
		consumer_detach(r->c, g_args.attach_key, on_freed, r);
		r->exit_code = 0;
		return;
	}
	r->start_ms = clock_monotonic_ns() / 1000000;
	if (g_args.stop_after_attach) {
		if (consumer_disable_tracing(r->c) < 0)
			finish(r, 1);
		/* on_disabled follows once the session has stopped. */
		if (consumer_enable_tracing_notify(r->c, on_disabled, r) < 0)
			collect_trace(r);
		return;
	}
	if (g_args.detach_key) {
		consumer_detach(r->c, g_args.detach_key, on_detached, r);
		return;
	}
	if (consumer_enable_tracing_notify(r->c, on_disabled, r) < 0)
		finish(r, 1);
}

static void on_cloned(const struct consumer_clone_result *res, void *user)
{
	struct run *r = user;

	if (res->err || !res->success) {
		fprintf(stderr, "perfetto: clone failed: %s\n",
			res->error ? res->error : strerror(res->err ? -res->err : EIO));
		finish(r, 1);
		return;
	}
	r->start_ms = 1;
	collect_trace(r);
}

static void on_state(int err, const Perfetto__Protos__TracingServiceState *st, const uint8_t *data,
		     size_t len, void *user)
{
	struct run *r = user;

	if (err || !st) {
		fprintf(stderr, "perfetto: cannot query the service: %s\n", strerror(err ? -err : EIO));
		finish(r, 1);
		return;
	}
	if (g_args.query_raw) {
		if (file_write_all(STDOUT_FILENO, data, len) < 0)
			r->exit_code = 1;
		finish(r, r->exit_code);
		return;
	}
	cmd_query_print(stdout, st, g_args.query_long);
	finish(r, 0);
}

/*
 * Before a session starts: if other machines offer data sources this config
 * asks for but records only on the host, say so once. The session starts
 * either way (the config may mean it).
 */
static void on_preflight_state(int err, const Perfetto__Protos__TracingServiceState *st,
			       const uint8_t *data, size_t len, void *user)
{
	struct run *r = user;
	Perfetto__Protos__TraceConfig *cfg;
	char names[512];
	size_t n;

	(void)data;
	(void)len;
	if (!err && st &&
	    (cfg = perfetto__protos__trace_config__unpack(NULL, r->config.len, r->config.data))) {
		n = cmd_query_unselected_machines(st, cfg, names, sizeof(names));
		if (n)
			fprintf(stderr,
				"perfetto: note: data sources this config asks for are also offered "
				"by %s %s (through traced_relay), but the config records them only "
				"on the host. Set trace_all_machines: true, or name the machine in a "
				"data source's machine_name_filter, to record %s too.\n",
				n == 1 ? "machine" : "machines", names, n == 1 ? "it" : "them");
		else if (cfg->has_trace_all_machines && cfg->trace_all_machines &&
			 !cmd_query_has_remote_producers(st))
			fprintf(stderr, "perfetto: note: trace_all_machines is set, but no producer "
					"of another machine is connected (through traced_relay): "
					"only this machine will be recorded.\n");
		perfetto__protos__trace_config__free_unpacked(cfg, NULL);
	}
	start_tracing(r);
}

static void on_connected(struct consumer *c, void *user)
{
	struct run *r = user;
	struct consumer_clone_args ca;

	(void)c;
	switch (g_args.mode) {
	case CMD_MODE_QUERY:
		if (consumer_query_service_state(r->c, false, on_state, r) < 0)
			finish(r, 1);
		break;
	case CMD_MODE_ATTACH:
	case CMD_MODE_IS_DETACHED:
		if (consumer_attach(r->c, g_args.attach_key, on_attached, r) < 0)
			finish(r, 1);
		break;
	case CMD_MODE_CLONE:
		memset(&ca, 0, sizeof(ca));
		ca.session_id = g_args.clone_id;
		ca.unique_session_name = g_args.clone_name;
		ca.for_bugreport = g_args.clone_for_bugreport;
		if (consumer_clone_session(r->c, &ca, on_cloned, r) < 0)
			finish(r, 1);
		break;
	default:
		if (consumer_query_service_state(r->c, false, on_preflight_state, r) < 0)
			start_tracing(r);
	}
}

static void on_disconnected(struct consumer *c, int err, void *user)
{
	struct run *r = user;

	(void)c;
	clear_progress(r);
	if (r->exit_code == 0 && !r->tracing_ended)
		fprintf(stderr, "perfetto: lost the connection to the tracing service: %s\n",
			err ? strerror(-err) : "closed");
	finish(r, r->exit_code ? r->exit_code : 1);
}

/* --add-attribute k=v: appended as TraceConfig.trace_attributes (merged by parsers). */
static int add_attributes(struct buf *cfg)
{
	uint8_t tmp[4096];
	struct pz_stream s;
	struct pz_msg root, attrs, a;
	size_t i;

	if (!g_args.n_attributes)
		return 0;
	pz_stream_init_flat(&s, tmp, sizeof(tmp));
	pz_msg_begin(&root, &s, NULL);
	pz_begin_nested(&root, PB_TRACE_CONFIG__TRACE_ATTRIBUTES, &attrs);
	for (i = 0; i < g_args.n_attributes; i++) {
		const char *kv = g_args.attributes[i], *eq = strchr(kv, '=');

		pz_begin_nested(&attrs, PB_TRACE_ATTRIBUTES__ATTRIBUTE, &a);
		pz_append_bytes(&a, PB_TRACE_ATTRIBUTES_ATTRIBUTE__KEY, kv, eq ? (size_t)(eq - kv) : strlen(kv));
		pz_append_string(&a, PB_TRACE_ATTRIBUTES_ATTRIBUTE__STRING_VALUE, eq ? eq + 1 : "");
		pz_end(&a);
	}
	pz_end(&root);
	if (!pz_stream_ok(&s)) {
		fprintf(stderr, "perfetto: --add-attribute values are too long\n");
		return -1;
	}
	return buf_append(cfg, tmp, (size_t)(s.cur - tmp));
}

static int build_config(struct run *r)
{
	Perfetto__Protos__TraceConfig *cfg;
	char err[512];
	int rc;

	if (g_args.config_path) {
		rc = cmd_config_load(g_args.config_path, g_args.config_is_text, &r->config, err,
				     sizeof(err));
	} else {
		struct cmd_light_opts o = {
			.time = g_args.time,
			.buffer_size = g_args.buffer_size,
			.max_file_size = g_args.max_file_size,
			.categories = (const char *const *)g_args.categories,
			.n_categories = g_args.n_categories,
			.cpu_profile_hz = g_args.cpu_profile_hz,
		};

		rc = cmd_config_from_light_opts(&o, &r->config, err, sizeof(err));
	}
	if (rc < 0) {
		fprintf(stderr, "perfetto: %s\n", err);
		return -1;
	}
	if (add_attributes(&r->config) < 0)
		return -1;
	if (g_args.rotate_seconds || g_args.rotate_mb) {
		r->rot_opts.out_path = g_args.out_path;
		r->rot_opts.rotate_ms = g_args.rotate_seconds * 1000;
		r->rot_opts.rotate_bytes = g_args.rotate_mb << 20;
		r->rot_opts.keep = g_args.keep;
		r->rot_opts.no_clobber = g_args.no_clobber;
		if (cmd_rotate_prepare_config(&r->rot_opts, &r->config, err, sizeof(err)) < 0) {
			fprintf(stderr, "perfetto: %s\n", err);
			return -1;
		}
	}
	cfg = perfetto__protos__trace_config__unpack(NULL, r->config.len, r->config.data);
	if (!cfg) {
		fprintf(stderr, "perfetto: the config does not decode as a TraceConfig\n");
		return -1;
	}
	r->duration_ms = cfg->has_duration_ms ? cfg->duration_ms : 0;
	/* With output_path the service creates the file; otherwise we pass ours. */
	r->write_into_file = cfg->has_write_into_file && cfg->write_into_file &&
			     !(cfg->output_path && *cfg->output_path);
	r->clone_snapshot =
		cfg->trigger_config && cfg->trigger_config->has_trigger_mode &&
		cfg->trigger_config->trigger_mode ==
			PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__CLONE_SNAPSHOT;
	perfetto__protos__trace_config__free_unpacked(cfg, NULL);
	if (r->clone_snapshot && (!g_args.out_path || strcmp(g_args.out_path, "-") == 0)) {
		fprintf(stderr, "perfetto: CLONE_SNAPSHOT triggers need -o FILE (snapshots go to "
				"FILE.0, FILE.1, ...)\n");
		return -1;
	}
	if (r->write_into_file && r->out_is_stdout) {
		fprintf(stderr, "perfetto: a write_into_file config cannot write to stdout\n");
		return -1;
	}
	return 0;
}

/* -d / -D: fork; the parent prints the child's PID and exits. */
static int go_background(struct run *r)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0) {
		close(fds[1]);
		if (g_args.background_wait) {
			if (read(fds[0], &c, 1) != 1) {
				fprintf(stderr, "perfetto: the background session failed to start\n");
				exit(1);
			}
		}
		printf("%d\n", (int)pid);
		fflush(stdout);
		exit(0);
	}
	close(fds[0]);
	setsid();
	r->bg_ready_fd = fds[1];
	r->progress = false;
	return 0;
}

int perfetto_cmd_main(int argc, char **argv)
{
	struct consumer_callbacks cbs = {on_connected, on_disconnected};
	struct run r;
	char err[512];
	int rc;

	/* IPC frames are decoded into ~128 KiB allocations; keep them on the
	 * heap instead of an mmap/munmap (and page faults) per frame. */
	mallopt(M_MMAP_THRESHOLD, 8 << 20);
	log_set_prefix("perfetto");
	log_init_from_env();
	memset(&r, 0, sizeof(r));
	r.bg_ready_fd = -1;
	r.out_fd = -1;
	buf_init(&r.config);
	if (cmd_args_parse(argc, argv, &g_args, err, sizeof(err)) < 0) {
		fprintf(stderr, "perfetto: %s\n", err);
		return 1;
	}
	switch (g_args.mode) {
	case CMD_MODE_HELP:
		cmd_args_usage(stdout);
		return 0;
	case CMD_MODE_VERSION:
		printf("%s\n", PFC_VERSION_STRING);
		return 0;
	default:
		break;
	}
	if (g_args.mode == CMD_MODE_TRACE && build_config(&r) < 0)
		return 1;
	if (g_args.mode == CMD_MODE_TRACE) {
		/* A config with activate_triggers fires them and starts no session. */
		Perfetto__Protos__TraceConfig *cfg =
			perfetto__protos__trace_config__unpack(NULL, r.config.len, r.config.data);

		if (cfg && cfg->n_activate_triggers) {
			rc = cmd_send_triggers((const char *const *)cfg->activate_triggers,
					       cfg->n_activate_triggers);
			perfetto__protos__trace_config__free_unpacked(cfg, NULL);
			buf_fini(&r.config);
			return rc;
		}
		if (cfg)
			perfetto__protos__trace_config__free_unpacked(cfg, NULL);
		if (!g_args.out_path && !g_args.detach_key) {
			fprintf(stderr, "perfetto: --out is required (use '-o -' for stdout)\n");
			buf_fini(&r.config);
			return 1;
		}
	}
	/* Rotation writes OUT.<n>, never OUT itself. */
	if ((g_args.mode == CMD_MODE_TRACE || g_args.mode == CMD_MODE_ATTACH ||
	     g_args.mode == CMD_MODE_CLONE) && !r.rot_opts.out_path && open_output(&r) < 0)
		return 1;
	if (r.write_into_file && r.out_fd < 0 && g_args.mode == CMD_MODE_TRACE) {
		fprintf(stderr, "perfetto: write_into_file needs --out\n");
		return 1;
	}
	r.progress = isatty(STDERR_FILENO) && !r.out_is_stdout && g_args.mode == CMD_MODE_TRACE;
	if (g_args.background && go_background(&r) < 0) {
		fprintf(stderr, "perfetto: cannot fork: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	rc = evloop_create(&r.loop);
	if (rc < 0)
		return 1;
	if (r.clone_snapshot &&
	    cmd_snapshots_create(r.loop, g_args.out_path, on_snapshots_idle, &r, &r.snaps) < 0)
		return 1;
	evloop_add_signal(r.loop, SIGINT, on_signal, &r, NULL);
	evloop_add_signal(r.loop, SIGTERM, on_signal, &r, NULL);
	rc = consumer_connect(r.loop, sock_default_consumer(), &cbs, &r, &r.c);
	if (rc < 0) {
		fprintf(stderr, "perfetto: cannot connect to the tracing service at %s: %s "
				"(is traced running?)\n",
			sock_default_consumer(), strerror(-rc));
		evloop_destroy(r.loop);
		return 1;
	}
	evloop_run(r.loop);
	clear_progress(&r);
	cmd_snapshots_destroy(r.snaps);
	cmd_rotate_destroy(r.rot);
	consumer_destroy(r.c);
	if (r.writer_open)
		trace_file_writer_fini(&r.writer);
	evloop_destroy(r.loop);
	if (r.out_fd > STDERR_FILENO)
		close(r.out_fd);
	buf_fini(&r.config);
	return r.exit_code;
}
