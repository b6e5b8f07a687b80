-- SPDX-License-Identifier: Apache-2.0
-- linux.memory.process: each process's RSS (anon, file, shmem) and swap
-- over time, from the mem.rss.* and mem.swap counters (process_stats
-- polling or the rss_stat ftrace event).

INCLUDE PERFETTO MODULE linux.memory.general;

-- The four counters as intervals, one view each.
CREATE PERFETTO VIEW _anon_rss AS
SELECT c.ts, c.dur, c.upid, c.value AS anon_rss_val
FROM _all_counters_per_process AS c
WHERE c.name = 'mem.rss.anon';

CREATE PERFETTO VIEW _file_rss AS
SELECT c.ts, c.dur, c.upid, c.value AS file_rss_val
FROM _all_counters_per_process AS c
WHERE c.name = 'mem.rss.file';

CREATE PERFETTO VIEW _shmem_rss AS
SELECT c.ts, c.dur, c.upid, c.value AS shmem_rss_val
FROM _all_counters_per_process AS c
WHERE c.name = 'mem.rss.shmem';

CREATE PERFETTO VIEW _swap AS
SELECT c.ts, c.dur, c.upid, c.value AS swap_val
FROM _all_counters_per_process AS c
WHERE c.name = 'mem.swap';

-- The four side by side per process: the time cut wherever one of them
-- changes (outer span joins keep the time where only some are known).
CREATE VIRTUAL TABLE _anon_swap_sj USING SPAN_OUTER_JOIN(
  _anon_rss PARTITIONED upid,
  _swap PARTITIONED upid
);

CREATE VIRTUAL TABLE _anon_swap_file_sj USING SPAN_OUTER_JOIN(
  _anon_swap_sj PARTITIONED upid,
  _file_rss PARTITIONED upid
);

CREATE VIRTUAL TABLE _rss_swap_sj USING SPAN_OUTER_JOIN(
  _anon_swap_file_sj PARTITIONED upid,
  _shmem_rss PARTITIONED upid
);

CREATE PERFETTO TABLE _memory_rss_and_swap_per_process_table AS
SELECT
  j.ts,
  j.dur,
  j.upid,
  CAST(j.anon_rss_val AS INT) AS anon_rss,
  CAST(j.file_rss_val AS INT) AS file_rss,
  CAST(j.shmem_rss_val AS INT) AS shmem_rss,
  CAST(j.swap_val AS INT) AS swap
FROM _rss_swap_sj AS j;

-- Each process's memory over time, an interval per combination of
-- values. shmem and swap count as 0 in the sums when unknown (a process
-- may never use them); anon and file RSS do not.
CREATE PERFETTO VIEW memory_rss_and_swap_per_process(
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
  -- Anonymous RSS in bytes.
  anon_rss LONG,
  -- File-backed RSS in bytes.
  file_rss LONG,
  -- Shared memory RSS in bytes.
  shmem_rss LONG,
  -- anon_rss + file_rss + shmem_rss.
  rss LONG,
  -- Swapped out bytes.
  swap LONG,
  -- anon_rss + swap.
  anon_rss_and_swap LONG,
  -- rss + swap.
  rss_and_swap LONG
)
AS
SELECT
  m.ts,
  m.dur,
  m.upid,
  p.pid,
  p.name AS process_name,
  m.anon_rss,
  m.file_rss,
  m.shmem_rss,
  m.file_rss + m.anon_rss + coalesce(m.shmem_rss, 0) AS rss,
  m.swap,
  m.anon_rss + coalesce(m.swap, 0) AS anon_rss_and_swap,
  m.anon_rss + m.file_rss + coalesce(m.shmem_rss, 0) + coalesce(m.swap, 0) AS rss_and_swap
FROM _memory_rss_and_swap_per_process_table AS m
JOIN process AS p ON p.upid = m.upid;
