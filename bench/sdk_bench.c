// SPDX-License-Identifier: Apache-2.0
/*
 * sdk_bench.c - what an event of the C SDK (libperfetto-c) costs, in ns,
 * with 1 and 2 threads, beside its peers in the same run: the floors (rdtsc,
 * clock_gettime(CLOCK_BOOTTIME), a 64 B copy), a write to trace_marker (in a
 * private ftrace instance, removed afterwards) and an LTTng-UST tracepoint
 * with an active session (a private lttng-sessiond run as an unprivileged
 * user with its own LTTNG_HOME, stopped afterwards; the tracepoint program is
 * out/sdk_bench_lttng). The SDK records for real: traced on private
 * sockets, a `perfetto` session that enables the category, and the trace is
 * read back with trace_processor_shell to check that every event arrived.
 * Then sustained: 1 and 2 threads write slices as fast as they can for a few
 * seconds through traced into a file (writers stall rather than drop), and
 * the events per second and the events lost are reported. Ends with the
 * issue's targets, met or MISSED. Built as an application (the public
 * header, linked with libperfetto-c.so).
 *
 *   out/bench/sdk_bench [--smoke] [--iters N] [--reps R] [--seconds S]
 *                       [--shm-kb KB] [--no-tracefs] [--no-lttng]
 *     --iters N    events per thread in one timed run (default 100000)
 *     --reps R     timed runs per case; the median is reported (default 11)
 *     --seconds S  each sustained run (default 3)
 *     --shm-kb KB  the SDK's shared memory buffer (default 32768, the
 *                  most traced gives; 0: the SDK's default)
 *
 * Exit 1 only if the SDK part could not run or lost events; a peer that
 * cannot run (no root, no tracefs, no lttng) is skipped with its reason.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perfetto-c/pfc.h"

#include "bench_proc.h"
#include "sdk_bench.h"

/* The SDK's shared memory buffer by default: its maximum, so one timed run
 * never waits for traced to free chunks (runs are flushed between). */
#define SMB_KB (32 * 1024)
/* The trace buffer of both sessions; they write into their file every
 * FILE_PERIOD_MS, so the ring is read long before it wraps. */
#define TRACE_BUFFER_KB (256 * 1024)
#define FILE_PERIOD_MS 100
#define ENABLE_TIMEOUT_MS 10000
#define LTTNG_SESSION "pfc_sdk_bench"
/* The second thread is "as cheap as the first" within this factor. */
#define SECOND_THREAD_SLACK 1.2
#define COPY_BYTES 64
#define COPY_RING (64 * 1024)

static struct {
	bool smoke, no_tracefs, no_lttng;
	uint64_t iters;        /* events per thread per timed run */
	uint32_t shm_kb;       /* the SDK's SMB (0: the SDK's default) */
	unsigned reps;
	double seconds;        /* of each sustained run */
	char out_dir[PATH_MAX - 128]; /* the build tree: traced, perfetto, ... */
	char tmp[64];
} g_args;

enum case_id {
	C_RDTSC,
	C_CLOCK,
	C_COPY,
	C_STREAM,
	C_MARKER,
	C_LTTNG,
	C_LTTNG_OFF,
	C_SLICE,
	C_INSTANT,
	C_ARGS,
	C_COUNTER,
	C_OFF,
	N_CASES
};

struct case_result {
	const char *label;
	enum case_id peer;      /* the LTTng-UST case it is compared with */
	bool has;
	double t1, t2[2];       /* ns per event: 1 thread; each of 2 threads */
	double best1;           /* 1 thread: the fastest run */
	unsigned runs, preempted, blocked; /* thread-runs, and those disturbed */
	char skip[160];
};

static struct case_result g_res[N_CASES] = {
	[C_RDTSC] = {.label = "floor: rdtsc", .peer = N_CASES},
	[C_CLOCK] = {.label = "floor: clock_gettime(BOOTTIME)", .peer = N_CASES},
	[C_COPY] = {.label = "floor: 64 B copy", .peer = N_CASES},
	[C_STREAM] = {.label = "floor: rdtsc + 24 B into 16 MiB", .peer = N_CASES},
	[C_MARKER] = {.label = "trace_marker write (B|pid|name)", .peer = C_LTTNG},
	[C_LTTNG] = {.label = "LTTng-UST tracepoint (string+int64)", .peer = C_LTTNG},
	[C_LTTNG_OFF] = {.label = "LTTng-UST tracepoint, disabled", .peer = C_LTTNG_OFF},
	[C_SLICE] = {.label = "SDK slice begin/end ((b+e)/2)", .peer = C_LTTNG},
	[C_INSTANT] = {.label = "SDK instant", .peer = C_LTTNG},
	[C_ARGS] = {.label = "SDK instant + 2 debug annotations", .peer = C_LTTNG},
	[C_COUNTER] = {.label = "SDK counter (int)", .peer = C_LTTNG},
	[C_OFF] = {.label = "SDK event, category disabled", .peer = C_LTTNG_OFF},
};

static volatile uint64_t g_sink;
/* Other work on the machine before the run, in % of its CPUs. */
static double g_busy_pct;
#define BUSY_WARN_PCT 10

/* ------------------------------------------------------------ processes ---- */

/* How a child runs: as another user with a private LTTNG_HOME (the LTTng
 * peer), in its own process group, its stderr into a log. */
struct run_opts {
	bool drop;
	uid_t uid;
	gid_t gid;
	const char *home;
	int log_fd;
	bool new_group;
};

static pid_t run_spawn(char *const argv[], const struct run_opts *o, int out_fd)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	if (o && o->new_group)
		setsid();
	if (out_fd >= 0)
		dup2(out_fd, STDOUT_FILENO);
	if (o && o->log_fd >= 0) {
		if (out_fd < 0)
			dup2(o->log_fd, STDOUT_FILENO);
		dup2(o->log_fd, STDERR_FILENO);
	} else {
		int devnull = open("/dev/null", O_WRONLY);

		if (devnull >= 0) {
			if (out_fd < 0)
				dup2(devnull, STDOUT_FILENO);
			dup2(devnull, STDERR_FILENO);
		}
	}
	if (o && o->home) {
		if (chdir(o->home) < 0)
			_exit(126);
		setenv("HOME", o->home, 1);
		setenv("LTTNG_HOME", o->home, 1);
	}
	if (o && o->drop && (setgroups(0, NULL) < 0 || setgid(o->gid) < 0 || setuid(o->uid) < 0))
		_exit(126);
	execvp(argv[0], argv);
	_exit(127);
}

/* Waits for @pid at most @timeout_ms (then kills it). Return: its exit
 * code, 128 + signal, or -1 if it had to be killed. */
static int run_wait(pid_t pid, unsigned timeout_ms)
{
	uint64_t deadline = bench_now_ns() + (uint64_t)timeout_ms * 1000000;
	int st;

	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		struct timespec ts = {0, 2 * 1000 * 1000};

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -1;
		if (bench_now_ns() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		nanosleep(&ts, NULL);
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

/* Runs @argv, its stdout into @buf (NUL-terminated, truncated to @size).
 * Return: as run_wait(). */
static int run_capture(char *const argv[], const struct run_opts *o, char *buf, size_t size,
		       unsigned timeout_ms)
{
	uint64_t deadline = bench_now_ns() + (uint64_t)timeout_ms * 1000000;
	size_t len = 0;
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	pid = run_spawn(argv, o, fds[1]);
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return -1;
	}
	for (;;) {
		struct pollfd pfd = {fds[0], POLLIN, 0};
		char junk[4096];
		ssize_t n;
		int left = (int)((deadline - bench_now_ns()) / 1000000);

		if (bench_now_ns() >= deadline || poll(&pfd, 1, left > 0 ? left : 0) <= 0)
			break;
		if (len + 1 < size)
			n = read(fds[0], buf + len, size - 1 - len);
		else
			n = read(fds[0], junk, sizeof(junk));
		if (n <= 0)
			break;
		if (len + 1 < size)
			len += (size_t)n;
	}
	close(fds[0]);
	if (size)
		buf[len] = '\0';
	return run_wait(pid, bench_now_ns() < deadline
				     ? (unsigned)((deadline - bench_now_ns()) / 1000000) + 1
				     : 1);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void rm_rf(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static bool in_path(const char *name)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
	while (*path) {
		size_t n = strcspn(path, ":");

		if (n && snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, name) <
				 (int)sizeof(buf) &&
		    access(buf, X_OK) == 0)
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

/* The machine's busy and total jiffies so far (/proc/stat). */
static bool cpu_jiffies(uint64_t *out_busy, uint64_t *out_total)
{
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "re");
	int n;

	if (!f)
		return false;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 5)
		return false;
	*out_total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	*out_busy = *out_total - v[3] - v[4];
	return true;
}

/* How busy the machine is while this program idles, in percent of all
 * CPUs (-1 if unknown): other work there makes every figure noisy. */
static double machine_busy_pct(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	uint64_t b0, t0, b1, t1;

	if (!cpu_jiffies(&b0, &t0))
		return -1;
	nanosleep(&ts, NULL);
	if (!cpu_jiffies(&b1, &t1) || t1 <= t0)
		return -1;
	return 100.0 * (double)(b1 - b0) / (double)(t1 - t0);
}

/* ----------------------------------------------------------------- floors ---- */

static void loop_rdtsc(unsigned idx, uint64_t n, void *user)
{
	uint64_t i, s = 0;

	(void)idx;
	(void)user;
	for (i = 0; i < n; i++)
		BENCH_X8(s += bench_rdtsc());
	g_sink = s;
}

static inline uint64_t boottime_nsec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_nsec;
}

static void loop_clock(unsigned idx, uint64_t n, void *user)
{
	uint64_t i, s = 0;

	(void)idx;
	(void)user;
	for (i = 0; i < n; i++)
		BENCH_X8(s += boottime_nsec());
	g_sink = s;
}

static _Alignas(64) uint8_t g_copy_src[COPY_BYTES];
static _Alignas(64) uint8_t g_copy_dst[BENCH_MAX_THREADS][COPY_RING];

/* One 64 B record into the next slot of a 64 KiB ring, as an event goes
 * into a chunk; the barrier keeps the compiler from merging the copies. */
static inline size_t copy64(uint8_t *ring, size_t off)
{
	memcpy(ring + off, g_copy_src, COPY_BYTES);
	__asm__ __volatile__("" : : "r"(ring) : "memory");
	return (off + COPY_BYTES) & (COPY_RING - 1);
}

static void loop_copy(unsigned idx, uint64_t n, void *user)
{
	uint8_t *ring = g_copy_dst[idx];
	uint64_t i;
	size_t off = 0;

	(void)user;
	for (i = 0; i < n; i++)
		BENCH_X8(off = copy64(ring, off));
}

/*
 * What an event is without any SDK: a TSC reading and 24 bytes stored at
 * the next place of a per-thread buffer as large as each thread's share of
 * the SMB, so the stores stream through memory as the SDK's do. Its 1 and
 * 2 thread figures say what the machine gives a second writer.
 */
#define STREAM_BYTES (16u << 20)
static uint8_t *g_stream[BENCH_MAX_THREADS];

static void loop_stream(unsigned idx, uint64_t n, void *user)
{
	uint8_t *buf = g_stream[idx];
	uint64_t i, w[3] = {0, 0, 0};
	size_t off = 0;

	(void)user;
	if (!buf) {
		buf = g_stream[idx] = aligned_alloc(64, STREAM_BYTES);
		if (!buf)
			return;
		memset(buf, 0, STREAM_BYTES);
	}
	for (i = 0; i < n; i++) {
		BENCH_X8({
			w[0] = bench_rdtsc();
			memcpy(buf + off, w, sizeof(w));
			__asm__ __volatile__("" : : "r"(buf) : "memory");
			off = off + sizeof(w) < STREAM_BYTES - sizeof(w) ? off + sizeof(w) : 0;
		});
	}
}

/* ----------------------------------------------------------- trace_marker ---- */

static struct {
	int fd;
	char instance[128];
	char msg[64];
	size_t len;
	atomic_uint errors;
} g_marker = {.fd = -1};

static void loop_marker(unsigned idx, uint64_t n, void *user)
{
	uint64_t i;

	(void)idx;
	(void)user;
	for (i = 0; i < n; i++)
		BENCH_X8(if (write(g_marker.fd, g_marker.msg, g_marker.len) != (ssize_t)g_marker.len)
				 atomic_fetch_add(&g_marker.errors, 1));
}

/* A private ftrace instance (tracing_on there, nothing else touched).
 * Return: NULL, or why the peer is skipped. */
static const char *marker_open(void)
{
	static char why[160];
	const char *tfs = "/sys/kernel/tracing";
	char path[PATH_MAX];

	if (g_args.no_tracefs)
		return "--no-tracefs";
	if (geteuid() != 0)
		return "writing trace_marker needs root";
	snprintf(path, sizeof(path), "%s/instances", tfs);
	if (access(path, W_OK) != 0)
		return "no tracefs at /sys/kernel/tracing (not mounted here)";
	snprintf(g_marker.instance, sizeof(g_marker.instance), "%s/instances/pfc_sdk_bench_%d", tfs,
		 (int)getpid());
	if (mkdir(g_marker.instance, 0755) < 0) {
		snprintf(why, sizeof(why), "cannot create an ftrace instance: %s", strerror(errno));
		g_marker.instance[0] = '\0';
		return why;
	}
	snprintf(path, sizeof(path), "%s/trace_marker", g_marker.instance);
	g_marker.fd = open(path, O_WRONLY | O_CLOEXEC);
	if (g_marker.fd < 0) {
		snprintf(why, sizeof(why), "cannot open %.80s: %s", path, strerror(errno));
		return why;
	}
	g_marker.len = (size_t)snprintf(g_marker.msg, sizeof(g_marker.msg), "B|%d|bench_slice",
					(int)getpid());
	if (write(g_marker.fd, g_marker.msg, g_marker.len) != (ssize_t)g_marker.len) {
		snprintf(why, sizeof(why), "a write to trace_marker failed: %s", strerror(errno));
		return why;
	}
	return NULL;
}

static void marker_close(void)
{
	int i;

	if (g_marker.fd >= 0)
		close(g_marker.fd);
	g_marker.fd = -1;
	/* The kernel refuses while a file of the instance is still open. */
	for (i = 0; g_marker.instance[0] && i < 50; i++) {
		struct timespec ts = {0, 20 * 1000 * 1000};

		if (rmdir(g_marker.instance) == 0 || errno == ENOENT)
			break;
		nanosleep(&ts, NULL);
	}
	g_marker.instance[0] = '\0';
}

/* ------------------------------------------------------------------ LTTng ---- */

struct lttng_peer {
	struct run_opts run;
	char home[96];
	char helper[128];
	pid_t sessiond;
	/* /dev/shm/lttng-ust-wait-* there before: the rest is ours to remove. */
	char shm_before[16][NAME_MAX + 1];
	unsigned n_shm_before;
	uint64_t events, discarded;
};

static void shm_snapshot(struct lttng_peer *lp)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;

	lp->n_shm_before = 0;
	while (d && (e = readdir(d)) && lp->n_shm_before < 16) {
		if (strncmp(e->d_name, "lttng-ust-wait", 14) == 0)
			snprintf(lp->shm_before[lp->n_shm_before++], NAME_MAX + 1, "%s", e->d_name);
	}
	if (d)
		closedir(d);
}

static void shm_cleanup(const struct lttng_peer *lp)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	char path[PATH_MAX];
	unsigned i;

	while (d && (e = readdir(d))) {
		bool old = false;

		if (strncmp(e->d_name, "lttng-ust-wait", 14) != 0)
			continue;
		for (i = 0; i < lp->n_shm_before; i++)
			old |= strcmp(lp->shm_before[i], e->d_name) == 0;
		if (!old && snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name) < (int)sizeof(path))
			unlink(path);
	}
	if (d)
		closedir(d);
}

static int lttng_cmd(struct lttng_peer *lp, char *const argv[])
{
	pid_t pid = run_spawn(argv, &lp->run, -1);

	return pid < 0 ? -1 : run_wait(pid, 30000);
}

/* Copies the helper where the unprivileged user can run it. */
static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
	ssize_t n;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0)
		goto done;
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)n) != n)
			goto done;
	}
	rc = n == 0 ? 0 : -1;
done:
	close(in);
	if (out >= 0)
		close(out);
	return rc;
}

static void parse_lttng_line(const char *line, const char *key, enum case_id c)
{
	size_t k = strlen(key);
	struct case_result *r = &g_res[c];

	if (strncmp(line, key, k) != 0 || line[k] != ' ')
		return;
	if (sscanf(line + k, "%lf %lf %lf %u %u %u %lf", &r->t1, &r->t2[0], &r->t2[1], &r->runs,
		   &r->preempted, &r->blocked, &r->best1) == 7)
		r->has = true;
}

static void lttng_skip(const char *why)
{
	snprintf(g_res[C_LTTNG].skip, sizeof(g_res[C_LTTNG].skip), "%s", why);
	snprintf(g_res[C_LTTNG_OFF].skip, sizeof(g_res[C_LTTNG_OFF].skip), "%s", why);
}

/* The peer's measurements, or a skip reason in g_res. */
static void run_lttng(void)
{
	struct lttng_peer lp;
	char log_path[PATH_MAX + 16], src[PATH_MAX + 32], iters[32], reps[32], out[4096],
		why[160];
	char out_opt[PATH_MAX + 16];
	char *list_argv[] = {"lttng", "-n", "list", NULL};
	char *create_argv[] = {"lttng", "-n", "create", LTTNG_SESSION, out_opt, NULL};
	char *chan_argv[] = {"lttng", "-n", "enable-channel", "-u", "-s", LTTNG_SESSION,
			     "--subbuf-size=4M", "--num-subbuf=8", "ch", NULL};
	char *event_argv[] = {"lttng", "-n", "enable-event", "-u", "-s", LTTNG_SESSION, "-c", "ch",
			      "pfc_bench:slice", NULL};
	char *start_argv[] = {"lttng", "-n", "start", LTTNG_SESSION, NULL};
	char *stop_argv[] = {"lttng", "-n", "stop", LTTNG_SESSION, NULL};
	char *show_argv[] = {"lttng", "-n", "list", LTTNG_SESSION, NULL};
	char *destroy_argv[] = {"lttng", "-n", "destroy", LTTNG_SESSION, NULL};
	char *sessiond_argv[] = {"lttng-sessiond", "--no-kernel", NULL};
	char *helper_argv[] = {lp.helper, "--iters", iters, "--reps", reps, NULL};
	const char *p;
	uint64_t deadline;
	int rc, i;

	memset(&lp, 0, sizeof(lp));
	lp.sessiond = -1;
	lp.run.log_fd = -1;
	if (g_args.no_lttng) {
		lttng_skip("--no-lttng");
		return;
	}
	snprintf(src, sizeof(src), "%s/sdk_bench_lttng", g_args.out_dir);
	if (access(src, X_OK) != 0) {
		lttng_skip("out/sdk_bench_lttng is not built");
		return;
	}
	if (!in_path("lttng-sessiond") || !in_path("lttng")) {
		lttng_skip("lttng-tools is not installed (no lttng-sessiond or lttng in PATH)");
		return;
	}
	/* A session daemon of our own: as root it would be the machine's
	 * (/var/run/lttng), so it runs as nobody, whose daemon lives in the
	 * LTTNG_HOME given to it. */
	if (geteuid() == 0) {
		struct passwd *pw = getpwnam("nobody");

		if (!pw) {
			lttng_skip("no 'nobody' user to run a private lttng-sessiond as");
			return;
		}
		lp.run.drop = true;
		lp.run.uid = pw->pw_uid;
		lp.run.gid = pw->pw_gid;
	}
	snprintf(lp.home, sizeof(lp.home), "%s/lttng", g_args.tmp);
	if (mkdir(lp.home, 0755) < 0 || (lp.run.drop && chown(lp.home, lp.run.uid, lp.run.gid) < 0)) {
		snprintf(why, sizeof(why), "cannot make %s: %s", lp.home, strerror(errno));
		lttng_skip(why);
		return;
	}
	snprintf(lp.helper, sizeof(lp.helper), "%s/sdk_bench_lttng", lp.home);
	if (copy_file(src, lp.helper) < 0) {
		lttng_skip("cannot copy sdk_bench_lttng");
		return;
	}
	snprintf(log_path, sizeof(log_path), "%s/lttng.log", g_args.tmp);
	lp.run.log_fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	lp.run.home = lp.home;
	snprintf(out_opt, sizeof(out_opt), "--output=%s/trace", lp.home);
	snprintf(iters, sizeof(iters), "%llu", (unsigned long long)g_args.iters);
	snprintf(reps, sizeof(reps), "%u", g_args.reps);
	shm_snapshot(&lp);

	lp.run.new_group = true;
	lp.sessiond = run_spawn(sessiond_argv, &lp.run, -1);
	lp.run.new_group = false;
	if (lp.sessiond < 0) {
		lttng_skip("cannot start lttng-sessiond");
		goto out;
	}
	deadline = bench_now_ns() + 10ull * 1000 * 1000 * 1000;
	while ((rc = lttng_cmd(&lp, list_argv)) != 0 && bench_now_ns() < deadline) {
		struct timespec ts = {0, 50 * 1000 * 1000};

		if (waitpid(lp.sessiond, NULL, WNOHANG) == lp.sessiond) {
			lp.sessiond = -1;
			break;
		}
		nanosleep(&ts, NULL);
	}
	if (rc != 0) {
		snprintf(why, sizeof(why), "the private lttng-sessiond did not come up (see %.80s)",
			 log_path);
		lttng_skip(why);
		goto out;
	}
	if (lttng_cmd(&lp, create_argv) != 0 || lttng_cmd(&lp, chan_argv) != 0 ||
	    lttng_cmd(&lp, event_argv) != 0 || lttng_cmd(&lp, start_argv) != 0) {
		lttng_skip("could not set up the LTTng session (lttng create/enable/start failed)");
		goto out;
	}
	rc = run_capture(helper_argv, &lp.run, out, sizeof(out), 600000);
	lttng_cmd(&lp, stop_argv);
	for (p = out; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		parse_lttng_line(p, "lttng_enabled", C_LTTNG);
		parse_lttng_line(p, "lttng_disabled", C_LTTNG_OFF);
		if (strncmp(p, "lttng_events ", 13) == 0)
			lp.events = strtoull(p + 13, NULL, 10);
		if (strncmp(p, "skip lttng: ", 12) == 0) {
			snprintf(why, sizeof(why), "%.*s", (int)strcspn(p + 12, "\n"), p + 12);
			lttng_skip(why);
		}
	}
	if (rc != 0 && !g_res[C_LTTNG].skip[0]) {
		snprintf(why, sizeof(why), "sdk_bench_lttng failed (exit %d)", rc);
		lttng_skip(why);
	}
	/* What the ring buffer dropped (discard mode) makes its figure cheaper. */
	if (run_capture(show_argv, &lp.run, out, sizeof(out), 30000) == 0) {
		for (p = strstr(out, "Discarded events:"); p; p = strstr(p + 1, "Discarded events:"))
			lp.discarded += strtoull(p + 17, NULL, 10);
	}
	lttng_cmd(&lp, destroy_argv);
	if (g_res[C_LTTNG].has)
		printf("LTTng-UST: %llu tracepoints recorded by a private session (per-user buffers, "
		       "8 x 4 MiB per CPU), %llu discarded by its ring buffer\n",
		       (unsigned long long)lp.events, (unsigned long long)lp.discarded);
out:
	if (lp.sessiond > 0) {
		kill(lp.sessiond, SIGTERM);
		if (run_wait(lp.sessiond, 10000) < 0)
			kill(-lp.sessiond, SIGKILL);
		/* Its consumer daemons leave with it; anything left in its
		 * process group goes too. */
		for (i = 0; i < 50 && kill(-lp.sessiond, 0) == 0; i++) {
			struct timespec ts = {0, 20 * 1000 * 1000};

			nanosleep(&ts, NULL);
		}
		if (kill(-lp.sessiond, 0) == 0)
			kill(-lp.sessiond, SIGKILL);
	}
	if (lp.run.log_fd >= 0)
		close(lp.run.log_fd);
	shm_cleanup(&lp);
}

/* -------------------------------------------------------------------- SDK ---- */

static PFC_CATEGORY(g_cat);
static PFC_CATEGORY(g_off);
static struct pfc_track *g_counter_track;

static void loop_slice(unsigned idx, uint64_t n, void *user)
{
	uint64_t i;

	(void)idx;
	(void)user;
	for (i = 0; i < n; i++)
		BENCH_X8(PFC_SLICE_BEGIN(g_cat, "pair"); PFC_SLICE_END(g_cat));
}

static void loop_instant(unsigned idx, uint64_t n, void *user)
{
	uint64_t i;

	(void)idx;
	(void)user;
	for (i = 0; i < n; i++)
		BENCH_X8(PFC_INSTANT(g_cat, "inst"));
}

static inline void instant_args(int64_t v)
{
	struct pfc_arg args[2];
	struct pfc_event e;

	args[0] = pfc_arg_int("i", v);
	args[1] = pfc_arg_string("s", "abc");
	memset(&e, 0, sizeof(e));
	e.type = PFC_EVENT_INSTANT;
	e.name = "args";
	e.args = args;
	e.n_args = 2;
	PFC_EVENT(g_cat, &e);
}

static void loop_args(unsigned idx, uint64_t n, void *user)
{
	uint64_t i;
	int64_t v = 0;

	(void)idx;
	(void)user;
	for (i = 0; i < n; i++)
		BENCH_X8(instant_args(v++));
}

static void loop_counter(unsigned idx, uint64_t n, void *user)
{
	uint64_t i;
	int64_t v = 0;

	(void)idx;
	(void)user;
	for (i = 0; i < n; i++)
		BENCH_X8(PFC_COUNTER_INT(g_cat, g_counter_track, v++));
}

static void loop_off(unsigned idx, uint64_t n, void *user)
{
	uint64_t i;

	(void)idx;
	(void)user;
	for (i = 0; i < n; i++)
		BENCH_X8(PFC_INSTANT(g_off, "off"));
}

/* Sustained: slices until the deadline; events per thread in @user. */
struct sustained {
	uint64_t deadline_ns;
	uint64_t events[BENCH_MAX_THREADS];
};

static void loop_sustained(unsigned idx, uint64_t n, void *user)
{
	struct sustained *s = user;
	uint64_t events = 0;
	unsigned k;

	(void)n;
	while (bench_now_ns() < s->deadline_ns) {
		for (k = 0; k < 64; k++)
			BENCH_X8(PFC_SLICE_BEGIN(g_cat, "sus"); PFC_SLICE_END(g_cat));
		events += 64 * 8 * 2;
	}
	s->events[idx] = events;
}

struct sdk_case {
	enum case_id id;
	bench_loop_cb fn;
	unsigned events_per_iter;
	bool records;           /* its events reach the trace */
};

static const struct sdk_case k_sdk_cases[] = {
	{C_SLICE, loop_slice, 16, true},   {C_INSTANT, loop_instant, 8, true},
	{C_ARGS, loop_args, 8, true},      {C_COUNTER, loop_counter, 8, true},
	{C_OFF, loop_off, 8, false},
};
#define N_SDK_CASES (sizeof(k_sdk_cases) / sizeof(k_sdk_cases[0]))

static struct child g_traced;

static void path_in_out(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", g_args.out_dir, name);
}

/* A `perfetto` session in the background writing @trace. */
static int session_start(const char *name, const char *cfg_text, struct child *c, char *trace,
			 size_t trace_size)
{
	char cfg[PATH_MAX], bin[PATH_MAX];
	char *argv[] = {bin, "--txt", "-c", cfg, "-o", trace, NULL};
	FILE *f;

	snprintf(cfg, sizeof(cfg), "%s/%s.pbtxt", g_args.tmp, name);
	snprintf(trace, trace_size, "%s/%s.pftrace", g_args.tmp, name);
	path_in_out(bin, sizeof(bin), "perfetto");
	f = fopen(cfg, "w");
	if (!f)
		return -errno;
	fputs(cfg_text, f);
	fclose(f);
	return spawn(argv, NULL, NULL, NULL, c);
}

/* SIGINT: the session stops and the file is completed. Return: 0 if
 * perfetto exited 0. */
static int session_stop(struct child *c)
{
	int rc;

	if (c->pid <= 0)
		return -1;
	kill(c->pid, SIGINT);
	rc = run_wait(c->pid, 120000);
	c->pid = 0;
	return rc == 0 ? 0 : -1;
}

static bool wait_enabled(const struct pfc_category_ref *ref, unsigned timeout_ms)
{
	unsigned waited = 0;

	while (!PFC_ENABLED(*ref) && waited < timeout_ms) {
		struct timespec ts = {0, 5 * 1000 * 1000};

		nanosleep(&ts, NULL);
		waited += 5;
	}
	return PFC_ENABLED(*ref);
}

/* One value row of trace_processor_shell's CSV answer to @sql, in @out. */
static int tp_query(const char *trace, const char *sql, char *out, size_t size)
{
	char sql_path[PATH_MAX], bin[PATH_MAX], buf[8192], *line2;
	char *argv[] = {bin, "-q", sql_path, (char *)trace, NULL};
	FILE *f;
	size_t i, j;

	snprintf(sql_path, sizeof(sql_path), "%s/q.sql", g_args.tmp);
	path_in_out(bin, sizeof(bin), "trace_processor_shell");
	f = fopen(sql_path, "w");
	if (!f)
		return -1;
	fprintf(f, "%s\n", sql);
	fclose(f);
	if (run_capture(argv, NULL, buf, sizeof(buf), 600000) != 0)
		return -1;
	line2 = strchr(buf, '\n');
	if (!line2)
		return -1;
	line2++;
	for (i = 0, j = 0; line2[i] && line2[i] != '\n' && j + 1 < size; i++) {
		if (line2[i] != '"')
			out[j++] = line2[i];
	}
	out[j] = '\0';
	return j ? 0 : -1;
}

static uint64_t stat_delta(const struct pfc_stats *a, const struct pfc_stats *b, size_t off)
{
	uint64_t x, y;

	memcpy(&x, (const char *)a + off, sizeof(x));
	memcpy(&y, (const char *)b + off, sizeof(y));
	return y - x;
}

#define STAT_DELTA(a, b, field) stat_delta((a), (b), offsetof(struct pfc_stats, field))

static bool g_sdk_ok;
static char g_sdk_check[1024];

struct sustained_result {
	bool has, ok;
	unsigned threads;
	uint64_t events, dropped, missing, data_loss;
	double write_s, flush_s, file_s, file_mb;
};

static struct sustained_result g_sus[BENCH_MAX_THREADS + 1];

static const char *k_te_cfg_fmt =
	"buffers { size_kb: %u fill_policy: RING_BUFFER }\n"
	"data_sources { config { name: \"track_event\" track_event_config { "
	"enabled_categories: \"bench\" }%s } }\n"
	"write_into_file: true\n"
	"file_write_period_ms: %u\n"
	"duration_ms: 3600000\n";

/* The timed cases against a real session, then the trace read back. */
static int sdk_micro(struct bench_pool *pool)
{
	static struct bench_series series[N_CASES];
	uint64_t expect[N_CASES] = {0}, n_iter = g_args.iters / 8;
	struct pfc_stats s0, s1;
	struct child perfetto = {0};
	char cfg[1024], trace[PATH_MAX], got[256], want[256];
	unsigned r, c, threads;
	int rc;

	snprintf(cfg, sizeof(cfg), k_te_cfg_fmt, TRACE_BUFFER_KB, "", FILE_PERIOD_MS);
	if (session_start("micro", cfg, &perfetto, trace, sizeof(trace)) < 0)
		return -1;
	if (!wait_enabled(&g_cat, ENABLE_TIMEOUT_MS)) {
		fprintf(stderr, "sdk_bench: the session did not enable the category\n");
		session_stop(&perfetto);
		return -1;
	}
	pfc_get_stats(&s0, sizeof(s0));
	/* Warm-up: each thread's writer, its interned names, the SMB pages. */
	for (c = 0; c < N_SDK_CASES; c++) {
		for (threads = 1; threads <= 2; threads++) {
			const struct sdk_case *k = &k_sdk_cases[c];

			bench_pool_run(pool, threads, k->fn, NULL, n_iter);
			if (k->records)
				expect[k->id] += threads * n_iter * k->events_per_iter;
			pfc_flush(5000);
		}
	}
	for (r = 0; r < g_args.reps; r++) {
		for (c = 0; c < N_SDK_CASES; c++) {
			for (threads = 1; threads <= 2; threads++) {
				const struct sdk_case *k = &k_sdk_cases[c];

				bench_series_run(pool, &series[k->id], threads, k->fn, NULL, n_iter,
						 k->events_per_iter);
				if (!k->records)
					continue;
				expect[k->id] += threads * n_iter * k->events_per_iter;
				/* Outside the timed loop: the next run starts with an
				 * empty shared memory buffer. */
				pfc_flush(5000);
			}
		}
	}
	pfc_get_stats(&s1, sizeof(s1));
	rc = session_stop(&perfetto);
	for (c = 0; c < N_SDK_CASES; c++) {
		struct case_result *res = &g_res[k_sdk_cases[c].id];
		const struct bench_series *s = &series[k_sdk_cases[c].id];

		res->has = true;
		res->t1 = bench_series_median(s, 1, 0);
		res->best1 = bench_series_min(s, 1, 0);
		res->t2[0] = bench_series_median(s, 2, 0);
		res->t2[1] = bench_series_median(s, 2, 1);
		res->runs = s->n_runs;
		res->preempted = s->n_preempted;
		res->blocked = s->n_blocked;
	}

	/* Every event must be in the trace: a figure that loses events is not
	 * a figure. */
	snprintf(want, sizeof(want), "%llu,0,%llu,%llu,2,%llu,0,0",
		 (unsigned long long)expect[C_SLICE] / 2, (unsigned long long)expect[C_INSTANT],
		 (unsigned long long)expect[C_ARGS], (unsigned long long)expect[C_COUNTER]);
	if (rc < 0 || tp_query(trace,
			       "select (select count(*) from slice where name = 'pair') || ',' || "
			       "(select count(*) from slice where name = 'pair' and dur < 0) || ',' || "
			       "(select count(*) from slice where name = 'inst') || ',' || "
			       "(select count(*) from slice where name = 'args') || ',' || "
			       "(select count(*) from args where arg_set_id = (select arg_set_id from "
			       "slice where name = 'args' limit 1) and key like 'debug.%') || ',' || "
			       "(select count(*) from counter c join counter_track t on c.track_id = "
			       "t.id where t.name = 'bench_counter') || ',' || "
			       "(select count(*) from slice where name = 'off') || ',' || "
			       "(select ifnull(sum(value), 0) from stats where severity = 'data_loss')",
			       got, sizeof(got)) < 0)
		snprintf(got, sizeof(got), "%s", rc < 0 ? "(perfetto failed)" : "(query failed)");
	g_sdk_ok = strcmp(got, want) == 0 && STAT_DELTA(&s0, &s1, events_dropped) == 0 &&
		   STAT_DELTA(&s0, &s1, events_written) ==
			   expect[C_SLICE] + expect[C_INSTANT] + expect[C_ARGS] + expect[C_COUNTER];
	snprintf(g_sdk_check, sizeof(g_sdk_check),
		 "%s: SDK wrote %llu events, dropped %llu; the trace holds (pair slices, unended, "
		 "instants, annotated instants, annotations on one, counters, disabled, data_loss) "
		 "%s, expected %s",
		 g_sdk_ok ? "ok" : "FAILED",
		 (unsigned long long)STAT_DELTA(&s0, &s1, events_written),
		 (unsigned long long)STAT_DELTA(&s0, &s1, events_dropped), got, want);
	unlink(trace);
	return g_sdk_ok ? 0 : -1;
}

/* @threads threads write slices for g_args.seconds into a file. */
static int sdk_sustained(struct bench_pool *pool, unsigned threads)
{
	struct sustained_result *res = &g_sus[threads];
	struct sustained sus;
	struct pfc_stats s0, s1;
	struct child perfetto = {0};
	char cfg[1024], trace[PATH_MAX], name[32], got[128];
	struct stat st;
	uint64_t t0, t1, t2, t3;
	unsigned i;
	int rc;

	memset(res, 0, sizeof(*res));
	res->threads = threads;
	snprintf(name, sizeof(name), "sustained%u", threads);
	snprintf(cfg, sizeof(cfg), k_te_cfg_fmt, TRACE_BUFFER_KB,
		 " buffer_exhausted_policy: BUFFER_EXHAUSTED_STALL_THEN_DROP", FILE_PERIOD_MS);
	if (session_start(name, cfg, &perfetto, trace, sizeof(trace)) < 0)
		return -1;
	if (!wait_enabled(&g_cat, ENABLE_TIMEOUT_MS)) {
		session_stop(&perfetto);
		return -1;
	}
	memset(&sus, 0, sizeof(sus));
	pfc_get_stats(&s0, sizeof(s0));
	t0 = bench_now_ns();
	sus.deadline_ns = t0 + (uint64_t)(g_args.seconds * 1e9);
	bench_pool_run(pool, threads, loop_sustained, &sus, 0);
	t1 = bench_now_ns();
	/* Until traced has every event: flushed out of the shared memory. */
	rc = pfc_flush(30000);
	t2 = bench_now_ns();
	pfc_get_stats(&s1, sizeof(s1));
	if (session_stop(&perfetto) < 0)
		rc = -1;
	t3 = bench_now_ns();
	for (i = 0; i < threads; i++)
		res->events += sus.events[i];
	res->dropped = STAT_DELTA(&s0, &s1, events_dropped);
	res->write_s = (double)(t1 - t0) / 1e9;
	res->flush_s = (double)(t2 - t1) / 1e9;
	res->file_s = (double)(t3 - t0) / 1e9;
	res->file_mb = stat(trace, &st) == 0 ? (double)st.st_size / 1e6 : 0;
	if (rc == 0 &&
	    tp_query(trace,
		     "select (select count(*) from slice where name = 'sus' and dur >= 0) || ',' || "
		     "(select ifnull(sum(value), 0) from stats where severity = 'data_loss')",
		     got, sizeof(got)) == 0) {
		unsigned long long slices = 0, loss = 0;

		if (sscanf(got, "%llu,%llu", &slices, &loss) == 2) {
			res->has = true;
			res->missing = res->events > slices * 2 ? res->events - slices * 2 : 0;
			res->data_loss = loss;
			res->ok = res->dropped == 0 && res->missing == 0 && loss == 0 &&
				  STAT_DELTA(&s0, &s1, events_written) == res->events &&
				  slices * 2 == res->events;
		}
	}
	unlink(trace);
	return res->ok ? 0 : -1;
}

static int run_sdk(void)
{
	char bin[PATH_MAX], prod[PATH_MAX], cons[PATH_MAX];
	char *traced_argv[] = {bin, NULL};
	struct bench_pool pool = {.pin = true};
	int ready = -1, rc = -1;
	unsigned t;

	path_in_out(bin, sizeof(bin), "traced");
	snprintf(prod, sizeof(prod), "%s/producer.sock", g_args.tmp);
	snprintf(cons, sizeof(cons), "%s/consumer.sock", g_args.tmp);
	setenv("PERFETTO_PRODUCER_SOCK_NAME", prod, 1);
	setenv("PERFETTO_CONSUMER_SOCK_NAME", cons, 1);
	if (spawn(traced_argv, NULL, "TRACED_NOTIFY_FD", &ready, &g_traced) < 0 ||
	    wait_ready(ready) < 0) {
		fprintf(stderr, "sdk_bench: traced did not start\n");
		reap(&g_traced, SIGKILL);
		return -1;
	}
	if (pfc_set_socket(prod) < 0 || pfc_set_shm_size_kb(g_args.shm_kb) < 0 ||
	    pfc_category_register(&g_cat, "bench", "sdk_bench's events", NULL, 0) < 0 ||
	    pfc_category_register(&g_off, "bench_off", "never enabled", NULL, 0) < 0 ||
	    pfc_init(PFC_BACKEND_SYSTEM, "sdk_bench") < 0 ||
	    pfc_track_create("bench_counter", PFC_TRACK_COUNTER, 0, &g_counter_track) < 0) {
		fprintf(stderr, "sdk_bench: the SDK did not start\n");
		goto out;
	}
	if (bench_pool_start(&pool, 2, "bench-") < 0)
		goto out;
	rc = sdk_micro(&pool);
	for (t = 1; t <= 2; t++) {
		if (sdk_sustained(&pool, t) < 0)
			rc = -1;
	}
	bench_pool_stop(&pool);
out:
	pfc_shutdown();
	reap(&g_traced, SIGTERM);
	return rc;
}

/* ------------------------------------------------------------------ report ---- */

static void floors_and_marker(struct bench_pool *pool)
{
	static struct bench_series series[N_CASES];
	const struct {
		enum case_id id;
		bench_loop_cb fn;
	} cases[] = {{C_RDTSC, loop_rdtsc}, {C_CLOCK, loop_clock}, {C_COPY, loop_copy},
		     {C_STREAM, loop_stream}, {C_MARKER, loop_marker}};
	uint64_t n_iter = g_args.iters / 8;
	const char *why = marker_open();
	unsigned r, c, threads;

	if (why)
		snprintf(g_res[C_MARKER].skip, sizeof(g_res[C_MARKER].skip), "%s", why);
	for (r = 0; r <= g_args.reps; r++) {
		for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			if (cases[c].id == C_MARKER && why)
				continue;
			for (threads = 1; threads <= 2; threads++) {
				/* Rep 0 warms up. */
				if (r == 0)
					bench_pool_run(pool, threads, cases[c].fn, NULL, n_iter);
				else
					bench_series_run(pool, &series[cases[c].id], threads,
							 cases[c].fn, NULL, n_iter, 8);
			}
		}
	}
	marker_close();
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct case_result *res = &g_res[cases[c].id];

		if (cases[c].id == C_MARKER && why)
			continue;
		if (cases[c].id == C_MARKER && atomic_load(&g_marker.errors)) {
			snprintf(res->skip, sizeof(res->skip), "%u writes to trace_marker failed",
				 atomic_load(&g_marker.errors));
			continue;
		}
		res->has = true;
		res->t1 = bench_series_median(&series[cases[c].id], 1, 0);
		res->best1 = bench_series_min(&series[cases[c].id], 1, 0);
		res->t2[0] = bench_series_median(&series[cases[c].id], 2, 0);
		res->t2[1] = bench_series_median(&series[cases[c].id], 2, 1);
		res->runs = series[cases[c].id].n_runs;
		res->preempted = series[cases[c].id].n_preempted;
		res->blocked = series[cases[c].id].n_blocked;
	}
}

static void print_table(void)
{
	const struct case_result *rdtsc = &g_res[C_RDTSC];
	unsigned c;

	printf("\n%-38s | %9s | %7s | %-17s | %7s | %-10s | %s\n", "ns per event (median)",
	       "1 thread", "fastest", "2 threads (each)", "x rdtsc", "LTTng/this",
	       "runs preempted, blocked");
	printf("---------------------------------------+-----------+---------+-------------------+"
	       "---------+------------+------------------------\n");
	for (c = 0; c < N_CASES; c++) {
		const struct case_result *r = &g_res[c];
		char two[32], vs[48], xr[16];

		if (!r->has) {
			printf("%-38s | skipped: %s\n", r->label, r->skip);
			continue;
		}
		snprintf(two, sizeof(two), "%7.2f / %7.2f", r->t2[0], r->t2[1]);
		snprintf(xr, sizeof(xr), "%6.2fx", rdtsc->has && rdtsc->t1 > 0 ? r->t1 / rdtsc->t1 : 0);
		vs[0] = '\0';
		if (r->peer != N_CASES && g_res[r->peer].has && r->t1 > 0 && (enum case_id)c != r->peer)
			snprintf(vs, sizeof(vs), "%.1fx", g_res[r->peer].t1 / r->t1);
		printf("%-38s | %9.2f | %7.2f | %-17s | %7s | %-10s | %u, %u of %u\n", r->label, r->t1,
		       r->best1, two, xr, vs, r->preempted, r->blocked, r->runs);
	}
}

static void print_sustained(void)
{
	unsigned t;

	for (t = 1; t <= 2; t++) {
		const struct sustained_result *s = &g_sus[t];
		/* Until the file is complete: the writers, plus traced draining what
		 * the shared memory still held, plus the session's stop. */
		double rate = s->file_s > 0 ? s->events / s->file_s : 0;

		if (!s->has) {
			printf("sustained, %u thread%s: FAILED (no trace or no answer from "
			       "trace_processor_shell)\n", t, t > 1 ? "s" : "");
			continue;
		}
		printf("sustained, %u thread%s: %6.2f M events/s through traced into the file (%llu "
		       "events, %.0f MB: %.2f s writing, %.3f s pfc_flush, file complete at %.2f s); "
		       "lost %llu (SDK dropped %llu, missing from the trace %llu, trace data_loss "
		       "stats %llu)\n",
		       t, t > 1 ? "s" : "", rate / 1e6, (unsigned long long)s->events, s->file_mb,
		       s->write_s, s->flush_s, s->file_s,
		       (unsigned long long)(s->dropped + s->missing),
		       (unsigned long long)s->dropped, (unsigned long long)s->missing,
		       (unsigned long long)s->data_loss);
	}
}

static const char *verdict(bool met)
{
	return met ? "met   " : "MISSED";
}

static void print_targets(void)
{
	const struct case_result *sl = &g_res[C_SLICE], *rd = &g_res[C_RDTSC],
				 *lt = &g_res[C_LTTNG], *ar = &g_res[C_ARGS], *off = &g_res[C_OFF];
	double worst2 = sl->t2[0] > sl->t2[1] ? sl->t2[0] : sl->t2[1];
	double best_rate = 0;
	bool sus_ok = true;
	unsigned t;

	printf("\n");
	if (!sl->has) {
		printf("targets: not measured (the SDK part did not run)\n");
		return;
	}
	if (g_busy_pct > BUSY_WARN_PCT)
		printf("(the machine was %.0f%% busy with other work before the run: the figures "
		       "below are not a quiet machine's)\n", g_busy_pct);
	printf("target enabled slice begin or end <= 15 ns:         %s (%.2f ns)\n",
	       verdict(sl->t1 <= 15), sl->t1);
	if (rd->has)
		printf("target enabled slice <= 2x rdtsc of this run:       %s (%.2fx; rdtsc %.2f ns)\n",
		       verdict(sl->t1 <= 2 * rd->t1), sl->t1 / rd->t1, rd->t1);
	if (lt->has)
		printf("target >= 5x cheaper than LTTng-UST (enabled):      %s (%.1fx; LTTng-UST %.2f "
		       "ns)\n", verdict(lt->t1 >= 5 * sl->t1), lt->t1 / sl->t1, lt->t1);
	else
		printf("target >= 5x cheaper than LTTng-UST (enabled):      not measured (%s)\n",
		       lt->skip);
	printf("target event with 2 debug annotations <= 30 ns:     %s (%.2f ns)\n",
	       verdict(ar->t1 <= 30), ar->t1);
	printf("target disabled event <= 0.5 ns:                    %s (%.3f ns)\n",
	       verdict(off->t1 <= 0.5), off->t1);
	printf("target second thread as cheap as the first (<= %.1fx): %s (2 threads: %.2f / %.2f "
	       "ns vs %.2f ns alone: %.2fx; rdtsc itself %.2fx)\n",
	       SECOND_THREAD_SLACK, verdict(worst2 <= SECOND_THREAD_SLACK * sl->t1), sl->t2[0],
	       sl->t2[1], sl->t1, worst2 / sl->t1,
	       rd->has ? (rd->t2[0] > rd->t2[1] ? rd->t2[0] : rd->t2[1]) / rd->t1 : 0);
	for (t = 1; t <= 2; t++) {
		const struct sustained_result *s = &g_sus[t];
		double rate = s->has && s->file_s > 0 ? s->events / s->file_s : 0;

		if (rate > best_rate)
			best_rate = rate;
		sus_ok &= s->ok;
	}
	printf("target sustained >= 10 M events/s, none lost:       %s (%.2f M events/s at best; "
	       "%s)\n", verdict(best_rate >= 10e6 && sus_ok), best_rate / 1e6,
	       sus_ok ? "nothing lost" : "events LOST or unverified");
}

static int parse_args(int argc, char **argv)
{
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;
	int i;

	g_args.iters = 100000;
	g_args.reps = 11;
	g_args.seconds = 3;
	g_args.shm_kb = SMB_KB;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--smoke") == 0) {
			g_args.smoke = true;
			g_args.iters = 16000;
			g_args.reps = 3;
			g_args.seconds = 0.1;
		} else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
			g_args.iters = strtoull(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
			g_args.reps = (unsigned)strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
			g_args.seconds = strtod(argv[++i], NULL);
		} else if (strcmp(argv[i], "--shm-kb") == 0 && i + 1 < argc) {
			g_args.shm_kb = (uint32_t)strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--no-tracefs") == 0) {
			g_args.no_tracefs = true;
		} else if (strcmp(argv[i], "--no-lttng") == 0) {
			g_args.no_lttng = true;
		} else {
			fprintf(stderr, "usage: %s [--smoke] [--iters N] [--reps R] [--seconds S] "
					"[--shm-kb KB] [--no-tracefs] [--no-lttng]\n", argv[0]);
			return -1;
		}
	}
	if (g_args.iters < 8 || g_args.reps < 1 || g_args.reps >= BENCH_MAX_REPS ||
	    !(g_args.seconds > 0 && g_args.seconds <= 600)) {
		fprintf(stderr, "sdk_bench: --iters >= 8, --reps 1..%d, --seconds 0..600\n",
			BENCH_MAX_REPS - 1);
		return -1;
	}
	/* The build tree is where this program is: <out>/bench/sdk_bench. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	for (i = 0; i < 2; i++) {
		slash = strrchr(exe, '/');
		if (!slash)
			return -1;
		*slash = '\0';
	}
	if (snprintf(g_args.out_dir, sizeof(g_args.out_dir), "%s", exe) >=
	    (int)sizeof(g_args.out_dir)) {
		fprintf(stderr, "sdk_bench: the build tree's path is too long\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct bench_pool pool = {.pin = true};
	char bin[PATH_MAX];
	int rc;

	if (parse_args(argc, argv) < 0)
		return 1;
	path_in_out(bin, sizeof(bin), "traced");
	if (access(bin, X_OK) != 0) {
		fprintf(stderr, "sdk_bench: build first (make): no %s\n", bin);
		return 1;
	}
	snprintf(g_args.tmp, sizeof(g_args.tmp), "/tmp/pfc-sdk-bench-XXXXXX");
	if (!mkdtemp(g_args.tmp))
		return 1;
	/* The LTTng peer's user must reach its LTTNG_HOME inside. */
	chmod(g_args.tmp, 0711);
	signal(SIGPIPE, SIG_IGN);
	printf("sdk_bench: median of %u runs of %llu events per thread; 1 thread on CPU 0, 2 threads "
	       "on CPUs 0 and 1 at once (%d CPUs); SDK shared memory %u KiB\n",
	       g_args.reps, (unsigned long long)g_args.iters, bench_ncpus(), g_args.shm_kb);
	g_busy_pct = machine_busy_pct(g_args.smoke ? 100 : 1000);
	printf("machine: %.0f%% of the CPUs busy with other work before the run%s\n", g_busy_pct,
	       g_busy_pct > BUSY_WARN_PCT ? " (NOT quiet: expect noisy figures)" : "");
	fflush(stdout);

	if (bench_pool_start(&pool, 2, "floor-") < 0)
		return 1;
	floors_and_marker(&pool);
	bench_pool_stop(&pool);
	run_lttng();
	rc = run_sdk();
	printf("%s\n", g_sdk_check[0] ? g_sdk_check : "SDK: FAILED (did not run)");
	print_table();
	printf("\n");
	print_sustained();
	print_targets();
	rm_rf(g_args.tmp);
	return rc < 0 ? 1 : 0;
}
