-- SPDX-License-Identifier: Apache-2.0
-- android.startup.startups_minsdk29: app startups on Android 10 to 12,
-- from the MetricsLogger slices of system_server: the time from an intent
-- (launchObserverNotifyIntentStarted) that led to exactly one launch and
-- a finished launch, to the end of that launching slice.

INCLUDE PERFETTO MODULE android.startup.startup_events;

-- When an activity intent started (the start of statsd's startup
-- logging).
CREATE PERFETTO VIEW _activity_intent_received AS
SELECT s.ts
FROM slice AS s
WHERE s.name = 'MetricsLogger:launchObserverNotifyIntentStarted';

-- The time cut at each intent: from one to the next (or the trace's end).
CREATE PERFETTO TABLE _activity_intent_recv_spans AS
SELECT r.ts, lead(r.ts, 1, trace_end()) OVER (ORDER BY r.ts) - r.ts AS dur
FROM _activity_intent_received AS r
ORDER BY r.ts;

-- The spans with exactly one launching slice starting in them.
CREATE PERFETTO VIEW _startup_partitions AS
SELECT sp.*
FROM _activity_intent_recv_spans AS sp
WHERE (
  SELECT count(*)
  FROM _startup_events AS e
  WHERE e.ts BETWEEN sp.ts AND sp.ts + sp.dur
) = 1;

-- When an activity launch finished (whatever the launching slice says).
CREATE PERFETTO VIEW _activity_intent_startup_successful AS
SELECT s.ts
FROM slice AS s
WHERE s.name = 'MetricsLogger:launchObserverNotifyActivityLaunchFinished';

-- The startups by start time, numbered from 0 (startup_id); the package
-- is the launching slice's.
CREATE PERFETTO TABLE _startups_minsdk29 AS
SELECT
  row_number() OVER (ORDER BY p.ts) - 1 AS startup_id,
  p.ts,
  e.ts_end,
  e.ts_end - p.ts AS dur,
  e.package_name AS package,
  NULL AS startup_type
FROM _startup_partitions AS p
JOIN _startup_events AS e
  ON e.ts BETWEEN p.ts AND p.ts + p.dur
  AND e.ts_end BETWEEN p.ts AND p.ts + p.dur
WHERE EXISTS (
  SELECT 1
  FROM _activity_intent_startup_successful AS ok
  WHERE ok.ts BETWEEN p.ts AND p.ts + p.dur
)
ORDER BY p.ts;
