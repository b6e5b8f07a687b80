// SPDX-License-Identifier: Apache-2.0
/*
 * reader.c - the read layer's front: sets the import up (every
 * importer's state), reads a trace in 4 MiB chunks (or maps a regular
 * file), frames Trace.packet (field 1) across chunk boundaries, hands each
 * packet to the tokenizer (token.c), then sorts (sort.c) and parses
 * everything (pipe.c: on two threads) and finishes the import
 * (parse.c). Chunks stay in an arena until parsing ends, as the sorted
 * events point into them. Called by the facade (tp.c), one trace each.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "base/clock.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/android/android.h"
#include "trace_processor/import/chrome/chrome.h"
#include "trace_processor/import/ftrace/ftrace.h"
#include "trace_processor/import/generic_kernel/generic_kernel.h"
#include "trace_processor/import/profiling/profiling.h"
#include "trace_processor/import/system/system.h"
#include "trace_processor/import/track_event/track_event.h"
#include "trace_processor/read/read_int.h"

#define READ_CHUNK_BYTES (4u << 20)
/* A packet is at most this big (Perfetto's limit for one packet is far lower). */
#define MAX_PACKET_BYTES (256u << 20)

/* ---------------------------------------------------------- lifecycle ---- */

int tp_read_create(struct tp_db *db, const struct tp_read_options *opt, struct tp_read **out)
{
	struct tp_read *r = calloc(1, sizeof(*r));
	struct tp_import *imp;
	int rc;

	if (!r)
		return -ENOMEM;
	imp = &r->imp;
	imp->db = db;
	imp->no_ftrace_raw = opt->no_ftrace_raw;
	imp->analyze_proto_content = opt->analyze_proto_content;
	imp->crop_track_events = opt->crop_track_events;
	r->progress = opt->progress;
	tp_arena_init(&r->arena);
	r->latest_ts = 0;
	/* Stats first: everything else counts into them. */
	rc = tp_stats_init(imp);
	if (rc == 0)
		rc = tp_clock_sync_init(imp);
	if (rc == 0)
		rc = tp_seq_init(imp);
	if (rc == 0)
		rc = tp_args_init(imp);
	if (rc == 0)
		rc = tp_slice_init(imp);
	if (rc == 0)
		rc = tp_state_init(imp);
	if (rc == 0)
		rc = tp_track_init(imp);
	if (rc == 0)
		rc = tp_ftrace_init(imp);
	if (rc == 0)
		rc = tp_android_init(imp);
	if (rc == 0)
		rc = tp_chrome_init(imp);
	if (rc == 0)
		rc = tp_system_init(imp);
	if (rc == 0)
		tp_te_init(imp);
	if (rc == 0)
		rc = tp_proc_init(imp);
	if (rc == 0)
		rc = tp_sched_init(imp);
	if (rc < 0) {
		tp_read_destroy(r);
		return rc;
	}
	*out = r;
	return 0;
}

void tp_read_destroy(struct tp_read *r)
{
	struct tp_import *imp;

	if (!r)
		return;
	imp = &r->imp;
	tp_sorter_fini(&r->sorter);
	tp_arena_fini(&r->arena);
	tp_clock_sync_fini(imp);
	tp_proc_fini(imp);
	hmap_fini(&r->ftrace_cpu_start);
	hmap_fini(&r->queue_rank);
	tp_track_fini(imp);
	tp_stats_fini(imp);
	hmap_fini(&r->machine_rows);
	tp_seq_fini(imp);
	tp_android_fini(imp);
	tp_chrome_fini(imp);
	tp_system_fini(imp);
	tp_te_fini(imp);
	tp_slice_fini(imp);
	tp_state_fini(imp);
	tp_args_fini(imp);
	tp_gk_fini(imp);
	tp_profiling_fini(imp);
	tp_ftrace_fini(imp);
	tp_sched_fini(imp);
	free(r);
}

/* ------------------------------------------------------------- reading ---- */

/*
 * A mapped file's pages count in our RSS once touched; dropping them every
 * so often keeps only the working set (they come back from the page cache
 * when a later event needs them).
 */
#define DROP_PAGES_EVERY_BYTES (64u << 20)
#define DROP_PAGES_EVERY_EVENTS (1u << 16)

static void drop_pages(struct tp_read *r, size_t upto)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t len = psz > 0 ? upto - upto % (size_t)psz : 0;

	if (r->map && len)
		madvise(r->map, len, MADV_DONTNEED);
}

static void progress(struct tp_read *r, uint64_t bytes, uint64_t t0_ns, bool done)
{
	double s = (double)(clock_monotonic_ns() - t0_ns) / 1e9;

	if (!r->progress)
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
static int frame(struct tp_read *r, const uint8_t *data, size_t len, bool at_eof, size_t *out_used)
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
				     (r->n_packets == 0 && (id != PB_TRACE__PACKET || wt != 2)))) {
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
			r->n_packets++;
			tp_tokenize_packet(r, q, (size_t)need, 0);
		} else {
			tp_stat_add(&r->imp, "proto_unknown_trace_fields", -1, 0, 1);
		}
		p = q + need;
	}
	*out_used = (size_t)(p - data);
	return rc == -ENODATA && !at_eof ? 0 : rc;
}

/* Called by the merge worker every DROP_PAGES_EVERY_EVENTS events. */
static void drop_all_pages(void *user)
{
	struct tp_read *r = user;

	drop_pages(r, r->map_len);
}

static int guard_mapped(tp_guard_cb fn, void *arg, void *user);

/*
 * The join columns of the seed queries get their distinct counts now: the
 * planner uses them to choose join orders that keep GROUP BY on a table's
 * id (no sorter). The rows of their indexes (4 bytes a row: 35 MB of a
 * 200 MB storm's import) are built by the first lookup that needs them.
 */
static void build_indexes(struct tp_db *db)
{
	tp_col_index_count(&db->thread_state, TSTATE_UTID);
	tp_col_index_count(&db->sched, SCHED_UTID);
	tp_col_index_build(&db->thread, THREAD_UPID);
}

/* Return: 0; -EIO if the mapped trace shrank under the merge worker. */
static int parse_all(struct tp_read *r)
{
	int rc;

	tp_sorter_sort(&r->sorter);
	tp_parse_begin(r);
	rc = tp_pipe_run(r, r->map ? drop_all_pages : NULL, DROP_PAGES_EVERY_EVENTS,
			 guard_mapped, r);
	if (rc < 0)
		return rc;
	tp_parse_finish(r);
	build_indexes(r->imp.db);
	return 0;
}

/*
 * Reports where frame() failed (@err) with @left bytes of the input from
 * offset @off not imported.
 * Return: -EINVAL if the input is not a trace at all; 0 if what came
 * before is imported.
 */
static int framing_error(struct tp_read *r, const char *name, int err, uint64_t off, uint64_t left)
{
	unsigned long long n = (unsigned long long)r->n_packets;

	if (err == -ENODATA) {
		tp_stat_add(&r->imp, "proto_trace_truncated", -1, 0, 1);
		fprintf(stderr,
			"trace_processor: %s is truncated: its last %llu bytes are a partial "
			"packet; importing the %llu packets before them\n",
			name, (unsigned long long)left, n);
		return 0;
	}
	tp_stat_add(&r->imp, "proto_trace_framing_errors", -1, 0, 1);
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
	struct tp_read *r = user;
	sigjmp_buf jmp, *outer = g_bus_jmp;
	const uint8_t *lo = g_bus_lo, *hi = g_bus_hi;
	int rc = 0;

	if (!r->map) {
		fn(arg);
		return 0;
	}
	g_bus_lo = r->map;
	g_bus_hi = r->map + r->map_len;
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

/*
 * Maps the whole pages of [@off, @off + @n) of the file in one system call
 * (a hint), where touching them would take a page fault per 64 KiB.
 */
static void populate_read(struct tp_read *r, size_t off, size_t n)
{
#ifdef MADV_POPULATE_READ
	long psz = sysconf(_SC_PAGESIZE);
	size_t lo = psz > 0 ? off - off % (size_t)psz : off;

	(void)madvise(r->map + lo, off + n - lo, MADV_POPULATE_READ);
#else
	(void)r;
	(void)off;
	(void)n;
#endif
}

/* A regular file: framed in place from a read-only mapping, no copy. */
static int import_mapped(struct tp_read *r, const char *name)
{
	uint64_t t0 = clock_monotonic_ns();
	size_t off = 0, slice = READ_CHUNK_BYTES, dropped = 0;

	madvise(r->map, r->map_len, MADV_SEQUENTIAL);
	tp_trace_uuid_hash(&r->imp, r->map, r->map_len);
	while (off < r->map_len) {
		size_t n = r->map_len - off < slice ? r->map_len - off : slice, used;
		bool last = off + n == r->map_len;
		int err;

		populate_read(r, off, n);
		err = frame(r, r->map + off, n, last, &used);

		off += used;
		if (err < 0) {
			if (framing_error(r, name, err, off, r->map_len - off) < 0)
				return -EINVAL;
			break;
		}
		if (used == 0 && !last) {
			slice *= 2; /* a packet bigger than the slice */
			continue;
		}
		if (off - dropped >= DROP_PAGES_EVERY_BYTES) {
			drop_pages(r, off);
			progress(r, off, t0, false);
			dropped = off;
		}
	}
	r->bytes_read = r->map_len;
	drop_pages(r, r->map_len);
	if (parse_all(r) < 0)
		return -EIO;
	progress(r, r->map_len, t0, true);
	return 0;
}

int tp_read_fd(struct tp_read *r, int fd, const char *name)
{
	uint8_t *carry = NULL;
	size_t carry_len = 0;
	uint64_t total = 0, t0 = clock_monotonic_ns(), last_progress = 0;
	int rc = 0;

	struct stat st;

	if (r->imported)
		return -EALREADY;
	r->imported = true;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= SIZE_MAX) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (p != MAP_FAILED) {
			struct sigaction sa, old;
			sigjmp_buf jmp;

			r->map = p;
			r->map_len = (size_t)st.st_size;
			memset(&sa, 0, sizeof(sa));
			sa.sa_sigaction = on_sigbus;
			sa.sa_flags = SA_SIGINFO;
			sigemptyset(&sa.sa_mask);
			sigaction(SIGBUS, &sa, &old);
			g_bus_lo = r->map;
			g_bus_hi = r->map + r->map_len;
			if (sigsetjmp(jmp, 1) == 0) {
				g_bus_jmp = &jmp;
				rc = import_mapped(r, name);
			} else {
				/* The merge worker may still run: it stops first. */
				tp_pipe_abort(r->pipe);
				rc = -EIO;
			}
			if (rc == -EIO) {
				fprintf(stderr, "trace_processor: %s shrank while it was being read; "
						"the import is incomplete\n", name);
				tp_stat_add(&r->imp, "proto_trace_framing_errors", -1, 0, 1);
			}
			g_bus_jmp = NULL;
			sigaction(SIGBUS, &old, NULL);
			tp_sorter_fini(&r->sorter);
			tp_arena_fini(&r->arena);
			munmap(r->map, r->map_len);
			r->map = NULL;
			return rc;
		}
	}
	for (;;) {
		/* A chunk holds the previous tail followed by new bytes. */
		size_t want = READ_CHUNK_BYTES > carry_len ? READ_CHUNK_BYTES : carry_len * 2;
		uint8_t *chunk = tp_arena_alloc(&r->arena, carry_len + want);
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
		tp_trace_uuid_hash(&r->imp, chunk + carry_len, (size_t)n);
		err = frame(r, chunk, carry_len + (size_t)n, n == 0, &used);
		left = carry_len + (size_t)n - used;
		if (err < 0) {
			rc = framing_error(r, name, err, total - left, left);
			break;
		}
		carry = chunk + used;
		carry_len = left;
		if (total - last_progress >= (32u << 20)) {
			progress(r, total, t0, false);
			last_progress = total;
		}
		if (n == 0)
			break;
	}
	r->bytes_read = total;
	if (rc == -EINVAL || rc == -ENOMEM)
		return rc;
	parse_all(r); /* no mapping: nothing to shrink */
	progress(r, total, t0, true);
	tp_sorter_fini(&r->sorter);
	tp_arena_fini(&r->arena);
	return rc;
}
