/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sys_stats.c - linux.sys_stats: system-wide counters from <root>/proc and
 * <root>/sys written as SysStats. Called by the probes producer glue once
 * per tick on the event loop. Reads are whole-file into one buffer owned by
 * the collector; parsing is by hand over (ptr, len) views, and a missing or
 * malformed file only leaves its section out.
 */
#include "probes/sys_stats.h"

#include <ctype.h>
#include <stdarg.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "base/err.h"
#include "base/file.h"
#include "base/hash.h"
#include "common/sys_stats_counters.pb-c.h"
#include "config/sys_stats_config.pb-c.h"
#include "pb_fields.h"
#include "protozero/protozero.h"

/* /proc/meminfo keys do not follow the enum names, so they are listed. */
static const struct {
	const char *key;
	uint32_t id;
} meminfo_table[] = {
	{"MemTotal", PBE_MEMINFO_COUNTERS__MEMINFO_MEM_TOTAL},
	{"MemFree", PBE_MEMINFO_COUNTERS__MEMINFO_MEM_FREE},
	{"MemAvailable", PBE_MEMINFO_COUNTERS__MEMINFO_MEM_AVAILABLE},
	{"Buffers", PBE_MEMINFO_COUNTERS__MEMINFO_BUFFERS},
	{"Cached", PBE_MEMINFO_COUNTERS__MEMINFO_CACHED},
	{"SwapCached", PBE_MEMINFO_COUNTERS__MEMINFO_SWAP_CACHED},
	{"Active", PBE_MEMINFO_COUNTERS__MEMINFO_ACTIVE},
	{"Inactive", PBE_MEMINFO_COUNTERS__MEMINFO_INACTIVE},
	{"Active(anon)", PBE_MEMINFO_COUNTERS__MEMINFO_ACTIVE_ANON},
	{"Inactive(anon)", PBE_MEMINFO_COUNTERS__MEMINFO_INACTIVE_ANON},
	{"Active(file)", PBE_MEMINFO_COUNTERS__MEMINFO_ACTIVE_FILE},
	{"Inactive(file)", PBE_MEMINFO_COUNTERS__MEMINFO_INACTIVE_FILE},
	{"Unevictable", PBE_MEMINFO_COUNTERS__MEMINFO_UNEVICTABLE},
	{"Mlocked", PBE_MEMINFO_COUNTERS__MEMINFO_MLOCKED},
	{"SwapTotal", PBE_MEMINFO_COUNTERS__MEMINFO_SWAP_TOTAL},
	{"SwapFree", PBE_MEMINFO_COUNTERS__MEMINFO_SWAP_FREE},
	{"Dirty", PBE_MEMINFO_COUNTERS__MEMINFO_DIRTY},
	{"Writeback", PBE_MEMINFO_COUNTERS__MEMINFO_WRITEBACK},
	{"AnonPages", PBE_MEMINFO_COUNTERS__MEMINFO_ANON_PAGES},
	{"Mapped", PBE_MEMINFO_COUNTERS__MEMINFO_MAPPED},
	{"Shmem", PBE_MEMINFO_COUNTERS__MEMINFO_SHMEM},
	{"Slab", PBE_MEMINFO_COUNTERS__MEMINFO_SLAB},
	{"SReclaimable", PBE_MEMINFO_COUNTERS__MEMINFO_SLAB_RECLAIMABLE},
	{"SUnreclaim", PBE_MEMINFO_COUNTERS__MEMINFO_SLAB_UNRECLAIMABLE},
	{"KernelStack", PBE_MEMINFO_COUNTERS__MEMINFO_KERNEL_STACK},
	{"PageTables", PBE_MEMINFO_COUNTERS__MEMINFO_PAGE_TABLES},
	{"CommitLimit", PBE_MEMINFO_COUNTERS__MEMINFO_COMMIT_LIMIT},
	{"Committed_AS", PBE_MEMINFO_COUNTERS__MEMINFO_COMMITED_AS},
	{"VmallocTotal", PBE_MEMINFO_COUNTERS__MEMINFO_VMALLOC_TOTAL},
	{"VmallocUsed", PBE_MEMINFO_COUNTERS__MEMINFO_VMALLOC_USED},
	{"VmallocChunk", PBE_MEMINFO_COUNTERS__MEMINFO_VMALLOC_CHUNK},
	{"CmaTotal", PBE_MEMINFO_COUNTERS__MEMINFO_CMA_TOTAL},
	{"CmaFree", PBE_MEMINFO_COUNTERS__MEMINFO_CMA_FREE},
	{"Gpu", PBE_MEMINFO_COUNTERS__MEMINFO_GPU},
	{"Zram", PBE_MEMINFO_COUNTERS__MEMINFO_ZRAM},
	{"Misc", PBE_MEMINFO_COUNTERS__MEMINFO_MISC},
	{"ION_heap", PBE_MEMINFO_COUNTERS__MEMINFO_ION_HEAP},
	{"ION_heap_pool", PBE_MEMINFO_COUNTERS__MEMINFO_ION_HEAP_POOL},
};

static const char *const proc_files[SS_N_FILES] = {
	[SS_FILE_MEMINFO] = "meminfo",
	[SS_FILE_VMSTAT] = "vmstat",
	[SS_FILE_STAT] = "stat",
	[SS_FILE_BUDDYINFO] = "buddyinfo",
	[SS_FILE_DISKSTATS] = "diskstats",
	[SS_FILE_PSI_CPU] = "pressure/cpu",
	[SS_FILE_PSI_IO] = "pressure/io",
	[SS_FILE_PSI_MEMORY] = "pressure/memory",
	[SS_FILE_SLABINFO] = "slabinfo",
};

const char *ss_meminfo_key(uint32_t id)
{
	size_t i;

	for (i = 0; i < PFC_ARRAY_SIZE(meminfo_table); i++) {
		if (meminfo_table[i].id == id)
			return meminfo_table[i].key;
	}
	return NULL;
}

/* ------------------------------------------------------------ parsing ---- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Takes the next blank-separated token of a line off the front of *s. */
static bool next_token(struct strview *s, struct strview *out_tok)
{
	size_t i = 0, start;

	while (i < s->len && is_blank(s->ptr[i]))
		i++;
	if (i == s->len)
		return false;
	start = i;
	while (i < s->len && !is_blank(s->ptr[i]))
		i++;
	*out_tok = sv_make(s->ptr + start, i - start);
	*s = sv_make(s->ptr + i, s->len - i);
	return true;
}

/* Takes the next non-empty line off the front of *rest. */
static bool next_line(struct strview *rest, struct strview *out_line)
{
	while (rest->len) {
		sv_split(*rest, '\n', out_line, rest);
		if (out_line->len)
			return true;
	}
	return false;
}

/* A decimal token; 0 when it is not a number, as strtoull-based readers do. */
static uint64_t tok_u64(struct strview tok)
{
	uint64_t v;

	return sv_parse_u64(tok, UINT64_MAX, &v) == 0 ? v : 0;
}

static void append_key_value(struct pz_msg *sys_stats, uint32_t field, uint32_t id, uint64_t v)
{
	struct pz_msg kv;

	pz_begin_nested(sys_stats, field, &kv);
	if (field == PB_SYS_STATS__MEMINFO) {
		pz_append_varint(&kv, PB_SYS_STATS_MEMINFO_VALUE__KEY, id);
		pz_append_varint(&kv, PB_SYS_STATS_MEMINFO_VALUE__VALUE, v);
	} else {
		pz_append_varint(&kv, PB_SYS_STATS_VMSTAT_VALUE__KEY, id);
		pz_append_varint(&kv, PB_SYS_STATS_VMSTAT_VALUE__VALUE, v);
	}
	pz_end(&kv);
}

static const struct ss_key *find_key(const struct hmap *idx, const struct ss_key *keys,
				     struct strview name)
{
	uint64_t i;

	if (!hmap_get(idx, fnv1a64(name.ptr, name.len), &i))
		return NULL;
	if (!sv_eq_cstr(name, keys[i].name))
		return NULL;
	return &keys[i];
}

void ss_parse_meminfo(const struct ss_state *st, const char *buf, size_t len,
		      struct pz_msg *sys_stats)
{
	struct strview rest = sv_make(buf, len), line, key, val, tok;
	const struct ss_key *k;
	uint64_t v;

	while (next_line(&rest, &line)) {
		/* "MemTotal:       16314772 kB" */
		if (!sv_split(line, ':', &key, &val))
			continue;
		k = find_key(&st->meminfo_idx, st->meminfo_keys, key);
		if (!k || !next_token(&val, &tok) || sv_parse_u64(tok, UINT64_MAX, &v) < 0)
			continue;
		append_key_value(sys_stats, PB_SYS_STATS__MEMINFO, k->id, v);
	}
}

void ss_parse_vmstat(const struct ss_state *st, const char *buf, size_t len,
		     struct pz_msg *sys_stats)
{
	struct strview rest = sv_make(buf, len), line, key, tok;
	const struct ss_key *k;
	uint64_t v;

	while (next_line(&rest, &line)) {
		/* "nr_free_pages 1234" */
		if (!next_token(&line, &key))
			continue;
		k = find_key(&st->vmstat_idx, st->vmstat_keys, key);
		if (!k || !next_token(&line, &tok) || sv_parse_u64(tok, UINT64_MAX, &v) < 0)
			continue;
		append_key_value(sys_stats, PB_SYS_STATS__VMSTAT, k->id, v);
	}
}

static bool stat_on(const struct ss_state *st, uint32_t counter)
{
	return counter < 32 && (st->stat_mask & (1u << counter));
}

static void parse_cpu_line(const struct ss_state *st, struct strview cpu, struct strview line,
			   struct pz_msg *sys_stats)
{
	static const uint32_t fields[] = {
		PB_SYS_STATS_CPU_TIMES__USER_NS,     PB_SYS_STATS_CPU_TIMES__USER_NICE_NS,
		PB_SYS_STATS_CPU_TIMES__SYSTEM_MODE_NS, PB_SYS_STATS_CPU_TIMES__IDLE_NS,
		PB_SYS_STATS_CPU_TIMES__IO_WAIT_NS,  PB_SYS_STATS_CPU_TIMES__IRQ_NS,
		PB_SYS_STATS_CPU_TIMES__SOFTIRQ_NS,  PB_SYS_STATS_CPU_TIMES__STEAL_NS,
	};
	uint64_t ticks[PFC_ARRAY_SIZE(fields)] = {0}, cpu_id;
	struct strview tok;
	struct pz_msg m;
	size_t i;

	if (sv_parse_u64(sv_make(cpu.ptr + 3, cpu.len - 3), UINT32_MAX, &cpu_id) < 0)
		return;
	for (i = 0; i < PFC_ARRAY_SIZE(fields) && next_token(&line, &tok); i++)
		ticks[i] = tok_u64(tok);
	pz_begin_nested(sys_stats, PB_SYS_STATS__CPU_STAT, &m);
	pz_append_varint(&m, PB_SYS_STATS_CPU_TIMES__CPU_ID, cpu_id);
	for (i = 0; i < PFC_ARRAY_SIZE(fields); i++)
		pz_append_varint(&m, fields[i], ticks[i] * st->ns_per_tick);
	pz_end(&m);
}

/* "intr 1234 0 5 ..." or "softirq ...": a total, then one count per number. */
static void parse_irq_line(struct strview line, uint32_t total_field, uint32_t per_irq_field,
			   bool skip_zero, struct pz_msg *sys_stats)
{
	struct strview tok;
	struct pz_msg m;
	uint64_t v;
	int32_t i;

	for (i = -1; next_token(&line, &tok); i++) {
		v = tok_u64(tok);
		if (i < 0) {
			pz_append_varint(sys_stats, total_field, v);
			continue;
		}
		if (skip_zero && v == 0)
			continue;
		pz_begin_nested(sys_stats, per_irq_field, &m);
		pz_append_int(&m, PB_SYS_STATS_INTERRUPT_COUNT__IRQ, i);
		pz_append_varint(&m, PB_SYS_STATS_INTERRUPT_COUNT__COUNT, v);
		pz_end(&m);
	}
}

void ss_parse_stat(const struct ss_state *st, const char *buf, size_t len,
		   struct pz_msg *sys_stats)
{
	struct strview rest = sv_make(buf, len), line, key, tok;

	while (next_line(&rest, &line)) {
		if (!next_token(&line, &key))
			continue;
		/* "cpu" alone is the sum over CPUs, which is left out. */
		if (stat_on(st, PBE_SYS_STATS_CONFIG_STAT_COUNTERS__STAT_CPU_TIMES) && key.len > 3 &&
		    sv_starts_with(key, "cpu")) {
			parse_cpu_line(st, key, line, sys_stats);
		} else if (stat_on(st, PBE_SYS_STATS_CONFIG_STAT_COUNTERS__STAT_IRQ_COUNTS) &&
			   sv_eq_cstr(key, "intr")) {
			/* Hundreds of IRQ numbers never fire: only nonzero ones. */
			parse_irq_line(line, PB_SYS_STATS__NUM_IRQ_TOTAL, PB_SYS_STATS__NUM_IRQ,
				       true, sys_stats);
		} else if (stat_on(st, PBE_SYS_STATS_CONFIG_STAT_COUNTERS__STAT_SOFTIRQ_COUNTS) &&
			   sv_eq_cstr(key, "softirq")) {
			parse_irq_line(line, PB_SYS_STATS__NUM_SOFTIRQ_TOTAL,
				       PB_SYS_STATS__NUM_SOFTIRQ, false, sys_stats);
		} else if (stat_on(st, PBE_SYS_STATS_CONFIG_STAT_COUNTERS__STAT_FORK_COUNT) &&
			   sv_eq_cstr(key, "processes") && next_token(&line, &tok)) {
			pz_append_varint(sys_stats, PB_SYS_STATS__NUM_FORKS, tok_u64(tok));
		}
	}
}

void ss_parse_buddyinfo(const char *buf, size_t len, struct pz_msg *sys_stats)
{
	struct strview rest = sv_make(buf, len), line, tok, node, comma;
	struct pz_msg m;
	uint64_t v;
	int i;

	while (next_line(&rest, &line)) {
		/* "Node 0, zone      DMA      1      1      0 ..." */
		pz_begin_nested(sys_stats, PB_SYS_STATS__BUDDY_INFO, &m);
		for (i = 0; next_token(&line, &tok); i++) {
			if (i == 1) {
				sv_split(tok, ',', &node, &comma);
				pz_append_bytes(&m, PB_SYS_STATS_BUDDY_INFO__NODE, node.ptr, node.len);
			} else if (i == 3) {
				pz_append_bytes(&m, PB_SYS_STATS_BUDDY_INFO__ZONE, tok.ptr, tok.len);
			} else if (i > 3) {
				v = tok_u64(tok);
				pz_append_varint(&m, PB_SYS_STATS_BUDDY_INFO__ORDER_PAGES,
						 v > UINT32_MAX ? UINT32_MAX : v);
			}
		}
		pz_end(&m);
	}
}

void ss_parse_diskstats(const char *buf, size_t len, struct pz_msg *sys_stats)
{
	struct strview rest = sv_make(buf, len), line, tok;
	struct pz_msg m;
	uint32_t field;
	int i;

	while (next_line(&rest, &line)) {
		/* major minor name, then the counters of Documentation/admin-guide/iostats.rst */
		pz_begin_nested(sys_stats, PB_SYS_STATS__DISK_STAT, &m);
		for (i = 0; i <= 19 && next_token(&line, &tok); i++) {
			switch (i) {
			case 2:
				pz_append_bytes(&m, PB_SYS_STATS_DISK_STAT__DEVICE_NAME, tok.ptr, tok.len);
				continue;
			case 5: field = PB_SYS_STATS_DISK_STAT__READ_SECTORS; break;
			case 6: field = PB_SYS_STATS_DISK_STAT__READ_TIME_MS; break;
			case 9: field = PB_SYS_STATS_DISK_STAT__WRITE_SECTORS; break;
			case 10: field = PB_SYS_STATS_DISK_STAT__WRITE_TIME_MS; break;
			case 16: field = PB_SYS_STATS_DISK_STAT__DISCARD_SECTORS; break;
			case 17: field = PB_SYS_STATS_DISK_STAT__DISCARD_TIME_MS; break;
			case 18: field = PB_SYS_STATS_DISK_STAT__FLUSH_COUNT; break;
			case 19: field = PB_SYS_STATS_DISK_STAT__FLUSH_TIME_MS; break;
			default: continue;
			}
			pz_append_varint(&m, field, tok_u64(tok));
		}
		pz_end(&m);
	}
}

void ss_parse_psi(const char *buf, size_t len, uint32_t some, uint32_t full,
		  struct pz_msg *sys_stats)
{
	struct strview rest = sv_make(buf, len), line, tok, key, val;
	struct pz_msg m;
	uint64_t total_us;
	uint32_t res;
	int i;

	while (next_line(&rest, &line)) {
		/* "some avg10=0.00 avg60=0.00 avg300=0.00 total=12345" (total in us) */
		pz_begin_nested(sys_stats, PB_SYS_STATS__PSI, &m);
		for (i = 0; i <= 4 && next_token(&line, &tok); i++) {
			if (i == 0) {
				res = sv_eq_cstr(tok, "some")	? some
				      : sv_eq_cstr(tok, "full") ? full
				      : PBE_SYS_STATS_PSI_SAMPLE_PSI_RESOURCE__PSI_RESOURCE_UNSPECIFIED;
				pz_append_varint(&m, PB_SYS_STATS_PSI_SAMPLE__RESOURCE, res);
			} else if (i == 4) {
				if (!sv_split(tok, '=', &key, &val))
					val = key;
				total_us = tok_u64(val);
				pz_append_varint(&m, PB_SYS_STATS_PSI_SAMPLE__TOTAL_NS, total_us * 1000);
			}
		}
		pz_end(&m);
	}
}

void ss_parse_slabinfo(const char *buf, size_t len, struct pz_msg *sys_stats)
{
	struct strview rest = sv_make(buf, len), line, tok;
	struct pz_msg m;
	uint64_t v;
	int i, n_lines = 0;

	while (next_line(&rest, &line)) {
		/* Two header lines, then "name active num objsize objperslab
		 * pagesperslab : tunables a b c : slabdata active num shared". */
		if (n_lines++ < 2)
			continue;
		pz_begin_nested(sys_stats, PB_SYS_STATS__SLAB_INFO, &m);
		for (i = 0; i <= 14 && next_token(&line, &tok); i++) {
			if (i == 0) {
				pz_append_bytes(&m, PB_SYS_STATS_SLAB_INFO__NAME, tok.ptr, tok.len);
			} else if (i == 5 || i == 14) {
				if (sv_parse_u64(tok, UINT32_MAX, &v) < 0)
					v = 0;
				pz_append_varint(&m,
						 i == 5 ? PB_SYS_STATS_SLAB_INFO__PAGES_PER_SLAB
							: PB_SYS_STATS_SLAB_INFO__NUM_SLABS,
						 v);
			}
		}
		pz_end(&m);
	}
}

/* --------------------------------------------------------------- I/O ---- */

/* Reads all of @fd from offset 0 into st->buf, growing it up to
 * SS_MAX_READ_BYTES. Return: bytes read (NUL-terminated) or -errno. */
static int read_fd_all(struct ss_state *st, int fd)
{
	size_t n = 0, cap;
	ssize_t r;
	char *p;

	for (;;) {
		if (n + 1 >= st->buf_cap) {
			if (st->buf_cap >= SS_MAX_READ_BYTES)
				break;
			cap = PFC_MIN(st->buf_cap * 2, (size_t)SS_MAX_READ_BYTES);
			p = realloc(st->buf, cap);
			if (!p)
				break;
			st->buf = p;
			st->buf_cap = cap;
		}
		r = PFC_EINTR_RETRY(pread(fd, st->buf + n, st->buf_cap - 1 - n, (off_t)n));
		if (r < 0)
			return err_from_errno();
		if (r == 0)
			break;
		n += (size_t)r;
	}
	st->buf[n] = '\0';
	return (int)n;
}

static int read_path(struct ss_state *st, const char *path)
{
	int fd, n;

	fd = PFC_EINTR_RETRY(open(path, O_RDONLY | O_CLOEXEC));
	if (fd < 0)
		return err_from_errno();
	n = read_fd_all(st, fd);
	fd_close(fd);
	return n;
}

/* Reads a sysfs file holding one number. */
static bool read_path_u64(struct ss_state *st, const char *path, uint64_t *out)
{
	struct strview s, tok;
	int n = read_path(st, path);

	if (n <= 0)
		return false;
	s = sv_make(st->buf, (size_t)n);
	if (!next_token(&s, &tok))
		return false;
	sv_split(tok, '\n', &tok, &s);
	return sv_parse_u64(tok, UINT64_MAX, out) == 0;
}

/* Reads a sysfs file holding one line of text; returns it without the '\n'. */
static bool read_path_line(struct ss_state *st, const char *path, struct strview *out)
{
	struct strview rest;
	int n = read_path(st, path);

	if (n <= 0)
		return false;
	sv_split(sv_make(st->buf, (size_t)n), '\n', out, &rest);
	return true;
}

/* Reads a kept /proc file; a failing fd is closed for good, as in Perfetto. */
static int read_proc_file(struct ss_state *st, enum ss_file f)
{
	int n;

	if (st->fds[f] < 0)
		return -ENOENT;
	n = read_fd_all(st, st->fds[f]);
	if (n <= 0) {
		st->n_read_errors++;
		fd_close(st->fds[f]);
		st->fds[f] = -1;
	}
	return n;
}

#define PATH_BYTES (SS_MAX_ROOT_BYTES + 256)

static bool make_path(char *out, const char *fmt, ...) PFC_PRINTF(2, 3);

static bool make_path(char *out, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, PATH_BYTES, fmt, ap);
	va_end(ap);
	return n >= 0 && n < PATH_BYTES;
}

static bool dirent_is_link_or_dir(const struct dirent *de)
{
	return de->d_type == DT_LNK || de->d_type == DT_DIR || de->d_type == DT_UNKNOWN;
}

static void read_cpufreq(struct ss_state *st, struct pz_msg *sys_stats)
{
	char path[PATH_BYTES];
	uint64_t v;
	uint32_t cpu;

	/*
	 * One value per CPU, as upstream: 0 for a CPU without cpufreq (offline,
	 * or a VM with no cpufreq driver), so the i-th value is always cpu i.
	 */
	for (cpu = 0; cpu < st->n_cpus; cpu++) {
		if (!make_path(path, "%s/sys/devices/system/cpu/cpu%u/cpufreq/scaling_cur_freq",
			       st->root, cpu) ||
		    !read_path_u64(st, path, &v) || v > UINT32_MAX)
			v = 0;
		pz_append_varint(sys_stats, PB_SYS_STATS__CPUFREQ_KHZ, v);
	}
}

static void read_devfreq(struct ss_state *st, struct pz_msg *sys_stats)
{
	char dir_path[PATH_BYTES], path[PATH_BYTES];
	struct dirent *de;
	struct pz_msg m;
	uint64_t v;
	DIR *d;

	if (!make_path(dir_path, "%s/sys/class/devfreq", st->root))
		return;
	d = opendir(dir_path);
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || !dirent_is_link_or_dir(de))
			continue;
		if (!make_path(path, "%s/%s/cur_freq", dir_path, de->d_name) ||
		    !read_path_u64(st, path, &v))
			v = 0;
		pz_begin_nested(sys_stats, PB_SYS_STATS__DEVFREQ, &m);
		pz_append_string(&m, PB_SYS_STATS_DEVFREQ_VALUE__KEY, de->d_name);
		pz_append_varint(&m, PB_SYS_STATS_DEVFREQ_VALUE__VALUE, v);
		pz_end(&m);
	}
	closedir(d);
}

static void read_thermal(struct ss_state *st, struct pz_msg *sys_stats)
{
	char dir_path[PATH_BYTES], path[PATH_BYTES];
	struct strview type;
	struct dirent *de;
	struct pz_msg m;
	uint64_t temp;
	DIR *d;

	if (!make_path(dir_path, "%s/sys/class/thermal", st->root))
		return;
	d = opendir(dir_path);
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "thermal_zone", 12) != 0 || !dirent_is_link_or_dir(de))
			continue;
		pz_begin_nested(sys_stats, PB_SYS_STATS__THERMAL_ZONE, &m);
		pz_append_string(&m, PB_SYS_STATS_THERMAL_ZONE__NAME, de->d_name);
		/* temp is in millidegrees Celsius; the field holds degrees. */
		if (make_path(path, "%s/%s/temp", dir_path, de->d_name) &&
		    read_path_u64(st, path, &temp))
			pz_append_varint(&m, PB_SYS_STATS_THERMAL_ZONE__TEMP, temp / 1000);
		if (make_path(path, "%s/%s/type", dir_path, de->d_name) &&
		    read_path_line(st, path, &type))
			pz_append_bytes(&m, PB_SYS_STATS_THERMAL_ZONE__TYPE, type.ptr, type.len);
		pz_end(&m);
	}
	closedir(d);
}

static void read_cpuidle(struct ss_state *st, struct pz_msg *sys_stats)
{
	char path[PATH_BYTES], name[64];
	struct strview line;
	struct pz_msg m, e;
	uint32_t cpu, state;
	uint64_t time_us;
	bool is_open;

	for (cpu = 0; cpu < st->n_cpus; cpu++) {
		is_open = false;
		for (state = 0; state < 64; state++) {
			if (!make_path(path, "%s/sys/devices/system/cpu/cpu%u/cpuidle/state%u/name",
				       st->root, cpu, state) ||
			    !read_path_line(st, path, &line))
				break;
			if (sv_to_cstr(line, name, sizeof(name)) < 0)
				continue;
			if (!make_path(path, "%s/sys/devices/system/cpu/cpu%u/cpuidle/state%u/time",
				       st->root, cpu, state) ||
			    !read_path_u64(st, path, &time_us))
				continue;
			if (!is_open) {
				pz_begin_nested(sys_stats, PB_SYS_STATS__CPUIDLE_STATE, &m);
				pz_append_varint(&m, PB_SYS_STATS_CPU_IDLE_STATE__CPU_ID, cpu);
				is_open = true;
			}
			pz_begin_nested(&m, PB_SYS_STATS_CPU_IDLE_STATE__CPUIDLE_STATE_ENTRY, &e);
			pz_append_string(&e, PB_SYS_STATS_CPU_IDLE_STATE_ENTRY__STATE, name);
			pz_append_varint(&e, PB_SYS_STATS_CPU_IDLE_STATE_ENTRY__DURATION_US, time_us);
			pz_end(&e);
		}
		if (is_open)
			pz_end(&m);
	}
}

/* AMD's pp_dpm_sclk lists "N: 800Mhz *" lines; '*' marks the current one. */
static bool parse_amd_sclk(const char *buf, size_t len, uint64_t *out_mhz)
{
	struct strview rest = sv_make(buf, len), line, tok;

	while (next_line(&rest, &line)) {
		if (!sv_ends_with(line, "*"))
			continue;
		while (next_token(&line, &tok)) {
			if (sv_ends_with(tok, "Mhz"))
				return sv_parse_u64(sv_make(tok.ptr, tok.len - 3), UINT32_MAX,
						    out_mhz) == 0;
		}
	}
	return false;
}

static void read_gpufreq(struct ss_state *st, struct pz_msg *sys_stats)
{
	char path[PATH_BYTES];
	uint64_t v;
	int n;

	/* Adreno (Hz), then Intel (MHz), then AMD. */
	if (make_path(path, "%s/sys/class/kgsl/kgsl-3d0/devfreq/cur_freq", st->root) &&
	    read_path_u64(st, path, &v)) {
		pz_append_varint(sys_stats, PB_SYS_STATS__GPUFREQ_MHZ, v / 1000000);
		return;
	}
	if (make_path(path, "%s/sys/class/drm/card0/gt_act_freq_mhz", st->root) &&
	    read_path_u64(st, path, &v)) {
		pz_append_varint(sys_stats, PB_SYS_STATS__GPUFREQ_MHZ, v);
		return;
	}
	if (!make_path(path, "%s/sys/class/drm/card0/device/pp_dpm_sclk", st->root))
		return;
	n = read_path(st, path);
	if (n > 0 && parse_amd_sclk(st->buf, (size_t)n, &v))
		pz_append_varint(sys_stats, PB_SYS_STATS__GPUFREQ_MHZ, v);
}

static void read_psi(struct ss_state *st, struct pz_msg *sys_stats)
{
	static const struct {
		enum ss_file file;
		uint32_t some, full;
	} res[] = {
		{SS_FILE_PSI_CPU, PBE_SYS_STATS_PSI_SAMPLE_PSI_RESOURCE__PSI_RESOURCE_CPU_SOME,
		 PBE_SYS_STATS_PSI_SAMPLE_PSI_RESOURCE__PSI_RESOURCE_CPU_FULL},
		{SS_FILE_PSI_IO, PBE_SYS_STATS_PSI_SAMPLE_PSI_RESOURCE__PSI_RESOURCE_IO_SOME,
		 PBE_SYS_STATS_PSI_SAMPLE_PSI_RESOURCE__PSI_RESOURCE_IO_FULL},
		{SS_FILE_PSI_MEMORY, PBE_SYS_STATS_PSI_SAMPLE_PSI_RESOURCE__PSI_RESOURCE_MEMORY_SOME,
		 PBE_SYS_STATS_PSI_SAMPLE_PSI_RESOURCE__PSI_RESOURCE_MEMORY_FULL},
	};
	size_t i;
	int n;

	for (i = 0; i < PFC_ARRAY_SIZE(res); i++) {
		n = read_proc_file(st, res[i].file);
		if (n > 0)
			ss_parse_psi(st->buf, (size_t)n, res[i].some, res[i].full, sys_stats);
	}
}

/* ---------------------------------------------------------------- init ---- */

static uint32_t clamp_period(uint32_t ms)
{
	return ms && ms < SS_MIN_PERIOD_MS ? SS_MIN_PERIOD_MS : ms;
}

static int add_key(struct ss_key *keys, size_t *n, struct hmap *idx, const char *name,
		   uint32_t id)
{
	struct ss_key *k = &keys[*n];
	size_t len = strlen(name);
	int r;

	if (len >= sizeof(k->name))
		return 0;
	memcpy(k->name, name, len + 1);
	k->id = id;
	r = hmap_put(idx, fnv1a64(name, len), *n);
	if (r < 0)
		return r;
	if (r == 0)
		return 0; /* a duplicate in the config: keep the first */
	(*n)++;
	return 0;
}

static bool id_listed(const uint32_t id, const int *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (list[i] >= 0 && (uint32_t)list[i] == id)
			return true;
	}
	return false;
}

static int build_meminfo_keys(struct ss_state *st, const Perfetto__Protos__SysStatsConfig *cfg)
{
	size_t i;
	int err;

	st->meminfo_keys = calloc(PFC_ARRAY_SIZE(meminfo_table), sizeof(*st->meminfo_keys));
	if (!st->meminfo_keys)
		return -ENOMEM;
	for (i = 0; i < PFC_ARRAY_SIZE(meminfo_table); i++) {
		if (cfg->n_meminfo_counters &&
		    !id_listed(meminfo_table[i].id, (const int *)cfg->meminfo_counters,
			       cfg->n_meminfo_counters))
			continue;
		err = add_key(st->meminfo_keys, &st->n_meminfo_keys, &st->meminfo_idx,
			      meminfo_table[i].key, meminfo_table[i].id);
		if (err < 0)
			return err;
	}
	return 0;
}

/* vmstat keys are the enum names without "VMSTAT_", in lower case. */
static int build_vmstat_keys(struct ss_state *st, const Perfetto__Protos__SysStatsConfig *cfg)
{
	const ProtobufCEnumDescriptor *d = &perfetto__protos__vmstat_counters__descriptor;
	char name[SS_MAX_KEY_BYTES];
	const char *src;
	unsigned i;
	size_t j;
	int err;

	st->vmstat_keys = calloc(d->n_values ? d->n_values : 1, sizeof(*st->vmstat_keys));
	if (!st->vmstat_keys)
		return -ENOMEM;
	for (i = 0; i < d->n_values; i++) {
		if (d->values[i].value <= 0 || strncmp(d->values[i].name, "VMSTAT_", 7) != 0)
			continue;
		if (cfg->n_vmstat_counters &&
		    !id_listed((uint32_t)d->values[i].value, (const int *)cfg->vmstat_counters,
			       cfg->n_vmstat_counters))
			continue;
		src = d->values[i].name + 7;
		for (j = 0; src[j] && j + 1 < sizeof(name); j++)
			name[j] = (char)tolower((unsigned char)src[j]);
		name[j] = '\0';
		err = add_key(st->vmstat_keys, &st->n_vmstat_keys, &st->vmstat_idx, name,
			      (uint32_t)d->values[i].value);
		if (err < 0)
			return err;
	}
	return 0;
}

/* Counts cpuN directories (max N + 1) and whether any has cpufreq. */
static void scan_cpus(struct ss_state *st)
{
	char path[PATH_BYTES];
	struct dirent *de;
	uint64_t idx;
	DIR *d;

	if (!make_path(path, "%s/sys/devices/system/cpu", st->root))
		return;
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "cpu", 3) != 0 || !isdigit((unsigned char)de->d_name[3]))
			continue;
		if (sv_parse_u64(sv_from_cstr(de->d_name + 3), SS_MAX_CPUS - 1, &idx) < 0)
			continue;
		if (idx + 1 > st->n_cpus)
			st->n_cpus = (uint32_t)idx + 1;
	}
	closedir(d);
}

int ss_init(struct ss_state *st, const char *root, const Perfetto__Protos__SysStatsConfig *cfg)
{
	Perfetto__Protos__SysStatsConfig none = PERFETTO__PROTOS__SYS_STATS_CONFIG__INIT;
	uint32_t periods[SS_N_SECTIONS];
	char path[PATH_BYTES];
	size_t len, i;
	long hz;
	int err;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < SS_N_FILES; i++)
		st->fds[i] = -1;
	hmap_init(&st->meminfo_idx);
	hmap_init(&st->vmstat_idx);
	if (!cfg)
		cfg = &none;
	if (!root)
		root = "";
	len = strlen(root);
	while (len > 0 && root[len - 1] == '/')
		len--;
	if (len >= sizeof(st->root))
		return -ENAMETOOLONG;
	memcpy(st->root, root, len);
	st->root[len] = '\0';

	hz = sysconf(_SC_CLK_TCK);
	st->ns_per_tick = hz > 0 ? NS_PER_SEC / (uint64_t)hz : NS_PER_SEC / 100;
	st->buf_cap = SS_READ_BUF_BYTES;
	st->buf = malloc(st->buf_cap);
	if (!st->buf)
		return -ENOMEM;
	err = build_meminfo_keys(st, cfg);
	if (err < 0)
		return err;
	err = build_vmstat_keys(st, cfg);
	if (err < 0)
		return err;
	if (cfg->n_stat_counters == 0)
		st->stat_mask = ~0u;
	for (i = 0; i < cfg->n_stat_counters; i++) {
		if ((uint32_t)cfg->stat_counters[i] < 32)
			st->stat_mask |= 1u << cfg->stat_counters[i];
	}

	periods[SS_MEMINFO] = clamp_period(cfg->meminfo_period_ms);
	periods[SS_VMSTAT] = clamp_period(cfg->vmstat_period_ms);
	periods[SS_STAT] = clamp_period(cfg->stat_period_ms);
	periods[SS_DEVFREQ] = clamp_period(cfg->devfreq_period_ms);
	periods[SS_CPUFREQ] = clamp_period(cfg->cpufreq_period_ms);
	periods[SS_BUDDYINFO] = clamp_period(cfg->buddyinfo_period_ms);
	periods[SS_DISKSTAT] = clamp_period(cfg->diskstat_period_ms);
	periods[SS_PSI] = clamp_period(cfg->psi_period_ms);
	periods[SS_THERMAL] = clamp_period(cfg->thermal_period_ms);
	periods[SS_CPUIDLE] = clamp_period(cfg->cpuidle_period_ms);
	periods[SS_GPUFREQ] = clamp_period(cfg->gpufreq_period_ms);
	periods[SS_SLAB] = clamp_period(cfg->slab_period_ms);
	for (i = 0; i < SS_N_SECTIONS; i++) {
		if (periods[i] && (!st->tick_period_ms || periods[i] < st->tick_period_ms))
			st->tick_period_ms = periods[i];
	}
	if (!st->tick_period_ms)
		return 0;
	for (i = 0; i < SS_N_SECTIONS; i++) {
		if (periods[i] % st->tick_period_ms) {
			st->tick_period_ms = 0;
			return -EINVAL;
		}
		st->ticks[i] = periods[i] / st->tick_period_ms;
	}

	/* A file that cannot be opened (no PSI, slabinfo needs root) just
	 * leaves its section empty. */
	for (i = 0; i < SS_N_FILES; i++) {
		if (make_path(path, "%s/proc/%s", st->root, proc_files[i]))
			st->fds[i] = open(path, O_RDONLY | O_CLOEXEC);
	}
	scan_cpus(st);
	return 0;
}

void ss_fini(struct ss_state *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < SS_N_FILES; i++)
		fd_close(st->fds[i]);
	hmap_fini(&st->meminfo_idx);
	hmap_fini(&st->vmstat_idx);
	free(st->meminfo_keys);
	free(st->vmstat_keys);
	free(st->buf);
	memset(st, 0, sizeof(*st));
	for (i = 0; i < SS_N_FILES; i++)
		st->fds[i] = -1;
}

/* ---------------------------------------------------------------- poll ---- */

static bool due(const struct ss_state *st, enum ss_section s)
{
	return st->ticks[s] && st->tick % st->ticks[s] == 0;
}

int ss_poll(struct ss_state *st, struct pz_msg *pkt)
{
	struct pz_msg sys;
	int mask = 0, n;

	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP, clock_boottime_ns());
	pz_begin_nested(pkt, PB_TRACE_PACKET__SYS_STATS, &sys);
	if (due(st, SS_MEMINFO) && (n = read_proc_file(st, SS_FILE_MEMINFO)) > 0) {
		ss_parse_meminfo(st, st->buf, (size_t)n, &sys);
		mask |= 1 << SS_MEMINFO;
	}
	if (due(st, SS_VMSTAT) && (n = read_proc_file(st, SS_FILE_VMSTAT)) > 0) {
		ss_parse_vmstat(st, st->buf, (size_t)n, &sys);
		mask |= 1 << SS_VMSTAT;
	}
	if (due(st, SS_STAT) && (n = read_proc_file(st, SS_FILE_STAT)) > 0) {
		ss_parse_stat(st, st->buf, (size_t)n, &sys);
		mask |= 1 << SS_STAT;
	}
	if (due(st, SS_DEVFREQ)) {
		read_devfreq(st, &sys);
		mask |= 1 << SS_DEVFREQ;
	}
	if (due(st, SS_CPUFREQ) && st->n_cpus) {
		read_cpufreq(st, &sys);
		mask |= 1 << SS_CPUFREQ;
	}
	if (due(st, SS_BUDDYINFO) && (n = read_proc_file(st, SS_FILE_BUDDYINFO)) > 0) {
		ss_parse_buddyinfo(st->buf, (size_t)n, &sys);
		mask |= 1 << SS_BUDDYINFO;
	}
	if (due(st, SS_DISKSTAT) && (n = read_proc_file(st, SS_FILE_DISKSTATS)) > 0) {
		ss_parse_diskstats(st->buf, (size_t)n, &sys);
		mask |= 1 << SS_DISKSTAT;
	}
	if (due(st, SS_PSI)) {
		read_psi(st, &sys);
		mask |= 1 << SS_PSI;
	}
	if (due(st, SS_THERMAL)) {
		read_thermal(st, &sys);
		mask |= 1 << SS_THERMAL;
	}
	if (due(st, SS_CPUIDLE)) {
		read_cpuidle(st, &sys);
		mask |= 1 << SS_CPUIDLE;
	}
	if (due(st, SS_GPUFREQ)) {
		read_gpufreq(st, &sys);
		mask |= 1 << SS_GPUFREQ;
	}
	if (due(st, SS_SLAB) && (n = read_proc_file(st, SS_FILE_SLABINFO)) > 0) {
		ss_parse_slabinfo(st->buf, (size_t)n, &sys);
		mask |= 1 << SS_SLAB;
	}
	pz_append_varint(&sys, PB_SYS_STATS__COLLECTION_END_TIMESTAMP, clock_boottime_ns());
	pz_end(&sys);
	st->tick++;
	return mask;
}
