// SPDX-License-Identifier: Apache-2.0
/* err.c - error codes to text for messages (see err.h for the convention). */
#include "base/err.h"

#include <string.h>

const char *err_str(int err)
{
	static __thread char buf[64];

	if (err < 0)
		err = -err;
	return strerror_r(err, buf, sizeof(buf));
}
