-- SPDX-License-Identifier: Apache-2.0
-- android.startup.startups: app startups whatever the Android version
-- (chosen by the SDK version in the metadata, else by which slices the
-- trace has), the processes and threads that took part, and helpers over
-- their slices.

INCLUDE PERFETTO MODULE android.process_metadata;
INCLUDE PERFETTO MODULE android.startup.startups_maxsdk28;
INCLUDE PERFETTO MODULE android.startup.startups_minsdk29;
INCLUDE PERFETTO MODULE android.startup.startups_minsdk33;
INCLUDE PERFETTO MODULE android.startup.startup_events;
INCLUDE PERFETTO MODULE android.version;

-- The startups of the module that fits the trace.
CREATE PERFETTO TABLE _android_startups_raw AS
WITH version AS (
  SELECT
    CASE
      WHEN _android_sdk_version() >= 33 THEN 33
      WHEN _android_sdk_version() >= 29 THEN 29
      WHEN _android_sdk_version() IS NOT NULL THEN 28
      WHEN EXISTS (SELECT 1 FROM slice AS s WHERE s.name GLOB 'launchingActivity#*:*') THEN 33
      WHEN EXISTS (SELECT 1 FROM slice AS s WHERE s.name GLOB 'MetricsLogger:*') THEN 29
      ELSE 28
    END AS v
)
SELECT m.startup_id, m.ts, m.ts_end, m.dur, m.package, m.startup_type
FROM _startups_maxsdk28 AS m
WHERE (SELECT v FROM version) = 28
UNION ALL
SELECT m.startup_id, m.ts, m.ts_end, m.dur, m.package, m.startup_type
FROM _startups_minsdk29 AS m
WHERE (SELECT v FROM version) = 29
UNION ALL
SELECT m.startup_id, m.ts, m.ts_end, m.dur, m.package, m.startup_type
FROM _startups_minsdk33 AS m
WHERE (SELECT v FROM version) = 33;

-- The slices that tell a startup's type.
CREATE PERFETTO TABLE _startup_indicator_slices AS
SELECT s.ts, s.name, s.track_id
FROM slice AS s
WHERE s.name IN ('bindApplication', 'activityStart', 'activityResume');

-- How many slices named $name the thread started in [$start_ts, $end_ts).
CREATE PERFETTO FUNCTION _startup_indicator_slice_count(
  start_ts TIMESTAMP,
  end_ts TIMESTAMP,
  utid JOINID(thread.id),
  name STRING
)
RETURNS LONG
AS
SELECT count(*)
FROM thread_track AS t
JOIN _startup_indicator_slices AS s ON s.track_id = t.id
WHERE t.utid = $utid AND s.ts >= $start_ts AND s.ts < $end_ts AND s.name = $name;

-- The processes of each startup (those running its package, or whose
-- name starts with it when the trace has no package list) whose main
-- thread resumed an activity during it, with the startup's type: given,
-- else cold (bindApplication, activityStart and activityResume), warm
-- (activityStart and activityResume) or hot (activityResume only).
CREATE PERFETTO TABLE android_startup_processes(
  -- The startup.
  startup_id JOINID(android_startups.startup_id),
  -- The process.
  upid JOINID(process.id),
  -- Its pid.
  pid LONG,
  -- The startup's type as seen in this process.
  startup_type STRING
)
AS
WITH
  counted AS MATERIALIZED (
    SELECT
      r.startup_id,
      r.startup_type AS given_type,
      p.upid,
      p.pid,
      _startup_indicator_slice_count(r.ts, r.ts_end, t.utid, 'bindApplication') AS bind_app,
      _startup_indicator_slice_count(r.ts, r.ts_end, t.utid, 'activityStart') AS a_start,
      _startup_indicator_slice_count(r.ts, r.ts_end, t.utid, 'activityResume') AS a_resume
    FROM _android_startups_raw AS r
    JOIN android_process_metadata AS p
      ON r.package = p.package_name
      OR (NOT EXISTS (SELECT 1 FROM package_list) AND p.process_name GLOB r.package || '*')
    JOIN thread AS t ON t.upid = p.upid AND t.is_main_thread
  ),
  typed AS (
    SELECT
      c.startup_id,
      c.upid,
      c.pid,
      CASE
        WHEN c.given_type IS NOT NULL THEN c.given_type
        WHEN c.bind_app > 0 AND c.a_start > 0 AND c.a_resume > 0 THEN 'cold'
        WHEN c.a_start > 0 AND c.a_resume > 0 THEN 'warm'
        WHEN c.a_resume > 0 THEN 'hot'
        ELSE NULL
      END AS startup_type
    FROM counted AS c
    WHERE c.a_resume > 0
  )
SELECT * FROM typed WHERE startup_type IS NOT NULL;

-- Every app startup. dur_without_trampoline: where a trampoline activity
-- launched another one of the package during the startup, the duration
-- of the last such launching slice.
CREATE PERFETTO VIEW android_startups(
  -- The startup's id.
  startup_id ID,
  -- Its start.
  ts TIMESTAMP,
  -- Its end.
  ts_end TIMESTAMP,
  -- Its duration.
  dur DURATION,
  -- Its duration without the trampoline activity.
  dur_without_trampoline DURATION,
  -- The package started.
  package STRING,
  -- cold, warm or hot.
  startup_type STRING
)
AS
SELECT
  r.startup_id,
  r.ts,
  r.ts_end,
  r.dur,
  coalesce(
    (
      SELECT le.dur
      FROM _startup_events AS le
      WHERE le.package_name = r.package
        AND le.ts >= r.ts
        AND le.ts < r.ts_end
        AND EXISTS (
          SELECT 1
          FROM _startup_events AS e
          WHERE e.ts >= r.ts AND e.ts < r.ts_end AND e.ts < le.ts
        )
      ORDER BY le.ts DESC
      LIMIT 1
    ),
    r.dur
  ) AS dur_without_trampoline,
  r.package,
  coalesce(r.startup_type, max(p.startup_type)) AS startup_type
FROM _android_startups_raw AS r
LEFT JOIN android_startup_processes AS p ON p.startup_id = r.startup_id
GROUP BY r.startup_id;

-- Every thread of the processes of each startup.
CREATE PERFETTO VIEW android_startup_threads(
  -- The startup.
  startup_id JOINID(android_startups.startup_id),
  -- The startup's start.
  ts TIMESTAMP,
  -- Its duration.
  dur DURATION,
  -- The process.
  upid JOINID(process.id),
  -- Its pid.
  pid LONG,
  -- The thread.
  utid JOINID(thread.id),
  -- Its tid.
  tid LONG,
  -- Its name.
  thread_name STRING,
  -- Whether it is the process's main thread.
  is_main_thread BOOL
)
AS
SELECT
  s.startup_id,
  s.ts,
  s.dur,
  sp.upid,
  sp.pid,
  t.utid,
  t.tid,
  t.name AS thread_name,
  t.is_main_thread
FROM android_startups AS s
JOIN android_startup_processes AS sp ON sp.startup_id = s.startup_id
JOIN thread AS t ON t.upid = sp.upid;

-- The slices of the startup threads that start within their startup.
CREATE PERFETTO VIEW android_thread_slices_for_all_startups(
  -- The startup's start.
  startup_ts TIMESTAMP,
  -- Its end.
  startup_ts_end TIMESTAMP,
  -- The startup.
  startup_id JOINID(android_startups.startup_id),
  -- The thread.
  utid JOINID(thread.id),
  -- Its tid.
  tid LONG,
  -- Its name.
  thread_name STRING,
  -- Whether it is its process's main thread.
  is_main_thread BOOL,
  -- The slice's args.
  arg_set_id ARGSETID,
  -- The slice.
  slice_id JOINID(slice.id),
  -- Its name.
  slice_name STRING,
  -- Its start.
  slice_ts TIMESTAMP,
  -- Its duration.
  slice_dur DURATION
)
AS
SELECT
  st.ts AS startup_ts,
  st.ts + st.dur AS startup_ts_end,
  st.startup_id,
  st.utid,
  st.tid,
  st.thread_name,
  st.is_main_thread,
  s.arg_set_id,
  s.id AS slice_id,
  s.name AS slice_name,
  s.ts AS slice_ts,
  s.dur AS slice_dur
FROM android_startup_threads AS st
JOIN thread_track AS tt ON tt.utid = st.utid
JOIN slice AS s ON s.track_id = tt.id
WHERE s.ts BETWEEN st.ts AND st.ts + st.dur;

-- The startup's slices whose name matches the glob $slice_name.
CREATE PERFETTO FUNCTION android_slices_for_startup_and_slice_name(
  -- The startup.
  startup_id JOINID(android_startups.startup_id),
  -- A glob on the slice name.
  slice_name STRING
)
RETURNS TABLE(
  -- The slice.
  slice_id JOINID(slice.id),
  -- Its name.
  slice_name STRING,
  -- Its start.
  slice_ts TIMESTAMP,
  -- Its duration.
  slice_dur DURATION,
  -- Its thread's name.
  thread_name STRING,
  -- Its thread's tid.
  tid LONG,
  -- Its args.
  arg_set_id ARGSETID
)
AS
SELECT a.slice_id, a.slice_name, a.slice_ts, a.slice_dur, a.thread_name, a.tid, a.arg_set_id
FROM android_thread_slices_for_all_startups AS a
WHERE a.startup_id = $startup_id AND a.slice_name GLOB $slice_name;

-- The class loading slices ('L<class>;') of every startup.
CREATE PERFETTO VIEW android_class_loading_for_startup(
  -- The slice.
  slice_id JOINID(slice.id),
  -- The startup.
  startup_id JOINID(android_startups.startup_id),
  -- The slice's name.
  slice_name STRING,
  -- Its start.
  slice_ts TIMESTAMP,
  -- Its duration.
  slice_dur DURATION,
  -- Its thread's name.
  thread_name STRING,
  -- Its thread's tid.
  tid LONG,
  -- Its args.
  arg_set_id ARGSETID
)
AS
SELECT
  a.slice_id,
  a.startup_id,
  a.slice_name,
  a.slice_ts,
  a.slice_dur,
  a.thread_name,
  a.tid,
  a.arg_set_id
FROM android_thread_slices_for_all_startups AS a
WHERE a.slice_name GLOB 'L*;';

-- The startup's binder transactions longer than $threshold, with the
-- process called.
CREATE PERFETTO FUNCTION android_binder_transaction_slices_for_startup(
  -- The startup.
  startup_id JOINID(android_startups.startup_id),
  -- The shortest duration kept.
  threshold DOUBLE
)
RETURNS TABLE(
  -- The slice.
  id LONG,
  -- Its duration.
  slice_dur DURATION,
  -- Its thread's name.
  thread_name STRING,
  -- The name of the process called.
  process STRING,
  -- The slice's args.
  arg_set_id ARGSETID,
  -- Whether its thread is the main thread.
  is_main_thread BOOL
)
AS
SELECT
  a.slice_id AS id,
  a.slice_dur,
  a.thread_name,
  p.name AS process,
  a.arg_set_id,
  a.is_main_thread
FROM android_thread_slices_for_all_startups AS a
JOIN process AS p ON p.pid = extract_arg(a.arg_set_id, 'destination process')
WHERE a.startup_id = $startup_id
  AND a.slice_name GLOB 'binder transaction'
  AND a.slice_dur > $threshold;

-- The total duration of the startup's slices whose name matches the glob.
CREATE PERFETTO FUNCTION android_sum_dur_for_startup_and_slice(
  -- The startup.
  startup_id JOINID(android_startups.startup_id),
  -- A glob on the slice name.
  slice_name STRING
)
RETURNS LONG
AS
SELECT sum(a.slice_dur)
FROM android_thread_slices_for_all_startups AS a
WHERE a.startup_id = $startup_id AND a.slice_name GLOB $slice_name;

-- The same, on main threads only.
CREATE PERFETTO FUNCTION android_sum_dur_on_main_thread_for_startup_and_slice(
  -- The startup.
  startup_id JOINID(android_startups.startup_id),
  -- A glob on the slice name.
  slice_name STRING
)
RETURNS LONG
AS
SELECT sum(a.slice_dur)
FROM android_thread_slices_for_all_startups AS a
WHERE a.startup_id = $startup_id AND a.slice_name GLOB $slice_name AND a.is_main_thread;
