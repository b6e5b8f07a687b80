#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_heap_graph.sh - ART's Java heap dumps (TracePacket.heap_graph) and
# experimental_flamegraph('graph', ...) as Perfetto's trace processor
# gives them, on small traces (tests/data/tp/heap_graph/*.textproto,
# encoded with pfc_pbtxt; the expected rows are what upstream's
# trace_processor_shell printed for them):
#   dump      a dump in two packets and a truncated one: objects (id_delta,
#             reference_field_id_base, heap type carried over, sizes from
#             the class), classes (superclass from java.lang.Class.superClass,
#             deobfuscated names of the app's package), references (field
#             names from the class and its superclass, deobfuscated), roots
#             and reachability (a weak referent not followed), a Cleaner's
#             native size, stats; the flamegraph, focused, truncated, and
#             its roots' total against the objects';
#   order     the flamegraph's merge and row order (roots by class name,
#             frames by class row then object id);
#   order2    a frame met before its parent;
#   bitmap    a Bitmap's primitive fields (heap_graph_primitive, _object_data).
# Usage: OUT=out sh tests/integration/tp_heap_graph.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_heap_graph
DATA="$ROOT/tests/data/tp/heap_graph"

tp_encode dump order order2 bitmap

expect dump/heap_graph dump \
	"SELECT * FROM heap_graph ORDER BY id" \
	'0,100,2,"[NULL]",4096,0;1,200,3,"[NULL]","[NULL]",1'
expect dump/objects dump \
	"SELECT * FROM heap_graph_object ORDER BY id" \
	'0,2,100,40,0,0,1,"HEAP_TYPE_APP",0,"ROOT_STICKY_CLASS",-1,"[NULL]";1,2,100,72,0,"[NULL]",1,"HEAP_TYPE_APP",1,"[NULL]",-1,"[NULL]";2,2,100,24,8192,2,1,"HEAP_TYPE_APP",2,"[NULL]",-1,"[NULL]";3,2,100,500,0,"[NULL]",1,"HEAP_TYPE_APP",3,"[NULL]",-1,"[NULL]";4,2,100,8,0,4,1,"HEAP_TYPE_APP",4,"[NULL]",-1,"[NULL]";5,2,100,8,0,"[NULL]",1,"HEAP_TYPE_APP",5,"[NULL]",-1,"[NULL]";6,2,100,32,0,5,1,"HEAP_TYPE_APP",6,"ROOT_JAVA_FRAME",-1,"[NULL]";7,2,100,16,0,8,1,"HEAP_TYPE_APP",7,"ROOT_JNI_GLOBAL",-1,"[NULL]";8,2,100,12,0,9,0,"HEAP_TYPE_APP",8,"[NULL]",-1,"[NULL]";9,2,100,14,0,"[NULL]",1,"HEAP_TYPE_ZYGOTE",9,"ROOT_VM_INTERNAL",-1,"[NULL]";10,3,200,4,0,"[NULL]",1,"[NULL]",11,"ROOT_JAVA_FRAME",-1,"[NULL]"'
expect dump/classes dump \
	"SELECT * FROM heap_graph_class ORDER BY id" \
	'0,"a","com.example.Widget","/data/app/~~xyz==/com.example.app-abc/base.apk",10,"[NULL]","KIND_UNKNOWN";1,"a[]","com.example.Widget[]","/data/app/~~xyz==/com.example.app-abc/base.apk","[NULL]","[NULL]","KIND_UNKNOWN";2,"Holder","[NULL]","[NULL]","[NULL]","[NULL]","KIND_UNKNOWN";3,"android.graphics.Bitmap","[NULL]","[NULL]","[NULL]","[NULL]","KIND_UNKNOWN";4,"libcore.util.NativeAllocationRegistry$CleanerThunk","[NULL]","[NULL]","[NULL]","[NULL]","KIND_UNKNOWN";5,"libcore.util.NativeAllocationRegistry","[NULL]","[NULL]","[NULL]","[NULL]","KIND_UNKNOWN";6,"sun.misc.Cleaner","[NULL]","[NULL]","[NULL]","[NULL]","KIND_UNKNOWN";7,"java.lang.ref.WeakReference","[NULL]","[NULL]","[NULL]","[NULL]","KIND_WEAK_REFERENCE";8,"java.lang.Class<a>","java.lang.Class<com.example.Widget>","/data/app/~~xyz==/com.example.app-abc/base.apk","[NULL]","[NULL]","KIND_UNKNOWN";9,"java.lang.Class<Base>","[NULL]","[NULL]","[NULL]","[NULL]","KIND_UNKNOWN";10,"Base","[NULL]","[NULL]","[NULL]","[NULL]","KIND_UNKNOWN";11,"Lonely","[NULL]","[NULL]","[NULL]","[NULL]","KIND_UNKNOWN"'
expect dump/references dump \
	"SELECT * FROM heap_graph_reference ORDER BY id" \
	'0,0,0,1,"a.b","[NULL]","com.example.Widget.parent";1,0,0,2,"Base.kid","[NULL]","[NULL]";2,2,2,3,"Base.kid","[NULL]","[NULL]";3,2,2,4,"a.c","java.lang.String","com.example.Other.label";4,4,4,5,"libcore.util.NativeAllocationRegistry$CleanerThunk.this$0","[NULL]","[NULL]";5,5,6,2,"java.lang.ref.Reference.referent","[NULL]","[NULL]";6,5,6,4,"sun.misc.Cleaner.thunk","[NULL]","[NULL]";7,5,6,"[NULL]","sun.misc.Cleaner.next","[NULL]","[NULL]";8,8,7,3,"java.lang.ref.Reference.referent","[NULL]","[NULL]";9,9,8,9,"java.lang.Class.superClass","[NULL]","[NULL]"'
expect dump/stats dump \
	"SELECT name, idx, value FROM stats WHERE name GLOB 'heap_graph*' AND value > 0 ORDER BY name" \
	'"heap_graph_missing_packet",0,1'
expect dump/flamegraph dump \
	"SELECT id, depth, name, count, cumulative_count, size, cumulative_size, parent_id FROM experimental_flamegraph('graph', 100, NULL, (SELECT upid FROM process WHERE pid = 2), NULL, NULL)" \
	'0,0,"com.example.Widget [ROOT_STICKY_CLASS]",1,5,40,8828,"[NULL]";1,1,"com.example.Widget[]",1,1,72,72,0;2,1,"Holder",1,3,24,8716,0;3,2,"android.graphics.Bitmap",1,1,500,500,2;4,0,"sun.misc.Cleaner [ROOT_JAVA_FRAME]",1,3,32,48,"[NULL]";5,1,"libcore.util.NativeAllocationRegistry$CleanerThunk",1,2,8,16,4;6,2,"libcore.util.NativeAllocationRegistry",1,1,8,8,5;7,0,"java.lang.ref.WeakReference [ROOT_JNI_GLOBAL]",1,1,16,16,"[NULL]";8,0,"java.lang.Class<Base> [ROOT_VM_INTERNAL]",1,1,14,14,"[NULL]";9,2,"[native] Holder",1,1,8192,8192,2'
expect dump/flamegraph_focus dump \
	"SELECT id, depth, name, count, cumulative_count, size, cumulative_size, parent_id FROM experimental_flamegraph('graph', 100, NULL, (SELECT upid FROM process WHERE pid = 2), NULL, 'holder')" \
	'0,0,"com.example.Widget [ROOT_STICKY_CLASS]",1,4,40,8756,"[NULL]";1,1,"Holder",1,3,24,8716,0;2,2,"android.graphics.Bitmap",1,1,500,500,1;3,2,"[native] Holder",1,1,8192,8192,1'
expect dump/flamegraph_truncated dump \
	"SELECT depth, name, map_name, count, cumulative_count, size, cumulative_size FROM experimental_flamegraph('graph', 200, NULL, (SELECT upid FROM process WHERE pid = 3), NULL, NULL)" \
	'0,"Lonely [ROOT_JAVA_FRAME]","JAVA",1,1,4,4'
expect dump/flamegraph_matches_objects dump \
	"SELECT o.upid, o.graph_sample_ts, SUM(o.self_size + o.native_size), (SELECT SUM(cumulative_size) FROM experimental_flamegraph('graph', o.graph_sample_ts, NULL, o.upid, NULL, NULL) WHERE depth = 0) FROM heap_graph_object o WHERE o.reachable AND o.upid = (SELECT upid FROM process WHERE pid = 2) GROUP BY 1, 2" \
	'2,100,8906,8906'
expect order/flamegraph order \
	"SELECT id, depth, name, count, cumulative_count, size, cumulative_size, parent_id FROM experimental_flamegraph('graph', 10, NULL, (SELECT upid FROM process WHERE pid = 2), NULL, NULL)" \
	'0,0,"Zed [ROOT_JAVA_FRAME]",1,4,8,531,"[NULL]";1,0,"Alpha [ROOT_JAVA_FRAME]",1,2,1000,1016,"[NULL]";2,1,"Mid",1,2,16,23,0;3,1,"Mid",1,1,16,16,1;4,0,"Mid [ROOT_JAVA_FRAME]",1,1,9,9,"[NULL]";5,1,"Big",1,1,500,500,0;6,2,"Big",1,1,7,7,2'
expect order2/flamegraph order2 \
	"SELECT id, depth, name, count, cumulative_count, size, cumulative_size, parent_id FROM experimental_flamegraph('graph', 10, NULL, (SELECT upid FROM process WHERE pid = 2), NULL, NULL)" \
	'0,0,"Five [ROOT_JAVA_FRAME]",1,1,8,8,"[NULL]";1,0,"Six [ROOT_JAVA_FRAME]",1,4,1000,1035,"[NULL]";2,1,"Five",1,2,16,19,1;3,1,"Seven",1,1,16,16,1;4,2,"Seven",1,1,3,3,2'

expect bitmap/fields bitmap \
	"SELECT o.id, d.id, p.field_name, p.field_type, p.int_value, p.long_value FROM heap_graph_object o JOIN heap_graph_object_data d ON o.object_data_id = d.id JOIN heap_graph_primitive p USING (field_set_id) ORDER BY p.id" \
	'0,0,"android.graphics.Bitmap.mId","long","[NULL]",123;0,0,"android.graphics.Bitmap.mSourceId","long","[NULL]",456;0,0,"android.graphics.Bitmap.mWidth","int",100,"[NULL]";0,0,"android.graphics.Bitmap.mHeight","int",200,"[NULL]";1,1,"android.graphics.Bitmap.mWidth","int",7,"[NULL]"'

summary
