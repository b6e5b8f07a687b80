-- SPDX-License-Identifier: Apache-2.0
-- slices.with_context: the slices of thread and process tracks with the
-- names and ids of their thread and process.

INCLUDE PERFETTO MODULE std.thread.with_context;

-- Every slice on a thread track, with its track, thread and process.
CREATE PERFETTO VIEW thread_slice(
  -- The slice.
  id ID(slice.id),
  -- Its start (slice.ts).
  ts TIMESTAMP,
  -- Its duration (slice.dur).
  dur DURATION,
  -- Its category (slice.category).
  category STRING,
  -- Its name (slice.name).
  name STRING,
  -- Its track (slice.track_id).
  track_id JOINID(track.id),
  -- The thread track's name.
  track_name STRING,
  -- The thread's name.
  thread_name STRING,
  -- The thread.
  utid JOINID(thread.id),
  -- The thread's tid.
  tid LONG,
  -- Whether the thread is its process's main thread.
  is_main_thread BOOL,
  -- The process's name.
  process_name STRING,
  -- The thread's process.
  upid JOINID(process.id),
  -- The process's pid.
  pid LONG,
  -- Its nesting depth (slice.depth).
  depth LONG,
  -- Its parent slice (slice.parent_id).
  parent_id JOINID(slice.id),
  -- Its args (slice.arg_set_id).
  arg_set_id ARGSETID,
  -- Its thread time start (slice.thread_ts).
  thread_ts TIMESTAMP,
  -- Its thread time duration (slice.thread_dur).
  thread_dur LONG
)
AS
SELECT
  s.id,
  s.ts,
  s.dur,
  s.category,
  s.name,
  s.track_id,
  tt.name AS track_name,
  tp.thread_name,
  tp.utid,
  tp.tid,
  tp.is_main_thread,
  tp.process_name,
  tp.upid,
  tp.pid,
  s.depth,
  s.parent_id,
  s.arg_set_id,
  s.thread_ts,
  s.thread_dur
FROM thread_track AS tt
JOIN _thread_with_process AS tp ON tp.utid = tt.utid
JOIN slice AS s ON s.track_id = tt.id;

-- Every slice on a process track, with its track and process.
CREATE PERFETTO VIEW process_slice(
  -- The slice.
  id ID(slice.id),
  -- Its start (slice.ts).
  ts TIMESTAMP,
  -- Its duration (slice.dur).
  dur DURATION,
  -- Its category (slice.category).
  category STRING,
  -- Its name (slice.name).
  name STRING,
  -- Its track (slice.track_id).
  track_id JOINID(track.id),
  -- The process track's name.
  track_name STRING,
  -- The process's name.
  process_name STRING,
  -- The process.
  upid JOINID(process.id),
  -- The process's pid.
  pid LONG,
  -- Its nesting depth (slice.depth).
  depth LONG,
  -- Its parent slice (slice.parent_id).
  parent_id JOINID(slice.id),
  -- Its args (slice.arg_set_id).
  arg_set_id ARGSETID,
  -- Its thread time start (slice.thread_ts).
  thread_ts TIMESTAMP,
  -- Its thread time duration (slice.thread_dur).
  thread_dur LONG
)
AS
SELECT
  s.id,
  s.ts,
  s.dur,
  s.category,
  s.name,
  s.track_id,
  pt.name AS track_name,
  p.name AS process_name,
  p.upid,
  p.pid,
  s.depth,
  s.parent_id,
  s.arg_set_id,
  s.thread_ts,
  s.thread_dur
FROM slice AS s
JOIN process_track AS pt ON pt.id = s.track_id
JOIN process AS p ON p.upid = pt.upid;

-- The slices of both views above in one; the thread columns are NULL for
-- process track slices.
CREATE PERFETTO VIEW thread_or_process_slice(
  -- The slice.
  id JOINID(slice.id),
  -- Its start.
  ts TIMESTAMP,
  -- Its duration.
  dur DURATION,
  -- Its category.
  category STRING,
  -- Its name.
  name STRING,
  -- Its track.
  track_id JOINID(track.id),
  -- The track's name.
  track_name STRING,
  -- The thread's name (thread tracks only).
  thread_name STRING,
  -- The thread (thread tracks only).
  utid JOINID(thread.id),
  -- The thread's tid (thread tracks only).
  tid LONG,
  -- The process's name.
  process_name STRING,
  -- The process.
  upid JOINID(process.id),
  -- The process's pid.
  pid LONG,
  -- Its nesting depth.
  depth LONG,
  -- Its parent slice.
  parent_id JOINID(slice.id),
  -- Its args.
  arg_set_id ARGSETID
)
AS
SELECT
  t.id, t.ts, t.dur, t.category, t.name, t.track_id, t.track_name,
  t.thread_name, t.utid, t.tid, t.process_name, t.upid, t.pid,
  t.depth, t.parent_id, t.arg_set_id
FROM thread_slice AS t
UNION ALL
SELECT
  p.id, p.ts, p.dur, p.category, p.name, p.track_id, p.track_name,
  NULL AS thread_name, NULL AS utid, NULL AS tid, p.process_name, p.upid, p.pid,
  p.depth, p.parent_id, p.arg_set_id
FROM process_slice AS p;
