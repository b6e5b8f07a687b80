-- SPDX-License-Identifier: Apache-2.0
-- android.gpu.frequency: each GPU's frequency as intervals of constant
-- frequency (the gpufreq counter tracks).

INCLUDE PERFETTO MODULE counters.intervals;

-- One row per interval where a GPU's frequency stayed the same, with the
-- frequencies before and after.
CREATE PERFETTO TABLE android_gpu_frequency(
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur DURATION,
  -- The GPU (gpu_counter_track.gpu_id).
  gpu_id LONG,
  -- The frequency.
  gpu_freq LONG,
  -- The frequency of the interval before.
  prev_gpu_freq LONG,
  -- The frequency of the interval after.
  next_gpu_freq LONG
)
AS
SELECT
  iv.ts,
  iv.dur,
  t.gpu_id,
  CAST(iv.value AS INT) AS gpu_freq,
  CAST(iv.value - iv.delta_value AS INT) AS prev_gpu_freq,
  CAST(iv.next_value AS INT) AS next_gpu_freq
FROM counter_leading_intervals!((
  SELECT c.*
  FROM counter AS c
  JOIN gpu_counter_track AS g ON g.id = c.track_id AND g.name = 'gpufreq'
  WHERE g.gpu_id IS NOT NULL
)) AS iv
JOIN gpu_counter_track AS t ON t.id = iv.track_id;
