// SPDX-License-Identifier: Apache-2.0
/*
 * syscall.c - raw_syscalls sys_enter/sys_exit as slices on the thread's
 * track, as Perfetto's syscall tracker makes them: named by the syscall
 * number in the table of the trace's architecture (SystemInfo's
 * utsname.machine: x86_64, i686, aarch64), "sys_<n>" for a number the
 * table has no name for (every number while the architecture is unknown),
 * and nothing at all for numbers past SYSCALL_MAX. No category; sys_enter
 * adds args[i] (unsigned), sys_exit ret. sys_rt_sigreturn never returns:
 * an instant. A sys_write still open when its thread writes a trace_marker
 * line is ended there (counted in truncated_sys_write_duration), so that
 * atrace slices nest; its own exit is then dropped.
 */
#include <stdio.h>
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/ftrace/ftrace_int.h"
#include "trace_processor/import/ftrace/syscall_table.h"

struct tp_syscall_arch_table {
	const char *const *names;
	size_t n;
};

static const struct {
	const char *machine; /* utsname.machine */
	const char *const *names;
	size_t n;
} archs[] = {
	{"x86_64", syscalls_x86_64, SYSCALLS_X86_64_COUNT},
	{"i686", syscalls_x86, SYSCALLS_X86_COUNT},
	{"aarch64", syscalls_arm64, SYSCALLS_ARM64_COUNT},
};

void tp_ftrace_system_info(struct tp_import *imp, const uint8_t *data, size_t len)
{
	struct tp_ftrace *ft = imp->ftrace;
	struct pz_field s[PB_SYSTEM_INFO__UTSNAME + 1], u[PB_UTSNAME__MACHINE + 1];
	size_t i;

	if (pz_decode_table(data, len, s, PB_SYSTEM_INFO__UTSNAME + 1) != PZ_OK ||
	    s[PB_SYSTEM_INFO__UTSNAME].wire_type != PZ_WIRE_LEN ||
	    pz_decode_table(s[PB_SYSTEM_INFO__UTSNAME].data, s[PB_SYSTEM_INFO__UTSNAME].size, u,
			    PB_UTSNAME__MACHINE + 1) != PZ_OK ||
	    u[PB_UTSNAME__MACHINE].wire_type != PZ_WIRE_LEN)
		return;
	/* An unknown machine keeps the table there was (Perfetto's rule). */
	for (i = 0; i < sizeof(archs) / sizeof(archs[0]); i++) {
		if (strlen(archs[i].machine) != u[PB_UTSNAME__MACHINE].size ||
		    memcmp(archs[i].machine, u[PB_UTSNAME__MACHINE].data,
			   u[PB_UTSNAME__MACHINE].size) != 0)
			continue;
		ft->sys_arch = (int)i + 1;
		memset(ft->sys_names, 0, sizeof(ft->sys_names));
		ft->sys_write = 0;
		ft->sys_rt_sigreturn = 0;
		return;
	}
}

/* The slice name of syscall @num (a string id), or 0 for none. */
static uint32_t syscall_name(struct tp_import *imp, int64_t num)
{
	struct tp_ftrace *ft = imp->ftrace;
	const char *name = NULL;
	char buf[32];
	uint32_t id;

	if (num < 0 || num >= SYSCALL_MAX)
		return 0;
	if (ft->sys_names[num])
		return ft->sys_names[num];
	if (ft->sys_arch) {
		size_t a = (size_t)ft->sys_arch - 1;

		if ((size_t)num < archs[a].n)
			name = archs[a].names[num];
	}
	if (!name) {
		snprintf(buf, sizeof(buf), "sys_%lld", (long long)num);
		name = buf;
	}
	id = tp_str_intern_c(&imp->db->strings, name);
	ft->sys_names[num] = id;
	if (name != buf && !strcmp(name, "sys_write"))
		ft->sys_write = id;
	else if (name != buf && !strcmp(name, "sys_rt_sigreturn"))
		ft->sys_rt_sigreturn = id;
	return id;
}

void tp_syscall_enter(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
		      const uint8_t *data, size_t len)
{
	struct tp_ftrace *ft = imp->ftrace;
	struct pz_reader r;
	struct pz_field f;
	int64_t num = 0, utid, track, row;
	uint32_t name, n_args = 0;
	struct tp_argset *b;
	bool has_args = false;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_SYS_ENTER_FTRACE_EVENT__ID && f.wire_type == PZ_WIRE_VARINT)
			num = (int64_t)(uint32_t)f.value;
		else if (f.id == PB_SYS_ENTER_FTRACE_EVENT__ARGS && f.wire_type == PZ_WIRE_VARINT)
			has_args = true;
	}
	name = syscall_name(imp, num);
	if (!name)
		return;
	utid = tp_proc_get_thread(imp, ev->machine, tid);
	if (utid < 0)
		return;
	track = tp_track_thread(imp, utid);
	if (track < 0)
		return;
	if (name == ft->sys_rt_sigreturn)
		row = tp_slice_scoped(imp, ev->ts, 0, track, 0, name);
	else
		row = tp_slice_begin(imp, ev->ts, track, 0, name);
	if (name == ft->sys_write)
		hmap_put(&ft->in_sys_write, (uint64_t)utid, 1);
	b = row >= 0 && has_args ? tp_slice_args(imp, track, (uint32_t)row) : NULL;
	if (!b)
		return;
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct tp_arg a = {.type = TP_ARG_UINT};
		char key[32];

		if (f.id != PB_SYS_ENTER_FTRACE_EVENT__ARGS || f.wire_type != PZ_WIRE_VARINT)
			continue;
		snprintf(key, sizeof(key), "args[%u]", n_args++);
		a.flat_key = tp_str_intern_c(&imp->db->strings, "args");
		a.key = tp_str_intern_c(&imp->db->strings, key);
		a.v.i = (int64_t)f.value;
		tp_argset_add(imp, b, &a);
	}
}

void tp_syscall_exit(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
		     const uint8_t *data, size_t len)
{
	struct tp_ftrace *ft = imp->ftrace;
	struct pz_field f[PB_SYS_EXIT_FTRACE_EVENT__RET + 1];
	int64_t utid, track, row;
	uint64_t open = 0;
	uint32_t name;
	struct tp_argset *b;

	if (pz_decode_table(data, len, f, PB_SYS_EXIT_FTRACE_EVENT__RET + 1) != PZ_OK)
		return;
	name = syscall_name(imp, f[PB_SYS_EXIT_FTRACE_EVENT__ID].id
					 ? (int64_t)(uint32_t)f[PB_SYS_EXIT_FTRACE_EVENT__ID].value
					 : 0);
	if (!name)
		return;
	utid = tp_proc_get_thread(imp, ev->machine, tid);
	if (utid < 0)
		return;
	if (name == ft->sys_write) {
		/* Begun before the trace, or already ended by a marker write. */
		if (!hmap_get(&ft->in_sys_write, (uint64_t)utid, &open) || !open)
			return;
		hmap_put(&ft->in_sys_write, (uint64_t)utid, 0);
	}
	track = tp_track_thread(imp, utid);
	if (track < 0)
		return;
	row = tp_slice_end_start(imp, ev->ts, track, 0, name);
	if (row < 0)
		return;
	b = f[PB_SYS_EXIT_FTRACE_EVENT__RET].id ? tp_slice_args(imp, track, (uint32_t)row) : NULL;
	if (b)
		tp_argset_int(imp, b, tp_str_intern_c(&imp->db->strings, "ret"),
			      (int64_t)f[PB_SYS_EXIT_FTRACE_EVENT__RET].value);
	tp_slice_end_done(imp, track, (uint32_t)row);
}

void tp_syscall_marker_write(struct tp_import *imp, const struct tp_event *ev, int64_t tid)
{
	struct tp_ftrace *ft = imp->ftrace;
	int64_t utid = tp_proc_find_thread(imp, ev->machine, tid), track;
	uint64_t open = 0;

	if (utid < 0 || !ft->sys_write || !hmap_get(&ft->in_sys_write, (uint64_t)utid, &open) ||
	    !open)
		return;
	hmap_put(&ft->in_sys_write, (uint64_t)utid, 0);
	tp_stat_add(imp, "truncated_sys_write_duration", -1, ev->machine, 1);
	track = tp_track_thread(imp, utid);
	if (track >= 0)
		tp_slice_end(imp, ev->ts, track, 0, ft->sys_write);
}
