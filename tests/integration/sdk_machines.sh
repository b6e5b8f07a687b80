#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# sdk_machines.sh - SDK applications on two "machines" in one trace: the
# host's traced in a network namespace with a relay endpoint, a guest
# namespace (its own boot id, so its own machine) running traced_relay,
# the test application as a "server" on the host and as a "client" in the
# guest, both carrying the same flow id. The trace must show the client's
# slices on the guest's machine, the server's on the host, and each
# machine's flow (ids are per machine, as in Perfetto's trace processor,
# which must agree when UPSTREAM_TP names it). Needs root for the namespaces (skips otherwise).

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"
. "$(dirname "$0")/mm_lib.sh"

svc_require_bins traced traced_relay perfetto trace_processor_shell sdk/sdk_app
mm_require sdk_machines

PORT=20341
HOST_UNIX=$SVC_TMP/host.p.sock
export PERFETTO_CONSUMER_SOCK_NAME=$SVC_TMP/host.c.sock

q() {
	printf '%s\n' "$2" >"$SVC_TMP/q.sql"
	"${3:-$OUT/trace_processor_shell}" -q "$SVC_TMP/q.sql" "$1" 2>/dev/null | sed -n 2p | tr -d '"'
}

expect() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi
}

mm_setup
mm_guest 1

svc_bg traced env TRACED_NOTIFY_FD=9 \
	PERFETTO_PRODUCER_SOCK_NAME="$(mm_host_ip 1):$PORT,$HOST_UNIX" \
	ip netns exec "$MM_HOST" "$OUT/traced" --enable-relay-endpoint
if ! svc_wait_for 10 _svc_ready_or_exited traced || ! svc_running traced; then
	fail sdk_machines/traced "$(svc_errtail traced)"
	summary
	exit 1
fi
mm_guest_bg relay 1 env TRACED_RELAY_NOTIFY_FD=9 PERFETTO_MACHINE_NAME=guest1 \
	PERFETTO_PRODUCER_SOCK_NAME="$SVC_TMP/g1.p.sock" \
	PERFETTO_RELAY_SOCK_NAME="$(mm_host_ip 1):$PORT" "$OUT/traced_relay"
if ! svc_wait_for 10 _svc_ready_or_exited relay || ! _svc_is_ready relay; then
	fail sdk_machines/relay "$(svc_errtail relay)"
	summary
	exit 1
fi

svc_cfg two 'buffers { size_kb: 65536 fill_policy: DISCARD }
trace_all_machines: true
data_sources { config { name: "track_event" track_event_config { enabled_categories: "*" } } }'
svc_bg two "$OUT/perfetto" --txt -c "$SVC_TMP/two.pbtxt" -o "$SVC_TMP/two.pftrace"

svc_bg server env PERFETTO_PRODUCER_SOCK_NAME="$HOST_UNIX" \
	"$OUT/sdk/sdk_app" --threads 2 --slices 1000 --flow-id 9999 --name server- \
	--wait-enabled "$(svc_ms 10000)" --stats
mm_guest_bg client 1 env PERFETTO_PRODUCER_SOCK_NAME="$SVC_TMP/g1.p.sock" \
	"$OUT/sdk/sdk_app" --threads 2 --slices 1000 --flow-id 9999 --name client- \
	--wait-enabled "$(svc_ms 10000)" --stats
svc_wait server 60
svc_wait client 60
t=sdk_machines/apps
if [ "$(svc_rc server)" = 0 ] && [ "$(svc_rc client)" = 0 ]; then
	pass $t
else
	fail $t "server $(svc_rc server): $(svc_errtail server); client $(svc_rc client): $(svc_errtail client)"
fi
svc_kill two INT
svc_wait two 20 >/dev/null 2>&1
T=$SVC_TMP/two.pftrace

# Slices of each app, by the machine their thread is on.
per_machine="select group_concat(who || ':' || m || ':' || n, ' ') from (
	select substr(t.name, 1, 6) who, t.machine_id is not null and t.machine_id != 0 m, count(*) n
	from slice s join thread_track tt on s.track_id = tt.id join thread t using(utid)
	group by 1, 2 order by 1)"
expect sdk_machines/slices_per_machine "$(q "$T" "$per_machine")" "client:1:2002 server:0:2002"
expect sdk_machines/machines "$(q "$T" "select count(*) from machine")" 2
# Flow ids are per machine in Perfetto's trace processor (a flow tracker
# per machine): each machine's pair of "rpc" slices is joined, the two
# machines are not; flow.trace_id (the id) is what relates them in SQL.
per_flow="select group_concat(m || ':' || trace_id, ' ') from (
	select distinct ifnull(t1.machine_id, 0) != 0 m, f.trace_id, ifnull(t1.machine_id, 0) = ifnull(t2.machine_id, 0) same
	from flow f
	join slice a on f.slice_out = a.id join thread_track ta on a.track_id = ta.id
	join thread t1 on ta.utid = t1.utid
	join slice b on f.slice_in = b.id join thread_track tb on b.track_id = tb.id
	join thread t2 on tb.utid = t2.utid where same order by m)"
expect sdk_machines/flows_per_machine "$(q "$T" "$per_flow")" "0:9999 1:9999"
expect sdk_machines/flow_rows "$(q "$T" "select count(*) from flow")" 2
t=sdk_machines/upstream
if [ -z "$UPSTREAM_TP" ]; then
	skip $t "UPSTREAM_TP is not set (Perfetto's trace_processor_shell)"
else
	sql="select (select count(*) from slice) || ',' || (select count(*) from flow) || ',' || (select count(*) from machine)"
	expect $t "$(q "$T" "$sql" "$UPSTREAM_TP")" "$(q "$T" "$sql")"
fi

summary
