-- SPDX-License-Identifier: Apache-2.0
-- android.power_rails: the energy counters of the device's power rails
-- (ODPM, on Pixels) as intervals with their average power.

INCLUDE PERFETTO MODULE counters.intervals;

-- Each energy reading of each rail, as an interval to the rail's next
-- change, with the energy at both ends and the average power between.
CREATE PERFETTO TABLE android_power_rails_counters(
  -- The counter row.
  id ID(counter.id),
  -- When the energy was read.
  ts TIMESTAMP,
  -- Time to the next reading with another value.
  dur DURATION,
  -- The rail (its counter track's name).
  power_rail_name STRING,
  -- The rail's name as the hardware gives it.
  raw_power_rail_name STRING,
  -- Energy the rail used since boot, in microjoules (the counter's value).
  energy_since_boot DOUBLE,
  -- The same at the next reading.
  energy_since_boot_at_end DOUBLE,
  -- Average power until the next reading, in milliwatts.
  average_power DOUBLE,
  -- Energy since the previous reading, in microjoules.
  energy_delta DOUBLE,
  -- The rail's track.
  track_id JOINID(track.id),
  -- Deprecated: energy_since_boot.
  value DOUBLE
)
AS
SELECT
  iv.id,
  iv.ts,
  iv.dur,
  t.name AS power_rail_name,
  extract_arg(t.source_arg_set_id, 'raw_name') AS raw_power_rail_name,
  iv.value AS energy_since_boot,
  iv.next_value AS energy_since_boot_at_end,
  1e6 * ((iv.next_value - iv.value) / iv.dur) AS average_power,
  iv.delta_value AS energy_delta,
  iv.track_id,
  iv.value
FROM counter_leading_intervals!((
  SELECT c.*
  FROM counter AS c
  JOIN counter_track AS ct ON ct.id = c.track_id
  WHERE ct.type = 'power_rails'
)) AS iv
JOIN counter_track AS t ON t.id = iv.track_id;

-- One row per power rail.
CREATE PERFETTO TABLE android_power_rails_metadata(
  -- The rail (its counter track's name).
  power_rail_name STRING,
  -- Its name as the hardware gives it.
  raw_power_rail_name STRING,
  -- The name without 'power.rails.', for tracks named so.
  friendly_name STRING,
  -- Its counter track.
  track_id JOINID(track.id),
  -- The subsystem it belongs to.
  subsystem_name STRING,
  -- The machine.
  machine_id JOINID(machine.id)
)
AS
SELECT
  t.name AS power_rail_name,
  extract_arg(t.source_arg_set_id, 'raw_name') AS raw_power_rail_name,
  iif(t.name GLOB 'power.rails.*', substr(t.name, 13), NULL) AS friendly_name,
  t.id AS track_id,
  extract_arg(t.source_arg_set_id, 'subsystem_name') AS subsystem_name,
  t.machine_id
FROM counter_track AS t
WHERE t.type = 'power_rails';
