-- SPDX-License-Identifier: Apache-2.0
-- android.suspend: when the device was suspended and when awake, from the
-- kernel's suspend/resume slices.

INCLUDE PERFETTO MODULE intervals.fill_gaps;

-- The trace's time cut into 'suspended' and 'awake' intervals per
-- machine. Suspended periods come from the 'Suspend/Resume Minimal'
-- track where a machine has it, else from the syscore_resume(0) and
-- timekeeping_freeze(0) slices of 'Suspend/Resume Latency'; a period
-- that runs past the next one's start (data loss) is dropped. Machine 0
-- is awake where nothing says otherwise, even with no suspend at all.
CREATE PERFETTO TABLE android_suspend_state(
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur DURATION,
  -- 'awake' or 'suspended'.
  power_state STRING,
  -- The machine.
  machine_id JOINID(machine.id)
)
AS
WITH
  minimal AS (
    SELECT
      s.ts,
      s.dur,
      coalesce(lead(s.ts) OVER (PARTITION BY t.machine_id ORDER BY s.ts), trace_end())
        - s.ts - s.dur AS room,
      t.machine_id
    FROM track AS t
    JOIN slice AS s ON s.track_id = t.id
    WHERE t.name = 'Suspend/Resume Minimal'
  ),
  latency AS (
    SELECT
      s.ts,
      s.dur,
      coalesce(lead(s.ts) OVER (PARTITION BY t.machine_id ORDER BY s.ts), trace_end())
        - s.ts - s.dur AS room,
      t.machine_id
    FROM slice AS s
    JOIN track AS t ON t.id = s.track_id
    WHERE t.name = 'Suspend/Resume Latency'
      AND s.name IN ('syscore_resume(0)', 'timekeeping_freeze(0)')
      AND s.dur != -1
      AND NOT EXISTS (SELECT 1 FROM minimal AS m WHERE m.machine_id = t.machine_id)
  ),
  suspended AS (
    SELECT ts, dur, machine_id, 'suspended' AS power_state
    FROM (
      SELECT ts, dur, room, machine_id FROM minimal
      UNION ALL
      SELECT ts, dur, room, machine_id FROM latency
    )
    WHERE room >= 0
    UNION ALL
    -- Machine 0 always gets its gaps filled, as awake.
    SELECT NULL, NULL, 0, NULL
  )
SELECT
  f.ts,
  f.dur,
  coalesce(f.machine_id, 0) AS machine_id,
  coalesce(f.power_state, 'awake') AS power_state
FROM _intervals_fill_gaps!((machine_id), (power_state), suspended) AS f
ORDER BY f.ts;

-- The duration of an event less the time the device spent suspended
-- during it (its duration on the monotonic clock).
CREATE PERFETTO FUNCTION _extract_duration_without_suspend(
  -- The event's start.
  ts TIMESTAMP,
  -- Its duration.
  dur DURATION
)
RETURNS LONG
AS
SELECT to_monotonic($ts + $dur) - to_monotonic($ts);
