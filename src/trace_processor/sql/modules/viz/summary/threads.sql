-- SPDX-License-Identifier: Apache-2.0
-- viz.summary.threads: what there is to show for each thread (time on
-- CPU, slices on its tracks, callstack samples), for the UI's choice of
-- which threads get tracks.

INCLUDE PERFETTO MODULE viz.summary.slices;

-- Scheduling per thread: longest and total time running and how many
-- times it ran. The idle threads and the still-running last slices
-- (dur -1) do not count. (Written as a join on the thread, not a NOT IN
-- subquery, so that the native GROUP BY path computes it: 2.5 M slices
-- in ~0.08 s instead of ~1 s through SQLite.)
CREATE PERFETTO TABLE _sched_summary AS
SELECT
  s.utid,
  max(s.dur) AS max_running_dur,
  sum(s.dur) AS sum_running_dur,
  count(*) AS running_count
FROM sched AS s
JOIN thread AS t USING (utid)
WHERE s.dur != -1
  AND t.is_idle = 0
GROUP BY s.utid;

-- Slices per thread, over all of its thread tracks.
CREATE PERFETTO TABLE _thread_track_summary AS
SELECT tt.utid, sum(ts.cnt) AS slice_count
FROM thread_track AS tt
JOIN _slice_track_summary AS ts ON ts.id = tt.id
GROUP BY tt.utid;

-- Callstack samples per thread.
CREATE PERFETTO TABLE _stack_sample_summary AS
SELECT ctx.utid, count(*) AS sample_count
FROM stack_sample AS smp
JOIN stack_sample_task_context AS ctx ON ctx.id = smp.task_context_id
WHERE ctx.utid IS NOT NULL
GROUP BY ctx.utid;

-- One row per thread with anything to show (scheduling, slices, samples
-- or a counter track of its own), zeros where it has none of a kind.
CREATE PERFETTO TABLE _thread_available_info_summary AS
SELECT
  t.utid,
  coalesce(sch.max_running_dur, 0) AS max_running_dur,
  coalesce(sch.sum_running_dur, 0) AS sum_running_dur,
  coalesce(sch.running_count, 0) AS running_count,
  coalesce(sl.slice_count, 0) AS slice_count,
  coalesce(smp.sample_count, 0) AS stack_sample_count
FROM thread AS t
LEFT JOIN _sched_summary AS sch ON sch.utid = t.utid
LEFT JOIN _thread_track_summary AS sl ON sl.utid = t.utid
LEFT JOIN _stack_sample_summary AS smp ON smp.utid = t.utid
WHERE sch.utid IS NOT NULL
  OR sl.utid IS NOT NULL
  OR smp.utid IS NOT NULL
  OR t.utid IN (SELECT ct.utid FROM thread_counter_track AS ct)
ORDER BY t.utid;
