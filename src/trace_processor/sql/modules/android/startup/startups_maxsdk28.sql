-- SPDX-License-Identifier: Apache-2.0
-- android.startup.startups_maxsdk28: app startups on Android 9 and older:
-- warm and cold ones from the launching slices, hot ones from a main
-- thread's activityResume (outside those) to the end of the next frame.

INCLUDE PERFETTO MODULE android.frames.timeline;
INCLUDE PERFETTO MODULE android.startup.startup_events;
INCLUDE PERFETTO MODULE slices.with_context;

-- The startups by start time, numbered from 0 (startup_id).
CREATE PERFETTO TABLE _startups_maxsdk28 AS
WITH
  launched AS (
    SELECT e.ts, e.ts_end, e.package_name AS package, NULL AS startup_type
    FROM _startup_events AS e
  ),
  resumed AS (
    SELECT
      s.ts,
      f.ts + f.dur AS ts_end,
      coalesce(s.process_name, s.thread_name, 'unknown') AS package,
      'hot' AS startup_type
    FROM thread_slice AS s, android_first_frame_after(s.ts) AS f
    WHERE s.name = 'activityResume'
      AND s.is_main_thread
      AND NOT EXISTS (
        SELECT 1 FROM launched AS l WHERE s.ts BETWEEN l.ts AND l.ts_end
      )
  ),
  all_starts AS (
    SELECT * FROM launched
    UNION ALL
    SELECT * FROM resumed
  )
SELECT
  row_number() OVER (ORDER BY a.ts) - 1 AS startup_id,
  a.ts,
  a.ts_end,
  a.ts_end - a.ts AS dur,
  a.package,
  a.startup_type
FROM all_starts AS a
ORDER BY a.ts;
