-- SPDX-License-Identifier: Apache-2.0
-- callstacks.stack_profile: the callstack forest the summary trees of
-- linux.perf.samples, stacks.cpu_profiling and the heap profile are cut
-- from. A callsite whose frame has symbols (a stack_profile_symbol set,
-- from ModuleSymbols) is one node per symbol: the set lists the inlined
-- functions first and the function they were inlined into last, so the
-- first symbol is the leaf of the callsite's nodes and each is the child
-- of the next; the last one's parent is the first node of the caller's
-- callsite. Any other callsite is one node. Nodes are numbered as
-- Perfetto numbers them: by callsite, then by symbol, from 0 (without
-- symbols a node's id is its callsite's).
-- A node's name is its symbol's, else the frame's deobfuscated name, else
-- its own, demangled if it is a mangled C++ name; 'unknown' if none.
-- The macros at the end are the tree-building steps the summary trees
-- share, and the nodes of a set of samples (a slice's callstack).

INCLUDE PERFETTO MODULE graphs.scan;

-- Per frame with symbols: its first and last symbol row.
CREATE PERFETTO TABLE _callstack_spf_symbol_bounds AS
SELECT
  f.id AS frame_id,
  min(s.id) AS first_symbol_id,
  max(s.id) AS last_symbol_id
FROM stack_profile_frame AS f
JOIN stack_profile_symbol AS s ON s.symbol_set_id = f.symbol_set_id
GROUP BY f.id
ORDER BY f.id;

-- Per callsite: how many nodes it makes and the id of its first one.
CREATE PERFETTO TABLE _callstack_spc_node_ranges AS
SELECT
  callsite_id,
  parent_callsite_id,
  frame_id,
  first_symbol_id,
  last_symbol_id,
  sum(n_nodes) OVER (ORDER BY callsite_id ROWS UNBOUNDED PRECEDING) - n_nodes AS first_node_id
FROM (
  SELECT
    c.id AS callsite_id,
    c.parent_id AS parent_callsite_id,
    c.frame_id,
    b.first_symbol_id,
    b.last_symbol_id,
    coalesce(b.last_symbol_id - b.first_symbol_id + 1, 1) AS n_nodes
  FROM stack_profile_callsite AS c
  LEFT JOIN _callstack_spf_symbol_bounds AS b ON b.frame_id = c.frame_id
)
ORDER BY callsite_id;

CREATE PERFETTO TABLE _callstack_spc_forest AS
WITH nodes AS (
  -- Callsites without symbols: one node.
  SELECT
    r.first_node_id AS id,
    p.first_node_id AS parent_id,
    r.callsite_id,
    r.frame_id,
    NULL AS symbol_id,
    1 AS is_leaf
  FROM _callstack_spc_node_ranges AS r
  LEFT JOIN _callstack_spc_node_ranges AS p ON p.callsite_id = r.parent_callsite_id
  WHERE r.first_symbol_id IS NULL
  UNION ALL
  -- Callsites with symbols: a node per symbol, each the child of the next.
  SELECT
    r.first_node_id + s.id - r.first_symbol_id AS id,
    iif(s.id = r.last_symbol_id, p.first_node_id,
        r.first_node_id + s.id - r.first_symbol_id + 1) AS parent_id,
    r.callsite_id,
    r.frame_id,
    s.id AS symbol_id,
    s.id = r.first_symbol_id AS is_leaf
  FROM _callstack_spc_node_ranges AS r
  JOIN stack_profile_symbol AS s
    ON s.id BETWEEN r.first_symbol_id AND r.last_symbol_id
  LEFT JOIN _callstack_spc_node_ranges AS p ON p.callsite_id = r.parent_callsite_id
  WHERE r.first_symbol_id IS NOT NULL
)
SELECT
  -- Typed, so the id is the table's rowid (lookups by id are searches).
  CAST(n.id AS INT) AS id,
  CAST(n.parent_id AS INT) AS parent_id,
  coalesce(demangle(coalesce(s.name, f.deobfuscated_name, f.name)), s.name,
           f.deobfuscated_name, f.name, 'unknown') AS name,
  f.mapping AS mapping_id,
  s.source_file,
  s.line_number,
  0 AS column_number,
  s.inlined,
  n.callsite_id,
  n.is_leaf AS is_leaf_function_in_callsite_frame
FROM nodes AS n
JOIN stack_profile_frame AS f ON f.id = n.frame_id
LEFT JOIN stack_profile_symbol AS s ON s.id = n.symbol_id
ORDER BY n.id;

CREATE PERFETTO INDEX _callstack_spc_forest_callsite ON _callstack_spc_forest(callsite_id);
CREATE PERFETTO INDEX _callstack_spc_forest_parent ON _callstack_spc_forest(parent_id);

-- The nodes of the callsites of `spc_samples` (a table or subquery with a
-- callsite_id column) and all their ancestors, ordered by id: id,
-- parent_id, callsite_id, name, mapping_name, source_file, line_number,
-- inlined, is_leaf_function_in_callsite_frame.
CREATE PERFETTO MACRO _callstacks_for_stack_profile_samples(spc_samples TableOrSubquery)
RETURNS TableOrSubquery AS
(
  WITH RECURSIVE _reached(id) AS (
    SELECT f.id
    FROM (SELECT callsite_id FROM $spc_samples) AS s
    JOIN _callstack_spc_forest AS f USING (callsite_id)
    WHERE f.is_leaf_function_in_callsite_frame
    UNION
    SELECT f.parent_id
    FROM _reached AS r
    JOIN _callstack_spc_forest AS f ON f.id = r.id
    WHERE f.parent_id IS NOT NULL
  )
  SELECT
    f.id,
    f.parent_id,
    f.callsite_id,
    f.name,
    m.name AS mapping_name,
    f.source_file,
    f.line_number,
    f.inlined,
    f.is_leaf_function_in_callsite_frame
  FROM _reached AS r
  JOIN _callstack_spc_forest AS f ON f.id = r.id
  JOIN stack_profile_mapping AS m ON m.id = f.mapping_id
  ORDER BY f.id
);

-- The nodes of the callsites counted in `counts` (a table with columns
-- callsite_id and self_count) and all their ancestors: id, parent_id,
-- name, mapping_name, source_file, line_number and the node's own count
-- (0 for an ancestor never sampled itself), ordered by id. `counts` is
-- read twice: pass a table, not a subquery.
CREATE PERFETTO MACRO _callstacks_for_callsites(counts TableOrSubquery)
RETURNS TableOrSubquery AS
(
  WITH RECURSIVE reached(id) AS (
    SELECT f.id
    FROM $counts AS s
    JOIN _callstack_spc_forest AS f USING (callsite_id)
    WHERE f.is_leaf_function_in_callsite_frame
    UNION
    SELECT f.parent_id
    FROM reached AS r
    JOIN _callstack_spc_forest AS f ON f.id = r.id
    WHERE f.parent_id IS NOT NULL
  )
  SELECT
    f.id,
    f.parent_id,
    f.name,
    m.name AS mapping_name,
    f.source_file,
    f.line_number,
    iif(f.is_leaf_function_in_callsite_frame, coalesce(s.self_count, 0), 0) AS self_count
  FROM reached AS r
  JOIN _callstack_spc_forest AS f ON f.id = r.id
  JOIN stack_profile_mapping AS m ON m.id = f.mapping_id
  -- '+': no affinity on our side, so an untyped $counts (a GROUP BY of a
  -- view's column) can still be searched through an automatic index.
  LEFT JOIN $counts AS s ON s.callsite_id = +f.callsite_id
  ORDER BY f.id
);

-- The cumulative count of each node of `callstacks` (rows as
-- _callstacks_for_callsites! gives them: one per node, a table indexed on
-- id): its self count plus its children's cumulative counts, computed
-- bottom up by the graph scan (a node once its deepest child is done), so
-- the work grows with the nodes, not with the nodes times their depth.
-- Columns: id, cumulative_count; the callers join it back to their nodes.
CREATE PERFETTO MACRO _callstacks_cumulative_counts(callstacks TableOrSubquery)
RETURNS TableOrSubquery AS
(
  SELECT g.id, g.cumulative_count
  FROM _graph_aggregating_scan!(
    (
      SELECT e.id AS source_node_id, e.parent_id AS dest_node_id
      FROM $callstacks AS e
      WHERE e.parent_id IS NOT NULL
    ),
    (
      -- The nodes nothing hangs below start with their own count.
      SELECT l.id, l.self_count AS cumulative_count
      FROM $callstacks AS l
      WHERE l.id NOT IN (
        SELECT k.parent_id FROM $callstacks AS k WHERE k.parent_id IS NOT NULL
      )
    ),
    (cumulative_count),
    (
      WITH from_children AS (
        SELECT t.id, sum(t.cumulative_count) AS below
        FROM $table AS t
        GROUP BY t.id
      )
      SELECT f.id, f.below + n.self_count AS cumulative_count
      FROM from_children AS f
      JOIN $callstacks AS n USING (id)
    )
  ) AS g
);
