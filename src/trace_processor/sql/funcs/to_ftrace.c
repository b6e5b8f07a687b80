/* SPDX-License-Identifier: Apache-2.0 */
/*
 * to_ftrace.c - the to_ftrace(id) SQL function: the ftrace_event row @id
 * as the line the kernel's trace file (systrace) shows for it, in
 * Perfetto's format:
 *
 *   "<comm padded to 16>-<tid padded to 5> (<tgid or ----->) [<cpu 3>]
 *    .... <secs>.<usecs 6>: <event>: <fields>"
 *
 * The fields come from the row's arg set: a few events have their own
 * layout (sched_switch, sched_wakeup, print, ...); any other prints each
 * arg as " key=value" in arg set order.
 */
#include "trace_processor/sql/funcs/funcs_int.h"

#include <inttypes.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/storage/storage.h"

/* A growing line; @oom is set once an append failed. */
struct line {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void put(struct line *l, const char *s, size_t n)
{
	if (l->oom)
		return;
	if (l->len + n + 1 > l->cap) {
		size_t cap = l->cap ? l->cap : 256;
		char *b;

		while (cap < l->len + n + 1)
			cap *= 2;
		b = realloc(l->buf, cap);
		if (!b) {
			l->oom = true;
			return;
		}
		l->buf = b;
		l->cap = cap;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
	l->buf[l->len] = '\0';
}

static void puts_(struct line *l, const char *s)
{
	put(l, s, strlen(s));
}

static void putf(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct line *l, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(l, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

enum vtype { V_NULL, V_INT, V_UINT, V_STR, V_REAL, V_BOOL, V_OTHER };

/* One arg of the event's set. */
struct arg {
	const char *key;
	enum vtype type;
	int64_t i;
	const char *s;
	double d;
};

struct event {
	const struct tp_db *db;
	const char *name;
	struct arg *args;
	size_t n_args;
	struct line *out;
};

static const struct arg *find(const struct event *e, const char *key)
{
	size_t i;

	for (i = 0; i < e->n_args; i++)
		if (!strcmp(e->args[i].key, key))
			return &e->args[i];
	return NULL;
}

/* A value as Perfetto writes it by default. */
static void value(struct line *l, const struct arg *a)
{
	switch (a->type) {
	case V_INT:
		putf(l, "%" PRId64, a->i);
		break;
	case V_UINT:
	case V_OTHER:
		putf(l, "%" PRIu64, (uint64_t)a->i);
		break;
	case V_STR:
		puts_(l, a->s ? a->s : "");
		break;
	case V_REAL:
		putf(l, "%.16g", a->d);
		break;
	case V_BOOL:
		puts_(l, a->i ? "true" : "false");
		break;
	case V_NULL:
		puts_(l, "[NULL]");
		break;
	}
}

/* A kernel function: a symbol as is, an address in hex. */
static void kernel_fn(struct line *l, const struct arg *a)
{
	if (a->type == V_STR)
		value(l, a);
	else
		putf(l, "%" PRIx64, (uint64_t)a->i);
}

static void hex(struct line *l, const struct arg *a)
{
	putf(l, "%" PRIx64, (uint64_t)a->i);
}

typedef void (*value_fn)(struct line *l, const struct arg *a);

/* " key=value" of field @field, shown as @key (NULL: the field's name). */
static void kv(const struct event *e, const char *field, const char *key, value_fn fn)
{
	const struct arg *a = find(e, field);

	if (!a)
		return;
	putf(e->out, " %s=", key ? key : a->key);
	(fn ? fn : value)(e->out, a);
}

/* The value of @field alone, if present. */
static void val(const struct event *e, const char *field, value_fn fn)
{
	const struct arg *a = find(e, field);

	if (a)
		(fn ? fn : value)(e->out, a);
}

/* A sched_switch prev_state as its letters joined by '|' ("R+" when preempted). */
static void task_state(struct line *l, const struct arg *a)
{
	static const char letters[] = "SDTtXZPI";
	uint16_t st = (uint16_t)a->i;
	bool first = true;
	int i;

	if (st == 0) {
		puts_(l, "R");
		return;
	}
	if (st & 0x100) {
		puts_(l, (st & 0xff) ? "?" : "R+");
		return;
	}
	if (st & ~0xffu) {
		puts_(l, "?");
		return;
	}
	for (i = 0; i < 8; i++) {
		if (!(st & (1u << i)))
			continue;
		if (!first)
			puts_(l, "|");
		put(l, &letters[i], 1);
		first = false;
	}
}

/* gfp_flags by flag names, as upstream prints them (gfp_flags.c). */
static void gfp_flags(const struct event *e, const struct arg *a)
{
	char buf[1024];

	tp_gfp_flags_str((uint64_t)a->i, buf, sizeof(buf));
	puts_(e->out, buf);
}

static void pad3(struct line *l, const struct arg *a)
{
	putf(l, "%03" PRId64, a->i);
}

static void print_buf(struct line *l, const struct arg *a)
{
	size_t n;

	if (a->type != V_STR || !a->s)
		return;
	n = strlen(a->s);
	if (n && a->s[n - 1] == '\n')
		n--;
	put(l, a->s, n);
}

static void u32(struct line *l, const struct arg *a)
{
	putf(l, "%" PRIu32, (uint32_t)a->i);
}

static void irq_ret(struct line *l, const struct arg *a)
{
	puts_(l, a->i ? "handled" : "unhandled");
}

static void softirq_action(struct line *l, const struct arg *a)
{
	static const char *const names[] = {
		"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "BLOCK_IOPOLL", "TASKLET", "SCHED",
		"HRTIMER", "RCU",
	};

	if ((uint64_t)a->i < sizeof(names) / sizeof(names[0]))
		puts_(l, names[a->i]);
	else
		putf(l, "%" PRIu64, (uint64_t)a->i);
}

static void mark_type(struct line *l, const struct arg *a)
{
	char c = (char)a->i;

	put(l, &c, 1);
}

static void begin_end(struct line *l, const struct arg *a)
{
	puts_(l, a->i ? "B" : "E");
}

/* The pipe-separated body of the *_tracing_mark_write events. */
static void marker(const struct event *e, const char *type, const char *name, value_fn type_fn,
		   bool with_value)
{
	val(e, type, type_fn);
	puts_(e->out, "|");
	val(e, "pid", NULL);
	puts_(e->out, "|");
	val(e, name, NULL);
	if (with_value) {
		puts_(e->out, "|");
		val(e, "value", NULL);
	}
}

static void fields(const struct event *e)
{
	const char *n = e->name;
	size_t i;

	if (!e->n_args)
		return;
	if (!strcmp(n, "sched_switch")) {
		kv(e, "prev_comm", NULL, NULL);
		kv(e, "prev_pid", NULL, NULL);
		kv(e, "prev_prio", NULL, NULL);
		kv(e, "prev_state", NULL, task_state);
		puts_(e->out, " ==>");
		kv(e, "next_comm", NULL, NULL);
		kv(e, "next_pid", NULL, NULL);
		kv(e, "next_prio", NULL, NULL);
	} else if (!strcmp(n, "sched_wakeup")) {
		kv(e, "comm", NULL, NULL);
		kv(e, "pid", NULL, NULL);
		kv(e, "prio", NULL, NULL);
		kv(e, "target_cpu", NULL, pad3);
	} else if (!strcmp(n, "clock_set_rate")) {
		puts_(e->out, " ");
		val(e, "name", NULL);
		kv(e, "state", NULL, NULL);
		kv(e, "cpu_id", NULL, NULL);
	} else if (!strcmp(n, "clk_set_rate")) {
		puts_(e->out, " ");
		val(e, "name", NULL);
		puts_(e->out, " ");
		val(e, "rate", NULL);
	} else if (!strcmp(n, "clock_enable") || !strcmp(n, "clock_disable")) {
		val(e, "name", NULL);
		kv(e, "state", NULL, NULL);
		kv(e, "cpu_id", NULL, NULL);
	} else if (!strcmp(n, "binder_transaction")) {
		puts_(e->out, " transaction=");
		val(e, "debug_id", u32);
		puts_(e->out, " dest_node=");
		val(e, "target_node", u32);
		puts_(e->out, " dest_proc=");
		val(e, "to_proc", NULL);
		puts_(e->out, " dest_thread=");
		val(e, "to_thread", NULL);
		puts_(e->out, " reply=");
		val(e, "reply", NULL);
		puts_(e->out, " flags=0x");
		val(e, "flags", hex);
		puts_(e->out, " code=0x");
		val(e, "code", hex);
	} else if (!strcmp(n, "binder_transaction_alloc_buf")) {
		puts_(e->out, " transaction=");
		val(e, "debug_id", u32);
		kv(e, "data_size", NULL, NULL);
		kv(e, "offsets_size", NULL, NULL);
	} else if (!strcmp(n, "binder_transaction_received")) {
		puts_(e->out, " transaction=");
		val(e, "debug_id", u32);
	} else if (!strcmp(n, "print")) {
		puts_(e->out, " ");
		val(e, "buf", print_buf);
	} else if (!strcmp(n, "sched_blocked_reason")) {
		kv(e, "pid", NULL, NULL);
		kv(e, "io_wait", "iowait", NULL);
		kv(e, "caller", NULL, kernel_fn);
	} else if (!strcmp(n, "workqueue_activate_work") ||
		   !strcmp(n, "workqueue_execute_end")) {
		puts_(e->out, " work struct ");
		val(e, "work", hex);
	} else if (!strcmp(n, "workqueue_execute_start")) {
		puts_(e->out, " work struct ");
		val(e, "work", hex);
		puts_(e->out, ": function ");
		val(e, "function", kernel_fn);
	} else if (!strcmp(n, "workqueue_queue_work")) {
		puts_(e->out, " work struct=");
		val(e, "work", hex);
		kv(e, "function", NULL, kernel_fn);
		kv(e, "workqueue", NULL, hex);
		val(e, "req_cpu", NULL);
		val(e, "cpu", NULL);
	} else if (!strcmp(n, "irq_handler_entry")) {
		kv(e, "irq", NULL, NULL);
		kv(e, "name", NULL, NULL);
	} else if (!strcmp(n, "irq_handler_exit")) {
		kv(e, "irq", NULL, NULL);
		puts_(e->out, " ret=");
		val(e, "ret", irq_ret);
	} else if (!strcmp(n, "softirq_entry") || !strcmp(n, "softirq_exit")) {
		kv(e, "vec", NULL, NULL);
		puts_(e->out, " [action=");
		val(e, "vec", softirq_action);
		puts_(e->out, "]");
	} else if (!strcmp(n, "tracing_mark_write")) {
		marker(e, "trace_begin", "trace_name", begin_end, false);
	} else if (!strcmp(n, "dpu_tracing_mark_write") || !strcmp(n, "panel_write_generic") ||
		   !strcmp(n, "g2d_tracing_mark_write")) {
		marker(e, "type", "name", mark_type, true);
	} else if (!strcmp(n, "samsung_tracing_mark_write")) {
		marker(e, "trace_type", "trace_name", mark_type, true);
	} else if (!strcmp(n, "cgroup_attach_task")) {
		kv(e, "dst_root", NULL, NULL);
		kv(e, "dst_id", NULL, NULL);
		kv(e, "cname", "cgroup", NULL);
		kv(e, "dst_level", NULL, NULL);
		kv(e, "dst_path", NULL, NULL);
		kv(e, "pid", NULL, NULL);
		kv(e, "comm", NULL, NULL);
	} else if (!strcmp(n, "hrtimer_expire_entry")) {
		kv(e, "function", NULL, kernel_fn);
	} else {
		for (i = 0; i < e->n_args; i++) {
			putf(e->out, " %s=", e->args[i].key);
			if (!strcmp(e->args[i].key, "gfp_flags"))
				gfp_flags(e, &e->args[i]);
			else
				value(e->out, &e->args[i]);
		}
	}
}

/* " <comm>-<tid> (<tgid>) [<cpu>] .... <s>.<us>:" */
static void prefix(const struct tp_db *db, size_t row, struct line *l)
{
	const struct tp_table *fe = &db->ftrace_event, *th = &db->thread;
	int64_t ts = tp_get_int(fe, FTRACE_TS, row);
	int64_t cpu = tp_get_int(fe, FTRACE_CPU, row);
	int64_t utid = tp_get_int(fe, FTRACE_UTID, row);
	int64_t tid = 0, tgid = 0, secs, usecs;
	const char *name = NULL;
	size_t n, i;

	if (utid != TP_NULL_INT && utid >= 0 && (size_t)utid < th->n_rows) {
		int64_t upid = tp_get_int(th, THREAD_UPID, (size_t)utid);

		tid = tp_get_int(th, THREAD_TID, (size_t)utid);
		name = tp_str_get(&db->strings, tp_get_str(th, THREAD_NAME, (size_t)utid));
		if (upid != TP_NULL_INT && upid >= 0 && (size_t)upid < db->process.n_rows)
			tgid = tp_get_int(&db->process, PROCESS_PID, (size_t)upid);
		if (tgid == TP_NULL_INT)
			tgid = 0;
	}
	if (tid == 0)
		name = "<idle>";
	else if (!name || !*name)
		name = "<unknown>";
	n = strlen(name);
	for (i = n; i < 16; i++)
		puts_(l, " ");
	for (i = 0; i < n; i++)
		put(l, name[i] == '-' ? "_" : &name[i], 1);
	putf(l, "-%-5" PRId64 " (", tid);
	if (tgid == 0)
		puts_(l, "-----");
	else
		putf(l, "%5" PRId64, tgid);
	secs = ts / 1000000000;
	usecs = (ts - secs * 1000000000) / 1000;
	putf(l, ") [%03" PRId64 "] .... ", cpu == TP_NULL_INT ? 0 : cpu);
	putf(l, "%" PRId64 ".%06" PRId64 ":", secs, usecs);
}

/* The args of set @set, in set order (a binary search finds the first). */
static int load_args(const struct tp_db *db, int64_t set, struct event *e)
{
	const struct tp_table *t = &db->args;
	size_t lo = 0, hi = t->n_rows, row, n = 0;

	e->args = NULL;
	e->n_args = 0;
	if (set == TP_NULL_INT)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tp_get_int(t, ARGS_ARG_SET_ID, mid) < set)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (row = lo; row < t->n_rows && tp_get_int(t, ARGS_ARG_SET_ID, row) == set; row++)
		n++;
	if (!n)
		return 0;
	e->args = calloc(n, sizeof(*e->args));
	if (!e->args)
		return -1;
	for (row = lo; row < lo + n; row++) {
		struct arg *a = &e->args[e->n_args++];
		const char *type = tp_str_get(&db->strings, tp_get_str(t, ARGS_VALUE_TYPE, row));
		const char *key = tp_str_get(&db->strings, tp_get_str(t, ARGS_KEY, row));

		a->key = key ? key : "";
		a->i = tp_get_int(t, ARGS_INT_VALUE, row);
		if (!type || !strcmp(type, "null")) {
			a->type = V_NULL;
		} else if (!strcmp(type, "string") || !strcmp(type, "json")) {
			a->type = V_STR;
			a->s = tp_str_get(&db->strings, tp_get_str(t, ARGS_STRING_VALUE, row));
		} else if (!strcmp(type, "real")) {
			a->type = V_REAL;
			a->d = tp_get_real(t, ARGS_REAL_VALUE, row);
		} else if (!strcmp(type, "int")) {
			a->type = V_INT;
		} else if (!strcmp(type, "uint")) {
			a->type = V_UINT;
		} else if (!strcmp(type, "bool")) {
			a->type = V_BOOL;
		} else {
			a->type = V_OTHER;
		}
		if (a->type != V_STR && a->type != V_REAL && a->i == TP_NULL_INT)
			a->type = V_NULL;
	}
	return 0;
}

static void fn_to_ftrace(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct tp_db *db = sqlite3_user_data(ctx);
	const struct tp_table *fe = &db->ftrace_event;
	struct line l = {0};
	struct event e = {0};
	const char *name;
	int64_t id;

	(void)argc;
	if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) {
		sqlite3_result_error(ctx, "Usage: to_ftrace(id)", -1);
		return;
	}
	id = sqlite3_value_int64(argv[0]);
	if (id < 0 || (uint64_t)id >= fe->n_rows) {
		char msg[64];

		snprintf(msg, sizeof(msg), "to_ftrace: Cannot serialize row id %u", (unsigned)id);
		sqlite3_result_error(ctx, msg, -1);
		return;
	}
	name = tp_str_get(&db->strings, tp_get_str(fe, FTRACE_NAME, (size_t)id));
	if (!name)
		name = "";
	if (!strncmp(name, "chrome_event.", 13) || !strncmp(name, "track_event.", 12)) {
		sqlite3_result_error(ctx, "to_ftrace: Cannot serialize this row", -1);
		return;
	}
	prefix(db, (size_t)id, &l);
	puts_(&l, " ");
	if (!strcmp(name, "print") || !strcmp(name, "g2d_tracing_mark_write") ||
	    !strcmp(name, "dpu_tracing_mark_write"))
		puts_(&l, "tracing_mark_write");
	else
		puts_(&l, name);
	puts_(&l, ":");
	e.db = db;
	e.name = name;
	e.out = &l;
	if (load_args(db, tp_get_int(fe, FTRACE_ARG_SET_ID, (size_t)id), &e) < 0)
		l.oom = true;
	else
		fields(&e);
	free(e.args);
	if (l.oom) {
		free(l.buf);
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (l.buf)
		sqlite3_result_text(ctx, l.buf, (int)l.len, free);
	else
		sqlite3_result_text(ctx, "", 0, SQLITE_STATIC);
}

int tp_sql_add_to_ftrace(struct sqlite3 *conn, struct tp_db *db)
{
	return sqlite3_create_function_v2(conn, "to_ftrace", 1, SQLITE_UTF8 | SQLITE_INNOCUOUS, db,
					  fn_to_ftrace, NULL, NULL, NULL);
}
