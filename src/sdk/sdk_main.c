// SPDX-License-Identifier: Apache-2.0
/*
 * sdk_main.c - the SDK's lifecycle and its control thread. pfc_init()
 * starts one thread running an event loop that owns everything but the
 * writers: the producer connection (reconnecting with backoff while the
 * service is away), the "track_event" data source and its instances (a
 * slot each, whose bit the categories' flags carry), flushes, idle-chunk
 * reclaim and clock refinement. Application threads never wait for it.
 *
 * After fork() the child has no control thread and shares the parent's
 * shared memory: it forgets the parent's state (events are off, the
 * parent's socket is closed so the service sees the parent alone) and may
 * call pfc_init() again to trace on its own.
 */
#include "sdk/sdk_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/evloop.h"
#include "base/log.h"
#include "tracing/producer.h"

struct sdk sdk_g = {.lock = PTHREAD_MUTEX_INITIALIZER};

#define DATA_SOURCE_NAME "track_event"
/* The SMB the SDK asks for: room for a chunk per thread of many threads. */
#define DEFAULT_SHM_BYTES (4u * 1024 * 1024)
#define RECLAIM_PERIOD_MS 100u
#define REFINE_PERIOD_MS 1000u
/* Completed chunks wait this long to be committed together: a commit per
 * 4 KiB chunk woke the control thread onto the writers' CPUs every few
 * microseconds under load, and doubled the median cost of an event
 * (bench/sdk_bench). A writer that finds no free chunk, a flush and half
 * the buffer pending commit at once. */
#define BATCH_COMMITS_MS 5u
/* ... or once 256 KiB wait (64 chunks of 4 KiB): the writer that completes one packs
 * the commit (a few microseconds, under the lock the others return
 * chunks with), so a writer never waits behind a huge batch. */
#define BATCH_COMMIT_BYTES (256u * 1024)
/* pfc_init() of the in-process backend waits this long for its session. */
#define INPROC_START_WAIT_MS 3000u
/* pfc_shutdown()'s own bound on flushing. */
#define SHUTDOWN_FLUSH_MS 1000u

/* Settings (before pfc_init) and the control thread's state. */
static struct {
	char *socket;
	uint32_t shm_kb;
	char *inproc_path;
	uint8_t *inproc_cfg;
	size_t inproc_cfg_len;
	bool inproc_cfg_set;
	char *producer_name;

	struct evloop *loop;
	pthread_t thread;
	struct producer *p;          /* loop thread's view (also while connecting) */
	bool connected;
	bool stopping;
	uint32_t backoff_ms;
	uint64_t retry_timer;
	bool has_retry_timer;
	char inproc_socket[96];
	/* pfc_init() of the in-process backend waits for a started instance. */
	pthread_cond_t started_cond;
	bool any_started;
	/* Shutdown: the loop thread says when it is done. */
	bool shutdown_done;
	pthread_cond_t done_cond;
	bool atexit_registered;
} g = {
	.started_cond = PTHREAD_COND_INITIALIZER,
	.done_cond = PTHREAD_COND_INITIALIZER,
};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static uint64_t g_process_uuid;
static pid_t g_process_uuid_pid;

void sdk_stat_add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

uint64_t sdk_process_uuid(void)
{
	pid_t pid = getpid();

	pthread_mutex_lock(&sdk_g.lock);
	if (!g_process_uuid || g_process_uuid_pid != pid) {
		uint64_t r = 0;

		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
			r = clock_get_ns(CLOCK_MONOTONIC) ^ ((uint64_t)pid << 32);
		g_process_uuid = r ? r : 1;
		g_process_uuid_pid = pid;
	}
	pthread_mutex_unlock(&sdk_g.lock);
	return g_process_uuid;
}

/* ---------------------------------------------------------- settings ---- */

static int set_string(char **dst, const char *s)
{
	char *copy = NULL;

	if (s && !(copy = strdup(s)))
		return -ENOMEM;
	free(*dst);
	*dst = copy;
	return 0;
}

PFC_API int pfc_set_socket(const char *name)
{
	int rc;

	if (name && !*name)
		return -EINVAL;
	pthread_mutex_lock(&sdk_g.lock);
	rc = sdk_g.initialized ? -EBUSY : set_string(&g.socket, name);
	pthread_mutex_unlock(&sdk_g.lock);
	return rc;
}

PFC_API int pfc_set_shm_size_kb(uint32_t kb)
{
	int rc = 0;

	if (kb % 4 || kb > 256u * 1024)
		return -EINVAL;
	pthread_mutex_lock(&sdk_g.lock);
	if (sdk_g.initialized)
		rc = -EBUSY;
	else
		g.shm_kb = kb;
	pthread_mutex_unlock(&sdk_g.lock);
	return rc;
}

PFC_API int pfc_set_in_process_output(const char *path, const void *trace_config, size_t len)
{
	uint8_t *cfg = NULL;
	int rc;

	if (!path || !*path || (len && !trace_config))
		return -EINVAL;
	if (trace_config) {
		cfg = malloc(len ? len : 1);
		if (!cfg)
			return -ENOMEM;
		memcpy(cfg, trace_config, len);
	}
	pthread_mutex_lock(&sdk_g.lock);
	if (sdk_g.initialized) {
		rc = -EBUSY;
	} else {
		rc = set_string(&g.inproc_path, path);
		if (rc == 0) {
			free(g.inproc_cfg);
			g.inproc_cfg = cfg;
			g.inproc_cfg_len = len;
			g.inproc_cfg_set = trace_config != NULL;
			cfg = NULL;
		}
	}
	pthread_mutex_unlock(&sdk_g.lock);
	free(cfg);
	return rc;
}

/* --------------------------------------------------------- instances ---- */

static int slot_of(uint64_t instance_id)
{
	int i;

	for (i = 0; i < SDK_MAX_INSTANCES; i++)
		if (atomic_load(&sdk_g.inst[i].active) && sdk_g.inst[i].instance_id == instance_id)
			return i;
	return -1;
}

static void on_start(struct producer *p, uint64_t id,
		     const Perfetto__Protos__DataSourceConfig *cfg, void *user)
{
	uint8_t *te = NULL;
	size_t te_len = 0;
	int i;

	(void)user;
	if (!atomic_load(&sdk_g.arb))
		atomic_store(&sdk_g.arb, producer_arbiter(p));
	if (cfg->track_event_config) {
		te_len = perfetto__protos__track_event_config__get_packed_size(cfg->track_event_config);
		te = malloc(te_len ? te_len : 1);
		if (te)
			perfetto__protos__track_event_config__pack(cfg->track_event_config, te);
	}
	pthread_mutex_lock(&sdk_g.lock);
	for (i = 0; i < SDK_MAX_INSTANCES; i++)
		if (!atomic_load(&sdk_g.inst[i].active))
			break;
	if (i < SDK_MAX_INSTANCES && (te || !cfg->track_event_config)) {
		struct sdk_instance *in = &sdk_g.inst[i];

		in->instance_id = id;
		in->target_buffer = cfg->has_target_buffer ? (uint16_t)cfg->target_buffer : 0;
		/* Stall-then-abort stalls too, then drops: a library never
		 * takes its application down. */
		atomic_store(&in->stall,
			     cfg->has_buffer_exhausted_policy &&
				     (cfg->buffer_exhausted_policy ==
					      PERFETTO__PROTOS__DATA_SOURCE_CONFIG__BUFFER_EXHAUSTED_POLICY__BUFFER_EXHAUSTED_STALL_THEN_DROP ||
				      cfg->buffer_exhausted_policy ==
					      PERFETTO__PROTOS__DATA_SOURCE_CONFIG__BUFFER_EXHAUSTED_POLICY__BUFFER_EXHAUSTED_STALL_THEN_ABORT));
		atomic_fetch_add(&in->gen, 1);
		atomic_store(&in->active, true);
		sdk_categories_enable((unsigned)i, te, te_len);
		g.any_started = true;
		pthread_cond_broadcast(&g.started_cond);
	}
	/* More sessions than slots: this one records no events from here. */
	pthread_mutex_unlock(&sdk_g.lock);
	free(te);
	producer_notify_started(p, id);
}

static void on_stop(struct producer *p, uint64_t id, void *user)
{
	int slot;

	(void)user;
	pthread_mutex_lock(&sdk_g.lock);
	slot = slot_of(id);
	if (slot >= 0) {
		sdk_categories_disable((unsigned)slot);
		atomic_store(&sdk_g.inst[slot].active, false);
	}
	pthread_mutex_unlock(&sdk_g.lock);
	/* Its chunks go to the service before it hears we stopped. */
	if (slot >= 0)
		sdk_writers_drop_slot((unsigned)slot);
	producer_notify_stopped(p, id);
}

static void on_flush(struct producer *p, const uint64_t *ids, size_t n, uint64_t request_id,
		     uint64_t flags, void *user)
{
	size_t i;

	(void)flags;
	(void)user;
	for (i = 0; i < n; i++) {
		int slot = slot_of(ids[i]);

		if (slot >= 0)
			sdk_writers_reclaim(slot, 0);
	}
	producer_flush_ack(p, request_id);
}

static void on_clear(struct producer *p, const uint64_t *ids, size_t n, void *user)
{
	size_t i;

	(void)p;
	(void)user;
	for (i = 0; i < n; i++) {
		int slot = slot_of(ids[i]);

		/* Writers see the new generation and start their state afresh. */
		if (slot >= 0)
			atomic_fetch_add(&sdk_g.inst[slot].gen, 1);
	}
}

/* -------------------------------------------------------- connection ---- */

static void try_connect(void *user);

static void schedule_retry(void)
{
	if (g.stopping || g.has_retry_timer)
		return;
	if (evloop_add_timer(g.loop, g.backoff_ms, 0, try_connect, NULL, &g.retry_timer) == 0)
		g.has_retry_timer = true;
	g.backoff_ms = g.backoff_ms * 2 > SDK_RETRY_MAX_MS ? SDK_RETRY_MAX_MS : g.backoff_ms * 2;
}

/* Ends every instance and forgets the connection (loop thread). */
static void drop_connection(void)
{
	struct producer *p = g.p;
	uint64_t lost;
	int i;

	pthread_mutex_lock(&sdk_g.lock);
	for (i = 0; i < SDK_MAX_INSTANCES; i++) {
		sdk_categories_disable((unsigned)i);
		atomic_store(&sdk_g.inst[i].active, false);
	}
	atomic_store(&sdk_g.producer, NULL);
	atomic_store(&sdk_g.arb, NULL);
	pthread_mutex_unlock(&sdk_g.lock);
	/* No writer uses the SMB after this: then it can go. */
	lost = sdk_writers_disconnect();
	sdk_stat_add(&sdk_g.stats.events_dropped_no_service, lost);
	g.p = NULL;
	g.connected = false;
	producer_destroy(p);
}

static void on_connected(struct producer *p, void *user)
{
	(void)user;
	g.connected = true;
	g.backoff_ms = SDK_RETRY_MIN_MS;
	atomic_store(&sdk_g.producer, p);
	sdk_stat_add(&sdk_g.stats.connections, 1);
}

static void on_disconnected(struct producer *p, int err, void *user)
{
	(void)p;
	(void)err;
	(void)user;
	drop_connection();
	schedule_retry();
}

static void on_tracing_setup(struct producer *p, void *user)
{
	(void)user;
	atomic_store(&sdk_g.arb, producer_arbiter(p));
}

static struct producer_ds_desc ds_desc(uint8_t *extra, size_t len)
{
	struct producer_ds_desc d = {
		.name = DATA_SOURCE_NAME,
		.will_notify_on_start = true,
		.will_notify_on_stop = true,
		.handles_incremental_state_clear = true,
		.extra_pb = extra,
		.extra_pb_len = len,
	};

	return d;
}

static void try_connect(void *user)
{
	struct producer_callbacks cbs = {
		.on_connected = on_connected,
		.on_disconnected = on_disconnected,
		.on_tracing_setup = on_tracing_setup,
		.start_ds = on_start,
		.stop_ds = on_stop,
		.flush = on_flush,
		.clear_incremental_state = on_clear,
	};
	struct producer_opts opts;
	struct producer_ds_desc d;
	const char *sock = sdk_g.backend == PFC_BACKEND_IN_PROCESS ? g.inproc_socket : g.socket;
	uint8_t *extra;
	size_t len = 0;
	int rc;

	(void)user;
	g.has_retry_timer = false;
	if (g.stopping || g.p)
		return;
	memset(&opts, 0, sizeof(opts));
	opts.smb_size_hint_bytes = g.shm_kb ? g.shm_kb * 1024 : DEFAULT_SHM_BYTES;
	/* Writers are application threads: never make them wait. */
	opts.full_policy = ARB_FULL_DROP;
	opts.batch_commits_ms = BATCH_COMMITS_MS;
	opts.batch_commit_bytes = BATCH_COMMIT_BYTES;
	/* As Perfetto's SDK: the service may copy what a stuck app wrote. */
	opts.smb_scraping_mode = 1;
	rc = producer_connect(g.loop, sock, g.producer_name, &opts, &cbs, NULL, &g.p);
	if (rc < 0) {
		g.p = NULL;
		schedule_retry();
		return;
	}
	extra = sdk_categories_descriptor(&len);
	d = ds_desc(extra, len);
	if (!extra || producer_register_ds(g.p, &d) < 0) {
		free(extra);
		drop_connection();
		schedule_retry();
		return;
	}
	free(extra);
}

/* A category appeared: the service lists it (UpdateDataSource). */
static void update_descriptor(void *user)
{
	struct producer_ds_desc d;
	uint8_t *extra;
	size_t len = 0;

	(void)user;
	if (!g.p)
		return;
	extra = sdk_categories_descriptor(&len);
	if (!extra)
		return;
	d = ds_desc(extra, len);
	producer_update_ds(g.p, &d);
	free(extra);
}

void sdk_on_categories_changed(void)
{
	struct evloop *loop;

	pthread_mutex_lock(&sdk_g.lock);
	loop = sdk_g.initialized ? g.loop : NULL;
	if (loop)
		evloop_post(loop, update_descriptor, NULL);
	pthread_mutex_unlock(&sdk_g.lock);
}

/* ------------------------------------------------------------ timers ---- */

static void reclaim_tick(void *user)
{
	(void)user;
	if (atomic_load(&sdk_g.arb))
		sdk_writers_reclaim(-1, (uint64_t)SDK_IDLE_RECLAIM_MS * 1000 * 1000);
}

static void refine_tick(void *user)
{
	(void)user;
	sdk_clock_refine();
}

/* The first rate comes from 2 ms (or from the kernel's, which BOOTTIME's
 * NTP slewing does not follow): refine it over growing spans before the
 * first periodic tick, so early events are placed within a microsecond. */
static int add_early_refines(void)
{
	static const uint64_t at_ms[] = {10, 30, 100, 300};
	size_t i;
	int rc;

	for (i = 0; i < sizeof(at_ms) / sizeof(at_ms[0]); i++) {
		rc = evloop_add_timer(g.loop, at_ms[i], 0, refine_tick, NULL, NULL);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* -------------------------------------------------------------- flush ---- */

struct flush_req {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int refs;
	bool done;
	int result;
};

static void flush_req_put(struct flush_req *f)
{
	bool last;

	pthread_mutex_lock(&f->mu);
	last = --f->refs == 0;
	pthread_mutex_unlock(&f->mu);
	if (last) {
		pthread_mutex_destroy(&f->mu);
		pthread_cond_destroy(&f->cv);
		free(f);
	}
}

static void flush_finish(struct flush_req *f, int result)
{
	pthread_mutex_lock(&f->mu);
	f->done = true;
	f->result = result;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	flush_req_put(f);
}

static void on_flush_synced(struct producer *p, bool success, void *user)
{
	(void)p;
	flush_finish(user, success ? 0 : -ENOTCONN);
}

static void flush_task(void *user)
{
	struct flush_req *f = user;

	if (!g.p || !g.connected) {
		flush_finish(f, -ENOTCONN);
		return;
	}
	sdk_writers_reclaim(-1, 0);
	if (producer_sync(g.p, on_flush_synced, f) < 0)
		flush_finish(f, -ENOTCONN);
}

static int wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, const bool *flag,
		      uint32_t timeout_ms)
{
	struct timespec ts;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	while (!*flag && rc == 0)
		rc = pthread_cond_timedwait(cv, mu, &ts);
	return *flag ? 0 : -ETIMEDOUT;
}

static void cond_init_monotonic(pthread_cond_t *cv)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(cv, &a);
	pthread_condattr_destroy(&a);
}

PFC_API int pfc_flush(uint32_t timeout_ms)
{
	struct flush_req *f;
	int rc;

	pthread_mutex_lock(&sdk_g.lock);
	if (!sdk_g.initialized) {
		pthread_mutex_unlock(&sdk_g.lock);
		return -EPERM;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		pthread_mutex_unlock(&sdk_g.lock);
		return -ENOMEM;
	}
	pthread_mutex_init(&f->mu, NULL);
	cond_init_monotonic(&f->cv);
	f->refs = 2;
	rc = evloop_post(g.loop, flush_task, f);
	pthread_mutex_unlock(&sdk_g.lock);
	if (rc < 0) {
		flush_req_put(f);
		flush_req_put(f);
		return rc;
	}
	pthread_mutex_lock(&f->mu);
	rc = wait_until(&f->cv, &f->mu, &f->done, timeout_ms);
	if (rc == 0)
		rc = f->result;
	pthread_mutex_unlock(&f->mu);
	flush_req_put(f);
	return rc;
}

/* ----------------------------------------------------------- lifecycle ---- */

static void *control_main(void *arg)
{
	(void)arg;
	evloop_run(g.loop);
	return NULL;
}

static void once_init(void)
{
	sdk_clock_init();
	sdk_fence_init();
	cond_init_monotonic(&g.started_cond);
	cond_init_monotonic(&g.done_cond);
}

static void read_process_name(char *out, size_t size)
{
	char buf[256];
	ssize_t n;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	out[0] = 0;
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	n = (ssize_t)strnlen(buf, size - 1);
	memcpy(out, buf, (size_t)n);
	out[n] = 0;
}

static void at_exit(void)
{
	pfc_shutdown();
}

static void finish_shutdown(void);

static void on_shutdown_synced(struct producer *p, bool success, void *user)
{
	(void)p;
	(void)success;
	(void)user;
	finish_shutdown();
}

static void on_inproc_stopped(void *user)
{
	(void)user;
	finish_shutdown();
}

static void shutdown_timeout(void *user)
{
	(void)user;
	finish_shutdown();
}

/* The last step on the loop thread: everything goes, the loop quits. */
static void finish_shutdown(void)
{
	if (g.shutdown_done)
		return;
	if (g.has_retry_timer) {
		evloop_del(g.loop, g.retry_timer);
		g.has_retry_timer = false;
	}
	if (g.p)
		drop_connection();
	if (sdk_g.backend == PFC_BACKEND_IN_PROCESS)
		sdk_inprocess_stop();
	pthread_mutex_lock(&sdk_g.lock);
	g.shutdown_done = true;
	pthread_cond_broadcast(&g.done_cond);
	pthread_mutex_unlock(&sdk_g.lock);
	evloop_quit(g.loop);
}

static void shutdown_task(void *user)
{
	(void)user;
	g.stopping = true;
	evloop_add_timer(g.loop, SHUTDOWN_FLUSH_MS * 2, 0, shutdown_timeout, NULL, NULL);
	if (g.p && g.connected)
		sdk_writers_reclaim(-1, 0);
	/* In-process: the private session flushes, stops and writes the file
	 * (our producer's stop and flush callbacks run meanwhile). */
	if (sdk_g.backend == PFC_BACKEND_IN_PROCESS) {
		if (sdk_inprocess_finish(SHUTDOWN_FLUSH_MS, on_inproc_stopped, NULL) < 0)
			finish_shutdown();
		return;
	}
	if (!g.p || !g.connected || producer_sync(g.p, on_shutdown_synced, NULL) < 0)
		finish_shutdown();
}

PFC_API void pfc_shutdown(void)
{
	struct evloop *loop;
	pthread_t thread;

	pthread_mutex_lock(&sdk_g.lock);
	if (!sdk_g.initialized || g.shutdown_done || g.stopping ||
	    pthread_equal(pthread_self(), g.thread)) {
		pthread_mutex_unlock(&sdk_g.lock);
		return;
	}
	loop = g.loop;
	thread = g.thread;
	g.stopping = true; /* other callers return at once */
	if (evloop_post(loop, shutdown_task, NULL) == 0)
		wait_until(&g.done_cond, &sdk_g.lock, &g.shutdown_done, SHUTDOWN_FLUSH_MS * 4);
	pthread_mutex_unlock(&sdk_g.lock);
	if (!g.shutdown_done)
		return; /* the loop is stuck: leave it be rather than hang */
	pthread_join(thread, NULL);
	evloop_destroy(loop);
	pthread_mutex_lock(&sdk_g.lock);
	g.loop = NULL;
	g.stopping = false;
	g.shutdown_done = false;
	g.any_started = false;
	sdk_g.initialized = false;
	pthread_mutex_unlock(&sdk_g.lock);
}

static int start_thread(void)
{
	sigset_t all, old;
	int rc;

	/* Signals stay with the application's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = -pthread_create(&g.thread, NULL, control_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		pthread_setname_np(g.thread, "pfc-control");
	return rc;
}

PFC_API int pfc_init(enum pfc_backend backend, const char *producer_name)
{
	char name[PRODUCER_MAX_NAME_BYTES];
	int rc;

	if (backend != PFC_BACKEND_SYSTEM && backend != PFC_BACKEND_IN_PROCESS)
		return -EINVAL;
	if (producer_name && (!*producer_name || strlen(producer_name) >= sizeof(name)))
		return -EINVAL;
	pthread_once(&g_once, once_init);
	if (!getenv("PFC_LOG_LEVEL"))
		log_set_level(LOG_LEVEL_NONE); /* a library does not print */
	else
		log_init_from_env();
	(void)sdk_process_uuid();

	pthread_mutex_lock(&sdk_g.lock);
	if (sdk_g.initialized || g.stopping) {
		pthread_mutex_unlock(&sdk_g.lock);
		return -EALREADY;
	}
	if (backend == PFC_BACKEND_IN_PROCESS && !g.inproc_path) {
		pthread_mutex_unlock(&sdk_g.lock);
		return -EINVAL;
	}
	if (producer_name)
		snprintf(name, sizeof(name), "%s", producer_name);
	else
		snprintf(name, sizeof(name), "pfc.%s", program_invocation_short_name);
	rc = set_string(&g.producer_name, name);
	if (rc == 0)
		rc = evloop_create(&g.loop);
	if (rc < 0)
		goto fail;
	sdk_g.backend = backend;
	sdk_g.pid = getpid();
	sdk_g.process_uuid = g_process_uuid;
	read_process_name(sdk_g.process_name, sizeof(sdk_g.process_name));
	g.backoff_ms = SDK_RETRY_MIN_MS;
	g.p = NULL;
	g.connected = false;
	g.any_started = false;
	g.shutdown_done = false;
	if (backend == PFC_BACKEND_IN_PROCESS) {
		rc = sdk_inprocess_start(g.loop, g.inproc_path,
					 g.inproc_cfg_set ? g.inproc_cfg : NULL, g.inproc_cfg_len,
					 g.inproc_socket, sizeof(g.inproc_socket));
		if (rc < 0)
			goto fail_loop;
	}
	if ((rc = evloop_post(g.loop, try_connect, NULL)) < 0 ||
	    (rc = evloop_add_timer(g.loop, RECLAIM_PERIOD_MS, RECLAIM_PERIOD_MS, reclaim_tick, NULL,
				   NULL)) < 0 ||
	    (rc = evloop_add_timer(g.loop, REFINE_PERIOD_MS, REFINE_PERIOD_MS, refine_tick, NULL,
				   NULL)) < 0 ||
	    (rc = add_early_refines()) < 0)
		goto fail_inproc;
	sdk_g.initialized = true;
	rc = start_thread();
	if (rc < 0) {
		sdk_g.initialized = false;
		goto fail_inproc;
	}
	if (!g.atexit_registered)
		g.atexit_registered = atexit(at_exit) == 0;
	/* In-process tracing records from the first event after pfc_init(). */
	if (backend == PFC_BACKEND_IN_PROCESS)
		wait_until(&g.started_cond, &sdk_g.lock, &g.any_started, INPROC_START_WAIT_MS);
	pthread_mutex_unlock(&sdk_g.lock);
	return 0;

fail_inproc:
	if (backend == PFC_BACKEND_IN_PROCESS)
		sdk_inprocess_stop();
fail_loop:
	evloop_destroy(g.loop);
	g.loop = NULL;
fail:
	pthread_mutex_unlock(&sdk_g.lock);
	return rc;
}

PFC_API int pfc_get_stats(struct pfc_stats *out, size_t size)
{
	struct pfc_stats s;
	struct sdk_thread *t;

	if (!out || size == 0)
		return -EINVAL;
	memset(&s, 0, sizeof(s));
	pthread_mutex_lock(&sdk_g.lock);
	s.events_written = sdk_g.retired_written;
	s.events_dropped = sdk_g.retired_dropped;
	for (t = sdk_g.threads; t; t = t->next) {
		s.events_written += __atomic_load_n(&t->n_written, __ATOMIC_RELAXED);
		s.events_dropped += __atomic_load_n(&t->n_dropped, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&sdk_g.lock);
	s.events_dropped_no_service = atomic_load(&sdk_g.stats.events_dropped_no_service);
	s.events_dropped += s.events_dropped_no_service;
	s.chunks_committed = atomic_load(&sdk_g.stats.chunks_committed);
	s.chunks_reclaimed = atomic_load(&sdk_g.stats.chunks_reclaimed);
	s.writers = atomic_load(&sdk_g.stats.writers);
	s.connections = atomic_load(&sdk_g.stats.connections);
	memcpy(out, &s, size < sizeof(s) ? size : sizeof(s));
	return 0;
}

/* ---------------------------------------------------------------- fork ---- */

static void fork_prepare(void)
{
	pthread_mutex_lock(&sdk_g.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&sdk_g.lock);
}

/* The child: one thread, the parent's memory. Nothing of the parent's
 * connection may be used (its SMB is the parent's), so all of it is
 * forgotten; the socket is closed so only the parent holds it. */
static void fork_child(void)
{
	pthread_mutex_init(&sdk_g.lock, NULL);
	cond_init_monotonic(&g.started_cond);
	cond_init_monotonic(&g.done_cond);
	if (!sdk_g.initialized)
		return;
	memset((void *)sdk_cat_flags, 0, sizeof(sdk_cat_flags));
	sdk_categories_forget_sessions();
	for (unsigned i = 0; i < SDK_MAX_INSTANCES; i++)
		atomic_store(&sdk_g.inst[i].active, false);
	if (g.p && producer_socket_fd(g.p) >= 0)
		close(producer_socket_fd(g.p));
	atomic_store(&sdk_g.producer, NULL);
	atomic_store(&sdk_g.arb, NULL);
	sdk_writers_after_fork();
	/* The parent's loop, producer and service are abandoned (their
	 * memory stays; using them would act on the parent's behalf). */
	g.p = NULL;
	g.loop = NULL;
	g.connected = false;
	g.stopping = false;
	g.shutdown_done = false;
	g.has_retry_timer = false;
	sdk_g.initialized = false;
	sdk_inprocess_forget();
}

__attribute__((constructor)) static void install_fork_handlers(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}
