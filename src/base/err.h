/* SPDX-License-Identifier: Apache-2.0 */
/*
 * err.h - the error convention: functions return >= 0 on success and a
 * negative errno value on failure. These helpers convert at the syscall
 * boundary and turn codes into text.
 */
#ifndef PFC_BASE_ERR_H
#define PFC_BASE_ERR_H

#include <errno.h>

/* Returns -errno, or -EIO if errno was not set (never 0). */
static inline int err_from_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/* strerror() for a negative (or positive) errno code; thread-safe. */
const char *err_str(int err);

#endif
