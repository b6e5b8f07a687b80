-- SPDX-License-Identifier: Apache-2.0
-- linux.devfreq: device frequencies (devfreq/devfreq_frequency ftrace
-- event) as intervals of constant frequency.

INCLUDE PERFETTO MODULE counters.intervals;

-- The frequency intervals of the devfreq devices whose name matches the
-- glob $device_name.
CREATE PERFETTO FUNCTION _get_devfreq_counters(
  -- A glob on the device's name.
  device_name STRING
)
RETURNS TABLE(
  -- The counter row the interval starts at.
  id LONG,
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur DURATION,
  -- The frequency in kHz.
  freq LONG
)
AS
SELECT iv.id, iv.ts, iv.dur, CAST(iv.value AS INT) AS freq
FROM counter_leading_intervals!((
  SELECT v.*
  FROM counter AS v
  JOIN track AS t ON t.id = v.track_id
  WHERE t.type = 'linux_device_frequency'
    AND extract_arg(t.dimension_arg_set_id, 'linux_device') GLOB $device_name
)) AS iv;

-- The frequency of ARM's DynamIQ Shared Unit (devices named *devfreq_dsu
-- or *dsufreq) over time.
CREATE PERFETTO TABLE linux_devfreq_dsu_counter(
  -- The counter row the interval starts at.
  id LONG,
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur DURATION,
  -- The DSU's frequency in kHz.
  dsu_freq LONG
)
AS
SELECT d.id, d.ts, d.dur, d.freq AS dsu_freq FROM _get_devfreq_counters('*devfreq_dsu') AS d
UNION ALL
SELECT d.id, d.ts, d.dur, d.freq AS dsu_freq FROM _get_devfreq_counters('*dsufreq') AS d;
