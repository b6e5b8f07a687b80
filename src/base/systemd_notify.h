/* SPDX-License-Identifier: Apache-2.0 */
/*
 * systemd_notify.h - readiness for systemd's Type=notify services: the
 * daemons say "READY=1" on $NOTIFY_SOCKET once they serve, so units that
 * come after them start when the sockets accept. The protocol is one
 * datagram on a Unix socket (a path, or '@' for an abstract name);
 * nothing from libsystemd is needed.
 */
#ifndef PFC_BASE_SYSTEMD_NOTIFY_H
#define PFC_BASE_SYSTEMD_NOTIFY_H

/**
 * systemd_notify_ready() - Send "READY=1" to $NOTIFY_SOCKET and unset it
 * (our children are not the service).
 * Return: 0, -ENOENT if NOTIFY_SOCKET is not set (not under systemd),
 * -EINVAL for a name that is not a Unix socket, or -errno of sendto().
 */
int systemd_notify_ready(void);

#endif
