/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proc_stats.c - linux.process_stats: ProcessTree and ProcessStats written
 * from <root>/proc. Called by the probes producer glue on the event loop;
 * a full scan touches every process once, lookups touch only new ids, and
 * polls read status (and optionally stat, smaps_rollup, fd/) per process.
 * All /proc contents are untrusted: parsers take (ptr, len) and never trust
 * a field to be present.
 */
#include "probes/proc_stats.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "base/err.h"
#include "base/file.h"
#include "config/process_stats_config.pb-c.h"
#include "pb_fields.h"
#include "protozero/protozero.h"

struct ps_cached {
	uint64_t mem_kb[PS_MEM_N];
	int64_t oom_score_adj;
	uint64_t utime_ns, stime_ns;
	uint64_t dmabuf_rss_kb;
};

/* One row per memory counter: its key in status/smaps_rollup and its field. */
static const struct {
	const char *key;
	uint32_t field;
} mem_keys[PS_MEM_N] = {
	[PS_MEM_VM_SIZE] = {"VmSize", PB_PROCESS_STATS_PROCESS__VM_SIZE_KB},
	[PS_MEM_VM_RSS] = {"VmRSS", PB_PROCESS_STATS_PROCESS__VM_RSS_KB},
	[PS_MEM_RSS_ANON] = {"RssAnon", PB_PROCESS_STATS_PROCESS__RSS_ANON_KB},
	[PS_MEM_RSS_FILE] = {"RssFile", PB_PROCESS_STATS_PROCESS__RSS_FILE_KB},
	[PS_MEM_RSS_SHMEM] = {"RssShmem", PB_PROCESS_STATS_PROCESS__RSS_SHMEM_KB},
	[PS_MEM_VM_SWAP] = {"VmSwap", PB_PROCESS_STATS_PROCESS__VM_SWAP_KB},
	[PS_MEM_VM_LOCKED] = {"VmLck", PB_PROCESS_STATS_PROCESS__VM_LOCKED_KB},
	[PS_MEM_VM_HWM] = {"VmHWM", PB_PROCESS_STATS_PROCESS__VM_HWM_KB},
	[PS_MEM_SMR_RSS] = {"Rss", PB_PROCESS_STATS_PROCESS__SMR_RSS_KB},
	[PS_MEM_SMR_PSS] = {"Pss", PB_PROCESS_STATS_PROCESS__SMR_PSS_KB},
	[PS_MEM_SMR_PSS_ANON] = {"Pss_Anon", PB_PROCESS_STATS_PROCESS__SMR_PSS_ANON_KB},
	[PS_MEM_SMR_PSS_FILE] = {"Pss_File", PB_PROCESS_STATS_PROCESS__SMR_PSS_FILE_KB},
	[PS_MEM_SMR_PSS_SHMEM] = {"Pss_Shmem", PB_PROCESS_STATS_PROCESS__SMR_PSS_SHMEM_KB},
	[PS_MEM_SMR_SWAP_PSS] = {"SwapPss", PB_PROCESS_STATS_PROCESS__SMR_SWAP_PSS_KB},
};

/* ------------------------------------------------------------ parsing ---- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Takes the next blank-separated token off the front of *s. */
static bool next_token(struct strview *s, struct strview *out_tok)
{
	size_t i = 0, start;

	while (i < s->len && (is_blank(s->ptr[i]) || s->ptr[i] == '\n'))
		i++;
	if (i == s->len)
		return false;
	start = i;
	while (i < s->len && !is_blank(s->ptr[i]) && s->ptr[i] != '\n')
		i++;
	*out_tok = sv_make(s->ptr + start, i - start);
	*s = sv_make(s->ptr + i, s->len - i);
	return true;
}

/* Parses the first token of @s as a decimal number. */
static int first_i64(struct strview s, int64_t min, int64_t max, int64_t *out)
{
	struct strview tok;

	if (!next_token(&s, &tok))
		return -EINVAL;
	return sv_parse_i64(tok, min, max, out);
}

static int first_u64(struct strview s, uint64_t *out)
{
	struct strview tok;

	if (!next_token(&s, &tok))
		return -EINVAL;
	return sv_parse_u64(tok, UINT64_MAX, out);
}

static bool parse_i32(struct strview s, int32_t *out)
{
	int64_t v;

	if (first_i64(s, INT32_MIN, INT32_MAX, &v) < 0)
		return false;
	*out = (int32_t)v;
	return true;
}

static void parse_mem_line(struct strview key, struct strview val, struct ps_status *out)
{
	uint64_t v;
	size_t i;

	for (i = 0; i < PS_MEM_N; i++) {
		if (!sv_eq_cstr(key, mem_keys[i].key))
			continue;
		if (first_u64(val, &v) == 0) {
			out->mem_kb[i] = v;
			out->mem_has |= 1u << i;
		}
		return;
	}
}

static void parse_status_line(struct strview key, struct strview val, struct ps_status *out)
{
	struct strview tok;
	uint64_t u;
	int32_t v;

	if (sv_eq_cstr(key, "Name")) {
		/* Only leading blanks go: a comm may end in spaces. */
		while (val.len && is_blank(val.ptr[0]))
			val = sv_make(val.ptr + 1, val.len - 1);
		if (val.len >= sizeof(out->name))
			val.len = sizeof(out->name) - 1;
		memcpy(out->name, val.ptr, val.len);
		out->name[val.len] = '\0';
		out->has |= PS_HAS_NAME;
	} else if (sv_eq_cstr(key, "Tgid")) {
		if (parse_i32(val, &v))
			out->tgid = v, out->has |= PS_HAS_TGID;
	} else if (sv_eq_cstr(key, "Pid")) {
		if (parse_i32(val, &v))
			out->pid = v, out->has |= PS_HAS_PID;
	} else if (sv_eq_cstr(key, "PPid")) {
		if (parse_i32(val, &v))
			out->ppid = v, out->has |= PS_HAS_PPID;
	} else if (sv_eq_cstr(key, "Uid")) {
		/* Real, effective, saved, fs: the first is the real uid. A uid
		 * above INT32_MAX wraps, as in Perfetto's int32 field. */
		if (first_u64(val, &u) == 0 && u <= UINT32_MAX)
			out->uid = (int32_t)(uint32_t)u, out->has |= PS_HAS_UID;
	} else if (sv_eq_cstr(key, "NSpid")) {
		out->n_nspid = 0;
		while (out->n_nspid < PS_MAX_NS_LEVELS && next_token(&val, &tok)) {
			int64_t x;

			if (sv_parse_i64(tok, 0, INT32_MAX, &x) < 0)
				break;
			out->nspid[out->n_nspid++] = (int32_t)x;
		}
	} else if (sv_eq_cstr(key, "Kthread")) {
		if (parse_i32(val, &v) && (v == 0 || v == 1))
			out->is_kthread = v, out->has |= PS_HAS_KTHREAD;
	} else {
		parse_mem_line(key, val, out);
	}
}

/* Calls @fn for every "Key: value" line of @buf. */
static void for_each_kv(const char *buf, size_t len,
			void (*fn)(struct strview, struct strview, struct ps_status *),
			struct ps_status *out)
{
	struct strview rest = sv_make(buf, len), line, key, val;

	while (rest.len) {
		sv_split(rest, '\n', &line, &rest);
		if (!sv_split(line, ':', &key, &val))
			continue;
		fn(key, val, out);
	}
}

int ps_parse_status(const char *buf, size_t len, struct ps_status *out)
{
	memset(out, 0, sizeof(*out));
	for_each_kv(buf, len, parse_status_line, out);
	if (!(out->has & (PS_HAS_PID | PS_HAS_NAME)))
		return -EINVAL;
	return 0;
}

void ps_parse_mem(const char *buf, size_t len, struct ps_status *out)
{
	for_each_kv(buf, len, parse_mem_line, out);
}

int ps_parse_stat(const char *buf, size_t len, struct ps_stat *out)
{
	const char *open, *close = NULL;
	struct strview rest, tok;
	struct ps_stat st = {0};
	uint64_t u;
	size_t i;
	int64_t v;

	open = memchr(buf, '(', len);
	if (!open)
		return -EINVAL;
	for (i = len; i > (size_t)(open - buf); i--) {
		if (buf[i - 1] == ')') {
			close = buf + i - 1;
			break;
		}
	}
	if (!close || close == open)
		return -EINVAL;
	if (first_i64(sv_make(buf, (size_t)(open - buf)), 0, INT32_MAX, &v) < 0)
		return -EINVAL;
	st.pid = (int32_t)v;
	st.comm = open + 1;
	st.comm_len = (size_t)(close - open - 1);

	/* Field 3 (state) is the first token after the comm; 22 is starttime. */
	rest = sv_make(close + 1, len - (size_t)(close + 1 - buf));
	for (i = 3; i <= 22; i++) {
		if (!next_token(&rest, &tok))
			return -EINVAL;
		if (i == 3) {
			if (tok.len != 1)
				return -EINVAL;
			st.state = tok.ptr[0];
		} else if (i == 4) {
			if (sv_parse_i64(tok, 0, INT32_MAX, &v) < 0)
				return -EINVAL;
			st.ppid = (int32_t)v;
		} else if (i == 14 || i == 15 || i == 22) {
			if (sv_parse_u64(tok, UINT64_MAX, &u) < 0)
				return -EINVAL;
			if (i == 14)
				st.utime = u;
			else if (i == 15)
				st.stime = u;
			else
				st.starttime = u;
		}
	}
	*out = st;
	return 0;
}

/* --------------------------------------------------------------- I/O ---- */

/* Reads up to @cap - 1 bytes of @path into @buf and NUL-terminates them.
 * Return: bytes read or -errno. */
static int read_file(const char *path, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;
	int fd, err;

	fd = PFC_EINTR_RETRY(open(path, O_RDONLY | O_CLOEXEC));
	if (fd < 0)
		return err_from_errno();
	while (n + 1 < cap) {
		r = PFC_EINTR_RETRY(read(fd, buf + n, cap - 1 - n));
		if (r < 0) {
			err = err_from_errno();
			fd_close(fd);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	fd_close(fd);
	buf[n] = '\0';
	return (int)n;
}

static int pid_path(const struct ps_state *st, char *out, size_t cap, int32_t pid,
		    const char *file)
{
	int n = snprintf(out, cap, "%s/proc/%d/%s", st->root, (int)pid, file);

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* Reads <root>/proc/<pid>/<file> into st->buf, at most @cap bytes. */
static int read_pid_file(struct ps_state *st, int32_t pid, const char *file, size_t cap)
{
	char path[PS_MAX_ROOT_BYTES + 96];
	int err;

	err = pid_path(st, path, sizeof(path), pid, file);
	if (err < 0)
		return err;
	return read_file(path, st->buf, cap);
}

/* Reads and parses <root>/proc/<pid>/<file> as a status file. */
static int read_status(struct ps_state *st, int32_t pid, const char *file, struct ps_status *out)
{
	int n = read_pid_file(st, pid, file, PS_READ_BUF_BYTES);

	if (n < 0) {
		if (n == -ENOENT || n == -ESRCH)
			st->n_vanished++;
		return n;
	}
	if (ps_parse_status(st->buf, (size_t)n, out) < 0) {
		st->n_bad_files++;
		return -EINVAL;
	}
	return 0;
}

/* Parses a readdir name as a positive pid; anything else gives 0. */
static int32_t dirent_pid(const struct dirent *de)
{
	int64_t v;

	if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
		return 0;
	if (!isdigit((unsigned char)de->d_name[0]))
		return 0;
	if (sv_parse_i64(sv_from_cstr(de->d_name), 1, INT32_MAX, &v) < 0)
		return 0;
	return (int32_t)v;
}

static DIR *open_dir(const struct ps_state *st, const char *fmt_tail, int32_t pid, int *out_err)
{
	char path[PS_MAX_ROOT_BYTES + 96];
	int n;
	DIR *d;

	if (pid > 0)
		n = snprintf(path, sizeof(path), "%s/proc/%d/%s", st->root, (int)pid, fmt_tail);
	else
		n = snprintf(path, sizeof(path), "%s/proc", st->root);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		*out_err = -ENAMETOOLONG;
		return NULL;
	}
	d = opendir(path);
	if (!d)
		*out_err = err_from_errno();
	return d;
}

/* ------------------------------------------------------------ writing ---- */

/* A nested message of the packet, begun on first use. */
struct lazy_msg {
	struct pz_msg *pkt;
	struct pz_msg msg;
	uint32_t field;
	uint64_t ts_ns;
	bool is_open;
};

static void lazy_init(struct lazy_msg *l, struct pz_msg *pkt, uint32_t field)
{
	memset(l, 0, sizeof(*l));
	l->pkt = pkt;
	l->field = field;
	l->ts_ns = clock_boottime_ns();
}

static struct pz_msg *lazy_get(struct lazy_msg *l)
{
	if (!l->is_open) {
		pz_append_varint(l->pkt, PB_TRACE_PACKET__TIMESTAMP, l->ts_ns);
		pz_begin_nested(l->pkt, l->field, &l->msg);
		l->is_open = true;
	}
	return &l->msg;
}

/* Ends the message with its collection_end_timestamp field, if it was begun. */
static void lazy_end(struct lazy_msg *l, uint32_t end_ts_field)
{
	if (!l->is_open)
		return;
	pz_append_varint(&l->msg, end_ts_field, clock_boottime_ns());
	pz_end(&l->msg);
	l->is_open = false;
}

static int mark_seen(struct ps_state *st, int32_t tid, int32_t tgid)
{
	int r = hmap_put(&st->seen, (uint64_t)(uint32_t)tid, (uint64_t)(uint32_t)tgid);

	return r < 0 ? r : 0;
}

static bool is_seen(const struct ps_state *st, int32_t tid)
{
	return hmap_get(&st->seen, (uint64_t)(uint32_t)tid, NULL);
}

/* A Thread entry with what @status (if any) has. */
static int write_thread(struct ps_state *st, struct lazy_msg *tree, int32_t tid, int32_t tgid,
			const struct ps_status *status)
{
	struct pz_msg t;
	uint32_t i;

	pz_begin_nested(lazy_get(tree), PB_PROCESS_TREE__THREADS, &t);
	pz_append_int(&t, PB_PROCESS_TREE_THREAD__TID, tid);
	pz_append_int(&t, PB_PROCESS_TREE_THREAD__TGID, tgid);
	if (status) {
		for (i = 1; i < status->n_nspid; i++)
			pz_append_int(&t, PB_PROCESS_TREE_THREAD__NSTID, status->nspid[i]);
		if (st->cfg.record_thread_names)
			pz_append_string(&t, PB_PROCESS_TREE_THREAD__NAME, status->name);
	}
	pz_end(&t);
	return mark_seen(st, tid, tgid);
}

/* Writes each NUL-separated word of a cmdline; empty words are skipped,
 * as Perfetto's splitter does. Return: words written. */
static size_t write_cmdline(struct pz_msg *p, const char *buf, size_t len)
{
	size_t i = 0, start, n = 0;

	while (i < len) {
		start = i;
		while (i < len && buf[i] != '\0')
			i++;
		if (i > start) {
			pz_append_bytes(p, PB_PROCESS_TREE_PROCESS__CMDLINE, buf + start, i - start);
			n++;
		}
		i++;
	}
	return n;
}

/*
 * Writes the Process entry for @pid from its parsed @status (and its main
 * thread). Return: 1 if it is in a non-root PID namespace, 0 if not, -EAGAIN
 * if @pid is no longer a process (reused for a thread), or -ENOMEM.
 */
static int write_process(struct ps_state *st, struct lazy_msg *tree, int32_t pid,
			 const struct ps_status *status)
{
	struct ps_stat pstat;
	struct pz_msg p;
	bool is_namespaced = status->n_nspid > 1;
	uint32_t i;
	int n, err;

	if (!(status->has & PS_HAS_TGID) || status->tgid != pid)
		return -EAGAIN;

	pz_begin_nested(lazy_get(tree), PB_PROCESS_TREE__PROCESSES, &p);
	pz_append_int(&p, PB_PROCESS_TREE_PROCESS__PID, pid);
	pz_append_int(&p, PB_PROCESS_TREE_PROCESS__PPID, status->ppid);
	pz_append_int(&p, PB_PROCESS_TREE_PROCESS__UID, status->uid);
	for (i = 1; i < status->n_nspid; i++)
		pz_append_int(&p, PB_PROCESS_TREE_PROCESS__NSPID, status->nspid[i]);

	n = read_pid_file(st, pid, "cmdline", PS_MAX_CMDLINE_BYTES);
	if (n <= 0 || write_cmdline(&p, st->buf, (size_t)n) == 0) {
		/* Kernel threads and zombies have no cmdline: use the comm. */
		pz_append_string(&p, PB_PROCESS_TREE_PROCESS__CMDLINE, status->name);
		pz_append_bool(&p, PB_PROCESS_TREE_PROCESS__CMDLINE_IS_COMM, true);
	}
	if (st->cfg.record_process_age) {
		n = read_pid_file(st, pid, "stat", PS_READ_BUF_BYTES);
		if (n > 0 && ps_parse_stat(st->buf, (size_t)n, &pstat) == 0)
			pz_append_varint(&p, PB_PROCESS_TREE_PROCESS__PROCESS_START_FROM_BOOT,
					 pstat.starttime * st->ns_per_tick);
		else if (n > 0)
			st->n_bad_files++;
	}
	if (status->has & PS_HAS_KTHREAD)
		pz_append_bool(&p, PB_PROCESS_TREE_PROCESS__IS_KTHREAD, status->is_kthread);
	pz_end(&p);

	if (!st->cfg.skip_main_thread_message)
		err = write_thread(st, tree, pid, pid, status);
	else
		err = mark_seen(st, pid, pid);
	if (err < 0)
		return err;
	return is_namespaced ? 1 : 0;
}

/* Resolves @id (a pid or tid) and writes whatever of it is new. */
static int write_process_or_thread(struct ps_state *st, struct lazy_msg *tree, int32_t id)
{
	struct ps_status s, sp;
	const struct ps_status *ps = &s;
	int written = 0, err;

	if (read_status(st, id, "status", &s) < 0)
		return 0;
	if (!(s.has & PS_HAS_TGID) || !(s.has & PS_HAS_PID) || s.tgid <= 0 || s.pid <= 0)
		return 0;
	if (!is_seen(st, s.tgid)) {
		if (s.tgid != s.pid) {
			if (read_status(st, s.tgid, "status", &sp) < 0)
				return 0;
			ps = &sp;
		}
		err = write_process(st, tree, s.tgid, ps);
		if (err == -ENOMEM)
			return err;
		if (err >= 0)
			written++;
	}
	if (id != s.tgid && !is_seen(st, id)) {
		err = write_thread(st, tree, id, s.tgid, &s);
		if (err < 0)
			return err;
		written++;
	}
	return written;
}

static int lookup_pids(struct ps_state *st, const int32_t *pids, size_t n, struct pz_msg *pkt)
{
	struct lazy_msg tree;
	int total = 0, r = 0;
	size_t i;

	lazy_init(&tree, pkt, PB_TRACE_PACKET__PROCESS_TREE);
	for (i = 0; i < n; i++) {
		if (pids[i] <= 0 || is_seen(st, pids[i]))
			continue;
		r = write_process_or_thread(st, &tree, pids[i]);
		if (r < 0)
			break;
		total += r;
	}
	lazy_end(&tree, PB_PROCESS_TREE__COLLECTION_END_TIMESTAMP);
	return r < 0 ? r : total;
}

/* ---------------------------------------------------------------- API ---- */

void ps_config_from_proto(const struct Perfetto__Protos__ProcessStatsConfig *pb,
			  struct ps_config *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	out->on_demand_enabled = true;
	out->cache_ttl_polls = 1;
	if (!pb)
		return;
	out->scan_all_processes_on_start = pb->scan_all_processes_on_start;
	out->record_thread_names = pb->record_thread_names;
	out->record_process_age = pb->record_process_age;
	out->record_process_runtime = pb->record_process_runtime;
	out->resolve_process_fds = pb->resolve_process_fds;
	out->scan_smaps_rollup = pb->scan_smaps_rollup;
	out->record_process_dmabuf_rss = pb->record_process_dmabuf_rss;
	out->skip_main_thread_message = pb->skip_main_thread_message;
	for (i = 0; i < pb->n_quirks; i++) {
		if (pb->quirks[i] == PBE_PROCESS_STATS_CONFIG_QUIRKS__DISABLE_ON_DEMAND)
			out->on_demand_enabled = false;
	}
	out->poll_ms = pb->proc_stats_poll_ms;
	if (out->poll_ms > 0 && out->poll_ms < PS_MIN_POLL_MS)
		out->poll_ms = PS_MIN_POLL_MS;
	if (out->poll_ms > 0 && pb->proc_stats_cache_ttl_ms / out->poll_ms > 1)
		out->cache_ttl_polls = pb->proc_stats_cache_ttl_ms / out->poll_ms;
}

int ps_init(struct ps_state *st, const char *root, const struct ps_config *cfg)
{
	size_t len;
	long hz;

	memset(st, 0, sizeof(*st));
	if (!root)
		root = "";
	len = strlen(root);
	while (len > 0 && root[len - 1] == '/')
		len--;
	if (len >= sizeof(st->root))
		return -ENAMETOOLONG;
	memcpy(st->root, root, len);
	st->root[len] = '\0';
	if (cfg)
		st->cfg = *cfg;
	else
		ps_config_from_proto(NULL, &st->cfg);
	if (st->cfg.cache_ttl_polls == 0)
		st->cfg.cache_ttl_polls = 1;
	hz = sysconf(_SC_CLK_TCK);
	st->ns_per_tick = hz > 0 ? NS_PER_SEC / (uint64_t)hz : NS_PER_SEC / 100;
	hmap_init(&st->seen);
	hmap_init(&st->skip_mem);
	hmap_init(&st->cache_idx);
	hmap_init(&st->seen_fds);
	st->buf = malloc(PS_MAX_CMDLINE_BYTES);
	if (!st->buf)
		return -ENOMEM;
	return 0;
}

void ps_fini(struct ps_state *st)
{
	if (!st)
		return;
	hmap_fini(&st->seen);
	hmap_fini(&st->skip_mem);
	hmap_fini(&st->cache_idx);
	hmap_fini(&st->seen_fds);
	free(st->cache);
	free(st->pending);
	free(st->buf);
	memset(st, 0, sizeof(*st));
}

int ps_scan_all(struct ps_state *st, struct pz_msg *pkt)
{
	struct lazy_msg tree;
	struct ps_status s, ts;
	struct dirent *de, *tde;
	DIR *proc = NULL, *task = NULL;
	int32_t pid, tid;
	int n_procs = 0, err = 0, r, derr;
	bool is_namespaced;

	lazy_init(&tree, pkt, PB_TRACE_PACKET__PROCESS_TREE);
	lazy_get(&tree);
	proc = open_dir(st, NULL, 0, &err);
	if (!proc)
		goto out;
	while ((de = readdir(proc)) != NULL) {
		pid = dirent_pid(de);
		if (pid <= 0 || read_status(st, pid, "status", &s) < 0)
			continue;
		r = write_process(st, &tree, pid, &s);
		if (r == -EAGAIN)
			continue;
		if (r < 0) {
			err = r;
			goto out;
		}
		n_procs++;
		is_namespaced = r == 1;
		task = open_dir(st, "task", pid, &derr);
		if (!task)
			continue;
		while ((tde = readdir(task)) != NULL) {
			char file[48];

			tid = dirent_pid(tde);
			if (tid <= 0 || tid == pid)
				continue;
			if (st->cfg.record_thread_names || is_namespaced) {
				snprintf(file, sizeof(file), "task/%d/status", (int)tid);
				if (read_status(st, pid, file, &ts) == 0)
					r = write_thread(st, &tree, tid, pid, &ts);
				else
					r = write_thread(st, &tree, tid, pid, NULL);
			} else {
				r = write_thread(st, &tree, tid, pid, NULL);
			}
			if (r < 0) {
				err = r;
				goto out;
			}
		}
		closedir(task);
		task = NULL;
	}
out:
	if (task)
		closedir(task);
	if (proc)
		closedir(proc);
	lazy_end(&tree, PB_PROCESS_TREE__COLLECTION_END_TIMESTAMP);
	return err < 0 ? err : n_procs;
}

size_t ps_count_unseen(const struct ps_state *st, const int32_t *pids, size_t n)
{
	size_t i, count = 0;

	for (i = 0; i < n; i++)
		count += pids[i] > 0 && !is_seen(st, pids[i]);
	return count;
}

int ps_lookup_pids(struct ps_state *st, const int32_t *pids, size_t n, struct pz_msg *pkt)
{
	return lookup_pids(st, pids, n, pkt);
}

int ps_write_pending(struct ps_state *st, struct pz_msg *pkt)
{
	int r = lookup_pids(st, st->pending, st->n_pending, pkt);

	st->n_pending = 0;
	return r;
}

void ps_forget_pids(struct ps_state *st, const int32_t *pids, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		hmap_del(&st->seen, (uint64_t)(uint32_t)pids[i], NULL);
}

static void clear_cache(struct ps_state *st)
{
	hmap_clear(&st->cache_idx);
	hmap_clear(&st->seen_fds);
	st->n_cache = 0;
	st->cache_polls = 0;
}

void ps_clear_incremental_state(struct ps_state *st)
{
	hmap_clear(&st->seen);
	hmap_clear(&st->skip_mem);
	clear_cache(st);
	st->n_pending = 0;
}

/* ------------------------------------------------------------ polling ---- */

static struct ps_cached *get_cached(struct ps_state *st, int32_t pid)
{
	struct ps_cached *c;
	uint64_t idx;
	size_t i;

	if (hmap_get(&st->cache_idx, (uint64_t)(uint32_t)pid, &idx))
		return &st->cache[idx];
	if (st->n_cache == st->cap_cache) {
		size_t cap = st->cap_cache ? st->cap_cache * 2 : 256;

		c = realloc(st->cache, cap * sizeof(*c));
		if (!c)
			return NULL;
		st->cache = c;
		st->cap_cache = cap;
	}
	if (hmap_put(&st->cache_idx, (uint64_t)(uint32_t)pid, st->n_cache) < 0)
		return NULL;
	c = &st->cache[st->n_cache++];
	/* Sentinels no real counter has, so the first poll writes everything. */
	for (i = 0; i < PS_MEM_N; i++)
		c->mem_kb[i] = UINT64_MAX;
	c->oom_score_adj = INT64_MAX;
	c->utime_ns = c->stime_ns = c->dmabuf_rss_kb = UINT64_MAX;
	return c;
}

static int push_pending(struct ps_state *st, int32_t pid)
{
	if (st->n_pending == st->cap_pending) {
		size_t cap = st->cap_pending ? st->cap_pending * 2 : 256;
		int32_t *p = realloc(st->pending, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		st->pending = p;
		st->cap_pending = cap;
	}
	st->pending[st->n_pending++] = pid;
	return 0;
}

/* The ProcessStats.Process of one pid, begun when it first has news. */
struct proc_entry {
	struct lazy_msg *stats;
	struct pz_msg msg;
	int32_t pid;
	bool is_open;
};

static struct pz_msg *entry_get(struct proc_entry *e)
{
	if (!e->is_open) {
		pz_begin_nested(lazy_get(e->stats), PB_PROCESS_STATS__PROCESSES, &e->msg);
		pz_append_int(&e->msg, PB_PROCESS_STATS_PROCESS__PID, e->pid);
		e->is_open = true;
	}
	return &e->msg;
}

static void put_if_changed(struct proc_entry *e, uint64_t *cached, uint64_t v, uint32_t field)
{
	if (v == *cached)
		return;
	pz_append_varint(entry_get(e), field, v);
	*cached = v;
}

static int write_fds(struct ps_state *st, struct proc_entry *e)
{
	char path[PS_MAX_ROOT_BYTES + 96], target[PATH_MAX];
	struct dirent *de;
	struct pz_msg f;
	uint64_t fd;
	ssize_t n;
	DIR *d;
	int err = 0, r;

	d = open_dir(st, "fd", e->pid, &err);
	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)
			continue;
		if (sv_parse_u64(sv_from_cstr(de->d_name), UINT32_MAX, &fd) < 0)
			continue;
		if (hmap_get(&st->seen_fds, (uint64_t)(uint32_t)e->pid << 32 | fd, NULL))
			continue;
		r = snprintf(path, sizeof(path), "%s/proc/%d/fd/%s", st->root, (int)e->pid,
			     de->d_name);
		if (r < 0 || (size_t)r >= sizeof(path))
			continue;
		n = readlink(path, target, sizeof(target));
		if (n < 0)
			continue;
		pz_begin_nested(entry_get(e), PB_PROCESS_STATS_PROCESS__FDS, &f);
		pz_append_varint(&f, PB_PROCESS_STATS_FD_INFO__FD, fd);
		pz_append_bytes(&f, PB_PROCESS_STATS_FD_INFO__PATH, target, (size_t)n);
		pz_end(&f);
		if (hmap_put(&st->seen_fds, (uint64_t)(uint32_t)e->pid << 32 | fd, 1) < 0) {
			err = -ENOMEM;
			break;
		}
	}
	closedir(d);
	return err;
}

/* Polls one process. Return: 1 if it is alive with data, 0 if skipped, or -ENOMEM. */
static int poll_one(struct ps_state *st, struct proc_entry *e)
{
	struct ps_status s;
	struct ps_cached *c;
	struct ps_stat pstat;
	bool alive = false;
	int64_t oom;
	uint64_t v;
	size_t i;
	int n;

	c = get_cached(st, e->pid);
	if (!c)
		return -ENOMEM;
	if (st->cfg.record_process_runtime) {
		n = read_pid_file(st, e->pid, "stat", PS_READ_BUF_BYTES);
		if (n > 0 && ps_parse_stat(st->buf, (size_t)n, &pstat) == 0) {
			put_if_changed(e, &c->utime_ns, pstat.utime * st->ns_per_tick,
				       PB_PROCESS_STATS_PROCESS__RUNTIME_USER_MODE);
			put_if_changed(e, &c->stime_ns, pstat.stime * st->ns_per_tick,
				       PB_PROCESS_STATS_PROCESS__RUNTIME_KERNEL_MODE);
			alive = true;
		}
	}
	if (hmap_get(&st->skip_mem, (uint64_t)(uint32_t)e->pid, NULL))
		return alive;
	n = read_pid_file(st, e->pid, "status", PS_READ_BUF_BYTES);
	if (n <= 0) {
		st->n_vanished += n < 0;
		return alive;
	}
	if (ps_parse_status(st->buf, (size_t)n, &s) < 0) {
		st->n_bad_files++;
		return alive;
	}
	if (st->cfg.record_process_dmabuf_rss) {
		n = read_pid_file(st, e->pid, "dmabuf_rss", PS_READ_BUF_BYTES);
		if (n > 0 && first_u64(sv_make(st->buf, (size_t)n), &v) == 0)
			put_if_changed(e, &c->dmabuf_rss_kb, v / 1024,
				       PB_PROCESS_STATS_PROCESS__DMABUF_RSS_KB);
	}
	if (st->cfg.scan_smaps_rollup) {
		n = read_pid_file(st, e->pid, "smaps_rollup", PS_READ_BUF_BYTES);
		if (n > 0)
			ps_parse_mem(st->buf, (size_t)n, &s);
	}
	if (!(s.mem_has & (1u << PS_MEM_VM_SIZE))) {
		/* A kernel thread: its status will never have memory counters. */
		if (hmap_put(&st->skip_mem, (uint64_t)(uint32_t)e->pid, 1) < 0)
			return -ENOMEM;
		return alive;
	}
	for (i = 0; i < PS_MEM_N; i++) {
		if (s.mem_has & (1u << i))
			put_if_changed(e, &c->mem_kb[i], s.mem_kb[i], mem_keys[i].field);
	}
	n = read_pid_file(st, e->pid, "oom_score_adj", PS_READ_BUF_BYTES);
	if (n > 0 && first_i64(sv_make(st->buf, (size_t)n), -1000000, 1000000, &oom) == 0 &&
	    oom != c->oom_score_adj) {
		pz_append_int(entry_get(e), PB_PROCESS_STATS_PROCESS__OOM_SCORE_ADJ, oom);
		c->oom_score_adj = oom;
	}
	if (st->cfg.resolve_process_fds && write_fds(st, e) < 0)
		return -ENOMEM;
	return 1;
}

int ps_poll_stats(struct ps_state *st, struct pz_msg *pkt)
{
	struct lazy_msg stats;
	struct proc_entry e;
	struct dirent *de;
	DIR *proc;
	int err = 0, r;

	lazy_init(&stats, pkt, PB_TRACE_PACKET__PROCESS_STATS);
	lazy_get(&stats);
	st->n_pending = 0;
	proc = open_dir(st, NULL, 0, &err);
	if (!proc)
		goto out;
	while ((de = readdir(proc)) != NULL) {
		memset(&e, 0, sizeof(e));
		e.stats = &stats;
		e.pid = dirent_pid(de);
		if (e.pid <= 0)
			continue;
		r = poll_one(st, &e);
		if (e.is_open)
			pz_end(&e.msg);
		if (r > 0 && !is_seen(st, e.pid))
			r = push_pending(st, e.pid);
		if (r < 0) {
			err = r;
			break;
		}
	}
	closedir(proc);
out:
	lazy_end(&stats, PB_PROCESS_STATS__COLLECTION_END_TIMESTAMP);
	if (++st->cache_polls >= st->cfg.cache_ttl_polls)
		clear_cache(st);
	return err < 0 ? err : (int)st->n_pending;
}
