// SPDX-License-Identifier: Apache-2.0
/*
 * perf_record_fuzz.c - libFuzzer target for traced_perf's ring parsing:
 * the input (after a 4-byte layout prefix) is a ring of 2^k bytes with the
 * kernel's head at its end; every record taken out of it is decoded as a
 * sample, lost, exit, fork and mmap2 record, as the daemon does with what
 * the kernel (treated as untrusted) wrote; a decoded sample's stack is cut
 * as the reader thread cuts it (half and none of it) and the result must
 * parse again; the stack is walked with CFI rules made of its own bytes
 * (every read must stay inside the copy); a decoded mapping's path is read
 * to its end, and the mapping goes through the mmap log.
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "perf/unwind/cfi_rule.h"
#include "perf/unwind/mmap_log.h"
#include "perf/ring/perf_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t ring[4096], scratch[PERF_RECORD_MAX_BYTES], cut[PERF_RECORD_MAX_BYTES];
	const uint8_t *rec;
	struct perf_sample_layout l;
	struct perf_sample s;
	struct perf_exit ex;
	struct perf_comm cm;
	struct perf_fork fk;
	struct perf_mmap2 mm;
	struct mmap_log ml;
	struct buf text;
	uint64_t tail, head, lost;
	int len, guard = 0;

	if (size < 4)
		return 0;
	memset(&l, 0, sizeof(l));
	l.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_READ;
	if (data[0] & 1)
		l.sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (data[0] & 2)
		l.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	if (data[0] & 4)
		l.sample_type |= PERF_SAMPLE_RAW | PERF_SAMPLE_IP | PERF_SAMPLE_CPU;
	l.read_format = (data[0] & 8) ? PERF_FORMAT_GROUP : 0;
	l.n_followers = data[1] % 20;
	l.n_user_regs = data[2] % 40;
	tail = data[3];
	data += 4;
	size -= 4;
	if (size > sizeof(ring))
		size = sizeof(ring);
	memset(ring, 0, sizeof(ring));
	memcpy(ring, data, size);
	head = tail + size;
	mmap_log_init(&ml);
	buf_init(&text);
	while ((len = perf_ring_take(ring, sizeof(ring), head, &tail, scratch, &rec)) > 0 && guard++ < 4096) {
		if (perf_parse_sample(&l, rec, (size_t)len, &s) == PERF_PARSE_OK) {
			uint64_t keeps[2] = { s.stack_bytes / 2, 0 };
			struct perf_sample c;
			int i;

			for (i = 0; i < 2; i++) {
				size_t n = perf_sample_cut_len(rec, (size_t)len, &s, keeps[i]);

				if (n > (size_t)len)
					abort();
				perf_sample_cut_stack(rec, (size_t)len, &s, keeps[i], cut);
				if (perf_parse_sample(&l, cut, n, &c) != PERF_PARSE_OK ||
				    c.stack_bytes > keeps[i] || c.n_ips != s.n_ips || c.ts != s.ts)
					abort();
			}
			if (s.stack_bytes >= 16) {
				struct cfi_regs r = {.pc = 1, .bp_known = true};
				uint64_t rule, base;
				int k;

				memcpy(&rule, s.stack, 8);
				memcpy(&base, s.stack + 8, 8);
				r.sp = base + (rule & 0xff);
				r.bp = base ^ rule;
				for (k = 0; k < 128; k++)
					if (cfi_rule_step(rule | (1ull << 63), &r, s.stack,
							  (size_t)s.stack_bytes, base) != CFI_STEP_OK)
						break;
				rule = cfi_rule_pack(rule & 2, (int8_t)(rule >> 8), rule & 4,
						     (int8_t)(rule >> 16), (int)((rule >> 24) % 4),
						     (int8_t)(rule >> 32));
				cfi_rule_step(rule, &r, s.stack, (size_t)s.stack_bytes, base);
			}
		}
		perf_parse_lost(rec, (size_t)len, &lost);
		perf_parse_exit(rec, (size_t)len, &ex);
		perf_parse_comm(rec, (size_t)len, &cm);
		if (perf_parse_fork(rec, (size_t)len, &fk) == PERF_PARSE_OK)
			mmap_log_fork(&ml, fk.ppid % 8, fk.pid % 8);
		if (perf_parse_mmap2(rec, (size_t)len, &mm) == PERF_PARSE_OK) {
			struct mmap_log_map m = {.addr = mm.addr, .len = mm.len, .pgoff = mm.pgoff,
						 .maj = mm.maj, .min = mm.min, .ino = mm.ino,
						 .path = mm.path};

			mmap_log_add(&ml, mm.pid % 8, &m);
			mmap_log_maps_text(&ml, mm.pid % 8, &text);
		}
	}
	buf_fini(&text);
	mmap_log_fini(&ml);
	return 0;
}
