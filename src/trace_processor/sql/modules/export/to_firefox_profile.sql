-- SPDX-License-Identifier: Apache-2.0
-- export.to_firefox_profile: the perf samples of the trace as a Firefox Profiler profile (JSON), one profiler thread per trace thread.

-- Every callsite a thread's perf samples stand on (the sampled ones and all their ancestors), a row per inlined function of its frame (inline_depth 0 for the frame's last symbol by id, up to the first), with the indexes of the profile's stack, frame, function and string tables, each dense per thread. Ordered by thread and callsite, so the per-thread lookups below read one run of rows.
CREATE PERFETTO TABLE _export_to_firefox_table(
  -- The thread.
  utid JOINID(thread.id),
  -- The callsite.
  callsite_id LONG,
  -- Its parent callsite.
  parent_callsite_id LONG,
  -- The function's name: the symbol's, else the frame's, else ''.
  name STRING,
  -- Which of the frame's inlined functions this row is.
  inline_depth LONG,
  -- Whether it is the innermost one (the one samples point at).
  is_most_inlined BOOL,
  -- Row of the stack table (dense over (callsite, inline depth)).
  stack_table_index LONG,
  -- Row of the frame table (dense over (frame, inline depth)).
  frame_table_index LONG,
  -- Row of the function table (dense over names).
  func_table_index LONG,
  -- Row of the string array (dense over names).
  string_table_index LONG
)
AS
WITH RECURSIVE
  inlined AS (
    SELECT
      symbol_set_id,
      name,
      (SELECT count(*) FROM stack_profile_symbol AS later
        WHERE later.symbol_set_id = s.symbol_set_id AND later.id > s.id) AS depth,
      (SELECT count(*) FROM stack_profile_symbol AS all_of_set
        WHERE all_of_set.symbol_set_id = s.symbol_set_id) - 1 AS deepest
    FROM stack_profile_symbol AS s
  ),
  walked(utid, id, parent_id, frame_id) AS (
    SELECT DISTINCT p.utid, c.id, c.parent_id, c.frame_id
    FROM perf_sample AS p
    JOIN stack_profile_callsite AS c ON c.id = p.callsite_id
    UNION
    SELECT w.utid, up.id, up.parent_id, up.frame_id
    FROM walked AS w
    JOIN stack_profile_callsite AS up ON up.id = w.parent_id
  ),
  rows_of AS (
    SELECT
      w.utid,
      w.id,
      w.parent_id,
      w.frame_id,
      coalesce(i.name, f.name, '') AS name,
      coalesce(i.depth, 0) AS inline_depth,
      coalesce(i.deepest, 0) AS deepest
    FROM walked AS w
    JOIN stack_profile_frame AS f ON f.id = w.frame_id
    LEFT JOIN inlined AS i ON i.symbol_set_id = f.symbol_set_id
  )
SELECT
  utid,
  id AS callsite_id,
  parent_id AS parent_callsite_id,
  name,
  inline_depth,
  inline_depth = deepest AS is_most_inlined,
  dense_rank() OVER (PARTITION BY utid ORDER BY id, inline_depth) - 1 AS stack_table_index,
  dense_rank() OVER (PARTITION BY utid ORDER BY frame_id, inline_depth) - 1 AS frame_table_index,
  dense_rank() OVER (PARTITION BY utid ORDER BY name) - 1 AS func_table_index,
  dense_rank() OVER (PARTITION BY utid ORDER BY name) - 1 AS string_table_index
FROM rows_of
ORDER BY utid, id;

CREATE PERFETTO INDEX _export_to_firefox_table_by_callsite
ON _export_to_firefox_table(utid, callsite_id);

-- An empty RawMarkerTable of the Firefox Profiler's profile format.
CREATE PERFETTO FUNCTION _export_firefox_thread_markers()
RETURNS STRING
AS
SELECT json_object('data', json_array(), 'name', json_array(),
  'startTime', json_array(), 'endTime', json_array(), 'phase', json_array(),
  'category', json_array(), 'length', 0);

-- An empty NativeSymbolTable of the profile format.
CREATE PERFETTO FUNCTION _export_firefox_native_symbol_table()
RETURNS STRING
AS
SELECT json_object('libIndex', json_array(), 'address', json_array(),
  'name', json_array(), 'functionSize', json_array(), 'length', 0);

-- An empty ResourceTable of the profile format.
CREATE PERFETTO FUNCTION _export_firefox_resource_table()
RETURNS STRING
AS
SELECT json_object('length', 0, 'lib', json_array(), 'name', json_array(),
  'host', json_array(), 'type', json_array());

-- The SamplesTable of thread $utid: each perf sample of it, by sample id, as its time and the stack row of its callsite's innermost function.
CREATE PERFETTO FUNCTION _export_firefox_samples_table(
  -- The thread.
  utid JOINID(thread.id)
)
RETURNS STRING
AS
SELECT json_object(
  'stack', json_group_array(stack),
  'time', json_group_array(ts),
  'weight', NULL,
  'weightType', 'samples',
  'length', count(*))
FROM (
  SELECT t.stack_table_index AS stack, p.ts
  FROM perf_sample AS p
  JOIN _export_to_firefox_table AS t
    ON t.utid = p.utid AND t.callsite_id = p.callsite_id AND t.is_most_inlined
  WHERE p.utid = $utid
  ORDER BY p.id
);

-- The StackTable of thread $utid: per stack row its frame row and its prefix (for an outermost function the parent callsite's innermost row, else the next function out of the same frame).
CREATE PERFETTO FUNCTION _export_firefox_stack_table(
  -- The thread.
  utid JOINID(thread.id)
)
RETURNS STRING
AS
SELECT json_object(
  'frame', json_group_array(frame),
  'category', json_group_array(0),
  'subcategory', json_group_array(0),
  'prefix', json_group_array(prefix),
  'length', count(*))
FROM (
  SELECT
    r.frame_table_index AS frame,
    CASE
      WHEN r.inline_depth = 0 THEN (
        SELECT up.stack_table_index FROM _export_to_firefox_table AS up
        WHERE up.utid = $utid AND up.callsite_id = r.parent_callsite_id AND up.is_most_inlined)
      ELSE (
        SELECT o.stack_table_index FROM _export_to_firefox_table AS o
        WHERE o.utid = $utid AND o.callsite_id = r.callsite_id
          AND o.inline_depth = r.inline_depth - 1)
    END AS prefix
  FROM _export_to_firefox_table AS r
  WHERE r.utid = $utid
  ORDER BY r.stack_table_index
);

-- The FrameTable of thread $utid: per frame row its inline depth and function row (no addresses, lines or categories).
CREATE PERFETTO FUNCTION _export_firefox_frame_table(
  -- The thread.
  utid JOINID(thread.id)
)
RETURNS STRING
AS
SELECT json_object(
  'address', json_group_array(-1),
  'inlineDepth', json_group_array(inline_depth),
  'category', json_group_array(0),
  'subcategory', json_group_array(0),
  'func', json_group_array(func),
  'nativeSymbol', json_group_array(NULL),
  'innerWindowID', json_group_array(NULL),
  'implementation', json_group_array(NULL),
  'line', json_group_array(NULL),
  'column', json_group_array(NULL),
  'length', count(*))
FROM (
  SELECT DISTINCT frame_table_index, inline_depth, func_table_index AS func
  FROM _export_to_firefox_table
  WHERE utid = $utid
  ORDER BY frame_table_index
);

-- The string array of thread $utid: the function names by string row.
CREATE PERFETTO FUNCTION _export_firefox_string_array(
  -- The thread.
  utid JOINID(thread.id)
)
RETURNS STRING
AS
SELECT json_group_array(name)
FROM (
  SELECT DISTINCT string_table_index, name
  FROM _export_to_firefox_table
  WHERE utid = $utid
  ORDER BY string_table_index
);

-- The FuncTable of thread $utid: per function row its name's string row (native functions, no files or lines).
CREATE PERFETTO FUNCTION _export_firefox_func_table(
  -- The thread.
  utid JOINID(thread.id)
)
RETURNS STRING
AS
SELECT json_object(
  'name', json_group_array(name),
  'isJS', json_group_array(0),
  'relevantForJS', json_group_array(0),
  'resource', json_group_array(-1),
  'fileName', json_group_array(NULL),
  'lineNumber', json_group_array(NULL),
  'columnNumber', json_group_array(NULL),
  'length', count(*))
FROM (
  SELECT DISTINCT func_table_index, string_table_index AS name
  FROM _export_to_firefox_table
  WHERE utid = $utid
  ORDER BY func_table_index
);

-- The profile's Thread of trace thread $utid (NULL for a thread without a process).
CREATE PERFETTO FUNCTION _export_firefox_thread(
  -- The thread.
  utid JOINID(thread.id)
)
RETURNS STRING
AS
SELECT json_object(
  'processType', 'default',
  'name', coalesce(t.name, ''),
  'isMainThread', 0,
  'pid', coalesce(p.pid, 0),
  'tid', coalesce(t.tid, 0),
  'samples', json(_export_firefox_samples_table($utid)),
  'markers', json(_export_firefox_thread_markers()),
  'stackTable', json(_export_firefox_stack_table($utid)),
  'frameTable', json(_export_firefox_frame_table($utid)),
  'stringArray', json(_export_firefox_string_array($utid)),
  'funcTable', json(_export_firefox_func_table($utid)),
  'resourceTable', json(_export_firefox_resource_table()),
  'nativeSymbols', json(_export_firefox_native_symbol_table()))
FROM thread AS t
JOIN process AS p ON p.upid = t.upid
WHERE t.utid = $utid;

-- The profile's threads: one per trace thread, by utid.
CREATE PERFETTO FUNCTION _export_firefox_threads()
RETURNS STRING
AS
SELECT json_group_array(json(_export_firefox_thread(utid)))
FROM (SELECT utid FROM thread ORDER BY utid);

-- The profile's meta section: one category, millisecond sample times, format versions 29 (preprocessed 48).
CREATE PERFETTO FUNCTION _export_firefox_meta()
RETURNS STRING
AS
SELECT json_object(
  'interval', 1,
  'startTime', 0,
  'processType', 0,
  'categories', json_array(json_object(
    'name', 'Other', 'color', 'grey', 'subcategories', json_array('Other'))),
  'product', 'Perfetto',
  'stackwalk', 1,
  'version', 29,
  'preprocessedProfileVersion', 48,
  'markerSchema', json_array(),
  'sampleUnits', json_object('time', 'ms', 'eventDelay', 'ms', 'threadCPUDelta', 'µs'));

-- The whole trace's perf samples as a Firefox Profiler profile (JSON text; open it at profiler.firefox.com). In the UI, `SELECT CAST(export_to_firefox_profile() AS BLOB)` offers it as a file.
CREATE PERFETTO FUNCTION export_to_firefox_profile()
-- The profile, as JSON.
RETURNS STRING
AS
SELECT json_object(
  'meta', json(_export_firefox_meta()),
  'libs', json_array(),
  'pages', NULL,
  'counters', NULL,
  'profilerOverhead', NULL,
  'threads', json(_export_firefox_threads()),
  'profilingLog', NULL,
  'profileGatheringLog', NULL);
