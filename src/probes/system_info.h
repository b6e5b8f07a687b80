/* SPDX-License-Identifier: Apache-2.0 */
/*
 * system_info.h - the linux.system_info collector: one CpuInfo packet at
 * data source start, from <root>/proc/cpuinfo and each CPU's cpufreq and
 * cpu_capacity files in <root>/sys. Called once by the producer glue; the
 * cpuinfo parser is pure so recorded files can be tested.
 */
#ifndef PFC_PROBES_SYSTEM_INFO_H
#define PFC_PROBES_SYSTEM_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

struct pz_msg;

/* /proc/cpuinfo larger than this is refused (~1.5 KiB per CPU). */
#define SI_MAX_CPUINFO_BYTES (16 * 1024 * 1024)
/* Distinct frequencies kept per CPU. */
#define SI_MAX_FREQS 256

/* Bits of si_cpu.features, in Perfetto's append-only allowlist order. */
enum si_feature {
	SI_FEATURE_MTE = 1u << 0,
	SI_FEATURE_MTE3 = 1u << 1,
};

enum si_arm_has {
	SI_HAS_IMPLEMENTER = 1u << 0,
	SI_HAS_ARCHITECTURE = 1u << 1,
	SI_HAS_VARIANT = 1u << 2,
	SI_HAS_PART = 1u << 3,
	SI_HAS_REVISION = 1u << 4,
	SI_HAS_ALL_ARM = 0x1f,
};

/* One "processor : N" block of /proc/cpuinfo. */
struct si_cpu {
	uint32_t index;          /* the N of "processor : N" */
	struct strview processor; /* view into the parsed buffer */
	uint32_t arm_has;        /* SI_HAS_* */
	uint32_t implementer, architecture, variant, part, revision;
	uint64_t features;       /* SI_FEATURE_* */
};

typedef int (*si_cpu_cb)(const struct si_cpu *cpu, void *user);

/**
 * si_parse_cpuinfo() - Split /proc/cpuinfo into CPUs.
 * @buf: the file (borrowed; views in each si_cpu point into it).
 * @len: its length.  @cb: called once per CPU, in file order; a negative
 * return stops the parse and is returned.  @user: passed to @cb.
 *
 * The processor name is the value of the Arm "Processor" key (it may come
 * before the first CPU and applies to all), else the CPU's "model name",
 * else "unknown".
 *
 * Return: CPUs reported, or @cb's negative return.
 * Context: any thread; never allocates.
 */
int si_parse_cpuinfo(const char *buf, size_t len, si_cpu_cb cb, void *user);

/**
 * si_write_cpu_info() - Write TracePacket.timestamp and a CpuInfo with one
 * Cpu per CPU of <root>/proc/cpuinfo: processor, the sorted distinct
 * scaling_available_frequencies and scaling_boost_frequencies (kHz), the
 * cpu_capacity when present, the Arm identifier when all five parts are
 * known, and the feature bits.
 * @root: directory holding proc/ and sys/ ("/" or NULL for the live system).
 * @pkt: a TracePacket begun by the caller (borrowed).
 *
 * Return: CPUs written; -ENOENT etc. from reading cpuinfo (nothing is
 * written then); -EFBIG; -ENOMEM; -ENAMETOOLONG.
 * Context: blocks on procfs/sysfs; allocates temporarily.
 */
int si_write_cpu_info(const char *root, struct pz_msg *pkt);

#endif
