-- SPDX-License-Identifier: Apache-2.0
-- prelude.after_eof.trace_file: Perfetto's list of the files a trace was
-- read from, with its columns and declared types.

CREATE TABLE __intrinsic_trace_file(
  id INTEGER PRIMARY KEY,
  parent_id INTEGER,
  name TEXT,
  size INTEGER,
  trace_type TEXT,
  processing_order INTEGER,
  is_container INTEGER
);

INSERT INTO __intrinsic_trace_file
SELECT 0, NULL, NULL, int_value, coalesce(extract_metadata('trace_type'), 'proto'), 0, 0
FROM metadata
WHERE name = 'trace_size_bytes';
