-- SPDX-License-Identifier: Apache-2.0
-- android.frames.timeline: app frames: the Choreographer#doFrame and
-- DrawFrame slices of each vsync (frame id), matched with SurfaceFlinger's
-- expected and actual frame timeline slices where the trace has them
-- (Android 10 and later), else guessed as android.frames.timeline_maxsdk28
-- does.

INCLUDE PERFETTO MODULE slices.with_context;
INCLUDE PERFETTO MODULE android.frames.timeline_maxsdk28;

-- The thread slices whose name matches $glob_str and whose second word
-- is a frame id (not 0, which non-numbers give, nor -1).
CREATE PERFETTO FUNCTION _get_frame_table_with_id(
  -- A glob on the slice name.
  glob_str STRING
)
RETURNS TABLE(
  -- The slice.
  id ID(slice.id),
  -- The frame id in its name.
  frame_id LONG,
  -- Its thread.
  utid JOINID(thread.id),
  -- Its process.
  upid JOINID(process.id),
  -- Its start.
  ts TIMESTAMP
)
AS
SELECT f.*
FROM (
  SELECT s.id, CAST(str_split(s.name, ' ', 1) AS INT) AS frame_id, s.utid, s.upid, s.ts
  FROM thread_slice AS s
  WHERE s.name GLOB $glob_str
) AS f
WHERE f.frame_id != 0 AND f.frame_id != -1;

-- Every 'Choreographer#doFrame <frame id>' slice.
CREATE PERFETTO TABLE android_frames_choreographer_do_frame(
  -- The slice.
  id ID(slice.id),
  -- The frame id in its name.
  frame_id LONG,
  -- The UI thread.
  ui_thread_utid JOINID(thread.id),
  -- The app's process.
  upid JOINID(process.id),
  -- The slice's start.
  ts TIMESTAMP
)
AS
SELECT f.id, f.frame_id, f.utid AS ui_thread_utid, f.upid, f.ts
FROM _get_frame_table_with_id('Choreographer#doFrame*') AS f;

-- Every 'DrawFrame <frame id>' slice (a vsync may have several, one per
-- layer drawn).
CREATE PERFETTO TABLE android_frames_draw_frame(
  -- The slice.
  id ID(slice.id),
  -- The frame id in its name.
  frame_id LONG,
  -- The render thread.
  render_thread_utid JOINID(thread.id),
  -- The app's process.
  upid JOINID(process.id)
)
AS
SELECT f.id, f.frame_id, f.utid AS render_thread_utid, f.upid
FROM _get_frame_table_with_id('DrawFrame*') AS f;

-- The actual frame timeline slices with their frame id and layer.
CREATE PERFETTO TABLE _distinct_layer_actual_timeline_slice_per_process AS
SELECT
  CAST(a.name AS INT) AS frame_id,
  CAST(str_split(a.layer_name, '#', 1) AS INT) AS layer_id,
  a.layer_name,
  a.id AS slice_id,
  a.ts,
  a.dur,
  a.upid
FROM actual_frame_timeline_slice AS a;

-- The expected frame timeline slices with their frame id.
CREATE PERFETTO TABLE _distinct_from_expected_timeline_slice_per_process AS
SELECT CAST(e.name AS INT) AS frame_id, e.upid, e.id
FROM expected_frame_timeline_slice AS e;

-- Per vsync, whether SurfaceFlinger's or HWUI's callback was missed.
CREATE PERFETTO TABLE _vsync_missed_callback AS
SELECT
  CAST(str_split(s.name, 'Callback#', 1) AS INT) AS vsync,
  max(s.name GLOB '*SF*') AS sf_callback_missed,
  max(s.name GLOB '*HWUI*') AS hwui_callback_missed
FROM slice AS s
WHERE s.name GLOB '*FT#Missed*Callback*'
GROUP BY vsync;

-- One row per frame and actual timeline slice (layer). With frame
-- timeline data: the actual slice's start and duration, else from the
-- doFrame's start to the DrawFrame's end. Without any actual frame
-- timeline slice in the trace the frames of _frames_maxsdk_28 instead.
CREATE PERFETTO TABLE android_frames_layers(
  -- The frame id (vsync).
  frame_id LONG,
  -- The frame's start.
  ts TIMESTAMP,
  -- Its duration.
  dur DURATION,
  -- Its end.
  ts_end TIMESTAMP,
  -- The Choreographer#doFrame slice.
  do_frame_id JOINID(slice.id),
  -- A DrawFrame slice of the frame.
  draw_frame_id JOINID(slice.id),
  -- The actual frame timeline slice.
  actual_frame_timeline_id JOINID(slice.id),
  -- The expected frame timeline slice.
  expected_frame_timeline_id JOINID(slice.id),
  -- The render thread.
  render_thread_utid JOINID(thread.id),
  -- The UI thread.
  ui_thread_utid JOINID(thread.id),
  -- The layer of the actual slice.
  layer_id LONG,
  -- Its name.
  layer_name STRING,
  -- The app's process.
  upid JOINID(process.id),
  -- Its name.
  process_name STRING
)
AS
WITH
  drawn AS MATERIALIZED (
    SELECT
      df.frame_id,
      ds.ts,
      rs.ts + rs.dur - ds.ts AS dur
    FROM android_frames_choreographer_do_frame AS df
    JOIN android_frames_draw_frame AS dr ON dr.frame_id = df.frame_id AND dr.upid = df.upid
    JOIN slice AS ds ON ds.id = df.id
    JOIN slice AS rs ON rs.id = dr.id
  ),
  timeline AS (
    SELECT
      df.frame_id,
      coalesce(act.ts, dn.ts) AS ts,
      coalesce(act.dur, dn.dur) AS dur,
      df.id AS do_frame_id,
      dr.id AS draw_frame_id,
      dr.render_thread_utid,
      df.ui_thread_utid,
      ex.upid,
      p.name AS process_name,
      'after_28' AS sdk,
      act.slice_id AS actual_frame_timeline_id,
      ex.id AS expected_frame_timeline_id,
      act.layer_id,
      act.layer_name
    FROM android_frames_choreographer_do_frame AS df
    JOIN android_frames_draw_frame AS dr ON dr.frame_id = df.frame_id AND dr.upid = df.upid
    JOIN drawn AS dn ON dn.frame_id = df.frame_id
    JOIN process AS p ON p.upid = df.upid
    LEFT JOIN _distinct_layer_actual_timeline_slice_per_process AS act
      ON act.frame_id = df.frame_id AND act.upid = df.upid
    LEFT JOIN _distinct_from_expected_timeline_slice_per_process AS ex
      ON ex.frame_id = df.frame_id AND ex.upid = df.upid
    ORDER BY df.frame_id
  ),
  both_kinds AS (
    SELECT * FROM timeline
    UNION
    SELECT
      m.frame_id, m.ts, m.dur, m.do_frame_id, m.draw_frame_id, m.render_thread_utid,
      m.ui_thread_utid, m.upid, m.process_name, m.sdk,
      NULL AS actual_frame_timeline_id, NULL AS expected_frame_timeline_id,
      NULL AS layer_id, NULL AS layer_name
    FROM _frames_maxsdk_28 AS m
  )
SELECT
  b.frame_id,
  b.ts,
  b.dur,
  b.ts + b.dur AS ts_end,
  b.do_frame_id,
  b.draw_frame_id,
  b.actual_frame_timeline_id,
  b.expected_frame_timeline_id,
  b.render_thread_utid,
  b.ui_thread_utid,
  b.layer_id,
  b.layer_name,
  b.upid,
  b.process_name
FROM both_kinds AS b
WHERE b.sdk = iif(
  EXISTS (SELECT 1 FROM actual_frame_timeline_slice), 'after_28', 'maxsdk28'
);

-- One row per (frame id, process): the frame over all its layers.
CREATE PERFETTO TABLE android_frames(
  -- The frame id (vsync).
  frame_id LONG,
  -- The frame's start (earliest over its layers).
  ts TIMESTAMP,
  -- Its duration (longest over its layers).
  dur DURATION,
  -- The Choreographer#doFrame slice.
  do_frame_id JOINID(slice.id),
  -- The first DrawFrame slice.
  draw_frame_id JOINID(slice.id),
  -- The first actual frame timeline slice.
  actual_frame_timeline_id JOINID(slice.id),
  -- The expected frame timeline slice.
  expected_frame_timeline_id JOINID(slice.id),
  -- The render thread.
  render_thread_utid JOINID(thread.id),
  -- The UI thread.
  ui_thread_utid JOINID(thread.id),
  -- How many actual frame timeline slices (layers) the frame has.
  actual_frame_timeline_count LONG,
  -- Always 1: one expected slice per frame.
  expected_frame_timeline_count LONG,
  -- How many DrawFrame slices the frame has.
  draw_frame_count LONG,
  -- The app's process.
  upid JOINID(process.id),
  -- Its name.
  process_name STRING
)
AS
SELECT
  l.frame_id,
  min(l.ts) AS ts,
  max(l.dur) AS dur,
  min(l.do_frame_id) AS do_frame_id,
  min(l.draw_frame_id) AS draw_frame_id,
  min(l.actual_frame_timeline_id) AS actual_frame_timeline_id,
  l.expected_frame_timeline_id,
  l.render_thread_utid,
  l.ui_thread_utid,
  count(DISTINCT l.actual_frame_timeline_id) AS actual_frame_timeline_count,
  1 AS expected_frame_timeline_count,
  count(DISTINCT l.draw_frame_id) AS draw_frame_count,
  l.upid,
  l.process_name
FROM android_frames_layers AS l
GROUP BY l.frame_id, l.upid;

-- The first frame that starts after $ts (at most one row).
CREATE PERFETTO FUNCTION android_first_frame_after(
  -- The time.
  ts TIMESTAMP
)
RETURNS TABLE(
  -- The frame id.
  frame_id LONG,
  -- Its start.
  ts TIMESTAMP,
  -- Its duration.
  dur DURATION,
  -- The Choreographer#doFrame slice.
  do_frame_id JOINID(slice.id),
  -- The DrawFrame slice.
  draw_frame_id JOINID(slice.id),
  -- The actual frame timeline slice.
  actual_frame_timeline_id JOINID(slice.id),
  -- The expected frame timeline slice.
  expected_frame_timeline_id JOINID(slice.id),
  -- The render thread.
  render_thread_utid JOINID(thread.id),
  -- The UI thread.
  ui_thread_utid JOINID(thread.id)
)
AS
SELECT
  f.frame_id,
  f.ts,
  f.dur,
  f.do_frame_id,
  f.draw_frame_id,
  f.actual_frame_timeline_id,
  f.expected_frame_timeline_id,
  f.render_thread_utid,
  f.ui_thread_utid
FROM android_frames AS f
WHERE f.ts > $ts
ORDER BY f.ts
LIMIT 1;
