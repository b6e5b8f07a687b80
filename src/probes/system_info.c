/* SPDX-License-Identifier: Apache-2.0 */
/*
 * system_info.c - linux.system_info: the CpuInfo packet written once when
 * the data source starts. Parses <root>/proc/cpuinfo by hand (blocks of
 * "key : value" lines separated by blank lines) and adds per-CPU cpufreq
 * tables and capacities from <root>/sys. Runs once per session, so it may
 * allocate; the contents are untrusted and only ever skipped when odd.
 */
#include "probes/system_info.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "base/file.h"
#include "base/sort.h"
#include "pb_fields.h"
#include "protozero/protozero.h"

#define SI_MAX_ROOT_BYTES 512
#define SI_PATH_BYTES (SI_MAX_ROOT_BYTES + 128)
/* A cpufreq table or capacity file is a few hundred bytes. */
#define SI_MAX_SYSFS_BYTES (64 * 1024)

/* Perfetto's feature allowlist: a bit index per name, append-only. */
static const char *const feature_names[] = {"mte", "mte3"};

/* ------------------------------------------------------------ parsing ---- */

static struct strview strip_blanks(struct strview s)
{
	while (s.len && (s.ptr[0] == ' ' || s.ptr[0] == '\t'))
		s = sv_make(s.ptr + 1, s.len - 1);
	while (s.len && (s.ptr[s.len - 1] == ' ' || s.ptr[s.len - 1] == '\t' ||
			 s.ptr[s.len - 1] == '\r'))
		s.len--;
	return s;
}

static bool next_word(struct strview *s, struct strview *out)
{
	size_t i = 0, start;

	while (i < s->len && (s->ptr[i] == ' ' || s->ptr[i] == '\t' || s->ptr[i] == '\n'))
		i++;
	if (i == s->len)
		return false;
	start = i;
	while (i < s->len && s->ptr[i] != ' ' && s->ptr[i] != '\t' && s->ptr[i] != '\n')
		i++;
	*out = sv_make(s->ptr + start, i - start);
	*s = sv_make(s->ptr + i, s->len - i);
	return true;
}

/* The kernel prints these as 0x-prefixed hex; a bare hex string is accepted too. */
static bool parse_hex_u32(struct strview s, uint32_t *out)
{
	uint64_t v = 0;
	size_t i;
	int d;

	if (s.len > 2 && s.ptr[0] == '0' && (s.ptr[1] == 'x' || s.ptr[1] == 'X'))
		s = sv_make(s.ptr + 2, s.len - 2);
	if (s.len == 0 || s.len > 8)
		return false;
	for (i = 0; i < s.len; i++) {
		char c = s.ptr[i];

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return false;
		v = v * 16 + (uint64_t)d;
	}
	*out = (uint32_t)v;
	return true;
}

static bool parse_dec_u32(struct strview s, uint32_t *out)
{
	uint64_t v;

	if (sv_parse_u64(s, UINT32_MAX, &v) < 0)
		return false;
	*out = (uint32_t)v;
	return true;
}

struct cpu_block {
	bool has_index;
	struct si_cpu cpu;
	struct strview model_name;
};

static int flush_cpu(struct cpu_block *b, struct strview arm_processor, si_cpu_cb cb,
		     void *user, int *n_cpus)
{
	int r;

	if (!b->has_index)
		return 0;
	if (arm_processor.len)
		b->cpu.processor = arm_processor;
	else if (b->model_name.len)
		b->cpu.processor = b->model_name;
	else
		b->cpu.processor = sv_from_cstr("unknown");
	r = cb(&b->cpu, user);
	memset(b, 0, sizeof(*b));
	if (r < 0)
		return r;
	(*n_cpus)++;
	return 0;
}

static void parse_features(struct strview val, uint64_t *features)
{
	struct strview w;
	size_t i;

	while (next_word(&val, &w)) {
		for (i = 0; i < PFC_ARRAY_SIZE(feature_names); i++) {
			if (sv_eq_cstr(w, feature_names[i]))
				*features |= 1ull << i;
		}
	}
}

int si_parse_cpuinfo(const char *buf, size_t len, si_cpu_cb cb, void *user)
{
	struct strview rest = sv_make(buf, len), line, key, val, arm_processor = {"", 0};
	struct cpu_block b;
	int n_cpus = 0, r;
	uint32_t v;

	memset(&b, 0, sizeof(b));
	while (rest.len) {
		sv_split(rest, '\n', &line, &rest);
		if (strip_blanks(line).len == 0) {
			r = flush_cpu(&b, arm_processor, cb, user, &n_cpus);
			if (r < 0)
				return r;
			continue;
		}
		if (!sv_split(line, ':', &key, &val))
			continue;
		key = strip_blanks(key);
		val = strip_blanks(val);
		if (sv_eq_cstr(key, "Processor")) {
			/* Arm's name for the whole SoC, not a CPU number. */
			arm_processor = val;
		} else if (sv_eq_cstr(key, "processor")) {
			if (b.has_index) {
				/* A block without a blank line before it. */
				r = flush_cpu(&b, arm_processor, cb, user, &n_cpus);
				if (r < 0)
					return r;
			}
			b.has_index = parse_dec_u32(val, &b.cpu.index);
		} else if (sv_eq_cstr(key, "model name")) {
			b.model_name = val;
		} else if (sv_eq_cstr(key, "CPU implementer")) {
			if (parse_hex_u32(val, &v))
				b.cpu.implementer = v, b.cpu.arm_has |= SI_HAS_IMPLEMENTER;
		} else if (sv_eq_cstr(key, "CPU architecture")) {
			if (parse_dec_u32(val, &v))
				b.cpu.architecture = v, b.cpu.arm_has |= SI_HAS_ARCHITECTURE;
		} else if (sv_eq_cstr(key, "CPU variant")) {
			if (parse_hex_u32(val, &v))
				b.cpu.variant = v, b.cpu.arm_has |= SI_HAS_VARIANT;
		} else if (sv_eq_cstr(key, "CPU part")) {
			if (parse_hex_u32(val, &v))
				b.cpu.part = v, b.cpu.arm_has |= SI_HAS_PART;
		} else if (sv_eq_cstr(key, "CPU revision")) {
			if (parse_dec_u32(val, &v))
				b.cpu.revision = v, b.cpu.arm_has |= SI_HAS_REVISION;
		} else if (sv_eq_cstr(key, "Features") || sv_eq_cstr(key, "Flags")) {
			parse_features(val, &b.cpu.features);
		}
	}
	r = flush_cpu(&b, arm_processor, cb, user, &n_cpus);
	return r < 0 ? r : n_cpus;
}

/* ------------------------------------------------------------ writing ---- */

struct writer {
	const char *root;
	struct pz_msg *cpu_info;
	struct buf sysfs;
	uint32_t freqs[SI_MAX_FREQS];
	size_t n_freqs;
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Reads a sysfs file of @cpu into w->sysfs. Return: bytes or -errno. */
static int read_cpu_file(struct writer *w, uint32_t cpu, const char *file)
{
	char path[SI_PATH_BYTES];
	int n;

	n = snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%u/%s", w->root, cpu,
		     file);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	buf_reset(&w->sysfs);
	return file_read_all(path, &w->sysfs, SI_MAX_SYSFS_BYTES);
}

static void add_freqs(struct writer *w, uint32_t cpu, const char *file)
{
	struct strview s, tok;
	uint32_t v;

	if (read_cpu_file(w, cpu, file) <= 0)
		return;
	s = sv_make((const char *)w->sysfs.data, w->sysfs.len);
	while (w->n_freqs < SI_MAX_FREQS && next_word(&s, &tok)) {
		if (parse_dec_u32(tok, &v))
			w->freqs[w->n_freqs++] = v;
	}
}

static int write_cpu(const struct si_cpu *cpu, void *user)
{
	struct writer *w = user;
	struct pz_msg c, arm;
	struct strview s, tok;
	uint32_t capacity;
	size_t i;

	pz_begin_nested(w->cpu_info, PB_CPU_INFO__CPUS, &c);
	pz_append_bytes(&c, PB_CPU_INFO_CPU__PROCESSOR, cpu->processor.ptr, cpu->processor.len);

	w->n_freqs = 0;
	add_freqs(w, cpu->index, "cpufreq/scaling_available_frequencies");
	add_freqs(w, cpu->index, "cpufreq/scaling_boost_frequencies");
	sort_n(w->freqs, w->n_freqs, sizeof(w->freqs[0]), cmp_u32);
	for (i = 0; i < w->n_freqs; i++) {
		if (i == 0 || w->freqs[i] != w->freqs[i - 1])
			pz_append_varint(&c, PB_CPU_INFO_CPU__FREQUENCIES, w->freqs[i]);
	}

	if (read_cpu_file(w, cpu->index, "cpu_capacity") > 0) {
		s = sv_make((const char *)w->sysfs.data, w->sysfs.len);
		if (next_word(&s, &tok) && parse_dec_u32(tok, &capacity))
			pz_append_varint(&c, PB_CPU_INFO_CPU__CAPACITY, capacity);
	}

	if (cpu->arm_has == SI_HAS_ALL_ARM) {
		pz_begin_nested(&c, PB_CPU_INFO_CPU__ARM_IDENTIFIER, &arm);
		pz_append_varint(&arm, PB_CPU_INFO_ARM_CPU_IDENTIFIER__IMPLEMENTER,
				 cpu->implementer);
		pz_append_varint(&arm, PB_CPU_INFO_ARM_CPU_IDENTIFIER__ARCHITECTURE,
				 cpu->architecture);
		pz_append_varint(&arm, PB_CPU_INFO_ARM_CPU_IDENTIFIER__VARIANT, cpu->variant);
		pz_append_varint(&arm, PB_CPU_INFO_ARM_CPU_IDENTIFIER__PART, cpu->part);
		pz_append_varint(&arm, PB_CPU_INFO_ARM_CPU_IDENTIFIER__REVISION, cpu->revision);
		pz_end(&arm);
	}
	if (cpu->features)
		pz_append_varint(&c, PB_CPU_INFO_CPU__FEATURES, cpu->features);
	pz_end(&c);
	return 0;
}

int si_write_cpu_info(const char *root, struct pz_msg *pkt)
{
	char path[SI_PATH_BYTES];
	struct buf cpuinfo = BUF_INIT;
	struct writer w;
	struct pz_msg ci;
	size_t len;
	int n;

	memset(&w, 0, sizeof(w));
	buf_init(&w.sysfs);
	if (!root)
		root = "";
	len = strlen(root);
	while (len > 0 && root[len - 1] == '/')
		len--;
	if (len >= SI_MAX_ROOT_BYTES)
		return -ENAMETOOLONG;
	n = snprintf(path, sizeof(path), "%.*s/proc/cpuinfo", (int)len, root);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	n = file_read_all(path, &cpuinfo, SI_MAX_CPUINFO_BYTES);
	if (n < 0)
		goto out;

	/* sysfs paths are built from the same root, without its trailing '/'. */
	path[len] = '\0';
	w.root = path;
	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP, clock_boottime_ns());
	pz_begin_nested(pkt, PB_TRACE_PACKET__CPU_INFO, &ci);
	w.cpu_info = &ci;
	n = si_parse_cpuinfo((const char *)cpuinfo.data, cpuinfo.len, write_cpu, &w);
	pz_end(&ci);
out:
	buf_fini(&w.sysfs);
	buf_fini(&cpuinfo);
	return n;
}
