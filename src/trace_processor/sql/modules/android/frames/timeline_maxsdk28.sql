-- SPDX-License-Identifier: Apache-2.0
-- android.frames.timeline_maxsdk28: app frames on Android 9 and older,
-- which have no frame timeline: a frame is a main thread's
-- Choreographer#doFrame with the DrawFrame slices of its process that
-- start before the next doFrame.

INCLUDE PERFETTO MODULE slices.with_context;

-- One row per (doFrame, DrawFrame) pair; frames are numbered from 1 in
-- the order of their doFrame.
CREATE PERFETTO TABLE _frames_maxsdk_28(
  -- The frame's number.
  frame_id LONG,
  -- The doFrame's start.
  ts TIMESTAMP,
  -- Until the last DrawFrame of the frame ends.
  dur DURATION,
  -- The Choreographer#doFrame slice.
  do_frame_id JOINID(slice.id),
  -- The DrawFrame slice.
  draw_frame_id JOINID(slice.id),
  -- The render thread (of the DrawFrame).
  render_thread_utid JOINID(thread.id),
  -- The UI thread (of the doFrame).
  ui_thread_utid JOINID(thread.id),
  -- 'maxsdk28'.
  sdk STRING,
  -- The process.
  upid JOINID(process.id),
  -- Its name.
  process_name STRING
)
AS
WITH
  do_frames AS (
    SELECT
      s.id,
      s.ts,
      lead(s.ts, 1, trace_end()) OVER (PARTITION BY s.upid ORDER BY s.ts) AS next_ts,
      s.utid,
      s.upid
    FROM thread_slice AS s
    WHERE s.is_main_thread = 1 AND s.name = 'Choreographer#doFrame'
    ORDER BY s.ts
  ),
  draw_frames AS (
    SELECT s.id, s.ts, s.ts + s.dur AS ts_end, s.utid, s.upid
    FROM thread_slice AS s
    WHERE s.name = 'DrawFrame'
  )
SELECT
  row_number() OVER () AS frame_id,
  d.ts,
  max(dr.ts_end) OVER (PARTITION BY d.id) - d.ts AS dur,
  d.id AS do_frame_id,
  dr.id AS draw_frame_id,
  dr.utid AS render_thread_utid,
  d.utid AS ui_thread_utid,
  d.upid,
  p.name AS process_name,
  'maxsdk28' AS sdk
FROM do_frames AS d
JOIN draw_frames AS dr ON dr.upid = d.upid AND dr.ts >= d.ts AND dr.ts < d.next_ts
JOIN process AS p ON p.upid = d.upid
ORDER BY d.ts;
