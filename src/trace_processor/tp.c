// SPDX-License-Identifier: Apache-2.0
/*
 * tp.c - the trace processor's front: reads a trace in 4 MiB chunks,
 * frames Trace.packet (field 1) across chunk boundaries, hands each packet
 * to the tokenizer, then sorts and parses everything (tp_pipe.c: on two
 * threads), and opens SQLite over the result. Chunks stay in an arena until parsing ends, as
 * the sorted events point into them.
 */
#include "trace_processor/trace_processor.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "base/clock.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/sql/sql.h"
#include "trace_processor/tp_system.h"
#include "trace_processor/tp_int.h"

#define READ_CHUNK_BYTES (4u << 20)
/* A packet is at most this big (Perfetto's limit for one packet is far lower). */
#define MAX_PACKET_BYTES (256u << 20)

struct tp {
	struct tp_options opt;
	struct tp_db db;
	struct tp_import imp;
	struct sqlite3 *sql;
	struct tp_agg *agg;      /* the native GROUP BY path over @sql */
	bool imported;
	uint8_t *map;            /* a regular file, mapped instead of read */
	size_t map_len;
};

/*
 * A mapped file's pages count in our RSS once touched; dropping them every
 * so often keeps only the working set (they come back from the page cache
 * when a later event needs them).
 */
#define DROP_PAGES_EVERY_BYTES (64u << 20)
#define DROP_PAGES_EVERY_EVENTS (1u << 18)

static void drop_pages(struct tp *tp, size_t upto)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t len = psz > 0 ? upto - upto % (size_t)psz : 0;

	if (tp->map && len)
		madvise(tp->map, len, MADV_DONTNEED);
}

/* ---------------------------------------------------------- lifecycle ---- */

int tp_create(const struct tp_options *opt, struct tp **out)
{
	struct tp *tp = calloc(1, sizeof(*tp));
	int rc;

	if (!tp)
		return -ENOMEM;
	if (opt)
		tp->opt = *opt;
	rc = tp_db_init(&tp->db);
	if (rc < 0) {
		free(tp);
		return rc;
	}
	tp->imp.db = &tp->db;
	tp->imp.no_ftrace_raw = tp->opt.no_ftrace_raw;
	tp->imp.analyze_proto_content = tp->opt.analyze_proto_content;
	tp_arena_init(&tp->imp.arena);
	tp->imp.latest_ts = 0;
	rc = tp_stats_init(&tp->imp);
	if (rc == 0)
		rc = tp_clock_sync_init(&tp->imp);
	if (rc == 0)
		rc = tp_seq_init(&tp->imp);
	if (rc == 0)
		rc = tp_args_init(&tp->imp);
	if (rc == 0)
		rc = tp_slice_init(&tp->imp);
	if (rc == 0)
		rc = tp_track_init(&tp->imp);
	if (rc == 0)
		rc = tp_ftrace_init(&tp->imp);
	if (rc == 0)
		rc = tp_android_init(&tp->imp);
	if (rc == 0)
		rc = tp_chrome_init(&tp->imp);
	if (rc == 0)
		rc = tp_system_init(&tp->imp);
	if (rc == 0)
		tp_te_init(&tp->imp);
	if (rc == 0)
		rc = tp_proc_init(&tp->imp);
	if (rc == 0)
		rc = tp_sched_init(&tp->imp);
	if (rc < 0) {
		tp_destroy(tp);
		return rc;
	}
	*out = tp;
	return 0;
}

static void import_fini(struct tp_import *imp)
{
	tp_sorter_fini(&imp->sorter);
	tp_arena_fini(&imp->arena);
	tp_clock_sync_fini(imp);
	tp_proc_fini(imp);
	hmap_fini(&imp->ftrace_cpu_start);
	tp_track_fini(imp);
	tp_stats_fini(imp);
	hmap_fini(&imp->machine_rows);
	tp_seq_fini(imp);
	tp_android_fini(imp);
	tp_chrome_fini(imp);
	tp_system_fini(imp);
	tp_te_fini(imp);
	tp_slice_fini(imp);
	tp_args_fini(imp);
	tp_gk_fini(imp);
	tp_ftrace_fini(imp);
	tp_sched_fini(imp);
}

void tp_destroy(struct tp *tp)
{
	if (!tp)
		return;
	if (tp->sql)
		sqlite3_close(tp->sql);
	tp_agg_destroy(tp->agg);
	import_fini(&tp->imp);
	tp_db_fini(&tp->db);
	free(tp);
}

struct tp_db *tp_get_db(struct tp *tp)
{
	return &tp->db;
}

struct sqlite3 *tp_sqlite(struct tp *tp)
{
	if (tp->sql)
		return tp->sql;
	if (tp_sql_open(&tp->db, &tp->sql) < 0) {
		tp->sql = NULL;
		return NULL;
	}
	/* Without the native path every query still works, only slower. */
	if (tp_agg_create(tp->sql, &tp->db, &tp->agg) < 0)
		tp->agg = NULL;
	return tp->sql;
}

int tp_prepare(struct tp *tp, const char *sql, struct sqlite3_stmt **out, const char **out_tail)
{
	sqlite3 *conn = tp_sqlite(tp);
	sqlite3_stmt *stmt = NULL;
	const char *tail = NULL;
	int rc;

	if (!conn)
		return SQLITE_NOMEM;
	rc = sqlite3_prepare_v2(conn, sql, -1, &stmt, &tail);
	if (rc != SQLITE_OK)
		return rc;
	if (!tail)
		tail = sql + strlen(sql);
	if (stmt)
		tp_agg_prepare(tp->agg, sql, tail, &stmt);
	*out = stmt;
	*out_tail = tail;
	return SQLITE_OK;
}

/* ------------------------------------------------------------- reading ---- */

static void progress(struct tp *tp, uint64_t bytes, uint64_t t0_ns, bool done)
{
	double s = (double)(clock_monotonic_ns() - t0_ns) / 1e9;

	if (!tp->opt.progress)
		return;
	fprintf(stderr, "\rLoading trace: %.2f MB (%.1f MB/s)%s", (double)bytes / 1e6,
		s > 0 ? (double)bytes / 1e6 / s : 0.0, done ? "\n" : "");
}

/* Reads up to @cap bytes; returns bytes read (0 at EOF) or -errno. */
static ssize_t read_full(int fd, uint8_t *buf, size_t cap)
{
	size_t got = 0;

	while (got < cap) {
		ssize_t n = read(fd, buf + got, cap - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/*
 * Frames as many whole packets of [data, data + len) as there are and sets
 * *out_used to the bytes they took; the rest is a field cut short, which
 * more input completes unless @at_eof. A field that is not Trace.packet is
 * skipped (and counted), but the first one must be a packet: that is how
 * Perfetto tells a protobuf trace from other files.
 * Return: 0; -ENODATA at the end of the input (@at_eof) inside a field (a
 * truncated file); -EBADMSG at bytes that are no field (corrupt, or not a
 * trace at all).
 */
static int frame(struct tp *tp, const uint8_t *data, size_t len, bool at_eof, size_t *out_used)
{
	const uint8_t *p = data, *end = data + len;
	int rc = 0;

	while (p < end) {
		const uint8_t *q = p;
		uint64_t tag = 0, v = 0, need;
		enum pz_read_error err;
		uint32_t id, wt;

		err = pz_varint_decode(&q, end, &tag);
		id = (uint32_t)(tag >> 3);
		wt = (uint32_t)(tag & 7);
		if (err == PZ_OK && (id == 0 || (wt != 0 && wt != 1 && wt != 2 && wt != 5) ||
				     (tp->imp.n_packets == 0 && (id != PB_TRACE__PACKET || wt != 2)))) {
			rc = -EBADMSG;
			break;
		}
		if (err == PZ_OK && (wt == 0 || wt == 2))
			err = pz_varint_decode(&q, end, &v);
		if (err != PZ_OK) {
			rc = err == PZ_ERR_TRUNCATED_VARINT ? -ENODATA : -EBADMSG;
			break;
		}
		need = wt == 1 ? 8 : wt == 5 ? 4 : wt == 2 ? v : 0;
		if (need > MAX_PACKET_BYTES) {
			rc = -EBADMSG;
			break;
		}
		if ((uint64_t)(end - q) < need) {
			rc = -ENODATA;
			break;
		}
		if (id == PB_TRACE__PACKET && wt == 2) {
			tp->imp.n_packets++;
			tp_tokenize_packet(&tp->imp, q, (size_t)need, 0);
		} else {
			tp_stat_add(&tp->imp, "proto_unknown_trace_fields", -1, 0, 1);
		}
		p = q + need;
	}
	*out_used = (size_t)(p - data);
	return rc == -ENODATA && !at_eof ? 0 : rc;
}

/* Called by the merge worker every DROP_PAGES_EVERY_EVENTS events. */
static void drop_all_pages(void *user)
{
	struct tp *tp = user;

	drop_pages(tp, tp->map_len);
}

static int guard_mapped(tp_guard_cb fn, void *arg, void *user);

static void *build_thread_state_index(void *arg)
{
	struct tp_db *db = arg;

	tp_col_index_build(&db->thread_state, TSTATE_UTID);
	return NULL;
}

/*
 * The join columns of the seed queries get their indexes now: lookups need
 * them anyway, and the planner uses their value counts to choose join
 * orders that keep GROUP BY on a table's id (no sorter). An index build
 * touches only its own table: the biggest one is built on a second thread.
 */
static void build_indexes(struct tp_db *db)
{
	pthread_t th;
	bool threaded = pthread_create(&th, NULL, build_thread_state_index, db) == 0;

	tp_col_index_build(&db->sched, SCHED_UTID);
	tp_col_index_build(&db->thread, THREAD_UPID);
	if (threaded)
		pthread_join(th, NULL);
	else
		build_thread_state_index(db);
}

/* Return: 0; -EIO if the mapped trace shrank under the merge worker. */
static int parse_all(struct tp *tp)
{
	struct tp_import *imp = &tp->imp;
	int rc;

	tp_sorter_sort(&imp->sorter);
	rc = tp_pipe_run(imp, tp->map ? drop_all_pages : NULL, DROP_PAGES_EVERY_EVENTS,
			 guard_mapped, tp);
	if (rc < 0)
		return rc;
	tp_parse_finish(imp);
	build_indexes(&tp->db);
	return 0;
}

/*
 * Reports where frame() failed (@err) with @left bytes of the input from
 * offset @off not imported.
 * Return: -EINVAL if the input is not a trace at all; 0 if what came
 * before is imported.
 */
static int framing_error(struct tp *tp, const char *name, int err, uint64_t off, uint64_t left)
{
	unsigned long long n = (unsigned long long)tp->imp.n_packets;

	if (err == -ENODATA) {
		tp_stat_add(&tp->imp, "proto_trace_truncated", -1, 0, 1);
		fprintf(stderr,
			"trace_processor: %s is truncated: its last %llu bytes are a partial "
			"packet; importing the %llu packets before them\n",
			name, (unsigned long long)left, n);
		return 0;
	}
	tp_stat_add(&tp->imp, "proto_trace_framing_errors", -1, 0, 1);
	if (n == 0) {
		fprintf(stderr,
			"trace_processor: %s is not a Perfetto protobuf trace "
			"(it does not start with a TracePacket)\n",
			name);
		return -EINVAL;
	}
	fprintf(stderr,
		"trace_processor: %s: malformed data at offset %llu after %llu packets "
		"(corrupt); importing what came before, ignoring the last %llu bytes\n",
		name, (unsigned long long)off, n, (unsigned long long)left);
	return 0;
}

/*
 * A mapped file that shrinks under us (someone truncates it) raises SIGBUS
 * on the next access past its new end. While a mapping is being read, that
 * signal for an address inside it unwinds to import_guarded(), which
 * reports the damage instead of crashing; any other SIGBUS keeps its
 * default action.
 */
static _Thread_local sigjmp_buf *g_bus_jmp;
static _Thread_local const uint8_t *g_bus_lo, *g_bus_hi;

static void on_sigbus(int sig, siginfo_t *si, void *uctx)
{
	const uint8_t *addr = si ? (const uint8_t *)si->si_addr : NULL;

	(void)uctx;
	if (g_bus_jmp && addr >= g_bus_lo && addr < g_bus_hi)
		siglongjmp(*g_bus_jmp, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * Runs @fn on the merge worker with the same protection for its own
 * accesses to the mapping (none needed for a trace read into memory).
 * Return: 0, or -EIO if a SIGBUS on the mapping cut @fn short.
 */
static int guard_mapped(tp_guard_cb fn, void *arg, void *user)
{
	struct tp *tp = user;
	sigjmp_buf jmp, *outer = g_bus_jmp;
	const uint8_t *lo = g_bus_lo, *hi = g_bus_hi;
	int rc = 0;

	if (!tp->map) {
		fn(arg);
		return 0;
	}
	g_bus_lo = tp->map;
	g_bus_hi = tp->map + tp->map_len;
	if (sigsetjmp(jmp, 1) == 0) {
		g_bus_jmp = &jmp;
		fn(arg);
	} else {
		rc = -EIO;
	}
	g_bus_jmp = outer;
	g_bus_lo = lo;
	g_bus_hi = hi;
	return rc;
}

/* A regular file: framed in place from a read-only mapping, no copy. */
static int import_mapped(struct tp *tp, const char *name)
{
	uint64_t t0 = clock_monotonic_ns();
	size_t off = 0, slice = READ_CHUNK_BYTES, dropped = 0;

	madvise(tp->map, tp->map_len, MADV_SEQUENTIAL);
	tp_trace_uuid_hash(&tp->imp, tp->map, tp->map_len);
	while (off < tp->map_len) {
		size_t n = tp->map_len - off < slice ? tp->map_len - off : slice, used;
		bool last = off + n == tp->map_len;
		int err = frame(tp, tp->map + off, n, last, &used);

		off += used;
		if (err < 0) {
			if (framing_error(tp, name, err, off, tp->map_len - off) < 0)
				return -EINVAL;
			break;
		}
		if (used == 0 && !last) {
			slice *= 2; /* a packet bigger than the slice */
			continue;
		}
		if (off - dropped >= DROP_PAGES_EVERY_BYTES) {
			drop_pages(tp, off);
			progress(tp, off, t0, false);
			dropped = off;
		}
	}
	tp->imp.bytes_read = tp->map_len;
	drop_pages(tp, tp->map_len);
	if (parse_all(tp) < 0)
		return -EIO;
	progress(tp, tp->map_len, t0, true);
	return 0;
}

int tp_import_fd(struct tp *tp, int fd, const char *name)
{
	uint8_t *carry = NULL;
	size_t carry_len = 0;
	uint64_t total = 0, t0 = clock_monotonic_ns(), last_progress = 0;
	int rc = 0;

	struct stat st;

	if (tp->imported)
		return -EALREADY;
	tp->imported = true;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= SIZE_MAX) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (p != MAP_FAILED) {
			struct sigaction sa, old;
			sigjmp_buf jmp;

			tp->map = p;
			tp->map_len = (size_t)st.st_size;
			memset(&sa, 0, sizeof(sa));
			sa.sa_sigaction = on_sigbus;
			sa.sa_flags = SA_SIGINFO;
			sigemptyset(&sa.sa_mask);
			sigaction(SIGBUS, &sa, &old);
			g_bus_lo = tp->map;
			g_bus_hi = tp->map + tp->map_len;
			if (sigsetjmp(jmp, 1) == 0) {
				g_bus_jmp = &jmp;
				rc = import_mapped(tp, name);
			} else {
				/* The merge worker may still run: it stops first. */
				tp_pipe_abort(tp->imp.pipe);
				rc = -EIO;
			}
			if (rc == -EIO) {
				fprintf(stderr, "trace_processor: %s shrank while it was being read; "
						"the import is incomplete\n", name);
				tp_stat_add(&tp->imp, "proto_trace_framing_errors", -1, 0, 1);
			}
			g_bus_jmp = NULL;
			sigaction(SIGBUS, &old, NULL);
			tp_sorter_fini(&tp->imp.sorter);
			tp_arena_fini(&tp->imp.arena);
			munmap(tp->map, tp->map_len);
			tp->map = NULL;
			return rc;
		}
	}
	for (;;) {
		/* A chunk holds the previous tail followed by new bytes. */
		size_t want = READ_CHUNK_BYTES > carry_len ? READ_CHUNK_BYTES : carry_len * 2;
		uint8_t *chunk = tp_arena_alloc(&tp->imp.arena, carry_len + want);
		size_t used, left;
		ssize_t n;
		int err;

		if (!chunk) {
			rc = -ENOMEM;
			break;
		}
		if (carry_len)
			memcpy(chunk, carry, carry_len);
		n = read_full(fd, chunk + carry_len, want);
		if (n < 0) {
			fprintf(stderr, "trace_processor: reading %s: %s\n", name, strerror((int)-n));
			rc = (int)n;
			break;
		}
		total += (uint64_t)n;
		tp_trace_uuid_hash(&tp->imp, chunk + carry_len, (size_t)n);
		err = frame(tp, chunk, carry_len + (size_t)n, n == 0, &used);
		left = carry_len + (size_t)n - used;
		if (err < 0) {
			rc = framing_error(tp, name, err, total - left, left);
			break;
		}
		carry = chunk + used;
		carry_len = left;
		if (total - last_progress >= (32u << 20)) {
			progress(tp, total, t0, false);
			last_progress = total;
		}
		if (n == 0)
			break;
	}
	tp->imp.bytes_read = total;
	if (rc == -EINVAL || rc == -ENOMEM)
		return rc;
	parse_all(tp); /* no mapping: nothing to shrink */
	progress(tp, total, t0, true);
	tp_sorter_fini(&tp->imp.sorter);
	tp_arena_fini(&tp->imp.arena);
	return rc;
}
