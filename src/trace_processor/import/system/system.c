// SPDX-License-Identifier: Apache-2.0
/*
 * system.c - the system and service packets, in trace time order:
 * process trees and process stats (processes, threads, memory counters),
 * system info (metadata and the machine row), CPU info, sys_stats
 * counters, the service's trace stats and traced_probes' ftrace stats
 * (stats rows), service events, the trace config and attributes, trace
 * uuid and clone triggers (metadata). Called by the read layer's dispatch.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/common/common.h"
#include "trace_processor/import/system/fingerprint.h"
#include "trace_processor/import/system/system.h"

struct tp_system {
	bool write_into_file;         /* from the trace config: long trace mode */
	bool into_file;               /* the config's write_into_file */
	bool flush_period;            /* the config sets flush_period_ms */
	uint32_t n_buffers;           /* the config's buffers */
	bool service_v54;             /* the host's service is Perfetto v54 or later */
	uint32_t page_size;           /* SystemInfo's, 4096 if none (buddyinfo) */
	struct hmap setup_error_seqs; /* sequence ids whose setup errors were logged */
	int trigger_kind;             /* the trigger the trace_trigger metadata is from */
	struct disk_prev *disks;      /* the last sys_stats disk_stat of each device */
	size_t n_disks;
	struct hmap irqs;             /* machine << 32 | irq id: already in _linux_interrupt_mapping */
	uint8_t *config;              /* the last TraceConfig, for diagnostics.c */
	size_t config_len;
};

/* The last values (fields 2..9 of DiskStat) a device reported. */
struct disk_prev {
	uint32_t device; /* string id of its name */
	int64_t v[8];
};

enum { TRIGGER_NONE, TRIGGER_TRACE, TRIGGER_CLONE };

int tp_system_init(struct tp_import *imp)
{
	imp->system = calloc(1, sizeof(*imp->system));
	if (!imp->system)
		return -ENOMEM;
	imp->system->page_size = 4096; /* until a SystemInfo says */
	return 0;
}

void tp_system_fini(struct tp_import *imp)
{
	if (imp->system) {
		hmap_fini(&imp->system->setup_error_seqs);
		free(imp->system->disks);
		free(imp->system->config);
		hmap_fini(&imp->system->irqs);
	}
	free(imp->system);
	imp->system = NULL;
}

/* ------------------------------------------------------------ process ---- */

/*
 * A kworker's name as /proc gives it ends with the workqueue it last ran
 * ("kworker/45:2-mm_percpu_wq", "kworker/u8:1+events"): that changes all
 * the time, so the name is cut there, as Perfetto does.
 */
static size_t kworker_len(const uint8_t *s, size_t len)
{
	size_t i;

	if (len < 8 || memcmp(s, "kworker/", 8) != 0)
		return len;
	for (i = 8; i < len; i++)
		if (s[i] == '-' || s[i] == '+')
			return i;
	return len;
}

/*
 * One ProcessTree.Process, with Perfetto's rules: a process without a
 * cmdline field is skipped; it and its parent are made with their main
 * threads; the name is argv[0] (cut at the first space if it is the only
 * argument), the cmdline the arguments joined by spaces; a child of
 * kthreadd (pid 2) that is a kworker is named and has as cmdline its
 * name without the workqueue; cmdline_is_comm names the main thread too.
 */
static void tree_process(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			 size_t len, uint64_t *kthreads, size_t *n_kthreads)
{
	struct pz_reader pr;
	struct pz_field pf;
	int64_t pid = 0, ppid = 0, uid = TP_NULL_INT, start = TP_NULL_INT, upid, pupid;
	int is_kthread = -1;
	bool cmdline_is_comm = false, has_cmdline = false;
	struct buf cmdline = BUF_INIT;
	bool kworker = false;
	size_t n_args = 0, argv0_len = 0;
	const uint8_t *argv0 = NULL;
	uint32_t name, cmd;

	pz_reader_init(&pr, data, len);
	while (pz_reader_next(&pr, &pf) > 0) {
		switch (pf.id) {
		case PB_PROCESS_TREE_PROCESS__PID:
			pid = (int32_t)pf.value;
			break;
		case PB_PROCESS_TREE_PROCESS__PPID:
			ppid = (int32_t)pf.value;
			break;
		case PB_PROCESS_TREE_PROCESS__UID:
			uid = (int32_t)pf.value;
			break;
		case PB_PROCESS_TREE_PROCESS__PROCESS_START_FROM_BOOT:
			start = (int64_t)pf.value;
			break;
		case PB_PROCESS_TREE_PROCESS__IS_KTHREAD:
			is_kthread = pf.value != 0;
			break;
		case PB_PROCESS_TREE_PROCESS__CMDLINE_IS_COMM:
			cmdline_is_comm = pf.value != 0;
			break;
		case PB_PROCESS_TREE_PROCESS__CMDLINE:
			if (pf.wire_type != PZ_WIRE_LEN)
				break;
			has_cmdline = true;
			if (!n_args++) {
				argv0 = pf.data;
				argv0_len = pf.size;
			}
			break;
		default:
			break;
		}
	}
	if (pr.err != PZ_OK) {
		tp_stat_add(imp, "process_tree_malformed", -1, ev->machine, 1);
		return;
	}
	if (!has_cmdline)
		return;
	if (ppid == 2) {
		size_t n = kworker_len(argv0, argv0_len);

		if (*n_kthreads < 4096)
			kthreads[(*n_kthreads)++] = (uint64_t)pid;
		if (n != argv0_len) {
			argv0_len = n;
			kworker = true;
		}
	}
	if (n_args == 1) {
		const void *sp = memchr(argv0, ' ', argv0_len);

		if (sp)
			argv0_len = (size_t)((const uint8_t *)sp - argv0);
	}
	name = tp_str_intern(&imp->db->strings, (const char *)argv0, argv0_len);
	if (kworker) {
		cmd = name;
	} else {
		size_t k = 0;

		/* Every argument, however long, joined by spaces. */
		pz_reader_init(&pr, data, len);
		while (pz_reader_next(&pr, &pf) > 0)
			if (pf.id == PB_PROCESS_TREE_PROCESS__CMDLINE && pf.wire_type == PZ_WIRE_LEN &&
			    ((k++ && buf_append_byte(&cmdline, ' ') < 0) ||
			     buf_append(&cmdline, pf.data, pf.size) < 0))
				break;
		cmd = tp_str_intern(&imp->db->strings, cmdline.data ? (const char *)cmdline.data : "",
				    cmdline.len);
		buf_fini(&cmdline);
	}
	pupid = tp_proc_get_process_main(imp, ev->machine, ppid);
	upid = tp_proc_get_process_main(imp, ev->machine, pid);
	if (upid < 0 || pupid < 0)
		return;
	tp_proc_set_parent(imp, upid, pupid);
	tp_proc_update_process_name(imp, upid, name, TP_NAME_SYSTEM);
	tp_set_str(&imp->db->process, PROCESS_CMDLINE, (size_t)upid, cmd);
	if (cmdline_is_comm)
		tp_proc_update_thread_name(imp, tp_proc_get_thread(imp, ev->machine, pid), cmd,
					   TP_NAME_PROCESS_TREE);
	if (uid != TP_NULL_INT) {
		struct tp_table *p = &imp->db->process;

		tp_set_int(p, PROCESS_UID, (size_t)upid, (uint32_t)uid);
		tp_set_int(p, PROCESS_ANDROID_APPID, (size_t)upid, (uint32_t)uid % 100000);
		tp_set_int(p, PROCESS_ANDROID_USER_ID, (size_t)upid, (uint32_t)uid / 100000);
	}
	/* Time since boot, i.e. BOOTTIME: the trace clock by default. */
	if (start != TP_NULL_INT &&
	    tp_get_int(&imp->db->process, PROCESS_START_TS, (size_t)upid) == TP_NULL_INT)
		tp_set_int(&imp->db->process, PROCESS_START_TS, (size_t)upid, start);
	if (is_kthread >= 0)
		tp_proc_set_kthread(imp, upid, is_kthread);
}

static void process_tree(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			 size_t len)
{
	uint64_t *kthreads = NULL;
	size_t n_kthreads = 0, i;
	struct pz_reader r;
	struct pz_field f;

	kthreads = malloc(4096 * sizeof(*kthreads));
	if (!kthreads)
		return;
	/* The processes first, then the threads (a dump's threads may come first). */
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == PB_PROCESS_TREE__PROCESSES && f.wire_type == PZ_WIRE_LEN)
			tree_process(imp, ev, f.data, f.size, kthreads, &n_kthreads);
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field t[5];
		int64_t utid, tid, tgid;
		const uint8_t *name;
		size_t name_len;

		if (f.id != PB_PROCESS_TREE__THREADS || f.wire_type != PZ_WIRE_LEN)
			continue;
		if (pz_decode_table(f.data, f.size, t, 5) != PZ_OK) {
			tp_stat_add(imp, "process_tree_malformed", -1, ev->machine, 1);
			continue;
		}
		tid = (int32_t)t[PB_PROCESS_TREE_THREAD__TID].value;
		tgid = (int32_t)t[PB_PROCESS_TREE_THREAD__TGID].value;
		tp_proc_update_thread(imp, ev->machine, tid, tgid);
		if (!t[PB_PROCESS_TREE_THREAD__NAME].id)
			continue;
		name = t[PB_PROCESS_TREE_THREAD__NAME].data;
		name_len = t[PB_PROCESS_TREE_THREAD__NAME].size;
		if (tid == tgid) {
			for (i = 0; i < n_kthreads; i++)
				if (kthreads[i] == (uint64_t)tid)
					break;
			if (i < n_kthreads)
				name_len = kworker_len(name, name_len);
		}
		utid = tp_proc_get_thread(imp, ev->machine, tid);
		tp_proc_update_thread_name(
			imp, utid, tp_str_intern(&imp->db->strings, (const char *)name, name_len),
			TP_NAME_PROCESS_TREE);
	}
	free(kthreads);
}

#define PM "process_memory"
#define PMK "process_memory_key"
#define RT "proc_stat_runtime", "proc_stat_runtime_key"

/*
 * process_stats: memory counters per process, in bytes, and the others,
 * each on a track with Perfetto's name, type and dimensions (upid, then
 * the key naming the counter, if any).
 */
static void process_stats(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			  size_t len)
{
	static const struct {
		uint32_t id;
		const char *name;
		int64_t scale;
		const char *type, *dim_key, *dim_val;
	} k[] = {
		{PB_PROCESS_STATS_PROCESS__VM_SIZE_KB, "mem.virt", 1024, PM, PMK, "virt"},
		{PB_PROCESS_STATS_PROCESS__VM_RSS_KB, "mem.rss", 1024, PM, PMK, "rss"},
		{PB_PROCESS_STATS_PROCESS__RSS_ANON_KB, "mem.rss.anon", 1024, PM, PMK, "rss.anon"},
		{PB_PROCESS_STATS_PROCESS__RSS_FILE_KB, "mem.rss.file", 1024, PM, PMK, "rss.file"},
		{PB_PROCESS_STATS_PROCESS__RSS_SHMEM_KB, "mem.rss.shmem", 1024, PM, PMK, "rss.shmem"},
		{PB_PROCESS_STATS_PROCESS__VM_SWAP_KB, "mem.swap", 1024, PM, PMK, "swap"},
		{PB_PROCESS_STATS_PROCESS__VM_LOCKED_KB, "mem.locked", 1024, PM, PMK, "locked"},
		{PB_PROCESS_STATS_PROCESS__VM_HWM_KB, "mem.rss.watermark", 1024, PM, PMK, "rss.watermark"},
		{PB_PROCESS_STATS_PROCESS__OOM_SCORE_ADJ, "oom_score_adj", 1, "oom_score_adj", NULL, NULL},
		{PB_PROCESS_STATS_PROCESS__RUNTIME_USER_MODE, "runtime.user_ns", 1, RT, "user_ns"},
		{PB_PROCESS_STATS_PROCESS__RUNTIME_KERNEL_MODE, "runtime.kernel_ns", 1, RT, "kernel_ns"},
	};
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field p[25], c;
		struct pz_reader pr;
		int64_t upid;
		size_t i;

		if (f.id != PB_PROCESS_STATS__PROCESSES || f.wire_type != PZ_WIRE_LEN)
			continue;
		if (pz_decode_table(f.data, f.size, p, 25) != PZ_OK || !p[PB_PROCESS_STATS_PROCESS__PID].id) {
			tp_stat_add(imp, "process_stats_malformed", -1, ev->machine, 1);
			continue;
		}
		/* In wire order, as Perfetto; the process is made at its first counter. */
		upid = -1;
		pz_reader_init(&pr, f.data, f.size);
		while (pz_reader_next(&pr, &c) > 0) {
			if (c.wire_type != PZ_WIRE_VARINT)
				continue;
			for (i = 0; i < sizeof(k) / sizeof(k[0]); i++)
				if (k[i].id == c.id)
					break;
			if (i == sizeof(k) / sizeof(k[0]))
				continue;
			if (upid < 0)
				upid = tp_proc_get_process_main(
					imp, ev->machine, (int64_t)p[PB_PROCESS_STATS_PROCESS__PID].value);
			tp_counter_add(imp, ev->ts,
				       tp_track_process_counter(imp, k[i].name, k[i].type, upid,
								k[i].dim_key, k[i].dim_val),
				       (double)(int64_t)c.value * (double)k[i].scale);
		}
	}
}

#undef PM
#undef PMK
#undef RT

/* --------------------------------------------------------- system info ---- */

static void set_machine_str(struct tp_import *imp, uint32_t machine, uint32_t col,
			    const struct pz_field *f)
{
	if (f->id && f->wire_type == PZ_WIRE_LEN)
		tp_set_str(&imp->db->machine, col, machine,
			   tp_str_intern(&imp->db->strings, (const char *)f->data, f->size));
}

/*
 * Whether a tracing_service_version names Perfetto v54 or later ("Perfetto
 * v<major>" then '.' or '-'): those flush on every write into the file.
 */
static bool service_v54(const char *v, size_t n)
{
	static const char prefix[] = "Perfetto v";
	size_t i = sizeof(prefix) - 1, start;
	uint64_t major = 0;

	if (n < i || memcmp(v, prefix, i) != 0)
		return false;
	for (start = i; i < n && v[i] >= '0' && v[i] <= '9'; i++)
		if (major < 1000000)
			major = major * 10 + (uint64_t)(v[i] - '0');
	if (i == start || i >= n || (v[i] != '.' && v[i] != '-'))
		return false;
	return major >= 54;
}

static void system_info(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			size_t len)
{
	struct pz_field s[18], u[5];
	uint32_t m = ev->machine;
	struct tp_fingerprint fp = {0};
	bool fp_ok = false;

	if (pz_decode_table(data, len, s, 18) != PZ_OK) {
		tp_stat_add(imp, "system_info_malformed", -1, m, 1);
		return;
	}
	imp->system->page_size = s[PB_SYSTEM_INFO__PAGE_SIZE].value
					 ? (uint32_t)s[PB_SYSTEM_INFO__PAGE_SIZE].value
					 : 4096;
	if (s[PB_SYSTEM_INFO__UTSNAME].id &&
	    pz_decode_table(s[PB_SYSTEM_INFO__UTSNAME].data, s[PB_SYSTEM_INFO__UTSNAME].size, u, 5) ==
		    PZ_OK) {
		static const struct {
			uint32_t id;
			const char *key;
			uint32_t col;
		} k[] = {
			{PB_UTSNAME__SYSNAME, "system_name", MACHINE_SYSNAME},
			{PB_UTSNAME__VERSION, "system_version", MACHINE_VERSION},
			{PB_UTSNAME__RELEASE, "system_release", MACHINE_RELEASE},
			{PB_UTSNAME__MACHINE, "system_machine", MACHINE_ARCH},
		};
		size_t i;

		for (i = 0; i < 4; i++) {
			if (!u[k[i].id].id)
				continue;
			tp_metadata_set_str(imp, k[i].key, m, (const char *)u[k[i].id].data,
					    u[k[i].id].size);
			set_machine_str(imp, m, k[i].col, &u[k[i].id]);
		}
	}
	if (s[PB_SYSTEM_INFO__TIMEZONE_OFF_MINS].id)
		tp_metadata_set_int(imp, "timezone_off_mins", m,
				    pz_field_int32(&s[PB_SYSTEM_INFO__TIMEZONE_OFF_MINS]));
	if (s[PB_SYSTEM_INFO__NUM_CPUS].id)
		tp_set_int(&imp->db->machine, MACHINE_NUM_CPUS, m,
			   (int64_t)s[PB_SYSTEM_INFO__NUM_CPUS].value);
	if (s[PB_SYSTEM_INFO__ANDROID_BUILD_FINGERPRINT].id) {
		set_machine_str(imp, m, MACHINE_ANDROID_BUILD_FINGERPRINT,
				&s[PB_SYSTEM_INFO__ANDROID_BUILD_FINGERPRINT]);
		tp_metadata_set_str(imp, "android_build_fingerprint", m,
				    (const char *)s[PB_SYSTEM_INFO__ANDROID_BUILD_FINGERPRINT].data,
				    s[PB_SYSTEM_INFO__ANDROID_BUILD_FINGERPRINT].size);
		fp_ok = tp_fingerprint_parse(
			(const char *)s[PB_SYSTEM_INFO__ANDROID_BUILD_FINGERPRINT].data,
			s[PB_SYSTEM_INFO__ANDROID_BUILD_FINGERPRINT].size, &fp);
		if (fp_ok)
			tp_metadata_set_str(imp, "android_incremental_build", m, fp.incremental,
					    fp.incremental_len);
	}
	if (s[PB_SYSTEM_INFO__ANDROID_DEVICE_MANUFACTURER].id) {
		set_machine_str(imp, m, MACHINE_ANDROID_DEVICE_MANUFACTURER,
				&s[PB_SYSTEM_INFO__ANDROID_DEVICE_MANUFACTURER]);
		tp_metadata_set_str(imp, "android_device_manufacturer", m,
				    (const char *)s[PB_SYSTEM_INFO__ANDROID_DEVICE_MANUFACTURER].data,
				    s[PB_SYSTEM_INFO__ANDROID_DEVICE_MANUFACTURER].size);
	}
	/* The SDK version from the field, else from the fingerprint's release. */
	if (s[PB_SYSTEM_INFO__ANDROID_SDK_VERSION].id || (fp_ok && fp.sdk >= 0)) {
		int64_t sdk = s[PB_SYSTEM_INFO__ANDROID_SDK_VERSION].id
				      ? (int64_t)s[PB_SYSTEM_INFO__ANDROID_SDK_VERSION].value
				      : fp.sdk;

		tp_set_int(&imp->db->machine, MACHINE_ANDROID_SDK_VERSION, m, sdk);
		tp_metadata_set_int(imp, "android_sdk_version", m, sdk);
	}
	if (s[PB_SYSTEM_INFO__TRACING_SERVICE_VERSION].id) {
		tp_metadata_set_str(imp, "tracing_service_version", m,
				    (const char *)s[PB_SYSTEM_INFO__TRACING_SERVICE_VERSION].data,
				    s[PB_SYSTEM_INFO__TRACING_SERVICE_VERSION].size);
		if (m == 0)
			imp->system->service_v54 = service_v54(
				(const char *)s[PB_SYSTEM_INFO__TRACING_SERVICE_VERSION].data,
				s[PB_SYSTEM_INFO__TRACING_SERVICE_VERSION].size);
	}
	{
		static const struct {
			uint32_t id;
			const char *key;
		} a[] = {
			{PB_SYSTEM_INFO__ANDROID_SOC_MODEL, "android_soc_model"},
			{PB_SYSTEM_INFO__ANDROID_GUEST_SOC_MODEL, "android_guest_soc_model"},
			{PB_SYSTEM_INFO__ANDROID_HARDWARE_REVISION, "android_hardware_revision"},
			{PB_SYSTEM_INFO__ANDROID_STORAGE_MODEL, "android_storage_model"},
			{PB_SYSTEM_INFO__ANDROID_RAM_MODEL, "android_ram_model"},
			{PB_SYSTEM_INFO__ANDROID_SERIAL_CONSOLE, "android_serial_console"},
		};
		size_t i;

		for (i = 0; i < sizeof(a) / sizeof(a[0]); i++)
			if (s[a[i].id].id)
				tp_metadata_set_str(imp, a[i].key, m, (const char *)s[a[i].id].data,
						    s[a[i].id].size);
	}
	if (s[PB_SYSTEM_INFO__SYSTEM_RAM_BYTES].id) {
		int64_t b = (int64_t)s[PB_SYSTEM_INFO__SYSTEM_RAM_BYTES].value;
		int64_t gb = (int64_t)llround((double)b / 1e9);

		tp_metadata_set_int(imp, "system_ram_bytes", m, b);
		tp_metadata_set_int(imp, "system_ram_gb", m, gb);
		tp_set_int(&imp->db->machine, MACHINE_SYSTEM_RAM_BYTES, m, b);
		tp_set_int(&imp->db->machine, MACHINE_SYSTEM_RAM_GB, m, gb);
	}
	if (s[PB_SYSTEM_INFO__MACHINE_NAME].id)
		set_machine_str(imp, m, MACHINE_NAME, &s[PB_SYSTEM_INFO__MACHINE_NAME]);
}

/* Hash of a CPU's frequency list: CPUs with the same list form a cluster. */
static uint64_t freq_set_hash(const uint8_t *data, size_t len)
{
	struct pz_reader r;
	struct pz_field f;
	uint64_t h = 1469598103934665603ull;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id != PB_CPU_INFO_CPU__FREQUENCIES)
			continue;
		if (f.wire_type == PZ_WIRE_LEN) {
			struct pz_packed it;
			uint64_t v;

			pz_packed_init(&it, &f);
			while (pz_packed_next_varint(&it, &v) > 0)
				h = (h ^ v) * 1099511628211ull;
		} else {
			h = (h ^ f.value) * 1099511628211ull;
		}
	}
	return h;
}

/* The frequencies of a CpuInfo.Cpu as cpu_available_frequencies rows of @ucpu. */
static void cpu_freqs(struct tp_import *imp, int64_t ucpu, const uint8_t *data, size_t len)
{
	struct tp_table *t = &imp->db->cpu_freq;
	struct pz_reader r;
	struct pz_field f;
	int64_t row;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_packed it;
		uint64_t v;

		if (f.id != PB_CPU_INFO_CPU__FREQUENCIES)
			continue;
		if (f.wire_type != PZ_WIRE_LEN) {
			if ((row = tp_table_append(t)) >= 0) {
				tp_set_int(t, CPU_FREQ_UCPU, (size_t)row, ucpu);
				tp_set_int(t, CPU_FREQ_FREQ, (size_t)row, (int64_t)(uint32_t)f.value);
			}
			continue;
		}
		pz_packed_init(&it, &f);
		while (pz_packed_next_varint(&it, &v) > 0 && (row = tp_table_append(t)) >= 0) {
			tp_set_int(t, CPU_FREQ_UCPU, (size_t)row, ucpu);
			tp_set_int(t, CPU_FREQ_FREQ, (size_t)row, (int64_t)(uint32_t)v);
		}
	}
}

/*
 * The args of a CPU, as Perfetto's: its ARM identifier, then each known
 * feature bit (mte, mte3) as a bool and the whole bitmap; bits past the
 * known ones are counted in cpu_info_unknown_cpu_features.
 */
static void cpu_args(struct tp_import *imp, const struct tp_event *ev, int64_t ucpu,
		     const struct pz_field *c)
{
	static const char *const arm_keys[] = {NULL,
					       "arm_cpu_implementer",
					       "arm_cpu_architecture",
					       "arm_cpu_variant",
					       "arm_cpu_part",
					       "arm_cpu_revision"};
	static const char *const features[] = {"cpu_features.mte", "cpu_features.mte3"};
	const size_t n_features = sizeof(features) / sizeof(features[0]);
	uint64_t bits = c[PB_CPU_INFO_CPU__FEATURES].value;
	struct tp_argset b = {0};
	struct pz_field a[6];
	int64_t set;
	size_t i;

	if (c[PB_CPU_INFO_CPU__ARM_IDENTIFIER].wire_type == PZ_WIRE_LEN &&
	    pz_decode_table(c[PB_CPU_INFO_CPU__ARM_IDENTIFIER].data,
			    c[PB_CPU_INFO_CPU__ARM_IDENTIFIER].size, a, 6) == PZ_OK)
		for (i = 1; i < 6; i++)
			tp_argset_uint(imp, &b, tp_db_str(imp->db, arm_keys[i]),
				       (uint32_t)a[i].value);
	for (i = 0; i < n_features; i++)
		if (bits & (1ull << i))
			tp_argset_bool(imp, &b, tp_db_str(imp->db, features[i]), true);
	if (bits)
		tp_argset_uint(imp, &b, tp_db_str(imp->db, "cpu_features.raw_bitmap"), bits);
	if (bits >> n_features)
		tp_stat_add(imp, "cpu_info_unknown_cpu_features", -1, ev->machine, 1);
	if (b.n) {
		set = tp_argset_commit(imp, &b);
		if (set >= 0)
			tp_set_int(&imp->db->cpu, CPU_ARG_SET_ID, (size_t)ucpu, set);
	}
	tp_argset_fini(&b);
}

static void cpu_info(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
		     size_t len)
{
	struct pz_reader r;
	struct pz_field f;
	uint32_t cpu = 0;
	uint64_t clusters[64];
	size_t n_clusters = 0;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field c[6];
		int64_t ucpu;

		if (f.id != PB_CPU_INFO__CPUS || f.wire_type != PZ_WIRE_LEN)
			continue;
		ucpu = tp_sched_ucpu(imp, ev->machine, cpu++);
		if (ucpu < 0 || pz_decode_table(f.data, f.size, c, 6) != PZ_OK)
			continue;
		if (c[PB_CPU_INFO_CPU__PROCESSOR].id)
			tp_set_str(&imp->db->cpu, CPU_PROCESSOR, (size_t)ucpu,
				   tp_str_intern(&imp->db->strings,
						 (const char *)c[PB_CPU_INFO_CPU__PROCESSOR].data,
						 c[PB_CPU_INFO_CPU__PROCESSOR].size));
		cpu_freqs(imp, ucpu, f.data, f.size);
		cpu_args(imp, ev, ucpu, c);
		if (c[PB_CPU_INFO_CPU__CAPACITY].id)
			tp_set_int(&imp->db->cpu, CPU_CAPACITY, (size_t)ucpu,
				   (int64_t)c[PB_CPU_INFO_CPU__CAPACITY].value);
		{
			uint64_t h = freq_set_hash(f.data, f.size);
			size_t k;

			for (k = 0; k < n_clusters && clusters[k] != h; k++)
				;
			if (k == n_clusters && n_clusters < 64)
				clusters[n_clusters++] = h;
			tp_set_int(&imp->db->cpu, CPU_CLUSTER_ID, (size_t)ucpu, (int64_t)k);
		}
	}
}

/* The counter track @name of Perfetto's @type with @dims, in @unit (NULL: none). */
static int64_t unit_counter(struct tp_import *imp, const char *type, const char *name,
			    uint32_t machine, const struct tp_dim *dims, size_t n_dims,
			    const char *unit)
{
	int64_t track = tp_track_dims(imp, type, tp_db_str(imp->db, name), true, machine, dims,
				      n_dims, 0);

	if (track >= 0 && unit)
		tp_set_str(&imp->db->track, TRACK_UNIT, (size_t)track, tp_db_str(imp->db, unit));
	return track;
}

/* A string field as a NUL-terminated copy in @buf (cut to fit). */
static const char *field_str(const struct pz_field *f, char *buf, size_t size)
{
	size_t n = 0;

	if (f->wire_type == PZ_WIRE_LEN)
		n = f->size < size - 1 ? f->size : size - 1;
	if (n)
		memcpy(buf, f->data, n);
	buf[n] = '\0';
	return buf;
}

/* cpuidle_state: "cpuidle<cpu>.<state>" counters of the time spent in each state, in us. */
static void cpuidle_state(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			  size_t len)
{
	struct pz_field c[3], e[3];
	struct pz_reader r;
	struct pz_field f;
	struct tp_dim dims[2];
	char state[256], name[300];
	uint32_t cpu;

	if (pz_decode_table(data, len, c, 3) != PZ_OK)
		return;
	cpu = (uint32_t)c[PB_SYS_STATS_CPU_IDLE_STATE__CPU_ID].value;
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id != PB_SYS_STATS_CPU_IDLE_STATE__CPUIDLE_STATE_ENTRY ||
		    f.wire_type != PZ_WIRE_LEN || pz_decode_table(f.data, f.size, e, 3) != PZ_OK)
			continue;
		field_str(&e[PB_SYS_STATS_CPU_IDLE_STATE_ENTRY__STATE], state, sizeof(state));
		snprintf(name, sizeof(name), "cpuidle%u.%s", cpu, state);
		dims[0] = (struct tp_dim){"cpu", TP_DIM_UINT, cpu};
		dims[1] = (struct tp_dim){"state", TP_DIM_STR, tp_db_str(imp->db, state)};
		tp_counter_add(imp, ev->ts,
			       unit_counter(imp, "cpu_idle_state", name, ev->machine, dims, 2, "us"),
			       (double)e[PB_SYS_STATS_CPU_IDLE_STATE_ENTRY__DURATION_US].value);
	}
}

/*
 * disk_stat: from a device's second report on, what it read, wrote,
 * discarded and flushed since the last one ("diskstat.[<dev>].<what>", in
 * MB of 512-byte sectors) and at what rate, as Perfetto's ParseDiskStats.
 */
static void disk_stat(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
		      size_t len)
{
	static const struct {
		const char *name, *unit;
	} out[] = {
		{"read_amount", "MB"},	   {"read_throughput", "MB/s"},
		{"write_amount", "MB"},	   {"write_throughput", "MB/s"},
		{"discard_amount", "MB"},  {"discard_throughput", "MB/s"},
		{"flush_amount", "count"}, {"flush_time", "ms"},
	};
	struct tp_system *sys = imp->system;
	struct pz_field d[10];
	struct disk_prev *p = NULL;
	struct tp_dim dims[2];
	char dev[256], name[400];
	double v[8], sectors_mb = 2048.0;
	int64_t cur[8], dt;
	uint32_t dev_id;
	size_t i;

	if (pz_decode_table(data, len, d, 10) != PZ_OK)
		return;
	field_str(&d[PB_SYS_STATS_DISK_STAT__DEVICE_NAME], dev, sizeof(dev));
	dev_id = tp_db_str(imp->db, dev);
	for (i = 0; i < 8; i++)
		cur[i] = (int64_t)d[2 + i].value;
	for (i = 0; i < sys->n_disks; i++)
		if (sys->disks[i].device == dev_id)
			p = &sys->disks[i];
	if (!p) {
		struct disk_prev *n = realloc(sys->disks, (sys->n_disks + 1) * sizeof(*n));

		if (!n)
			return;
		sys->disks = n;
		p = &sys->disks[sys->n_disks++];
		p->device = dev_id;
		memcpy(p->v, cur, sizeof(cur));
		return;
	}
	/* cur: read sectors, read ms, write sectors, write ms, discard sectors, discard ms, flushes, flush ms */
	for (i = 0; i < 3; i++) {
		v[2 * i] = (double)(cur[2 * i] - p->v[2 * i]) / sectors_mb;
		dt = cur[2 * i + 1] - p->v[2 * i + 1];
		v[2 * i + 1] = dt == 0 ? 0.0 : v[2 * i] * 1000.0 / (double)dt;
	}
	v[6] = (double)(cur[6] - p->v[6]);
	v[7] = (double)(cur[7] - p->v[7]);
	memcpy(p->v, cur, sizeof(cur));
	dims[0] = (struct tp_dim){"device_name", TP_DIM_STR, dev_id};
	for (i = 0; i < 8; i++) {
		dims[1] = (struct tp_dim){"counter_name", TP_DIM_STR, tp_db_str(imp->db, out[i].name)};
		snprintf(name, sizeof(name), "diskstat.[%s].%s", dev, out[i].name);
		tp_counter_add(imp, ev->ts,
			       unit_counter(imp, "diskstat", name, ev->machine, dims, 2, out[i].unit),
			       v[i]);
	}
}

/* /proc/meminfo's key of each MeminfoCounters value (Perfetto's names). */
static const char *const meminfo_keys[] = {
	"MemUnspecified", "MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached",
	"SwapCached", "Active", "Inactive", "Active(anon)", "Inactive(anon)", "Active(file)",
	"Inactive(file)", "Unevictable", "Mlocked", "SwapTotal", "SwapFree", "Dirty",
	"Writeback", "AnonPages", "Mapped", "Shmem", "Slab", "SReclaimable", "SUnreclaim",
	"KernelStack", "PageTables", "CommitLimit", "Committed_AS", "VmallocTotal",
	"VmallocUsed", "VmallocChunk", "CmaTotal", "CmaFree", "Gpu", "Zram", "Misc",
	"ION_heap", "ION_heap_pool",
};

/* A (key, value) pair of SysStats: MeminfoValue or VmstatValue (same numbers). */
static bool key_value(const struct pz_field *f, uint64_t *key, uint64_t *value)
{
	struct pz_field kv[3];

	if (f->wire_type != PZ_WIRE_LEN || pz_decode_table(f->data, f->size, kv, 3) != PZ_OK)
		return false;
	*key = kv[PB_SYS_STATS_MEMINFO_VALUE__KEY].value;
	*value = kv[PB_SYS_STATS_MEMINFO_VALUE__VALUE].value;
	return true;
}

static void meminfo(struct tp_import *imp, const struct tp_event *ev, const struct pz_field *f)
{
	uint64_t key, value;
	struct tp_dim dim;
	const char *name;

	if (!key_value(f, &key, &value))
		return;
	if (key >= sizeof(meminfo_keys) / sizeof(meminfo_keys[0])) {
		tp_stat_add(imp, "meminfo_unknown_keys", -1, ev->machine, 1);
		return;
	}
	name = meminfo_keys[key];
	dim = (struct tp_dim){"meminfo_key", TP_DIM_STR, tp_db_str(imp->db, name)};
	/* kB in /proc/meminfo: bytes here. */
	tp_counter_add(imp, ev->ts, unit_counter(imp, "meminfo", name, ev->machine, &dim, 1, "bytes"),
		       (double)value * 1024);
}

/* vmstat keys are the enum names without "VMSTAT_", in lower case, as Perfetto's. */
static void vmstat(struct tp_import *imp, const struct tp_event *ev, const struct pz_field *f)
{
	uint64_t key, value;
	const char *e;
	struct tp_dim dim;
	char name[96];
	size_t i;

	if (!key_value(f, &key, &value))
		return;
	e = key <= INT32_MAX ? tp_proto_enum_name("VmstatCounters", (int32_t)key) : NULL;
	if (!e) {
		tp_stat_add(imp, "vmstat_unknown_keys", -1, ev->machine, 1);
		return;
	}
	if (key == 0) {
		snprintf(name, sizeof(name), "VmstatUnspecified");
	} else {
		if (!strncmp(e, "VMSTAT_", 7))
			e += 7;
		for (i = 0; e[i] && i < sizeof(name) - 1; i++)
			name[i] = (char)((e[i] >= 'A' && e[i] <= 'Z') ? e[i] - 'A' + 'a' : e[i]);
		name[i] = '\0';
	}
	dim = (struct tp_dim){"vmstat_key", TP_DIM_STR, tp_db_str(imp->db, name)};
	tp_counter_add(imp, ev->ts, unit_counter(imp, "vmstat", name, ev->machine, &dim, 1, NULL),
		       (double)value);
}

/* num_irq / num_softirq: one counter per interrupt, "<type> (id: <irq>)". */
static void irq_count(struct tp_import *imp, const struct tp_event *ev, const char *type,
		      const struct pz_field *f)
{
	struct pz_field c[3];
	struct tp_dim dim;
	char name[64];
	uint32_t irq;

	if (f->wire_type != PZ_WIRE_LEN || pz_decode_table(f->data, f->size, c, 3) != PZ_OK)
		return;
	irq = (uint32_t)c[PB_SYS_STATS_INTERRUPT_COUNT__IRQ].value;
	snprintf(name, sizeof(name), "%s (id: %u)", type, irq);
	dim = (struct tp_dim){"irq", TP_DIM_UINT, irq};
	tp_counter_add(imp, ev->ts, unit_counter(imp, type, name, ev->machine, &dim, 1, NULL),
		       (double)c[PB_SYS_STATS_INTERRUPT_COUNT__COUNT].value);
}

/* One buddyinfo counter: free chunks of the @order'th size of (@node, @zone). */
static void buddy_counter(struct tp_import *imp, const struct tp_event *ev, const char *node,
			  const char *zone, uint32_t order, uint64_t pages)
{
	struct tp_dim dims[3];
	char name[200];
	uint32_t kb = order < 32 ? (uint32_t)(((uint64_t)1 << order) * imp->system->page_size / 1024)
				 : 0;

	snprintf(name, sizeof(name), "mem.buddyinfo[%s][%s][%u kB]", node, zone, kb);
	dims[0] = (struct tp_dim){"buddyinfo_node", TP_DIM_STR, tp_db_str(imp->db, node)};
	dims[1] = (struct tp_dim){"buddyinfo_zone", TP_DIM_STR, tp_db_str(imp->db, zone)};
	dims[2] = (struct tp_dim){"buddyinfo_chunk_size_kb", TP_DIM_UINT, kb};
	tp_counter_add(imp, ev->ts, unit_counter(imp, "buddyinfo", name, ev->machine, dims, 3, NULL),
		       (double)pages);
}

/* buddyinfo: free chunks per (node, zone, chunk size), one counter each. */
static void buddy_info(struct tp_import *imp, const struct tp_event *ev, const struct pz_field *f)
{
	struct pz_field b[4], o;
	struct pz_reader r;
	char node[64], zone[64];
	uint32_t order = 0;

	if (f->wire_type != PZ_WIRE_LEN || pz_decode_table(f->data, f->size, b, 4) != PZ_OK)
		return;
	field_str(&b[PB_SYS_STATS_BUDDY_INFO__NODE], node, sizeof(node));
	field_str(&b[PB_SYS_STATS_BUDDY_INFO__ZONE], zone, sizeof(zone));
	pz_reader_init(&r, f->data, f->size);
	while (pz_reader_next(&r, &o) > 0) {
		struct pz_packed pk;
		uint64_t pages;

		if (o.id != PB_SYS_STATS_BUDDY_INFO__ORDER_PAGES)
			continue;
		if (o.wire_type == PZ_WIRE_VARINT) {
			buddy_counter(imp, ev, node, zone, order++, o.value);
		} else if (o.wire_type == PZ_WIRE_LEN) {
			pz_packed_init(&pk, &o);
			while (pz_packed_next_varint(&pk, &pages) > 0)
				buddy_counter(imp, ev, node, zone, order++, pages);
		}
	}
}

/* cpufreq_khz: the CPUs' frequencies in order, on the cpufreq tracks. */
static void cpufreq(struct tp_import *imp, const struct tp_event *ev, const struct pz_field *f,
		    uint32_t *cpu)
{
	if (f->wire_type == PZ_WIRE_VARINT) {
		tp_counter_add(imp, ev->ts, tp_track_cpu_counter(imp, "cpufreq", ev->machine, *cpu),
			       (double)(uint32_t)f->value);
		(*cpu)++;
	} else if (f->wire_type == PZ_WIRE_LEN) {
		struct pz_packed pk;
		uint64_t v;

		pz_packed_init(&pk, f);
		while (pz_packed_next_varint(&pk, &v) > 0) {
			tp_counter_add(imp, ev->ts,
				       tp_track_cpu_counter(imp, "cpufreq", ev->machine, *cpu),
				       (double)(uint32_t)v);
			(*cpu)++;
		}
	}
}

/* A singular counter of SysStats on its global track named @name. */
static void global_counter(struct tp_import *imp, const struct tp_event *ev, const char *name,
			   const struct pz_field *f)
{
	if (f->wire_type == PZ_WIRE_VARINT)
		tp_counter_add(imp, ev->ts, tp_track_global_counter(imp, name, ev->machine),
			       (double)f->value);
}

/* A CpuTimes field and the cpustat key and counter name Perfetto gives it. */
struct cpu_time_key {
	uint32_t id;
	const char *key, *name;
};

/* One field of a SysStats (sys_stats() calls them kind by kind). */
static void sys_stats_field(struct tp_import *imp, const struct tp_event *ev,
			    const struct pz_field *f, uint32_t *cpufreq_cpu,
			    const struct cpu_time_key *cpu_times, size_t n_cpu_times)
{
	size_t i;

	switch (f->id) {
	case PB_SYS_STATS__MEMINFO:
		meminfo(imp, ev, f);
		break;
	case PB_SYS_STATS__CPUFREQ_KHZ:
		cpufreq(imp, ev, f, cpufreq_cpu);
		break;
	case PB_SYS_STATS__VMSTAT:
		vmstat(imp, ev, f);
		break;
	case PB_SYS_STATS__NUM_IRQ:
		irq_count(imp, ev, "num_irq", f);
		break;
	case PB_SYS_STATS__NUM_SOFTIRQ:
		irq_count(imp, ev, "num_softirq", f);
		break;
	case PB_SYS_STATS__NUM_IRQ_TOTAL:
		global_counter(imp, ev, "num_irq_total", f);
		break;
	case PB_SYS_STATS__NUM_SOFTIRQ_TOTAL:
		global_counter(imp, ev, "num_softirq_total", f);
		break;
	case PB_SYS_STATS__BUDDY_INFO:
		buddy_info(imp, ev, f);
		break;
	case PB_SYS_STATS__THERMAL_ZONE: {
		struct pz_field z[4];
		char name[64];
		size_t n;

		if (f->wire_type != PZ_WIRE_LEN || pz_decode_table(f->data, f->size, z, 4) != PZ_OK ||
		    z[PB_SYS_STATS_THERMAL_ZONE__TYPE].wire_type != PZ_WIRE_LEN)
			break;
		n = z[PB_SYS_STATS_THERMAL_ZONE__TYPE].size < sizeof(name) - 1
			    ? z[PB_SYS_STATS_THERMAL_ZONE__TYPE].size
			    : sizeof(name) - 1;
		memcpy(name, z[PB_SYS_STATS_THERMAL_ZONE__TYPE].data, n);
		name[n] = '\0';
		tp_counter_add(imp, ev->ts, tp_track_global_counter(imp, name, ev->machine),
			       (double)z[PB_SYS_STATS_THERMAL_ZONE__TEMP].value);
		break;
	}
	case PB_SYS_STATS__GPUFREQ_MHZ:
		if (f->wire_type == PZ_WIRE_VARINT)
			tp_counter_add(imp, ev->ts, tp_track_global_counter(imp, "gpufreq", ev->machine),
				       (double)f->value);
		break;
	case PB_SYS_STATS__NUM_FORKS:
		if (f->wire_type == PZ_WIRE_VARINT)
			tp_counter_add(imp, ev->ts, tp_track_global_counter(imp, "num_forks", ev->machine),
				       (double)f->value);
		break;
	case PB_SYS_STATS__CPUIDLE_STATE:
		if (f->wire_type == PZ_WIRE_LEN)
			cpuidle_state(imp, ev, f->data, f->size);
		break;
	case PB_SYS_STATS__DISK_STAT:
		if (f->wire_type == PZ_WIRE_LEN)
			disk_stat(imp, ev, f->data, f->size);
		break;
	case PB_SYS_STATS__CPU_STAT: {
		struct pz_field c[10];
		int64_t cpu;

		if (f->wire_type != PZ_WIRE_LEN || pz_decode_table(f->data, f->size, c, 10) != PZ_OK)
			break;
		if (!c[PB_SYS_STATS_CPU_TIMES__CPU_ID].id) {
			tp_stat_add(imp, "invalid_cpu_times", -1, ev->machine, 1);
			break;
		}
		cpu = (int64_t)(uint32_t)c[PB_SYS_STATS_CPU_TIMES__CPU_ID].value;
		for (i = 0; i < n_cpu_times; i++)
			tp_counter_add(imp, ev->ts,
				       tp_track_cpu_counter_dims(imp, cpu_times[i].name, "cpustat",
								 ev->machine, cpu, "cpustat_key",
								 cpu_times[i].key),
				       c[cpu_times[i].id].id ? (double)c[cpu_times[i].id].value : 0.0);
		break;
	}
	default:
		break;
	}
}

/* sys_stats: thermal zones, GPU frequency, forks, per-CPU times, cpuidle, disks. */
static void sys_stats(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
		      size_t len)
{
	/* Perfetto's cpustat keys; every one gets a value (0 when absent). */
	static const struct cpu_time_key cpu_times[] = {
		{PB_SYS_STATS_CPU_TIMES__USER_NS, "user_ns", "cpu.times.user_ns"},
		{PB_SYS_STATS_CPU_TIMES__USER_NICE_NS, "user_nice_ns", "cpu.times.user_nice_ns"},
		{PB_SYS_STATS_CPU_TIMES__SYSTEM_MODE_NS, "system_mode_ns", "cpu.times.system_mode_ns"},
		{PB_SYS_STATS_CPU_TIMES__IDLE_NS, "idle_ns", "cpu.times.idle_ns"},
		{PB_SYS_STATS_CPU_TIMES__IO_WAIT_NS, "io_wait_ns", "cpu.times.io_wait_ns"},
		{PB_SYS_STATS_CPU_TIMES__IRQ_NS, "irq_ns", "cpu.times.irq_ns"},
		{PB_SYS_STATS_CPU_TIMES__SOFTIRQ_NS, "softirq_ns", "cpu.times.softirq_ns"},
		{PB_SYS_STATS_CPU_TIMES__STEAL_NS, "steal_ns", "cpu.times.steal_ns"},
	};
	/*
	 * Perfetto handles a SysStats one kind at a time, in this order (so
	 * tracks and counter rows come out in it), each kind in field order.
	 */
	static const uint32_t order[] = {
		PB_SYS_STATS__MEMINFO,	   PB_SYS_STATS__CPUFREQ_KHZ,	  PB_SYS_STATS__VMSTAT,
		PB_SYS_STATS__CPU_STAT,	   PB_SYS_STATS__NUM_IRQ,	  PB_SYS_STATS__NUM_SOFTIRQ,
		PB_SYS_STATS__NUM_FORKS,   PB_SYS_STATS__NUM_IRQ_TOTAL, PB_SYS_STATS__NUM_SOFTIRQ_TOTAL,
		PB_SYS_STATS__BUDDY_INFO,  PB_SYS_STATS__DISK_STAT,	  PB_SYS_STATS__THERMAL_ZONE,
		PB_SYS_STATS__CPUIDLE_STATE, PB_SYS_STATS__GPUFREQ_MHZ,
	};
	struct pz_reader r;
	struct pz_field f;
	uint32_t cpu = 0;
	size_t k;

	for (k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		pz_reader_init(&r, data, len);
		while (pz_reader_next(&r, &f) > 0) {
			if (f.id != order[k])
				continue;
			sys_stats_field(imp, ev, &f, &cpu, cpu_times,
					sizeof(cpu_times) / sizeof(cpu_times[0]));
		}
	}
}

/* ------------------------------------------------------------ battery ---- */

/* The battery counter "batt[.<battery>].<what>" of Perfetto's battery_counter type. */
static void battery_counter(struct tp_import *imp, const struct tp_event *ev, const char *battery,
			    const char *what, double value)
{
	struct tp_dim dims[2];
	char name[300];

	if (battery[0])
		snprintf(name, sizeof(name), "batt.%s.%s", battery, what);
	else
		snprintf(name, sizeof(name), "batt.%s", what);
	dims[0] = (struct tp_dim){"battery_name", TP_DIM_STR, tp_db_str(imp->db, battery)};
	dims[1] = (struct tp_dim){"counter_name", TP_DIM_STR, tp_db_str(imp->db, what)};
	tp_counter_add(imp, ev->ts, unit_counter(imp, "battery_counter", name, ev->machine, dims, 2, NULL),
		       value);
}

/*
 * BatteryCounters (linux.sysfs_power, Android's battery): charge (or
 * charge from energy and voltage), capacity, current, average current,
 * voltage, and power from current and voltage, as Perfetto computes them.
 */
static void battery(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
		    size_t len)
{
	struct pz_field b[8];
	char name[256];
	int64_t cur, volt;

	if (pz_decode_table(data, len, b, 8) != PZ_OK)
		return;
	field_str(&b[PB_BATTERY_COUNTERS__NAME], name, sizeof(name));
	volt = (int64_t)b[PB_BATTERY_COUNTERS__VOLTAGE_UV].value;
	if (b[PB_BATTERY_COUNTERS__CHARGE_COUNTER_UAH].id) {
		battery_counter(imp, ev, name, "charge_uah",
				(double)(int64_t)b[PB_BATTERY_COUNTERS__CHARGE_COUNTER_UAH].value);
	} else if (b[PB_BATTERY_COUNTERS__ENERGY_COUNTER_UWH].id &&
		   b[PB_BATTERY_COUNTERS__VOLTAGE_UV].id) {
		/* charge = energy / voltage, in integers as Perfetto does. */
		if (volt > 0)
			battery_counter(
				imp, ev, name, "charge_uah",
				(double)((int64_t)(b[PB_BATTERY_COUNTERS__ENERGY_COUNTER_UWH].value *
						   1000000u) /
					 volt));
	}
	if (b[PB_BATTERY_COUNTERS__CAPACITY_PERCENT].id)
		battery_counter(imp, ev, name, "capacity_pct",
				(double)pz_field_float(&b[PB_BATTERY_COUNTERS__CAPACITY_PERCENT]));
	cur = (int64_t)b[PB_BATTERY_COUNTERS__CURRENT_UA].value;
	if (b[PB_BATTERY_COUNTERS__CURRENT_UA].id)
		battery_counter(imp, ev, name, "current_ua", (double)cur);
	if (b[PB_BATTERY_COUNTERS__CURRENT_AVG_UA].id)
		battery_counter(imp, ev, name, "current.avg_ua",
				(double)(int64_t)b[PB_BATTERY_COUNTERS__CURRENT_AVG_UA].value);
	if (b[PB_BATTERY_COUNTERS__VOLTAGE_UV].id)
		battery_counter(imp, ev, name, "voltage_uv", (double)volt);
	/* Power in mW, positive while discharging too (integer division first). */
	if (b[PB_BATTERY_COUNTERS__CURRENT_UA].id && b[PB_BATTERY_COUNTERS__VOLTAGE_UV].id)
		battery_counter(imp, ev, name, "power_mw",
				fabs((double)((int64_t)((uint64_t)cur * (uint64_t)volt) / 1000000000)));
}

/* -------------------------------------------------------------- stats ---- */

/* The per-sequence losses of a TraceStats, summed per buffer. */
struct buf_loss {
	int64_t buf;
	int64_t v[10]; /* in the order of loss_keys */
};

static void trace_stats(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			size_t len)
{
	/* Every counter of a buffer, in the order Perfetto records them. */
	static const struct {
		uint32_t id;
		const char *name;
	} buf_keys[] = {
		{PB_TRACE_STATS_BUFFER_STATS__BUFFER_SIZE, "traced_buf_buffer_size"},
		{PB_TRACE_STATS_BUFFER_STATS__BYTES_WRITTEN, "traced_buf_bytes_written"},
		{PB_TRACE_STATS_BUFFER_STATS__BYTES_OVERWRITTEN, "traced_buf_bytes_overwritten"},
		{PB_TRACE_STATS_BUFFER_STATS__BYTES_READ, "traced_buf_bytes_read"},
		{PB_TRACE_STATS_BUFFER_STATS__PADDING_BYTES_WRITTEN, "traced_buf_padding_bytes_written"},
		{PB_TRACE_STATS_BUFFER_STATS__PADDING_BYTES_CLEARED, "traced_buf_padding_bytes_cleared"},
		{PB_TRACE_STATS_BUFFER_STATS__CHUNKS_WRITTEN, "traced_buf_chunks_written"},
		{PB_TRACE_STATS_BUFFER_STATS__CHUNKS_REWRITTEN, "traced_buf_chunks_rewritten"},
		{PB_TRACE_STATS_BUFFER_STATS__CHUNKS_OVERWRITTEN, "traced_buf_chunks_overwritten"},
		{PB_TRACE_STATS_BUFFER_STATS__CHUNKS_DISCARDED, "traced_buf_chunks_discarded"},
		{PB_TRACE_STATS_BUFFER_STATS__CHUNKS_READ, "traced_buf_chunks_read"},
		{PB_TRACE_STATS_BUFFER_STATS__CHUNKS_RELOCATED, "traced_buf_chunks_relocated"},
		{PB_TRACE_STATS_BUFFER_STATS__CHUNKS_COMMITTED_OUT_OF_ORDER,
		 "traced_buf_chunks_committed_out_of_order"},
		{PB_TRACE_STATS_BUFFER_STATS__WRITE_WRAP_COUNT, "traced_buf_write_wrap_count"},
		{PB_TRACE_STATS_BUFFER_STATS__PATCHES_SUCCEEDED, "traced_buf_patches_succeeded"},
		{PB_TRACE_STATS_BUFFER_STATS__PATCHES_FAILED, "traced_buf_patches_failed"},
		{PB_TRACE_STATS_BUFFER_STATS__READAHEADS_SUCCEEDED, "traced_buf_readaheads_succeeded"},
		{PB_TRACE_STATS_BUFFER_STATS__READAHEADS_FAILED, "traced_buf_readaheads_failed"},
		{PB_TRACE_STATS_BUFFER_STATS__ABI_VIOLATIONS, "traced_buf_abi_violations"},
		{PB_TRACE_STATS_BUFFER_STATS__TRACE_WRITER_PACKET_LOSS,
		 "traced_buf_trace_writer_packet_loss"},
	};
	static const struct {
		uint32_t id;
		const char *name;
	} keys[] = {
		{PB_TRACE_STATS__PRODUCERS_CONNECTED, "traced_producers_connected"},
		{PB_TRACE_STATS__PRODUCERS_SEEN, "traced_producers_seen"},
		{PB_TRACE_STATS__DATA_SOURCES_REGISTERED, "traced_data_sources_registered"},
		{PB_TRACE_STATS__DATA_SOURCES_SEEN, "traced_data_sources_seen"},
		{PB_TRACE_STATS__TRACING_SESSIONS, "traced_tracing_sessions"},
		{PB_TRACE_STATS__TOTAL_BUFFERS, "traced_total_buffers"},
		{PB_TRACE_STATS__CHUNKS_DISCARDED, "traced_chunks_discarded"},
		{PB_TRACE_STATS__PATCHES_DISCARDED, "traced_patches_discarded"},
		{PB_TRACE_STATS__FLUSHES_REQUESTED, "traced_flushes_requested"},
		{PB_TRACE_STATS__FLUSHES_SUCCEEDED, "traced_flushes_succeeded"},
		{PB_TRACE_STATS__FLUSHES_FAILED, "traced_flushes_failed"},
	};
	/* The per-sequence losses, per buffer (Perfetto's order for one buffer). */
	static const char *const loss_keys[] = {
		"traced_buf_sequence_packet_loss",
		"traced_buf_incremental_sequences_dropped",
		"traced_buf_data_loss_read_gap",
		"traced_buf_data_loss_chunk_corrupted",
		"traced_buf_data_loss_orphan_continuation",
		"traced_buf_data_loss_reassembly_gap",
		"traced_buf_data_loss_reassembly_broken_chain",
		"traced_buf_data_loss_overwrite",
		"traced_buf_data_loss_writer_abort",
		"traced_buf_data_loss_smb_full",
	};
	struct buf_loss loss[16];
	size_t n_loss = 0, i, j;
	struct pz_field top[16];
	struct pz_reader r;
	struct pz_field f;
	int64_t buf = 0;

	if (pz_decode_table(data, len, top, 16) != PZ_OK)
		return;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (top[keys[i].id].wire_type == PZ_WIRE_VARINT)
			tp_stat_set(imp, keys[i].name, -1, ev->machine, (int64_t)top[keys[i].id].value);
	if (top[PB_TRACE_STATS__FILTER_STATS].id &&
	    top[PB_TRACE_STATS__FILTER_STATS].wire_type == PZ_WIRE_LEN) {
		const struct pz_field *fs = &top[PB_TRACE_STATS__FILTER_STATS];
		struct pz_field v[6];

		if (pz_decode_table(fs->data, fs->size, v, 6) == PZ_OK) {
			tp_stat_set(imp, "filter_errors", -1, ev->machine,
				    (int64_t)v[PB_TRACE_STATS_FILTER_STATS__ERRORS].value);
			tp_stat_set(imp, "filter_input_bytes", -1, ev->machine,
				    (int64_t)v[PB_TRACE_STATS_FILTER_STATS__INPUT_BYTES].value);
			tp_stat_set(imp, "filter_input_packets", -1, ev->machine,
				    (int64_t)v[PB_TRACE_STATS_FILTER_STATS__INPUT_PACKETS].value);
			tp_stat_set(imp, "filter_output_bytes", -1, ev->machine,
				    (int64_t)v[PB_TRACE_STATS_FILTER_STATS__OUTPUT_BYTES].value);
			tp_stat_set(imp, "filter_time_taken_ns", -1, ev->machine,
				    (int64_t)v[PB_TRACE_STATS_FILTER_STATS__TIME_TAKEN_NS].value);
		}
		pz_reader_init(&r, fs->data, fs->size);
		buf = 0;
		while (pz_reader_next(&r, &f) > 0) {
			if (f.id != PB_TRACE_STATS_FILTER_STATS__BYTES_DISCARDED_PER_BUFFER)
				continue;
			if (f.wire_type == PZ_WIRE_VARINT) {
				tp_stat_set(imp, "traced_buf_bytes_filtered_out", buf++, ev->machine,
					    (int64_t)f.value);
			} else if (f.wire_type == PZ_WIRE_LEN) {
				struct pz_packed it;
				uint64_t x;

				pz_packed_init(&it, &f);
				while (pz_packed_next_varint(&it, &x) > 0)
					tp_stat_set(imp, "traced_buf_bytes_filtered_out", buf++,
						    ev->machine, (int64_t)x);
			}
		}
	}
	if (top[PB_TRACE_STATS__FINAL_FLUSH_OUTCOME].value ==
	    PBE_TRACE_STATS_FINAL_FLUSH_OUTCOME__FINAL_FLUSH_SUCCEEDED)
		tp_stat_add(imp, "traced_final_flush_succeeded", -1, ev->machine, 1);
	else if (top[PB_TRACE_STATS__FINAL_FLUSH_OUTCOME].value ==
		 PBE_TRACE_STATS_FINAL_FLUSH_OUTCOME__FINAL_FLUSH_FAILED)
		tp_stat_add(imp, "traced_final_flush_failed", -1, ev->machine, 1);
	buf = 0;
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field b[21];

		if (f.id != PB_TRACE_STATS__BUFFER_STATS || f.wire_type != PZ_WIRE_LEN)
			continue;
		if (pz_decode_table(f.data, f.size, b, 21) != PZ_OK)
			memset(b, 0, sizeof(b));
		for (i = 0; i < sizeof(buf_keys) / sizeof(buf_keys[0]); i++)
			tp_stat_set(imp, buf_keys[i].name, buf, ev->machine,
				    (int64_t)b[buf_keys[i].id].value);
		buf++;
	}
	/* Sequences this trace has, summed per buffer in the order buffers first appear. */
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field w[5];
		struct tp_seq_loss sl;
		int64_t b;

		if (f.id != PB_TRACE_STATS__WRITER_STATS || f.wire_type != PZ_WIRE_LEN ||
		    pz_decode_table(f.data, f.size, w, 5) != PZ_OK)
			continue;
		if (!tp_seq_loss(imp, w[PB_TRACE_STATS_WRITER_STATS__SEQUENCE_ID].value, &sl))
			continue;
		b = (int64_t)(int32_t)w[PB_TRACE_STATS_WRITER_STATS__BUFFER].value;
		for (j = 0; j < n_loss && loss[j].buf != b; j++)
			;
		if (j == n_loss) {
			if (n_loss == sizeof(loss) / sizeof(loss[0]))
				continue;
			memset(&loss[n_loss], 0, sizeof(loss[n_loss]));
			loss[n_loss++].buf = b;
		}
		loss[j].v[0] += (int64_t)sl.lost;
		loss[j].v[1] += sl.incremental_dropped;
		/* DATA_LOSS_* bits 1..8: read gap, chunk corrupted, orphan
		 * continuation, reassembly gap, broken chain, overwrite, writer
		 * abort, SMB full (loss_keys 2..9). */
		for (i = 0; i < 8; i++)
			loss[j].v[2 + i] += (int64_t)sl.causes[i];
	}
	for (j = 0; j < n_loss; j++)
		for (i = 0; i < sizeof(loss_keys) / sizeof(loss_keys[0]); i++)
			tp_stat_set(imp, loss_keys[i], loss[j].buf, ev->machine, loss[j].v[i]);
}

/* An FtraceStats' ftrace_parse_errors: the zero-length ones are counted apart. */
static void ftrace_parse_error(struct tp_import *imp, const struct tp_event *ev, uint64_t v)
{
	tp_stat_add(imp,
		    v == PBE_FTRACE_PARSE_STATUS__FTRACE_STATUS_ABI_ZERO_DATA_LENGTH
			    ? "ftrace_abi_errors_skipped_zero_data_length"
			    : "ftrace_abi_errors",
		    -1, ev->machine, 1);
}

/*
 * One CPU's FtraceCpuStats, as Perfetto records them: every counter of
 * the phase (absent ones 0) in this order, at the end also each one's
 * change since the start (when the start was recorded), then
 * oldest_event_ts (clamped to int64's maximum).
 */
static void ftrace_cpu_stats(struct tp_import *imp, const struct tp_event *ev,
			     const struct pz_field *c, bool is_end)
{
	static const struct {
		uint32_t id;
		const char *name;
	} k[] = {
		{PB_FTRACE_CPU_STATS__ENTRIES, "ftrace_cpu_entries"},
		{PB_FTRACE_CPU_STATS__OVERRUN, "ftrace_cpu_overrun"},
		{PB_FTRACE_CPU_STATS__COMMIT_OVERRUN, "ftrace_cpu_commit_overrun"},
		{PB_FTRACE_CPU_STATS__BYTES_READ, "ftrace_cpu_bytes"},
		{PB_FTRACE_CPU_STATS__DROPPED_EVENTS, "ftrace_cpu_dropped_events"},
		{PB_FTRACE_CPU_STATS__READ_EVENTS, "ftrace_cpu_read_events"},
	};
	const char *suffix = is_end ? "end" : "begin";
	int64_t cpu = (int64_t)(int32_t)c[PB_FTRACE_CPU_STATS__CPU].value, begin;
	char name[64];
	double ns;
	size_t i;

	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		snprintf(name, sizeof(name), "%s_%s", k[i].name, suffix);
		tp_stat_set(imp, name, cpu, ev->machine, (int64_t)c[k[i].id].value);
	}
	ns = c[PB_FTRACE_CPU_STATS__NOW_TS].id ? pz_field_double(&c[PB_FTRACE_CPU_STATS__NOW_TS]) * 1e9
					       : 0;
	snprintf(name, sizeof(name), "ftrace_cpu_now_ts_%s", suffix);
	tp_stat_set(imp, name, cpu, ev->machine, ns > -9.2e18 && ns < 9.2e18 ? (int64_t)ns : 0);
	for (i = 0; is_end && i < sizeof(k) / sizeof(k[0]); i++) {
		snprintf(name, sizeof(name), "%s_begin", k[i].name);
		if (!tp_stat_get(imp, name, cpu, ev->machine, &begin))
			continue;
		snprintf(name, sizeof(name), "%s_delta", k[i].name);
		tp_stat_set(imp, name, cpu, ev->machine, (int64_t)c[k[i].id].value - begin);
	}
	ns = c[PB_FTRACE_CPU_STATS__OLDEST_EVENT_TS].id
		     ? pz_field_double(&c[PB_FTRACE_CPU_STATS__OLDEST_EVENT_TS]) * 1e9
		     : 0;
	snprintf(name, sizeof(name), "ftrace_cpu_oldest_event_ts_%s", suffix);
	if (ns >= 9223372036854775807.0)
		tp_stat_set(imp, name, cpu, ev->machine, INT64_MAX);
	else if (ns > -9.2e18)
		tp_stat_set(imp, name, cpu, ev->machine, (int64_t)ns);
	else
		tp_stat_set(imp, name, cpu, ev->machine, 0);
}

/* One setup error: counted, and its message "<prefix><field>" an arg set. */
static void log_setup_error(struct tp_import *imp, const struct tp_event *ev, struct tp_argset *b,
			    uint32_t key, const char *prefix, const struct pz_field *f)
{
	size_t n = strlen(prefix);
	char *msg = malloc(n + f->size + 1);

	tp_stat_add(imp, "ftrace_setup_errors", -1, ev->machine, 1);
	if (!msg)
		return;
	memcpy(msg, prefix, n);
	memcpy(msg + n, f->data, f->size);
	b->n = 0;
	tp_argset_str(imp, b, key, tp_str_intern(&imp->db->strings, msg, n + f->size));
	tp_argset_commit(imp, b);
	free(msg);
}

/*
 * The recorder's setup errors, at the start, once per sequence (the first
 * start with any): each is counted and logged, its message an arg set
 * made now, as Perfetto's RecordCollectionLog does: failed events, then
 * unknown events, then atrace errors, then an exclusive feature error.
 */
static void setup_errors(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			 size_t len)
{
	static const struct {
		uint32_t id;
		const char *prefix;
		bool once; /* a string field: logged if not empty */
	} kinds[] = {
		{PB_FTRACE_STATS__FAILED_FTRACE_EVENTS, "Ftrace event failed: ", false},
		{PB_FTRACE_STATS__UNKNOWN_FTRACE_EVENTS, "Ftrace event unknown: ", false},
		{PB_FTRACE_STATS__ATRACE_ERRORS, "Atrace failures: ", true},
		{PB_FTRACE_STATS__EXCLUSIVE_FEATURE_ERROR, "Ftrace exclusive feature error: ", true},
	};
	uint64_t seq = tp_seq_id(imp, ev->seq_idx), v;
	uint32_t key = tp_db_str(imp->db, "message");
	struct tp_argset b = {0};
	bool any = false;
	struct pz_reader r;
	struct pz_field f;
	size_t i;

	if (hmap_get(&imp->system->setup_error_seqs, seq, &v))
		return;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct pz_field last = {0};

		pz_reader_init(&r, data, len);
		while (pz_reader_next(&r, &f) > 0) {
			if (f.id != kinds[i].id || f.wire_type != PZ_WIRE_LEN)
				continue;
			if (kinds[i].once) {
				last = f; /* a singular field: its last value counts */
				continue;
			}
			log_setup_error(imp, ev, &b, key, kinds[i].prefix, &f);
			any = true;
		}
		if (kinds[i].once && last.id && last.size > 0) {
			log_setup_error(imp, ev, &b, key, kinds[i].prefix, &last);
			any = true;
		}
	}
	tp_argset_fini(&b);
	if (any)
		hmap_put(&imp->system->setup_error_seqs, seq, 1);
}

static void ftrace_stats(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			 size_t len)
{
	struct pz_reader r;
	struct pz_field f, top[14];
	bool is_end;

	if (pz_decode_table(data, len, top, 14) != PZ_OK) {
		tp_stat_add(imp, "ftrace_stats_malformed", -1, ev->machine, 1);
		return;
	}
	if (top[PB_FTRACE_STATS__PHASE].value != PBE_FTRACE_STATS_PHASE__START_OF_TRACE &&
	    top[PB_FTRACE_STATS__PHASE].value != PBE_FTRACE_STATS_PHASE__END_OF_TRACE)
		return;
	is_end = top[PB_FTRACE_STATS__PHASE].value == PBE_FTRACE_STATS_PHASE__END_OF_TRACE;
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field c[10];

		if (f.id != PB_FTRACE_STATS__CPU_STATS || f.wire_type != PZ_WIRE_LEN ||
		    pz_decode_table(f.data, f.size, c, 10) != PZ_OK)
			continue;
		ftrace_cpu_stats(imp, ev, c, is_end);
	}
	{
		struct pz_field kp[3] = {{0}};
		const struct pz_field *k = &top[PB_FTRACE_STATS__KPROBE_STATS];
		int64_t begin;

		if (k->id && k->wire_type == PZ_WIRE_LEN &&
		    pz_decode_table(k->data, k->size, kp, 3) != PZ_OK)
			memset(kp, 0, sizeof(kp));
		tp_stat_set(imp, is_end ? "ftrace_kprobe_hits_end" : "ftrace_kprobe_hits_begin", -1,
			    ev->machine, (int64_t)kp[PB_FTRACE_KPROBE_STATS__HITS].value);
		tp_stat_set(imp, is_end ? "ftrace_kprobe_misses_end" : "ftrace_kprobe_misses_begin",
			    -1, ev->machine, (int64_t)kp[PB_FTRACE_KPROBE_STATS__MISSES].value);
		/* Perfetto takes a begin of 0 for none. */
		if (is_end && tp_stat_get(imp, "ftrace_kprobe_hits_begin", -1, ev->machine, &begin) &&
		    begin)
			tp_stat_set(imp, "ftrace_kprobe_hits_delta", -1, ev->machine,
				    (int64_t)kp[PB_FTRACE_KPROBE_STATS__HITS].value - begin);
		if (is_end &&
		    tp_stat_get(imp, "ftrace_kprobe_misses_begin", -1, ev->machine, &begin) && begin)
			tp_stat_set(imp, "ftrace_kprobe_misses_delta", -1, ev->machine,
				    (int64_t)kp[PB_FTRACE_KPROBE_STATS__MISSES].value - begin);
	}
	if (!is_end) {
		setup_errors(imp, ev, data, len);
		/* An uncleared buffer: no ftrace is dropped (if seen before the first event). */
		if (top[PB_FTRACE_STATS__PRESERVE_FTRACE_BUFFER].value)
			imp->ftrace_preserve_buffer = true;
	}
	/* Page errors traced_probes met and skipped (FtraceParseStatus values). */
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id != PB_FTRACE_STATS__FTRACE_PARSE_ERRORS)
			continue;
		if (f.wire_type == PZ_WIRE_VARINT) {
			ftrace_parse_error(imp, ev, f.value);
		} else if (f.wire_type == PZ_WIRE_LEN) {
			struct pz_packed it;
			uint64_t v;

			pz_packed_init(&it, &f);
			while (pz_packed_next_varint(&it, &v) > 0)
				ftrace_parse_error(imp, ev, v);
		}
	}
}

static void trace_uuid(struct tp_import *imp, const uint8_t *data, size_t len)
{
	struct pz_field u[3];

	if (pz_decode_table(data, len, u, 3) == PZ_OK)
		tp_trace_uuid_set(imp, u[PB_TRACE_UUID__MSB].value, u[PB_TRACE_UUID__LSB].value,
				  false);
}

/* The data sources slow to start: "<producer> <data source>" rows. */
static void slow_starting(struct tp_import *imp, const uint8_t *data, size_t len)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field d[3];
		struct buf b = BUF_INIT;
		const struct pz_field *producer, *name;

		if (f.id != PB_TRACING_SERVICE_EVENT_DATA_SOURCES__DATA_SOURCE ||
		    f.wire_type != PZ_WIRE_LEN || pz_decode_table(f.data, f.size, d, 3) != PZ_OK)
			continue;
		producer = &d[PB_TRACING_SERVICE_EVENT_DATA_SOURCES_DATA_SOURCE__PRODUCER_NAME];
		name = &d[PB_TRACING_SERVICE_EVENT_DATA_SOURCES_DATA_SOURCE__DATA_SOURCE_NAME];
		if ((!producer->id || !buf_append(&b, producer->data, producer->size)) &&
		    !buf_append(&b, " ", 1) &&
		    (!name->id || !buf_append(&b, name->data, name->size)))
			tp_metadata_add_str(imp, "slow_start_data_source", (const char *)b.data, b.len);
		buf_fini(&b);
	}
}

static void service_event(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			  size_t len)
{
	struct pz_field s[12];

	if (pz_decode_table(data, len, s, 12) != PZ_OK)
		return;
	if (s[PB_TRACING_SERVICE_EVENT__TRACING_STARTED].id)
		tp_metadata_set_int(imp, "tracing_started_ns", 0, ev->ts);
	if (s[PB_TRACING_SERVICE_EVENT__ALL_DATA_SOURCES_STARTED].id)
		tp_metadata_set_int(imp, "all_data_source_started_ns", 0, ev->ts);
	if (s[PB_TRACING_SERVICE_EVENT__TRACING_DISABLED].id)
		tp_metadata_set_int(imp, "tracing_disabled_ns", 0, ev->ts);
	if (s[PB_TRACING_SERVICE_EVENT__ALL_DATA_SOURCES_FLUSHED].id)
		tp_metadata_add_int(imp, "all_data_source_flushed_ns", ev->ts);
	if (s[PB_TRACING_SERVICE_EVENT__SLOW_STARTING_DATA_SOURCES].id)
		slow_starting(imp, s[PB_TRACING_SERVICE_EVENT__SLOW_STARTING_DATA_SOURCES].data,
			      s[PB_TRACING_SERVICE_EVENT__SLOW_STARTING_DATA_SOURCES].size);
	/* A clone's start and each buffer's cloned flush: traced.stats' latencies. */
	if (s[PB_TRACING_SERVICE_EVENT__CLONE_STARTED].id)
		tp_stat_set(imp, "traced_clone_started_timestamp_ns", -1, ev->machine, ev->ts);
	if (s[PB_TRACING_SERVICE_EVENT__BUFFER_CLONED].id)
		tp_stat_set(imp, "traced_buf_clone_done_timestamp_ns",
			    (int32_t)s[PB_TRACING_SERVICE_EVENT__BUFFER_CLONED].value, ev->machine,
			    ev->ts);
}

/* TraceAttributes: metadata "trace_attribute.<key>"; later values win. */
static void trace_attributes(struct tp_import *imp, const uint8_t *data, size_t len)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field a[4];
		char key[256];
		int n;

		if (f.id != PB_TRACE_ATTRIBUTES__ATTRIBUTE || f.wire_type != PZ_WIRE_LEN ||
		    pz_decode_table(f.data, f.size, a, 4) != PZ_OK ||
		    a[PB_TRACE_ATTRIBUTES_ATTRIBUTE__KEY].wire_type != PZ_WIRE_LEN)
			continue;
		n = snprintf(key, sizeof(key), "trace_attribute.%.*s",
			     (int)a[PB_TRACE_ATTRIBUTES_ATTRIBUTE__KEY].size,
			     (const char *)a[PB_TRACE_ATTRIBUTES_ATTRIBUTE__KEY].data);
		if (n < 0 || (size_t)n >= sizeof(key))
			continue;
		if (a[PB_TRACE_ATTRIBUTES_ATTRIBUTE__STRING_VALUE].id)
			tp_metadata_set_str(imp, key, 0,
					    (const char *)a[PB_TRACE_ATTRIBUTES_ATTRIBUTE__STRING_VALUE].data,
					    a[PB_TRACE_ATTRIBUTES_ATTRIBUTE__STRING_VALUE].size);
		else if (a[PB_TRACE_ATTRIBUTES_ATTRIBUTE__LONG_VALUE].id)
			tp_metadata_set_int(imp, key, 0,
					    (int64_t)a[PB_TRACE_ATTRIBUTES_ATTRIBUTE__LONG_VALUE].value);
	}
}

static void trace_config(struct tp_import *imp, const uint8_t *data, size_t len)
{
	struct buf text = BUF_INIT;
	struct pz_reader r;
	struct pz_field f;
	uint64_t period_ms = 0, flush_ms = 0, uuid_msb = 0, uuid_lsb = 0;
	uint32_t n_buffers = 0;
	bool into_file = false;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_TRACE_CONFIG__WRITE_INTO_FILE && f.wire_type == PZ_WIRE_VARINT)
			into_file = f.value != 0;
		else if (f.id == PB_TRACE_CONFIG__FILE_WRITE_PERIOD_MS && f.wire_type == PZ_WIRE_VARINT)
			period_ms = f.value;
		else if (f.id == PB_TRACE_CONFIG__FLUSH_PERIOD_MS && f.wire_type == PZ_WIRE_VARINT)
			flush_ms = f.value;
		else if (f.id == PB_TRACE_CONFIG__BUFFERS && f.wire_type == PZ_WIRE_LEN)
			n_buffers++;
		else if (f.id == PB_TRACE_CONFIG__TRACE_ATTRIBUTES && f.wire_type == PZ_WIRE_LEN)
			trace_attributes(imp, f.data, f.size);
		else if (f.id == PB_TRACE_CONFIG__TRACE_UUID_MSB && f.wire_type == PZ_WIRE_VARINT)
			uuid_msb = f.value;
		else if (f.id == PB_TRACE_CONFIG__TRACE_UUID_LSB && f.wire_type == PZ_WIRE_VARINT)
			uuid_lsb = f.value;
		else if (f.id == PB_TRACE_CONFIG__UNIQUE_SESSION_NAME && f.wire_type == PZ_WIRE_LEN)
			tp_metadata_set_str(imp, "unique_session_name", 0, (const char *)f.data,
					    f.size);
	}
	tp_trace_uuid_set(imp, uuid_msb, uuid_lsb, true);
	/* Perfetto keeps the whole config as text. */
	if (tp_trace_config_text(data, len, &text) == 0)
		tp_metadata_set_str(imp, "trace_config_pbtxt", 0, (const char *)text.data,
				    text.len);
	buf_fini(&text);
	/*
	 * Long trace mode streams buffers into the file as it goes. A write
	 * period of a day or more means the file is only written at the end:
	 * the buffer is meant as a ring, and overwriting it is not data loss.
	 */
	imp->system->write_into_file = into_file && period_ms < 24ull * 3600 * 1000;
	imp->system->into_file = into_file;
	imp->system->flush_period = flush_ms != 0;
	imp->system->n_buffers = n_buffers;
	/* Kept for the diagnostics, which run when the import ends. */
	free(imp->system->config);
	imp->system->config = malloc(len ? len : 1);
	imp->system->config_len = imp->system->config ? len : 0;
	if (imp->system->config && len)
		memcpy(imp->system->config, data, len);
}

void tp_system_diagnostics(struct tp_import *imp)
{
	if (imp->system)
		tp_diagnostics_run(imp, imp->system->config, imp->system->config_len);
}

void tp_system_trace_config_tokenized(struct tp_import *imp, const uint8_t *data, size_t len)
{
	struct pz_reader r;
	struct pz_field f;
	bool into_file = false;
	int64_t buf = 0;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == PB_TRACE_CONFIG__WRITE_INTO_FILE && f.wire_type == PZ_WIRE_VARINT)
			into_file = f.value != 0;
	if (!into_file)
		return;
	/* A DISCARD buffer written into a file loses data: counted per buffer. */
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field b[8];

		if (f.id != PB_TRACE_CONFIG__BUFFERS || f.wire_type != PZ_WIRE_LEN)
			continue;
		if (pz_decode_table(f.data, f.size, b, 8) == PZ_OK &&
		    b[PB_TRACE_CONFIG_BUFFER_CONFIG__FILL_POLICY].value ==
			    PBE_TRACE_CONFIG_BUFFER_CONFIG_FILL_POLICY__DISCARD)
			tp_stat_add(imp, "config_write_into_file_discard", buf, 0, 1);
		buf++;
	}
}

void tp_system_finish(struct tp_import *imp)
{
	struct tp_system *sys = imp->system;
	uint32_t b;

	if (!sys || !sys->into_file)
		return;
	/* Written into a file, yet overwritten: the file lost data. */
	for (b = 0; sys->write_into_file && b < sys->n_buffers; b++) {
		int64_t v;

		if (tp_stat_get(imp, "traced_buf_bytes_overwritten", b, 0, &v) && v > 0)
			tp_stat_set(imp, "long_trace_mode_bytes_overwritten", b, 0, v);
	}
	/* Before v54 a file was only flushed with flush_period_ms. */
	if (!sys->flush_period && !sys->service_v54)
		tp_stat_add(imp, "config_write_into_file_no_flush", -1, 0, 1);
}

/*
 * trigger and clone_snapshot_trigger: an instant named after the trigger on
 * the "Trace Triggers" track (args producer_name, trusted_producer_uid).
 * The trace_trigger metadata is the first trace trigger's name, unless a
 * clone snapshot trigger comes: then the first of those (and its time is
 * the traced_clone_trigger_timestamp_ns stat), as in Perfetto.
 */
static void trigger(struct tp_import *imp, const struct tp_event *ev, int kind,
		    const uint8_t *data, size_t len)
{
	struct pz_field t[PB_TRIGGER__STOP_DELAY_MS + 1];
	const struct pz_field *n = &t[PB_TRIGGER__TRIGGER_NAME];
	const struct pz_field *prod = &t[PB_TRIGGER__PRODUCER_NAME];
	struct tp_system *sys = imp->system;
	int64_t track, row;
	struct tp_argset *b;
	uint32_t name;

	if (pz_decode_table(data, len, t, PB_TRIGGER__STOP_DELAY_MS + 1) != PZ_OK)
		return;
	name = n->id && n->wire_type == PZ_WIRE_LEN
		       ? tp_str_intern(&imp->db->strings, (const char *)n->data, n->size)
		       : tp_str_intern(&imp->db->strings, "", 0);
	track = tp_track_dims(imp, "triggers", tp_db_str(imp->db, "Trace Triggers"), false,
			      ev->machine, NULL, 0, 0);
	row = track >= 0 ? tp_slice_scoped(imp, ev->ts, 0, track, 0, name) : -1;
	b = row >= 0 ? tp_slice_args(imp, track, (uint32_t)row) : NULL;
	if (b) {
		if (prod->id && prod->wire_type == PZ_WIRE_LEN && prod->size)
			tp_argset_str(imp, b, tp_db_str(imp->db, "producer_name"),
				      tp_str_intern(&imp->db->strings, (const char *)prod->data,
						    prod->size));
		if (t[PB_TRIGGER__TRUSTED_PRODUCER_UID].id)
			tp_argset_int(imp, b, tp_db_str(imp->db, "trusted_producer_uid"),
				      (int32_t)t[PB_TRIGGER__TRUSTED_PRODUCER_UID].value);
	}
	if ((kind == TRIGGER_CLONE && sys->trigger_kind != TRIGGER_CLONE) ||
	    (kind == TRIGGER_TRACE && sys->trigger_kind == TRIGGER_NONE)) {
		sys->trigger_kind = kind;
		tp_metadata_set_str(imp, "trace_trigger", ev->machine,
				    n->id ? (const char *)n->data : "", n->id ? n->size : 0);
		if (kind == TRIGGER_CLONE)
			tp_stat_set(imp, "traced_clone_trigger_timestamp_ns", -1, ev->machine,
				    ev->ts);
	}
}

/* -------------------------------------------------- concurrent sessions ---- */

/*
 * Another tracing session's state change: one state track per session id
 * (named on its first event: the session's name, or "Session <id>", with
 * " (clone)" for a clone), whose value is the state; DISABLED ends there.
 */
static void concurrent_session(struct tp_import *imp, const struct tp_event *ev,
			       const uint8_t *data, size_t len)
{
	static const char *const k_states[] = {
		[PBE_CONCURRENT_SESSION_EVENT_STATE__STATE_DISABLED] = "DISABLED",
		[PBE_CONCURRENT_SESSION_EVENT_STATE__STATE_CONFIGURED] = "CONFIGURED",
		[PBE_CONCURRENT_SESSION_EVENT_STATE__STATE_STARTED] = "STARTED",
		[PBE_CONCURRENT_SESSION_EVENT_STATE__STATE_DISABLING_WAITING_STOP_ACKS] =
			"DISABLING_WAITING_STOP_ACKS",
		[PBE_CONCURRENT_SESSION_EVENT_STATE__STATE_CLONED_READ_ONLY] = "CLONED_READ_ONLY",
	};
	struct pz_field e[PB_CONCURRENT_SESSION_EVENT__NUM_DATA_SOURCES + 1];
	const struct pz_field *n = &e[PB_CONCURRENT_SESSION_EVENT__SESSION_NAME];
	uint64_t state, id;
	struct tp_argset *b;
	struct tp_dim dim;
	char name[64];
	uint32_t name_id;
	int64_t track;
	bool clone;

	if (pz_decode_table(data, len, e, PB_CONCURRENT_SESSION_EVENT__NUM_DATA_SOURCES + 1) !=
	    PZ_OK)
		return;
	state = e[PB_CONCURRENT_SESSION_EVENT__STATE].value;
	if (state >= sizeof(k_states) / sizeof(k_states[0]) || !k_states[state]) {
		tp_stat_add(imp, "concurrent_session_event_unknown_state", -1, ev->machine, 1);
		return;
	}
	id = e[PB_CONCURRENT_SESSION_EVENT__SESSION_ID].value;
	clone = state == PBE_CONCURRENT_SESSION_EVENT_STATE__STATE_CLONED_READ_ONLY;
	if (n->id && n->wire_type == PZ_WIRE_LEN && n->size) {
		struct buf nb = BUF_INIT;

		if (buf_append(&nb, n->data, n->size) < 0 ||
		    (clone && buf_append(&nb, " (clone)", 8) < 0)) {
			buf_fini(&nb);
			return;
		}
		name_id = tp_str_intern(&imp->db->strings, (const char *)nb.data, nb.len);
		buf_fini(&nb);
	} else {
		snprintf(name, sizeof(name), "Session %" PRIu64 "%s", id, clone ? " (clone)" : "");
		name_id = tp_db_str(imp->db, name);
	}
	dim.key = "session_id";
	dim.kind = TP_DIM_INT;
	dim.v = (int64_t)id;
	track = tp_track_dims(imp, "concurrent_tracing_sessions", name_id, false,
			      ev->machine, &dim, 1, 0);
	if (track < 0)
		return;
	tp_set_int(&imp->db->track, TRACK_IS_COUNTER, (size_t)track, 2); /* a state track */
	b = tp_state_update(imp, ev->ts, track, tp_db_str(imp->db, k_states[state]), 0);
	if (b) {
		tp_argset_int(imp, b, tp_db_str(imp->db, "consumer_uid"),
			      (int32_t)e[PB_CONCURRENT_SESSION_EVENT__CONSUMER_UID].value);
		tp_argset_int(imp, b, tp_db_str(imp->db, "num_data_sources"),
			      (uint32_t)e[PB_CONCURRENT_SESSION_EVENT__NUM_DATA_SOURCES].value);
	}
	if (state == PBE_CONCURRENT_SESSION_EVENT_STATE__STATE_DISABLED)
		tp_state_update(imp, ev->ts, track, 0, 0);
}

/* interrupt_info: each (machine, irq) named once, the first name kept. */
static void interrupt_info(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			   size_t len)
{
	struct tp_table *t = &imp->db->irq_mapping;
	struct pz_reader r, rm;
	struct pz_field f, m;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field name = {0};
		bool has_id = false, has_name = false;
		uint64_t id = 0;
		int64_t row;

		if (f.id != PB_INTERRUPT_INFO__IRQ_MAPPING || f.wire_type != PZ_WIRE_LEN)
			continue;
		pz_reader_init(&rm, f.data, f.size);
		while (pz_reader_next(&rm, &m) > 0) {
			if (m.id == PB_INTERRUPT_INFO_INTERRUPT_MAPPING__IRQ_ID &&
			    m.wire_type == PZ_WIRE_VARINT) {
				id = (uint32_t)m.value;
				has_id = true;
			} else if (m.id == PB_INTERRUPT_INFO_INTERRUPT_MAPPING__NAME &&
				   m.wire_type == PZ_WIRE_LEN) {
				name = m;
				has_name = true;
			}
		}
		if (!has_id || !has_name ||
		    hmap_get(&imp->system->irqs, (uint64_t)ev->machine << 32 | id, NULL))
			continue;
		if (hmap_put(&imp->system->irqs, (uint64_t)ev->machine << 32 | id, 1) < 0)
			continue;
		row = tp_table_append(t);
		if (row < 0)
			continue;
		tp_set_int(t, IRQMAP_IRQ_ID, (size_t)row, (int64_t)id);
		tp_set_str(t, IRQMAP_NAME, (size_t)row,
			   tp_str_intern(&imp->db->strings, (const char *)name.data, name.size));
		tp_set_int(t, IRQMAP_MACHINE_ID, (size_t)row, ev->machine);
	}
}

/* ------------------------------------------------------------ dispatch ---- */

void tp_system_packet(struct tp_import *imp, const struct tp_event *ev, uint32_t field,
		      const uint8_t *data, size_t len)
{
	switch (field) {
	case PB_TRACE_PACKET__PROCESS_TREE:
		process_tree(imp, ev, data, len);
		break;
	case PB_TRACE_PACKET__PROCESS_STATS:
		process_stats(imp, ev, data, len);
		break;
	case PB_TRACE_PACKET__SYS_STATS:
		sys_stats(imp, ev, data, len);
		break;
	case PB_TRACE_PACKET__BATTERY:
		battery(imp, ev, data, len);
		break;
	case PB_TRACE_PACKET__SYSTEM_INFO:
		system_info(imp, ev, data, len);
		break;
	case PB_TRACE_PACKET__CPU_INFO:
		cpu_info(imp, ev, data, len);
		break;
	case PB_TRACE_PACKET__INTERRUPT_INFO:
		interrupt_info(imp, ev, data, len);
		break;
	case PB_TRACE_PACKET__TRACE_STATS:
		trace_stats(imp, ev, data, len);
		break;
	case PB_TRACE_PACKET__FTRACE_STATS:
		ftrace_stats(imp, ev, data, len);
		break;
	case PB_TRACE_PACKET__TRACE_UUID:
		trace_uuid(imp, data, len);
		break;
	case PB_TRACE_PACKET__SERVICE_EVENT:
		service_event(imp, ev, data, len);
		break;
	case PB_TRACE_PACKET__TRACE_CONFIG:
		trace_config(imp, data, len);
		break;
	case PB_TRACE_PACKET__TRACE_ATTRIBUTES:
		trace_attributes(imp, data, len);
		break;
	case PB_TRACE_PACKET__CLONE_SNAPSHOT_TRIGGER:
		trigger(imp, ev, TRIGGER_CLONE, data, len);
		break;
	case PB_TRACE_PACKET__TRIGGER:
		trigger(imp, ev, TRIGGER_TRACE, data, len);
		break;
	case PB_TRACE_PACKET__CONCURRENT_SESSION_EVENT:
		concurrent_session(imp, ev, data, len);
		break;
	default:
		break;
	}
}
