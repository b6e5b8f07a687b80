-- SPDX-License-Identifier: Apache-2.0
-- android.monitor_contention: Java monitor (lock) contention in ART's
-- 'monitor contention with owner <thread> (<tid>) at <method>(<src>)
-- waiters=<n> blocking from <method>(<src>)' slices: who waited for whom,
-- where, for how long, chains of contentions, and what the holder did
-- meanwhile.

INCLUDE PERFETTO MODULE android.suspend;

-- The holder's thread name in a contention slice's name.
CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocking_thread(
  -- The slice's name.
  slice_name STRING
)
RETURNS STRING
AS
SELECT str_split(str_split($slice_name, 'with owner ', 1), ' (', 0);

-- The holder's tid in a contention slice's name.
CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocking_tid(
  -- The slice's name.
  slice_name STRING
)
RETURNS LONG
AS
SELECT CAST(str_split(str_split($slice_name, ' (', 1), ')', 0) AS INT);

-- The holder's method (with its arguments) in a contention slice's name.
CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocking_method(
  -- The slice's name.
  slice_name STRING
)
RETURNS STRING
AS
SELECT
  str_split(str_split($slice_name, ') at ', 1), '(', 0) || '('
  || str_split(str_split($slice_name, ') at ', 1), '(', 1);

-- The holder's method name alone.
CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_short_blocking_method(
  -- The slice's name.
  slice_name STRING
)
RETURNS STRING
AS
SELECT str_split(
  str_split(android_extract_android_monitor_contention_blocking_method($slice_name), ' ', 1),
  '(',
  0
);

-- The waiting method (with its arguments) in a contention slice's name.
CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocked_method(
  -- The slice's name.
  slice_name STRING
)
RETURNS STRING
AS
SELECT
  str_split(str_split($slice_name, 'blocking from ', 1), '(', 0) || '('
  || str_split(str_split($slice_name, 'blocking from ', 1), '(', 1);

-- The waiting method's name alone.
CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_short_blocked_method(
  -- The slice's name.
  slice_name STRING
)
RETURNS STRING
AS
SELECT str_split(
  str_split(android_extract_android_monitor_contention_blocked_method($slice_name), ' ', 1),
  '(',
  0
);

-- The number of other waiters in a contention slice's name.
CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_waiter_count(
  -- The slice's name.
  slice_name STRING
)
RETURNS LONG
AS
SELECT CAST(str_split(str_split($slice_name, 'waiters=', 1), ' ', 0) AS INT);

-- The holder's source location in a contention slice's name.
CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocking_src(
  -- The slice's name.
  slice_name STRING
)
RETURNS STRING
AS
SELECT str_split(str_split($slice_name, ')(', 1), ')', 0);

-- The waiter's source location in a contention slice's name.
CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocked_src(
  -- The slice's name.
  slice_name STRING
)
RETURNS STRING
AS
SELECT str_split(str_split($slice_name, ')(', 2), ')', 0);

-- The contention slices that have no child but a 'Lock contention...'
-- one, and no grandchild.
CREATE PERFETTO TABLE _valid_android_monitor_contention AS
SELECT s.id
FROM slice AS s
LEFT JOIN slice AS c ON c.parent_id = s.id
LEFT JOIN slice AS g ON g.parent_id = c.id
WHERE s.name GLOB 'monitor contention*'
  AND (c.name GLOB 'Lock contention*' OR c.name IS NULL)
  AND g.name IS NULL
GROUP BY s.id;

-- Every finished, well-formed monitor contention.
CREATE PERFETTO TABLE android_monitor_contention(
  -- The method of the lock's holder, with its arguments.
  blocking_method STRING,
  -- The waiting method, with its arguments.
  blocked_method STRING,
  -- The holder's method name alone.
  short_blocking_method STRING,
  -- The waiting method's name alone.
  short_blocked_method STRING,
  -- Source location of the holder.
  blocking_src STRING,
  -- Source location of the waiter.
  blocked_src STRING,
  -- How many other threads were waiting.
  waiter_count LONG,
  -- The waiting thread.
  blocked_utid JOINID(thread.id),
  -- Its name.
  blocked_thread_name STRING,
  -- The holding thread (by tid in the same process).
  blocking_utid JOINID(thread.id),
  -- Its name as the slice gives it.
  blocking_thread_name STRING,
  -- Its tid as the slice gives it.
  blocking_tid LONG,
  -- The process.
  upid JOINID(process.id),
  -- Its name.
  process_name STRING,
  -- The contention slice.
  id LONG,
  -- Its start.
  ts TIMESTAMP,
  -- Its duration.
  dur DURATION,
  -- Its duration without suspended time.
  monotonic_dur DURATION,
  -- Its track.
  track_id JOINID(track.id),
  -- Whether the waiter is the main thread.
  is_blocked_thread_main LONG,
  -- The waiter's tid.
  blocked_thread_tid LONG,
  -- Whether the holder is the main thread.
  is_blocking_thread_main LONG,
  -- The holder's tid (from the thread table).
  blocking_thread_tid LONG,
  -- The binder reply the contention happened in, if any.
  binder_reply_id LONG,
  -- Its start.
  binder_reply_ts TIMESTAMP,
  -- Its thread's tid.
  binder_reply_tid LONG,
  -- The process's pid.
  pid LONG,
  -- The lock's name, from the <name>_lock_acquire and <name>_lock_held
  -- slices around the contention (perfetto's lock tracing).
  lock_name STRING
)
AS
WITH
  on_tracks AS (
    SELECT
      s.id,
      s.name,
      lag(s.name) OVER w AS prev_name,
      lead(s.name, 1) OVER w AS next_name_1,
      lead(s.name, 2) OVER w AS next_name_2
    FROM slice AS s
    WHERE s.track_id IN (
      SELECT DISTINCT x.track_id
      FROM slice AS x
      WHERE x.id IN (SELECT v.id FROM _valid_android_monitor_contention AS v)
    )
    WINDOW w AS (PARTITION BY s.track_id ORDER BY s.ts)
  ),
  -- The lock's name where the contention sits between '<name>_lock_acquire'
  -- and '<name>_lock_held' (maybe after a 'Lock contention' slice).
  lock_names AS (
    SELECT
      o.id,
      CASE
        WHEN substr(o.next_name_1, -10) = '_lock_held'
          AND substr(o.prev_name, -13) = '_lock_acquire'
          AND replace(o.prev_name, '_lock_acquire', '') = replace(o.next_name_1, '_lock_held', '')
          THEN replace(o.prev_name, '_lock_acquire', '')
        WHEN substr(o.next_name_1, 1, 15) = 'Lock contention'
          AND substr(o.next_name_2, -10) = '_lock_held'
          AND substr(o.prev_name, -13) = '_lock_acquire'
          AND replace(o.prev_name, '_lock_acquire', '') = replace(o.next_name_2, '_lock_held', '')
          THEN replace(o.prev_name, '_lock_acquire', '')
        ELSE NULL
      END AS lock_name
    FROM on_tracks AS o
    WHERE o.id IN (SELECT v.id FROM _valid_android_monitor_contention AS v)
  )
SELECT
  android_extract_android_monitor_contention_blocking_method(s.name) AS blocking_method,
  android_extract_android_monitor_contention_blocked_method(s.name) AS blocked_method,
  android_extract_android_monitor_contention_short_blocking_method(s.name) AS short_blocking_method,
  android_extract_android_monitor_contention_short_blocked_method(s.name) AS short_blocked_method,
  android_extract_android_monitor_contention_blocking_src(s.name) AS blocking_src,
  android_extract_android_monitor_contention_blocked_src(s.name) AS blocked_src,
  android_extract_android_monitor_contention_waiter_count(s.name) AS waiter_count,
  t.utid AS blocked_utid,
  t.name AS blocked_thread_name,
  bt.utid AS blocking_utid,
  android_extract_android_monitor_contention_blocking_thread(s.name) AS blocking_thread_name,
  android_extract_android_monitor_contention_blocking_tid(s.name) AS blocking_tid,
  t.upid,
  p.name AS process_name,
  s.id,
  s.ts,
  s.dur,
  _extract_duration_without_suspend(s.ts, s.dur) AS monotonic_dur,
  s.track_id,
  t.is_main_thread AS is_blocked_thread_main,
  t.tid AS blocked_thread_tid,
  bt.is_main_thread AS is_blocking_thread_main,
  bt.tid AS blocking_thread_tid,
  br.id AS binder_reply_id,
  br.ts AS binder_reply_ts,
  brt.tid AS binder_reply_tid,
  p.pid,
  ln.lock_name
FROM slice AS s
JOIN thread_track AS tt ON tt.id = s.track_id
LEFT JOIN thread AS t ON t.utid = tt.utid
LEFT JOIN process AS p ON p.upid = t.upid
LEFT JOIN ancestor_slice(s.id) AS br ON br.name = 'binder reply'
LEFT JOIN thread_track AS brtt ON brtt.id = br.track_id
LEFT JOIN thread AS brt ON brt.utid = brtt.utid
LEFT JOIN thread AS bt
  ON bt.tid = android_extract_android_monitor_contention_blocking_tid(s.name)
  AND bt.upid = t.upid
JOIN _valid_android_monitor_contention AS v ON v.id = s.id
LEFT JOIN lock_names AS ln ON ln.id = s.id
WHERE s.name GLOB 'monitor contention*'
  AND s.dur != -1
  AND android_extract_android_monitor_contention_short_blocking_method(s.name) IS NOT NULL
  AND android_extract_android_monitor_contention_short_blocked_method(s.name) IS NOT NULL
GROUP BY s.id;

CREATE PERFETTO INDEX _android_monitor_contention_blocking_utid_idx
ON android_monitor_contention(blocking_utid, ts);

CREATE PERFETTO INDEX _android_monitor_contention_id_idx ON android_monitor_contention(id);

-- Each contention with the contention it blocks (parent_id): one whose
-- waiter holds the lock here and that was going on when this began.
CREATE PERFETTO TABLE _children AS
SELECT par.id AS parent_id, ch.*
FROM android_monitor_contention AS ch
JOIN android_monitor_contention AS par
  ON par.blocked_utid = ch.blocking_utid
  AND ch.ts BETWEEN par.ts AND par.ts + par.dur
ORDER BY ch.id;

-- Each contention with the first contention that blocks it.
CREATE PERFETTO TABLE _child_of AS
SELECT par.id, min(ch.id) AS child_id
FROM android_monitor_contention AS par
JOIN android_monitor_contention AS ch
  ON par.blocked_utid = ch.blocking_utid
  AND ch.ts BETWEEN par.ts AND par.ts + par.dur
GROUP BY par.id
ORDER BY par.id;

-- The contentions with their links in chains of contentions.
CREATE PERFETTO TABLE android_monitor_contention_chain(
  -- The contention that this one blocks (the waiter here holds the lock
  -- there), if any.
  parent_id LONG,
  -- The method of the lock's holder, with its arguments.
  blocking_method STRING,
  -- The waiting method, with its arguments.
  blocked_method STRING,
  -- The holder's method name alone.
  short_blocking_method STRING,
  -- The waiting method's name alone.
  short_blocked_method STRING,
  -- Source location of the holder.
  blocking_src STRING,
  -- Source location of the waiter.
  blocked_src STRING,
  -- How many other threads were waiting.
  waiter_count LONG,
  -- The waiting thread.
  blocked_utid JOINID(thread.id),
  -- Its name.
  blocked_thread_name STRING,
  -- The holding thread (by tid in the same process).
  blocking_utid JOINID(thread.id),
  -- Its name as the slice gives it.
  blocking_thread_name STRING,
  -- Its tid as the slice gives it.
  blocking_tid LONG,
  -- The process.
  upid JOINID(process.id),
  -- Its name.
  process_name STRING,
  -- The contention slice.
  id LONG,
  -- Its start.
  ts TIMESTAMP,
  -- Its duration.
  dur DURATION,
  -- Its duration without suspended time.
  monotonic_dur DURATION,
  -- Its track.
  track_id JOINID(track.id),
  -- Whether the waiter is the main thread.
  is_blocked_thread_main LONG,
  -- The waiter's tid.
  blocked_thread_tid LONG,
  -- Whether the holder is the main thread.
  is_blocking_thread_main LONG,
  -- The holder's tid (from the thread table).
  blocking_thread_tid LONG,
  -- The binder reply the contention happened in, if any.
  binder_reply_id LONG,
  -- Its start.
  binder_reply_ts TIMESTAMP,
  -- Its thread's tid.
  binder_reply_tid LONG,
  -- The process's pid.
  pid LONG,
  -- The first contention that blocks this one.
  child_id LONG,
  -- The lock's name.
  lock_name STRING
)
AS
SELECT
  pc.parent_id,
  amc.blocking_method, amc.blocked_method, amc.short_blocking_method, amc.short_blocked_method, amc.blocking_src, amc.blocked_src, amc.waiter_count, amc.blocked_utid, amc.blocked_thread_name, amc.blocking_utid, amc.blocking_thread_name, amc.blocking_tid, amc.upid, amc.process_name, amc.id, amc.ts, amc.dur, amc.monotonic_dur, amc.track_id, amc.is_blocked_thread_main, amc.blocked_thread_tid, amc.is_blocking_thread_main, amc.blocking_thread_tid, amc.binder_reply_id, amc.binder_reply_ts, amc.binder_reply_tid, amc.pid,
  co.child_id,
  amc.lock_name
FROM android_monitor_contention AS amc
LEFT JOIN _children AS pc ON pc.id = amc.id
LEFT JOIN _child_of AS co ON co.id = amc.id;

CREATE PERFETTO INDEX _android_monitor_contention_chain_idx
ON android_monitor_contention_chain(blocking_method, blocking_utid, ts);

-- Each contention without other waiters, from its start to the earliest
-- end of the holder's contentions on the same method within it.
CREATE PERFETTO VIEW _first_blocked_contention AS
SELECT
  st.id,
  st.blocking_utid,
  st.ts,
  min(en.ts + en.dur) - st.ts AS dur
FROM android_monitor_contention_chain AS st
JOIN android_monitor_contention_chain AS en
  ON st.blocking_utid = en.blocking_utid
  AND st.blocking_method = en.blocking_method
  AND en.ts BETWEEN st.ts AND st.ts + st.dur
WHERE st.waiter_count = 0
GROUP BY st.id;

-- The thread states, keyed by the thread as the holder.
CREATE PERFETTO VIEW _blocking_thread_state AS
SELECT ts.utid AS blocking_utid, ts.ts, ts.dur, ts.state, ts.blocked_function
FROM thread_state AS ts;

CREATE VIRTUAL TABLE _android_monitor_contention_chain_thread_state
USING SPAN_JOIN(
  _first_blocked_contention PARTITIONED blocking_utid,
  _blocking_thread_state PARTITIONED blocking_utid
);

-- What the holder of the lock was doing (its thread states) during each
-- contention without other waiters.
CREATE PERFETTO TABLE android_monitor_contention_chain_thread_state(
  -- The contention.
  id LONG,
  -- Start of the thread state piece.
  ts TIMESTAMP,
  -- Its length.
  dur DURATION,
  -- The holder.
  blocking_utid JOINID(thread.id),
  -- The kernel function it was blocked in, if any.
  blocked_function STRING,
  -- Its state.
  state STRING
)
AS
SELECT j.id, j.ts, j.dur, j.blocking_utid, j.blocked_function, j.state
FROM _android_monitor_contention_chain_thread_state AS j;

-- Per contention and holder thread state: total time and count.
CREATE PERFETTO VIEW android_monitor_contention_chain_thread_state_by_txn(
  -- The contention.
  id LONG,
  -- The holder's state.
  thread_state STRING,
  -- Time in it.
  thread_state_dur DURATION,
  -- How many pieces.
  thread_state_count LONG
)
AS
SELECT
  c.id,
  c.state AS thread_state,
  sum(c.dur) AS thread_state_dur,
  count(c.dur) AS thread_state_count
FROM android_monitor_contention_chain_thread_state AS c
GROUP BY c.id, thread_state;

-- Per contention and kernel function the holder was blocked in: total
-- time and count.
CREATE PERFETTO VIEW android_monitor_contention_chain_blocked_functions_by_txn(
  -- The contention.
  id LONG,
  -- The kernel function.
  blocked_function STRING,
  -- Time blocked in it.
  blocked_function_dur DURATION,
  -- How many pieces.
  blocked_function_count LONG
)
AS
SELECT
  c.id,
  c.blocked_function,
  sum(c.dur) AS blocked_function_dur,
  count(c.dur) AS blocked_function_count
FROM android_monitor_contention_chain_thread_state AS c
WHERE c.blocked_function IS NOT NULL
GROUP BY c.id, c.blocked_function;
