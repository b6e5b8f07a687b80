-- SPDX-License-Identifier: Apache-2.0
-- android.memory.dmabuf: dmabuf allocations and frees (the dma_heap_stat
-- ftrace event's mem.dma_heap_change counters), charged to the thread
-- that asked for them: for buffers gralloc allocated on behalf of a
-- client over binder, the client's thread.

-- Every dma heap change: buffer inode, thread, time and size (negative
-- for a free).
CREATE PERFETTO TABLE _raw_dmabuf_events AS
SELECT
  extract_arg(c.arg_set_id, 'inode') AS inode,
  tt.utid,
  c.ts,
  CAST(c.value AS INT) AS buf_size
FROM thread_counter_track AS tt
JOIN counter AS c ON c.track_id = tt.id
WHERE tt.name = 'mem.dma_heap_change';

-- The binder replies of gralloc's threads, with the client's slice that
-- the transaction flowed from.
CREATE PERFETTO TABLE _gralloc_binders AS
SELECT
  f.slice_out AS client_slice_id,
  s.ts,
  s.dur,
  tt.utid
FROM slice AS s
JOIN thread_track AS tt ON tt.id = s.track_id
JOIN flow AS f ON f.slice_in = s.id
WHERE s.name = 'binder reply'
  AND tt.utid IN (
    SELECT t.utid
    FROM thread AS t
    JOIN process AS p ON p.upid = t.upid
    WHERE p.name GLOB '/vendor/bin/hw/android.hardware.graphics.allocator*'
      OR p.name GLOB '/vendor/bin/hw/*gralloc.allocator*'
  );

-- Each dma heap change with the thread it is charged to: the binder
-- client's when gralloc made it while replying to one, else its own.
CREATE PERFETTO TABLE _attributed_dmabufs AS
SELECT
  r.inode,
  r.ts,
  r.buf_size,
  coalesce(ctt.utid, r.utid) AS attr_utid
FROM _raw_dmabuf_events AS r
LEFT JOIN _gralloc_binders AS gb
  ON gb.utid = r.utid AND r.ts BETWEEN gb.ts AND gb.ts + gb.dur
LEFT JOIN slice AS cs ON cs.id = gb.client_slice_id
LEFT JOIN thread_track AS ctt ON ctt.id = cs.track_id
ORDER BY r.inode, r.ts;

-- The thread a change of buffer $inode at $ts is charged to: for an
-- allocation its own, for a free the latest earlier change's.
CREATE PERFETTO FUNCTION _alloc_source(is_alloc BOOL, inode LONG, ts TIMESTAMP)
RETURNS LONG
AS
SELECT a.attr_utid
FROM _attributed_dmabufs AS a
WHERE a.inode = $inode
  AND iif($is_alloc, a.ts = $ts, a.ts < $ts)
ORDER BY a.ts DESC
LIMIT 1;

-- Every dmabuf allocation and free, with the thread and process charged.
CREATE PERFETTO TABLE android_dmabuf_allocs(
  -- When.
  ts TIMESTAMP,
  -- Bytes (negative for a free).
  buf_size LONG,
  -- The buffer's inode.
  inode LONG,
  -- The thread charged (the binder client for gralloc's allocations,
  -- when binder was traced).
  utid JOINID(thread.id),
  -- Its tid.
  tid LONG,
  -- Its name.
  thread_name STRING,
  -- Its process.
  upid JOINID(process.id),
  -- The process's pid.
  pid LONG,
  -- The process's name.
  process_name STRING
)
AS
WITH charged AS (
  SELECT a.inode, a.ts, a.buf_size, _alloc_source(a.buf_size > 0, a.inode, a.ts) AS utid
  FROM _attributed_dmabufs AS a
)
SELECT
  c.ts,
  c.buf_size,
  c.inode,
  c.utid,
  t.tid,
  t.name AS thread_name,
  t.upid,
  p.pid,
  p.name AS process_name
FROM charged AS c
JOIN thread AS t ON t.utid = c.utid
LEFT JOIN process AS p ON p.upid = t.upid
ORDER BY c.ts;

-- The dmabuf bytes each process (or thread without a process) holds over
-- time: a running total at each allocation and free.
CREATE PERFETTO TABLE android_memory_cumulative_dmabuf(
  -- The process charged.
  upid JOINID(process.id),
  -- Its name.
  process_name STRING,
  -- The thread charged.
  utid JOINID(thread.id),
  -- Its name.
  thread_name STRING,
  -- When.
  ts TIMESTAMP,
  -- Bytes held by the process (or thread) from ts on.
  value LONG
)
AS
SELECT
  a.upid,
  a.process_name,
  a.utid,
  a.thread_name,
  a.ts,
  sum(a.buf_size) OVER (PARTITION BY coalesce(a.upid, a.utid) ORDER BY a.ts) AS value
FROM android_dmabuf_allocs AS a;
