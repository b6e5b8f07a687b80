-- SPDX-License-Identifier: Apache-2.0
-- std.thread.with_context: each thread with its process's pid and name,
-- materialized once, so views that need both join it on utid alone.

-- Every thread, with its process's fields (NULL where it has none).
CREATE PERFETTO TABLE _thread_with_process AS
SELECT
  t.utid,
  t.tid,
  t.name AS thread_name,
  t.is_main_thread,
  p.upid,
  p.pid,
  p.name AS process_name
FROM thread AS t
LEFT JOIN process AS p ON p.upid = t.upid
ORDER BY t.utid;
