-- SPDX-License-Identifier: Apache-2.0
-- std.traceinfo.metadata_for_primary_scope: one metadata value per name,
-- taken from the first trace file and the first machine that have it.

-- For each metadata name, the row of the lowest trace id (rows without
-- one last), then the lowest machine id (rows without one last).
CREATE PERFETTO TABLE _metadata_for_primary_scope(
  -- The metadata name.
  name STRING,
  -- Its string value, if it has one.
  str_value STRING,
  -- Its integer value, if it has one.
  int_value LONG,
  -- 'single' or 'multi'.
  key_type STRING
)
AS
WITH ranked AS (
  SELECT
    m.name,
    m.str_value,
    m.int_value,
    m.key_type,
    row_number() OVER (
      PARTITION BY m.name
      ORDER BY m.trace_id IS NULL, m.trace_id, m.machine_id IS NULL, m.machine_id, m.id
    ) AS pos
  FROM metadata AS m
)
SELECT r.name, r.str_value, r.int_value, r.key_type
FROM ranked AS r
WHERE r.pos = 1;
