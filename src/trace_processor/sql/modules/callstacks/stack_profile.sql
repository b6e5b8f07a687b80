-- SPDX-License-Identifier: Apache-2.0
-- callstacks.stack_profile: the callstack forest the summary trees of
-- linux.perf.samples and stacks.cpu_profiling are cut from. One node per
-- stack_profile_callsite (we import no symbol tables, so a frame is never
-- split into inlined functions), numbered as Perfetto numbers its nodes:
-- by callsite, so a node's id and parent_id are its callsite's.
-- A frame's name is its deobfuscated name, else its own, demangled if it
-- is a mangled C++ name; 'unknown' if it has neither.
-- The macros at the end are the tree-building steps both summary trees
-- share, and the nodes of a set of samples (a slice's callstack).

INCLUDE PERFETTO MODULE graphs.scan;

CREATE PERFETTO TABLE _callstack_spc_forest AS
SELECT
  c.id AS id,
  c.parent_id AS parent_id,
  coalesce(demangle(coalesce(f.deobfuscated_name, f.name)), f.deobfuscated_name, f.name,
           'unknown') AS name,
  f.mapping AS mapping_id,
  NULL AS source_file,
  NULL AS line_number,
  0 AS column_number,
  NULL AS inlined,
  c.id AS callsite_id,
  1 AS is_leaf_function_in_callsite_frame
FROM stack_profile_callsite AS c
JOIN stack_profile_frame AS f ON f.id = c.frame_id
ORDER BY c.id;

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
  LEFT JOIN $counts AS s ON s.callsite_id = f.callsite_id
  ORDER BY f.id
);

-- The summary tree of `callstacks` (rows as _callstacks_for_callsites!
-- gives them, a table indexed on id): each node's self count added to it
-- and to every ancestor (cumulative_count); a node met twice is summed
-- into one row. Ordered by id.
CREATE PERFETTO MACRO _callstacks_self_to_cumulative(callstacks TableOrSubquery)
RETURNS TableOrSubquery AS
(
  WITH RECURSIVE carried(id, n) AS (
    SELECT id, self_count FROM $callstacks WHERE self_count > 0
    UNION ALL
    SELECT r.parent_id, c.n
    FROM carried AS c
    JOIN $callstacks AS r ON r.id = c.id
    WHERE r.parent_id IS NOT NULL
  ),
  cumulative AS (
    SELECT id, sum(n) AS cumulative_count FROM carried GROUP BY id
  )
  SELECT
    r.id,
    r.parent_id,
    r.name,
    r.mapping_name,
    r.source_file,
    r.line_number,
    sum(r.self_count) AS self_count,
    sum(coalesce(c.cumulative_count, 0)) AS cumulative_count
  FROM $callstacks AS r
  LEFT JOIN cumulative AS c USING (id)
  GROUP BY r.id
  ORDER BY r.id
);
