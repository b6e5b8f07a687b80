// SPDX-License-Identifier: Apache-2.0
/*
 * systemd_notify.c - "READY=1" on $NOTIFY_SOCKET (systemd_notify.h).
 */
#include "base/systemd_notify.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/sock.h"

int systemd_notify_ready(void)
{
	static const char msg[] = "READY=1";
	const char *name = getenv("NOTIFY_SOCKET");
	struct sock_addr addr;
	int fd, rc = 0;

	if (!name)
		return -ENOENT;
	if ((name[0] != '/' && name[0] != '@') || sock_addr_parse(name, &addr) ||
	    addr.family != AF_UNIX) {
		unsetenv("NOTIFY_SOCKET");
		return -EINVAL;
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL, (const struct sockaddr *)&addr.ss,
		   addr.len) < 0)
		rc = -errno;
	close(fd);
	unsetenv("NOTIFY_SOCKET");
	return rc;
}
