-- SPDX-License-Identifier: Apache-2.0
-- android.memory.heap_profile.summary_tree: the heap profiles as one
-- callstack tree, with per node the unreleased and allocated bytes, its
-- own and with its descendants'. Every process and dump of the trace
-- (heap_profile_allocation) counts; the nodes are callstacks.stack_profile's
-- (self_size: allocated there and not freed; self_alloc_size: allocated
-- there at all; cumulative_*: summed over the node and all it called),
-- those of the allocations' callstacks and their ancestors.

INCLUDE PERFETTO MODULE callstacks.stack_profile;

-- Per callsite: net bytes (allocations less frees) and allocated bytes.
CREATE PERFETTO TABLE _android_heap_profile_callsite_sizes AS
SELECT
  callsite_id,
  sum(size) AS self_size,
  sum(max(size, 0)) AS self_alloc_size
FROM heap_profile_allocation
GROUP BY callsite_id;

-- The nodes of the allocations' callsites and their ancestors. Every node
-- of an allocating callsite holds its bytes, as Perfetto's tree does:
-- a callsite split into inlined functions counts them at each.
CREATE PERFETTO TABLE _android_heap_profile_nodes AS
SELECT
  n.id,
  n.parent_id,
  n.name,
  n.mapping_name,
  n.source_file,
  n.line_number,
  coalesce(s.self_size, 0) AS self_size,
  coalesce(s.self_alloc_size, 0) AS self_alloc_size
FROM _callstacks_for_stack_profile_samples!(_android_heap_profile_callsite_sizes) AS n
LEFT JOIN _android_heap_profile_callsite_sizes AS s ON s.callsite_id = +n.callsite_id;

CREATE PERFETTO INDEX _android_heap_profile_nodes_id ON _android_heap_profile_nodes(id);

-- Each node's own bytes plus its children's cumulative bytes, bottom up
-- (callstacks.stack_profile's _callstacks_cumulative_counts! with two
-- columns): work in proportion to the nodes, not to nodes times depth.
CREATE PERFETTO TABLE _android_heap_profile_cumulatives AS
SELECT g.id, g.cumulative_size, g.cumulative_alloc_size
FROM _graph_aggregating_scan!(
  (
    SELECT e.id AS source_node_id, e.parent_id AS dest_node_id
    FROM _android_heap_profile_nodes AS e
    WHERE e.parent_id IS NOT NULL
  ),
  (
    SELECT l.id, l.self_size AS cumulative_size, l.self_alloc_size AS cumulative_alloc_size
    FROM _android_heap_profile_nodes AS l
    WHERE l.id NOT IN (
      SELECT k.parent_id FROM _android_heap_profile_nodes AS k WHERE k.parent_id IS NOT NULL
    )
  ),
  (cumulative_size, cumulative_alloc_size),
  (
    WITH from_children AS (
      SELECT
        t.id,
        sum(t.cumulative_size) AS size_below,
        sum(t.cumulative_alloc_size) AS alloc_below
      FROM $table AS t
      GROUP BY t.id
    )
    SELECT
      f.id,
      f.size_below + n.self_size AS cumulative_size,
      f.alloc_below + n.self_alloc_size AS cumulative_alloc_size
    FROM from_children AS f
    JOIN _android_heap_profile_nodes AS n USING (id)
  )
) AS g;

-- The heap profile's summary tree: one row per callstack node.
CREATE PERFETTO TABLE android_heap_profile_summary_tree(
  -- The node (joinable with its parent_id).
  id LONG,
  -- Its caller's node, NULL for a root.
  parent_id LONG,
  -- The function.
  name STRING,
  -- The file of its mapping.
  mapping_name STRING,
  -- Its source file, if known.
  source_file STRING,
  -- Its line, if known.
  line_number LONG,
  -- Bytes allocated at this node (as the leaf) and not freed.
  self_size LONG,
  -- self_size of the node and all its descendants.
  cumulative_size LONG,
  -- Bytes allocated at this node, freed or not.
  self_alloc_size LONG,
  -- self_alloc_size of the node and all its descendants.
  cumulative_alloc_size LONG
) AS
SELECT
  n.id,
  n.parent_id,
  n.name,
  n.mapping_name,
  n.source_file,
  n.line_number,
  n.self_size,
  coalesce(c.cumulative_size, 0) AS cumulative_size,
  n.self_alloc_size,
  coalesce(c.cumulative_alloc_size, 0) AS cumulative_alloc_size
FROM _android_heap_profile_nodes AS n
LEFT JOIN _android_heap_profile_cumulatives AS c USING (id)
ORDER BY n.id;
