-- SPDX-License-Identifier: Apache-2.0
-- linux.perf.samples: the callstacks of all perf samples as one tree
-- (Perfetto's linux_perf_samples_summary_tree): every node on the way
-- from a sampled callsite to its root, with how many samples stopped
-- there (self_count) and how many passed through (cumulative_count).

INCLUDE PERFETTO MODULE callstacks.stack_profile;

-- Samples per leaf callsite.
CREATE TABLE _linux_perf_callsite_counts AS
SELECT callsite_id, count(*) AS self_count
FROM perf_sample
WHERE callsite_id IS NOT NULL
GROUP BY callsite_id;

-- The sampled nodes and all their ancestors, with their own counts.
CREATE TABLE _linux_perf_raw_callstacks AS
WITH RECURSIVE reached(id) AS (
  SELECT f.id
  FROM _linux_perf_callsite_counts AS s
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
LEFT JOIN _linux_perf_callsite_counts AS s ON s.callsite_id = f.callsite_id
ORDER BY f.id;

CREATE INDEX _linux_perf_raw_callstacks_id ON _linux_perf_raw_callstacks(id);

-- Each node's self count added to it and to every ancestor.
CREATE TABLE linux_perf_samples_summary_tree AS
WITH RECURSIVE carried(id, n) AS (
  SELECT id, self_count FROM _linux_perf_raw_callstacks WHERE self_count > 0
  UNION ALL
  SELECT r.parent_id, c.n
  FROM carried AS c
  JOIN _linux_perf_raw_callstacks AS r ON r.id = c.id
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
  r.self_count,
  coalesce(c.cumulative_count, 0) AS cumulative_count
FROM _linux_perf_raw_callstacks AS r
LEFT JOIN cumulative AS c USING (id)
ORDER BY r.id;
