-- SPDX-License-Identifier: Apache-2.0
-- android.entity_state_residency: the power HAL's entity state residency
-- counters (import/android/entity_state.c: one counter track per entity
-- and state, "Entity residency: <entity> is <state>", holding the time
-- spent in the state since boot, in ms) as intervals between samples with
-- the share of each interval spent in the state.

-- Each sample of each entity/state counter, to the track's next sample.
CREATE PERFETTO TABLE android_entity_state_residency(
  -- The counter row (`counter.id`).
  id ID(counter.id),
  -- When the sample was taken.
  ts TIMESTAMP,
  -- Time to the track's next sample (NULL for the last one).
  dur DURATION,
  -- The entity (subsystem) the state is of.
  entity_name STRING,
  -- The state.
  state_name STRING,
  -- The counter track's name.
  raw_name STRING,
  -- Time spent in the state since boot at the sample, in ns.
  state_time_since_boot DURATION,
  -- The same at the next sample.
  state_time_since_boot_at_end DURATION,
  -- Share of the interval spent in the state: 1 all of it, 0 none.
  state_time_ratio DOUBLE,
  -- The entity/state's counter track.
  track_id JOINID(track.id)
) AS
WITH
  _residency_tracks AS (
    SELECT
      ct.id,
      ct.name AS raw_name,
      -- "Entity residency: <entity> is <state>" split at its first " is ".
      CASE
        WHEN ct.name GLOB 'Entity residency: * is *'
        THEN substr(ct.name, length('Entity residency: ') + 1,
                    instr(ct.name, ' is ') - length('Entity residency: ') - 1)
      END AS entity_name,
      CASE
        WHEN ct.name GLOB 'Entity residency: * is *'
        THEN substr(ct.name, instr(ct.name, ' is ') + 4)
      END AS state_name
    FROM counter_track AS ct
    WHERE ct.type = 'entity_state'
  ),
  _samples AS (
    SELECT
      c.id,
      c.ts,
      lead(c.ts) OVER w - c.ts AS dur,
      rt.entity_name,
      rt.state_name,
      rt.raw_name,
      CAST(c.value * 1e6 AS INTEGER) AS state_time_since_boot,
      CAST(lead(c.value) OVER w * 1e6 AS INTEGER) AS state_time_since_boot_at_end,
      c.track_id
    FROM counter AS c
    JOIN _residency_tracks AS rt ON rt.id = c.track_id
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
FROM _samples;
