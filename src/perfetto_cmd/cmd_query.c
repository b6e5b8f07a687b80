// SPDX-License-Identifier: Apache-2.0
/*
 * cmd_query.c - `perfetto --query`: the service state as Perfetto prints
 * it, column for column, so scripts and eyes used to upstream's output read
 * ours the same way. A MACHINE column appears only when some producer is on
 * another machine (connected through traced_relay), as in Perfetto v56+.
 */
#include "perfetto_cmd/cmd_query.h"

#include <string.h>
#include <unistd.h>

/* Data source details (categories) are cut here unless --long. */
#define CATS_SHORT_LEN 40

/* A producer's machine as shown: its name, else its id in hex; "" = host. */
static void machine_label(const Perfetto__Protos__TracingServiceState__Producer *p, char *buf,
			  size_t size)
{
	buf[0] = '\0';
	if (!p || !p->has_machine_id || p->machine_id == 0)
		return;
	if (p->machine_name && *p->machine_name)
		snprintf(buf, size, "%s", p->machine_name);
	else
		snprintf(buf, size, "0x%x", p->machine_id);
}

static const char *str(const char *s)
{
	return s ? s : "";
}

static const Perfetto__Protos__TracingServiceState__Producer *
find_producer(const Perfetto__Protos__TracingServiceState *st, int32_t id)
{
	size_t i;

	for (i = 0; i < st->n_producers; i++) {
		if (st->producers[i]->id == id)
			return st->producers[i];
	}
	return NULL;
}

/* The categories a data source offers (track event or atrace), comma-separated. */
static void categories(const Perfetto__Protos__DataSourceDescriptor *d, bool is_long, FILE *f)
{
	char cats[4096];
	size_t n = 0, i;

	cats[0] = '\0';
	if (d && d->track_event_descriptor) {
		const Perfetto__Protos__TrackEventDescriptor *t = d->track_event_descriptor;

		for (i = 0; i < t->n_available_categories; i++) {
			int w = snprintf(cats + n, sizeof(cats) - n, "%s%s", n ? "," : "",
					 str(t->available_categories[i]->name));
			if (w < 0 || (size_t)w >= sizeof(cats) - n)
				break;
			n += (size_t)w;
		}
	} else if (d && d->ftrace_descriptor) {
		const Perfetto__Protos__FtraceDescriptor *t = d->ftrace_descriptor;

		for (i = 0; i < t->n_atrace_categories; i++) {
			int w = snprintf(cats + n, sizeof(cats) - n, "%s%s", n ? "," : "",
					 str(t->atrace_categories[i]->name));
			if (w < 0 || (size_t)w >= sizeof(cats) - n)
				break;
			n += (size_t)w;
		}
	}
	if (!is_long && n > CATS_SHORT_LEN) {
		cats[CATS_SHORT_LEN] = '\0';
		fprintf(f, "%s... (use --long to expand)\n", cats);
		return;
	}
	fprintf(f, "%s\n", cats);
}

bool cmd_query_has_remote_producers(const Perfetto__Protos__TracingServiceState *st)
{
	size_t i;

	for (i = 0; i < st->n_producers; i++) {
		if (st->producers[i]->has_machine_id && st->producers[i]->machine_id != 0)
			return true;
	}
	return false;
}

void cmd_query_print(FILE *f, const Perfetto__Protos__TracingServiceState *st, bool is_long)
{
	bool remote = cmd_query_has_remote_producers(st);
	char m[64], who[128];
	size_t i;

	fprintf(f, "\x1b[31mNot meant for machine consumption. Use --query-raw for "
		   "scripts.\x1b[0m\n\n");
	fprintf(f, "Service: %s\nTracing sessions: %d (started: %d)\n",
		str(st->tracing_service_version), st->num_sessions, st->num_sessions_started);

	fprintf(f, "\n\nPRODUCER PROCESSES CONNECTED:\n\n");
	if (remote)
		fprintf(f, "ID     PID      UID      FLAGS  MACHINE              NAME"
			   "                                       SDK\n"
			   "==     ===      ===      =====  =======              ===="
			   "                                       ===\n");
	else
		fprintf(f, "ID     PID      UID      FLAGS  NAME"
			   "                                       SDK\n"
			   "==     ===      ===      =====  ===="
			   "                                       ===\n");
	for (i = 0; i < st->n_producers; i++) {
		const Perfetto__Protos__TracingServiceState__Producer *p = st->producers[i];
		const char *flags = p->frozen ? "F" : "";

		if (remote) {
			machine_label(p, m, sizeof(m));
			fprintf(f, "%-6d %-8d %-8d %-6s %-20s %-42s %s\n", p->id, p->pid, p->uid, flags,
				m[0] ? m : "(host)", str(p->name), str(p->sdk_version));
		} else {
			fprintf(f, "%-6d %-8d %-8d %-6s %-42s %s\n", p->id, p->pid, p->uid, flags,
				str(p->name), str(p->sdk_version));
		}
	}

	fprintf(f, "\n\nDATA SOURCES REGISTERED:\n\n");
	if (remote)
		fprintf(f, "NAME                                     PRODUCER                     "
			   "MACHINE              DETAILS\n"
			   "===                                      ========                     "
			   "=======              ========\n");
	else
		fprintf(f, "NAME                                     PRODUCER                     "
			   "DETAILS\n"
			   "===                                      ========                     "
			   "========\n");
	for (i = 0; i < st->n_data_sources; i++) {
		const Perfetto__Protos__TracingServiceState__DataSource *d = st->data_sources[i];
		const Perfetto__Protos__TracingServiceState__Producer *p =
			find_producer(st, d->producer_id);
		const char *name = d->ds_descriptor ? str(d->ds_descriptor->name) : "";

		who[0] = '\0';
		if (p)
			snprintf(who, sizeof(who), "%s (%d)", str(p->name), d->producer_id);
		machine_label(p, m, sizeof(m));
		if (remote)
			fprintf(f, "%-40s %-28s %-20s ", name, who, m[0] ? m : "(host)");
		else
			fprintf(f, "%-40s %-28s ", name, who);
		categories(d->ds_descriptor, is_long, f);
	}

	if (!st->supports_tracing_sessions)
		return;
	fprintf(f, "\n\nTRACING SESSIONS:\n\n"
		   "ID      UID     STATE      BUF (#) KB   DUR (s)   #DS  STARTED  NAME\n"
		   "===     ===     =====      ==========   =======   ===  =======  ====\n");
	for (i = 0; i < st->n_tracing_sessions; i++) {
		const Perfetto__Protos__TracingServiceState__TracingSession *t =
			st->tracing_sessions[i];
		uint32_t kb = 0;
		int sec = (int)((t->start_realtime_ns / 1000000000) % 86400);
		size_t b;

		for (b = 0; b < t->n_buffer_size_kb; b++)
			kb += t->buffer_size_kb[b];
		fprintf(f, "%-7llu %-7d %-10s (%d) %-8u %-9u %-4u %02d:%02d:%02d %s\n",
			(unsigned long long)t->id, t->consumer_uid, str(t->state),
			(int)t->n_buffer_size_kb, kb, t->duration_ms / 1000, t->num_data_sources,
			sec / 3600, (sec % 3600) / 60, sec % 60, str(t->unique_session_name));
	}
	if ((int)st->n_tracing_sessions != st->num_sessions && geteuid() != 0)
		fprintf(f, "\nNOTE: Some tracing sessions are not reported in the list above.\n"
			   "This is likely because they are owned by a different UID.\n"
			   "If you want to list all session, run again this command as root.\n");
}

/* True if @cds would start on a producer of machine @name (not the host). */
static bool selects_remote(const Perfetto__Protos__TraceConfig *cfg,
			   const Perfetto__Protos__TraceConfig__DataSource *cds, const char *name)
{
	size_t i;

	if (cds->n_machine_name_filter == 0)
		return cfg->has_trace_all_machines && cfg->trace_all_machines;
	for (i = 0; i < cds->n_machine_name_filter; i++) {
		if (strcmp(cds->machine_name_filter[i], name) == 0)
			return true;
	}
	return false;
}

size_t cmd_query_unselected_machines(const Perfetto__Protos__TracingServiceState *st,
				     const Perfetto__Protos__TraceConfig *cfg, char *names,
				     size_t size)
{
	size_t i, k, n = 0, used = 0;

	if (size)
		names[0] = '\0';
	for (i = 0; i < st->n_data_sources; i++) {
		const Perfetto__Protos__TracingServiceState__DataSource *d = st->data_sources[i];
		const Perfetto__Protos__TracingServiceState__Producer *p =
			find_producer(st, d->producer_id);
		char m[64], quoted[68];
		bool wanted = false, selected = false;

		if (!p || !p->has_machine_id || p->machine_id == 0 || !d->ds_descriptor ||
		    !d->ds_descriptor->name)
			continue;
		machine_label(p, m, sizeof(m));
		for (k = 0; k < cfg->n_data_sources; k++) {
			const Perfetto__Protos__TraceConfig__DataSource *cds = cfg->data_sources[k];

			if (!cds->config || !cds->config->name ||
			    strcmp(cds->config->name, d->ds_descriptor->name) != 0)
				continue;
			wanted = true;
			selected |= selects_remote(cfg, cds, str(p->machine_name));
		}
		snprintf(quoted, sizeof(quoted), "'%s'", m);
		if (!wanted || selected || strstr(names, quoted))
			continue;
		/* One mention per machine, comma-separated. */
		if (used + strlen(quoted) + 2 < size)
			used += (size_t)snprintf(names + used, size - used, "%s%s", n ? ", " : "",
						 quoted);
		n++;
	}
	return n;
}
