-- SPDX-License-Identifier: Apache-2.0
-- android.entity_state_residency: the power entity state residencies
-- (power.entity_state_residency data source) as samples: per entity and
-- state, the time spent in the state since boot at each sample, and the
-- share of each sample period spent in it.

-- One row per residency sample.
CREATE PERFETTO TABLE android_entity_state_residency(
  -- The counter row (counter.id).
  id ID(counter.id),
  -- Time of the sample.
  ts TIMESTAMP,
  -- Time to the next sample of the same entity and state.
  dur DURATION,
  -- The entity (subsystem).
  entity_name STRING,
  -- The state.
  state_name STRING,
  -- The track's name as imported.
  raw_name STRING,
  -- Time spent in the state since boot at this sample.
  state_time_since_boot DURATION,
  -- The same at the next sample.
  state_time_since_boot_at_end DURATION,
  -- Share of [ts, ts + dur] spent in the state (0 to 1).
  state_time_ratio DOUBLE,
  -- The entity and state's counter track.
  track_id JOINID(track.id)
)
AS
WITH
  _esr_tracks AS (
    SELECT
      id,
      name AS raw_name,
      CASE
        WHEN name GLOB 'Entity residency: * is *'
          THEN replace(substr(name, 1, instr(name, ' is ') - 1), 'Entity residency: ', '')
      END AS entity_name,
      CASE
        WHEN name GLOB 'Entity residency: * is *'
          THEN substr(name, instr(name, ' is ') + 4)
      END AS state_name
    FROM counter_track
    WHERE type = 'entity_state'
  ),
  _esr_samples AS (
    SELECT
      c.id,
      c.ts,
      lead(c.ts) OVER w - c.ts AS dur,
      t.entity_name,
      t.state_name,
      t.raw_name,
      CAST(c.value * 1e6 AS INTEGER) AS state_time_since_boot,
      CAST(lead(c.value) OVER w * 1e6 AS INTEGER) AS state_time_since_boot_at_end,
      c.track_id
    FROM counter AS c
    JOIN _esr_tracks AS t ON c.track_id = t.id
    WINDOW w AS (PARTITION BY c.track_id ORDER BY c.ts)
  )
SELECT
  id,
  ts,
  dur,
  entity_name,
  state_name,
  raw_name,
  state_time_since_boot,
  state_time_since_boot_at_end,
  (state_time_since_boot_at_end - state_time_since_boot) * 1.0 / dur AS state_time_ratio,
  track_id
FROM _esr_samples
ORDER BY track_id, ts, id;
