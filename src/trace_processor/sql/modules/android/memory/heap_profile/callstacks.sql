-- SPDX-License-Identifier: Apache-2.0
-- android.memory.heap_profile.callstacks: the callstack nodes of a chosen
-- set of heap profile allocations, with each node's own totals.

INCLUDE PERFETTO MODULE callstacks.stack_profile;

-- The callstack nodes of `allocations` (rows with callsite_id, size,
-- count, alloc_size and alloc_count) and of all their ancestors: id,
-- parent_id, name, mapping_name, source_file, line_number and the node's
-- own sums of size, count, alloc_size and alloc_count (self_size,
-- self_count, self_alloc_size, self_alloc_count; 0 for an ancestor no
-- allocation names itself).
CREATE PERFETTO MACRO _android_heap_profile_callstacks_for_allocations(
  -- The allocations.
  allocations TableOrSubquery
)
RETURNS TableOrSubquery AS
(
  WITH RECURSIVE
    per_callsite AS MATERIALIZED (
      SELECT
        callsite_id,
        sum(size) AS self_size,
        sum(count) AS self_count,
        sum(alloc_size) AS self_alloc_size,
        sum(alloc_count) AS self_alloc_count
      FROM $allocations
      GROUP BY callsite_id
    ),
    reached(id) AS (
      SELECT f.id
      FROM per_callsite AS p
      JOIN _callstack_spc_forest AS f USING (callsite_id)
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
    coalesce(p.self_size, 0) AS self_size,
    coalesce(p.self_count, 0) AS self_count,
    coalesce(p.self_alloc_size, 0) AS self_alloc_size,
    coalesce(p.self_alloc_count, 0) AS self_alloc_count
  FROM reached AS r
  JOIN _callstack_spc_forest AS f ON f.id = r.id
  JOIN stack_profile_mapping AS m ON m.id = f.mapping_id
  LEFT JOIN per_callsite AS p ON p.callsite_id = f.callsite_id
  ORDER BY f.id
);
