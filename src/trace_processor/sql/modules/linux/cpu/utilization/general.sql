-- SPDX-License-Identifier: Apache-2.0
-- linux.cpu.utilization.general: what the CPU utilization modules share:
-- time cut into fixed periods, average utilization per period, and each
-- scheduling slice split where its CPU's frequency changes.

INCLUDE PERFETTO MODULE linux.cpu.frequency;

-- The start of the period of length $size that $ts falls in.
CREATE PERFETTO FUNCTION _partition_start(ts TIMESTAMP, size LONG)
RETURNS LONG
AS
SELECT ($ts / $size) * $size;

-- How many periods of length $size the trace touches.
CREATE PERFETTO FUNCTION _partition_count(size LONG)
RETURNS LONG
AS
SELECT (_partition_start(trace_end(), $size) - _partition_start(trace_start(), $size)) / $size + 1;

-- The periods of length $size covering the trace, aligned to multiples of
-- $size. (Their number is also bounded by the sched table's size.)
CREATE PERFETTO FUNCTION _partitions(size LONG)
RETURNS TABLE(ts TIMESTAMP, ts_end LONG)
AS
WITH starts AS (
  SELECT _partition_start(trace_start(), $size) + (s.id * $size) AS ts
  FROM sched AS s
  LIMIT _partition_count($size)
)
SELECT st.ts, st.ts + $size AS ts_end FROM starts AS st;

-- Each interval (ts, ts_end) of $intervals with the period it starts in,
-- cut to that period.
CREATE PERFETTO MACRO _interval_partitions(
  partitions TableOrSubquery,
  intervals TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT
    p.ts AS partition_ts,
    iif(i.ts_end < p.ts_end, i.ts_end, p.ts_end) AS ts_end,
    iif(i.ts < p.ts, p.ts, i.ts) AS ts
  FROM $intervals AS i
  JOIN $partitions AS p ON p.ts <= i.ts AND i.ts < p.ts_end
);

-- Per period of length $interval: the running time of the slices of
-- $sched_table (ts, ts_end) over the period's length, and over the
-- period's length times the CPUs.
CREATE PERFETTO MACRO _cpu_avg_utilization_per_period(
  interval Expr,
  sched_table TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT
    pi.partition_ts AS ts,
    sum(pi.ts_end - pi.ts) / (CAST($interval AS REAL) * (SELECT max(s.cpu) + 1 FROM sched AS s))
      AS utilization,
    sum(pi.ts_end - pi.ts) / CAST($interval AS REAL) AS unnormalized_utilization
  FROM _interval_partitions!(_partitions($interval), $sched_table) AS pi
  GROUP BY 1
);

-- The known CPU frequencies over time.
CREATE PERFETTO VIEW _cpu_freq_for_metrics AS
SELECT f.id, f.ts, f.dur, f.cpu, f.ucpu, f.freq
FROM cpu_frequency_counters AS f
WHERE f.freq IS NOT NULL;

-- The finished scheduling slices of real (not idle) threads.
CREATE PERFETTO VIEW _sched_without_id AS
SELECT s.ts, s.dur, s.utid, s.ucpu
FROM sched AS s
WHERE s.utid NOT IN (SELECT t.utid FROM thread AS t WHERE t.is_idle) AND s.dur != -1;

-- The slices cut where their CPU's frequency changes (the frequency NULL
-- where unknown).
CREATE VIRTUAL TABLE _cpu_freq_per_thread_span_join USING SPAN_LEFT_JOIN(
  _sched_without_id PARTITIONED ucpu,
  _cpu_freq_for_metrics PARTITIONED ucpu
);

-- (No column named id: a PERFETTO table's increasing integer id would be
-- its rowid, and the rowid is the row number here.)
CREATE PERFETTO TABLE _cpu_freq_per_thread_no_id AS
SELECT ts, dur, ucpu, utid, id AS counter_id, cpu, freq
FROM _cpu_freq_per_thread_span_join;

-- The same with a row number as id; counter_id is the frequency's
-- counter row. A table (not a view) with an INT id and an index on it,
-- so that joins on id are lookups (an untyped column is not searched by
-- an integer).
CREATE PERFETTO TABLE _cpu_freq_per_thread AS
SELECT
  CAST(f.rowid - 1 AS INT) AS id,
  f.ts,
  f.dur,
  f.ucpu,
  f.cpu,
  f.utid,
  f.freq,
  f.counter_id
FROM _cpu_freq_per_thread_no_id AS f;

CREATE PERFETTO INDEX _cpu_freq_per_thread_id_idx ON _cpu_freq_per_thread(id);
