-- SPDX-License-Identifier: Apache-2.0
-- wattson.gpu.freq_idle: the GPU's frequency and power state over the
-- whole trace, for Wattson's GPU estimate.

INCLUDE PERFETTO MODULE android.gpu.frequency;
INCLUDE PERFETTO MODULE android.gpu.mali_power_state;
INCLUDE PERFETTO MODULE intervals.intersect;
INCLUDE PERFETTO MODULE wattson.device_infos;
INCLUDE PERFETTO MODULE wattson.utils;

-- PowerVR GPUs' power state slices as states (OFF 0, PG 1, ON 2).
CREATE PERFETTO TABLE _pvr_gpu_power_state(
  ts TIMESTAMP,
  dur DURATION,
  power_state LONG
)
AS
SELECT
  s.ts,
  iif(s.dur = -1, trace_end() - s.ts, s.dur) AS dur,
  CASE s.name WHEN 'OFF' THEN 0 WHEN 'PG' THEN 1 WHEN 'ON' THEN 2 ELSE -1 END AS power_state
FROM slice AS s
JOIN track AS t ON t.id = s.track_id
WHERE t.name = 'powervr_gpu_power_state';

-- The modelled GPU's frequency intervals, from the trace's start (with
-- an unknown frequency before the first).
CREATE PERFETTO TABLE _gapless_gpu_freq AS
WITH gpu AS (
  SELECT g.gpu_id FROM _gpuid_map AS g JOIN _wattson_device AS d ON d.name = g.device
)
SELECT
  trace_start() AS ts,
  min(f.ts) - trace_start() AS dur,
  NULL AS freq,
  NULL AS prev_freq,
  f.next_gpu_freq AS next_freq,
  f.gpu_id
FROM android_gpu_frequency AS f
WHERE f.gpu_id = (SELECT gpu_id FROM gpu)
UNION ALL
SELECT f.ts, f.dur, f.gpu_freq AS freq, f.prev_gpu_freq AS prev_freq,
  f.next_gpu_freq AS next_freq, f.gpu_id
FROM android_gpu_frequency AS f
WHERE f.gpu_id = (SELECT gpu_id FROM gpu);

-- The GPU's power states, Mali's and PowerVR's.
CREATE PERFETTO VIEW _gpu_power_state AS
SELECT m.ts, m.dur, m.power_state FROM android_mali_gpu_power_state AS m
UNION ALL
SELECT p.ts, p.dur, p.power_state FROM _pvr_gpu_power_state AS p;

-- The same from the trace's start (unknown before the first).
CREATE PERFETTO TABLE _gapless_gpu_power_state AS
SELECT trace_start() AS ts, min(g.ts) - trace_start() AS dur, NULL AS power_state
FROM _gpu_power_state AS g
UNION ALL
SELECT g.ts, g.dur, g.power_state FROM _gpu_power_state AS g;

-- Frequency and power state together over time. An active GPU at
-- frequency 0 is counted at its previous (else next) frequency, in
-- power state 1.
CREATE PERFETTO TABLE _gpu_freq_idle AS
WITH both_sides AS (
  SELECT ii.ts, ii.dur, f.freq, f.prev_freq, f.next_freq, p.power_state
  FROM _interval_intersect!(
    (_ii_subquery!(_gapless_gpu_freq), _ii_subquery!(_gapless_gpu_power_state)),
    ()
  ) AS ii
  JOIN _gapless_gpu_freq AS f ON f.rowid - 1 = ii.id_0
  JOIN _gapless_gpu_power_state AS p ON p.rowid - 1 = ii.id_1
)
SELECT
  b.ts,
  b.dur,
  iif(b.power_state = 2 AND b.freq = 0, iif(b.prev_freq = 0, b.next_freq, b.prev_freq), b.freq)
    AS freq,
  iif(b.power_state = 2 AND b.freq = 0, 1, b.power_state) AS power_state
FROM both_sides AS b;
