-- SPDX-License-Identifier: Apache-2.0
-- viz.summary.processes: what there is to show for each process: its
-- threads' summaries added up, slices on its own tracks, heap profile
-- allocations and heap graph objects, for the UI's process groups.

INCLUDE PERFETTO MODULE viz.summary.slices;
INCLUDE PERFETTO MODULE viz.summary.threads;

-- Slices per process, over its process-scoped tracks.
CREATE PERFETTO TABLE _process_track_summary AS
SELECT pt.upid, sum(ts.cnt) AS slice_count
FROM process_track AS pt
JOIN _slice_track_summary AS ts ON ts.id = pt.id
GROUP BY pt.upid;

-- Heap profile allocation rows per process.
CREATE PERFETTO TABLE _heap_profile_allocation_summary AS
SELECT a.upid, count(*) AS allocation_count
FROM heap_profile_allocation AS a
GROUP BY a.upid;

-- Heap graph objects per process.
CREATE PERFETTO TABLE _heap_profile_graph_summary AS
SELECT o.upid, count(*) AS graph_object_count
FROM heap_graph_object AS o
GROUP BY o.upid;

-- The thread summaries of each process added up.
CREATE PERFETTO TABLE _thread_process_grouped_summary AS
SELECT
  t.upid,
  max(s.max_running_dur) AS max_running_dur,
  sum(s.sum_running_dur) AS sum_running_dur,
  sum(s.running_count) AS running_count,
  sum(s.slice_count) AS slice_count,
  sum(s.stack_sample_count) AS stack_sample_count
FROM _thread_available_info_summary AS s
JOIN thread AS t ON t.utid = s.utid
WHERE t.upid IS NOT NULL
GROUP BY t.upid;

-- One row per process with anything to show, zeros where it has none of
-- a kind; a process with only counter tracks, state tracks or memory
-- mappings of its own is listed too.
CREATE PERFETTO TABLE _process_available_info_summary AS
SELECT
  p.upid,
  coalesce(g.max_running_dur, 0) AS max_running_dur,
  coalesce(g.sum_running_dur, 0) AS sum_running_dur,
  coalesce(g.running_count, 0) AS running_count,
  coalesce(g.slice_count, 0) AS thread_slice_count,
  coalesce(g.stack_sample_count, 0) AS stack_sample_count,
  coalesce(pt.slice_count, 0) AS process_slice_count,
  coalesce(al.allocation_count, 0) AS allocation_count,
  coalesce(hg.graph_object_count, 0) AS graph_object_count
FROM process AS p
LEFT JOIN _thread_process_grouped_summary AS g ON g.upid = p.upid
LEFT JOIN _process_track_summary AS pt ON pt.upid = p.upid
LEFT JOIN _heap_profile_allocation_summary AS al ON al.upid = p.upid
LEFT JOIN _heap_profile_graph_summary AS hg ON hg.upid = p.upid
WHERE g.upid IS NOT NULL
  OR pt.upid IS NOT NULL
  OR al.upid IS NOT NULL
  OR hg.upid IS NOT NULL
  OR p.upid IN (SELECT c.upid FROM process_counter_track AS c)
  OR p.upid IN (SELECT s.upid FROM process_state_track AS s)
  OR p.upid IN (SELECT m.upid FROM profiler_smaps AS m)
ORDER BY p.upid;
