-- SPDX-License-Identifier: Apache-2.0
-- stacks.cpu_profiling: CPU profiling samples of every source (for us,
-- linux.perf) and their callstacks as one tree, as Perfetto's module of
-- the same name: a sample counts if it has a callstack and its session
-- samples on time, cycles or instructions (or says nothing of its unit);
-- sessions sampling page faults, tracepoints and the like are left out.

INCLUDE PERFETTO MODULE callstacks.stack_profile;

CREATE TABLE cpu_profiling_samples AS
SELECT
  ss.id,
  ss.ts,
  tc.utid,
  t.tid,
  t.name AS thread_name,
  ec.ucpu,
  c.cpu,
  ss.callsite_id,
  ss.source
FROM stack_sample AS ss
LEFT JOIN stack_sample_task_context AS tc ON tc.id = ss.task_context_id
LEFT JOIN stack_sample_execution_context AS ec ON ec.id = ss.execution_context_id
LEFT JOIN stack_sample_session AS s ON s.id = ss.session_id
LEFT JOIN thread AS t ON t.utid = tc.utid
LEFT JOIN cpu AS c ON c.id = ec.ucpu
WHERE s.timebase_unit IS NULL OR s.timebase_unit IN ('ns', 'cycles', 'instructions')
ORDER BY ss.ts;

-- Samples per leaf callsite.
CREATE TABLE _cpu_profiling_callsite_counts AS
SELECT callsite_id, count(*) AS self_count
FROM cpu_profiling_samples
GROUP BY callsite_id;

-- The sampled nodes and all their ancestors, with their own counts.
CREATE TABLE _cpu_profiling_self_callsites AS
WITH RECURSIVE reached(id) AS (
  SELECT f.id
  FROM _cpu_profiling_callsite_counts AS s
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
LEFT JOIN _cpu_profiling_callsite_counts AS s ON s.callsite_id = f.callsite_id
ORDER BY f.id;

CREATE INDEX _cpu_profiling_self_callsites_id ON _cpu_profiling_self_callsites(id);

-- Each node's self count added to it and to every ancestor; a node met
-- twice (one frame split into several functions) is summed into one row.
CREATE TABLE cpu_profiling_summary_tree AS
WITH RECURSIVE carried(id, n) AS (
  SELECT id, self_count FROM _cpu_profiling_self_callsites WHERE self_count > 0
  UNION ALL
  SELECT r.parent_id, c.n
  FROM carried AS c
  JOIN _cpu_profiling_self_callsites AS r ON r.id = c.id
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
FROM _cpu_profiling_self_callsites AS r
LEFT JOIN cumulative AS c USING (id)
GROUP BY r.id
ORDER BY r.id;
