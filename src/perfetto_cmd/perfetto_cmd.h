/* SPDX-License-Identifier: Apache-2.0 */
/* perfetto_cmd.h - the `perfetto` command as a library (also tracebox's applet). */
#ifndef PFC_PERFETTO_CMD_PERFETTO_CMD_H
#define PFC_PERFETTO_CMD_PERFETTO_CMD_H

int perfetto_cmd_main(int argc, char **argv);

#endif
