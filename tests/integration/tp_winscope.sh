#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_winscope.sh - Winscope SurfaceFlinger layers snapshots (TracePacket
# field 93) through trace_processor_shell, on the trace
# tp_winscope_trace.py writes (values checked against upstream's binary
# when this suite was written):
#   tables        the snapshot and layer rows read from the protos;
#   argset_*      their arg sets (the snapshot's without its layers);
#   paths         __intrinsic_winscope_surfaceflinger_hierarchy_path(): a
#                 parent chain, a layer its own parent, a layer without id,
#                 a negative id (shown unsigned);
#   paths_cycle   two layers each other's parent: the walk ends;
#   args_*        __intrinsic_winscope_proto_to_args_with_defaults(): set
#                 fields, packed repeated ones, enums, nested and empty
#                 messages, and the defaults of what is missing;
#   args_errors   an unknown table, a non-text argument;
#   fuzz_seed     fuzz/corpus/tp/winscope_sf.pb is the trace with --cycle;
#   damaged       40 damaged copies of it: no run ends by a signal.
# Usage: OUT=out sh tests/integration/tp_winscope.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_winscope
if ! python3 "$ROOT/tests/integration/tp_winscope_trace.py" "$tmp/w.pb" ||
	! python3 "$ROOT/tests/integration/tp_winscope_trace.py" "$tmp/wc.pb" --cycle; then
	fail tp_winscope/trace "tp_winscope_trace.py failed"
	summary
	exit 1
fi

expect tables_snapshot w \
	"SELECT id, ts, sequence_id, has_invalid_elapsed_ts FROM surfaceflinger_layers_snapshot" \
	'0,1000,7,0;1,2000,7,1'
expect tables_layer w \
	"SELECT snapshot_id, layer_id, layer_name, parent, hwc_composition_type FROM surfaceflinger_layer" \
	'0,1,"root","[NULL]","[NULL]";0,2,"child",1,2;0,3,"leaf",2,"[NULL]";0,-2,"self",-2,"[NULL]";0,"[NULL]","noid",1,"[NULL]";1,1,"root","[NULL]","[NULL]";1,"[NULL]","[NULL]","[NULL]","[NULL]"'
expect trace_bounds w "SELECT * FROM trace_bounds" '0,0'

expect paths w \
	"SELECT snapshot_id, layer_id, ancestor_id FROM __intrinsic_winscope_surfaceflinger_hierarchy_path() ORDER BY id" \
	'0,1,1;0,2,1;0,2,2;0,3,1;0,3,2;0,3,3;0,4294967294,4294967294;1,1,1'
expect paths_cycle wc \
	"SELECT snapshot_id, layer_id, ancestor_id FROM __intrinsic_winscope_surfaceflinger_hierarchy_path() WHERE snapshot_id = 2 ORDER BY id" \
	'2,5,6;2,5,5;2,6,5;2,6,6;2,7,6;2,7,5;2,7,7'

expect args_snapshot_displays w \
	"SELECT key, int_value, string_value, real_value FROM __intrinsic_winscope_proto_to_args_with_defaults('surfaceflinger_layers_snapshot') WHERE key GLOB 'displays*' ORDER BY key" \
	'"displays","[NULL]","[NULL]","[NULL]";"displays[0].dpi_x","[NULL]","[NULL]",1.500000;"displays[0].dpi_y","[NULL]","[NULL]",0.000000;"displays[0].id",9,"[NULL]","[NULL]";"displays[0].is_virtual",0,"[NULL]","[NULL]";"displays[0].layer_stack",0,"[NULL]","[NULL]";"displays[0].layer_stack_space_rect","[NULL]","[NULL]","[NULL]";"displays[0].name","[NULL]","D","[NULL]";"displays[0].size.h",20,"[NULL]","[NULL]";"displays[0].size.w",10,"[NULL]","[NULL]";"displays[0].transform","[NULL]","[NULL]","[NULL]";"displays[1].dpi_x","[NULL]","[NULL]",0.000000;"displays[1].dpi_y","[NULL]","[NULL]",0.000000;"displays[1].id",0,"[NULL]","[NULL]";"displays[1].is_virtual",1,"[NULL]","[NULL]";"displays[1].layer_stack",1,"[NULL]","[NULL]";"displays[1].layer_stack_space_rect","[NULL]","[NULL]","[NULL]";"displays[1].name","[NULL]","[NULL]","[NULL]";"displays[1].size","[NULL]","[NULL]","[NULL]";"displays[1].transform.dsdx","[NULL]","[NULL]",0.000000;"displays[1].transform.dsdy","[NULL]","[NULL]",0.000000;"displays[1].transform.dtdx","[NULL]","[NULL]",0.000000;"displays[1].transform.dtdy","[NULL]","[NULL]",0.000000;"displays[1].transform.type",0,"[NULL]","[NULL]"'
expect args_snapshot_no_layers w \
	"SELECT count(*) FROM __intrinsic_winscope_proto_to_args_with_defaults('surfaceflinger_layers_snapshot') WHERE key GLOB 'layers*'" \
	'0'
expect args_layer_count w \
	"SELECT count(*), count(DISTINCT base64_proto_id) FROM __intrinsic_winscope_proto_to_args_with_defaults('__intrinsic_surfaceflinger_layer')" \
	'485,7'
expect args_layer_set w \
	"SELECT key, int_value, string_value, real_value FROM __intrinsic_winscope_proto_to_args_with_defaults('surfaceflinger_layer') AS a JOIN surfaceflinger_layer AS l USING (base64_proto_id) WHERE l.layer_name = 'child' AND key IN ('hwc_composition_type', 'shadow_radius', 'parent', 'id') ORDER BY key" \
	'"hwc_composition_type","[NULL]","HWC_TYPE_DEVICE","[NULL]";"id",2,"[NULL]","[NULL]";"parent",1,"[NULL]","[NULL]";"shadow_radius","[NULL]","[NULL]",0.250000'
expect args_layer_packed_defaults w \
	"SELECT key, int_value, string_value FROM __intrinsic_winscope_proto_to_args_with_defaults('surfaceflinger_layer') AS a JOIN surfaceflinger_layer AS l USING (base64_proto_id) WHERE l.layer_name = 'root' AND l.snapshot_id = 0 AND (key GLOB 'children*' OR key IN ('hwc_composition_type', 'size', 'type', 'metadata')) ORDER BY key" \
	'"children[0]",2,"[NULL]";"children[1]",3,"[NULL]";"hwc_composition_type","[NULL]","HWC_TYPE_UNSPECIFIED";"metadata","[NULL]","[NULL]";"size","[NULL]","[NULL]";"type","[NULL]","[NULL]"'
expect args_layer_nested w \
	"SELECT key, int_value FROM __intrinsic_winscope_proto_to_args_with_defaults('surfaceflinger_layer') AS a JOIN surfaceflinger_layer AS l USING (base64_proto_id) WHERE l.layer_name = 'leaf' AND key GLOB 'size*' ORDER BY key" \
	'"size.h",5;"size.w",4'

# The arg sets the import gives snapshots (not their layers) and layers
# (upstream's also have computed visibility_reason args, not here).
expect argset_snapshot w \
	"SELECT a.key, a.value_type, a.display_value FROM surfaceflinger_layers_snapshot s JOIN args a USING (arg_set_id) WHERE s.id = 0 ORDER BY a.key" \
	'"displays[0].dpi_x","real","1.5";"displays[0].id","uint","9";"displays[0].name","string","D";"displays[0].size.h","int","20";"displays[0].size.w","int","10";"displays[1].is_virtual","bool","true";"displays[1].layer_stack","uint","1";"displays[1].transform","null","[NULL]";"elapsed_realtime_nanos","int","5";"where","string","test"'
expect argset_layers w \
	"SELECT a.key, a.value_type, a.display_value FROM surfaceflinger_layer l JOIN args a USING (arg_set_id) WHERE l.layer_name IN ('child', 'root') AND l.snapshot_id = 0 AND a.key NOT GLOB 'visibility_reason*' ORDER BY l.id, a.key" \
	'"children[0]","int","2";"children[1]","int","3";"id","int","1";"name","string","root";"hwc_composition_type","string","HWC_TYPE_DEVICE";"id","int","2";"name","string","child";"parent","int","1";"shadow_radius","real","0.25"'
expect argset_empty_layer w \
	"SELECT a.flat_key, a.key, a.value_type FROM surfaceflinger_layer l JOIN args a USING (arg_set_id) WHERE l.id = 6" \
	'"","","null"'

run args_unknown_table -Q "SELECT * FROM __intrinsic_winscope_proto_to_args_with_defaults('nope')" "$tmp/w.pb"
if [ $rc -eq 1 ] && grep -qF 'Failed to find __intrinsic_nope table.' "$tmp/args_unknown_table.err"; then
	pass tp_winscope/args_errors/unknown_table
else
	fail tp_winscope/args_errors/unknown_table "exit $rc: $(oneline "$tmp/args_unknown_table.err")"
fi
run args_not_text -Q "SELECT * FROM __intrinsic_winscope_proto_to_args_with_defaults(1)" "$tmp/w.pb"
if [ $rc -eq 1 ] && grep -qF 'takes table name as a string.' "$tmp/args_not_text.err"; then
	pass tp_winscope/args_errors/not_text
else
	fail tp_winscope/args_errors/not_text "exit $rc: $(oneline "$tmp/args_not_text.err")"
fi

# The fuzz seed is this trace (with --cycle): regenerate it if this fails.
if cmp -s "$tmp/wc.pb" "$ROOT/fuzz/corpus/tp/winscope_sf.pb"; then
	pass tp_winscope/fuzz_seed
else
	fail tp_winscope/fuzz_seed "fuzz/corpus/tp/winscope_sf.pb differs from tp_winscope_trace.py --cycle"
fi

# Damaged snapshots (bytes flipped, cut short; fixed seed): the functions
# read the protos the import kept, so each run must end without a signal.
i=0
crashed=
while [ $i -lt 40 ]; do
	python3 - "$tmp/wc.pb" "$tmp/bad.pb" $i <<'PY'
import random, sys
data = bytearray(open(sys.argv[1], "rb").read())
rnd = random.Random(int(sys.argv[3]))
for _ in range(rnd.randint(1, 6)):
    data[rnd.randrange(len(data))] = rnd.randrange(256)
if rnd.random() < 0.3:
    del data[rnd.randrange(len(data)):]
open(sys.argv[2], "wb").write(bytes(data))
PY
	run bad -Q "SELECT COUNT(*) FROM __intrinsic_winscope_surfaceflinger_hierarchy_path(); SELECT COUNT(*) FROM __intrinsic_winscope_proto_to_args_with_defaults('surfaceflinger_layer'); SELECT COUNT(*) FROM __intrinsic_winscope_proto_to_args_with_defaults('surfaceflinger_layers_snapshot')" "$tmp/bad.pb"
	[ $rc -ge 124 ] && crashed="$crashed $i:$rc"
	i=$((i + 1))
done
if [ -z "$crashed" ]; then
	pass tp_winscope/damaged
else
	fail tp_winscope/damaged "runs ended by a signal or timeout (case:status):$crashed"
fi

summary
