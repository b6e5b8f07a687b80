// SPDX-License-Identifier: Apache-2.0
/*
 * clock_sync.c - what the tokenizer feeds the clock graph (clock.c)
 * and how it asks for trace time, machine by machine: ClockSnapshot
 * packets (in the clocks of the machine that wrote them), a relay's
 * RemoteClockSync rounds (the client's snapshots in its machine's clocks,
 * and one host<->client link per clock at the measured offset), the
 * clock_snapshot table (one row per clock of every snapshot that entered
 * the graph, at its trace time), the bridge Perfetto adds for a machine's
 * BOOTTIME on its first conversion when nothing relates it to trace time
 * yet, and the units and incremental encodings snapshots give clocks
 * (packet timestamps in them are scaled or accumulated to ns). Runs on
 * the tokenizer's thread, in file order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/common/common.h"

/* Rounds of one sync whose client BOOTTIMEs are this far apart are not paired. */
#define SYNC_ROUND_GAP_NS (30ull * 1000000000ull)

/* A clock a snapshot gave a unit other than ns, or an incremental encoding. */
struct clock_domain {
	int64_t unit_ns;
	int64_t last_ns;
	bool incremental;
};

struct tp_clock_sync {
	struct tp_clock_graph *graph;
	struct hmap bridged;            /* machine row -> 1 once its bridge is decided */
	bool host_bridged;              /* the same for the host */
	struct hmap domain_index;       /* clock id -> index in domains */
	struct clock_domain *domains;
	size_t n_domains, cap_domains;
};

int tp_clock_sync_init(struct tp_import *imp)
{
	struct tp_clock_sync *cs = calloc(1, sizeof(*cs));
	int rc;

	if (!cs)
		return -ENOMEM;
	rc = tp_clock_create(&cs->graph);
	if (rc < 0) {
		free(cs);
		return rc;
	}
	imp->clock_sync = cs;
	return 0;
}

void tp_clock_sync_fini(struct tp_import *imp)
{
	struct tp_clock_sync *cs = imp->clock_sync;

	if (!cs)
		return;
	tp_clock_destroy(cs->graph);
	hmap_fini(&cs->bridged);
	hmap_fini(&cs->domain_index);
	free(cs->domains);
	free(cs);
	imp->clock_sync = NULL;
}

struct tp_clock_graph *tp_clock_graph(struct tp_import *imp)
{
	return imp->clock_sync->graph;
}

/* ------------------------------------------------------------ domains ---- */

/* A snapshot clock's unit and encoding; @raw is its timestamp in units. */
static void clock_domain(struct tp_clock_sync *cs, uint64_t clock_id, uint64_t unit_ns,
			 bool incremental, int64_t raw)
{
	struct clock_domain *c;
	uint64_t v;

	if (unit_ns <= 1 && !incremental && !cs->n_domains)
		return;
	if (unit_ns == 0 || unit_ns > INT64_MAX)
		unit_ns = 1;
	if (!hmap_get(&cs->domain_index, clock_id, &v)) {
		if (tp_array_grow((void **)&cs->domains, &cs->cap_domains, cs->n_domains + 1,
				  sizeof(*cs->domains), 8) < 0 ||
		    hmap_put(&cs->domain_index, clock_id, cs->n_domains) < 0)
			return;
		v = cs->n_domains++;
	}
	c = &cs->domains[v];
	c->unit_ns = (int64_t)unit_ns;
	c->incremental = incremental;
	c->last_ns = tp_sat_mul(raw, c->unit_ns);
}

int64_t tp_clock_to_ns(struct tp_import *imp, uint64_t clock_id, int64_t ts)
{
	struct tp_clock_sync *cs = imp->clock_sync;
	struct clock_domain *c;
	uint64_t v;

	if (!cs->n_domains || !hmap_get(&cs->domain_index, clock_id, &v))
		return ts;
	c = &cs->domains[v];
	if (!c->incremental)
		return tp_sat_mul(ts, c->unit_ns);
	c->last_ns = tp_sat_add(c->last_ns, tp_sat_mul(ts, c->unit_ns));
	return c->last_ns;
}

/* ------------------------------------------------------------- table ---- */

static const char *clock_name(uint64_t raw_id)
{
	switch (raw_id) {
	case TP_CLOCK_REALTIME:
		return "REALTIME";
	case TP_CLOCK_REALTIME_COARSE:
		return "REALTIME_COARSE";
	case TP_CLOCK_MONOTONIC:
		return "MONOTONIC";
	case TP_CLOCK_MONOTONIC_COARSE:
		return "MONOTONIC_COARSE";
	case TP_CLOCK_MONOTONIC_RAW:
		return "MONOTONIC_RAW";
	case TP_CLOCK_BOOTTIME:
		return "BOOTTIME";
	default:
		return NULL;
	}
}

/*
 * The clock_snapshot rows of a snapshot just added: each clock's reading
 * at its trace time (a clock that does not convert takes the snapshot's
 * trace clock reading, or gets no row); @raw are the readings in their
 * units, @machines each clock's machine row.
 */
static void table_rows(struct tp_import *imp, const struct tp_clock_reading *r,
		       const int64_t *raw, const uint32_t *machines, size_t n, uint32_t snapshot_id)
{
	struct tp_table *t = &imp->db->clock_snapshot;
	uint64_t trace_clock = tp_clock_trace_clock(imp->clock_sync->graph);
	int64_t fallback = 0;
	bool has_fallback = false;
	size_t i;

	for (i = 0; i < n; i++) {
		if (r[i].id == trace_clock) {
			fallback = r[i].value;
			has_fallback = true;
			break;
		}
	}
	for (i = 0; i < n; i++) {
		const char *name = clock_name((uint32_t)r[i].id);
		int64_t ts, row;

		/* Perfetto's AddSnapshotToTable: each clock through its conversion cache. */
		if (tp_clock_convert_cached(imp->clock_sync->graph, r[i].id, r[i].value,
					    trace_clock, &ts) < 0) {
			if (!has_fallback)
				continue;
			ts = fallback;
		}
		row = tp_table_append(t);
		if (row < 0)
			return;
		tp_set_int(t, CLOCKS_TS, (size_t)row, ts);
		tp_set_int(t, CLOCKS_CLOCK_ID, (size_t)row, (int64_t)(uint32_t)r[i].id);
		if (name)
			tp_set_str(t, CLOCKS_CLOCK_NAME, (size_t)row, tp_db_str(imp->db, name));
		tp_set_int(t, CLOCKS_CLOCK_VALUE, (size_t)row,
			   (int64_t)((uint64_t)raw[i] * (r[i].unit_ns > 1 ? r[i].unit_ns : 1)));
		tp_set_int(t, CLOCKS_SNAPSHOT_ID, (size_t)row, snapshot_id);
		tp_set_int(t, CLOCKS_MACHINE_ID, (size_t)row, machines[i]);
	}
}

/*
 * Adds a snapshot to the graph and, if it was taken, its table rows.
 * Return: 0, or the error of tp_clock_add_snapshot() (counted here).
 */
static int add_snapshot(struct tp_import *imp, const struct tp_clock_reading *r,
			const int64_t *raw, const uint32_t *machines, size_t n, bool is_bridge)
{
	uint32_t id, machine = n ? machines[0] : 0;
	int rc = tp_clock_add_snapshot(imp->clock_sync->graph, r, n, is_bridge, &id);

	if (rc == -EINVAL) /* Perfetto counts these for the whole trace */
		tp_stat_add(imp, "invalid_clock_snapshots", -1, TP_STAT_GLOBAL, 1);
	else if (rc == -ENOMEM)
		tp_stat_add(imp, "tokenizer_out_of_memory", -1, machine, 1);
	else if (rc < 0) /* more clocks than we keep */
		tp_stat_add(imp, "clock_snapshot_malformed", -1, machine, 1);
	else
		table_rows(imp, r, raw, machines, n, id);
	return rc;
}

/* ------------------------------------------------------ ClockSnapshot ---- */

int64_t tp_clock_snapshot_packet(struct tp_import *imp, const uint8_t *data, size_t len,
				 uint32_t seq_id, uint32_t machine)
{
	struct tp_clock_reading r[TP_CLOCK_MAX_SNAPSHOT_CLOCKS];
	int64_t raw[TP_CLOCK_MAX_SNAPSHOT_CLOCKS];
	uint32_t machines[TP_CLOCK_MAX_SNAPSHOT_CLOCKS];
	size_t n = 0, i;
	struct pz_reader rd;
	struct pz_field f;

	pz_reader_init(&rd, data, len);
	while (pz_reader_next(&rd, &f) > 0) {
		/*
		 * Trace time is the host's. Perfetto lets another machine's
		 * snapshot move it to that machine's clock, which would shift
		 * every host event: we do not.
		 */
		if (f.id == PB_CLOCK_SNAPSHOT__PRIMARY_TRACE_CLOCK &&
		    f.wire_type == PZ_WIRE_VARINT) {
			if (machine == 0)
				tp_clock_set_trace_clock(imp->clock_sync->graph, f.value);
			continue;
		}
		if (f.id == PB_CLOCK_SNAPSHOT__CLOCKS && f.wire_type == PZ_WIRE_LEN &&
		    n < TP_CLOCK_MAX_SNAPSHOT_CLOCKS) {
			struct pz_field c[5];
			uint64_t unit;

			if (pz_decode_table(f.data, f.size, c, 5) != PZ_OK)
				continue;
			if (!c[PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID].id ||
			    !c[PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP].id)
				continue;
			unit = c[PB_CLOCK_SNAPSHOT_CLOCK__UNIT_MULTIPLIER_NS].value;
			r[n].id = tp_clock_qualify(c[PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID].value,
						   seq_id, machine);
			raw[n] = (int64_t)c[PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP].value;
			r[n].unit_ns = unit > 1 && unit <= INT64_MAX ? unit : 1;
			r[n].incremental = c[PB_CLOCK_SNAPSHOT_CLOCK__IS_INCREMENTAL].value != 0;
			r[n].value = (int64_t)((uint64_t)raw[n] * r[n].unit_ns);
			machines[n] = machine;
			n++;
		}
	}
	if (rd.err != PZ_OK)
		tp_stat_add(imp, "clock_snapshot_malformed", -1, machine, 1);
	if (add_snapshot(imp, r, raw, machines, n, false) == 0) {
		/* Units and incremental encoding of packet timestamps. */
		for (i = 0; i < n; i++)
			clock_domain(imp->clock_sync, r[i].id, r[i].unit_ns, r[i].incremental,
				     raw[i]);
	}
	for (i = 0; i < n; i++) {
		int64_t ts;

		if (tp_clock_to_trace(imp->clock_sync->graph, r[i].id, r[i].value, false, &ts) == 0)
			return ts;
	}
	return -1;
}

/* ---------------------------------------------------- RemoteClockSync ---- */

/* One clock of a sync round: the host's and the client's readings (0: none). */
struct sync_clock {
	uint32_t id;
	uint64_t host, client;
};

struct sync_round {
	struct sync_clock c[TP_CLOCK_MAX_SNAPSHOT_CLOCKS];
	size_t n;
};

static struct sync_clock *round_clock(struct sync_round *s, uint32_t id, bool add)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->c[i].id == id)
			return &s->c[i];
	if (!add || s->n == TP_CLOCK_MAX_SNAPSHOT_CLOCKS)
		return NULL;
	s->c[s->n].id = id;
	s->c[s->n].host = s->c[s->n].client = 0;
	return &s->c[s->n++];
}

/* Reads one side of a round; @is_host picks the side. */
static void read_side(struct sync_round *s, const struct pz_field *snap, bool is_host)
{
	struct pz_reader r;
	struct pz_field f;

	if (!snap->id || snap->wire_type != PZ_WIRE_LEN)
		return;
	pz_reader_init(&r, snap->data, snap->size);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field c[3];
		struct sync_clock *k;

		if (f.id != PB_CLOCK_SNAPSHOT__CLOCKS || f.wire_type != PZ_WIRE_LEN ||
		    pz_decode_table(f.data, f.size, c, 3) != PZ_OK)
			continue;
		k = round_clock(s, (uint32_t)c[PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID].value, true);
		if (!k)
			continue;
		if (is_host)
			k->host = c[PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP].value;
		else
			k->client = c[PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP].value;
	}
}

/* The client's snapshot of a round, in its machine's clocks. */
static void client_snapshot(struct tp_import *imp, const struct pz_field *snap, uint32_t machine)
{
	struct tp_clock_reading r[TP_CLOCK_MAX_SNAPSHOT_CLOCKS];
	int64_t raw[TP_CLOCK_MAX_SNAPSHOT_CLOCKS];
	uint32_t machines[TP_CLOCK_MAX_SNAPSHOT_CLOCKS];
	struct pz_reader rd;
	struct pz_field f;
	size_t n = 0;

	if (snap->id && snap->wire_type == PZ_WIRE_LEN) {
		pz_reader_init(&rd, snap->data, snap->size);
		while (pz_reader_next(&rd, &f) > 0 && n < TP_CLOCK_MAX_SNAPSHOT_CLOCKS) {
			struct pz_field c[3];
			uint64_t id;

			if (f.id != PB_CLOCK_SNAPSHOT__CLOCKS || f.wire_type != PZ_WIRE_LEN ||
			    pz_decode_table(f.data, f.size, c, 3) != PZ_OK)
				continue;
			id = c[PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID].value;
			/* Sequence clocks name nothing outside their sequence. */
			if (id > UINT32_MAX || tp_clock_is_sequence(id))
				continue;
			r[n].id = tp_clock_qualify(id, 0, machine);
			raw[n] = (int64_t)c[PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP].value;
			r[n].value = raw[n];
			r[n].unit_ns = 1;
			r[n].incremental = false;
			machines[n] = machine;
			n++;
		}
	}
	add_snapshot(imp, r, raw, machines, n, false);
}

/* Perfetto's two estimates of a round trip, each rounded toward zero. */
static void round_offsets(const struct sync_clock *ping, const struct sync_clock *upd,
			  int64_t *o1, int64_t *o2)
{
	*o1 = (int64_t)(ping->client + upd->client) / 2 - (int64_t)ping->host;
	*o2 = (int64_t)upd->client - (int64_t)(ping->host + upd->host) / 2;
}

struct sync_offset {
	uint32_t id;
	int64_t sum;
	int64_t n;
};

static int cmp_offset(const void *a, const void *b)
{
	const struct sync_offset *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

void tp_remote_clock_sync(struct tp_import *imp, const uint8_t *data, size_t len,
			  uint32_t machine)
{
	struct sync_round *rounds = NULL;
	struct sync_offset off[TP_CLOCK_MAX_SNAPSHOT_CLOCKS];
	size_t n_rounds = 0, cap = 0, n_off = 0, i, j, k;
	struct pz_reader r;
	struct pz_field f;

	/*
	 * A sync relates the host to another machine. One stamped with the
	 * host's own id (or none) would feed the client's readings to the
	 * host's clocks: it is ignored.
	 */
	if (machine == 0)
		return;
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		const struct pz_field *host, *client;
		struct pz_field s[4];

		if (f.id != PB_REMOTE_CLOCK_SYNC__SYNCED_CLOCKS || f.wire_type != PZ_WIRE_LEN ||
		    pz_decode_table(f.data, f.size, s, 4) != PZ_OK)
			continue;
		if (tp_array_grow((void **)&rounds, &cap, n_rounds + 1, sizeof(*rounds), 4) < 0) {
			tp_stat_add(imp, "tokenizer_out_of_memory", -1, machine, 1);
			break;
		}
		rounds[n_rounds].n = 0;
		host = &s[PB_REMOTE_CLOCK_SYNC_SYNCED_CLOCKS__HOST_CLOCKS];
		client = &s[PB_REMOTE_CLOCK_SYNC_SYNCED_CLOCKS__CLIENT_CLOCKS];
		read_side(&rounds[n_rounds], host, true);
		read_side(&rounds[n_rounds], client, false);
		n_rounds++;
		/*
		 * The client's readings are snapshots of its own clocks too, as
		 * the service's periodic ones are of the host's: they relate its
		 * other clocks to its BOOTTIME.
		 */
		client_snapshot(imp, client, machine);
	}
	/*
	 * Consecutive entries (ping, then update) give two estimates of the
	 * client-minus-host offset per clock; entries more than a sync
	 * interval apart are different rounds.
	 */
	for (i = 1; i < n_rounds; i++) {
		struct sync_clock *pb = round_clock(&rounds[i - 1], TP_CLOCK_BOOTTIME, false);
		struct sync_clock *ub = round_clock(&rounds[i], TP_CLOCK_BOOTTIME, false);
		uint64_t ping_boot = pb ? pb->client : 0, upd_boot = ub ? ub->client : 0;

		if (upd_boot - ping_boot >= SYNC_ROUND_GAP_NS)
			continue;
		for (j = 0; j < rounds[i - 1].n; j++) {
			const struct sync_clock *p = &rounds[i - 1].c[j];
			const struct sync_clock *u = round_clock(&rounds[i], p->id, false);
			int64_t o1, o2;

			if (!p->host || !p->client || !u || !u->host || !u->client)
				continue;
			round_offsets(p, u, &o1, &o2);
			for (k = 0; k < n_off && off[k].id != p->id; k++)
				;
			if (k == n_off) {
				if (n_off == TP_CLOCK_MAX_SNAPSHOT_CLOCKS)
					continue;
				off[n_off].id = p->id;
				off[n_off].sum = 0;
				off[n_off++].n = 0;
			}
			off[k].sum = tp_ts_add(tp_ts_add(off[k].sum, o1), o2);
			off[k].n += 2;
		}
	}
	sort_n(off, n_off, sizeof(off[0]), cmp_offset);
	/*
	 * One link per clock: the host's reading of the last round that saw
	 * the clock, and the client's clock at that reading plus the offset.
	 */
	for (k = 0; k < n_off; k++) {
		uint64_t host_machine = tp_clock_trace_clock(imp->clock_sync->graph) >> 32;
		struct tp_clock_reading e[2];
		int64_t raw[2], anchor = 0;
		uint32_t machines[2];

		if (tp_clock_is_sequence(tp_clock_trace_clock(imp->clock_sync->graph)))
			host_machine = 0;
		for (i = 0; i < n_rounds; i++) {
			const struct sync_clock *c = round_clock(&rounds[i], off[k].id, false);

			if (c && c->host)
				anchor = (int64_t)c->host;
		}
		memset(e, 0, sizeof(e));
		e[0].id = tp_clock_qualify(off[k].id, 0, (uint32_t)host_machine);
		e[0].value = raw[0] = anchor;
		e[1].id = tp_clock_qualify(off[k].id, 0, machine);
		e[1].value = raw[1] = tp_ts_add(anchor, off[k].sum / off[k].n);
		e[0].unit_ns = e[1].unit_ns = 1;
		machines[0] = (uint32_t)host_machine;
		machines[1] = machine;
		add_snapshot(imp, e, raw, machines, 2, false);
	}
	free(rounds);
}

/* --------------------------------------------------------- conversion ---- */

/* Has @machine's first conversion happened (and its bridge been decided)? */
static bool bridge_done(struct tp_import *imp, uint32_t machine)
{
	if (machine == 0)
		return imp->clock_sync->host_bridged;
	return hmap_get(&imp->clock_sync->bridged, machine, NULL);
}

static void add_bridge(struct tp_import *imp, uint64_t a, uint32_t ma, uint64_t b, uint32_t mb)
{
	struct tp_clock_reading e[2];
	int64_t raw[2] = {0, 0};
	uint32_t machines[2] = {ma, mb};

	memset(e, 0, sizeof(e));
	e[0].id = a;
	e[1].id = b;
	e[0].unit_ns = e[1].unit_ns = 1;
	add_snapshot(imp, e, raw, machines, 2, true);
}

/* Whether 0 of @from converts to @to, as Perfetto's BridgeToTraceTime() asks. */
static bool has_path(struct tp_clock_graph *g, uint64_t from, uint64_t to)
{
	int64_t ts;

	return tp_clock_convert_cached(g, from, 0, to, &ts) == 0;
}

/*
 * Perfetto's rule for a machine's BOOTTIME that nothing relates to trace
 * time when the machine first converts a timestamp: align its REALTIME
 * with the trace machine's if both connect; else, if the two are the same
 * kind of clock (or one is a trace file's private clock), take them to be
 * aligned; else leave it unrelated (its events will not convert).
 */
static void bridge(struct tp_import *imp, uint32_t machine)
{
	struct tp_clock_graph *g = imp->clock_sync->graph;
	uint64_t trace = tp_clock_trace_clock(g);
	uint64_t boot = tp_clock_qualify(TP_CLOCK_BOOTTIME, 0, machine);
	uint32_t trace_machine = tp_clock_is_sequence(trace) ? 0 : (uint32_t)(trace >> 32);
	uint64_t rt = tp_clock_qualify(TP_CLOCK_REALTIME, 0, machine);
	uint64_t trace_rt = tp_clock_qualify(TP_CLOCK_REALTIME, 0, trace_machine);

	if (machine == 0)
		imp->clock_sync->host_bridged = true;
	else if (hmap_put(&imp->clock_sync->bridged, machine, 1) < 0)
		return;
	/* Perfetto asks by converting 0, through its conversion cache. */
	if (boot == trace || has_path(g, boot, trace))
		return;
	if (rt != trace_rt && has_path(g, boot, rt) && has_path(g, trace_rt, trace)) {
		if (!has_path(g, rt, trace_rt))
			add_bridge(imp, rt, machine, trace_rt, trace_machine);
		return;
	}
	if ((uint32_t)boot == (uint32_t)trace || (uint32_t)trace == TP_CLOCK_TRACE_FILE) {
		add_bridge(imp, boot, machine, trace, trace_machine);
		return;
	}
	tp_stat_add(imp, "clock_sync_unrelatable_clock_domains", -1, machine, 1);
}

int tp_to_trace_time(struct tp_import *imp, uint64_t clock_id, uint32_t machine, int64_t ts,
		     bool count_failure, bool uncached, int64_t *out)
{
	int rc;

	if (!bridge_done(imp, machine))
		bridge(imp, machine);
	rc = tp_clock_to_trace(imp->clock_sync->graph, clock_id, ts, !uncached, out);
	if (rc == 0 || !count_failure)
		return rc;
	if (rc == -ENOENT)
		tp_stat_add(imp, "clock_sync_failure_unknown_source_clock", -1, machine, 1);
	else if (rc == -EDOM)
		tp_stat_add(imp, "clock_sync_failure_unknown_target_clock", -1, machine, 1);
	else
		tp_stat_add(imp, "clock_sync_failure_no_path", -1, machine, 1);
	return rc;
}

void tp_clock_sync_finish(struct tp_import *imp)
{
	uint64_t n = tp_clock_cache_misses(imp->clock_sync->graph);

	if (n)
		tp_stat_add(imp, "clock_sync_cache_miss", -1, TP_STAT_GLOBAL, (int64_t)n);
}
