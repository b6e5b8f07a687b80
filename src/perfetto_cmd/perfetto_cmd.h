/* SPDX-License-Identifier: Apache-2.0 */
/* perfetto_cmd.h - the `perfetto` command as a library (also tracebox's applet). */
#ifndef PFC_PERFETTO_CMD_PERFETTO_CMD_H
#define PFC_PERFETTO_CMD_PERFETTO_CMD_H

#include <stddef.h>

int perfetto_cmd_main(int argc, char **argv);
/* `trigger_perfetto NAME...`. */
int trigger_perfetto_main(int argc, char **argv);
/* Sends ActivateTriggers for @names as a short-lived producer. Return: exit code. */
int cmd_send_triggers(const char *const *names, size_t n);

#endif
