-- SPDX-License-Identifier: Apache-2.0
-- android.startup.startups_minsdk33: app startups on Android 13 and
-- later, from the launchingActivity#<id> async slices and their
-- launchingActivity#<id>:completed[-<type>]:<package> instants.

-- The launchingActivity#<id> slices.
CREATE PERFETTO VIEW _startup_async_events AS
SELECT s.ts, s.dur, CAST(substr(s.name, 19) AS INT) AS startup_id
FROM slice AS s
WHERE s.name GLOB 'launchingActivity#*' AND s.dur > 0 AND instr(s.name, ':') = 0;

-- Per startup id, package and type, the first completion instant
-- (completed-same-process ones are not startups).
CREATE PERFETTO VIEW _startup_complete_events AS
SELECT
  CAST(str_split(c.completed, ':', 0) AS INT) AS startup_id,
  str_split(c.completed, ':', 2) AS package_name,
  CASE str_split(c.completed, ':', 1)
    WHEN 'completed-hot' THEN 'hot'
    WHEN 'completed-warm' THEN 'warm'
    WHEN 'completed-cold' THEN 'cold'
    ELSE NULL
  END AS startup_type,
  min(c.ts)
FROM (
  SELECT s.ts, substr(s.name, 19) AS completed
  FROM slice AS s
  WHERE s.dur = 0
    AND s.name GLOB 'launchingActivity#*:completed*:*'
    AND NOT (s.name GLOB '*:completed-same-process:*')
) AS c
GROUP BY 1, 2, 3;

-- The completed startups.
CREATE PERFETTO TABLE _startups_minsdk33 AS
SELECT
  a.startup_id,
  a.ts,
  a.ts + a.dur AS ts_end,
  a.dur,
  c.package_name AS package,
  c.startup_type
FROM _startup_async_events AS a
JOIN _startup_complete_events AS c ON c.startup_id = a.startup_id;
