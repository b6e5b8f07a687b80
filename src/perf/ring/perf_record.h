/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf_record.h - parsing what the kernel writes into a perf ring buffer:
 * taking one record out of the ring (it may wrap) and decoding
 * PERF_RECORD_SAMPLE, LOST, THROTTLE, EXIT, FORK and MMAP2. The ring is written by the
 * kernel but treated as untrusted: every length is checked against the
 * record and the ring, and a malformed record is an error, never a read
 * past its end. Pure functions (no I/O), so tests feed them crafted bytes.
 */
#ifndef PFC_PERF_PERF_RECORD_H
#define PFC_PERF_PERF_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest record: the header's size field is 16 bits. */
#define PERF_RECORD_MAX_BYTES 65536u
#define PERF_MAX_FOLLOWER_COUNTS 16u
#define PERF_MAX_USER_REGS 32u

/* PERF_FORMAT_LOST: kernels from 6.0 count a leader's lost records in its
 * read_format (an enum constant, absent from older headers). */
#define PFC_PERF_FORMAT_LOST (1u << 4)

/* What the leader's attr asked for, so samples can be decoded. */
struct perf_sample_layout {
	uint64_t sample_type;
	uint64_t read_format;
	uint32_t n_followers; /* with PERF_FORMAT_GROUP */
	uint32_t n_user_regs; /* bits set in sample_regs_user */
};

/* A decoded sample. Pointers are views into the record bytes. */
struct perf_sample {
	uint32_t pid, tid;
	uint64_t ts;
	uint16_t cpu_mode; /* header.misc & PERF_RECORD_MISC_CPUMODE_MASK */
	uint64_t timebase_count;
	uint64_t follower_counts[PERF_MAX_FOLLOWER_COUNTS];
	uint32_t n_followers;
	const uint8_t *ips; /* n_ips little-endian u64, possibly unaligned */
	uint64_t n_ips;
	bool has_regs; /* false for kernel threads (abi NONE) */
	uint64_t regs[PERF_MAX_USER_REGS];
	const uint8_t *stack; /* the copied user stack from the sampled sp */
	uint64_t stack_bytes; /* dyn_size, clamped to what was copied */
};

#if defined(__x86_64__)
/* The stack pointer's index in perf_sample.regs (perf_regs.h order, with
 * the user register mask traced_perf asks for). */
#define PERF_SAMPLE_REG_SP 7
#endif

/* The user stack pointer of @s (where its stack copy starts); 0 if unknown. */
static inline uint64_t perf_sample_user_sp(const struct perf_sample *s)
{
#ifdef PERF_SAMPLE_REG_SP
	return s->has_regs ? s->regs[PERF_SAMPLE_REG_SP] : 0;
#else
	(void)s;
	return 0;
#endif
}

/* A process exit (attr.task). */
struct perf_exit {
	uint32_t pid, tid;
};

/* A thread's name set (attr.comm); @exec: by an execve (attr.comm_exec),
 * so the process is another program from here on. */
struct perf_comm {
	uint32_t pid, tid;
	bool exec;
};

/* A process or thread created (attr.task): a new process when pid != ppid. */
struct perf_fork {
	uint32_t pid, ppid, tid, ptid;
};

/* An executable mapping (attr.mmap + attr.mmap2). @path is a view into the
 * record, NUL-terminated inside it. With the build-id variant (misc bit
 * PERF_RECORD_MISC_MMAP_BUILD_ID) maj, min and ino are 0. */
struct perf_mmap2 {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	uint32_t prot, flags;
	const char *path;
};

enum perf_parse_err {
	PERF_PARSE_OK = 0,
	PERF_PARSE_TRUNCATED = -1, /* a field runs past the record */
	PERF_PARSE_BAD_VALUE = -2, /* a count or size that cannot be right */
};

/**
 * perf_ring_take() - The record at *@tail of a ring.
 * @data: the ring's data pages (@data_size bytes, a power of two).
 * @head: the kernel's data_head (read with acquire order by the caller).
 * @tail: our read position; advanced past the record on success, set to
 *        @head when the ring holds garbage (then -EBADMSG).
 * @scratch: at least PERF_RECORD_MAX_BYTES bytes, for a record that wraps.
 * @out_rec: the record: in place in the ring when it does not wrap (valid
 *           until the caller hands the space back to the kernel), else
 *           copied into @scratch.
 *
 * Return: the record's size (>= 8), 0 if the ring is empty, -EBADMSG for a
 * header whose size is < 8 or runs past @head.
 * Context: any; never allocates.
 */
int perf_ring_take(const uint8_t *data, uint64_t data_size, uint64_t head, uint64_t *tail,
		   uint8_t *scratch, const uint8_t **out_rec);
/* perf_ring_take() of the record types in @type_mask (bit 1 << type) only:
 * a record of another type is stepped over with *@out_rec NULL, never
 * copied (a side-band scan meets 64 KiB samples that wrap). */
int perf_ring_take_types(const uint8_t *data, uint64_t data_size, uint64_t head, uint64_t *tail,
			 uint8_t *scratch, uint64_t type_mask, const uint8_t **out_rec);

/* Decode a PERF_RECORD_SAMPLE (whole record, header included). */
enum perf_parse_err perf_parse_sample(const struct perf_sample_layout *l, const uint8_t *rec,
				      size_t len, struct perf_sample *out);
/*
 * perf_parse_read_lost() - From what read() of a leader opened with
 * @l->read_format (PFC_PERF_FORMAT_LOST set, else PERF_PARSE_BAD_VALUE)
 * returned, the records the kernel could not write into its ring so far:
 * all of them, also those no PERF_RECORD_LOST has reported yet (the kernel
 * writes one only before the next record that fits).
 */
enum perf_parse_err perf_parse_read_lost(const struct perf_sample_layout *l, const uint8_t *buf,
					 size_t len, uint64_t *out_lost);
/* PERF_RECORD_LOST: the number of lost records. */
enum perf_parse_err perf_parse_lost(const uint8_t *rec, size_t len, uint64_t *out_lost);
/* PERF_RECORD_EXIT. */
enum perf_parse_err perf_parse_exit(const uint8_t *rec, size_t len, struct perf_exit *out);

/* PERF_RECORD_COMM. */
enum perf_parse_err perf_parse_comm(const uint8_t *rec, size_t len, struct perf_comm *out);

/* PERF_RECORD_FORK. */
enum perf_parse_err perf_parse_fork(const uint8_t *rec, size_t len, struct perf_fork *out);
/* PERF_RECORD_MMAP2; PERF_PARSE_BAD_VALUE for a path without its NUL or
 * a mapping that wraps the address space. */
enum perf_parse_err perf_parse_mmap2(const uint8_t *rec, size_t len, struct perf_mmap2 *out);
/*
 * perf_sample_cut_len() / perf_sample_cut_stack() - @rec (@len bytes,
 * parsed into @s) with its user stack cut to its first @keep bytes
 * (at most s->stack_bytes, and what fits the field padded to 8, so the
 * result is never longer than @rec; 0 empties the field: size 0 and no dyn_size, as the
 * kernel writes it when it copies nothing), written to @out (cut_len
 * bytes). The kernel reserves the whole requested stack (64 KiB by
 * default) in every sample, whatever it could copy; dyn_size says what it
 * did, and only that is worth keeping. The result parses as a sample.
 */
size_t perf_sample_cut_len(const uint8_t *rec, size_t len, const struct perf_sample *s,
			   uint64_t keep);
void perf_sample_cut_stack(const uint8_t *rec, size_t len, const struct perf_sample *s,
			   uint64_t keep, uint8_t *out);

/* Record type and misc of a whole record (len >= 8). */
uint32_t perf_record_type(const uint8_t *rec);

/* The @i-th callchain address of @s. */
uint64_t perf_sample_ip(const struct perf_sample *s, uint64_t i);

#endif
