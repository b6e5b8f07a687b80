-- SPDX-License-Identifier: Apache-2.0
-- android.memory.heap_graph.oome: the Java OutOfMemoryErrors that made
-- the runtime dump its heap.

-- One row per heap dump an OutOfMemoryError triggered.
CREATE PERFETTO VIEW android_heap_graph_java_oome_details(
  -- The row's id.
  id ID,
  -- The heap dump (heap_graph.id).
  heap_graph_id JOINID(heap_graph.id),
  -- The size of the allocation that failed, in bytes.
  allocation_size_bytes LONG,
  -- Free bytes in the Java heap then.
  total_bytes_free LONG,
  -- Bytes that could still be allocated before the error.
  free_bytes_until_oom LONG,
  -- The error's message.
  error_msg STRING
)
AS
SELECT
  o.id,
  o.heap_graph_id,
  o.allocation_size_bytes,
  o.total_bytes_free,
  o.free_bytes_until_oom,
  o.error_msg
FROM __intrinsic_heap_graph_java_oome_details AS o;
