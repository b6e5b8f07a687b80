/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ftrace_int.h - what the ftrace importer's files share, private to them:
 *
 *   ftrace.c      the generic parser: every event, process events, sched
 *   ftrace_hot.c  the hot events (sched_switch, sched_waking, cpu_idle)
 *   ftrace_raw.c  ftrace_event rows and their args
 *   atrace.c      atrace lines (print, marks): slices, counters, async tracks
 *   ftrace_mark.c, cpu_util.c, wakesource.c, dma_heap.c, ion.c,
 *   adreno.c      one kind of event each
 *   syscall.c     raw_syscalls sys_enter/sys_exit slices
 *   kernel.c      suspend_resume, oom mark_victim, kprobe, workqueue slices,
 *                 signal instants
 *   irq.c         irq and softirq slices on per-CPU tracks
 *
 * Each file keeps to its own part of struct tp_ftrace.
 */
#ifndef PFC_TRACE_PROCESSOR_IMPORT_FTRACE_FTRACE_INT_H
#define PFC_TRACE_PROCESSOR_IMPORT_FTRACE_FTRACE_INT_H

#include "trace_processor/import/common/common.h"
#include "trace_processor/import/ftrace/ftrace.h"

/* Direct-mapped caches of the hot path (powers of two). */
#define FT_COMM_CACHE 1024        /* tid -> the comm string it had last */
#define FT_IDLE_CACHE 256         /* host CPU -> its "cpuidle" track */
#define FT_NAME_CACHE 1024        /* ftrace event id -> its name's string id */
#define SYSCALL_MAX 550           /* syscall numbers past this make no slice (Perfetto's limit) */

/* Live buffers spread over as few tracks as overlap (dma_heap.c). */
struct tp_buffer_slot {
	uint64_t key;                 /* the buffer the slot had last */
	uint32_t open;                /* slices open on it */
};
struct tp_buffer_pool {
	struct tp_buffer_slot *slots; /* by pool index: the track's idx */
	size_t n, cap;
};

/*
 * A cached comm. Every entry is checked against its key, or only ever
 * holds the value the lookup would return, so a hit never changes a result.
 */
struct tp_comm_slot {
	uint64_t w[TP_COMM_INLINE / 8]; /* the string, zero-padded */
	uint32_t id;                  /* string id; 0: empty */
	uint32_t len;                 /* its length (<= TP_COMM_INLINE, no NUL) */
};

struct tp_atrace_async;
struct tp_payload_memo;
struct tp_kernel;

struct tp_ftrace {
	int64_t tracing_started_ts;   /* the last tracing_started; TP_NULL_INT */
	/* fixed at the first ftrace event parsed (ftrace.c: window()) */
	bool window_set;
	int64_t drop_before_ts;       /* ftrace before this is dropped (counted) */
	struct hmap data_start;       /* machine -> all its CPUs' data whole from */
	/* ftrace.c */
	struct hmap mm_to_utid;       /* rss_stat mm_id -> utid of the thread seen with curr */
	/* ftrace_hot.c */
	struct tp_comm_slot comms[FT_COMM_CACHE];
	int64_t idle_track_plus1[FT_IDLE_CACHE]; /* machine 0 "cpuidle" tracks */
	/* ftrace_raw.c */
	struct hmap keys;             /* (event id << 16 | field id) -> key string id */
	struct tp_argset raw_args;    /* an event's args, reused from event to event */
	struct tp_payload_memo *memo; /* recent payloads -> their arg set; NULL until used */
	uint32_t names[FT_NAME_CACHE];
	/* atrace.c; NULL until the first async line */
	struct tp_atrace_async *atrace_async;
	/* wakesource.c */
	struct hmap wakelocks;        /* name string id -> active count */
	/* dma_heap.c, ion.c: live buffers spread over tracks */
	struct tp_buffer_pool dma_pool; /* dma_heap_stat, by inode */
	struct tp_buffer_pool ion_pool; /* ion_stat, by buffer_id */
	/* adreno.c */
	struct hmap adreno;           /* hashed keys -> values */
	/* syscall.c */
	int sys_arch;                 /* 0: unknown; else its table's index + 1 */
	uint32_t sys_names[SYSCALL_MAX]; /* syscall number -> slice name; 0: not interned yet */
	uint32_t sys_write, sys_rt_sigreturn; /* their names' string ids, once interned */
	struct hmap in_sys_write;     /* utid -> 1 while in a sys_write slice */
	/* kernel.c; NULL until the first suspend_resume */
	struct tp_kernel *kernel;
};

/* ftrace_hot.c: parses a decoded hot event. */
void tp_ftrace_hot_parse(struct tp_import *imp, const struct tp_event *ev,
			 const struct tp_ftrace_header *h, const struct tp_ftrace_hot *hot);

/* ftrace_raw.c */
struct pb_ft_event;
struct pz_field;
/* The generated description of FtraceEvent field @id, or NULL if unknown. */
const struct pb_ft_event *tp_ftrace_event_desc(uint32_t id);
/*
 * tp_ftrace_raw_append() - The ftrace_event row of an event (@event_id 0
 * for an unknown one, named @name), without its args. Return: the row, or
 * -1 on OOM.
 */
int64_t tp_ftrace_raw_append(struct tp_import *imp, const struct tp_event *ev, uint32_t event_id,
			     const char *name, int64_t utid, int64_t common_flags);
/* The ftrace_event row of event @d (NULL: unknown) with its @payload fields as args. */
void tp_ftrace_raw_event(struct tp_import *imp, const struct tp_event *ev,
			 const struct pb_ft_event *d, const struct pz_field *payload, int64_t utid,
			 int64_t common_flags);

/*
 * The args of a compact sched_switch's row @row: its prev_* as the CPU's
 * previous switch left them, then its own fields (Perfetto's order).
 */
void tp_ftrace_raw_compact_switch(struct tp_import *imp, int64_t row, uint32_t prev_comm,
				  int64_t prev_pid, int64_t prev_prio,
				  const struct tp_compact_switch *s);
/* The args of a compact sched_waking's row @row: comm, pid, prio, target_cpu. */
void tp_ftrace_raw_compact_waking(struct tp_import *imp, int64_t row,
				  const struct tp_compact_waking *w);

/* atrace.c */
/*
 * tp_ftrace_atrace() - One atrace line (B|pid|name, E|pid, C|pid|name|value,
 * I, S, F, G, H, N forms) written by thread @tid at @ev's time.
 */
void tp_ftrace_atrace(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
		      const char *buf, size_t len);
/* Frees the atrace async state (NULL-safe). */
void tp_atrace_async_fini(struct tp_import *imp);

/* One kind of event each, called by ftrace.c in time order. */
/* sched_cpu_util_cfs: per-CPU Util, Cap and Nr Running counters (cpu_util.c). */
void tp_ftrace_cpu_util_cfs(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			    size_t len);
/* wakeup_source_activate/deactivate: "Wakelock(<name>)" slices (wakesource.c). */
void tp_wakesource(struct tp_import *imp, const struct tp_event *ev, bool activate,
		   const uint8_t *data, size_t len);
/* A sched_switch's comms name its threads, next first (ftrace.c). */
void tp_ftrace_name_switch(struct tp_import *imp, uint32_t machine, int64_t prev,
			   uint32_t prev_comm, int64_t next, uint32_t next_comm);
/* The display drivers' marker tracepoints ftrace_mark.c reads. */
enum tp_mark_kind { TP_MARK_MDSS, TP_MARK_SDE, TP_MARK_DPU, TP_MARK_G2D };
/* mdss, sde, dpu and g2d tracing_mark_write as atrace lines (ftrace_mark.c). */
void tp_ftrace_mark(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
		    enum tp_mark_kind kind, const uint8_t *data, size_t len);
/*
 * thermal_exynos_acpm_bulk (@bulk, at its own timestamp field) and
 * _high_overhead: per-zone temperature and cooling counters
 * (thermal_exynos.c).
 */
void tp_thermal_exynos(struct tp_import *imp, const struct tp_event *ev, bool bulk,
		       const uint8_t *data, size_t len);
/* ufshcd_command: the busy-slot counter and per-tag command slices (ufs.c). */
void tp_ufshcd_command(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
		       size_t len);
/* dma_heap_stat: heap counters and per-buffer slices (dma_heap.c). */
void tp_dma_heap_stat(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
		      const uint8_t *data, size_t len);
/*
 * tp_buffer_slice() - Buffer @key of @pool allocated (@len > 0: an
 * "<len/1024> kB" slice begins) or freed (the slice ends) on a track of
 * Perfetto's @type named @name, as many tracks as buffers overlap (dma_heap.c).
 */
void tp_buffer_slice(struct tp_import *imp, const struct tp_event *ev,
		     struct tp_buffer_pool *pool, const char *type, const char *name,
		     uint64_t key, int64_t len);
/* ion_heap_grow/ion_heap_shrink (@grow) and ion_stat: ion counters and slices (ion.c). */
void tp_ion_heap_change(struct tp_import *imp, const struct tp_event *ev, int64_t tid, bool grow,
			const uint8_t *data, size_t len);
void tp_ion_stat(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
		 const uint8_t *data, size_t len);
/* kgsl_adreno_cmdbatch_{queued,sync,retired} (@event_id): GPU slices (adreno.c). */
void tp_adreno_cmdbatch(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
			uint32_t event_id, const uint8_t *data, size_t len);

/* syscall.c: sys_enter/sys_exit of thread @tid. */
void tp_syscall_enter(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
		      const uint8_t *data, size_t len);
void tp_syscall_exit(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
		     const uint8_t *data, size_t len);
/* Thread @tid writes a trace_marker line: its open sys_write ends here. */
void tp_syscall_marker_write(struct tp_import *imp, const struct tp_event *ev, int64_t tid);

/* kernel.c */
/* suspend_resume of thread @tid: "Suspend/Resume Latency" slices. */
void tp_suspend_resume(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
		       const uint8_t *data, size_t len);
/* oom mark_victim: a "mem.oom_kill" instant on the victim's thread. */
/*
 * tp_block_io() - block_io_start (@start) or block_io_done: a "block_io"
 * slice on the device's block_io track, with its sector (kernel.c).
 */
void tp_block_io(struct tp_import *imp, const struct tp_event *ev, bool start,
		 const uint8_t *data, size_t len);
/* CMA allocation events as mm_cma_alloc slices (kernel.c). */
void tp_cma_event(struct tp_import *imp, const struct tp_event *ev, int64_t tid, uint32_t event_id,
		  const uint8_t *data, size_t len);
/* f2fs_iostat (@latency false) and f2fs_iostat_latency counters (kernel.c). */
void tp_f2fs_iostat(struct tp_import *imp, const struct tp_event *ev, bool latency,
		    const uint8_t *data, size_t len);
void tp_oom_mark_victim(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			size_t len);
/* kprobe_event of thread @tid: a slice begin, end or instant. */
void tp_kprobe(struct tp_import *imp, const struct tp_event *ev, int64_t tid, const uint8_t *data,
	       size_t len);
/* workqueue_execute_start/end of thread @tid: "workqueue" slices. */
void tp_workqueue_start(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
			uint64_t function);
void tp_workqueue_end(struct tp_import *imp, const struct tp_event *ev, int64_t tid);
/* signal_generate (@tid: the target) or signal_deliver (@tid: the event's). */
void tp_signal(struct tp_import *imp, const struct tp_event *ev, int64_t tid, bool generate,
	       int64_t sig);
/* irq.c: irq_handler_entry/exit, softirq_entry/exit (@event_id) on @ev's CPU. */
void tp_irq_event(struct tp_import *imp, const struct tp_event *ev, uint32_t event_id,
		  const uint8_t *data, size_t len);
/* Frees the kernel.c state (NULL-safe). */
void tp_kernel_fini(struct tp_import *imp);

#endif
