-- SPDX-License-Identifier: Apache-2.0
-- stacks.cpu_profiling: CPU profiling samples of every source (for us,
-- linux.perf) and their callstacks as one tree, as Perfetto's module of
-- the same name: a sample counts if it has a callstack and its session
-- samples on time, cycles or instructions (or says nothing of its unit);
-- sessions sampling page faults, tracepoints and the like are left out.

INCLUDE PERFETTO MODULE callstacks.stack_profile;

CREATE PERFETTO TABLE cpu_profiling_samples AS
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
CREATE PERFETTO TABLE _cpu_profiling_callsite_counts AS
SELECT callsite_id, count(*) AS self_count
FROM cpu_profiling_samples
GROUP BY callsite_id;

-- The sampled nodes and all their ancestors, with their own counts.
CREATE PERFETTO TABLE _cpu_profiling_self_callsites AS
SELECT * FROM _callstacks_for_callsites!(_cpu_profiling_callsite_counts)
ORDER BY id;

CREATE PERFETTO INDEX _cpu_profiling_self_callsites_id ON _cpu_profiling_self_callsites(id);

-- Each node's self count added to it and to every ancestor.
CREATE PERFETTO TABLE _cpu_profiling_cumulative_counts AS
SELECT * FROM _callstacks_cumulative_counts!(_cpu_profiling_self_callsites);

CREATE PERFETTO TABLE cpu_profiling_summary_tree AS
SELECT
  r.id,
  r.parent_id,
  r.name,
  r.mapping_name,
  r.source_file,
  r.line_number,
  r.self_count,
  c.cumulative_count
FROM _cpu_profiling_cumulative_counts AS c
JOIN _cpu_profiling_self_callsites AS r USING (id)
ORDER BY r.id;
