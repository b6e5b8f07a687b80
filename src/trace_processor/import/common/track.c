// SPDX-License-Identifier: Apache-2.0
/*
 * track.c - tracks (one per thread, per counter and CPU, per counter
 * and process, global counters; by type and dimensions) and counter
 * values. Lookups are by a hash of the track's identity.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "trace_processor/import/common/common.h"

struct tp_tracks {
	struct hmap cpu_counters;     /* hash(name, machine, cpu) -> track id */
	struct hmap threads;          /* utid -> track id */
	struct hmap process_counters; /* hash(name, upid) -> track id */
	struct hmap global_counters;  /* hash(name, machine) -> track id */
	struct hmap dims;             /* identity(type, machine, dims, idx) -> track id */
	uint32_t groups;              /* track groups handed out */
	/* process counters pushed by a thread, their track chosen at the end */
	struct pending_counter *pending;
	size_t n_pending, cap_pending;
};

struct pending_counter {
	int64_t row, utid;
	const char *mem_key;          /* process_memory key; NULL: oom_score_adj */
};

int tp_track_init(struct tp_import *imp)
{
	imp->tracks = calloc(1, sizeof(*imp->tracks));
	return imp->tracks ? 0 : -ENOMEM;
}

static int64_t new_track(struct tp_import *imp, const char *name, const char *type,
			 bool counter, uint32_t machine)
{
	struct tp_table *t = &imp->db->track;
	int64_t row = tp_table_append(t);

	if (row < 0)
		return row;
	if (name)
		tp_set_str(t, TRACK_NAME, (size_t)row, tp_db_str(imp->db, name));
	tp_set_str(t, TRACK_TYPE, (size_t)row, tp_db_str(imp->db, type));
	tp_set_int(t, TRACK_IS_COUNTER, (size_t)row, counter);
	tp_set_int(t, TRACK_MACHINE_ID, (size_t)row, machine);
	return row;
}

/* Perfetto's track type for the counters we know; "<name>" otherwise. */
static const char *cpu_counter_type(const char *name)
{
	size_t n = strlen(name);

	if (!strcmp(name, "cpufreq"))
		return "cpu_frequency";
	if (!strcmp(name, "cpuidle"))
		return "cpu_idle";
	if (n > 15 && !strcmp(name + n - 15, " Max Freq Limit"))
		return "cpu_max_frequency_limit";
	if (n > 15 && !strcmp(name + n - 15, " Min Freq Limit"))
		return "cpu_min_frequency_limit";
	return name;
}

/*
 * The dimension arg set of a new track, as Perfetto's AddTrack stores it
 * (before the track's row, with ids in creation order): every dimension in
 * blueprint order, numbers as ints whatever their C type. Return: the set,
 * or TP_NULL_INT when there are none (or on OOM).
 */
static int64_t dims_argset(struct tp_import *imp, const struct tp_dim *dims, size_t n)
{
	struct tp_argset args = {0};
	int64_t set;
	size_t i;

	if (!n)
		return TP_NULL_INT;
	for (i = 0; i < n; i++) {
		uint32_t key = tp_db_str(imp->db, dims[i].key);

		if (dims[i].kind == TP_DIM_STR)
			tp_argset_str(imp, &args, key, (uint32_t)dims[i].v);
		else
			tp_argset_int(imp, &args, key, dims[i].v);
	}
	set = tp_argset_commit(imp, &args);
	tp_argset_fini(&args);
	return set;
}

static void set_dims(struct tp_import *imp, int64_t row, const struct tp_dim *dims, size_t n)
{
	int64_t set = dims_argset(imp, dims, n);

	if (set != TP_NULL_INT)
		tp_set_int(&imp->db->track, TRACK_DIMENSION_ARG_SET_ID, (size_t)row, set);
}

static int64_t cpu_counter(struct tp_import *imp, const char *name, const char *type,
			   uint32_t machine, int64_t cpu, const char *dim_key, const char *dim_val)
{
	uint64_t k = tp_hash_name(name, machine, (uint64_t)cpu), v;
	struct tp_dim dims[2] = {{"cpu", TP_DIM_INT, cpu}, {dim_key, TP_DIM_STR, 0}};
	int64_t row;

	if (hmap_get(&imp->tracks->cpu_counters, k, &v))
		return (int64_t)v;
	/* Perfetto's dimensions: the CPU, then the key naming the counter. */
	if (dim_key)
		dims[1].v = tp_db_str(imp->db, dim_val);
	/* As in Perfetto, a track with a CPU dimension gives that CPU its cpu row. */
	if (cpu >= 0 && cpu <= UINT32_MAX)
		tp_sched_ucpu(imp, machine, (uint32_t)cpu);
	row = new_track(imp, name, type, true, machine);
	if (row < 0)
		return row;
	tp_set_int(&imp->db->track, TRACK_CPU, (size_t)row, cpu);
	set_dims(imp, row, dims, dim_key ? 2 : 1);
	hmap_put(&imp->tracks->cpu_counters, k, (uint64_t)row);
	return row;
}

int64_t tp_track_cpu_counter(struct tp_import *imp, const char *name, uint32_t machine, int64_t cpu)
{
	return cpu_counter(imp, name, cpu_counter_type(name), machine, cpu, NULL, NULL);
}

int64_t tp_track_cpu_counter_dims(struct tp_import *imp, const char *name, const char *type,
				  uint32_t machine, int64_t cpu, const char *dim_key,
				  const char *dim_val)
{
	return cpu_counter(imp, name, type, machine, cpu, dim_key, dim_val);
}

#define MEM_POLLED_URL \
	"https://perfetto.dev/docs/data-sources/memory-counters#per-process-polled-counters"
#define MEM_FTRACE_URL \
	"https://perfetto.dev/docs/data-sources/memory-counters#per-process-memory-events-ftrace"

/*
 * The description Perfetto gives the process_memory track of @key (the text
 * users see in its track's description), or NULL for a key it has none for.
 */
static const char *process_memory_description(const char *key)
{
	static const struct {
		const char *key, *text;
	} d[] = {
		{"virt", "Virtual memory size (VmSize): Total virtual address space reserved by the "
			 "process. Useful for understanding address space layout and detecting "
			 "excessive memory reservations. WARNING: Polled periodically, so may miss "
			 "short-lived changes. See " MEM_POLLED_URL " for information."},
		{"rss", "Resident set size (VmRSS): Total physical memory currently used by the "
			"process (rss.anon + rss.file + rss.shmem). Key metric for understanding "
			"actual memory pressure and OOM risk. WARNING: Polled periodically, so use "
			"rss.anon + rss.file + rss.shmem from ftrace for complementary "
			"high-resolution tracking. See " MEM_POLLED_URL " for information."},
		{"rss.anon", "Anonymous resident memory (RssAnon): Physical memory for heap and "
			     "stack allocations not backed by files. High values indicate memory "
			     "allocations from malloc/new. Most important for app memory usage and "
			     "detecting memory leaks. See " MEM_FTRACE_URL " for information."},
		{"rss.file", "File-backed resident memory (RssFile): Physical memory used for "
			     "memory-mapped files (e.g., code, libraries, mmap'd files). Useful for "
			     "understanding shared library overhead. Can be reclaimed under memory "
			     "pressure. See " MEM_FTRACE_URL " for information."},
		{"rss.shmem", "Shared memory resident pages (RssShmem): Physical memory in shared "
			      "memory regions (shmem/tmpfs). Used for IPC and shared data. Important "
			      "for identifying inter-process memory usage. See " MEM_FTRACE_URL
			      " for information."},
		{"swap", "Swapped memory (VmSwap): Memory moved to swap storage. Does not "
			 "necessarily indicate severe pressure - kswapd may swap out inactive memory "
			 "proactively. However, if actively used and swap/anon ratio is high, this "
			 "suggests inefficient memory usage or leaks. Accessing swapped memory causes "
			 "major page faults and performance degradation. Available from both ftrace "
			 "and polling for complementary views. See " MEM_FTRACE_URL " or "
			 MEM_POLLED_URL " for information."},
		{"locked", "Locked memory pages (VmLocked): Memory pinned in RAM that cannot be "
			   "swapped out or reclaimed (via mlock). High values prevent memory "
			   "reclamation during pressure. Typically set via profiler-guided "
			   "optimization to minimize faults on critical paths. WARNING: Polled "
			   "periodically, so may miss short-lived changes. See " MEM_POLLED_URL
			   " for information."},
		{"rss.watermark", "Peak RSS (VmHWM): Historical maximum RSS reached by the process. "
				  "Useful for capacity planning and detecting memory usage spikes "
				  "that may have triggered OOM or performance issues. WARNING: Polled "
				  "periodically, so the time of the spike may not be accurate. Prefer "
				  "relying on rss.anon + rss.file + rss.shmem which have pushed ftrace "
				  "events so are more time accurate. See " MEM_POLLED_URL
				  " for information."},
		{"dmabuf_rss", "DMA buffer RSS: Physical memory used for DMA buffers (successor to "
			       "Android ION). Used for surfaces, hardware bitmaps, media/camera "
			       "buffers, and other GPU/hardware accelerator memory. Critical for "
			       "graphics/camera apps. High values indicate GPU memory pressure or "
			       "resource leaks in graphics/media pipelines. See dmabuf ftrace events "
			       "or /proc/[pid]/fdinfo polling for information."},
		{"unreclaimable", "Unreclaimable memory: KGSL driver specific event, rarely useful."},
		{"unknown", "Unknown memory type: Memory category not recognized by the tracer. May "
			    "indicate new kernel memory types or parsing errors. Should be "
			    "investigated if non-zero."},
	};
	size_t i;

	for (i = 0; key && i < sizeof(d) / sizeof(d[0]); i++)
		if (!strcmp(d[i].key, key))
			return d[i].text;
	return NULL;
}

/* The track's description, kept (as Perfetto does) in its source arg set too. */
static void set_description(struct tp_import *imp, int64_t row, const char *text)
{
	struct tp_argset src = {0};
	uint32_t str = tp_db_str(imp->db, text);
	int64_t set;

	tp_argset_str(imp, &src, tp_db_str(imp->db, "description"), str);
	set = tp_argset_commit(imp, &src);
	tp_argset_fini(&src);
	if (set != TP_NULL_INT)
		tp_set_int(&imp->db->track, TRACK_SOURCE_ARG_SET_ID, (size_t)row, set);
	tp_set_str(&imp->db->track, TRACK_DESCRIPTION, (size_t)row, str);
}

int64_t tp_track_process_counter(struct tp_import *imp, const char *name, const char *type,
				 int64_t upid, const char *dim_key, const char *dim_val)
{
	uint64_t k = tp_hash_name(name, (uint64_t)upid, 0), v;
	struct tp_dim dims[2] = {{"upid", TP_DIM_INT, upid}, {dim_key, TP_DIM_STR, 0}};
	int64_t row;
	uint32_t machine = 0;

	if (hmap_get(&imp->tracks->process_counters, k, &v))
		return (int64_t)v;
	if (upid >= 0 && (size_t)upid < imp->db->process.n_rows)
		machine = (uint32_t)tp_col_int(&imp->db->process, PROCESS_MACHINE_ID)[upid];
	if (dim_key)
		dims[1].v = tp_db_str(imp->db, dim_val);
	row = new_track(imp, name, type, true, machine);
	if (row < 0)
		return row;
	tp_set_int(&imp->db->track, TRACK_UPID, (size_t)row, upid);
	set_dims(imp, row, dims, dim_key ? 2 : 1);
	if (!strcmp(type, "process_memory") && process_memory_description(dim_val))
		set_description(imp, row, process_memory_description(dim_val));
	hmap_put(&imp->tracks->process_counters, k, (uint64_t)row);
	return row;
}

int64_t tp_track_global_counter(struct tp_import *imp, const char *name, uint32_t machine)
{
	uint64_t k = tp_hash_name(name, machine, 1), v;
	int64_t row;

	if (hmap_get(&imp->tracks->global_counters, k, &v))
		return (int64_t)v;
	row = new_track(imp, name, name, true, machine);
	if (row >= 0)
		hmap_put(&imp->tracks->global_counters, k, (uint64_t)row);
	return row;
}

int64_t tp_track_thread(struct tp_import *imp, int64_t utid)
{
	uint64_t v;
	int64_t row;
	uint32_t machine = 0;

	if (hmap_get(&imp->tracks->threads, (uint64_t)utid, &v))
		return (int64_t)v;
	if (utid >= 0 && (size_t)utid < imp->db->thread.n_rows)
		machine = (uint32_t)tp_col_int(&imp->db->thread, THREAD_MACHINE_ID)[utid];
	row = new_track(imp, NULL, "thread_execution", false, machine);
	if (row < 0)
		return row;
	tp_set_int(&imp->db->track, TRACK_UTID, (size_t)row, utid);
	{
		struct tp_dim dim = {"utid", TP_DIM_INT, utid};

		set_dims(imp, row, &dim, 1);
	}
	hmap_put(&imp->tracks->threads, (uint64_t)utid, (uint64_t)row);
	return row;
}

int64_t tp_counter_add(struct tp_import *imp, int64_t ts, int64_t track, double value)
{
	struct tp_table *c = &imp->db->counter;
	int64_t row;

	if (track < 0)
		return -1;
	row = tp_table_append(c);
	if (row < 0)
		return -1;
	tp_set_int(c, COUNTER_TS, (size_t)row, ts);
	tp_set_int(c, COUNTER_TRACK_ID, (size_t)row, track);
	tp_set_real(c, COUNTER_VALUE, (size_t)row, value);
	tp_bounds_add(imp->db, ts);
	return row;
}

void tp_counter_set_utid(struct tp_import *imp, int64_t row, int64_t utid)
{
	struct tp_argset args = {0};
	int64_t set;

	if (row < 0 || utid < 0)
		return;
	tp_argset_uint(imp, &args, tp_db_str(imp->db, "utid"), (uint64_t)utid);
	set = tp_argset_commit(imp, &args);
	tp_argset_fini(&args);
	if (set != TP_NULL_INT)
		tp_set_int(&imp->db->counter, COUNTER_ARG_SET_ID, (size_t)row, set);
}

/*
 * Process counters a thread pushes (Perfetto's PushProcessCounterForThread):
 * the value is stored now with a utid arg, its track is chosen once the
 * whole trace is read, from the process the thread then belongs to, or
 * the thread's own *_thread_fallback track if it never got one.
 */
int64_t tp_counter_for_thread(struct tp_import *imp, int64_t ts, double value, int64_t utid,
			      const char *mem_key)
{
	struct tp_tracks *t = imp->tracks;
	struct tp_table *c = &imp->db->counter;
	int64_t row;

	if (utid < 0)
		return -1;
	if (t->n_pending == t->cap_pending) {
		size_t cap = t->cap_pending ? t->cap_pending * 2 : 64;
		struct pending_counter *p = realloc(t->pending, cap * sizeof(*p));

		if (!p)
			return -1;
		t->pending = p;
		t->cap_pending = cap;
	}
	row = tp_table_append(c);
	if (row < 0)
		return -1;
	tp_set_int(c, COUNTER_TS, (size_t)row, ts);
	tp_set_int(c, COUNTER_TRACK_ID, (size_t)row, 0);
	tp_set_real(c, COUNTER_VALUE, (size_t)row, value);
	tp_bounds_add(imp->db, ts);
	tp_counter_set_utid(imp, row, utid);
	t->pending[t->n_pending].row = row;
	t->pending[t->n_pending].utid = utid;
	t->pending[t->n_pending].mem_key = mem_key;
	t->n_pending++;
	return row;
}

/* The *_thread_fallback counter track @name of @utid (@mem_key: NULL for oom). */
static int64_t thread_fallback_track(struct tp_import *imp, const char *name, int64_t utid,
				     const char *mem_key)
{
	uint64_t k = tp_hash_name(name, (uint64_t)utid, 3), v;
	struct tp_dim dims[2] = {{"utid", TP_DIM_INT, utid}, {"process_memory_key", TP_DIM_STR, 0}};
	uint32_t machine = 0;
	int64_t row;

	if (hmap_get(&imp->tracks->process_counters, k, &v))
		return (int64_t)v;
	if ((size_t)utid < imp->db->thread.n_rows)
		machine = (uint32_t)tp_col_int(&imp->db->thread, THREAD_MACHINE_ID)[utid];
	row = new_track(imp, name,
			mem_key ? "process_memory_thread_fallback" : "oom_score_adj_thread_fallback",
			true, machine);
	if (row < 0)
		return row;
	tp_set_int(&imp->db->track, TRACK_UTID, (size_t)row, utid);
	if (mem_key)
		dims[1].v = tp_db_str(imp->db, mem_key);
	set_dims(imp, row, dims, mem_key ? 2 : 1);
	hmap_put(&imp->tracks->process_counters, k, (uint64_t)row);
	return row;
}

void tp_counter_finish(struct tp_import *imp)
{
	struct tp_tracks *t = imp->tracks;
	char name[128];
	size_t i;

	for (i = 0; i < t->n_pending; i++) {
		const struct pending_counter *p = &t->pending[i];
		int64_t upid = tp_col_int(&imp->db->thread, THREAD_UPID)[p->utid], track;

		if (p->mem_key)
			snprintf(name, sizeof(name), "mem.%s", p->mem_key);
		else
			snprintf(name, sizeof(name), "oom_score_adj");
		if (upid != TP_NULL_INT && upid >= 0)
			track = tp_track_process_counter(imp, name,
							 p->mem_key ? "process_memory" : "oom_score_adj",
							 upid, p->mem_key ? "process_memory_key" : NULL,
							 p->mem_key);
		else
			track = thread_fallback_track(imp, name, p->utid, p->mem_key);
		if (track >= 0)
			tp_set_int(&imp->db->counter, COUNTER_TRACK_ID, (size_t)p->row, track);
	}
	t->n_pending = 0;
}

/* ----------------------------------------------------- dimension tracks ---- */

/*
 * Tracks identified, as in Perfetto, by a type and a list of dimensions
 * (wakelock name, GPU context, energy consumer, ...), which become the
 * track's dimension arg set. One hash lookup per event.
 */
static uint64_t identity(const char *type, uint32_t machine, const struct tp_dim *dims,
			 size_t n, uint32_t idx)
{
	uint64_t h = fnv1a64(type, strlen(type) + 1);
	size_t i;

	h = fnv1a64_update(h, &machine, sizeof(machine));
	h = fnv1a64_update(h, &idx, sizeof(idx));
	for (i = 0; i < n; i++) {
		h = fnv1a64_update(h, dims[i].key, strlen(dims[i].key) + 1);
		h = fnv1a64_update(h, &dims[i].v, sizeof(dims[i].v));
	}
	return h;
}

int64_t tp_track_dims(struct tp_import *imp, const char *type, uint32_t name, bool is_counter,
		      uint32_t machine, const struct tp_dim *dims, size_t n_dims, uint32_t idx)
{
	struct tp_table *t = &imp->db->track;
	uint64_t k = identity(type, machine, dims, n_dims, idx), v;
	int64_t row;

	if (hmap_get(&imp->tracks->dims, k, &v))
		return (int64_t)v;
	row = tp_table_append(t);
	if (row < 0)
		return -1;
	if (name)
		tp_set_str(t, TRACK_NAME, (size_t)row, name);
	tp_set_str(t, TRACK_TYPE, (size_t)row, tp_db_str(imp->db, type));
	tp_set_int(t, TRACK_IS_COUNTER, (size_t)row, is_counter);
	tp_set_int(t, TRACK_MACHINE_ID, (size_t)row, machine);
	set_dims(imp, row, dims, n_dims);
	if (hmap_put(&imp->tracks->dims, k, (uint64_t)row) < 0)
		return -1;
	return row;
}

void tp_battery_stats_counter(struct tp_import *imp, uint32_t machine, int64_t ts,
			      const char *name, size_t len, double value)
{
	uint32_t key = tp_str_intern(&imp->db->strings, name, len);
	struct tp_dim dim = {"counter_key", TP_DIM_STR, key};

	tp_counter_add(imp, ts, tp_track_dims(imp, "battery_stats", key, true, machine, &dim, 1, 0),
		       value);
}

uint32_t tp_track_group_new(struct tp_import *imp)
{
	return imp->tracks->groups++;
}

void tp_track_fini(struct tp_import *imp)
{
	struct tp_tracks *t = imp->tracks;

	if (!t)
		return;
	hmap_fini(&t->cpu_counters);
	hmap_fini(&t->threads);
	hmap_fini(&t->process_counters);
	hmap_fini(&t->global_counters);
	hmap_fini(&t->dims);
	free(t->pending);
	free(t);
	imp->tracks = NULL;
}
