-- SPDX-License-Identifier: Apache-2.0
-- android.cujs.base: Android's jank CUJs (Critical User Journeys, the
-- 'J<name>' slices the framework's FrameTracker emits on a process
-- track), their state markers, and the frames inside each.

INCLUDE PERFETTO MODULE android.frames.timeline;

-- True for a CUJ slice ('J<...>') of a com.android.* or
-- com.google.android* process.
CREATE PERFETTO MACRO _is_jank_slice(
  slice TableOrSubquery,
  process TableOrSubquery
)
RETURNS Expr
AS $slice.name GLOB 'J<*>'
AND ($process.name GLOB 'com.google.android*' OR $process.name GLOB 'com.android.*');

-- The CUJ slices longer than 0, numbered from 1 by start (the raw list:
-- android_jank_cuj gives the kept ones).
CREATE PERFETTO TABLE _jank_cujs_slices AS
SELECT
  row_number() OVER (ORDER BY s.ts, s.id) AS cuj_id,
  p.upid,
  p.name AS process_name,
  s.id AS slice_id,
  s.name AS cuj_slice_name,
  s.ts,
  s.dur,
  s.ts + s.dur AS ts_end
FROM slice AS s
JOIN process_track AS pt ON pt.id = s.track_id
JOIN process AS p ON p.upid = pt.upid
WHERE _is_jank_slice!(s, p) AND s.dur > 0;

-- FrameTracker's markers within each CUJ ('<cuj>#FT#...' slices, 'FT#...'
-- slices on a track named as the CUJ, '<cuj>#UIThread'), with their kind.
CREATE PERFETTO TABLE _cuj_state_markers AS
SELECT
  c.cuj_id,
  c.upid,
  CASE
    WHEN m.name GLOB '*FT#begin*' THEN 'begin'
    WHEN m.name GLOB '*FT#deferMonitoring*' THEN 'deferMonitoring'
    WHEN m.name GLOB '*FT#end*' THEN 'end'
    WHEN m.name GLOB '*FT#cancel*' THEN 'cancel'
    WHEN m.name GLOB '*FT#layerId*' THEN 'layerId'
    WHEN m.name GLOB '*#UIThread' THEN 'UIThread'
    ELSE 'other'
  END AS marker_type,
  m.name AS marker_name,
  tt.utid
FROM _jank_cujs_slices AS c
LEFT JOIN slice AS m ON m.ts >= c.ts AND m.ts < c.ts_end
LEFT JOIN track AS mt ON mt.id = m.track_id
LEFT JOIN thread_track AS tt ON tt.id = m.track_id
WHERE m.name GLOB (c.cuj_slice_name || '#FT#*')
  OR (mt.name = c.cuj_slice_name AND m.name GLOB 'FT#*')
  OR m.name = (c.cuj_slice_name || '#UIThread');

-- The number after $key in a marker's name, or NULL.
CREATE PERFETTO FUNCTION _cuj_marker_number(name STRING, key STRING)
RETURNS LONG
AS
SELECT iif($name GLOB '*' || $key || '*', CAST(str_split($name, $key, 1) AS INT), NULL);

-- Per CUJ, what its markers say: the layer, the first and last vsync and
-- the UI thread.
CREATE PERFETTO TABLE _cuj_instant_events AS
SELECT
  c.cuj_id,
  c.upid,
  max(_cuj_marker_number(m.marker_name, 'layerId#')) AS layer_id,
  max(_cuj_marker_number(m.marker_name, 'beginVsync#')) AS begin_vsync,
  max(_cuj_marker_number(m.marker_name, 'endVsync#')) AS end_vsync,
  max(iif(m.marker_type = 'UIThread', m.utid, NULL)) AS ui_thread
FROM _jank_cujs_slices AS c
LEFT JOIN _cuj_state_markers AS m ON m.cuj_id = c.cuj_id
GROUP BY c.cuj_id;

-- The CUJ's name: its slice name without 'J<' and '>'.
CREATE PERFETTO FUNCTION _extract_cuj_name_from_slice(cuj_slice_name STRING)
RETURNS STRING
AS
SELECT substr($cuj_slice_name, 3, length($cuj_slice_name) - 3);

-- The frames (with a layer) of each CUJ's UI thread whose vsync lies in
-- the CUJ's vsync range and that start or end within the CUJ.
CREATE PERFETTO VIEW _all_frames_in_cuj AS
SELECT
  _extract_cuj_name_from_slice(c.cuj_slice_name) AS cuj_name,
  c.upid,
  c.process_name,
  e.layer_id AS cuj_layer_id,
  f.layer_id,
  f.layer_name,
  f.frame_id,
  f.do_frame_id,
  f.expected_frame_timeline_id,
  c.cuj_id,
  f.ts AS frame_ts,
  f.dur AS dur,
  f.ts + f.dur AS ts_end,
  f.ui_thread_utid,
  f.render_thread_utid
FROM android_frames_layers AS f
JOIN _cuj_instant_events AS e ON e.ui_thread = f.ui_thread_utid AND f.layer_id IS NOT NULL
JOIN _jank_cujs_slices AS c ON c.cuj_id = e.cuj_id
WHERE f.frame_id >= e.begin_vsync
  AND f.frame_id <= e.end_vsync
  AND (
    (f.ts >= c.ts AND f.ts <= c.ts_end)
    OR (f.ts + f.dur >= c.ts AND f.ts + f.dur <= c.ts_end)
  );

-- The distinct frames (by vsync) of each CUJ, numbered in time order,
-- from the earliest start to the latest end over their layers.
CREATE PERFETTO TABLE _android_distinct_frames_in_cuj AS
SELECT
  row_number() OVER (PARTITION BY a.cuj_id ORDER BY min(a.frame_ts)) AS frame_idx,
  count(*) OVER (PARTITION BY a.cuj_id) AS frame_cnt,
  a.cuj_name,
  a.upid,
  a.cuj_layer_id,
  a.layer_id,
  a.layer_name,
  a.process_name,
  a.frame_id,
  a.do_frame_id,
  a.expected_frame_timeline_id,
  a.cuj_id,
  a.ui_thread_utid,
  a.render_thread_utid,
  min(a.frame_ts) AS frame_ts,
  max(a.ts_end) AS ts_end,
  max(a.ts_end) - min(a.frame_ts) AS dur
FROM _all_frames_in_cuj AS a
GROUP BY a.frame_id, a.cuj_id;

-- The distinct frames of each CUJ per layer.
CREATE PERFETTO VIEW _android_distinct_frames_layers_cuj AS
SELECT
  a.cuj_name,
  a.upid,
  a.cuj_layer_id,
  a.layer_id,
  a.layer_name,
  a.process_name,
  a.frame_id,
  a.do_frame_id,
  a.expected_frame_timeline_id,
  a.cuj_id,
  a.ui_thread_utid,
  a.render_thread_utid,
  a.frame_ts,
  a.ts_end,
  a.dur
FROM _all_frames_in_cuj AS a
GROUP BY a.frame_id, a.cuj_id, a.layer_id;

-- The Choreographer#doFrame slices (vsync > 0, in the CUJ's vsync range
-- when it has one) of each CUJ's UI thread (its main thread when the
-- markers name none) that overlap the CUJ.
CREATE PERFETTO TABLE _android_jank_cuj_do_frames AS
WITH do_frames AS (
  SELECT
    s.id,
    d.frame_id AS vsync,
    d.ts,
    d.upid,
    s.ts + s.dur AS ts_end,
    s.track_id
  FROM android_frames_choreographer_do_frame AS d
  JOIN slice AS s ON s.id = d.id
)
SELECT c.cuj_id, e.ui_thread, t.utid, d.*
FROM thread AS t
JOIN _jank_cujs_slices AS c ON c.upid = t.upid
LEFT JOIN _cuj_instant_events AS e ON e.cuj_id = c.cuj_id AND e.upid = c.upid
JOIN thread_track AS tt ON tt.utid = t.utid
JOIN do_frames AS d ON d.ts_end >= c.ts AND d.ts <= c.ts_end AND d.track_id = tt.id
WHERE ((e.ui_thread IS NULL AND t.is_main_thread) OR e.ui_thread = t.utid)
  AND d.vsync > 0
  AND (d.vsync >= e.begin_vsync OR e.begin_vsync IS NULL)
  AND (d.vsync <= e.end_vsync OR e.end_vsync IS NULL);

-- The layer each CUJ drew on: the one its layerId marker names, or, with
-- no marker, the only layer drawn if every frame of the CUJ drew exactly
-- one; else no row.
CREATE PERFETTO TABLE android_jank_cuj_layer_name(
  -- The CUJ.
  cuj_id LONG,
  -- Its layer's name.
  layer_name STRING
)
AS
WITH
  marked AS (
    SELECT a.cuj_id, max(a.layer_name) AS layer_name
    FROM _all_frames_in_cuj AS a
    WHERE a.cuj_layer_id IS NOT NULL AND a.layer_id = a.cuj_layer_id
    GROUP BY a.cuj_id
  ),
  unmarked_frames AS (
    SELECT a.cuj_id, a.frame_id, a.layer_name
    FROM _all_frames_in_cuj AS a
    WHERE a.cuj_layer_id IS NULL
    GROUP BY a.cuj_id, a.frame_id, a.layer_name
  ),
  per_frame AS (
    SELECT
      u.cuj_id,
      u.layer_name,
      count(*) OVER (PARTITION BY u.cuj_id, u.frame_id) AS layers_per_frame
    FROM unmarked_frames AS u
  ),
  guessed AS (
    SELECT f.cuj_id, max(f.layer_name) AS layer_name
    FROM per_frame AS f
    GROUP BY f.cuj_id
    HAVING max(f.layers_per_frame) = 1
  )
SELECT m.cuj_id, m.layer_name FROM marked AS m
UNION ALL
SELECT g.cuj_id, g.layer_name FROM guessed AS g;

-- The CUJs kept: not cancelled, and, where they have no state marker
-- (older builds), longer than 4 ms.
CREATE PERFETTO TABLE android_jank_cuj(
  -- The CUJ's number.
  cuj_id LONG,
  -- The process.
  upid JOINID(process.id),
  -- Its name.
  process_name STRING,
  -- The CUJ slice.
  slice_id JOINID(slice.id),
  -- Its name.
  cuj_slice_name STRING,
  -- The slice's start.
  ts TIMESTAMP,
  -- Its duration.
  dur DURATION,
  -- Its end.
  ts_end TIMESTAMP,
  -- The CUJ's name without 'J<' and '>'.
  cuj_name STRING,
  -- 'completed' (an end marker), 'canceled' or NULL (no marker).
  state STRING,
  -- The UI thread.
  ui_thread JOINID(thread.id),
  -- The layer its marker names.
  layer_id LONG,
  -- The first vsync of the CUJ.
  begin_vsync LONG,
  -- The last vsync of the CUJ.
  end_vsync LONG
)
AS
WITH with_state AS (
  SELECT
    c.*,
    _extract_cuj_name_from_slice(c.cuj_slice_name) AS cuj_name,
    CASE
      WHEN EXISTS (
        SELECT 1 FROM _cuj_state_markers AS m WHERE m.cuj_id = c.cuj_id AND m.marker_type = 'cancel'
      ) THEN 'canceled'
      WHEN EXISTS (
        SELECT 1 FROM _cuj_state_markers AS m WHERE m.cuj_id = c.cuj_id AND m.marker_type = 'end'
      ) THEN 'completed'
      ELSE NULL
    END AS state,
    e.ui_thread,
    e.layer_id,
    e.begin_vsync,
    e.end_vsync
  FROM _jank_cujs_slices AS c
  JOIN _cuj_instant_events AS e ON e.cuj_id = c.cuj_id
)
SELECT *
FROM with_state AS w
WHERE w.state != 'canceled' OR (w.state IS NULL AND w.dur > 4e6)
ORDER BY w.ts;
