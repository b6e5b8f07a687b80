-- SPDX-License-Identifier: Apache-2.0
-- prelude.after_eof.trace_file: the files the trace was read from, as
-- Perfetto's __intrinsic_trace_file: one row, the trace itself (its size
-- and type from the metadata; no name from the shell). Containers (gzip,
-- zip) are not listed apart.

CREATE VIEW __intrinsic_trace_file AS
SELECT
  0 AS id,
  NULL AS parent_id,
  NULL AS name,
  (SELECT int_value FROM metadata WHERE name = 'trace_size_bytes') AS size,
  (SELECT str_value FROM metadata WHERE name = 'trace_type') AS trace_type,
  0 AS processing_order,
  0 AS is_container;
