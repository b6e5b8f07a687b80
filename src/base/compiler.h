/* SPDX-License-Identifier: Apache-2.0 */
/*
 * compiler.h - the few GNU attributes and helpers the internal code uses,
 * wrapped so every file spells them the same way.
 */
#ifndef PFC_BASE_COMPILER_H
#define PFC_BASE_COMPILER_H

#include <stddef.h>

#define PFC_EXPORT __attribute__((visibility("default")))
#define PFC_PRINTF(fmt_idx, args_idx) __attribute__((format(printf, fmt_idx, args_idx)))
#define PFC_NORETURN __attribute__((noreturn))
#define PFC_UNUSED __attribute__((unused))
#define PFC_WARN_UNUSED __attribute__((warn_unused_result))
#define PFC_LIKELY(x) __builtin_expect(!!(x), 1)
#define PFC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define PFC_ALWAYS_INLINE inline __attribute__((always_inline))
/* A hint to load @p's cache line for reading; never faults. */
#define PFC_PREFETCH(p) __builtin_prefetch(p)

#define PFC_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define PFC_MIN(a, b) ((a) < (b) ? (a) : (b))
#define PFC_MAX(a, b) ((a) > (b) ? (a) : (b))
#define PFC_CONTAINER_OF(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

/* Retries a syscall expression while it fails with EINTR. */
#define PFC_EINTR_RETRY(expr)                                                        \
	({                                                                           \
		__typeof__(expr) r_;                                                 \
		do {                                                                 \
			r_ = (expr);                                                 \
		} while (r_ == -1 && errno == EINTR);                                \
		r_;                                                                  \
	})

#endif
