-- SPDX-License-Identifier: Apache-2.0
-- android.gpu.mali_power_state: the power state of Mali GPUs over time
-- (their counterpart of CPU idle states).

INCLUDE PERFETTO MODULE counters.intervals;

-- One row per interval of constant power state.
CREATE PERFETTO TABLE android_mali_gpu_power_state(
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur DURATION,
  -- The power state.
  power_state LONG
)
AS
SELECT iv.ts, iv.dur, CAST(iv.value AS INT) AS power_state
FROM counter_leading_intervals!((
  SELECT c.*
  FROM counter AS c
  JOIN counter_track AS t ON t.id = c.track_id AND t.name = 'mali_gpu_power_state'
)) AS iv
JOIN counter_track AS t ON t.id = iv.track_id;
