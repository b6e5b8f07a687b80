-- SPDX-License-Identifier: Apache-2.0
-- android.cpu.cluster_type: which CPUs are little, medium or big, from
-- the cluster ids the trace processor gave the CPUs (grouped by
-- capacity), for devices with 2, 3 or 4 clusters.

INCLUDE PERFETTO MODULE intervals.overlap;

-- The cluster types by cluster id, for each number of clusters.
CREATE PERFETTO TABLE _cores AS
SELECT column1 AS cluster_id, column2 AS cluster_type, column3 AS cluster_count
FROM (
  VALUES
    (0, 'little', 2), (1, 'big', 2),
    (0, 'little', 3), (1, 'medium', 3), (2, 'big', 3),
    (0, 'little', 4), (1, 'medium', 4), (2, 'medium', 4), (3, 'big', 4)
);

-- Every CPU with its cluster's type; NULL when the CPUs form 1 or more
-- than 4 clusters.
CREATE PERFETTO TABLE android_cpu_cluster_mapping(
  -- The CPU (cpu.ucpu).
  ucpu LONG,
  -- Its number on its machine (cpu.cpu).
  cpu LONG,
  -- 'little', 'medium', 'big' or NULL.
  cluster_type STRING
)
AS
SELECT c.ucpu, c.cpu, k.cluster_type
FROM cpu AS c
LEFT JOIN _cores AS k
  ON k.cluster_id = c.cluster_id
  AND k.cluster_count = (SELECT count(DISTINCT x.cluster_id) FROM cpu AS x);

-- How many CPUs of a cluster type run something other than their idle
-- thread, over time: a row each time the count changes.
CREATE PERFETTO FUNCTION _active_cpu_count_for_cluster_type(
  -- The cluster type ('little', 'medium', 'big').
  cluster_type STRING
)
RETURNS TABLE(
  -- When the count changed.
  ts TIMESTAMP,
  -- The CPUs of the type busy from ts on.
  active_cpu_count LONG
)
AS
WITH
  cl AS (
    SELECT m.ucpu FROM android_cpu_cluster_mapping AS m WHERE m.cluster_type = $cluster_type
  ),
  busy AS (
    SELECT s.ts, s.dur
    FROM sched AS s
    WHERE s.ucpu IN (SELECT ucpu FROM cl)
      AND s.utid NOT IN (SELECT t.utid FROM thread AS t WHERE t.is_idle)
  )
SELECT o.ts, o.value AS active_cpu_count
FROM intervals_overlap_count!(busy, ts, dur) AS o
ORDER BY o.ts;
