// SPDX-License-Identifier: Apache-2.0
/*
 * ftrace_categories.c - the category table (see ftrace_categories.h). The
 * sets follow what each word means to someone reading a scheduler or I/O
 * problem, using the tracepoints Linux has had for years.
 */
#include "probes/ftrace_categories.h"

#include <string.h>

static const char *const k_sched[] = {
	"sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup",
	"sched/sched_wakeup_new", "sched/sched_process_fork", "sched/sched_process_exec",
	"sched/sched_process_exit", "sched/sched_process_free", "sched/sched_process_hang",
	"sched/sched_process_wait", "sched/sched_migrate_task", "sched/sched_blocked_reason",
	"task/task_newtask", "task/task_rename", "oom/oom_score_adj_update", NULL,
};
static const char *const k_freq[] = {
	"power/cpu_frequency", "power/cpu_frequency_limits", "power/suspend_resume",
	"power/clock_set_rate", "power/clock_enable", "power/clock_disable",
	"clk/clk_set_rate", "clk/clk_enable", "clk/clk_disable",
	"cpuhp/cpuhp_enter", "cpuhp/cpuhp_exit", NULL,
};
static const char *const k_idle[] = {"power/cpu_idle", NULL};
static const char *const k_irq[] = {
	"irq/irq_handler_entry", "irq/irq_handler_exit", "irq/softirq_entry",
	"irq/softirq_exit", "irq/softirq_raise", "ipi/*", NULL,
};
static const char *const k_irqoff[] = {"preemptirq/irq_enable", "preemptirq/irq_disable", NULL};
static const char *const k_preemptoff[] = {
	"preemptirq/preempt_enable", "preemptirq/preempt_disable", NULL,
};
static const char *const k_disk[] = {
	"block/block_rq_insert", "block/block_rq_issue", "block/block_rq_complete",
	"block/block_bio_queue", "block/block_bio_complete",
	"ext4/ext4_sync_file_enter", "ext4/ext4_sync_file_exit",
	"ext4/ext4_da_write_begin", "ext4/ext4_da_write_end", NULL,
};
static const char *const k_workq[] = {"workqueue/*", NULL};
static const char *const k_memreclaim[] = {
	"vmscan/mm_vmscan_direct_reclaim_begin", "vmscan/mm_vmscan_direct_reclaim_end",
	"vmscan/mm_vmscan_kswapd_wake", "vmscan/mm_vmscan_kswapd_sleep", NULL,
};
static const char *const k_mm[] = {
	"kmem/rss_stat", "kmem/mm_page_alloc", "kmem/mm_page_free", "kmem/kmalloc",
	"kmem/kfree", "vmscan/mm_vmscan_direct_reclaim_begin",
	"vmscan/mm_vmscan_direct_reclaim_end", "oom/oom_score_adj_update", NULL,
};
static const char *const k_syscalls[] = {"raw_syscalls/sys_enter", "raw_syscalls/sys_exit", NULL};
static const char *const k_pagecache[] = {"filemap/*", NULL};
static const char *const k_sync[] = {"dma_fence/*", NULL};
static const char *const k_thermal[] = {"thermal/*", NULL};
static const char *const k_regulators[] = {"regulator/*", NULL};
static const char *const k_i2c[] = {"i2c/*", NULL};
static const char *const k_signal[] = {"signal/signal_generate", "signal/signal_deliver", NULL};

const struct ftrace_category ftrace_categories[] = {
	{"disk", "block I/O requests and file syncs", k_disk},
	{"freq", "CPU frequency, clocks, suspend, CPU hotplug", k_freq},
	{"i2c", "I2C transfers", k_i2c},
	{"idle", "CPU idle states", k_idle},
	{"irq", "hard and soft interrupts, IPIs", k_irq},
	{"irqoff", "interrupts disabled (needs CONFIG_PREEMPTIRQ_TRACEPOINTS)", k_irqoff},
	{"memreclaim", "direct reclaim and kswapd", k_memreclaim},
	{"mm", "page and slab allocations, RSS changes, reclaim", k_mm},
	{"pagecache", "page cache additions and removals", k_pagecache},
	{"preemptoff", "preemption disabled (needs CONFIG_PREEMPTIRQ_TRACEPOINTS)", k_preemptoff},
	{"regulators", "voltage regulators", k_regulators},
	{"sched", "context switches, wakeups, forks, exits, renames", k_sched},
	{"signal", "signals generated and delivered", k_signal},
	{"sync", "DMA fences", k_sync},
	{"syscalls", "every system call entry and exit", k_syscalls},
	{"thermal", "thermal zones and cooling devices", k_thermal},
	{"workq", "workqueue items", k_workq},
	{NULL, NULL, NULL},
};

const struct ftrace_category *ftrace_category_find(const char *name)
{
	const struct ftrace_category *c;

	for (c = ftrace_categories; c->name; c++) {
		if (strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}

void ftrace_categories_print(FILE *f)
{
	const struct ftrace_category *c;
	size_t i;

	for (c = ftrace_categories; c->name; c++) {
		fprintf(f, "  %-11s %s:", c->name, c->description);
		for (i = 0; c->events[i]; i++)
			fprintf(f, " %s", c->events[i]);
		fputc('\n', f);
	}
}
