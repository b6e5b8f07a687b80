// SPDX-License-Identifier: Apache-2.0
/*
 * perf_config.c - PerfEventConfig -> perf_event_attrs, scope and buffer
 * sizes (see perf_config.h). Defaults and refusals follow Perfetto's
 * traced_perf: 10 Hz cpu-clock, 256-page rings read every 100 ms, samples
 * timed with CLOCK_MONOTONIC_RAW unless the timebase names a clock.
 */
#include "perf/perf_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/compiler.h"
#include "base/file.h"

typedef Perfetto__Protos__PerfEventConfig pb_config;
typedef Perfetto__Protos__PerfEvents__Tracepoint pb_tracepoint;
typedef Perfetto__Protos__PerfEvents__RawEvent pb_raw;

/* BuiltinClock values (protos/common/builtin_clock.proto). */
enum { BUILTIN_REALTIME = 1, BUILTIN_MONOTONIC = 3, BUILTIN_MONOTONIC_RAW = 5, BUILTIN_BOOTTIME = 6 };

/* User stack bytes per callstack sample (traced_perf --stack-kb). */
static uint32_t g_stack_user_bytes = PERF_STACK_USER_BYTES;

int perf_config_set_stack_user_bytes(uint32_t bytes)
{
	if (bytes < 4096 || bytes > PERF_STACK_USER_BYTES)
		return -EINVAL;
	g_stack_user_bytes = bytes & ~255u;
	return 0;
}

static const struct {
	uint32_t type;
	uint64_t config;
	bool known;
} k_counters[] = {
	[1] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, true},
	[2] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true},
	[3] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true},
	[4] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true},
	[5] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, true},
	[6] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, true},
	[7] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, true},
	[8] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, true},
	[9] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, true},
	[10] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true},
	[11] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, true},
	[12] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, true},
	[13] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, true},
	[14] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, true},
	[15] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, true},
	[16] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, true},
	[17] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, true},
	[18] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, true},
	[19] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, true},
	[20] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, true},
};

static void copy_str(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

const char *perf_tracefs_find(void)
{
	static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	char p[64];
	size_t i;

	/* Looked up per config, not once at start: tracefs may be mounted
	 * after the daemon started (traced_probes mounts it when it is not). */
	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(p, sizeof(p), "%s/events", roots[i]);
		if (access(p, F_OK) == 0)
			return roots[i];
	}
	if (mount("nodev", roots[0], "tracefs", 0, NULL) == 0) {
		snprintf(p, sizeof(p), "%s/events", roots[0]);
		if (access(p, F_OK) == 0)
			return roots[0];
	}
	return roots[0];
}

int perf_tracepoint_id(const char *tracefs, const char *group_and_name, uint32_t *out_id)
{
	char group[PERF_NAME_BYTES], path[512];
	const char *sep = strpbrk(group_and_name, ":/");
	struct buf b;
	unsigned long id;
	char *end;
	int rc;

	if (!sep || sep == group_and_name || !sep[1] ||
	    (size_t)(sep - group_and_name) >= sizeof(group) || strstr(group_and_name, ".."))
		return -EINVAL;
	memcpy(group, group_and_name, (size_t)(sep - group_and_name));
	group[sep - group_and_name] = '\0';
	if (strchr(sep + 1, '/'))
		return -EINVAL;
	rc = snprintf(path, sizeof(path), "%s/events/%s/%s/id", tracefs, group, sep + 1);
	if (rc < 0 || (size_t)rc >= sizeof(path))
		return -ENAMETOOLONG;
	buf_init(&b);
	rc = file_read_all(path, &b, 64);
	if (rc < 0) {
		buf_fini(&b);
		return -ENOENT;
	}
	buf_append(&b, "", 1);
	id = strtoul((const char *)b.data, &end, 10);
	rc = (end == (const char *)b.data || id == 0 || id > UINT32_MAX) ? -ENOENT : 0;
	buf_fini(&b);
	if (rc == 0)
		*out_id = (uint32_t)id;
	return rc;
}

static void apply_modifiers(struct perf_event_desc *d, const int *mods, size_t n)
{
	bool u = false, k = false, h = false, any = false;
	size_t i;

	for (i = 0; i < n; i++) {
		switch (mods[i]) {
		case 1:
			u = any = true;
			break;
		case 2:
			k = any = true;
			break;
		case 3:
			h = any = true;
			break;
		default:
			break;
		}
	}
	if (any) {
		d->exclude_user = !u;
		d->exclude_kernel = !k;
		d->exclude_hv = !h;
	}
}

/* One event from its oneof; @kind 0 (unset) means cpu-clock. */
static int make_event(int kind, uint32_t counter, const pb_tracepoint *tp, const pb_raw *raw,
		      const char *name, const char *tracefs, struct perf_event_desc *d, char *err,
		      size_t err_len)
{
	int rc;

	memset(d, 0, sizeof(*d));
	copy_str(d->name, sizeof(d->name), name);
	switch (kind) {
	case 0:
		counter = 1;
		/* fall through */
	case 1:
		if (counter >= PFC_ARRAY_SIZE(k_counters) || !k_counters[counter].known) {
			snprintf(err, err_len, "unknown perf counter %u", counter);
			return -EINVAL;
		}
		d->kind = PERF_EV_COUNTER;
		d->counter = counter;
		d->type = k_counters[counter].type;
		d->config = k_counters[counter].config;
		return 0;
	case 2: {
		uint32_t id;

		if (!tp || !tp->name) {
			snprintf(err, err_len, "tracepoint without a name");
			return -EINVAL;
		}
		if (!tracefs)
			tracefs = perf_tracefs_find();
		rc = perf_tracepoint_id(tracefs, tp->name, &id);
		if (rc == -EINVAL) {
			snprintf(err, err_len,
				 "tracepoint \"%s\": not a \"group:name\" (or group/name)", tp->name);
			return rc;
		}
		if (rc < 0) {
			snprintf(err, err_len, "tracepoint \"%s\" not found under %s/events",
				 tp->name, tracefs);
			return -ENOENT;
		}
		if (strlen(tp->name) >= sizeof(d->tp_name) ||
		    (tp->filter && strlen(tp->filter) >= sizeof(d->tp_filter))) {
			snprintf(err, err_len, "tracepoint \"%.64s\": name or filter too long",
				 tp->name);
			return -EINVAL;
		}
		d->kind = PERF_EV_TRACEPOINT;
		copy_str(d->tp_name, sizeof(d->tp_name), tp->name);
		copy_str(d->tp_filter, sizeof(d->tp_filter), tp->filter);
		d->type = PERF_TYPE_TRACEPOINT;
		d->config = id;
		return 0;
	}
	case 3:
		if (!raw || (raw->pmu_name && raw->pmu_name[0])) {
			snprintf(err, err_len, "raw_event needs a type (pmu_name is not supported)");
			return -EINVAL;
		}
		d->kind = PERF_EV_RAW;
		d->type = raw->type;
		d->config = raw->config;
		d->config1 = raw->config1;
		d->config2 = raw->config2;
		return 0;
	}
	snprintf(err, err_len, "unknown event kind");
	return -EINVAL;
}

static int clock_of(int pb_clock, uint32_t *out_builtin)
{
	switch (pb_clock) {
	case 1:
		*out_builtin = BUILTIN_REALTIME;
		return CLOCK_REALTIME;
	case 2:
		*out_builtin = BUILTIN_MONOTONIC;
		return CLOCK_MONOTONIC;
	case 4:
		*out_builtin = BUILTIN_BOOTTIME;
		return CLOCK_BOOTTIME;
	default:
		/* Monotonic works with every event (BOOTTIME not in NMI context). */
		*out_builtin = BUILTIN_MONOTONIC_RAW;
		return CLOCK_MONOTONIC_RAW;
	}
}

static int copy_strs(char **dst, size_t *n_dst, char *const *src, size_t n, char *err,
		     size_t err_len)
{
	size_t i;

	if (n > PERF_MAX_SCOPE_ENTRIES) {
		snprintf(err, err_len, "more than %u scope entries", PERF_MAX_SCOPE_ENTRIES);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		dst[i] = strdup(src[i] ? src[i] : "");
		if (!dst[i])
			return -ENOMEM;
		*n_dst = i + 1;
	}
	return 0;
}

static int copy_pids(int32_t *dst, size_t *n_dst, const int32_t *src, size_t n, char *err,
		     size_t err_len)
{
	if (n > PERF_MAX_SCOPE_ENTRIES) {
		snprintf(err, err_len, "more than %u scope entries", PERF_MAX_SCOPE_ENTRIES);
		return -EINVAL;
	}
	if (n)
		memcpy(dst, src, n * sizeof(*src));
	*n_dst = n;
	return 0;
}

static int parse_scope(const pb_config *pb, struct perf_config *c, char *err, size_t err_len)
{
	const Perfetto__Protos__PerfEventConfig__Scope *s =
		pb->callstack_sampling ? pb->callstack_sampling->scope : NULL;
	struct perf_scope *o = &c->scope;
	int rc;

	if (s) {
		rc = copy_pids(o->pids, &o->n_pids, s->target_pid, s->n_target_pid, err, err_len);
		if (!rc)
			rc = copy_pids(o->exclude_pids, &o->n_exclude_pids, s->exclude_pid,
				       s->n_exclude_pid, err, err_len);
		if (!rc)
			rc = copy_strs(o->cmdlines, &o->n_cmdlines, s->target_cmdline,
				       s->n_target_cmdline, err, err_len);
		if (!rc)
			rc = copy_strs(o->exclude_cmdlines, &o->n_exclude_cmdlines,
				       s->exclude_cmdline, s->n_exclude_cmdline, err, err_len);
		if (!rc && s->process_shard_count > 1) {
			o->shard_count = s->process_shard_count;
			o->chosen_shard = (uint32_t)(((uint64_t)getpid() * 2654435761u +
						      (uint64_t)time(NULL)) % o->shard_count);
		}
	} else {
		rc = copy_pids(o->pids, &o->n_pids, pb->target_pid, pb->n_target_pid, err,
			       err_len);
		if (!rc)
			rc = copy_pids(o->exclude_pids, &o->n_exclude_pids, pb->exclude_pid,
				       pb->n_exclude_pid, err, err_len);
		if (!rc)
			rc = copy_strs(o->cmdlines, &o->n_cmdlines, pb->target_cmdline,
				       pb->n_target_cmdline, err, err_len);
		if (!rc)
			rc = copy_strs(o->exclude_cmdlines, &o->n_exclude_cmdlines,
				       pb->exclude_cmdline, pb->n_exclude_cmdline, err, err_len);
	}
	if (rc == -ENOMEM)
		snprintf(err, err_len, "out of memory");
	c->has_scope = o->n_pids || o->n_exclude_pids || o->n_cmdlines || o->n_exclude_cmdlines ||
		       o->shard_count;
	return rc;
}

int perf_config_parse(const pb_config *pb, const char *tracefs, struct perf_config *out,
		      char *err, size_t err_len)
{
	static const Perfetto__Protos__PerfEventConfig k_empty =
		PERFETTO__PROTOS__PERF_EVENT_CONFIG__INIT;
	const Perfetto__Protos__PerfEvents__Timebase *tb;
	struct perf_config *c;
	size_t i;
	int rc;

	if (!pb)
		pb = &k_empty;
	tb = pb->timebase;
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	if (tb) {
		rc = make_event(tb->event_case == PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__EVENT_COUNTER
					? 1
				: tb->event_case ==
						PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__EVENT_TRACEPOINT
					? 2
				: tb->event_case ==
						PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__EVENT_RAW_EVENT
					? 3
					: 0,
				(uint32_t)tb->counter, tb->tracepoint, tb->raw_event, tb->name, tracefs,
				&c->timebase, err, err_len);
		if (rc < 0)
			goto fail;
		apply_modifiers(&c->timebase, (const int *)tb->modifiers, tb->n_modifiers);
	} else {
		make_event(0, 0, NULL, NULL, NULL, tracefs, &c->timebase, err, err_len);
	}
	if (pb->n_followers > PERF_MAX_FOLLOWERS) {
		snprintf(err, err_len, "more than %u followers", PERF_MAX_FOLLOWERS);
		rc = -EINVAL;
		goto fail;
	}
	for (i = 0; i < pb->n_followers; i++) {
		const Perfetto__Protos__FollowerEvent *f = pb->followers[i];
		int kind = f->event_case == PERFETTO__PROTOS__FOLLOWER_EVENT__EVENT_COUNTER ? 1
			   : f->event_case == PERFETTO__PROTOS__FOLLOWER_EVENT__EVENT_TRACEPOINT ? 2
			   : f->event_case == PERFETTO__PROTOS__FOLLOWER_EVENT__EVENT_RAW_EVENT ? 3
												  : -1;

		if (kind < 0) {
			snprintf(err, err_len, "follower %zu names no event", i);
			rc = -EINVAL;
			goto fail;
		}
		rc = make_event(kind, (uint32_t)f->counter, f->tracepoint, f->raw_event, f->name,
				tracefs, &c->followers[i], err, err_len);
		if (rc < 0)
			goto fail;
		apply_modifiers(&c->followers[i], (const int *)f->modifiers, f->n_modifiers);
		c->n_followers = i + 1;
	}

	if (tb && tb->interval_case == PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INTERVAL_PERIOD &&
	    tb->period)
		c->period = tb->period;
	else if (tb && tb->interval_case ==
			       PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INTERVAL_FREQUENCY &&
		 tb->frequency)
		c->frequency = tb->frequency;
	else if (pb->sampling_frequency)
		c->frequency = pb->sampling_frequency;
	else
		c->frequency = PERF_DEFAULT_FREQUENCY_HZ;
	c->clockid = clock_of(tb && tb->has_timestamp_clock ? (int)tb->timestamp_clock : 0,
			      &c->builtin_clock);

	c->unwind = PERF_UNWIND_SKIP;
	if (pb->callstack_sampling || pb->all_cpus) {
		int m = pb->callstack_sampling ? (int)pb->callstack_sampling->user_frames : 0;

		if (m < 0 || m > PERF_UNWIND_KERNEL_FRAME_POINTER) {
			snprintf(err, err_len, "unknown callstack_sampling.user_frames %d", m);
			rc = -EINVAL;
			goto fail;
		}
		/* Unset means DWARF, as upstream: what users almost always want. */
		c->unwind = m == 0 ? PERF_UNWIND_DWARF : (enum perf_unwind_mode)m;
		c->kernel_frames = (pb->callstack_sampling && pb->callstack_sampling->kernel_frames) ||
				   pb->kernel_frames;
		rc = parse_scope(pb, c, err, err_len);
		if (rc < 0)
			goto fail;
	}

	c->ring_pages = pb->ring_buffer_pages ? pb->ring_buffer_pages : PERF_DEFAULT_RING_PAGES;
	c->ring_pages_auto = !pb->ring_buffer_pages;
	if ((c->ring_pages & (c->ring_pages - 1)) || c->ring_pages > PERF_MAX_RING_PAGES) {
		snprintf(err, err_len, "ring_buffer_pages %u: must be a power of two up to %u",
			 c->ring_pages, PERF_MAX_RING_PAGES);
		rc = -EINVAL;
		goto fail;
	}
	c->read_period_ms = pb->ring_buffer_read_period_ms ? pb->ring_buffer_read_period_ms
							   : PERF_DEFAULT_READ_PERIOD_MS;
	if (c->frequency)
		c->samples_per_tick_limit = 2 * (1 + c->frequency * c->read_period_ms / 1000);
	else
		c->samples_per_tick_limit = (uint64_t)c->ring_pages * 4096 / 8;
	c->max_enqueued_footprint_bytes = pb->max_enqueued_footprint_kb * 1024;
	c->max_daemon_memory_kb = pb->max_daemon_memory_kb;
	c->stack_user_bytes = g_stack_user_bytes;
	c->ignore_open_failure = pb->ignore_open_failure;
	if (pb->n_target_cpu > PERF_MAX_SCOPE_ENTRIES) {
		snprintf(err, err_len, "more than %u target_cpu entries", PERF_MAX_SCOPE_ENTRIES);
		rc = -EINVAL;
		goto fail;
	}
	for (i = 0; i < pb->n_target_cpu; i++)
		c->target_cpus[i] = pb->target_cpu[i];
	c->n_target_cpus = pb->n_target_cpu;
	*out = *c;
	free(c);
	return 0;
fail:
	perf_config_fini(c);
	free(c);
	return rc;
}

void perf_config_fini(struct perf_config *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->scope.n_cmdlines; i++)
		free(c->scope.cmdlines[i]);
	for (i = 0; i < c->scope.n_exclude_cmdlines; i++)
		free(c->scope.exclude_cmdlines[i]);
	c->scope.n_cmdlines = c->scope.n_exclude_cmdlines = 0;
}

static bool copies_user_stacks(const struct perf_config *c)
{
	return c->unwind == PERF_UNWIND_DWARF || c->unwind == PERF_UNWIND_FRAME_POINTER;
}

/* A sample's ring bytes at most: header, ids, time, counts and registers
 * (~512 B), a callchain of the kernel's default depth (127 entries), and
 * the stack as reserved with its size word and dyn_size. */
static uint64_t sample_bytes_at_most(const struct perf_config *c)
{
	return 512 + 1024 + (copies_user_stacks(c) ? (uint64_t)c->stack_user_bytes + 16 : 0);
}

uint32_t perf_config_ring_ms(const struct perf_config *c, uint32_t pages)
{
	uint64_t ms;

	if (!c->frequency)
		return 0;
	ms = (uint64_t)pages * 4096 * 1000 / (sample_bytes_at_most(c) * c->frequency);
	return ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

uint32_t perf_config_ring_pages(const struct perf_config *c, size_t n_rings)
{
	uint64_t want, cap;
	uint32_t pages = c->ring_pages;

	if (!c->ring_pages_auto || !c->frequency || !copies_user_stacks(c) ||
	    !perf_config_regs_mask())
		return pages;
	want = c->frequency * sample_bytes_at_most(c) * PERF_AUTO_RING_MS / 1000;
	cap = PERF_AUTO_RING_TOTAL_BYTES / (n_rings ? n_rings : 1);
	if (cap > (uint64_t)PERF_AUTO_RING_MAX_PAGES * 4096)
		cap = (uint64_t)PERF_AUTO_RING_MAX_PAGES * 4096;
	while ((uint64_t)pages * 4096 < want && (uint64_t)pages * 2 * 4096 <= cap)
		pages *= 2;
	return pages;
}

uint64_t perf_config_regs_mask(void)
{
#if defined(__x86_64__)
	/* AX..IP (0-8) and R8..R15 (16-23): no flags or segment registers. */
	return ((1ull << 9) - 1) | (0xffull << 16);
#else
	return 0;
#endif
}

static void event_attr(const struct perf_event_desc *d, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = d->type;
	a->config = d->config;
	a->config1 = d->config1;
	a->config2 = d->config2;
	a->exclude_user = d->exclude_user;
	a->exclude_kernel = d->exclude_kernel;
	a->exclude_hv = d->exclude_hv;
}

void perf_config_leader_attr(const struct perf_config *c, struct perf_event_attr *a)
{
	event_attr(&c->timebase, a);
	a->disabled = 1;
	if (c->frequency) {
		a->freq = 1;
		a->sample_freq = c->frequency;
	} else {
		a->sample_period = c->period;
	}
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_READ;
	a->use_clockid = 1;
	a->clockid = c->clockid;
	/* EXIT records tell the unwinder when a process's state can go. */
	a->task = 1;
	/* COMM records of an execve: the process is another program, so a
	 * scope decision (by cmdline) and stack tops made before it are stale. */
	a->comm = 1;
	a->comm_exec = 1;
	if ((c->unwind == PERF_UNWIND_DWARF || c->unwind == PERF_UNWIND_FRAME_POINTER) &&
	    perf_config_regs_mask()) {
		a->sample_type |= PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_USER;
		a->sample_stack_user = c->stack_user_bytes;
		a->sample_regs_user = perf_config_regs_mask();
		/* Executable mappings as they happen (MMAP2 records): a process
		 * that exits before its samples are read still unwinds. */
		a->mmap = 1;
		a->mmap2 = 1;
	}
	if (c->kernel_frames || c->unwind == PERF_UNWIND_KERNEL_FRAME_POINTER) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		a->exclude_callchain_kernel = !c->kernel_frames;
		a->exclude_callchain_user = c->unwind != PERF_UNWIND_KERNEL_FRAME_POINTER;
	}
	if (c->n_followers)
		a->read_format = PERF_FORMAT_GROUP;
}

void perf_config_follower_attr(const struct perf_config *c, size_t i, struct perf_event_attr *a)
{
	struct perf_event_attr leader;

	perf_config_leader_attr(c, &leader);
	event_attr(&c->followers[i], a);
	/* Followers never sample (period 0): only the leader's records carry
	 * the group's values. The leader's stack and register bits without
	 * their sizes and masks make perf_event_open fail with EINVAL. */
	a->sample_type = leader.sample_type &
			 (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_READ);
	a->use_clockid = 1;
	a->clockid = c->clockid;
}
