/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_query.h - printing the service state for `perfetto --query`, in
 * Perfetto's layout (cmd_query.c).
 */
#ifndef PFC_PERFETTO_CMD_CMD_QUERY_H
#define PFC_PERFETTO_CMD_CMD_QUERY_H

#include <stdbool.h>
#include <stdio.h>

#include "common/tracing_service_state.pb-c.h"
#include "config/trace_config.pb-c.h"

/**
 * cmd_query_print() - Print @st as `perfetto --query` does.
 * @f: where to.  @st: the state (borrowed).  @is_long: --long (do not cut
 * the category lists).
 */
void cmd_query_print(FILE *f, const Perfetto__Protos__TracingServiceState *st, bool is_long);

/** cmd_query_has_remote_producers() - True if a producer is on another machine. */
bool cmd_query_has_remote_producers(const Perfetto__Protos__TracingServiceState *st);

/**
 * cmd_query_unselected_machines() - Other machines that offer a data source
 * @cfg asks for, where @cfg records it only on the host (no
 * trace_all_machines, no machine_name_filter naming them): the most common
 * multi-machine mistake.
 * @names: filled with the machines' names, quoted and comma-separated.
 * Return: how many machines.
 */
size_t cmd_query_unselected_machines(const Perfetto__Protos__TracingServiceState *st,
				     const Perfetto__Protos__TraceConfig *cfg, char *names,
				     size_t size);

#endif
