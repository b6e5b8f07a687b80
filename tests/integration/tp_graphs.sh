#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_graphs.sh - the graph built-ins (sql/ops/graph_search.c, dominator.c,
# tree_partition.c, graph_scan.c, critical_path.c, tree_table.c) through their modules
# (graphs.*, sched.thread_executing_span, std.trees.table_conversion) on small graphs worked out by
# hand, with cycles, and the errors bad graphs give instead of endless
# walks or crashes. No ../shared needed (tp_stdlib_diff.sh compares the
# same modules with upstream's binary on real traces).
# Usage: OUT=out sh tests/integration/tp_graphs.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_graphs
DATA="$ROOT/tests/data/tp"
tp_encode sched_basic

# A graph with a cycle (0 -> 1 -> 3 -> 0) and a second component (7 -> 8).
E="CREATE PERFETTO TABLE e AS SELECT column1 AS source_node_id, column2 AS dest_node_id FROM (VALUES (0,1),(0,2),(1,3),(2,3),(3,0),(3,4),(7,8));"
S="INCLUDE PERFETTO MODULE graphs.search; $E"

# gerr NAME SQL MESSAGE: exit 1 with MESSAGE on stderr (no crash, no hang).
gerr() {
	run "$1" -Q "$2" "$tmp/sched_basic.pb"
	if [ $rc -ne 1 ]; then
		fail "tp_graphs/$1" "exit $rc (want 1): $(oneline "$tmp/$1.err")"
	elif ! grep -qF -- "$3" "$tmp/$1.err"; then
		fail "tp_graphs/$1" "stderr lacks '$3': $(oneline "$tmp/$1.err")"
	else
		pass "tp_graphs/$1"
	fi
}

# DFS: starts popped last first (7 before 0), a node's first edge first,
# the cycle back to 0 ends at the visited node.
expect dfs_cycle sched_basic "$S SELECT * FROM graph_reachable_dfs!(e, (SELECT 0 AS node_id UNION ALL SELECT 7))" \
	'7,"[NULL]";8,7;0,"[NULL]";1,0;3,1;4,3;2,0'
# BFS: all starts first (9 has no edges), then level by level.
expect bfs_cycle sched_basic "$S SELECT * FROM graph_reachable_bfs!(e, (SELECT 0 AS node_id UNION ALL SELECT 7 UNION ALL SELECT 9))" \
	'0,"[NULL]";7,"[NULL]";9,"[NULL]";1,0;2,0;8,7;3,1;4,3'
# No edges at all: an empty tree, not an error.
expect dfs_empty sched_basic "$S SELECT count(*) FROM graph_reachable_dfs!((SELECT * FROM e WHERE 0), (SELECT 1 AS node_id))" '0'
gerr dfs_bad_start "$S SELECT * FROM graph_reachable_dfs!(e, (SELECT -1 AS node_id))" \
	'__intrinsic_dfs: start node id -1 out of range'
# Weight bounded (edge weight = source + 1): from 0 with bound 3, the
# weights taken add up 0, 1 (0->1), 3 (1->3): the next (3->4, 4) passes
# it; as a floor that node is kept. From 3 with bound 2: the edge to 0
# weighs 4.
W="(SELECT source_node_id, dest_node_id, source_node_id + 1 AS edge_weight FROM e), (SELECT 0 AS root_node_id, 3 AS root_target_weight UNION ALL SELECT 3, 2)"
expect weight_ceiling sched_basic "$S SELECT * FROM graph_reachable_weight_bounded_dfs!($W, 0)" \
	'0,0,"[NULL]";0,1,0;0,3,1;3,3,"[NULL]"'
expect weight_floor sched_basic "$S SELECT * FROM graph_reachable_weight_bounded_dfs!($W, 1)" \
	'0,0,"[NULL]";0,1,0;0,3,1;0,4,3;3,3,"[NULL]";3,0,3'

# Dominators of a graph with two cycles (2 -> 4 -> 5 -> 2, 3 -> 6 -> 7 ->
# 3): 4 is reached from 2 and 3, so only 1 dominates it; 5 only through 4.
D="INCLUDE PERFETTO MODULE graphs.dominator_tree; CREATE PERFETTO TABLE d AS SELECT column1 AS source_node_id, column2 AS dest_node_id FROM (VALUES (1,2),(1,3),(2,4),(3,4),(4,5),(5,2),(5,6),(3,6),(6,7),(7,3),(2,8),(9,1));"
expect dominators sched_basic "$D SELECT * FROM graph_dominator_tree!(d, 1)" \
	'1,"[NULL]";2,1;4,1;5,4;6,1;7,6;3,1;8,2'
gerr dominator_bad_root "$D SELECT * FROM graph_dominator_tree!(d, 100)" \
	'dominator_tree: root node is not in the graph'
gerr dominator_lone_root "$D SELECT * FROM graph_dominator_tree!(d, 8)" \
	'dominator_tree: non empty graph must contain root and another node'

# Partition: each node under its nearest ancestor of the same group.
P="INCLUDE PERFETTO MODULE graphs.partition;"
T="(SELECT column1 AS id, column2 AS parent_id, column3 AS group_key FROM (VALUES (1, NULL, 0), (2, 1, 1), (3, 1, 2), (4, 2, 2), (5, 4, 1), (6, 4, 0), (7, 4, 0), (8, 3, 1), (9, 3, 2)))"
expect partition sched_basic "$P SELECT * FROM tree_structural_partition_by_group!($T)" \
	'1,"[NULL]",0;3,"[NULL]",2;9,3,2;8,"[NULL]",1;2,"[NULL]",1;4,"[NULL]",2;7,1,0;6,1,0;5,2,1'
gerr partition_cycle "$P SELECT * FROM tree_structural_partition_by_group!((SELECT column1 AS id, column2 AS parent_id, 0 AS group_key FROM (VALUES (1, NULL), (2, 1), (1, 2))))" \
	'tree_partition: a node is reached twice'
gerr partition_no_root "$P SELECT * FROM tree_structural_partition_by_group!((SELECT 1 AS id, 0 AS parent_id, 0 AS group_key))" \
	'tree_partition: no root in tree'

# Scans: rows handed along the edges of a DAG (4 is reached twice).
G="INCLUDE PERFETTO MODULE graphs.scan; CREATE PERFETTO TABLE g AS SELECT column1 AS source_node_id, column2 AS dest_node_id FROM (VALUES (1,2),(1,3),(2,4),(3,4),(4,5),(2,6));"
expect scan sched_basic "$G SELECT * FROM _graph_scan!(g, (SELECT 1 AS id, 10 AS v), (v), (SELECT id, v + 1 AS v FROM \$table))" \
	'1,10;2,11;3,11;4,12;6,12;4,12;5,13;5,13'
# Aggregating scan on the reversed DAG from the sinks 5 and 6: each node
# once, from everything below it.
expect aggregating_scan sched_basic "$G SELECT * FROM _graph_aggregating_scan!((SELECT dest_node_id AS source_node_id, source_node_id AS dest_node_id FROM g), (SELECT 5 AS id, 1 AS cnt UNION ALL SELECT 6, 1), (cnt), (SELECT id, sum(cnt) + 1 AS cnt FROM \$table GROUP BY id))" \
	'5,1;6,1;4,2;2,4;3,3;1,8'
# A scan's rows joined back to an indexed table look each id up in its
# index (SEARCH), not scan the index per row: the table pointer's columns
# have no declared affinity that would keep an equality off the index.
run scan_join_plan -Q "$G CREATE PERFETTO TABLE n AS SELECT column1 AS id FROM (VALUES (1),(2),(3),(4),(5),(6)); CREATE PERFETTO INDEX n_id ON n(id); EXPLAIN QUERY PLAN SELECT n.id, s.cnt FROM _graph_aggregating_scan!((SELECT dest_node_id AS source_node_id, source_node_id AS dest_node_id FROM g), (SELECT 5 AS id, 1 AS cnt), (cnt), (SELECT id, sum(cnt) AS cnt FROM \$table GROUP BY id)) AS s JOIN n USING (id)" "$tmp/sched_basic.pb"
if [ $rc -eq 0 ] && grep -q 'SEARCH n USING COVERING INDEX n_id (id=?)' "$tmp/scan_join_plan.out"; then
	pass tp_graphs/scan_join_plan
else
	fail tp_graphs/scan_join_plan "exit $rc: $(oneline "$tmp/scan_join_plan.out") $(oneline "$tmp/scan_join_plan.err")"
fi
C="(SELECT 1 AS source_node_id, 2 AS dest_node_id UNION ALL SELECT 2, 1)"
gerr scan_cycle "$G SELECT * FROM _graph_scan!($C, (SELECT 1 AS id, 10 AS v), (v), (SELECT id, v FROM \$table))" \
	'graph_scan: the graph has a cycle'
gerr aggregating_scan_cycle "$G SELECT * FROM _graph_aggregating_scan!($C, (SELECT 1 AS id, 10 AS v), (v), (SELECT id, sum(v) AS v FROM \$table GROUP BY id))" \
	'graph_aggregating_scan: the graph has a cycle'
gerr scan_columns "$G SELECT * FROM _graph_scan!(g, (SELECT 1 AS id, 10 AS v), (v, w), (SELECT id, v FROM \$table))" \
	"no such column: init_table.w"
gerr scan_columns_direct "SELECT __intrinsic_graph_scan(NULL, (SELECT __intrinsic_row_dataframe_agg('id', 1, 'v', 2)), 'SELECT 1', '(v, w)')" \
	"graph_scan: column list 'id,v,w' does not match initial table list 'id,v'"

# Critical path: node 1 (thread 1) ran [100, 150) after an idle from 60;
# node 2 (thread 2), its waker, ran [70, 90) (no idle known). The root's
# idle [60, 100) goes to the waker at depth 1: it ran [70, 90); before 70
# it has nothing to blame (no waker, no previous wakeup).
N="INCLUDE PERFETTO MODULE sched.thread_executing_span; CREATE PERFETTO TABLE n AS SELECT column1 AS id, column2 AS utid, column3 AS ts, column4 AS dur, column5 AS idle_dur, column6 AS waker_id, column7 AS prev_id FROM (VALUES (1, 1, 100, 50, 40, 2, NULL), (2, 2, 70, 20, NULL, NULL, NULL));"
expect critical_path sched_basic "$N SELECT * FROM _critical_path_with_depth_by_roots!((SELECT 1 AS root_node_id), n)" \
	'1,0,100,50,1,1;1,1,70,20,2,1'
# Two nodes waking each other back in time never end: an error.
gerr critical_path_cycle "INCLUDE PERFETTO MODULE sched.thread_executing_span; CREATE PERFETTO TABLE n AS SELECT column1 AS id, column2 AS utid, column3 AS ts, column4 AS dur, column5 AS idle_dur, column6 AS waker_id, column7 AS prev_id FROM (VALUES (1, 1, 10, 5, 5, 2, NULL), (2, 2, 100, 5, 200, 1, NULL)); SELECT * FROM _critical_path_with_depth_by_roots!((SELECT 1 AS root_node_id), n)" \
	'does not end (a cycle in the wakeup graph?)'

# Trees (tree_table.c, std.trees.table_conversion): a parent given after
# its child is placed first; a forest keeps each root's subtree together.
TR="INCLUDE PERFETTO MODULE std.trees.table_conversion;"
TT="(SELECT column1 AS id, column2 AS parent_id, column3 AS v FROM (VALUES (3, 1, 'c'), (1, NULL, 'a'), (2, 3, 'b'), (4, NULL, 'd'), (5, 4, 'e')))"
expect tree_reorder sched_basic "$TR SELECT * FROM _tree_to_table!(_tree_from_table!($TT, (v)), (v))" \
	'0,"[NULL]",1,"[NULL]","a";1,0,3,1,"c";2,1,2,3,"b";3,"[NULL]",4,"[NULL]","d";4,3,5,4,"e"'
# Already parents first: the input order; sparse 64-bit ids; integers and
# reals in one column make it real.
expect tree_in_order sched_basic "$TR SELECT * FROM _tree_to_table!(_tree_from_table!((SELECT -10 AS id, NULL AS parent_id, 1 AS v UNION ALL SELECT 10000000000, -10, 2.5), (v)), (v))" \
	'0,"[NULL]",-10,"[NULL]",1.000000;1,0,10000000000,-10,2.500000'
expect tree_subset sched_basic "$TR SELECT * FROM _tree_to_table!(_tree_from_table!((SELECT 1 AS id, NULL AS parent_id, 1 AS a, 'x' AS b), (a, b)), (b))" \
	'0,"[NULL]",1,"[NULL]","x"'
gerr tree_duplicate "$TR SELECT * FROM _tree_to_table!(_tree_from_table!((SELECT 1 AS id, NULL AS parent_id, 'a' AS v UNION ALL SELECT 1, NULL, 'b'), (v)), (v))" \
	'tree: duplicate id'
gerr tree_cycle "$TR SELECT * FROM _tree_to_table!(_tree_from_table!((SELECT 1 AS id, 2 AS parent_id, 0 AS v UNION ALL SELECT 2, 1, 0), (v)), (v))" \
	'tree: cycle detected in parent relation'
gerr tree_no_parent "$TR SELECT * FROM _tree_to_table!(_tree_from_table!((SELECT 1 AS id, 9 AS parent_id, 0 AS v), (v)), (v))" \
	'tree: parent_id not found in id column'
gerr tree_mixed "$TR SELECT * FROM _tree_to_table!(_tree_from_table!((SELECT 1 AS id, NULL AS parent_id, 1 AS v UNION ALL SELECT 2, 1, 'x'), (v)), (v))" \
	"column 'v' was inferred to be LONG, but later received a value of type STRING"
gerr tree_text_id "$TR SELECT * FROM _tree_to_table!(_tree_from_table!((SELECT 'a' AS id, NULL AS parent_id, 0 AS v), (v)), (v))" \
	'tree: id column must be integer'
gerr tree_empty "$TR SELECT * FROM _tree_to_table!(_tree_from_table!((SELECT 1 AS id, NULL AS parent_id, 0 AS v WHERE 0), (v)), (v))" \
	'tree_to_table: expected pointer of type TREE'
gerr tree_layout "SELECT __intrinsic_tree_from_table('id', 1, 'parent_id')" \
	'tree_from_table: incorrect argument layout'
# The empty tables of data we do not import, through their modules.
expect gpu_context sched_basic "INCLUDE PERFETTO MODULE std.gpu.context; SELECT count(*) FROM gpu_context" '0'
expect spe_record sched_basic "INCLUDE PERFETTO MODULE linux.perf.spe; SELECT count(*) FROM linux_perf_spe_record" '0'

summary
