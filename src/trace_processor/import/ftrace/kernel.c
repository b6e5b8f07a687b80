// SPDX-License-Identifier: Apache-2.0
/*
 * kernel.c - kernel events Perfetto turns into slices, as it does:
 *
 *   suspend_resume   "<action>(<val>)" slices on "Suspend/Resume Latency"
 *                    tracks (type suspend_resume; a begin takes the first
 *                    track whose slices have all ended, or a new one, and
 *                    an action's end finds its begin's track by name), with
 *                    args utid, event_type, cpu and null device_name,
 *                    driver_name, callback_phase; timekeeping_freeze's val
 *                    is always 0. A suspend_enter left open by a failed
 *                    suspend (thaw_processes ending inside freeze_processes
 *                    inside suspend_enter) is ended with the thaw.
 *   mark_victim      (oom) a "mem.oom_kill" instant on the victim's thread
 *                    track.
 *   kprobe_event     a slice (BEGIN/END) or an instant (INSTANT) named
 *                    after the probe on the thread's track.
 *   workqueue_execute_start/end
 *                    "workqueue" slices on the thread's track, named by
 *                    the work function's kernel symbol (interned on the
 *                    bundle's sequence) or its address in hex; arg cpu.
 *   signal_generate/deliver
 *                    instants on the target's (generate) or the event's
 *                    thread's track (deliver); arg signal.sig.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/ftrace/ftrace_int.h"

/* One track of the suspend/resume set (Perfetto's track compressor). */
struct sr_lane {
	uint32_t cookie;              /* the slice name it last took */
	uint32_t nest;                /* its open slices */
};

enum { SR_INITIAL, SR_ENTER, SR_FREEZE };

struct tp_kernel {
	struct sr_lane *lanes;
	uint32_t n_lanes, cap_lanes;
	int suspend_state;
	uint32_t suspend_enter_cookie;
	struct cma_info *cma; /* per thread, what migrating its CMA allocation did */
	uint32_t n_cma, cap_cma;
};

/* mm_alloc_contig_migrate_range_info of a thread's open CMA allocation. */
struct cma_info {
	int64_t utid;
	uint64_t nr_migrated, nr_reclaimed, nr_mapped;
};

void tp_kernel_fini(struct tp_import *imp)
{
	struct tp_kernel *k = imp->ftrace->kernel;

	if (!k)
		return;
	free(k->lanes);
	free(k->cma);
	free(k);
	imp->ftrace->kernel = NULL;
}

static struct tp_kernel *kstate(struct tp_import *imp)
{
	if (!imp->ftrace->kernel)
		imp->ftrace->kernel = calloc(1, sizeof(struct tp_kernel));
	return imp->ftrace->kernel;
}

/* The lane of @cookie: its own, a free one it adopts, or a new one; -1 on OOM. */
static int64_t sr_lane(struct tp_kernel *k, uint32_t cookie)
{
	uint32_t i;

	for (i = 0; i < k->n_lanes; i++)
		if (k->lanes[i].cookie == cookie)
			return i;
	for (i = 0; i < k->n_lanes; i++) {
		if (!k->lanes[i].nest) {
			k->lanes[i].cookie = cookie;
			return i;
		}
	}
	if (k->n_lanes == k->cap_lanes) {
		uint32_t cap = k->cap_lanes ? k->cap_lanes * 2 : 4;
		struct sr_lane *l = realloc(k->lanes, cap * sizeof(*l));

		if (!l)
			return -1;
		k->lanes = l;
		k->cap_lanes = cap;
	}
	k->lanes[k->n_lanes].cookie = cookie;
	k->lanes[k->n_lanes].nest = 0;
	return k->n_lanes++;
}

static int64_t sr_track(struct tp_import *imp, uint32_t machine, uint32_t lane)
{
	return tp_track_dims(imp, "suspend_resume",
			     tp_str_intern_c(&imp->db->strings, "Suspend/Resume Latency"), false,
			     machine, NULL, 0, lane);
}

static void sr_end(struct tp_import *imp, struct tp_kernel *k, int64_t ts, uint32_t machine,
		   uint32_t cookie)
{
	int64_t lane = sr_lane(k, cookie), track;

	if (lane < 0)
		return;
	if (k->lanes[lane].nest)
		k->lanes[lane].nest--;
	track = sr_track(imp, machine, (uint32_t)lane);
	if (track >= 0)
		tp_slice_end(imp, ts, track, 0, 0);
}

void tp_suspend_resume(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
		       const uint8_t *data, size_t len)
{
	struct tp_kernel *k = kstate(imp);
	struct pz_field f[PB_SUSPEND_RESUME_FTRACE_EVENT__START + 1];
	const struct pz_field *act = &f[PB_SUSPEND_RESUME_FTRACE_EVENT__ACTION];
	char name[80], action[64] = "";
	int64_t lane, track, row;
	uint32_t cookie;
	int32_t val;
	struct tp_argset *b;

	if (!k || pz_decode_table(data, len, f, PB_SUSPEND_RESUME_FTRACE_EVENT__START + 1) != PZ_OK)
		return;
	if (act->id && act->wire_type == PZ_WIRE_LEN)
		snprintf(action, sizeof(action), "%.*s", (int)act->size, (const char *)act->data);
	/* timekeeping_freeze's val is the CPU it ran on, which varies: 0. */
	val = strcmp(action, "timekeeping_freeze") == 0
		      ? 0
		      : (int32_t)f[PB_SUSPEND_RESUME_FTRACE_EVENT__VAL].value;
	snprintf(name, sizeof(name), "%s(%d)", action, val);
	cookie = tp_str_intern_c(&imp->db->strings, name);
	if (!f[PB_SUSPEND_RESUME_FTRACE_EVENT__START].value) {
		sr_end(imp, k, ev->ts, ev->machine, cookie);
		if (!strcmp(action, "suspend_enter")) {
			k->suspend_state = SR_INITIAL;
		} else if (!strcmp(action, "thaw_processes") && k->suspend_state == SR_FREEZE) {
			sr_end(imp, k, ev->ts, ev->machine, k->suspend_enter_cookie);
			k->suspend_state = SR_INITIAL;
		}
		return;
	}
	if (!strcmp(action, "suspend_enter")) {
		k->suspend_state = SR_ENTER;
		k->suspend_enter_cookie = cookie;
	} else if (!strcmp(action, "freeze_processes") && k->suspend_state == SR_ENTER) {
		k->suspend_state = SR_FREEZE;
	}
	lane = sr_lane(k, cookie);
	if (lane < 0)
		return;
	k->lanes[lane].nest++;
	track = sr_track(imp, ev->machine, (uint32_t)lane);
	if (track < 0)
		return;
	row = tp_slice_begin(imp, ev->ts, track, 0, cookie);
	b = row >= 0 ? tp_slice_args(imp, track, (uint32_t)row) : NULL;
	if (!b)
		return;
	tp_argset_uint(imp, b, tp_str_intern_c(&imp->db->strings, "utid"),
		       (uint64_t)tp_proc_get_thread(imp, ev->machine, tid));
	tp_argset_str(imp, b, tp_str_intern_c(&imp->db->strings, "event_type"),
		      tp_str_intern_c(&imp->db->strings, "Main Kernel Suspend Event"));
	tp_argset_uint(imp, b, tp_str_intern_c(&imp->db->strings, "cpu"), ev->cpu);
	tp_argset_str(imp, b, tp_str_intern_c(&imp->db->strings, "device_name"), 0);
	tp_argset_str(imp, b, tp_str_intern_c(&imp->db->strings, "driver_name"), 0);
	tp_argset_str(imp, b, tp_str_intern_c(&imp->db->strings, "callback_phase"), 0);
}

void tp_block_io(struct tp_import *imp, const struct tp_event *ev, bool start,
		 const uint8_t *data, size_t len)
{
	uint32_t name = tp_str_intern_c(&imp->db->strings, "block_io");
	uint32_t sector_key = tp_str_intern_c(&imp->db->strings, "sector");
	struct pz_field f[9];
	struct tp_argset *b;
	struct tp_dim dim;
	int64_t track, row;

	/* The fields of block_io_start and block_io_done have the same numbers. */
	if (pz_decode_table(data, len, f, 9) != PZ_OK)
		return;
	dim = (struct tp_dim){"block_device", TP_DIM_UINT,
			      (int64_t)f[PB_BLOCK_IO_START_FTRACE_EVENT__DEV].value};
	/* Perfetto's blueprint for these tracks is a counter one, and unnamed. */
	track = tp_track_dims(imp, "block_io", 0, true, ev->machine, &dim, 1, 0);
	if (track < 0)
		return;
	if (start) {
		row = tp_slice_begin(imp, ev->ts, track, 0, name);
		b = row >= 0 ? tp_slice_args(imp, track, (uint32_t)row) : NULL;
		if (b)
			tp_argset_uint(imp, b, sector_key,
				       f[PB_BLOCK_IO_START_FTRACE_EVENT__SECTOR].value);
		return;
	}
	row = tp_slice_end_start(imp, ev->ts, track, 0, name);
	if (row < 0)
		return;
	b = tp_slice_args(imp, track, (uint32_t)row);
	if (b)
		tp_argset_uint(imp, b, sector_key, f[PB_BLOCK_IO_DONE_FTRACE_EVENT__SECTOR].value);
	tp_slice_end_done(imp, track, (uint32_t)row);
}

/* -------------------------------------------------------------- cma ---- */

/*
 * The kernel version of @machine's SystemInfo (major * 1000 + minor), or
 * -1 when it is not Linux or has no usable release, as Perfetto's
 * SystemInfoTracker reads it.
 */
static int64_t kernel_version(struct tp_import *imp, uint32_t machine)
{
	const struct tp_table *m = &imp->db->machine;
	const char *sys, *rel;
	char *end;
	unsigned long major, minor;

	if (machine >= m->n_rows)
		return -1;
	sys = tp_str_get(&imp->db->strings, tp_get_str(m, MACHINE_SYSNAME, machine));
	rel = tp_str_get(&imp->db->strings, tp_get_str(m, MACHINE_RELEASE, machine));
	if (!sys || !rel || strcmp(sys, "Linux") != 0 || !rel[0])
		return -1;
	if (rel[0] < '0' || rel[0] > '9')
		return -1;
	major = strtoul(rel, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return -1;
	minor = strtoul(end + 1, &end, 10);
	if (*end != '.' && *end != '\0')
		return -1;
	return (int64_t)major * 1000 + (int64_t)minor;
}

static struct cma_info *cma_find(struct tp_kernel *k, int64_t utid, bool create)
{
	struct cma_info *n;
	uint32_t i;

	for (i = 0; i < k->n_cma; i++)
		if (k->cma[i].utid == utid)
			return &k->cma[i];
	if (!create)
		return NULL;
	if (k->n_cma == k->cap_cma) {
		uint32_t cap = k->cap_cma ? k->cap_cma * 2 : 8;

		n = realloc(k->cma, cap * sizeof(*n));
		if (!n)
			return NULL;
		k->cma = n;
		k->cap_cma = cap;
	}
	n = &k->cma[k->n_cma++];
	memset(n, 0, sizeof(*n));
	n->utid = utid;
	return n;
}

/*
 * A CMA allocation as an "mm_cma_alloc" slice of its thread: from
 * cma_alloc_start to cma_alloc_info on kernels 5.10 to 6.0, to
 * cma_alloc_finish (with what mm_alloc_contig_migrate_range_info said)
 * from 6.1 on.
 */
void tp_cma_event(struct tp_import *imp, const struct tp_event *ev, int64_t tid, uint32_t event_id,
		  const uint8_t *data, size_t len)
{
	int64_t ver = kernel_version(imp, ev->machine);
	struct tp_kernel *k;
	struct cma_info *info, none = {0};
	struct pz_field f[11];
	struct tp_argset *b;
	int64_t utid, track, row;
	bool finish = event_id == PB_FTRACE_EVENT__CMA_ALLOC_FINISH;

	if (ver < 5010)
		return;
	if ((event_id == PB_FTRACE_EVENT__MM_ALLOC_CONTIG_MIGRATE_RANGE_INFO || finish) &&
	    ver < 6001)
		return;
	if (event_id == PB_FTRACE_EVENT__CMA_ALLOC_INFO && ver >= 6001)
		return;
	if (pz_decode_table(data, len, f, 11) != PZ_OK || !(k = kstate(imp)))
		return;
	utid = tp_proc_get_thread(imp, ev->machine, tid);
	if (utid < 0)
		return;
	if (event_id == PB_FTRACE_EVENT__MM_ALLOC_CONTIG_MIGRATE_RANGE_INFO) {
		if ((info = cma_find(k, utid, true))) {
			info->nr_migrated =
				f[PB_MM_ALLOC_CONTIG_MIGRATE_RANGE_INFO_FTRACE_EVENT__NR_MIGRATED].value;
			info->nr_reclaimed =
				f[PB_MM_ALLOC_CONTIG_MIGRATE_RANGE_INFO_FTRACE_EVENT__NR_RECLAIMED].value;
			info->nr_mapped =
				f[PB_MM_ALLOC_CONTIG_MIGRATE_RANGE_INFO_FTRACE_EVENT__NR_MAPPED].value;
		}
		return;
	}
	track = tp_track_thread(imp, utid);
	if (track < 0)
		return;
	if (event_id == PB_FTRACE_EVENT__CMA_ALLOC_START) {
		/* A fresh record: a skipped migrate_range_info leaves zeros. */
		if (ver >= 6001 && (info = cma_find(k, utid, true))) {
			memset(info, 0, sizeof(*info));
			info->utid = utid;
		}
		tp_slice_begin(imp, ev->ts, track, 0, tp_db_str(imp->db, "mm_cma_alloc"));
		return;
	}
	row = tp_slice_end_start(imp, ev->ts, track, 0, 0);
	if (row < 0)
		return;
	b = tp_slice_args(imp, track, (uint32_t)row);
	if (b && finish) {
		const struct pz_field *n = &f[PB_CMA_ALLOC_FINISH_FTRACE_EVENT__NAME];

		info = cma_find(k, utid, false);
		if (!info)
			info = &none;
		tp_argset_str(imp, b, tp_db_str(imp->db, "cma_name"),
			      tp_str_intern(&imp->db->strings,
					    n->wire_type == PZ_WIRE_LEN ? (const char *)n->data : "",
					    n->wire_type == PZ_WIRE_LEN ? n->size : 0));
		tp_argset_uint(imp, b, tp_db_str(imp->db, "cma_pfn"),
			       f[PB_CMA_ALLOC_FINISH_FTRACE_EVENT__PFN].value);
		tp_argset_uint(imp, b, tp_db_str(imp->db, "cma_req_pages"),
			       f[PB_CMA_ALLOC_FINISH_FTRACE_EVENT__COUNT].value);
		tp_argset_uint(imp, b, tp_db_str(imp->db, "cma_nr_migrated"), info->nr_migrated);
		tp_argset_uint(imp, b, tp_db_str(imp->db, "cma_nr_reclaimed"), info->nr_reclaimed);
		tp_argset_uint(imp, b, tp_db_str(imp->db, "cma_nr_mapped"), info->nr_mapped);
	} else if (b) {
		const struct pz_field *n = &f[PB_CMA_ALLOC_INFO_FTRACE_EVENT__NAME];

		tp_argset_str(imp, b, tp_db_str(imp->db, "cma_name"),
			      tp_str_intern(&imp->db->strings,
					    n->wire_type == PZ_WIRE_LEN ? (const char *)n->data : "",
					    n->wire_type == PZ_WIRE_LEN ? n->size : 0));
		tp_argset_uint(imp, b, tp_db_str(imp->db, "cma_pfn"),
			       f[PB_CMA_ALLOC_INFO_FTRACE_EVENT__PFN].value);
		tp_argset_uint(imp, b, tp_db_str(imp->db, "cma_req_pages"),
			       (uint32_t)f[PB_CMA_ALLOC_INFO_FTRACE_EVENT__COUNT].value);
		tp_argset_uint(imp, b, tp_db_str(imp->db, "cma_nr_migrated"),
			       f[PB_CMA_ALLOC_INFO_FTRACE_EVENT__NR_MIGRATED].value);
		tp_argset_uint(imp, b, tp_db_str(imp->db, "cma_nr_reclaimed"),
			       f[PB_CMA_ALLOC_INFO_FTRACE_EVENT__NR_RECLAIMED].value);
		tp_argset_uint(imp, b, tp_db_str(imp->db, "cma_nr_mapped"),
			       f[PB_CMA_ALLOC_INFO_FTRACE_EVENT__NR_MAPPED].value);
		tp_argset_uint(imp, b, tp_db_str(imp->db, "cma_nr_isolate_fail"),
			       (uint32_t)f[PB_CMA_ALLOC_INFO_FTRACE_EVENT__ERR_ISO].value);
		tp_argset_uint(imp, b, tp_db_str(imp->db, "cma_nr_migrate_fail"),
			       (uint32_t)f[PB_CMA_ALLOC_INFO_FTRACE_EVENT__ERR_MIG].value);
		tp_argset_uint(imp, b, tp_db_str(imp->db, "cma_nr_test_fail"),
			       (uint32_t)f[PB_CMA_ALLOC_INFO_FTRACE_EVENT__ERR_TEST].value);
	}
	tp_slice_end_done(imp, track, (uint32_t)row);
}

/* ------------------------------------------------------------- f2fs ---- */

/* f2fs_iostat and f2fs_iostat_latency: one counter per field, per device. */
void tp_f2fs_iostat(struct tp_import *imp, const struct tp_event *ev, bool latency,
		    const uint8_t *data, size_t len)
{
	static const struct {
		uint8_t id;
		const char *key;
	} io[] = {
		{8, "write_app_total"},	  {3, "write_app_direct"}, {1, "write_app_buffered"},
		{5, "write_app_mapped"},  {14, "write_fs_data"},   {22, "write_fs_node"},
		{20, "write_fs_meta"},	  {17, "write_gc_data"},   {18, "write_gc_node"},
		{11, "write_cp_data"},	  {13, "write_cp_node"},   {12, "write_cp_meta"},
		{7, "read_app_total"},	  {4, "read_app_direct"},  {2, "read_app_buffered"},
		{6, "read_app_mapped"},	  {16, "read_fs_data"},	   {19, "read_fs_gdata"},
		{10, "read_fs_cdata"},	  {23, "read_fs_node"},	   {21, "read_fs_meta"},
		{15, "other_fs_discard"},
	},
	  lat[] = {
		  {3, "read_data_peak"},	 {1, "read_data_avg"},		{2, "read_data_cnt"},
		  {22, "read_node_peak"},	 {20, "read_node_avg"},		{21, "read_node_cnt"},
		  {13, "read_meta_peak"},	 {11, "read_meta_avg"},		{12, "read_meta_cnt"},
		  {9, "write_sync_data_peak"},	 {7, "write_sync_data_avg"},	{8, "write_sync_data_cnt"},
		  {28, "write_sync_node_peak"},	 {26, "write_sync_node_avg"},	{27, "write_sync_node_cnt"},
		  {19, "write_sync_meta_peak"},	 {17, "write_sync_meta_avg"},	{18, "write_sync_meta_cnt"},
		  {6, "write_async_data_peak"},	 {4, "write_async_data_avg"},	{5, "write_async_data_cnt"},
		  {25, "write_async_node_peak"}, {23, "write_async_node_avg"}, {24, "write_async_node_cnt"},
		  {16, "write_async_meta_peak"}, {14, "write_async_meta_avg"}, {15, "write_async_meta_cnt"},
	  };
	const char *type = latency ? "f2fs_iostat_latency" : "f2fs_iostat";
	uint32_t dev_field = latency ? PB_F2FS_IOSTAT_LATENCY_FTRACE_EVENT__DEV
				     : PB_F2FS_IOSTAT_FTRACE_EVENT__DEV;
	size_t n = latency ? sizeof(lat) / sizeof(lat[0]) : sizeof(io) / sizeof(io[0]);
	struct pz_field f[29];
	struct tp_dim dims[2];
	char dev[48], name[160];
	uint64_t d;
	size_t i;

	if (pz_decode_table(data, len, f, 29) != PZ_OK)
		return;
	d = f[dev_field].value;
	snprintf(dev, sizeof(dev), "%u:%u", (unsigned)((d & 0xff00) >> 8), (unsigned)(d & 0xff));
	dims[0] = (struct tp_dim){"linux_device", TP_DIM_STR, tp_db_str(imp->db, dev)};
	for (i = 0; i < n; i++) {
		const char *key = latency ? lat[i].key : io[i].key;
		uint8_t id = latency ? lat[i].id : io[i].id;

		snprintf(name, sizeof(name), "%s.[%s].%s", type, dev, key);
		dims[1] = (struct tp_dim){"counter_key", TP_DIM_STR, tp_db_str(imp->db, key)};
		tp_counter_add(imp, ev->ts,
			       tp_track_dims(imp, type, tp_db_str(imp->db, name), true, ev->machine,
					     dims, 2, 0),
			       (double)f[id].value);
	}
}

void tp_oom_mark_victim(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			size_t len)
{
	struct pz_field f[PB_MARK_VICTIM_FTRACE_EVENT__PID + 1];
	int64_t utid, track;

	if (pz_decode_table(data, len, f, PB_MARK_VICTIM_FTRACE_EVENT__PID + 1) != PZ_OK)
		return;
	utid = tp_proc_get_thread(imp, ev->machine,
				  (int64_t)(uint32_t)f[PB_MARK_VICTIM_FTRACE_EVENT__PID].value);
	track = utid >= 0 ? tp_track_thread(imp, utid) : -1;
	if (track >= 0)
		tp_slice_scoped(imp, ev->ts, 0, track, 0,
				tp_str_intern_c(&imp->db->strings, "mem.oom_kill"));
}

void tp_kprobe(struct tp_import *imp, const struct tp_event *ev, int64_t tid, const uint8_t *data,
	       size_t len)
{
	struct pz_field f[PB_KPROBE_EVENT__TYPE + 1];
	const struct pz_field *nf = &f[PB_KPROBE_EVENT__NAME];
	int64_t utid, track;
	uint32_t name;

	if (pz_decode_table(data, len, f, PB_KPROBE_EVENT__TYPE + 1) != PZ_OK)
		return;
	name = nf->id && nf->wire_type == PZ_WIRE_LEN
		       ? tp_str_intern(&imp->db->strings, (const char *)nf->data, nf->size)
		       : tp_str_intern(&imp->db->strings, "", 0);
	utid = tp_proc_get_thread(imp, ev->machine, tid);
	track = utid >= 0 ? tp_track_thread(imp, utid) : -1;
	if (track < 0)
		return;
	switch (f[PB_KPROBE_EVENT__TYPE].value) {
	case PBE_KPROBE_EVENT_KPROBE_TYPE__KPROBE_TYPE_BEGIN:
		tp_slice_begin(imp, ev->ts, track, 0, name);
		break;
	case PBE_KPROBE_EVENT_KPROBE_TYPE__KPROBE_TYPE_END:
		tp_slice_end(imp, ev->ts, track, 0, name);
		break;
	case PBE_KPROBE_EVENT_KPROBE_TYPE__KPROBE_TYPE_INSTANT:
		tp_slice_scoped(imp, ev->ts, 0, track, 0, name);
		break;
	default:
		break;
	}
}

void tp_workqueue_start(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
			uint64_t function)
{
	const struct tp_interned *sym = NULL;
	int64_t utid, track, row;
	struct tp_argset *b;
	uint32_t name;
	char hex[32];

	sym = tp_seq_interned(imp, ev->aux - 1, PB_INTERNED_DATA__KERNEL_SYMBOLS, function);
	if (sym && sym->str) {
		name = sym->str;
	} else {
		snprintf(hex, sizeof(hex), "%#llx", (unsigned long long)function);
		name = tp_str_intern_c(&imp->db->strings, hex);
	}
	utid = tp_proc_get_thread(imp, ev->machine, tid);
	track = utid >= 0 ? tp_track_thread(imp, utid) : -1;
	if (track < 0)
		return;
	row = tp_slice_begin(imp, ev->ts, track, tp_str_intern_c(&imp->db->strings, "workqueue"),
			     name);
	b = row >= 0 ? tp_slice_args(imp, track, (uint32_t)row) : NULL;
	if (b)
		tp_argset_int(imp, b, tp_str_intern_c(&imp->db->strings, "cpu"), ev->cpu);
}

void tp_workqueue_end(struct tp_import *imp, const struct tp_event *ev, int64_t tid)
{
	int64_t utid = tp_proc_get_thread(imp, ev->machine, tid);
	int64_t track = utid >= 0 ? tp_track_thread(imp, utid) : -1;

	if (track >= 0)
		tp_slice_end(imp, ev->ts, track, tp_str_intern_c(&imp->db->strings, "workqueue"), 0);
}

void tp_signal(struct tp_import *imp, const struct tp_event *ev, int64_t tid, bool generate,
	       int64_t sig)
{
	int64_t utid = tp_proc_get_thread(imp, ev->machine, (uint32_t)tid), track, row;
	struct tp_argset *b;

	track = utid >= 0 ? tp_track_thread(imp, utid) : -1;
	if (track < 0)
		return;
	row = tp_slice_scoped(imp, ev->ts, 0, track, 0,
			      tp_str_intern_c(&imp->db->strings,
					      generate ? "signal_generate" : "signal_deliver"));
	b = row >= 0 ? tp_slice_args(imp, track, (uint32_t)row) : NULL;
	if (b)
		tp_argset_int(imp, b, tp_str_intern_c(&imp->db->strings, "signal.sig"),
			      (int32_t)sig);
}
