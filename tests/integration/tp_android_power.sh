#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_android_power.sh - PowerRails packets (import/android/power_rails.c):
# track names (Pixel rails by their friendly name, others power.<rail>_uws),
# one track per (rail, session) with the raw name and subsystem as source
# args, readings sorted at their own time with the packet's time as
# packet_ts, and the power_rail_* stats; the figures are what upstream's
# trace_processor_shell gives on tests/data/tp/android_power/rails.textproto.
# Usage: OUT=out sh tests/integration/tp_android_power.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_android_power
DATA="$ROOT/tests/data/tp/android_power"

tp_encode rails

expect rails/tracks rails \
	"SELECT id, name, type, extract_arg(dimension_arg_set_id, 'name'), extract_arg(dimension_arg_set_id, 'session_uuid'), extract_arg(source_arg_set_id, 'raw_name'), extract_arg(source_arg_set_id, 'subsystem_name') FROM counter_track ORDER BY id" \
	'0,"power.rails.cpu.big","power_rails","S9M_VDD_CPUCL2",0,"S9M_VDD_CPUCL2","cpu";1,"power.MY_RAIL_uws","power_rails","MY_RAIL",0,"MY_RAIL","misc";2,"power.MY_RAIL_uws","power_rails","MY_RAIL",77,"MY_RAIL","other"'
expect rails/counters rails \
	"SELECT id, ts, track_id, value, extract_arg(arg_set_id, 'packet_ts') FROM counter ORDER BY id" \
	'0,2000000,2,20.000000,6000000;1,5000000,1,50.000000,5000000;2,7000000,0,70.000000,5000000'
expect rails/stats rails \
	"SELECT name, value FROM stats WHERE name GLOB 'power_rail*' AND value > 0 ORDER BY name" \
	'"power_rail_empty_packet",2;"power_rail_unknown_index",1'
expect rails/module rails \
	"INCLUDE PERFETTO MODULE android.power_rails; SELECT power_rail_name, raw_power_rail_name, subsystem_name FROM android_power_rails_metadata ORDER BY power_rail_name" \
	'"power.MY_RAIL_uws","MY_RAIL","misc";"power.MY_RAIL_uws","MY_RAIL","other";"power.rails.cpu.big","S9M_VDD_CPUCL2","cpu"'

summary
