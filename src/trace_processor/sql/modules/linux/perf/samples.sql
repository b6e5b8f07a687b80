-- SPDX-License-Identifier: Apache-2.0
-- linux.perf.samples: the callstacks of all perf samples as one tree
-- (Perfetto's linux_perf_samples_summary_tree): every node on the way
-- from a sampled callsite to its root, with how many samples stopped
-- there (self_count) and how many passed through (cumulative_count).

INCLUDE PERFETTO MODULE callstacks.stack_profile;

-- Samples per leaf callsite.
CREATE PERFETTO TABLE _linux_perf_callsite_counts AS
SELECT callsite_id, count(*) AS self_count
FROM perf_sample
WHERE callsite_id IS NOT NULL
GROUP BY callsite_id;

-- The sampled nodes and all their ancestors, with their own counts.
CREATE PERFETTO TABLE _linux_perf_raw_callstacks AS
SELECT * FROM _callstacks_for_callsites!(_linux_perf_callsite_counts)
ORDER BY id;

CREATE PERFETTO INDEX _linux_perf_raw_callstacks_id ON _linux_perf_raw_callstacks(id);

-- Each node's self count added to it and to every ancestor.
CREATE PERFETTO TABLE _linux_perf_cumulative_counts AS
SELECT * FROM _callstacks_cumulative_counts!(_linux_perf_raw_callstacks);

CREATE PERFETTO TABLE linux_perf_samples_summary_tree AS
SELECT
  r.id,
  r.parent_id,
  r.name,
  r.mapping_name,
  r.source_file,
  r.line_number,
  r.self_count,
  c.cumulative_count
FROM _linux_perf_cumulative_counts AS c
JOIN _linux_perf_raw_callstacks AS r USING (id)
ORDER BY r.id;
