-- SPDX-License-Identifier: Apache-2.0
-- callstacks.symbolize: symbolizing frames (ELF file, relative pc) through the trace processor's symbolizer built-in.

-- The function, source file and line of each (file_name, rel_pc) of $frames, with its mapping_id and address to join the result back. It stands on __intrinsic_symbolize and __intrinsic_symbolize_agg, which Perfetto builds only with its LLVM symbolizer: neither Perfetto's release binary nor ours has them, so calling this fails with "no such function: __intrinsic_symbolize" in both.
CREATE PERFETTO MACRO _callstack_frame_symbolize(
  -- The frames: a table or subquery with columns file_name (the ELF file's path), rel_pc, mapping_id and address.
  frames TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT
    c0 AS function_name,
    c1 AS file_name,
    c2 AS line_number,
    c3 AS mapping_id,
    c4 AS address
  FROM __intrinsic_table_ptr(
    __intrinsic_symbolize(
      (
        SELECT __intrinsic_symbolize_agg(f.file_name, f.rel_pc, f.mapping_id, f.address)
        FROM (SELECT * FROM $frames) AS f
      )
    )
  )
  WHERE __intrinsic_table_ptr_bind(c0, 'function_name')
    AND __intrinsic_table_ptr_bind(c1, 'file_name')
    AND __intrinsic_table_ptr_bind(c2, 'line_number')
    AND __intrinsic_table_ptr_bind(c3, 'mapping_id')
    AND __intrinsic_table_ptr_bind(c4, 'address')
);
