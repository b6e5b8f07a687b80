-- SPDX-License-Identifier: Apache-2.0
-- android.kernel_wakelocks: how long each kernel (or native) wakelock was
-- held between polls of its cumulative held-time counter, and what share
-- of the awake time that is.

INCLUDE PERFETTO MODULE counters.intervals;
INCLUDE PERFETTO MODULE android.suspend;

-- The wakelock counter tracks, with their type ('kernel' or 'native').
CREATE PERFETTO TABLE _kernel_wakelock_track AS
SELECT t.id, t.name, extract_arg(t.dimension_arg_set_id, 'wakelock_type') AS type
FROM track AS t
WHERE t.type = 'android_kernel_wakelock';

-- Each poll interval of each wakelock with the time it was held in it
-- (the counter's growth to the next poll).
CREATE PERFETTO TABLE _android_kernel_wakelocks_base AS
SELECT
  iv.ts,
  iv.ts AS original_ts,
  iv.dur,
  t.name,
  hash(t.name) AS name_int,
  t.type,
  iv.next_value - iv.value AS held_dur
FROM counter_leading_intervals!((
  SELECT c.id, c.ts, c.track_id, c.value
  FROM counter AS c
  WHERE c.track_id IN (SELECT k.id FROM _kernel_wakelock_track AS k)
)) AS iv
JOIN _kernel_wakelock_track AS t ON t.id = iv.track_id;

-- The poll intervals cut by the awake and suspended periods.
CREATE VIRTUAL TABLE _android_kernel_wakelocks_joined
USING SPAN_JOIN(_android_kernel_wakelocks_base PARTITIONED name_int, android_suspend_state);

-- Per wakelock and poll interval: its length, the awake part of it, the
-- time the wakelock was held, and that over the awake time (0 to 1).
CREATE PERFETTO TABLE android_kernel_wakelocks(
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur DURATION,
  -- The part of it the device was awake.
  awake_dur DURATION,
  -- The wakelock's name.
  name STRING,
  -- 'kernel' or 'native'.
  type STRING,
  -- Time it was held in the interval.
  held_dur DURATION,
  -- held_dur over awake_dur, clamped to [0, 1].
  held_ratio DOUBLE
)
AS
WITH per_interval AS (
  SELECT
    j.original_ts AS ts,
    j.name,
    j.type,
    j.held_dur,
    sum(j.dur) AS dur,
    sum(iif(j.power_state = 'awake', j.dur, 0)) AS awake_dur
  FROM _android_kernel_wakelocks_joined AS j
  GROUP BY j.original_ts, j.name, j.type, j.held_dur
)
SELECT
  p.ts,
  p.dur,
  p.awake_dur,
  p.name,
  p.type,
  CAST(p.held_dur AS INT) AS held_dur,
  max(min(p.held_dur / p.awake_dur, 1.0), 0.0) AS held_ratio
FROM per_interval AS p;
