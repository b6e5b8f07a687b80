// SPDX-License-Identifier: Apache-2.0
/*
 * probes_test.c - unit tests for src/probes: ftrace decoding and control
 * (tests above the /proc collectors block), and the process_stats,
 * sys_stats and system_info collectors, checked field by field against the
 * recorded tree in tests/data/proc-root, plus smoke tests on the live /proc
 * and hostile files that must never crash.
 */
#include "harness.h"

/* ftrace tests go above this line; the /proc collector tests follow. */

/* ================================================================ */
/* /proc collectors: process_stats, sys_stats, system_info          */
/* ================================================================ */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/compiler.h"
#include "config/process_stats_config.pb-c.h"
#include "config/sys_stats_config.pb-c.h"
#include "pb_fields.h"
#include "probes/proc_stats.h"
#include "probes/sys_stats.h"
#include "probes/system_info.h"
#include "protozero/protozero.h"

/* Tests run from the repository root (tests/run.sh, the Makefile). */
#define PROC_FIXTURE "tests/data/proc-root"

/* A finished TracePacket: the bytes a collector wrote. */
struct pst_pkt {
	uint8_t *data;
	size_t len;
};

struct pst_ctx {
	struct pz_chunks c;
	struct pz_msg root;
};

static void pst_begin(struct pst_ctx *x)
{
	ASSERT_EQ(pz_chunks_init(&x->c, 4096, 0), 0);
	pz_msg_begin(&x->root, &x->c.s, NULL);
}

static struct pst_pkt pst_end(struct pst_ctx *x)
{
	struct pst_pkt p;

	pz_end(&x->root);
	ASSERT_TRUE(pz_stream_ok(&x->c.s));
	p.len = pz_chunks_size(&x->c);
	p.data = malloc(p.len + 1);
	ASSERT_TRUE(p.data != NULL);
	ASSERT_EQ(pz_chunks_copy(&x->c, p.data, p.len), (int64_t)p.len);
	pz_chunks_fini(&x->c);
	return p;
}

/* Counts occurrences of field @id in a message. */
static int pst_count(const uint8_t *d, size_t n, uint32_t id)
{
	struct pz_reader r;
	struct pz_field f;
	int count = 0, rc;

	pz_reader_init(&r, d, n);
	while ((rc = pz_reader_next(&r, &f)) == 1)
		count += f.id == id;
	ASSERT_EQ(rc, 0);
	return count;
}

/* The @nth occurrence of field @id. */
static bool pst_get(const uint8_t *d, size_t n, uint32_t id, int nth, struct pz_field *out)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, d, n);
	while (pz_reader_next(&r, &f) == 1) {
		if (f.id == id && nth-- == 0) {
			*out = f;
			return true;
		}
	}
	return false;
}

static uint64_t pst_u64(const uint8_t *d, size_t n, uint32_t id)
{
	struct pz_field f;

	if (!pst_get(d, n, id, 0, &f))
		FAIL("field %u missing", id);
	return f.value;
}

static bool pst_has(const uint8_t *d, size_t n, uint32_t id)
{
	struct pz_field f;

	return pst_get(d, n, id, 0, &f);
}

static void pst_str_eq(const uint8_t *d, size_t n, uint32_t id, int nth, const char *want)
{
	struct pz_field f;

	if (!pst_get(d, n, id, nth, &f))
		FAIL("string field %u #%d missing (want \"%s\")", id, nth, want);
	if (f.size != strlen(want) || memcmp(f.data, want, f.size) != 0)
		FAIL("field %u #%d: \"%.*s\" != \"%s\"", id, nth, (int)f.size, (const char *)f.data,
		     want);
}

/* The nested message of a packet's payload field @id. */
static struct pz_field pst_payload(const struct pst_pkt *p, uint32_t id)
{
	struct pz_field f;

	if (!pst_get(p->data, p->len, id, 0, &f))
		FAIL("payload %u missing", id);
	ASSERT_EQ(pst_count(p->data, p->len, id), 1);
	return f;
}

/* The entry of repeated message field @list whose int field @key_id == @key. */
static bool pst_find(const struct pz_field *parent, uint32_t list, uint32_t key_id, int64_t key,
		     struct pz_field *out)
{
	struct pz_field f, k;
	int i;

	for (i = 0; pst_get(parent->data, parent->size, list, i, &f); i++) {
		if (pst_get(f.data, f.size, key_id, 0, &k) && (int64_t)k.value == key) {
			*out = f;
			return true;
		}
	}
	return false;
}

static struct pz_field pst_must_find(const struct pz_field *parent, uint32_t list,
				     uint32_t key_id, int64_t key)
{
	struct pz_field f;

	if (!pst_find(parent, list, key_id, key, &f))
		FAIL("no entry with key %lld in list %u", (long long)key, list);
	return f;
}

static uint64_t pst_ns_per_tick(void)
{
	return NS_PER_SEC / (uint64_t)sysconf(_SC_CLK_TCK);
}

/* ------------------------------------------------ process_stats parsers ---- */

TEST(ps_parse_stat_hostile_comm)
{
	static const char line[] = "100 (my) (app) S 1 100 100 0 -1 4194560 100 0 0 0 250 50 0 0 "
				   "20 0 1 0 1234 1000 10 0 0\n";
	static const char nl[] = "500 (a\nb) R 1 500 500 0 -1 0 0 0 0 0 7 8 0 0 20 0 1 0 99 0 0\n";
	struct ps_stat st;

	ASSERT_EQ(ps_parse_stat(line, strlen(line), &st), 0);
	ASSERT_EQ(st.pid, 100);
	ASSERT_EQ(st.comm_len, 8);
	ASSERT_MEMEQ(st.comm, "my) (app", 8);
	ASSERT_EQ(st.state, 'S');
	ASSERT_EQ(st.ppid, 1);
	ASSERT_U64_EQ(st.utime, 250);
	ASSERT_U64_EQ(st.stime, 50);
	ASSERT_U64_EQ(st.starttime, 1234);

	ASSERT_EQ(ps_parse_stat(nl, strlen(nl), &st), 0);
	ASSERT_EQ(st.comm_len, 3);
	ASSERT_U64_EQ(st.starttime, 99);

	/* Truncated, unbalanced, empty, non-numeric: errors, never crashes. */
	ASSERT_EQ(ps_parse_stat("300 (broken) S 1 300", 20, &st), -EINVAL);
	ASSERT_EQ(ps_parse_stat("300 (broken S 1 300", 19, &st), -EINVAL);
	ASSERT_EQ(ps_parse_stat("", 0, &st), -EINVAL);
	ASSERT_EQ(ps_parse_stat("()", 2, &st), -EINVAL);
	ASSERT_EQ(ps_parse_stat("x (a) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19", 56, &st),
		  -EINVAL);
}

TEST(ps_parse_status_fields)
{
	static const char s[] = "Name:\tmy: comm \nUmask:\t0022\nTgid:\t100\nPid:\t101\n"
				"PPid:\t1\nTracerPid:\t0\nUid:\t4294967294\t0\t0\t0\n"
				"NSpid:\t101\t8\t3\nKthread:\t0\nVmSize:\t   81920 kB\n"
				"VmRSS:\t 30720 kB\nRssAnon:\t20480 kB\nVmSwap:\tjunk kB\n";
	struct ps_status st;

	ASSERT_EQ(ps_parse_status(s, strlen(s), &st), 0);
	ASSERT_STREQ(st.name, "my: comm ");
	ASSERT_EQ(st.tgid, 100);
	ASSERT_EQ(st.pid, 101);
	ASSERT_EQ(st.ppid, 1);
	ASSERT_EQ(st.uid, -2);
	ASSERT_EQ(st.n_nspid, 3);
	ASSERT_EQ(st.nspid[1], 8);
	ASSERT_EQ(st.nspid[2], 3);
	ASSERT_TRUE(st.has & PS_HAS_KTHREAD);
	ASSERT_FALSE(st.is_kthread);
	ASSERT_U64_EQ(st.mem_kb[PS_MEM_VM_SIZE], 81920);
	ASSERT_U64_EQ(st.mem_kb[PS_MEM_RSS_ANON], 20480);
	ASSERT_TRUE(st.mem_has & (1u << PS_MEM_VM_RSS));
	ASSERT_FALSE(st.mem_has & (1u << PS_MEM_VM_SWAP));

	/* Cut anywhere: the keys before the cut, no crash. */
	for (size_t i = 0; i <= strlen(s); i++)
		(void)ps_parse_status(s, i, &st);
	ASSERT_EQ(ps_parse_status("Umask:\t0022\nSta", 15, &st), -EINVAL);
	ASSERT_EQ(ps_parse_status("Name:\tbroken\nUmask:\t0022\nSta", 28, &st), 0);
	ASSERT_FALSE(st.has & PS_HAS_TGID);
}

/* ---------------------------------------------- process_stats on fixture ---- */

static struct pst_pkt pst_scan(const struct ps_config *cfg, int want_procs)
{
	struct ps_state st;
	struct pst_ctx x;
	struct pst_pkt p;

	ASSERT_EQ(ps_init(&st, PROC_FIXTURE "/", cfg), 0);
	pst_begin(&x);
	ASSERT_EQ(ps_scan_all(&st, &x.root), want_procs);
	p = pst_end(&x);
	ASSERT_GT(st.n_vanished, 0);
	ps_fini(&st);
	return p;
}

TEST(ps_scan_all_fixture_default)
{
	struct pz_field tree, proc, thr;
	struct ps_config cfg;
	struct pst_pkt p;

	ps_config_from_proto(NULL, &cfg);
	p = pst_scan(&cfg, 5);
	ASSERT_GT(pst_u64(p.data, p.len, PB_TRACE_PACKET__TIMESTAMP), 0);
	tree = pst_payload(&p, PB_TRACE_PACKET__PROCESS_TREE);
	ASSERT_GT(pst_u64(tree.data, tree.size, PB_PROCESS_TREE__COLLECTION_END_TIMESTAMP),
		  pst_u64(p.data, p.len, PB_TRACE_PACKET__TIMESTAMP) - 1);
	/* 1, 2, 100, 200, 500; 101 is a thread, 300 has no Tgid, 400 vanished. */
	ASSERT_EQ(pst_count(tree.data, tree.size, PB_PROCESS_TREE__PROCESSES), 5);
	ASSERT_FALSE(pst_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 101,
			      &proc));
	/* A main-thread entry per process, plus threads 101 and 102. */
	ASSERT_EQ(pst_count(tree.data, tree.size, PB_PROCESS_TREE__THREADS), 7);

	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 1);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__PPID), 0);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__UID), 0);
	ASSERT_EQ(pst_count(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE), 2);
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 0, "/sbin/init");
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 1, "splash");
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__IS_KTHREAD), 0);
	ASSERT_FALSE(pst_has(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE_IS_COMM));
	ASSERT_FALSE(pst_has(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__NSPID));
	ASSERT_FALSE(pst_has(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__PROCESS_START_FROM_BOOT));

	/* Kernel thread: comm as cmdline. */
	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 2);
	ASSERT_EQ(pst_count(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE), 1);
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 0, "kthreadd");
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE_IS_COMM), 1);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__IS_KTHREAD), 1);

	/* Namespaced, empty cmdline word dropped, hostile comm untouched. */
	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 100);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__PPID), 1);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__UID), 1000);
	ASSERT_EQ(pst_count(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__NSPID), 1);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__NSPID), 7);
	ASSERT_EQ(pst_count(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE), 3);
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 0, "/usr/bin/app");
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 1, "--flag");
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 2, "x");

	/* Pre-6.4 zombie: no is_kthread, comm as cmdline. */
	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 200);
	ASSERT_FALSE(pst_has(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__IS_KTHREAD));
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 0, "defunct");
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE_IS_COMM), 1);

	/* uid 4294967294 is int32 -2 (10-byte varint); cmdline without its NUL. */
	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 500);
	ASSERT_EQ((int32_t)pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__UID), -2);
	ASSERT_EQ(pst_count(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE), 2);
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 1, "script.py");

	/* Threads of a namespaced process carry nstid; no names by default. */
	thr = pst_must_find(&tree, PB_PROCESS_TREE__THREADS, PB_PROCESS_TREE_THREAD__TID, 102);
	ASSERT_EQ(pst_u64(thr.data, thr.size, PB_PROCESS_TREE_THREAD__TGID), 100);
	ASSERT_EQ(pst_u64(thr.data, thr.size, PB_PROCESS_TREE_THREAD__NSTID), 9);
	ASSERT_FALSE(pst_has(thr.data, thr.size, PB_PROCESS_TREE_THREAD__NAME));
	thr = pst_must_find(&tree, PB_PROCESS_TREE__THREADS, PB_PROCESS_TREE_THREAD__TID, 1);
	ASSERT_EQ(pst_u64(thr.data, thr.size, PB_PROCESS_TREE_THREAD__TGID), 1);
	free(p.data);
}

TEST(ps_scan_all_fixture_names_age_no_main_thread)
{
	struct pz_field tree, proc, thr;
	struct ps_config cfg;
	struct pst_pkt p;

	ps_config_from_proto(NULL, &cfg);
	cfg.record_thread_names = true;
	cfg.record_process_age = true;
	cfg.skip_main_thread_message = true;
	p = pst_scan(&cfg, 5);
	tree = pst_payload(&p, PB_TRACE_PACKET__PROCESS_TREE);
	ASSERT_EQ(pst_count(tree.data, tree.size, PB_PROCESS_TREE__THREADS), 2);
	thr = pst_must_find(&tree, PB_PROCESS_TREE__THREADS, PB_PROCESS_TREE_THREAD__TID, 101);
	pst_str_eq(thr.data, thr.size, PB_PROCESS_TREE_THREAD__NAME, 0, "worker-1");
	ASSERT_EQ(pst_u64(thr.data, thr.size, PB_PROCESS_TREE_THREAD__NSTID), 8);
	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 100);
	ASSERT_U64_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__PROCESS_START_FROM_BOOT),
		      1234 * pst_ns_per_tick());
	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 500);
	ASSERT_U64_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__PROCESS_START_FROM_BOOT),
		      900 * pst_ns_per_tick());
	free(p.data);

	/* With names on, the main thread carries the escaped comm. */
	cfg.skip_main_thread_message = false;
	p = pst_scan(&cfg, 5);
	tree = pst_payload(&p, PB_TRACE_PACKET__PROCESS_TREE);
	thr = pst_must_find(&tree, PB_PROCESS_TREE__THREADS, PB_PROCESS_TREE_THREAD__TID, 500);
	pst_str_eq(thr.data, thr.size, PB_PROCESS_TREE_THREAD__NAME, 0, "a\\nb");
	thr = pst_must_find(&tree, PB_PROCESS_TREE__THREADS, PB_PROCESS_TREE_THREAD__TID, 100);
	pst_str_eq(thr.data, thr.size, PB_PROCESS_TREE_THREAD__NAME, 0, "my) (app");
	free(p.data);
}

TEST(ps_lookup_pids_resolves_threads_once)
{
	static const int32_t first[] = {101, 101, 0, -5, 999999, 300};
	static const int32_t second[] = {100, 101, 102};
	struct pz_field tree, proc, thr;
	struct ps_config cfg;
	struct ps_state st;
	struct pst_ctx x;
	struct pst_pkt p;

	ps_config_from_proto(NULL, &cfg);
	cfg.record_thread_names = true;
	ASSERT_EQ(ps_init(&st, PROC_FIXTURE, &cfg), 0);
	ASSERT_EQ(ps_count_unseen(&st, first, PFC_ARRAY_SIZE(first)), 4);

	/* Thread 101 resolves to process 100, written first. */
	pst_begin(&x);
	ASSERT_EQ(ps_lookup_pids(&st, first, PFC_ARRAY_SIZE(first), &x.root), 2);
	p = pst_end(&x);
	tree = pst_payload(&p, PB_TRACE_PACKET__PROCESS_TREE);
	ASSERT_EQ(pst_count(tree.data, tree.size, PB_PROCESS_TREE__PROCESSES), 1);
	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 100);
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 0, "/usr/bin/app");
	/* Main thread 100 and thread 101, once each. */
	ASSERT_EQ(pst_count(tree.data, tree.size, PB_PROCESS_TREE__THREADS), 2);
	thr = pst_must_find(&tree, PB_PROCESS_TREE__THREADS, PB_PROCESS_TREE_THREAD__TID, 101);
	ASSERT_EQ(pst_u64(thr.data, thr.size, PB_PROCESS_TREE_THREAD__TGID), 100);
	pst_str_eq(thr.data, thr.size, PB_PROCESS_TREE_THREAD__NAME, 0, "worker-1");
	ASSERT_TRUE(pst_has(tree.data, tree.size, PB_PROCESS_TREE__COLLECTION_END_TIMESTAMP));
	free(p.data);

	/* Only 102 is new now (its /proc/102 is absent: the fixture lists it
	 * only under task/, so it cannot resolve and nothing is written). */
	ASSERT_EQ(ps_count_unseen(&st, second, PFC_ARRAY_SIZE(second)), 1);
	pst_begin(&x);
	ASSERT_EQ(ps_lookup_pids(&st, second, PFC_ARRAY_SIZE(second), &x.root), 0);
	p = pst_end(&x);
	ASSERT_EQ(p.len, 0);
	free(p.data);

	/* After a rename, 100 is looked up again. */
	ps_forget_pids(&st, second, 1);
	ASSERT_EQ(ps_count_unseen(&st, second, 1), 1);
	pst_begin(&x);
	ASSERT_EQ(ps_lookup_pids(&st, second, 1, &x.root), 1);
	p = pst_end(&x);
	tree = pst_payload(&p, PB_TRACE_PACKET__PROCESS_TREE);
	ASSERT_EQ(pst_count(tree.data, tree.size, PB_PROCESS_TREE__PROCESSES), 1);
	free(p.data);

	ps_clear_incremental_state(&st);
	ASSERT_EQ(ps_count_unseen(&st, second, PFC_ARRAY_SIZE(second)), 3);
	ps_fini(&st);
}

static struct pst_pkt pst_poll(struct ps_state *st, int want_pending)
{
	struct pst_ctx x;

	pst_begin(&x);
	ASSERT_EQ(ps_poll_stats(st, &x.root), want_pending);
	return pst_end(&x);
}

TEST(ps_poll_stats_fixture)
{
	struct pz_field stats, proc, fd, tree;
	struct ps_config cfg;
	struct ps_state st;
	struct pst_ctx x;
	struct pst_pkt p;

	ps_config_from_proto(NULL, &cfg);
	cfg.cache_ttl_polls = 3;
	cfg.resolve_process_fds = true;
	cfg.record_process_runtime = true;
	cfg.scan_smaps_rollup = true;
	ASSERT_EQ(ps_init(&st, PROC_FIXTURE, &cfg), 0);

	/* Every pid with a readable stat or memory counters is queued: 1, 2,
	 * 100, 101 (listed in the fixture), 200, 500. */
	p = pst_poll(&st, 6);
	stats = pst_payload(&p, PB_TRACE_PACKET__PROCESS_STATS);
	ASSERT_TRUE(pst_has(stats.data, stats.size, PB_PROCESS_STATS__COLLECTION_END_TIMESTAMP));
	proc = pst_must_find(&stats, PB_PROCESS_STATS__PROCESSES, PB_PROCESS_STATS_PROCESS__PID, 1);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_SIZE_KB), 21856);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_RSS_KB), 11904);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__RSS_ANON_KB), 3200);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__RSS_FILE_KB), 8600);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__RSS_SHMEM_KB), 104);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_SWAP_KB), 16);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_LOCKED_KB), 0);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_HWM_KB), 12000);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__OOM_SCORE_ADJ), 0);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__SMR_PSS_KB), 5000);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__SMR_SWAP_PSS_KB), 16);
	ASSERT_U64_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__RUNTIME_KERNEL_MODE),
		      70 * pst_ns_per_tick());
	ASSERT_EQ(pst_count(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__FDS), 2);
	ASSERT_TRUE(pst_find(&proc, PB_PROCESS_STATS_PROCESS__FDS, PB_PROCESS_STATS_FD_INFO__FD, 3,
			     &fd));
	pst_str_eq(fd.data, fd.size, PB_PROCESS_STATS_FD_INFO__PATH, 0, "socket:[1234]");

	proc = pst_must_find(&stats, PB_PROCESS_STATS__PROCESSES, PB_PROCESS_STATS_PROCESS__PID,
			     100);
	ASSERT_EQ((int64_t)pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__OOM_SCORE_ADJ),
		  -100);
	ASSERT_U64_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__RUNTIME_USER_MODE),
		      250 * pst_ns_per_tick());
	/* Kernel thread 2 and zombie 200 have runtimes only, no memory. */
	proc = pst_must_find(&stats, PB_PROCESS_STATS__PROCESSES, PB_PROCESS_STATS_PROCESS__PID, 2);
	ASSERT_FALSE(pst_has(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_SIZE_KB));
	ASSERT_FALSE(pst_find(&stats, PB_PROCESS_STATS__PROCESSES, PB_PROCESS_STATS_PROCESS__PID,
			      300, &proc));
	free(p.data);

	/* The queued pids go into their own ProcessTree packet. */
	pst_begin(&x);
	ASSERT_EQ(ps_write_pending(&st, &x.root), 6);
	p = pst_end(&x);
	tree = pst_payload(&p, PB_TRACE_PACKET__PROCESS_TREE);
	ASSERT_EQ(pst_count(tree.data, tree.size, PB_PROCESS_TREE__PROCESSES), 5);
	free(p.data);

	/* Within the TTL nothing changed, so no process entry at all; the
	 * second poll also has nothing pending. */
	p = pst_poll(&st, 0);
	stats = pst_payload(&p, PB_TRACE_PACKET__PROCESS_STATS);
	ASSERT_EQ(pst_count(stats.data, stats.size, PB_PROCESS_STATS__PROCESSES), 0);
	free(p.data);
	p = pst_poll(&st, 0);
	free(p.data);
	/* The TTL expired: everything is written again, fds included. */
	p = pst_poll(&st, 0);
	stats = pst_payload(&p, PB_TRACE_PACKET__PROCESS_STATS);
	proc = pst_must_find(&stats, PB_PROCESS_STATS__PROCESSES, PB_PROCESS_STATS_PROCESS__PID, 1);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_SIZE_KB), 21856);
	ASSERT_EQ(pst_count(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__FDS), 2);
	free(p.data);
	ps_fini(&st);
}

TEST(ps_missing_root_and_limits)
{
	char long_root[PS_MAX_ROOT_BYTES + 8];
	struct ps_state st;
	struct pst_ctx x;
	struct pst_pkt p;

	ASSERT_EQ(ps_init(&st, "/nonexistent-proc-root", NULL), 0);
	pst_begin(&x);
	ASSERT_EQ(ps_scan_all(&st, &x.root), -ENOENT);
	ASSERT_EQ(ps_poll_stats(&st, &x.root), -ENOENT);
	p = pst_end(&x);
	free(p.data);
	ps_fini(&st);
	ps_fini(NULL);

	memset(long_root, 'a', sizeof(long_root) - 1);
	long_root[sizeof(long_root) - 1] = '\0';
	ASSERT_EQ(ps_init(&st, long_root, NULL), -ENAMETOOLONG);
	ps_fini(&st);
}

TEST(ps_config_from_proto_clamps)
{
	Perfetto__Protos__ProcessStatsConfig pb = PERFETTO__PROTOS__PROCESS_STATS_CONFIG__INIT;
	Perfetto__Protos__ProcessStatsConfig__Quirks q =
		PERFETTO__PROTOS__PROCESS_STATS_CONFIG__QUIRKS__DISABLE_ON_DEMAND;
	struct ps_config cfg;

	pb.proc_stats_poll_ms = 10;
	pb.proc_stats_cache_ttl_ms = 1000;
	pb.n_quirks = 1;
	pb.quirks = &q;
	pb.record_thread_names = true;
	ps_config_from_proto(&pb, &cfg);
	ASSERT_EQ(cfg.poll_ms, PS_MIN_POLL_MS);
	ASSERT_EQ(cfg.cache_ttl_polls, 10);
	ASSERT_FALSE(cfg.on_demand_enabled);
	ASSERT_TRUE(cfg.record_thread_names);
	pb.proc_stats_cache_ttl_ms = 0;
	ps_config_from_proto(&pb, &cfg);
	ASSERT_EQ(cfg.cache_ttl_polls, 1);
}

/* ---------------------------------------------- process_stats, live /proc ---- */

TEST(ps_live_scan_finds_self)
{
	struct pz_field tree, proc, thr;
	char comm[64] = "", exe_word[256];
	struct ps_config cfg;
	struct ps_state st;
	struct pst_ctx x;
	struct pst_pkt p;
	struct timespec t0, t1;
	FILE *f;
	int n;

	f = fopen("/proc/self/comm", "r");
	ASSERT_TRUE(f != NULL);
	ASSERT_TRUE(fgets(comm, sizeof(comm), f) != NULL);
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	f = fopen("/proc/self/cmdline", "r");
	ASSERT_TRUE(f != NULL);
	n = (int)fread(exe_word, 1, sizeof(exe_word) - 1, f);
	fclose(f);
	ASSERT_GT(n, 0);
	exe_word[n] = '\0';

	ps_config_from_proto(NULL, &cfg);
	cfg.record_thread_names = true;
	ASSERT_EQ(ps_init(&st, "/", &cfg), 0);
	pst_begin(&x);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_GT(ps_scan_all(&st, &x.root), 1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	p = pst_end(&x);
	fprintf(stderr, "  full /proc scan: %.2f ms, %zu bytes\n",
		(double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6,
		p.len);
	tree = pst_payload(&p, PB_TRACE_PACKET__PROCESS_TREE);
	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID,
			     getpid());
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__PPID), getppid());
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__UID), getuid());
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 0, exe_word);
	thr = pst_must_find(&tree, PB_PROCESS_TREE__THREADS, PB_PROCESS_TREE_THREAD__TID, getpid());
	pst_str_eq(thr.data, thr.size, PB_PROCESS_TREE_THREAD__NAME, 0, comm);
	/* Everything is seen now: a lookup of ourselves writes nothing. */
	{
		int32_t self = getpid();

		ASSERT_EQ(ps_count_unseen(&st, &self, 1), 0);
	}
	free(p.data);
	ps_fini(&st);
}

TEST(ps_live_lookup_and_poll_self)
{
	int32_t self = getpid();
	struct pz_field tree, stats, proc;
	struct ps_state st;
	struct pst_ctx x;
	struct pst_pkt p;

	ASSERT_EQ(ps_init(&st, NULL, NULL), 0);
	pst_begin(&x);
	ASSERT_EQ(ps_lookup_pids(&st, &self, 1, &x.root), 1);
	p = pst_end(&x);
	tree = pst_payload(&p, PB_TRACE_PACKET__PROCESS_TREE);
	pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, self);
	free(p.data);

	pst_begin(&x);
	ASSERT_GE(ps_poll_stats(&st, &x.root), 0);
	p = pst_end(&x);
	stats = pst_payload(&p, PB_TRACE_PACKET__PROCESS_STATS);
	proc = pst_must_find(&stats, PB_PROCESS_STATS__PROCESSES, PB_PROCESS_STATS_PROCESS__PID,
			     self);
	ASSERT_GT(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_RSS_KB), 0);
	ASSERT_GT(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_SIZE_KB), 0);
	free(p.data);
	ps_fini(&st);
}

/* ------------------------------------------------------------ sys_stats ---- */

static struct pst_pkt pst_ss_poll(struct ss_state *st, int want_mask)
{
	struct pst_ctx x;

	pst_begin(&x);
	ASSERT_EQ(ss_poll(st, &x.root), want_mask);
	return pst_end(&x);
}

static uint64_t pst_kv(const struct pz_field *sys, uint32_t list, uint32_t key)
{
	struct pz_field e = pst_must_find(sys, list, PB_SYS_STATS_MEMINFO_VALUE__KEY, key);

	return pst_u64(e.data, e.size, PB_SYS_STATS_MEMINFO_VALUE__VALUE);
}

TEST(ss_poll_fixture)
{
	Perfetto__Protos__SysStatsConfig cfg = PERFETTO__PROTOS__SYS_STATS_CONFIG__INIT;
	Perfetto__Protos__MeminfoCounters mem[] = {
		PBE_MEMINFO_COUNTERS__MEMINFO_MEM_TOTAL,	PBE_MEMINFO_COUNTERS__MEMINFO_MEM_FREE,
		PBE_MEMINFO_COUNTERS__MEMINFO_ACTIVE_ANON,	PBE_MEMINFO_COUNTERS__MEMINFO_SLAB_RECLAIMABLE,
		PBE_MEMINFO_COUNTERS__MEMINFO_COMMITED_AS, PBE_MEMINFO_COUNTERS__MEMINFO_SWAP_TOTAL,
		PBE_MEMINFO_COUNTERS__MEMINFO_ZRAM,
	};
	Perfetto__Protos__VmstatCounters vm[] = {
		PBE_VMSTAT_COUNTERS__VMSTAT_NR_FREE_PAGES,
		PBE_VMSTAT_COUNTERS__VMSTAT_PGFAULT,
		PBE_VMSTAT_COUNTERS__VMSTAT_WORKINGSET_REFAULT,
		PBE_VMSTAT_COUNTERS__VMSTAT_OOM_KILL,
	};
	const uint64_t tick = pst_ns_per_tick();
	struct pz_field sys, e, sub;
	struct ss_state st;
	struct pst_pkt p;
	int all, i;

	cfg.meminfo_period_ms = 1000;
	cfg.n_meminfo_counters = PFC_ARRAY_SIZE(mem);
	cfg.meminfo_counters = mem;
	cfg.vmstat_period_ms = 1000;
	cfg.n_vmstat_counters = PFC_ARRAY_SIZE(vm);
	cfg.vmstat_counters = vm;
	cfg.stat_period_ms = 500;
	cfg.cpufreq_period_ms = 1000;
	cfg.buddyinfo_period_ms = 1000;
	cfg.diskstat_period_ms = 1000;
	cfg.psi_period_ms = 1000;
	cfg.thermal_period_ms = 1000;
	cfg.cpuidle_period_ms = 1000;
	cfg.devfreq_period_ms = 1000;
	cfg.gpufreq_period_ms = 1000;
	ASSERT_EQ(ss_init(&st, PROC_FIXTURE, &cfg), 0);
	ASSERT_EQ(ss_tick_period_ms(&st), 500);

	all = (1 << SS_MEMINFO) | (1 << SS_VMSTAT) | (1 << SS_STAT) | (1 << SS_CPUFREQ) |
	      (1 << SS_BUDDYINFO) | (1 << SS_DISKSTAT) | (1 << SS_PSI) | (1 << SS_THERMAL) |
	      (1 << SS_CPUIDLE) | (1 << SS_DEVFREQ) | (1 << SS_GPUFREQ);
	p = pst_ss_poll(&st, all);
	ASSERT_GT(pst_u64(p.data, p.len, PB_TRACE_PACKET__TIMESTAMP), 0);
	sys = pst_payload(&p, PB_TRACE_PACKET__SYS_STATS);
	ASSERT_TRUE(pst_has(sys.data, sys.size, PB_SYS_STATS__COLLECTION_END_TIMESTAMP));

	/* meminfo: the six selected keys present in the file, in kB. */
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__MEMINFO), 6);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__MEMINFO, PBE_MEMINFO_COUNTERS__MEMINFO_MEM_TOTAL),
		  8145044);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__MEMINFO, PBE_MEMINFO_COUNTERS__MEMINFO_MEM_FREE),
		  5013424);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__MEMINFO, PBE_MEMINFO_COUNTERS__MEMINFO_ACTIVE_ANON),
		  1520);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__MEMINFO,
			 PBE_MEMINFO_COUNTERS__MEMINFO_SLAB_RECLAIMABLE),
		  77116);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__MEMINFO, PBE_MEMINFO_COUNTERS__MEMINFO_COMMITED_AS),
		  1063340);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__MEMINFO, PBE_MEMINFO_COUNTERS__MEMINFO_SWAP_TOTAL), 0);

	/* vmstat: keys derived from the enum names; a key without value is skipped. */
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__VMSTAT), 3);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__VMSTAT, PBE_VMSTAT_COUNTERS__VMSTAT_NR_FREE_PAGES),
		  1253356);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__VMSTAT, PBE_VMSTAT_COUNTERS__VMSTAT_PGFAULT), 98765432);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__VMSTAT, PBE_VMSTAT_COUNTERS__VMSTAT_OOM_KILL), 2);

	/* stat: per-CPU times (not the "cpu" sum), IRQs, softirqs, forks. */
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__CPU_STAT), 2);
	e = pst_must_find(&sys, PB_SYS_STATS__CPU_STAT, PB_SYS_STATS_CPU_TIMES__CPU_ID, 0);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__USER_NS), 107470 * tick);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__SYSTEM_MODE_NS), 15203 * tick);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__IDLE_NS), 308522 * tick);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__IO_WAIT_NS), 285 * tick);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__SOFTIRQ_NS), 332 * tick);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__STEAL_NS), 433 * tick);
	e = pst_must_find(&sys, PB_SYS_STATS__CPU_STAT, PB_SYS_STATS_CPU_TIMES__CPU_ID, 1);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__USER_NS), 118641 * tick);
	ASSERT_EQ(pst_u64(sys.data, sys.size, PB_SYS_STATS__NUM_IRQ_TOTAL), 2120935);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__NUM_IRQ), 2);
	e = pst_must_find(&sys, PB_SYS_STATS__NUM_IRQ, PB_SYS_STATS_INTERRUPT_COUNT__IRQ, 4);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_INTERRUPT_COUNT__COUNT), 7);
	ASSERT_EQ(pst_u64(sys.data, sys.size, PB_SYS_STATS__NUM_SOFTIRQ_TOTAL), 1020036);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__NUM_SOFTIRQ), 10);
	e = pst_must_find(&sys, PB_SYS_STATS__NUM_SOFTIRQ, PB_SYS_STATS_INTERRUPT_COUNT__IRQ, 7);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_INTERRUPT_COUNT__COUNT), 470381);
	ASSERT_EQ(pst_u64(sys.data, sys.size, PB_SYS_STATS__NUM_FORKS), 92364);

	/* cpufreq: one value per cpuN directory, 0 where the file is missing. */
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__CPUFREQ_KHZ), 3);
	{
		static const uint64_t want[] = {1017600, 2400000, 0};
		struct pz_field f;

		for (i = 0; i < 3; i++) {
			ASSERT_TRUE(pst_get(sys.data, sys.size, PB_SYS_STATS__CPUFREQ_KHZ, i, &f));
			ASSERT_U64_EQ(f.value, want[i]);
		}
	}

	/* buddyinfo, diskstats, psi, thermal, cpuidle, devfreq. */
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__BUDDY_INFO), 2);
	ASSERT_TRUE(pst_get(sys.data, sys.size, PB_SYS_STATS__BUDDY_INFO, 1, &e));
	pst_str_eq(e.data, e.size, PB_SYS_STATS_BUDDY_INFO__NODE, 0, "0");
	pst_str_eq(e.data, e.size, PB_SYS_STATS_BUDDY_INFO__ZONE, 0, "DMA32");
	ASSERT_EQ(pst_count(e.data, e.size, PB_SYS_STATS_BUDDY_INFO__ORDER_PAGES), 11);
	ASSERT_TRUE(pst_get(e.data, e.size, PB_SYS_STATS_BUDDY_INFO__ORDER_PAGES, 10, &sub));
	ASSERT_EQ(sub.value, 752);

	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__DISK_STAT), 2);
	ASSERT_TRUE(pst_get(sys.data, sys.size, PB_SYS_STATS__DISK_STAT, 0, &e));
	pst_str_eq(e.data, e.size, PB_SYS_STATS_DISK_STAT__DEVICE_NAME, 0, "vda");
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DISK_STAT__READ_SECTORS), 412346);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DISK_STAT__READ_TIME_MS), 2519);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DISK_STAT__WRITE_SECTORS), 1203440);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DISK_STAT__WRITE_TIME_MS), 30144);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DISK_STAT__DISCARD_SECTORS), 80);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DISK_STAT__DISCARD_TIME_MS), 5);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DISK_STAT__FLUSH_COUNT), 1200);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DISK_STAT__FLUSH_TIME_MS), 60);
	ASSERT_TRUE(pst_get(sys.data, sys.size, PB_SYS_STATS__DISK_STAT, 1, &e));
	pst_str_eq(e.data, e.size, PB_SYS_STATS_DISK_STAT__DEVICE_NAME, 0, "loop0");
	/* A pre-4.18 line (no discard/flush columns) has only what it holds. */
	ASSERT_FALSE(pst_has(e.data, e.size, PB_SYS_STATS_DISK_STAT__DISCARD_SECTORS));
	ASSERT_FALSE(pst_has(e.data, e.size, PB_SYS_STATS_DISK_STAT__FLUSH_TIME_MS));

	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__PSI), 6);
	e = pst_must_find(&sys, PB_SYS_STATS__PSI, PB_SYS_STATS_PSI_SAMPLE__RESOURCE,
			  PBE_SYS_STATS_PSI_SAMPLE_PSI_RESOURCE__PSI_RESOURCE_IO_FULL);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_PSI_SAMPLE__TOTAL_NS), 9777871000ull);
	e = pst_must_find(&sys, PB_SYS_STATS__PSI, PB_SYS_STATS_PSI_SAMPLE__RESOURCE,
			  PBE_SYS_STATS_PSI_SAMPLE_PSI_RESOURCE__PSI_RESOURCE_MEMORY_FULL);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_PSI_SAMPLE__TOTAL_NS), 7000);

	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__THERMAL_ZONE), 1);
	ASSERT_TRUE(pst_get(sys.data, sys.size, PB_SYS_STATS__THERMAL_ZONE, 0, &e));
	pst_str_eq(e.data, e.size, PB_SYS_STATS_THERMAL_ZONE__NAME, 0, "thermal_zone0");
	pst_str_eq(e.data, e.size, PB_SYS_STATS_THERMAL_ZONE__TYPE, 0, "cpu-thermal");
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_THERMAL_ZONE__TEMP), 45);

	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__CPUIDLE_STATE), 1);
	e = pst_must_find(&sys, PB_SYS_STATS__CPUIDLE_STATE, PB_SYS_STATS_CPU_IDLE_STATE__CPU_ID, 0);
	ASSERT_EQ(pst_count(e.data, e.size, PB_SYS_STATS_CPU_IDLE_STATE__CPUIDLE_STATE_ENTRY), 2);
	ASSERT_TRUE(pst_get(e.data, e.size, PB_SYS_STATS_CPU_IDLE_STATE__CPUIDLE_STATE_ENTRY, 1,
			    &sub));
	pst_str_eq(sub.data, sub.size, PB_SYS_STATS_CPU_IDLE_STATE_ENTRY__STATE, 0, "cpu-sleep-0");
	ASSERT_EQ(pst_u64(sub.data, sub.size, PB_SYS_STATS_CPU_IDLE_STATE_ENTRY__DURATION_US),
		  98765);

	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__DEVFREQ), 1);
	ASSERT_TRUE(pst_get(sys.data, sys.size, PB_SYS_STATS__DEVFREQ, 0, &e));
	pst_str_eq(e.data, e.size, PB_SYS_STATS_DEVFREQ_VALUE__KEY, 0, "gpu0");
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DEVFREQ_VALUE__VALUE), 585000000);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__GPUFREQ_MHZ), 0);
	free(p.data);

	/* Tick 1: only the 500 ms section; tick 2: everything again. */
	p = pst_ss_poll(&st, 1 << SS_STAT);
	sys = pst_payload(&p, PB_TRACE_PACKET__SYS_STATS);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__MEMINFO), 0);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__CPU_STAT), 2);
	free(p.data);
	p = pst_ss_poll(&st, all);
	sys = pst_payload(&p, PB_TRACE_PACKET__SYS_STATS);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__MEMINFO), 6);
	free(p.data);
	ss_fini(&st);
}

TEST(ss_default_counters_and_bad_periods)
{
	Perfetto__Protos__SysStatsConfig cfg = PERFETTO__PROTOS__SYS_STATS_CONFIG__INIT;
	Perfetto__Protos__SysStatsConfig__StatCounters forks =
		PBE_SYS_STATS_CONFIG_STAT_COUNTERS__STAT_FORK_COUNT;
	struct pz_field sys;
	struct ss_state st;
	struct pst_pkt p;

	/* No counter list: every known meminfo/vmstat key in the file. */
	cfg.meminfo_period_ms = 5; /* raised to SS_MIN_PERIOD_MS */
	cfg.vmstat_period_ms = 10;
	cfg.stat_period_ms = 20;
	cfg.n_stat_counters = 1;
	cfg.stat_counters = &forks;
	ASSERT_EQ(ss_init(&st, PROC_FIXTURE, &cfg), 0);
	ASSERT_EQ(ss_tick_period_ms(&st), SS_MIN_PERIOD_MS);
	p = pst_ss_poll(&st, (1 << SS_MEMINFO) | (1 << SS_VMSTAT) | (1 << SS_STAT));
	sys = pst_payload(&p, PB_TRACE_PACKET__SYS_STATS);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__MEMINFO), 15);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__VMSTAT), 6);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__VMSTAT,
			 PBE_VMSTAT_COUNTERS__VMSTAT_NR_ZONE_INACTIVE_ANON),
		  1256);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__CPU_STAT), 0);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__NUM_IRQ_TOTAL), 0);
	ASSERT_EQ(pst_u64(sys.data, sys.size, PB_SYS_STATS__NUM_FORKS), 92364);
	free(p.data);
	ss_fini(&st);

	/* 1000 and 1500 are not multiples of each other: nothing is polled. */
	cfg.meminfo_period_ms = 1000;
	cfg.vmstat_period_ms = 1500;
	cfg.stat_period_ms = 0;
	ASSERT_EQ(ss_init(&st, PROC_FIXTURE, &cfg), -EINVAL);
	ASSERT_EQ(ss_tick_period_ms(&st), 0);
	ss_fini(&st);

	/* No config, or a root without files: polls write only timestamps. */
	ASSERT_EQ(ss_init(&st, PROC_FIXTURE, NULL), 0);
	ASSERT_EQ(ss_tick_period_ms(&st), 0);
	ss_fini(&st);
	cfg.vmstat_period_ms = 1000;
	ASSERT_EQ(ss_init(&st, "/nonexistent-root", &cfg), 0);
	p = pst_ss_poll(&st, 0);
	sys = pst_payload(&p, PB_TRACE_PACKET__SYS_STATS);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__MEMINFO), 0);
	free(p.data);
	ss_fini(&st);
	ss_fini(NULL);

	ASSERT_STREQ(ss_meminfo_key(PBE_MEMINFO_COUNTERS__MEMINFO_ACTIVE_ANON), "Active(anon)");
	ASSERT_TRUE(ss_meminfo_key(9999) == NULL);
}

TEST(ss_parsers_hostile_input)
{
	Perfetto__Protos__SysStatsConfig cfg = PERFETTO__PROTOS__SYS_STATS_CONFIG__INIT;
	static const char stat[] = "cpu0 1 2\ncpuX 5 5 5\ncpu\nintr\nsoftirq 9\nprocesses\n"
				   "cpu99999999999999999999 1\n";
	struct pz_field sys, e;
	struct ss_state st;
	struct pst_ctx x;
	struct pst_pkt p;
	struct pz_msg m;
	char junk[512];
	size_t i, cut;

	cfg.stat_period_ms = 100;
	cfg.meminfo_period_ms = 100;
	ASSERT_EQ(ss_init(&st, PROC_FIXTURE, &cfg), 0);
	pst_begin(&x);
	pz_begin_nested(&x.root, PB_TRACE_PACKET__SYS_STATS, &m);
	ss_parse_stat(&st, stat, strlen(stat), &m);
	pz_end(&m);
	p = pst_end(&x);
	sys = pst_payload(&p, PB_TRACE_PACKET__SYS_STATS);
	/* A short cpu line still yields its CPU, the rest read as 0. */
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__CPU_STAT), 1);
	e = pst_must_find(&sys, PB_SYS_STATS__CPU_STAT, PB_SYS_STATS_CPU_TIMES__CPU_ID, 0);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__USER_NICE_NS),
		      2 * pst_ns_per_tick());
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__STEAL_NS), 0);
	ASSERT_EQ(pst_u64(sys.data, sys.size, PB_SYS_STATS__NUM_SOFTIRQ_TOTAL), 9);
	ASSERT_FALSE(pst_has(sys.data, sys.size, PB_SYS_STATS__NUM_IRQ_TOTAL));
	ASSERT_FALSE(pst_has(sys.data, sys.size, PB_SYS_STATS__NUM_FORKS));
	free(p.data);

	/* Pseudo-random bytes and every prefix of real files: no crash, the
	 * output stays a well-formed message. */
	srand(42);
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i % 7 == 0 ? '\n' : i % 5 == 0 ? ' ' : rand());
	for (cut = 0; cut <= sizeof(junk); cut += 37) {
		pst_begin(&x);
		pz_begin_nested(&x.root, PB_TRACE_PACKET__SYS_STATS, &m);
		ss_parse_meminfo(&st, junk, cut, &m);
		ss_parse_vmstat(&st, junk, cut, &m);
		ss_parse_stat(&st, junk, cut, &m);
		ss_parse_buddyinfo(junk, cut, &m);
		ss_parse_diskstats(junk, cut, &m);
		ss_parse_psi(junk, cut, 1, 2, &m);
		ss_parse_slabinfo(junk, cut, &m);
		ss_parse_stat(&st, stat, cut % sizeof(stat), &m);
		pz_end(&m);
		p = pst_end(&x);
		sys = pst_payload(&p, PB_TRACE_PACKET__SYS_STATS);
		(void)pst_count(sys.data, sys.size, PB_SYS_STATS__CPU_STAT);
		free(p.data);
	}
	ss_fini(&st);
}

TEST(ss_live_meminfo_and_cpus)
{
	Perfetto__Protos__SysStatsConfig cfg = PERFETTO__PROTOS__SYS_STATS_CONFIG__INIT;
	struct pz_field sys;
	struct ss_state st;
	struct pst_pkt p;
	int mask;

	cfg.meminfo_period_ms = 100;
	cfg.stat_period_ms = 100;
	cfg.vmstat_period_ms = 100;
	cfg.cpufreq_period_ms = 100;
	ASSERT_EQ(ss_init(&st, "/", &cfg), 0);
	mask = (1 << SS_MEMINFO) | (1 << SS_VMSTAT) | (1 << SS_STAT);
	if (st.has_cpufreq)
		mask |= 1 << SS_CPUFREQ;
	p = pst_ss_poll(&st, mask);
	sys = pst_payload(&p, PB_TRACE_PACKET__SYS_STATS);
	ASSERT_GT(pst_kv(&sys, PB_SYS_STATS__MEMINFO, PBE_MEMINFO_COUNTERS__MEMINFO_MEM_TOTAL), 0);
	ASSERT_GT(pst_kv(&sys, PB_SYS_STATS__VMSTAT, PBE_VMSTAT_COUNTERS__VMSTAT_NR_FREE_PAGES), 0);
	/* /proc/stat lists the online CPUs. */
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__CPU_STAT), sysconf(_SC_NPROCESSORS_ONLN));
	ASSERT_GT(pst_u64(sys.data, sys.size, PB_SYS_STATS__NUM_FORKS), 0);
	ASSERT_EQ(st.n_cpus, sysconf(_SC_NPROCESSORS_CONF));
	if (st.has_cpufreq)
		ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__CPUFREQ_KHZ), st.n_cpus);
	else
		ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__CPUFREQ_KHZ), 0);
	free(p.data);
	ss_fini(&st);
}

/* ---------------------------------------------------------- system_info ---- */

TEST(si_cpu_info_fixture)
{
	struct pz_field ci, cpu, arm, f;
	struct pst_ctx x;
	struct pst_pkt p;

	pst_begin(&x);
	ASSERT_EQ(si_write_cpu_info(PROC_FIXTURE, &x.root), 3);
	p = pst_end(&x);
	ASSERT_GT(pst_u64(p.data, p.len, PB_TRACE_PACKET__TIMESTAMP), 0);
	ci = pst_payload(&p, PB_TRACE_PACKET__CPU_INFO);
	ASSERT_EQ(pst_count(ci.data, ci.size, PB_CPU_INFO__CPUS), 3);

	ASSERT_TRUE(pst_get(ci.data, ci.size, PB_CPU_INFO__CPUS, 0, &cpu));
	pst_str_eq(cpu.data, cpu.size, PB_CPU_INFO_CPU__PROCESSOR, 0,
		   "AArch64 Processor rev 4 (aarch64)");
	/* available + boost, sorted, without the duplicate 1800000. */
	ASSERT_EQ(pst_count(cpu.data, cpu.size, PB_CPU_INFO_CPU__FREQUENCIES), 4);
	{
		static const uint64_t want[] = {300000, 1017600, 1800000, 2016000};

		for (int i = 0; i < 4; i++) {
			ASSERT_TRUE(pst_get(cpu.data, cpu.size, PB_CPU_INFO_CPU__FREQUENCIES, i, &f));
			ASSERT_U64_EQ(f.value, want[i]);
		}
	}
	ASSERT_EQ(pst_u64(cpu.data, cpu.size, PB_CPU_INFO_CPU__CAPACITY), 381);
	ASSERT_TRUE(pst_get(cpu.data, cpu.size, PB_CPU_INFO_CPU__ARM_IDENTIFIER, 0, &arm));
	ASSERT_EQ(pst_u64(arm.data, arm.size, PB_CPU_INFO_ARM_CPU_IDENTIFIER__IMPLEMENTER), 0x41);
	ASSERT_EQ(pst_u64(arm.data, arm.size, PB_CPU_INFO_ARM_CPU_IDENTIFIER__ARCHITECTURE), 8);
	ASSERT_EQ(pst_u64(arm.data, arm.size, PB_CPU_INFO_ARM_CPU_IDENTIFIER__VARIANT), 1);
	ASSERT_EQ(pst_u64(arm.data, arm.size, PB_CPU_INFO_ARM_CPU_IDENTIFIER__PART), 0xd05);
	ASSERT_EQ(pst_u64(arm.data, arm.size, PB_CPU_INFO_ARM_CPU_IDENTIFIER__REVISION), 0);
	ASSERT_EQ(pst_u64(cpu.data, cpu.size, PB_CPU_INFO_CPU__FEATURES), SI_FEATURE_MTE);

	ASSERT_TRUE(pst_get(ci.data, ci.size, PB_CPU_INFO__CPUS, 1, &cpu));
	ASSERT_EQ(pst_count(cpu.data, cpu.size, PB_CPU_INFO_CPU__FREQUENCIES), 2);
	ASSERT_EQ(pst_u64(cpu.data, cpu.size, PB_CPU_INFO_CPU__CAPACITY), 1024);
	ASSERT_TRUE(pst_get(cpu.data, cpu.size, PB_CPU_INFO_CPU__ARM_IDENTIFIER, 0, &arm));
	ASSERT_EQ(pst_u64(arm.data, arm.size, PB_CPU_INFO_ARM_CPU_IDENTIFIER__PART), 0xd41);
	ASSERT_EQ(pst_u64(arm.data, arm.size, PB_CPU_INFO_ARM_CPU_IDENTIFIER__REVISION), 1);
	ASSERT_EQ(pst_u64(cpu.data, cpu.size, PB_CPU_INFO_CPU__FEATURES),
		  SI_FEATURE_MTE | SI_FEATURE_MTE3);

	/* cpu2: no cpufreq, unparsable capacity, partial Arm id: all left out. */
	ASSERT_TRUE(pst_get(ci.data, ci.size, PB_CPU_INFO__CPUS, 2, &cpu));
	pst_str_eq(cpu.data, cpu.size, PB_CPU_INFO_CPU__PROCESSOR, 0,
		   "AArch64 Processor rev 4 (aarch64)");
	ASSERT_FALSE(pst_has(cpu.data, cpu.size, PB_CPU_INFO_CPU__FREQUENCIES));
	ASSERT_FALSE(pst_has(cpu.data, cpu.size, PB_CPU_INFO_CPU__CAPACITY));
	ASSERT_FALSE(pst_has(cpu.data, cpu.size, PB_CPU_INFO_CPU__ARM_IDENTIFIER));
	ASSERT_FALSE(pst_has(cpu.data, cpu.size, PB_CPU_INFO_CPU__FEATURES));
	free(p.data);

	/* No cpuinfo: an error and nothing written. */
	pst_begin(&x);
	ASSERT_EQ(si_write_cpu_info("/nonexistent-root", &x.root), -ENOENT);
	p = pst_end(&x);
	ASSERT_EQ(p.len, 0);
	free(p.data);
}

struct pst_cpus {
	int n;
	uint32_t index[8];
	char processor[8][64];
	uint64_t features[8];
};

static int pst_collect_cpu(const struct si_cpu *cpu, void *user)
{
	struct pst_cpus *c = user;

	if (c->n < 8) {
		c->index[c->n] = cpu->index;
		snprintf(c->processor[c->n], sizeof(c->processor[0]), "%.*s",
			 (int)cpu->processor.len, cpu->processor.ptr);
		c->features[c->n] = cpu->features;
	}
	c->n++;
	return 0;
}

static int pst_stop_cpu(const struct si_cpu *cpu, void *user)
{
	(void)cpu;
	(void)user;
	return -ECANCELED;
}

TEST(si_parse_cpuinfo_x86_and_hostile)
{
	static const char x86[] = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n"
				  "flags\t\t: fpu vme mte\n\nprocessor\t: 1\nmodel name\t: AMD EPYC\n"
				  "flags\t\t: fpu\n\n";
	static const char odd[] = "processor : x\nFeatures : mte\n\nprocessor : 3\nprocessor : 4\n"
				  "Features : mte3 mte3\n:\n::\nCPU part : 0xzz\n";
	struct pst_cpus c;
	size_t cut;

	memset(&c, 0, sizeof(c));
	ASSERT_EQ(si_parse_cpuinfo(x86, strlen(x86), pst_collect_cpu, &c), 2);
	ASSERT_EQ(c.index[1], 1);
	/* No Arm "Processor" key: the model name. x86 "flags" is not "Flags". */
	ASSERT_STREQ(c.processor[0], "AMD EPYC");
	ASSERT_EQ(c.features[0], 0);

	/* A bad index drops its block; a block without a blank line still ends. */
	memset(&c, 0, sizeof(c));
	ASSERT_EQ(si_parse_cpuinfo(odd, strlen(odd), pst_collect_cpu, &c), 2);
	ASSERT_EQ(c.index[0], 3);
	ASSERT_STREQ(c.processor[0], "unknown");
	ASSERT_EQ(c.index[1], 4);
	ASSERT_EQ(c.features[1], SI_FEATURE_MTE3);

	ASSERT_EQ(si_parse_cpuinfo(x86, strlen(x86), pst_stop_cpu, NULL), -ECANCELED);
	for (cut = 0; cut <= strlen(odd); cut++) {
		memset(&c, 0, sizeof(c));
		ASSERT_GE(si_parse_cpuinfo(odd, cut, pst_collect_cpu, &c), 0);
	}
}

TEST(si_live_cpu_info)
{
	struct pz_field ci;
	struct pst_ctx x;
	struct pst_pkt p;

	pst_begin(&x);
	ASSERT_EQ(si_write_cpu_info("/", &x.root), sysconf(_SC_NPROCESSORS_ONLN));
	p = pst_end(&x);
	ci = pst_payload(&p, PB_TRACE_PACKET__CPU_INFO);
	ASSERT_EQ(pst_count(ci.data, ci.size, PB_CPU_INFO__CPUS), sysconf(_SC_NPROCESSORS_ONLN));
	free(p.data);
}
