-- SPDX-License-Identifier: Apache-2.0
-- linux.memory.high_watermark: each process's largest RSS so far, over
-- time.

INCLUDE PERFETTO MODULE counters.intervals;
INCLUDE PERFETTO MODULE linux.memory.process;

-- The running maximum of each process's RSS (anon + file + shmem, an
-- unknown part counted 0) as intervals of constant value.
CREATE PERFETTO TABLE _memory_rss_high_watermark_per_process_table AS
WITH
  total AS (
    SELECT
      m.ts,
      m.upid,
      coalesce(m.file_rss, 0) + coalesce(m.anon_rss, 0) + coalesce(m.shmem_rss, 0) AS rss
    FROM _memory_rss_and_swap_per_process_table AS m
  ),
  -- Shaped as a counter table for counter_leading_intervals: the process
  -- stands for the track; the id is not used.
  peak AS (
    SELECT
      t.ts,
      max(t.rss) OVER (PARTITION BY t.upid ORDER BY t.ts) AS value,
      t.upid AS track_id,
      0 AS id
    FROM total AS t
  )
SELECT iv.ts, iv.dur, iv.track_id AS upid, CAST(iv.value AS INT) AS rss_high_watermark
FROM counter_leading_intervals!(peak) AS iv;

-- Each process's largest RSS up to and during each interval.
CREATE PERFETTO VIEW memory_rss_high_watermark_per_process(
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur DURATION,
  -- The process.
  upid JOINID(process.id),
  -- Its pid.
  pid LONG,
  -- Its name.
  process_name STRING,
  -- The largest RSS so far, in bytes.
  rss_high_watermark LONG
)
AS
SELECT h.ts, h.dur, h.upid, p.pid, p.name AS process_name, h.rss_high_watermark
FROM _memory_rss_high_watermark_per_process_table AS h
JOIN process AS p ON p.upid = h.upid;
