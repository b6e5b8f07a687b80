-- SPDX-License-Identifier: Apache-2.0
-- std.traceinfo.trace: facts about each trace file of the session, from
-- the metadata table, one row per trace.

-- A metadata value of one trace file: the first row of that name,
-- its string if it has one, else its integer.
CREATE PERFETTO FUNCTION _traceinfo_value(
  -- The trace file (metadata.trace_id).
  trace_id LONG,
  -- The metadata name.
  name STRING
)
RETURNS ANY
AS
SELECT coalesce(m.str_value, m.int_value)
FROM metadata AS m
WHERE m.name = $name AND m.trace_id = $trace_id
ORDER BY m.id
LIMIT 1;

-- One row per trace file named in the metadata.
CREATE PERFETTO TABLE _metadata_by_trace(
  -- The trace file's id (metadata.trace_id).
  trace_id LONG,
  -- Its unique_session_name.
  unique_session_name STRING,
  -- Its trace_uuid.
  trace_uuid STRING,
  -- Its trace_type ('proto', 'json', ...).
  trace_type STRING,
  -- Its size in bytes.
  trace_size_bytes LONG,
  -- The trigger that ended it, if any.
  trace_trigger STRING,
  -- The machines seen in it, ', '-separated: each one's system_name, or
  -- 'Machine <id>'; '' when none.
  machines STRING
)
AS
WITH
  per_trace AS (
    SELECT DISTINCT m.trace_id
    FROM metadata AS m
    WHERE m.trace_id IS NOT NULL
  ),
  trace_machine AS (
    SELECT DISTINCT m.trace_id, m.machine_id
    FROM metadata AS m
    WHERE m.trace_id IS NOT NULL AND m.machine_id IS NOT NULL
  ),
  machine_names AS (
    SELECT
      tm.trace_id,
      group_concat(
        coalesce(
          (
            SELECT coalesce(s.str_value, s.int_value)
            FROM metadata AS s
            WHERE s.name = 'system_name' AND s.machine_id = tm.machine_id
            ORDER BY s.id
            LIMIT 1
          ),
          'Machine ' || tm.machine_id
        ),
        ', '
      ) AS machines
    FROM trace_machine AS tm
    GROUP BY tm.trace_id
  )
SELECT
  t.trace_id,
  _traceinfo_value(t.trace_id, 'unique_session_name') AS unique_session_name,
  _traceinfo_value(t.trace_id, 'trace_uuid') AS trace_uuid,
  _traceinfo_value(t.trace_id, 'trace_type') AS trace_type,
  _traceinfo_value(t.trace_id, 'trace_size_bytes') AS trace_size_bytes,
  _traceinfo_value(t.trace_id, 'trace_trigger') AS trace_trigger,
  coalesce(mn.machines, '') AS machines
FROM per_trace AS t
LEFT JOIN machine_names AS mn ON mn.trace_id = t.trace_id;
